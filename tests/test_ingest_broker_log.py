"""Ingest of broker log4j logs: server.log / state-change.log / controller.log
(kafka-formats.md sections 5.1-5.5, 5.7 and 2.6).

One folder tree, one ingest, shared by every test. Every message is built
exactly per the reference's templates, one per version family, inside the
default layout ``[%d] %p %m (%c)%n``; one file has CRLF endings, one is a
container runtime's (CRI) log.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

pytestmark = pytest.mark.spark

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
EVENTS_ID = "QkX1y9bHSWC2ZCd3mFhV7g"
SC = "(state.change.logger)"
PART = "(kafka.cluster.Partition)"
FETCHER = "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0]"
P0 = "[Partition orders-0 broker=1]"
ULOG = "[UnifiedLog partition=orders-0, dir=/var/lib/kafka/data]"


def at(second: int, level: str, message: str) -> str:
    return f"[2024-05-01 10:00:{second:02d},500] {level} {message}"


def t(second: int) -> dt.datetime:
    return dt.datetime(2024, 5, 1, 10, 0, second, 500000)


STATE_CHANGE = [
    # 1: 5.5 leader, 2.8-3.2
    at(1, "INFO", "[Broker id=1] Leader orders-0 starts at leader epoch 5 from offset 3200 with "
       "high watermark 3100 ISR [1,2,3] addingReplicas [] removingReplicas []. Previous leader "
       f"epoch was 4. {SC}"),
    # 2: 5.5 follower, 2.8-3.2
    at(2, "INFO", "[Broker id=1] Follower orders-1 starts at leader epoch 6 from offset 2987 with "
       f"high watermark 2900. Previous leader epoch was 5. {SC}"),
    # 3: 5.5 leader, 3.3-3.4 (topic id printed as an Option)
    at(3, "INFO", f"[Broker id=1] Leader my-app-events-2 with topic id Some({EVENTS_ID}) starts at "
       "leader epoch 7 from offset 100 with partition epoch 12, high watermark 90, ISR [1,3], "
       f"adding replicas [] and removing replicas []. Previous leader epoch was 6. {SC}"),
    # 4: 5.5 leader, 3.5 (under-min-isr slot), topic id None
    at(4, "INFO", "[Broker id=1] Leader my-app-events-3 with topic id None starts at leader "
       "epoch 2 from offset 0 with partition epoch 3, high watermark 0, ISR [1], adding "
       f"replicas [2] and removing replicas [] (under-min-isr). Previous leader epoch was 1. {SC}"),
    # 5: 5.5 follower, 3.3-3.5
    at(5, "INFO", "[Broker id=1] Follower orders-1 starts at leader epoch 8 from offset 3000 with "
       "partition epoch 14 and high watermark 2990. Current leader is 3. Previous leader epoch "
       f"was 7. {SC}"),
    # 6: 5.5 leader, 3.6+ (space before the period when not under min ISR)
    at(6, "INFO", f"[Broker id=1] Leader orders-0 with topic id Some({ORDERS}) starts at leader "
       "epoch 8 from offset 3200 with partition epoch 21, high watermark 3100, ISR [1,2], adding "
       "replicas [] and removing replicas [] . Previous leader Some(3) and previous leader epoch "
       f"was 7. {SC}"),
    # 7: 5.5 follower, 3.6+
    at(7, "INFO", "[Broker id=1] Follower orders-1 starts at leader epoch 9 from offset 3100 with "
       "partition epoch 22 and high watermark 3050. Current leader is 2. Previous leader Some(2) "
       f"and previous leader epoch was 9. {SC}"),
    # 8: 5.5 unclean recovery (3.2+)
    at(8, "INFO", "[Broker id=1] The topic partition orders-0 was marked as RECOVERING. Marking "
       f"the topic partition as RECOVERED. {SC}"),
    # 9: a message we do not read: ignored by rule
    at(9, "INFO", f"[Broker id=1] Skipped the become-leader state change for orders-0 with topic "
       f"id Some({ORDERS}) and partition state LeaderAndIsrPartitionState(...) since it is "
       f"already the leader with leader epoch 8. {SC}"),
    # 10: a line pasted without its layout: read as it is, no event time
    "Leader orders-0 starts at leader epoch 5 from offset 3200 with high watermark 3100 ISR [1] "
    "addingReplicas [] removingReplicas []. Previous leader epoch was 4.",
]  # fmt: skip

SERVER_LOG = [
    # 1-2: 5.2 UnifiedLog truncateTo; the "has no effect" variant is ignored
    at(10, "INFO", f"{ULOG} Truncating to offset 3100 (kafka.log.UnifiedLog)"),
    at(10, "INFO", f"{ULOG} Truncating to 3300 has no effect as the largest offset in the log is "
       "3299 (kafka.log.UnifiedLog)"),
    # 3: 5.2 fetcher 3.1+, the reference's CONSTRUCTED example
    at(11, "INFO", f"{FETCHER} Truncating partition orders-0 with TruncationState(offset=3100, "
       "completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, "
       "leaderEpoch=7, endOffset=3100) (kafka.server.ReplicaFetcherThread)"),
    # 4: 5.2 fetcher 2.8/3.0 HWM truncation
    at(12, "INFO", f"{FETCHER} Truncating partition orders-1 to local high watermark 2900 "
       "(kafka.server.ReplicaFetcherThread)"),
    # 5: 5.2 fetcher 3.1+ HWM truncation
    at(12, "INFO", f"{FETCHER} Truncating partition orders-1 with TruncationState(offset=2900, "
       "completed=false) due to local high watermark 2900 (kafka.server.ReplicaFetcherThread)"),
    # 6: 5.2 WARN below high watermark
    at(13, "WARN", f"{FETCHER} Truncating orders-0 to offset 3000 below high watermark 3100 "
       "(kafka.server.ReplicaFetcherThread)"),
    # 7: 5.3 shrink
    at(14, "INFO", "[Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1,3. Leader: "
       "(highWatermark: 3100, endOffset: 3250). Out of sync replicas: (brokerId: 2, endOffset: "
       f"3000, lastCaughtUpTimeMs: 1714557000000). {PART}"),
    # 8: 5.3 expand (<= 2.7)
    at(15, "INFO", f"[Partition orders-0 broker=1] Expanding ISR from 1,3 to 1,3,2 {PART}"),
    # 9-14: 5.3 "ISR updated to", every row of the table
    at(16, "INFO", f"{P0} ISR updated to 1,3 and version updated to [17] {PART}"),
    at(16, "INFO", f"{P0} ISR updated to 1,3,2 and version updated to 18 {PART}"),
    at(16, "INFO", f"{P0} ISR updated to 1,3 and version updated to 19 {PART}"),
    at(16, "INFO", f"{P0} ISR updated to 1  and version updated to 20 {PART}"),
    at(16, "INFO", "[Partition orders-0 broker=1] ISR updated to 1 (under-min-isr) and version "
       f"updated to 21 {PART}"),
    at(16, "INFO", "[Partition orders-0 broker=1] ISR updated to [1,3] and zkVersion updated to "
       f"[22] {PART}"),
    # 15-16: 5.2 non-monotonic HWM, 3.x and 2.8 LogOffsetMetadata
    at(17, "WARN", f"{ULOG} Non-monotonic update of high watermark from (offset=3100, "
       "segment=[0:4096]) to 3000 (kafka.log.UnifiedLog)"),
    at(17, "WARN", "[Log partition=orders-0, dir=/var/lib/kafka/data] Non-monotonic update of high "
       "watermark from (offset=3100 segment=[0:4096]) to 2950 (kafka.log.Log)"),
    # 17: 5.4
    at(18, "INFO", "[Partition orders-0 broker=1] Log loaded for partition orders-0 with initial "
       f"high watermark 3100 {PART}"),
    # 18-22: a message we do not read and its stack trace: ignored by rule
    at(19, "ERROR", f"{FETCHER} Error for partition orders-0 at offset 3100 "
       "(kafka.server.ReplicaFetcherThread)"),
    "java.lang.IllegalStateException: boom",
    "\tat kafka.log.UnifiedLog.truncateTo(UnifiedLog.scala:1234)",
    "Caused by: java.io.IOException: Truncating to offset 5 failed",
    "\t... 12 more",
    # 23: starts like a shrink but a number is not one: quarantined
    at(20, "INFO", "[Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: "
       f"(highWatermark: x, endOffset: 3). Out of sync replicas: . {PART}"),
    # 24: another logger, another message: ignored
    at(21, "INFO", "[KafkaServer id=1] started (kafka.server.KafkaServer)"),
]  # fmt: skip

#: A CRI container log (kubelet): ``<RFC3339Nano> <stream> <P|F> <line>``.
CONTAINER = [
    "2024-05-01T10:00:30.123456789Z stdout F [2024-05-01 10:00:30,120] INFO [Partition "
    "topic-with-dashes-0 broker=2] Shrinking ISR from 2,3 to 2. Leader: (highWatermark: 50, "
    "endOffset: 60). Out of sync replicas: (brokerId: 3, endOffset: unknown, lastCaughtUpTimeMs: "
    f"unknown). {PART}",
    "2024-05-01T10:00:31.5Z stderr F [2024-05-01 10:00:31,220] INFO [Broker id=2] Follower "
    "orders-1 starts at leader epoch 6 from offset 2987 with high watermark 2900. Previous leader "
    f"epoch was 5. {SC}",
    "2024-05-01T10:00:32.5Z stdout F \tat kafka.server.KafkaApis.handle(KafkaApis.scala:1)",
]

CTRL = "(org.apache.kafka.controller.ReplicationControlManager)"
CONTROLLER = [
    # 1: 2.6, the reference's CONSTRUCTED example, verbatim
    "[2024-05-01 10:00:00,456] INFO [QuorumController id=3000] UNCLEAN partition change for "
    f"orders-0 with topic ID {ORDERS}: isr: [1] -> [3], leader: -1 -> 3, leaderRecoveryState: "
    f"RECOVERED -> RECOVERING, leaderEpoch: 7 -> 8, partitionEpoch: 20 -> 21 {CTRL}",
    # 2: a diff without a leader change (logged UNCLEAN all the same), dashes in the topic
    "[2024-05-01 10:00:01,000] INFO [QuorumController id=3000] UNCLEAN partition change for "
    f"my-app-events-2 with topic ID {EVENTS_ID}: isr: [1, 2] -> [3, 4], leaderEpoch: 3 -> 4, "
    f"partitionEpoch: 9 -> 10 {CTRL}",
    # 3: 2.6 PartitionChangeBuilder, 3.6+ INFO
    f"[2024-05-01 10:00:00,455] INFO Setting new leader for topicId {ORDERS}, partition 0 to 3 "
    "using an unclean election (org.apache.kafka.controller.PartitionChangeBuilder)",
    # 4: the clean variant (TRACE): ignored
    f"[2024-05-01 10:00:00,455] TRACE Setting new leader for topicId {ORDERS}, partition 1 to 2 "
    "using a clean election (org.apache.kafka.controller.PartitionChangeBuilder)",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("broker_logs")
    for d in ("broker-1", "broker-2", "controller-3000"):
        (root / d).mkdir()
    (root / "broker-1" / "state-change.log").write_text("\n".join(STATE_CHANGE) + "\n")
    (root / "broker-1" / "server.log").write_bytes(("\r\n".join(SERVER_LOG) + "\r\n").encode())
    with gzip.open(root / "broker-2" / "kafka-0.log.gz", "wb") as f:
        f.write(("\n".join(CONTAINER) + "\n").encode())
    (root / "controller-3000" / "controller.log").write_text("\n".join(CONTROLLER) + "\n")
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod")
    return {
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.asDict() for q in r.quarantine.collect()), key=lambda q: q["line_no"]
        ),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        "state-change.log": ("broker_log", 1, 10, 9, 1, 0),
        "server.log": ("broker_log", 1, 24, 16, 7, 1),
        "kafka-0.log.gz": ("broker_log", 2, 3, 2, 1, 0),
        "controller.log": ("broker_log", None, 4, 3, 1, 0),
    }


def test_leader_and_follower_lines_every_generation(result: dict[str, Any]) -> None:
    rows = events_of(result, "state-change.log")
    assert [r["line_no"] for r in rows] == [1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert [r["event_time"] for r in rows] == [t(s) for s in range(1, 9)] + [None]
    assert all(r["observer"] == 1 and r["cluster"] == "prod" for r in rows)
    assert [r["seq"] for r in rows] == [n * 100_000 for n in (1, 2, 3, 4, 5, 6, 7, 8, 10)]
    assert [non_null(r) for r in rows] == [
        # 2.8-3.2 leader: no partition epoch, no topic id
        # (the topic id of every "orders" row is the one line 6 prints, and
        # "my-app-events"' the one line 3 prints: the topic-name join)
        {"line_no": 1, "kind": "become_leader", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "leader": 1, "leader_epoch": 5, "leo": 3200,
         "hwm": 3100, "isr": [1, 2, 3]},
        {"line_no": 2, "kind": "become_follower", "topic": "orders", "partition": 1,
         "topic_id": ORDERS, "replica": 1, "leader_epoch": 6, "leo": 2987, "hwm": 2900},
        # 3.3-3.4 leader; topic with dashes: the partition is after the last '-'
        {"line_no": 3, "kind": "become_leader", "topic": "my-app-events", "partition": 2,
         "topic_id": EVENTS_ID, "replica": 1, "leader": 1, "leader_epoch": 7, "leo": 100,
         "partition_epoch": 12, "hwm": 90, "isr": [1, 3]},
        # 3.5 leader: under-min-isr; "with topic id None"
        {"line_no": 4, "kind": "become_leader", "topic": "my-app-events", "partition": 3,
         "topic_id": EVENTS_ID, "replica": 1, "leader": 1, "leader_epoch": 2, "leo": 0,
         "partition_epoch": 3, "hwm": 0, "isr": [1]},
        # 3.3-3.5 follower: current leader and partition epoch
        {"line_no": 5, "kind": "become_follower", "topic": "orders", "partition": 1,
         "topic_id": ORDERS, "replica": 1, "leader": 3, "leader_epoch": 8, "leo": 3000,
         "partition_epoch": 14, "hwm": 2990},
        # 3.6+ leader
        {"line_no": 6, "kind": "become_leader", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "leader": 1, "leader_epoch": 8, "leo": 3200,
         "partition_epoch": 21, "hwm": 3100, "isr": [1, 2]},
        # 3.6+ follower
        {"line_no": 7, "kind": "become_follower", "topic": "orders", "partition": 1,
         "topic_id": ORDERS, "replica": 1, "leader": 2, "leader_epoch": 9, "leo": 3100,
         "partition_epoch": 22, "hwm": 3050},
        {"line_no": 8, "kind": "recovering", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "leader": 1},
        # no layout, no prefix: the replica is the file's broker
        {"line_no": 10, "kind": "become_leader", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "leader": 1, "leader_epoch": 5, "leo": 3200,
         "hwm": 3100, "isr": [1]},
    ]  # fmt: skip


def test_server_log_lines(result: dict[str, Any]) -> None:
    rows = events_of(result, "server.log")
    assert [non_null(r) for r in rows] == [
        {"line_no": 1, "kind": "truncation", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "truncate_to": 3100},
        {"line_no": 3, "kind": "truncation", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "truncate_to": 3100, "diverging_epoch": 7, "diverging_end_offset": 3100,
         "leader": 3},  # the fetcher's leaderId
        {"line_no": 4, "kind": "truncation", "topic": "orders", "partition": 1, "topic_id": ORDERS,
         "replica": 1, "truncate_to": 2900, "hwm": 2900, "leader": 3},
        {"line_no": 5, "kind": "truncation", "topic": "orders", "partition": 1, "topic_id": ORDERS,
         "replica": 1, "truncate_to": 2900, "hwm": 2900, "leader": 3},
        {"line_no": 6, "kind": "truncation", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "truncate_to": 3000, "hwm": 3100, "leader": 3},
        {"line_no": 7, "kind": "isr_shrink", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "isr": [1, 3], "hwm": 3100, "leo": 3250},
        {"line_no": 8, "kind": "isr_expand", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "isr": [1, 3, 2]},
        {"line_no": 9, "kind": "isr_updated", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "isr": [1, 3], "partition_epoch": 17},
        {"line_no": 10, "kind": "isr_updated", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "isr": [1, 3, 2], "partition_epoch": 18},
        {"line_no": 11, "kind": "isr_updated", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "isr": [1, 3], "partition_epoch": 19},
        # 3.6+: the empty under-min-isr slot (two spaces), then the marker
        {"line_no": 12, "kind": "isr_updated", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "isr": [1], "partition_epoch": 20,
         "under_min_isr": False},
        {"line_no": 13, "kind": "isr_updated", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "isr": [1], "partition_epoch": 21,
         "under_min_isr": True},
        {"line_no": 14, "kind": "isr_updated", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "isr": [1, 3], "partition_epoch": 22},
        {"line_no": 15, "kind": "hwm_regression_warning", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "hwm": 3000, "previous_hwm": 3100},
        {"line_no": 16, "kind": "hwm_regression_warning", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "replica": 1, "hwm": 2950, "previous_hwm": 3100},
        {"line_no": 17, "kind": "log_loaded", "topic": "orders", "partition": 0, "topic_id": ORDERS,
         "replica": 1, "hwm": 3100},
    ]  # fmt: skip
    assert rows[0]["event_time"] == t(10)
    assert rows[-1]["event_time"] == t(18)


def test_container_runtime_prefix(result: dict[str, Any]) -> None:
    rows = events_of(result, "kafka-0.log.gz")
    assert [(r["event_time"], non_null(r)) for r in rows] == [
        (dt.datetime(2024, 5, 1, 10, 0, 30, 120000),  # the log4j time, not the runtime's
         {"line_no": 1, "kind": "isr_shrink", "topic": "topic-with-dashes", "partition": 0,
          "replica": 2, "isr": [2], "hwm": 50, "leo": 60}),
        (dt.datetime(2024, 5, 1, 10, 0, 31, 220000),
         {"line_no": 2, "kind": "become_follower", "topic": "orders", "partition": 1,
          "topic_id": ORDERS, "replica": 2, "leader_epoch": 6, "leo": 2987, "hwm": 2900}),
    ]  # fmt: skip
    assert all(r["observer"] == 2 for r in rows)


def test_kraft_unclean_lines(result: dict[str, Any]) -> None:
    rows = events_of(result, "controller.log")
    assert all(r["observer"] is None for r in rows)  # no broker in the path
    assert [non_null(r) for r in rows] == [
        {"line_no": 1, "kind": "unclean_partition_change", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "leader": 3, "leader_epoch": 8, "partition_epoch": 21,
         "isr": [3], "leader_recovery_state": 1,
         # the state it changed, from the diff's old values
         "previous_leader": -1, "previous_leader_epoch": 7, "previous_partition_epoch": 20,
         "previous_isr": [1]},
        # unchanged fields (leader, recovery state) are left out of the diff: null
        {"line_no": 2, "kind": "unclean_partition_change", "topic": "my-app-events",
         "partition": 2, "topic_id": EVENTS_ID, "leader_epoch": 4, "partition_epoch": 10,
         "isr": [3, 4], "previous_leader_epoch": 3, "previous_partition_epoch": 9,
         "previous_isr": [1, 2]},
        # topic_id only: the topic-name join fills the name line 1 prints with it
        {"line_no": 3, "kind": "unclean_partition_change", "topic": "orders", "partition": 0,
         "topic_id": ORDERS, "leader": 3},
    ]  # fmt: skip
    assert rows[0]["event_time"] == dt.datetime(2024, 5, 1, 10, 0, 0, 456000)


def test_quarantine(result: dict[str, Any]) -> None:
    got = [
        (Path(q["source_file"]).name, q["line_no"], q["reason"], q["date"], q["cluster"])
        for q in result["quarantine"]
    ]
    assert sorted(got) == [
        ("server.log", 23, "unrecognised isr_shrink message", "2024-05-01", "prod"),
    ]
    shrink = next(q for q in result["quarantine"] if q["line_no"] == 23)
    assert shrink["text"] == SERVER_LOG[22]  # CRLF: the CR is not part of the line
