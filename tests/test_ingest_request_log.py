"""Ingest of broker request logs (kafka-formats.md section 1).

One folder tree, one ingest, a handful of actions shared by every test: the
lines follow section 1.2 (the CONSTRUCTED Fetch v13 example verbatim) and the
per-API shapes of sections 1.5-1.7.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

TOPIC_ID = "5LHkG7R4S0aKxLbBzyP8wA"
T0 = dt.datetime(2024, 5, 1, 10, 0, 0, 123000)

#: kafka-formats.md section 1.2, CONSTRUCTED example, verbatim (one line).
FETCH_V13_EXAMPLE = (
    '[2024-05-01 10:00:00,123] DEBUG Completed request:{"isForwarded":false,"requestHeader":'
    '{"requestApiKey":1,"requestApiVersion":13,"correlationId":4711,"clientId":"broker-2-fetcher-0",'
    '"requestApiKeyName":"FETCH"},"request":{"replicaId":2,"maxWaitMs":500,"minBytes":1,'
    '"maxBytes":10485760,"isolationLevel":0,"sessionId":123,"sessionEpoch":57,"topics":[{"topicId":'
    '"5LHkG7R4S0aKxLbBzyP8wA","partitions":[{"partition":0,"currentLeaderEpoch":5,"fetchOffset":3200,'
    '"lastFetchedEpoch":5,"logStartOffset":0,"partitionMaxBytes":1048576}]}],"forgottenTopicsData":[],'
    '"rackId":""},"response":{"throttleTimeMs":0,"errorCode":0,"sessionId":123,"responses":[{"topicId":'
    '"5LHkG7R4S0aKxLbBzyP8wA","partitions":[{"partitionIndex":0,"errorCode":0,"highWatermark":3200,'
    '"lastStableOffset":3200,"logStartOffset":0,"abortedTransactions":null,"preferredReadReplica":-1,'
    '"recordsSizeInBytes":0}]}]},"connection":"10.0.0.1:9092-10.0.0.2:51514-3","totalTimeMs":500.687,'
    '"requestQueueTimeMs":0.021,"localTimeMs":0.311,"remoteTimeMs":500.201,"throttleTimeMs":0,'
    '"responseQueueTimeMs":0.05,"sendTimeMs":0.104,"securityProtocol":"PLAINTEXT","principal":'
    '"User:ANONYMOUS","listener":"PLAINTEXT","clientInformation":{"softwareName":"unknown",'
    '"softwareVersion":"unknown"}} (kafka.request.logger)'
)

_API_NAMES = {
    0: "PRODUCE",
    1: "FETCH",
    2: "LIST_OFFSETS",
    3: "METADATA",
    4: "LEADER_AND_ISR",
    23: "OFFSET_FOR_LEADER_EPOCH",
    56: "ALTER_PARTITION",
}


def completed_request(
    api_key: int,
    version: int,
    client_id: str,
    request: Any,
    response: Any,
    *,
    ts: str | None = "2024-05-01 10:00:01,000",
    level: str = "DEBUG",
    suffix: str = " (kafka.request.logger)",
) -> str:
    """A 2.8+ request-log line, top-level keys in RequestConvertToJson order (1.2)."""
    body = {
        "isForwarded": False,
        "requestHeader": {
            "requestApiKey": api_key,
            "requestApiVersion": version,
            "correlationId": 7,
            "clientId": client_id,
            "requestApiKeyName": _API_NAMES[api_key],
        },
        "request": request,
        "response": response,
        "connection": "10.0.0.1:9092-10.0.0.3:40000-1",
        "totalTimeMs": 1.5,
        "requestQueueTimeMs": 0.1,
        "localTimeMs": 0.2,
        "remoteTimeMs": 1.0,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": 0.1,
        "sendTimeMs": 0.1,
        "securityProtocol": "PLAINTEXT",
        "principal": "User:ANONYMOUS",
        "listener": "PLAINTEXT",
        "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "3.7.0"},
    }
    head = f"[{ts}] {level} " if ts is not None else f"{level} "
    return head + "Completed request:" + json.dumps(body, separators=(",", ":")) + suffix


def fetch_partition(partition: int, offset: int, epoch: int = 5) -> dict[str, Any]:
    return {
        "partition": partition,
        "currentLeaderEpoch": epoch + 1,
        "fetchOffset": offset,
        "lastFetchedEpoch": epoch,
        "logStartOffset": 0,
        "partitionMaxBytes": 1048576,
    }


def fetch_request(topics: list[dict[str, Any]], **head: Any) -> dict[str, Any]:
    return {
        **head,
        "maxWaitMs": 500,
        "minBytes": 1,
        "maxBytes": 10485760,
        "isolationLevel": 0,
        "sessionId": 124,
        "sessionEpoch": 3,
        "topics": topics,
        "forgottenTopicsData": [],
        "rackId": "",
    }


def fetch_response(responses: list[dict[str, Any]]) -> dict[str, Any]:
    return {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 124, "responses": responses}


# --- the lines ------------------------------------------------------------------

# Fetch v15: replica id in the tagged replicaState (first key), an incremental
# response carrying only partition 1, with a diverging epoch (1.6).
FETCH_V15 = completed_request(
    1,
    15,
    "broker-3-fetcher-0",
    fetch_request(
        [{"topicId": TOPIC_ID, "partitions": [fetch_partition(0, 3300), fetch_partition(1, 1700)]}],
        replicaState={"replicaId": 3, "replicaEpoch": 77},
    ),
    fetch_response(
        [
            {
                "topicId": TOPIC_ID,
                "partitions": [
                    {
                        "partitionIndex": 1,
                        "errorCode": 0,
                        "highWatermark": 2000,
                        "lastStableOffset": 2000,
                        "logStartOffset": 0,
                        "divergingEpoch": {"epoch": 4, "endOffset": 1500},
                        "abortedTransactions": None,
                        "preferredReadReplica": -1,
                        "recordsSizeInBytes": 0,
                    }
                ],
            }
        ]
    ),
)
CONSUMER_FETCH_V12 = completed_request(
    1,
    12,
    "consumer-g-1",
    fetch_request([{"topic": "orders", "partitions": [fetch_partition(0, 10)]}], replicaId=-1),
    fetch_response([]),
)
CONSUMER_FETCH_V15 = completed_request(
    1,
    15,
    "consumer-g-2",
    fetch_request([{"topicId": TOPIC_ID, "partitions": [fetch_partition(0, 10)]}]),
    fetch_response([]),
)
IDLE_FOLLOWER_FETCH = completed_request(
    1, 13, "broker-2-fetcher-0", fetch_request([], replicaId=2), fetch_response([])
)
PRODUCE_ACKS_ALL = completed_request(
    0,
    9,
    "producer-1",
    {
        "transactionalId": None,
        "acks": -1,
        "timeoutMs": 30000,
        "topicData": [
            {"name": "orders", "partitionData": [{"index": 0, "recordsSizeInBytes": 1234}]}
        ],
    },
    {
        "responses": [
            {
                "name": "orders",
                "partitionResponses": [
                    {
                        "index": 0,
                        "errorCode": 0,
                        "baseOffset": 3200,
                        "logAppendTimeMs": -1,
                        "logStartOffset": 0,
                        "recordErrors": [],
                        "errorMessage": None,
                    }
                ],
            }
        ],
        "throttleTimeMs": 0,
    },
)
# request absent: "" in 2.8-3.9 (1.2); the response still counts.
PRODUCE_NO_REQUEST = completed_request(
    0,
    9,
    "producer-1",
    "",
    {
        "responses": [
            {
                "name": "orders",
                "partitionResponses": [{"index": 0, "errorCode": 6, "baseOffset": -1}],
            }
        ],
        "throttleTimeMs": 0,
    },
)
EPOCH_QUERY = completed_request(
    23,
    4,
    "broker-2-fetcher-0",
    {
        "replicaId": 2,
        "topics": [
            {
                "topic": "orders",
                "partitions": [{"partition": 0, "currentLeaderEpoch": 6, "leaderEpoch": 5}],
            }
        ],
    },
    {
        "throttleTimeMs": 0,
        "topics": [
            {
                "topic": "orders",
                "partitions": [
                    {"errorCode": 0, "partition": 0, "leaderEpoch": 5, "endOffset": 3100}
                ],
            }
        ],
    },
)
DEBUG_CONSUMER_EPOCH_QUERY = EPOCH_QUERY.replace('"replicaId":2', '"replicaId":-2')
METADATA = completed_request(
    3, 12, "admin-1", {"topics": None, "allowAutoTopicCreation": True}, {"brokers": []}
)
TEXT_2_7 = (
    "[2020-01-01 00:00:00,000] DEBUG Completed request:RequestHeader(apiKey=FETCH, apiVersion=11, "
    "clientId=broker-2-fetcher-0, correlationId=1) -- {replica_id=2,max_wait_time=500},response:"
    "{throttle_time_ms=0} from connection 10.0.0.1:9092-10.0.0.2:1-1;totalTime:0.5,"
    "requestQueueTime:0.1,localTime:0.1,remoteTime:0.1,throttleTime:0,responseQueueTime:0.1,"
    "sendTime:0.1,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0)"
)
NO_TIMESTAMP = completed_request(
    1,
    13,
    "broker-2-fetcher-0",
    fetch_request([{"topicId": TOPIC_ID, "partitions": [fetch_partition(0, 1)]}], replicaId=2),
    fetch_response([]),
    ts=None,
)
BAD_JSON = FETCH_V13_EXAMPLE.replace('"fetchOffset":3200', '"fetchOffset":32x0')
UNKNOWN_SHAPE = completed_request(
    1,
    13,
    "broker-2-fetcher-0",
    fetch_request([], replicaId=2),
    fetch_response([{"topicId": TOPIC_ID, "partitions": [{"index": 0, "highWatermark": 1}]}]),
)
CUT_LAST_LINE = FETCH_V13_EXAMPLE[:700]

BROKER_1_LINES = [
    FETCH_V13_EXAMPLE,  # 1 parsed: fetch_request + fetch_response
    "[2024-05-01 10:00:00,200] INFO [ReplicaFetcherManager on broker 1] Removed fetcher "
    "for partitions Set(orders-0) (kafka.server.ReplicaFetcherManager)",  # 2 other logger
    "",  # 3 blank
    FETCH_V15,  # 4 parsed: 2 requests + 1 response
    CONSUMER_FETCH_V12,  # 5 consumer (replicaId -1)
    CONSUMER_FETCH_V15,  # 6 consumer (no replica id at all)
    IDLE_FOLLOWER_FETCH,  # 7 follower, no partition either way
    PRODUCE_ACKS_ALL,  # 8 parsed
    PRODUCE_NO_REQUEST,  # 9 parsed
    EPOCH_QUERY,  # 10 parsed: query + answer
    DEBUG_CONSUMER_EPOCH_QUERY,  # 11 replicaId -2: a consumer's (addendum 11.1)
    METADATA,  # 12 an api key we do not read
    TEXT_2_7,  # 13 <= 2.7 text: a follower FETCH naming no partition (test_ingest_request_log_text)
    NO_TIMESTAMP,  # 14 quarantined
    BAD_JSON,  # 15 quarantined
    "\tat kafka.network.RequestChannel.sendResponse(RequestChannel.scala:100)",  # 16
    "Caused by: java.io.IOException: Broken pipe",  # 17
    "\t... 12 more",  # 18
    UNKNOWN_SHAPE,  # 19 quarantined
    CUT_LAST_LINE,  # 20 quarantined (no newline after it)
]

# 2.8 shapes (section 1.6 rename history), other level, no logger suffix.
FETCH_V12_2_8 = completed_request(
    1,
    12,
    "broker-1-fetcher-0",
    fetch_request(
        [{"topic": "orders", "partitions": [fetch_partition(0, 100, epoch=3)]}], replicaId=1
    ),
    fetch_response(
        [
            {
                "topic": "orders",
                "partitionResponses": [
                    {
                        "partition": 0,
                        "errorCode": 0,
                        "highWatermark": 90,
                        "lastStableOffset": 90,
                        "logStartOffset": 0,
                        "abortedTransactions": None,
                        "preferredReadReplica": -1,
                        "recordSetSizeInBytes": 512,
                    }
                ],
            }
        ]
    ),
    ts="2024-05-01 09:00:00,500",
    level="INFO",
    suffix="",
)
# response absent: null in the later Java version (1.2).
EPOCH_QUERY_NULL_RESPONSE = completed_request(
    23,
    3,
    "broker-1-fetcher-0",
    {
        "replicaId": 1,
        "topics": [
            {
                "topic": "orders",
                "partitions": [{"partition": 0, "currentLeaderEpoch": 3, "leaderEpoch": 2}],
            }
        ],
    },
    None,
    ts="2024-05-01 09:00:01,000",
)

# --- AlterIsr / AlterPartition (section 1.8), in the controller's request log ---


def alter(version: int, request: Any, response: Any, second: int, name: str) -> str:
    line = completed_request(56, version, "1", request, response,
                             ts=f"2024-05-01 11:00:{second:02d},000")  # fmt: skip
    # requestApiKeyName is the ApiKeys name of the broker's version (1.4).
    return line.replace('"ALTER_PARTITION"', f'"{name}"')


def alter_request(topic: dict[str, Any], partition: dict[str, Any]) -> dict[str, Any]:
    return {"brokerId": 1, "brokerEpoch": 37, "topics": [{**topic, "partitions": [partition]}]}


def alter_response(topic: dict[str, Any], *partitions: dict[str, Any]) -> dict[str, Any]:
    return {"throttleTimeMs": 0, "errorCode": 0,
            "topics": [{**topic, "partitions": list(partitions)}]}  # fmt: skip


CONTROLLER_LINES = [
    # 1: AlterIsr v0 (2.8-3.1): "name", newIsr, currentIsrVersion
    alter(0,
          alter_request({"name": "orders"}, {"partitionIndex": 0, "leaderEpoch": 5,
                        "newIsr": [1, 2], "currentIsrVersion": 9}),
          alter_response({"name": "orders"}, {"partitionIndex": 0, "errorCode": 0, "leaderId": 1,
                         "leaderEpoch": 5, "isr": [1, 2], "currentIsrVersion": 10}),
          1, "ALTER_ISR"),
    # 2: AlterPartition v1 (3.2): "name", leaderRecoveryState, partitionEpoch;
    #    the controller refuses it (FENCED_LEADER_EPOCH)
    alter(1,
          alter_request({"name": "orders"}, {"partitionIndex": 1, "leaderEpoch": 3,
                        "newIsr": [2], "leaderRecoveryState": 1, "partitionEpoch": 4}),
          alter_response({"name": "orders"}, {"partitionIndex": 1, "errorCode": 74,
                         "leaderId": -1, "leaderEpoch": -1, "isr": [],
                         "leaderRecoveryState": 0, "partitionEpoch": -1}),
          2, "ALTER_PARTITION"),
    # 3: v2 (3.3+): topicId only (the name comes from the TOPIC_RECORD)
    alter(2,
          alter_request({"topicId": TOPIC_ID}, {"partitionIndex": 0, "leaderEpoch": 5,
                        "newIsr": [1, 2, 3], "leaderRecoveryState": 0, "partitionEpoch": 10}),
          alter_response({"topicId": TOPIC_ID}, {"partitionIndex": 0, "errorCode": 0,
                         "leaderId": 1, "leaderEpoch": 5, "isr": [1, 2, 3],
                         "leaderRecoveryState": 0, "partitionEpoch": 11}),
          3, "ALTER_PARTITION"),
    # 4: v3 (3.5+): newIsrWithEpochs (KIP-903); no response logged ("" 2.8-3.9)
    alter(3,
          alter_request({"topicId": TOPIC_ID}, {"partitionIndex": 0, "leaderEpoch": 5,
                        "newIsrWithEpochs": [{"brokerId": 1, "brokerEpoch": 37},
                                             {"brokerId": 3, "brokerEpoch": 41}],
                        "leaderRecoveryState": 0, "partitionEpoch": 11}),
          "", 4, "ALTER_PARTITION"),
    # 5: a proposed ISR we cannot read: quarantined
    alter(2,
          alter_request({"topicId": TOPIC_ID}, {"partitionIndex": 0, "leaderEpoch": 5,
                        "newIsr": [1, "two"], "leaderRecoveryState": 0, "partitionEpoch": 10}),
          "", 5, "ALTER_PARTITION"),
    # 6: v3 with an entry lacking its broker id: a shape we do not know
    alter(3,
          alter_request({"topicId": TOPIC_ID}, {"partitionIndex": 0, "leaderEpoch": 5,
                        "newIsrWithEpochs": [{"brokerEpoch": 37}],
                        "leaderRecoveryState": 0, "partitionEpoch": 11}),
          "", 6, "ALTER_PARTITION"),
]  # fmt: skip

METADATA_DUMP = [
    "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log",
    "| offset: 3 CreateTime: 1714550000000 keySize: -1 valueSize: 50 sequence: -1 headerKeys: [] "
    'payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"'
    + TOPIC_ID
    + '"}}',
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request_logs")
    (root / "broker-1").mkdir()
    (root / "broker-1" / "kafka-request.log").write_text(
        "\n".join(BROKER_1_LINES), encoding="utf-8"
    )
    (root / "broker=2").mkdir()
    with gzip.open(root / "broker=2" / "kafka-request.log.2024-05-01-10.gz", "wb") as f:
        f.write(("\r\n".join([FETCH_V12_2_8, EPOCH_QUERY_NULL_RESPONSE]) + "\r\n").encode())
    (root / "broker-5").mkdir()
    (root / "broker-5" / "kafka-request.log.2024-05-01-11").write_text(
        "\n".join(CONTROLLER_LINES) + "\n", encoding="utf-8"
    )
    (root / "controller").mkdir()
    (root / "controller" / "metadata.txt").write_text("\n".join(METADATA_DUMP) + "\n")
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod")
    return {
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": r.events.collect(),
        "quarantine": r.quarantine.collect(),
        "file_stats": {Path(row.path).name: row.asDict() for row in r.file_stats.collect()},
    }


def _file_events(result: dict[str, Any], name: str) -> list[dict[str, Any]]:
    rows = [r.asDict() for r in result["events"] if r.source_file.endswith("/" + name)]
    return sorted(rows, key=lambda r: r["seq"])


def _set(row: dict[str, Any]) -> dict[str, Any]:
    """The non-null columns of an event, minus those every event has."""
    common = {"cluster", "source_file", "line_no", "seq", "observer", "event_time"}
    return {k: v for k, v in row.items() if v is not None and k not in common}


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    stats = result["file_stats"]
    assert stats["kafka-request.log"] == {
        "path": stats["kafka-request.log"]["path"],
        "kind": "request_log",
        "observer": 1,
        "lines_read": 20,
        "lines_parsed": 6,
        "lines_ignored": 10,
        "lines_quarantined": 4,
        "note": None,
    }
    assert stats["kafka-request.log.2024-05-01-10.gz"] | {"path": None} == {
        "path": None,
        "kind": "request_log",
        "observer": 2,
        "lines_read": 2,
        "lines_parsed": 2,
        "lines_ignored": 0,
        "lines_quarantined": 0,
        "note": None,
    }
    assert stats["metadata.txt"]["kind"] == "metadata_dump"
    assert stats["metadata.txt"]["lines_parsed"] == 1
    for s in stats.values():
        assert s["path"].startswith("file:/")
        assert s["lines_read"] == s["lines_parsed"] + s["lines_ignored"] + s["lines_quarantined"]


def test_fetch_v13_constructed_example(result: dict[str, Any]) -> None:
    line_1 = [e for e in _file_events(result, "kafka-request.log") if e["line_no"] == 1]
    assert [e["seq"] for e in line_1] == [100_000, 100_001]  # request before response
    request, response = line_1
    assert request == {
        "cluster": "prod",
        "topic": "orders",  # joined from the TOPIC_RECORD by topic id
        "topic_id": TOPIC_ID,
        "partition": 0,
        "observer": 1,
        "source_file": request["source_file"],
        "line_no": 1,
        "event_time": T0,
        "metadata_offset": None,
        "seq": 100_000,
        "kind": "fetch_request",
        **{k: None for k in ("leader", "leader_epoch", "partition_epoch", "replicas", "isr")},
        **{k: None for k in ("elr", "last_known_elr", "adding_replicas", "removing_replicas")},
        **{k: None for k in ("leader_recovery_state", "broker_epoch", "fenced")},
        "in_controlled_shutdown": None,
        "replica": 2,
        "fetch_offset": 3200,
        "last_fetched_epoch": 5,
        "current_leader_epoch": 5,
        "log_start_offset": 0,
        **{k: None for k in ("hwm", "diverging_epoch", "diverging_end_offset", "records_size")},
        **{k: None for k in ("requested_epoch", "end_offset", "base_offset", "acks")},
        "error_code": None,
        "client_id": "broker-2-fetcher-0",
        "api_version": 13,
        **{k: None for k in ("leo", "truncate_to", "previous_hwm")},
        **{k: None for k in ("controller_epoch", "last_offset", "min_isr", "under_min_isr")},
        **{k: None for k in ("clean_shutdown", "kafka_version", "inter_broker_protocol")},
        **{k: None for k in ("mode", "unclean_election_enabled", "offset_lag", "is_future")},
        **{k: None for k in ("previous_leader", "previous_leader_epoch", "previous_isr")},
        "previous_partition_epoch": None,
    }
    assert request["source_file"].startswith("file:/")
    assert _set(response) == {
        "topic": "orders",
        "topic_id": TOPIC_ID,
        "partition": 0,
        "kind": "fetch_response",
        "replica": 2,
        "hwm": 3200,
        "error_code": 0,
        "log_start_offset": 0,
        "records_size": 0,
        "api_version": 13,
    }
    assert response["event_time"] == T0 and response["observer"] == 1


def test_every_event_of_the_plain_log(result: dict[str, Any]) -> None:
    events = _file_events(result, "kafka-request.log")
    got = [(e["line_no"], e["seq"] % 100_000, _set(e)) for e in events if e["line_no"] > 1]
    named = {"topic": "orders", "topic_id": TOPIC_ID}
    assert got == [
        (4, 0, {**named, "partition": 0, "kind": "fetch_request", "replica": 3,
                "fetch_offset": 3300, "last_fetched_epoch": 5, "current_leader_epoch": 6,
                "log_start_offset": 0, "client_id": "broker-3-fetcher-0", "api_version": 15}),
        (4, 1, {**named, "partition": 1, "kind": "fetch_request", "replica": 3,
                "fetch_offset": 1700, "last_fetched_epoch": 5, "current_leader_epoch": 6,
                "log_start_offset": 0, "client_id": "broker-3-fetcher-0", "api_version": 15}),
        (4, 2, {**named, "partition": 1, "kind": "fetch_response", "replica": 3, "hwm": 2000,
                "error_code": 0, "diverging_epoch": 4, "diverging_end_offset": 1500,
                "log_start_offset": 0, "records_size": 0, "api_version": 15}),
        (8, 0, {**named, "partition": 0, "kind": "produce", "acks": -1, "base_offset": 3200,
                "error_code": 0, "client_id": "producer-1", "api_version": 9}),
        (9, 0, {**named, "partition": 0, "kind": "produce", "base_offset": -1,
                "error_code": 6, "client_id": "producer-1", "api_version": 9}),
        (10, 0, {**named, "partition": 0, "kind": "epoch_query", "replica": 2,
                 "requested_epoch": 5, "current_leader_epoch": 6}),
        (10, 1, {**named, "partition": 0, "kind": "epoch_answer", "replica": 2,
                 "leader_epoch": 5, "end_offset": 3100, "error_code": 0}),
        # a debug consumer's (-2): its answer only, no epoch_query
        (11, 0, {**named, "partition": 0, "kind": "consumer_epoch_answer", "replica": -2,
                 "leader_epoch": 5, "end_offset": 3100, "error_code": 0,
                 "client_id": "broker-2-fetcher-0"}),
    ]  # fmt: skip
    assert {e["event_time"] for e in events if e["line_no"] > 1} == {
        dt.datetime(2024, 5, 1, 10, 0, 1)
    }


def test_2_8_fetch_shape_gzip_crlf_and_null_response(result: dict[str, Any]) -> None:
    events = _file_events(result, "kafka-request.log.2024-05-01-10.gz")
    named = {"topic": "orders", "topic_id": TOPIC_ID}
    assert [(e["line_no"], e["observer"], e["event_time"], _set(e)) for e in events] == [
        (1, 2, dt.datetime(2024, 5, 1, 9, 0, 0, 500000),
         {**named, "partition": 0, "kind": "fetch_request", "replica": 1, "fetch_offset": 100,
          "last_fetched_epoch": 3, "current_leader_epoch": 4, "log_start_offset": 0,
          "client_id": "broker-1-fetcher-0", "api_version": 12}),
        (1, 2, dt.datetime(2024, 5, 1, 9, 0, 0, 500000),
         {**named, "partition": 0, "kind": "fetch_response", "replica": 1, "hwm": 90,
          "error_code": 0, "log_start_offset": 0, "records_size": 512, "api_version": 12}),
        (2, 2, dt.datetime(2024, 5, 1, 9, 0, 1),
         {**named, "partition": 0, "kind": "epoch_query", "replica": 1, "requested_epoch": 2,
          "current_leader_epoch": 3}),
    ]  # fmt: skip


def test_quarantine(result: dict[str, Any]) -> None:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    rows = sorted(
        (r.asDict() for r in result["quarantine"] if r.source_file.endswith("/kafka-request.log")),
        key=lambda r: r["line_no"],
    )
    assert [(r["line_no"], r["reason"], r["date"], r["text_truncated"]) for r in rows] == [
        (14, "request log line without a timestamp", today, False),
        (15, "bad JSON in Completed request", "2024-05-01", False),
        (19, "unknown FETCH shape", "2024-05-01", False),
        (20, "bad JSON in Completed request", "2024-05-01", False),
    ]
    assert [r["text"] for r in rows] == [BROKER_1_LINES[i - 1] for i in (14, 15, 19, 20)]
    assert {r["cluster"] for r in rows} == {"prod"}
    # + the two AlterPartition lines (test_alter_partition_accounting_and_quarantine)
    assert len(result["quarantine"]) == 6


def test_alter_isr_and_alter_partition_per_version(result: dict[str, Any]) -> None:
    events = _file_events(result, "kafka-request.log.2024-05-01-11")
    named = {"topic": "orders", "topic_id": TOPIC_ID}
    common = {"kind": "alter_partition", "replica": 1, "client_id": "1"}
    assert [(e["line_no"], e["seq"] % 100_000, e["observer"], _set(e)) for e in events] == [
        # AlterIsr v0: proposal, then the controller's answer
        (1, 0, 5, {**common, **named, "partition": 0, "leader_epoch": 5, "isr": [1, 2],
                   "partition_epoch": 9, "api_version": 0}),
        (1, 1, 5, {**common, **named, "partition": 0, "error_code": 0, "leader": 1,
                   "leader_epoch": 5, "isr": [1, 2], "partition_epoch": 10, "api_version": 0}),
        # v1: the recovery state; a refused proposal keeps the answer's values as sent
        (2, 0, 5, {**common, **named, "partition": 1, "leader_epoch": 3, "isr": [2],
                   "partition_epoch": 4, "leader_recovery_state": 1, "api_version": 1}),
        (2, 1, 5, {**common, **named, "partition": 1, "error_code": 74, "leader": -1,
                   "leader_epoch": -1, "isr": [], "partition_epoch": -1,
                   "leader_recovery_state": 0, "api_version": 1}),
        # v2: topic id, name filled from the TOPIC_RECORD
        (3, 0, 5, {**common, **named, "partition": 0, "leader_epoch": 5, "isr": [1, 2, 3],
                   "partition_epoch": 10, "leader_recovery_state": 0, "api_version": 2}),
        (3, 1, 5, {**common, **named, "partition": 0, "error_code": 0, "leader": 1,
                   "leader_epoch": 5, "isr": [1, 2, 3], "partition_epoch": 11,
                   "leader_recovery_state": 0, "api_version": 2}),
        # v3: newIsrWithEpochs[].brokerId; no response
        (4, 0, 5, {**common, **named, "partition": 0, "leader_epoch": 5, "isr": [1, 3],
                   "partition_epoch": 11, "leader_recovery_state": 0, "api_version": 3}),
    ]  # fmt: skip
    assert {e["event_time"] for e in events if e["line_no"] == 4} == {
        dt.datetime(2024, 5, 1, 11, 0, 4)
    }


def test_alter_partition_accounting_and_quarantine(result: dict[str, Any]) -> None:
    stats = result["file_stats"]["kafka-request.log.2024-05-01-11"]
    assert (stats["kind"], stats["observer"], stats["lines_read"], stats["lines_parsed"],
            stats["lines_ignored"], stats["lines_quarantined"]) == (
        "request_log", 5, 6, 4, 0, 2)  # fmt: skip
    rows = sorted(
        (r.line_no, r.reason)
        for r in result["quarantine"]
        if r.source_file.endswith("/kafka-request.log.2024-05-01-11")
    )
    assert rows == [(5, "bad JSON in Completed request"), (6, "unknown ALTER_PARTITION shape")]


def test_the_top_level_keys_cut_the_line_only_when_all_are_there_in_order(
    spark: Any, tmp_path: Path
) -> None:
    """Section 1.2: the header, request and response texts lie between the
    first occurrences of the top-level keys, in order. A line missing one, or
    with two out of order, is a cut or garbled line: quarantined, even for an
    api key that is not read; a key name inside a string value (escaped
    quotes) does not cut."""
    from pipeline.ingest import ingest

    swap = FETCH_V13_EXAMPLE.replace(',"request":', ',"tmp":')
    swap = swap.replace(',"response":', ',"request":')
    lines = [
        FETCH_V13_EXAMPLE,  # 1 read
        FETCH_V13_EXAMPLE.replace(',"connection":', ',"conn":'),  # 2 no connection
        FETCH_V13_EXAMPLE.replace(',"response":', ',"resp":'),  # 3 no response
        swap.replace(',"tmp":', ',"response":'),  # 4 response before request
        FETCH_V13_EXAMPLE.replace('"requestHeader":', '"header":'),  # 5 no header
        # 6 the client id holds a key name: escaped, it cuts nothing
        FETCH_V13_EXAMPLE.replace('"broker-2-fetcher-0"', r'"x\",\"request\":{\"y"'),
        METADATA.replace(',"connection":', ',"conn":'),  # 7 an api key not read, cut
    ]
    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-1" / "kafka-request.log").write_text("\n".join(lines) + "\n")
    r = ingest(spark, [str(tmp_path)], cluster="prod")
    quarantined = sorted((q.line_no, q.reason) for q in r.quarantine.collect())
    assert quarantined == [(n, "bad JSON in Completed request") for n in (2, 3, 4, 5, 7)]
    events = sorted(
        (e.line_no, e.kind, e.client_id, e.fetch_offset, e.hwm) for e in r.events.collect()
    )
    assert events == [
        (1, "fetch_request", "broker-2-fetcher-0", 3200, None),
        (1, "fetch_response", None, None, 3200),
        (6, "fetch_request", 'x","request":{"y', 3200, None),
        (6, "fetch_response", None, None, 3200),
    ]
    [stats] = r.file_stats.collect()
    assert (stats.lines_read, stats.lines_parsed, stats.lines_quarantined) == (7, 2, 5)
