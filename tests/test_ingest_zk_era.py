"""Ingest of ZK-era artefacts: controller state-change lines and the <= 1.0
unclean-election WARN (kafka-formats.md 5.6), LeaderAndIsr requests in JSON
request logs (1.9), and <= 2.7 text request lines (1.2, ignored by rule).

One folder tree, one ingest, shared by every test.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null
from tests.test_ingest_request_log import completed_request

pytestmark = pytest.mark.spark

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
SC = "(state.change.logger)"


def at(second: int, level: str, message: str) -> str:
    return f"[2024-05-01 10:00:{second:02d},500] {level} {message}"


CONTROLLER_STATE_CHANGE = [
    # 1: 3.2+ LeaderAndIsr.toString, unclean (RECOVERING)
    at(1, "TRACE", "[Controller id=5 epoch=12] Changed partition orders-0 from OfflinePartition "
       "to OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=8, isr=List(3), "
       f"leaderRecoveryState=RECOVERING, partitionEpoch=21) {SC}"),
    # 2: 2.8-3.1 form (zkVersion), several ISR members
    at(2, "TRACE", "[Controller id=5 epoch=12] Changed partition orders-1 from OnlinePartition "
       "to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=4, isr=List(1, 2, 3), "
       f"zkVersion=9) {SC}"),
    # 3: the older [topic,partition] form, RECOVERED
    at(3, "TRACE", "[Controller id=5 epoch=13] Changed partition [my-app.events,2] from "
       "NewPartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=0, "
       f"isr=List(2, 1), leaderRecoveryState=RECOVERED, partitionEpoch=0) {SC}"),
    # 4: a LeaderAndIsr we cannot read (isr not a List): quarantined
    at(4, "TRACE", "[Controller id=5 epoch=13] Changed partition orders-0 from OfflinePartition "
       f"to OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=x) {SC}"),
    # 5: the partition taken offline (addendum 9.2): read, the replay infers
    # the leaderless epoch it brackets
    at(5, "TRACE", "[Controller id=5 epoch=13] Changed partition orders-0 state from "
       f"OnlinePartition to OfflinePartition {SC}"),
    # 6: a move that names no leader and is not to Offline: ignored by rule
    at(6, "TRACE", "[Controller id=5 epoch=13] Changed partition orders-2 state from "
       f"NonExistentPartition to NewPartition with assigned replicas 1,2 {SC}"),
]  # fmt: skip

CONTROLLER_LOG = [
    # 1: failover: ignored by rule
    at(1, "INFO", "[Controller id=5] 5 successfully elected as the controller. Epoch incremented "
       "to 12 and epoch zk version is now 11 (kafka.controller.KafkaController)"),
    # 2: <= 1.0 unclean election WARN, TopicAndPartition form
    at(2, "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,0]. "
       "Elect leader 3 from live brokers 3,4. There's potential data loss. "
       "(kafka.controller.OfflinePartitionLeaderSelector)"),
    # 3: the same, topic-partition form
    at(3, "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for orders-1. "
       "Elect leader 4 from live brokers 4. There's potential data loss. "
       "(kafka.controller.OfflinePartitionLeaderSelector)"),
]  # fmt: skip


def partition_state(index: int, version_key: str, **extra: Any) -> dict[str, Any]:
    return {
        "partitionIndex": index, "controllerEpoch": 11, "leader": 3, "leaderEpoch": 8,
        "isr": [3], version_key: 21, "replicas": [1, 2, 3], "addingReplicas": [],
        "removingReplicas": [], "isNew": False, **extra,
    }  # fmt: skip


def leader_and_isr(version: int, body: dict[str, Any]) -> str:
    request = {"controllerId": 5, "controllerEpoch": 12, "brokerEpoch": 77, **body}
    return completed_request(4, version, "5", request, {"errorCode": 0, "partitionErrors": []})


REQUEST_LOG = [
    # 1: v5 (3.0), zkVersion, topicStates with topicId, two partitions
    leader_and_isr(5, {"type": 0, "topicStates": [{"topicName": "orders", "topicId": ORDERS,
        "partitionStates": [partition_state(0, "zkVersion"), partition_state(1, "zkVersion")]}],
        "liveLeaders": []}),
    # 2: v6 (3.3+), partitionEpoch, leaderRecoveryState
    leader_and_isr(6, {"type": 0, "topicStates": [{"topicName": "orders", "topicId": ORDERS,
        "partitionStates": [partition_state(0, "partitionEpoch", leaderRecoveryState=1)]}],
        "liveLeaders": []}),
    # 3: v1, ungroupedPartitionStates with topicName per state
    leader_and_isr(1, {"ungroupedPartitionStates": [
        dict(topicName="orders", **partition_state(2, "zkVersion"))], "liveLeaders": []}),
    # 4: an isr we cannot read: quarantined
    leader_and_isr(5, {"topicStates": [{"topicName": "orders",
        "partitionStates": [partition_state(0, "zkVersion", isr=["x"])]}]}),
    # 5-6: <= 2.7 text lines (1.2): a follower FETCH at DEBUG (no offsets):
    # ignored by rule; a consumer LIST_OFFSETS whose bodies were elided: the
    # HWM a consumer saw is evidence, and this line shows none (quarantined)
    "[2020-05-01 10:00:01,000] DEBUG Completed request:RequestHeader(apiKey=FETCH, apiVersion=11, "
    "clientId=broker-2-fetcher-0, correlationId=42) -- {replica_id=2,max_wait_time=500,"
    "min_bytes=1,max_bytes=10485760,isolation_level=0,session_id=0,session_epoch=-1,"
    "topics=[],forgotten_topics_data=[],rack_id=},response:{throttle_time_ms=0,error_code=0,"
    "session_id=0,responses=[]} from connection 10.0.0.1:9092-10.0.0.2:51514-3;totalTime:500.1,"
    "requestQueueTime:0.0,localTime:0.3,remoteTime:499.7,throttleTime:0,responseQueueTime:0.0,"
    "sendTime:0.1,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0) "
    "(kafka.request.logger)",
    "[2020-05-01 10:00:02,000] DEBUG Completed request:RequestHeader(apiKey=LIST_OFFSETS, "
    "apiVersion=5, clientId=consumer-group-1, correlationId=8799) -- {...},response:{...} from "
    "connection 127.0.0.1:62610-127.0.0.1:62622-3;totalTime:0.085 (kafka.request.logger)",
]  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zk_era")
    (root / "broker-5").mkdir()
    (root / "broker-5" / "state-change.log").write_text("\n".join(CONTROLLER_STATE_CHANGE) + "\n")
    (root / "broker-5" / "controller.log").write_text("\n".join(CONTROLLER_LOG) + "\n")
    (root / "broker-1").mkdir()
    (root / "broker-1" / "kafka-request.log").write_text("\n".join(REQUEST_LOG) + "\n")
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod", persist=True)
    try:
        return {
            "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
            "events": [e.asDict() for e in r.events.collect()],
            "quarantine": sorted(
                (q.asDict() for q in r.quarantine.collect()),
                key=lambda q: (q["source_file"], q["line_no"]),
            ),
            "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
        }
    finally:
        r.unpersist()


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        "state-change.log": ("broker_log", 5, 6, 4, 1, 1),
        "controller.log": ("broker_log", 5, 3, 2, 1, 0),
        "kafka-request.log": ("request_log", 1, 6, 3, 1, 2),
    }


def test_controller_state_change_lines(result: dict[str, Any]) -> None:
    rows = events_of(result, "state-change.log")
    assert [r["line_no"] for r in rows] == [1, 2, 3, 5]
    assert rows[0]["event_time"] == dt.datetime(2024, 5, 1, 10, 0, 1, 500000)
    assert [non_null(r) for r in rows] == [
        {"topic": "orders", "partition": 0, "line_no": 1, "kind": "leader_and_isr", "leader": 3,
         "leader_epoch": 8, "isr": [3], "partition_epoch": 21, "leader_recovery_state": 1,
         "controller_epoch": 12},
        {"topic": "orders", "partition": 1, "line_no": 2, "kind": "leader_and_isr", "leader": 1,
         "leader_epoch": 4, "isr": [1, 2, 3], "partition_epoch": 9, "controller_epoch": 12},
        {"topic": "my-app.events", "partition": 2, "line_no": 3, "kind": "leader_and_isr",
         "leader": 2, "leader_epoch": 0, "isr": [2, 1], "partition_epoch": 0,
         "leader_recovery_state": 0, "controller_epoch": 13},
        {"topic": "orders", "partition": 0, "line_no": 5, "kind": "zk_partition_offline",
         "controller_epoch": 13},
    ]  # fmt: skip


def test_zk_unclean_election_warn(result: dict[str, Any]) -> None:
    rows = events_of(result, "controller.log")
    assert [non_null(r) for r in rows] == [
        {"topic": "orders", "partition": 0, "line_no": 2, "kind": "zk_unclean_election",
         "leader": 3},
        {"topic": "orders", "partition": 1, "line_no": 3, "kind": "zk_unclean_election",
         "leader": 4},
    ]  # fmt: skip


def test_leader_and_isr_requests(result: dict[str, Any]) -> None:
    rows = events_of(result, "kafka-request.log")
    common = {"kind": "leader_and_isr", "topic": "orders", "leader": 3, "leader_epoch": 8,
              "isr": [3], "replicas": [1, 2, 3], "partition_epoch": 21, "controller_epoch": 12,
              "client_id": "5"}  # fmt: skip
    assert [non_null(r) for r in rows] == [
        {**common, "topic_id": ORDERS, "partition": 0, "line_no": 1, "api_version": 5},
        {**common, "topic_id": ORDERS, "partition": 1, "line_no": 1, "api_version": 5},
        {**common, "topic_id": ORDERS, "partition": 0, "line_no": 2, "api_version": 6,
         "leader_recovery_state": 1},
        {**common, "partition": 2, "line_no": 3, "api_version": 1},
    ]  # fmt: skip
    assert [r["seq"] for r in rows] == [100_000, 100_001, 200_000, 300_000]
    assert all(r["observer"] == 1 for r in rows)


def test_quarantine(result: dict[str, Any]) -> None:
    got = [(Path(q["source_file"]).name, q["line_no"], q["reason"]) for q in result["quarantine"]]
    assert got == [
        ("kafka-request.log", 4, "bad JSON in Completed request"),
        ("kafka-request.log", 6, "unreadable LIST_OFFSETS text request"),
        ("state-change.log", 4, "unrecognised leader_and_isr message"),
    ]
