"""Ingest of <= 2.7 text request-log lines (kafka-formats.md section 1.2).

Every line is built exactly as the Kafka version named beside it prints it
(the shapes and their sources are listed in pipeline/ingest/request_log.py's
docstring): ``Struct.toString`` bodies, the 1.0+ ``RequestHeader(...)`` and
0.9-0.11 ``{api_key=...}`` headers, the old Scala ``describe`` form, and each
family's connection/timing tail. One folder tree, one ingest, shared by every
test.
"""

from __future__ import annotations

import datetime as dt
import gzip
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ingest_helpers import accounting, events_of, non_null
from tests.test_ingest_fuzz import mutated

pytestmark = pytest.mark.spark

LOGGER = " (kafka.request.logger)"


def render(value: Any) -> str:
    """``Struct.toString`` (clients/.../protocol/types/Struct.java, 0.9-2.7):
    ``{name=value,...}``, arrays ``[a,b]``, null ``null``, no spaces."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={render(v)}" for k, v in value.items()) + "}"
    return str(value)


# --- line tails, per version family (core/.../network/RequestChannel.scala) -------

#: 2.5-2.7: Double times, clientInformation (RequestChannel.scala @2.5.0).
TAIL_2_7 = (
    " from connection 10.0.0.1:9092-10.0.0.2:51514-3;totalTime:500.687,requestQueueTime:0.021,"
    "localTime:0.311,remoteTime:500.201,throttleTime:0.0,responseQueueTime:0.05,sendTime:0.104,"
    "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0)"
)
#: 1.0-2.4: no clientInformation.
TAIL_1_1 = (
    " from connection 10.0.0.1:9092-10.0.0.2:51514-3;totalTime:0.685,requestQueueTime:0.02,"
    "localTime:0.31,remoteTime:0.2,throttleTime:0.0,responseQueueTime:0.05,sendTime:0.1,"
    "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT"
)
#: 0.11: "%f" times.
TAIL_0_11 = (
    " from connection 10.0.0.1:9092-10.0.0.3:40000;totalTime:500.687000,"
    "requestQueueTime:0.021000,localTime:0.311000,remoteTime:500.201000,throttleTime:0.000000,"
    "responseQueueTime:0.050000,sendTime:0.104000,securityProtocol:PLAINTEXT,"
    "principal:User:ANONYMOUS,listener:PLAINTEXT"
)
#: 0.10.2: "%d" times and the listener.
TAIL_0_10_2 = (
    " from connection 10.0.0.1:9092-10.0.0.3:40000;totalTime:501,requestQueueTime:0,localTime:0,"
    "remoteTime:500,responseQueueTime:0,sendTime:0,securityProtocol:PLAINTEXT,"
    "principal:User:ANONYMOUS,listener:PLAINTEXT"
)
#: 0.9.0-0.10.1: no listener.
TAIL_0_10 = (
    " from connection 10.0.0.1:9092-10.0.0.3:40000;totalTime:501,requestQueueTime:0,localTime:0,"
    "remoteTime:500,responseQueueTime:0,sendTime:0,securityProtocol:PLAINTEXT,"
    "principal:User:ANONYMOUS"
)
#: 0.8.2: "from client".
TAIL_0_8 = (
    " from client /10.0.0.3:40000;totalTime:501,requestQueueTime:0,localTime:0,remoteTime:500,"
    "responseQueueTime:0,sendTime:0"
)


def h1(
    ts: str,
    api: str,
    version: int,
    client_id: str,
    request: Any,
    response: Any,
    tail: str = TAIL_2_7,
    level: str = "DEBUG",
) -> str:
    """1.0-2.7: ``RequestHeader(...) -- {request},response:{response}``."""
    return (f"[{ts}] {level} Completed request:RequestHeader(apiKey={api}, apiVersion={version}, "
            f"clientId={client_id}, correlationId=4711) -- {render(request)},response:"
            f"{render(response)}{tail}{LOGGER}")  # fmt: skip


def h0(
    ts: str,
    api_key: int,
    version: int,
    client_id: str,
    request: Any,
    tail: str = TAIL_0_11,
    level: str = "DEBUG",
) -> str:
    """0.9-0.11: the header is a Struct; no response."""
    header = render({"api_key": api_key, "api_version": version, "correlation_id": 4711,
                     "client_id": client_id})  # fmt: skip
    return f"[{ts}] {level} Completed request:{header} -- {render(request)}{tail}{LOGGER}"


def scala_fetch(
    ts: str,
    version: int,
    replica: int,
    info: list[tuple[str, int, int]] | None,
    tail: str = TAIL_0_10,
    max_bytes: bool = False,
) -> str:
    """0.8.2-0.10.1 ``kafka.api.FetchRequest.describe``; ``info`` (the TRACE
    details) as ``(topic, partition, offset)``."""
    desc = (f"Name: FetchRequest; Version: {version}; CorrelationId: 4711; "
            f"ClientId: ReplicaFetcherThread-0-1; ReplicaId: {replica}; MaxWait: 500 ms; "
            "MinBytes: 1 bytes")  # fmt: skip
    if max_bytes:  # 0.10.1
        desc += "; MaxBytes:10485760 bytes"
    level = "DEBUG"
    if info is not None:
        level = "TRACE"
        desc += "; RequestInfo: " + ",".join(
            f"([{t},{p}],PartitionFetchInfo({o},1048576))" for t, p, o in info
        )
    return f"[{ts}] {level} Completed request:{desc}{tail}{LOGGER}"


# --- 2.7 / 2.6 / 1.1 bodies --------------------------------------------------------


def fetch_partition_v12(partition: int, offset: int, epoch: int) -> dict[str, Any]:
    """FetchRequest.json @2.7.0, v12 (flexible)."""
    return {"partition": partition, "current_leader_epoch": epoch + 1, "fetch_offset": offset,
            "last_fetched_epoch": epoch, "log_start_offset": 0,
            "partition_max_bytes": 1048576, "_tagged_fields": {}}  # fmt: skip


def fetch_request_v12(replica: int, topics: list[dict[str, Any]]) -> dict[str, Any]:
    return {"replica_id": replica, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 10485760,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": topics,
            "forgotten_topics_data": [], "rack_id": "", "_tagged_fields": {}}  # fmt: skip


FETCH_V12 = h1(
    "2020-11-02 10:00:00,123", "FETCH", 12, "broker-2-fetcher-0",
    fetch_request_v12(2, [{"topic": "orders", "partitions": [
        fetch_partition_v12(0, 3200, 5), fetch_partition_v12(1, 1700, 4)],
        "_tagged_fields": {}}]),
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition": 1, "error_code": 0, "high_watermark": 2000, "last_stable_offset": 2000,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
             "record_set": "FileRecords(size=0, file=/var/lib/kafka/orders-1/"
                           "00000000000000000000.log, start=0, end=0)",
             # tag 0 = DivergingEpoch (FetchResponse.json @2.7.0), a TreeMap
             "_tagged_fields": {0: {"epoch": 4, "end_offset": 1500, "_tagged_fields": {}}}}],
         "_tagged_fields": {}}],
     "_tagged_fields": {}},
)  # fmt: skip

#: 2.6 FetchRequest.java/FetchResponse.java v11 (hand-written names).
FETCH_V11_2_6 = h1(
    "2020-11-02 10:00:01,000", "FETCH", 11, "broker-3-fetcher-0",
    {"replica_id": 3, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 10485760,
     "isolation_level": 0, "session_id": 9, "session_epoch": 2, "topics": [
         {"topic": "orders", "partitions": [
             {"partition": 0, "current_leader_epoch": 6, "fetch_offset": 3150,
              "log_start_offset": 0, "partition_max_bytes": 1048576}]}],
     "forgotten_topics_data": [{"topic": "logs", "partitions": [0, 1]}], "rack_id": ""},
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 9, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition_header": {"partition": 0, "error_code": 0, "high_watermark": 3200,
                                  "last_stable_offset": 3200, "log_start_offset": 0,
                                  "aborted_transactions": None, "preferred_read_replica": -1},
             "record_set": "[]"}]}]},
)  # fmt: skip
CONSUMER_FETCH_V11 = FETCH_V11_2_6.replace("replica_id=3,", "replica_id=-1,").replace(
    "clientId=broker-3-fetcher-0", "clientId=consumer-g-1"
)
#: ProduceRequest.toString(false) (DEBUG) and ProduceResponse.java v8 @2.7.0.
PRODUCE_V8 = h1(
    "2020-11-02 10:00:02,000", "PRODUCE", 8, "producer-1",
    {"acks": -1, "timeout": 30000, "numPartitions": 2},
    {"responses": [{"topic": "orders", "partition_responses": [
        {"partition": 0, "error_code": 0, "base_offset": 3200, "log_append_time": -1,
         "log_start_offset": 0, "record_errors": [], "error_message": None},
        {"partition": 1, "error_code": 6, "base_offset": -1, "log_append_time": -1,
         "log_start_offset": -1, "record_errors": [], "error_message": None}]}],
     "throttle_time_ms": 0},
)  # fmt: skip
#: OffsetsForLeaderEpochRequest/Response.java v3 @2.7.0.
EPOCH_V3 = h1(
    "2020-11-02 10:00:03,000", "OFFSET_FOR_LEADER_EPOCH", 3, "broker-2-fetcher-0",
    {"replica_id": 2, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "current_leader_epoch": 6, "leader_epoch": 5}]}]},
    {"throttle_time_ms": 0, "topics": [{"topic": "orders", "partitions": [
        {"error_code": 0, "partition": 0, "leader_epoch": 5, "end_offset": 3100}]}]},
)  # fmt: skip
#: LeaderAndIsrRequest.json @2.7.0, v4 (generated names, flexible).
LEADER_AND_ISR_V4 = h1(
    "2020-11-02 10:00:04,000", "LEADER_AND_ISR", 4, "5",
    {"controller_id": 5, "controller_epoch": 12, "broker_epoch": 4294967319, "topic_states": [
        {"topic_name": "orders", "partition_states": [
            {"partition_index": 0, "controller_epoch": 12, "leader": 1, "leader_epoch": 7,
             "isr": [1, 2], "zk_version": 21, "replicas": [1, 2, 3], "adding_replicas": [],
             "removing_replicas": [], "is_new": False, "_tagged_fields": {}}],
         "_tagged_fields": {}}],
     "live_leaders": [{"broker_id": 1, "host_name": "kafka-1", "port": 9092,
                       "_tagged_fields": {}}],
     "_tagged_fields": {}},
    {"error_code": 0, "partition_errors": [
        {"topic_name": "orders", "partition_index": 0, "error_code": 0, "_tagged_fields": {}}],
     "_tagged_fields": {}},
)  # fmt: skip
METADATA_V9 = h1(
    "2020-11-02 10:00:05,000", "METADATA", 9, "admin-1",
    {"topics": None, "allow_auto_topic_creation": True, "_tagged_fields": {}},
    {"throttle_time_ms": 0, "brokers": [], "_tagged_fields": {}},
)  # fmt: skip
BAD_OFFSET = FETCH_V12.replace("fetch_offset=1700", "fetch_offset=17x0")
HUGE_OFFSET = FETCH_V12.replace("fetch_offset=1700", "fetch_offset=123456789012345678901")
BAD_HEADER = FETCH_V12.replace("apiVersion=12", "apiVersion=twelve")
CUT = FETCH_V12[: FETCH_V12.index(",response:") + 40]

BROKER_1 = [
    FETCH_V12,  # 1 parsed: 2 requests + 1 response
    FETCH_V11_2_6,  # 2 parsed: 1 request + 1 response
    CONSUMER_FETCH_V11,  # 3 a consumer: its answer (test_ingest_request_consumer.py)
    PRODUCE_V8,  # 4 parsed: 2 produce
    EPOCH_V3,  # 5 parsed: query + answer
    LEADER_AND_ISR_V4,  # 6 parsed
    METADATA_V9,  # 7 an api we do not read: ignored
    "",  # 8 blank
    "[2020-11-02 10:00:06,000] TRACE Processor 3 received request: RequestHeader(apiKey=FETCH, "
    "apiVersion=12, clientId=broker-2-fetcher-0, correlationId=4712) -- {replica_id=2}"
    " (kafka.network.RequestChannel$)",  # 9 another logger's line: ignored
    BAD_OFFSET,  # 10 quarantined
    HUGE_OFFSET,  # 11 quarantined (out of range)
    BAD_HEADER,  # 12 quarantined
    CUT,  # 13 quarantined: the last line, cut, no newline
]

#: AlterIsr v0 in the 2.7 controller's log (AlterIsrRequest/Response.json @2.7.0).
ALTER_ISR_2_7 = h1(
    "2020-11-02 10:00:07,000", "ALTER_ISR", 0, "1",
    {"broker_id": 1, "broker_epoch": 4294967319, "topics": [
        {"name": "orders", "partitions": [
            {"partition_index": 0, "leader_epoch": 7, "new_isr": [1, 2, 3],
             "current_isr_version": 21, "_tagged_fields": {}},
            {"partition_index": 1, "leader_epoch": 3, "new_isr": [1],
             "current_isr_version": 8, "_tagged_fields": {}}],
         "_tagged_fields": {}}],
     "_tagged_fields": {}},
    {"throttle_time_ms": 0, "error_code": 0, "topics": [
        {"name": "orders", "partitions": [
            {"partition_index": 0, "error_code": 0, "leader_id": 1, "leader_epoch": 7,
             "isr": [1, 2, 3], "current_isr_version": 22, "_tagged_fields": {}},
            {"partition_index": 1, "error_code": 74, "leader_id": 0, "leader_epoch": 0,
             "isr": [], "current_isr_version": 0, "_tagged_fields": {}}],
         "_tagged_fields": {}}],
     "_tagged_fields": {}},
)  # fmt: skip
ALTER_ISR_BAD = ALTER_ISR_2_7.replace("new_isr=[1]", "new_isr=[1,]")
CONTROLLER = [ALTER_ISR_2_7, ALTER_ISR_BAD]

# --- 1.1 (one line) and 0.11 (CRLF, gzip) ---------------------------------------------

#: 1.1.1 FetchRequest.java v7: max_wait_time, epoch (session epoch), max_bytes.
FETCH_V7_1_1 = h1(
    "2018-06-01 08:00:00,000", "FETCH", 7, "broker-1-fetcher-0",
    {"replica_id": 1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 10485760,
     "isolation_level": 0, "session_id": 0, "epoch": -1, "topics": [
         {"topic": "orders", "partitions": [
             {"partition": 2, "fetch_offset": 88, "log_start_offset": 0,
              "max_bytes": 1048576}]}],
     "forgotten_topics_data": []},
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition_header": {"partition": 2, "error_code": 0, "high_watermark": 90,
                                  "last_stable_offset": 90, "log_start_offset": 0,
                                  "aborted_transactions": None},
             "record_set": "[]"}]}]},
    tail=TAIL_1_1,
)  # fmt: skip

BROKER_2 = [
    FETCH_V7_1_1,  # 1 parsed (1.1)
    # 2 0.11 FetchRequest v5 (FetchRequest.java @0.11.0.3): parsed, request only
    h0("2017-08-01 09:00:00,000", 1, 5, "broker-3-fetcher-0",
       {"replica_id": 3, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 10485760,
        "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "fetch_offset": 100, "log_start_offset": 0,
             "max_bytes": 1048576}]}]}),
    # 3 0.11 OffsetsForLeaderEpoch v0 (Protocol.java @0.11.0.3: partition_id):
    #   no replica_id, the follower named by its client id
    h0("2017-08-01 09:00:01,000", 23, 0, "broker-3-fetcher-0",
       {"topics": [{"topic": "orders", "partitions": [
           {"partition_id": 0, "leader_epoch": 2}]}]}),
    # 4 0.11 ProduceRequest.toString(true) (TRACE): a request without its
    #   response is no acknowledgement: ignored
    h0("2017-08-01 09:00:02,000", 0, 3, "producer-1",
       {"acks": -1, "timeout": 30000, "partitionSizes": "[orders-0=1234]"}, level="TRACE"),
]  # fmt: skip

# --- 0.10 and 0.8 ---------------------------------------------------------------------

BROKER_3 = [
    # 1 0.10.0 Scala FetchRequest at TRACE: parsed, 2 requests
    scala_fetch("2016-09-01 12:00:00,000", 2, 2, [("orders", 0, 3200), ("orders", 1, 17)]),
    # 2 0.10.1 Scala at DEBUG (no RequestInfo): ignored
    scala_fetch("2016-09-01 12:00:01,000", 3, 2, None, max_bytes=True),
    # 3 0.10.2 FetchRequest v3 (Protocol.java @0.10.2.2), logged at TRACE: parsed
    h0("2017-03-01 12:00:02,000", 1, 3, "broker-2-fetcher-0",
       {"replica_id": 2, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 10485760,
        "topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "fetch_offset": 3300, "max_bytes": 1048576}]}]},
       tail=TAIL_0_10_2, level="TRACE"),
    # 4 0.10.0 ProduceRequest v2 (Struct): no response: ignored
    h0("2016-09-01 12:00:03,000", 0, 2, "producer-1",
       {"acks": 1, "timeout": 1500, "topic_data": [{"topic": "orders", "data": [
           {"partition": 0, "record_set": "java.nio.HeapByteBuffer[pos=0 lim=80 cap=80]"}]}]},
       tail=TAIL_0_10),
    # 5 0.10.0 LeaderAndIsrRequest v0 (Protocol.java): parsed
    h0("2016-09-01 12:00:04,000", 4, 0, "5",
       {"controller_id": 5, "controller_epoch": 3, "partition_states": [
           {"topic": "orders", "partition": 0, "controller_epoch": 3, "leader": 2,
            "leader_epoch": 9, "isr": [2], "zk_version": 14, "replicas": [1, 2]}],
        "live_leaders": [{"id": 2, "host": "kafka-2", "port": 9092}]},
       tail=TAIL_0_10),
    # 6 0.8.2 "from client": parsed
    scala_fetch("2015-03-01 12:00:05,000", 0, 2, [("orders", 0, 42)], tail=TAIL_0_8),
    # 7 0.9 ProducerRequest.describe(false): ignored
    "[2016-01-01 12:00:06,000] DEBUG Completed request:Name: ProducerRequest; Version: 1; "
    "CorrelationId: 3; ClientId: producer-1; RequiredAcks: -1; AckTimeoutMs: 30000 ms"
    + TAIL_0_10 + LOGGER,
]  # fmt: skip
INVALID_UTF8 = scala_fetch("2016-09-01 12:00:07,000", 2, 2, [("orders", 0, 1)]).encode()
INVALID_UTF8 = INVALID_UTF8.replace(b"ReplicaFetcherThread", b"Replica\xff\xfeFetcher")
#: 2 MB: a 0.10.2 fetch for many partitions.
HUGE = h0("2017-03-01 12:00:08,000", 1, 3, "broker-2-fetcher-0",
          {"replica_id": 2, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 10485760,
           "topics": [{"topic": "orders", "partitions": [
               {"partition": p, "fetch_offset": 3300, "max_bytes": 1048576}
               for p in range(40_000)]}]},
          tail=TAIL_0_10_2, level="TRACE")  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request_logs_text")
    (root / "broker-1").mkdir()
    (root / "broker-1" / "kafka-request.log").write_text("\n".join(BROKER_1), encoding="utf-8")
    (root / "broker-5").mkdir()
    (root / "broker-5" / "kafka-request.log.2020-11-02-10").write_text(
        "\n".join(CONTROLLER) + "\n", encoding="utf-8"
    )
    (root / "broker-2").mkdir()
    with gzip.open(root / "broker-2" / "kafka-request.log.2017-08-01-09.gz", "wb") as f:
        f.write(("\r\n".join(BROKER_2) + "\r\n").encode())
    (root / "broker-3").mkdir()
    body = "\n".join(BROKER_3).encode() + b"\n" + INVALID_UTF8 + b"\n" + HUGE.encode() + b"\n"
    (root / "broker-3" / "kafka-request.log.2016-09-01-12").write_bytes(body)
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="old")
    return {
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": [q.asDict() for q in r.quarantine.collect()],
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


def _got(result: dict[str, Any], name: str) -> list[tuple[int, int, dict[str, Any]]]:
    common = frozenset({"cluster", "source_file", "seq", "observer", "event_time", "line_no"})
    return [(e["line_no"], e["seq"] % 100_000, non_null(e, common))
            for e in events_of(result, name)]  # fmt: skip


def test_accounting(result: dict[str, Any]) -> None:
    # (kind, observer, read, parsed, ignored, quarantined)
    assert accounting(result["file_stats"]) == {
        "kafka-request.log": ("request_log", 1, 13, 6, 3, 4),
        "kafka-request.log.2017-08-01-09.gz": ("request_log", 2, 4, 3, 1, 0),
        "kafka-request.log.2016-09-01-12": ("request_log", 3, 9, 4, 3, 2),
        "kafka-request.log.2020-11-02-10": ("request_log", 5, 2, 1, 0, 1),
    }


def test_2_7_and_2_6_lines(result: dict[str, Any]) -> None:
    fetcher = {"client_id": "broker-2-fetcher-0", "topic": "orders"}
    assert _got(result, "kafka-request.log") == [
        (1, 0, {**fetcher, "partition": 0, "kind": "fetch_request", "replica": 2,
                "fetch_offset": 3200, "last_fetched_epoch": 5, "current_leader_epoch": 6,
                "log_start_offset": 0, "api_version": 12}),
        (1, 1, {**fetcher, "partition": 1, "kind": "fetch_request", "replica": 2,
                "fetch_offset": 1700, "last_fetched_epoch": 4, "current_leader_epoch": 5,
                "log_start_offset": 0, "api_version": 12}),
        (1, 2, {"topic": "orders", "partition": 1, "kind": "fetch_response", "replica": 2,
                "hwm": 2000, "error_code": 0, "diverging_epoch": 4, "diverging_end_offset": 1500,
                "log_start_offset": 0, "api_version": 12}),
        (2, 0, {"topic": "orders", "partition": 0, "kind": "fetch_request", "replica": 3,
                "fetch_offset": 3150, "current_leader_epoch": 6, "log_start_offset": 0,
                "client_id": "broker-3-fetcher-0", "api_version": 11}),
        (2, 1, {"topic": "orders", "partition": 0, "kind": "fetch_response", "replica": 3,
                "hwm": 3200, "error_code": 0, "log_start_offset": 0, "api_version": 11}),
        (3, 0, {"topic": "orders", "partition": 0, "kind": "consumer_fetch", "replica": -1,
                "fetch_offset": 3150, "hwm": 3200, "error_code": 0, "log_start_offset": 0,
                "client_id": "consumer-g-1", "api_version": 11}),
        (4, 0, {"topic": "orders", "partition": 0, "kind": "produce", "acks": -1,
                "base_offset": 3200, "error_code": 0, "client_id": "producer-1",
                "api_version": 8}),
        (4, 1, {"topic": "orders", "partition": 1, "kind": "produce", "acks": -1,
                "base_offset": -1, "error_code": 6, "client_id": "producer-1",
                "api_version": 8}),
        (5, 0, {"topic": "orders", "partition": 0, "kind": "epoch_query", "replica": 2,
                "requested_epoch": 5, "current_leader_epoch": 6}),
        (5, 1, {"topic": "orders", "partition": 0, "kind": "epoch_answer", "replica": 2,
                "leader_epoch": 5, "end_offset": 3100, "error_code": 0}),
        (6, 0, {"topic": "orders", "partition": 0, "kind": "leader_and_isr", "leader": 1,
                "leader_epoch": 7, "isr": [1, 2], "replicas": [1, 2, 3], "partition_epoch": 21,
                "controller_epoch": 12, "client_id": "5", "api_version": 4}),
    ]  # fmt: skip
    times = {e["line_no"]: e["event_time"] for e in events_of(result, "kafka-request.log")}
    assert times[1] == dt.datetime(2020, 11, 2, 10, 0, 0, 123000)
    assert times[6] == dt.datetime(2020, 11, 2, 10, 0, 4)
    assert {e["observer"] for e in events_of(result, "kafka-request.log")} == {1}


def test_1_1_and_0_11_lines_crlf_gzip(result: dict[str, Any]) -> None:
    assert _got(result, "kafka-request.log.2017-08-01-09.gz") == [
        (1, 0, {"topic": "orders", "partition": 2, "kind": "fetch_request", "replica": 1,
                "fetch_offset": 88, "log_start_offset": 0, "client_id": "broker-1-fetcher-0",
                "api_version": 7}),
        (1, 1, {"topic": "orders", "partition": 2, "kind": "fetch_response", "replica": 1,
                "hwm": 90, "error_code": 0, "log_start_offset": 0, "api_version": 7}),
        (2, 0, {"topic": "orders", "partition": 0, "kind": "fetch_request", "replica": 3,
                "fetch_offset": 100, "log_start_offset": 0, "client_id": "broker-3-fetcher-0",
                "api_version": 5}),
        (3, 0, {"topic": "orders", "partition": 0, "kind": "epoch_query", "replica": 3,
                "requested_epoch": 2}),
    ]  # fmt: skip


def test_0_10_and_0_8_lines(result: dict[str, Any]) -> None:
    scala = {"topic": "orders", "kind": "fetch_request", "replica": 2,
             "client_id": "ReplicaFetcherThread-0-1"}  # fmt: skip
    assert _got(result, "kafka-request.log.2016-09-01-12") == [
        (1, 0, {**scala, "partition": 0, "fetch_offset": 3200, "api_version": 2}),
        (1, 1, {**scala, "partition": 1, "fetch_offset": 17, "api_version": 2}),
        (3, 0, {"topic": "orders", "partition": 0, "kind": "fetch_request", "replica": 2,
                "fetch_offset": 3300, "client_id": "broker-2-fetcher-0", "api_version": 3}),
        (5, 0, {"topic": "orders", "partition": 0, "kind": "leader_and_isr", "leader": 2,
                "leader_epoch": 9, "isr": [2], "replicas": [1, 2], "partition_epoch": 14,
                "controller_epoch": 3, "client_id": "5", "api_version": 0}),
        (6, 0, {**scala, "partition": 0, "fetch_offset": 42, "api_version": 0}),
    ]  # fmt: skip
    rows = events_of(result, "kafka-request.log.2016-09-01-12")
    times = {e["line_no"]: e["event_time"] for e in rows}
    assert times == {1: dt.datetime(2016, 9, 1, 12, 0), 3: dt.datetime(2017, 3, 1, 12, 0, 2),
                     5: dt.datetime(2016, 9, 1, 12, 0, 4),
                     6: dt.datetime(2015, 3, 1, 12, 0, 5)}  # fmt: skip


def test_alter_isr_2_7(result: dict[str, Any]) -> None:
    common = {"topic": "orders", "kind": "alter_partition", "replica": 1, "client_id": "1",
              "api_version": 0}  # fmt: skip
    assert _got(result, "kafka-request.log.2020-11-02-10") == [
        (1, 0, {**common, "partition": 0, "leader_epoch": 7, "isr": [1, 2, 3],
                "partition_epoch": 21}),
        (1, 1, {**common, "partition": 1, "leader_epoch": 3, "isr": [1], "partition_epoch": 8}),
        (1, 2, {**common, "partition": 0, "error_code": 0, "leader": 1, "leader_epoch": 7,
                "isr": [1, 2, 3], "partition_epoch": 22}),
        (1, 3, {**common, "partition": 1, "error_code": 74, "leader": 0, "leader_epoch": 0,
                "isr": [], "partition_epoch": 0}),
    ]  # fmt: skip


def test_quarantine_reasons(result: dict[str, Any]) -> None:
    rows = sorted(
        (Path(q["source_file"]).name, q["line_no"], q["reason"], q["text_truncated"])
        for q in result["quarantine"]
    )
    assert rows == [
        ("kafka-request.log", 10, "unreadable FETCH text request", False),
        ("kafka-request.log", 11, "unreadable FETCH text request", False),
        ("kafka-request.log", 12, "unreadable text request header", False),
        ("kafka-request.log", 13, "text request line without its connection tail (cut)", False),
        ("kafka-request.log.2016-09-01-12", 8, "invalid UTF-8", False),
        ("kafka-request.log.2016-09-01-12", 9, "line longer than 1048576 characters", True),
        ("kafka-request.log.2020-11-02-10", 2, "unreadable ALTER_PARTITION text request", False),
    ]
    texts = {q["line_no"]: q["text"] for q in result["quarantine"]
             if q["source_file"].endswith("/kafka-request.log")}  # fmt: skip
    assert texts == {10: BAD_OFFSET, 11: HUGE_OFFSET, 12: BAD_HEADER, 13: CUT}
    assert len(HUGE) > 2_000_000


def test_cut_anywhere(spark: Any, tmp_path: Path) -> None:
    """A text line cut at any point is never half-read: before the marker it
    is another line (ignored), inside the header it is quarantined as such,
    after the header and before the tail it is a cut line, and once the tail
    has begun every partition entry is there."""
    from pipeline.ingest import ingest

    full = FETCH_V12
    marker = full.index("Completed request:") + len("Completed request:")
    header_end = full.index(" -- ") + len(" -- ")
    tail = full.index(" from connection ") + len(" from connection ")
    cuts = [
        marker - 3,
        marker + 10,
        header_end - 1,
        header_end + 5,
        full.index("fetch_offset=1700") + 15,
        full.index(",response:") + 12,
        tail + 3,
    ]
    lines = [full] + [full[:c] for c in cuts]
    (tmp_path / "broker-7").mkdir()
    (tmp_path / "broker-7" / "kafka-request.log").write_text("\n".join(lines) + "\n")
    r = ingest(spark, [str(tmp_path)])
    reasons = sorted((q.line_no, q.reason) for q in r.quarantine.collect())
    assert reasons == [
        (3, "unreadable text request header"),
        (4, "unreadable text request header"),
        (5, "text request line without its connection tail (cut)"),
        (6, "text request line without its connection tail (cut)"),
        (7, "text request line without its connection tail (cut)"),
    ]
    events = sorted((e.line_no, e.seq % 100_000, e.kind, e.partition, e.fetch_offset, e.hwm)
                    for e in r.events.collect())  # fmt: skip
    once = [("fetch_request", 0, 3200, None), ("fetch_request", 1, 1700, None),
            ("fetch_response", 1, None, 2000)]  # fmt: skip
    assert events == [(1, i, *e) for i, e in enumerate(once)] + [
        (8, i, *e) for i, e in enumerate(once)
    ]
    (stats,) = [s.asDict() for s in r.file_stats.collect()]
    assert (stats["lines_read"], stats["lines_parsed"], stats["lines_ignored"],
            stats["lines_quarantined"]) == (8, 2, 1, 5)  # fmt: skip


#: Every text line above that fits in a line (the 2 MB one aside).
VALID_TEXT = BROKER_1[:-1] + BROKER_2 + BROKER_3 + [ALTER_ISR_2_7]
TEXT_REASONS = {
    "unreadable text request header",
    "text request line without its connection tail (cut)",
    "unreadable FETCH text request",
    "unreadable PRODUCE text request",
    "unreadable OFFSET_FOR_LEADER_EPOCH text request",
    "unreadable LEADER_AND_ISR text request",
    "unreadable ALTER_PARTITION text request",
    "request log line without a timestamp",
    "invalid UTF-8",
    # a mutation may turn the text head into something JSON-like
    "bad JSON in Completed request",
}


#: Two draws, each mutating every line of VALID_TEXT at once, through one
#: ingest each: a quick check of this reader's own reasons. The fuzz of every
#: family (300 examples by default, 3000 under -m slow) is test_ingest_fuzz.py.
@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(lines=st.tuples(*[mutated(line) for line in VALID_TEXT]),
       eol=st.sampled_from([b"\n", b"\r\n"]))  # fmt: skip
def test_mutated_text_lines_never_crash_and_account_exactly(
    spark: Any, lines: tuple[bytes, ...], eol: bytes
) -> None:
    from pipeline.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "broker-4").mkdir()
        (Path(tmp) / "broker-4" / "kafka-request.log").write_bytes(eol.join(lines) + eol)
        r = ingest(spark, [tmp], persist=True)
        try:
            (stats,) = r.file_stats.collect()
            reasons = {q.reason for q in r.quarantine.collect()}
            events = r.events.select("line_no", "kind").collect()
        finally:
            r.unpersist()
    assert stats.lines_read == len(VALID_TEXT)
    assert stats.lines_parsed + stats.lines_ignored + stats.lines_quarantined == stats.lines_read
    assert min(stats.lines_parsed, stats.lines_ignored, stats.lines_quarantined) >= 0
    assert reasons <= TEXT_REASONS
    kinds = {"fetch_request", "fetch_response", "produce", "epoch_query", "epoch_answer",
             "leader_and_isr", "alter_partition", "consumer_fetch"}  # fmt: skip
    assert all(1 <= e.line_no <= len(VALID_TEXT) and e.kind in kinds for e in events)
