"""Ingest of the HWM clients saw (formats-addendum.md section 11.1).

A consumer's Fetch answer, a ListOffsets LATEST answer and a consumer's
OffsetsForLeaderEpoch answer, in every request-log form that prints them:
JSON (2.8+: 2.8's names, topic ids from v13, no replica key from v15) and
text (1.0-2.7: the hand-written ``partition_header`` form, 2.7's generated
names). Lines before 1.0 print no answer. Every line is built from the
addendum's templates; values are asserted, cut and garbled lines land in
quarantine with their reason, and read = parsed + ignored + quarantined.

One folder tree, one ingest, shared by the tests; the run compression of
consumer answers (pipeline/reconstruct.py) has its own small frame.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null
from tests.test_ingest_request_log import TOPIC_ID, completed_request, fetch_request
from tests.test_ingest_request_log_text import TAIL_1_1, h0, h1, scala_fetch

pytestmark = pytest.mark.spark

OTHER_ID = "Zk1xw8QpR5yJcT0oN3bGfA"


# --- JSON (2.8+) ------------------------------------------------------------------


def consumer_entry(partition: int, offset: int) -> dict[str, Any]:
    """A consumer's request entry (1.6): no last fetched epoch, log start -1."""
    return {"partition": partition, "currentLeaderEpoch": 7, "fetchOffset": offset,
            "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1048576}  # fmt: skip


def answer(partition: int, hwm: int, start: int = 0, error: int = 0,
           kafka28: bool = False) -> dict[str, Any]:  # fmt: skip
    return {("partition" if kafka28 else "partitionIndex"): partition, "errorCode": error,
            "highWatermark": hwm, "lastStableOffset": hwm, "logStartOffset": start,
            "abortedTransactions": None, "preferredReadReplica": -1,
            ("recordSetSizeInBytes" if kafka28 else "recordsSizeInBytes"): 0}  # fmt: skip


def answered(topics: list[dict[str, Any]]) -> dict[str, Any]:
    return {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": topics}


def at(second: int) -> str:
    return f"2024-05-01 10:00:{second:02d},000"


# 1: Fetch v12 (2.8): topic names, 2.8's partitionResponses / partition; the
#    answer lists the partitions in another order than the request, and one
#    is refused (NOT_LEADER_OR_FOLLOWER: HWM -1)
FETCH_V12 = completed_request(
    1, 12, "consumer-app-1",
    fetch_request([{"topic": "orders", "partitions": [consumer_entry(0, 310),
                                                      consumer_entry(1, 42)]}], replicaId=-1),
    answered([{"topic": "orders", "partitionResponses": [
        answer(1, 50, start=10, kafka28=True), answer(0, -1, start=-1, error=6, kafka28=True)]}]),
    ts=at(1),
)  # fmt: skip
# 2: Fetch v13: topic ids; an incremental answer names a partition the
#    request did not (its position is unknown)
FETCH_V13 = completed_request(
    1, 13, "consumer-app-2",
    fetch_request([{"topicId": TOPIC_ID, "partitions": [consumer_entry(0, 300)]}], replicaId=-1),
    answered([{"topicId": TOPIC_ID, "partitions": [answer(0, 320)]},
              {"topicId": OTHER_ID, "partitions": [answer(3, 7)]}]),
    ts=at(2),
)  # fmt: skip
# 3: Fetch v15: a consumer sends no replica key at all (no replicaState)
FETCH_V15 = completed_request(
    1, 15, "consumer-app-3",
    fetch_request([{"topicId": TOPIC_ID, "partitions": [consumer_entry(0, 320)]}]),
    answered([{"topicId": TOPIC_ID, "partitions": [answer(0, 330)]}]),
    ts=at(3),
)  # fmt: skip
# 4: a debug fetch (replica id -2): ignored by rule
DEBUG_FETCH = FETCH_V13.replace('"replicaId":-1', '"replicaId":-2')


def list_offsets(version: int, replica: int, asked: list[tuple[int, int]],
                 told: list[dict[str, Any]], second: int, name: str = "orders") -> str:  # fmt: skip
    """ListOffsets (addendum 11.1): ``asked`` (partition, timestamp) entries."""
    entries: list[dict[str, Any]] = []
    for p, ts in asked:
        entry: dict[str, Any] = {"partitionIndex": p, "currentLeaderEpoch": 7, "timestamp": ts}
        if version == 0:
            entry = {"partitionIndex": p, "timestamp": ts, "maxNumOffsets": 1}
        entries.append(entry)
    request: dict[str, Any] = {"replicaId": replica, "isolationLevel": 0,
                               "topics": [{"name": "orders", "partitions": entries}]}  # fmt: skip
    if version == 0:
        del request["isolationLevel"]
    response = {"throttleTimeMs": 0, "topics": [{"name": name, "partitions": told}]}
    return completed_request(2, version, "consumer-app-1", request, response, ts=at(second))


# 5: v8: LATEST for partition 0, EARLIEST (-2) for partition 1 (whose answer
#    also says timestamp -1): only the LATEST answer is read
LIST_V8 = list_offsets(8, -1, [(0, -1), (1, -2)], [
    {"partitionIndex": 1, "errorCode": 0, "timestamp": -1, "offset": 5, "leaderEpoch": 7},
    {"partitionIndex": 0, "errorCode": 0, "timestamp": -1, "offset": 330, "leaderEpoch": 7},
], 5)  # fmt: skip
# 6: v0 (deprecated, still answered by 2.8-3.9): the old-style list, HWM first
LIST_V0 = list_offsets(0, -1, [(2, -1)], [
    {"partitionIndex": 2, "errorCode": 0, "oldStyleOffsets": [120]}], 6)  # fmt: skip
# 7: a follower's ListOffsets is answered with the leader's log end: ignored
LIST_FOLLOWER = list_offsets(
    8,
    2,
    [(0, -1)],
    [{"partitionIndex": 0, "errorCode": 0, "timestamp": -1, "offset": 340, "leaderEpoch": 7}],
    7,
)
# 8: only EARLIEST asked: ignored by rule
LIST_EARLIEST = list_offsets(
    8,
    -1,
    [(0, -2)],
    [{"partitionIndex": 0, "errorCode": 0, "timestamp": -1, "offset": 0, "leaderEpoch": 7}],
    8,
)
# 9: an error answer (NOT_LEADER_OR_FOLLOWER): offset -1, epoch -1, kept as sent
LIST_ERROR = list_offsets(
    8,
    -1,
    [(0, -1)],
    [{"partitionIndex": 0, "errorCode": 6, "timestamp": -1, "offset": -1, "leaderEpoch": -1}],
    9,
)
# 10: OffsetsForLeaderEpoch v4 from a consumer (forConsumer: replicaId -1)
EPOCH_V4 = completed_request(
    23, 4, "consumer-app-1",
    {"replicaId": -1, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "currentLeaderEpoch": 8, "leaderEpoch": 7}]}]},
    {"throttleTimeMs": 0, "topics": [{"topic": "orders", "partitions": [
        {"errorCode": 0, "partition": 0, "leaderEpoch": 7, "endOffset": 300}]}]},
    ts=at(10),
)  # fmt: skip

JSON_LINES = [
    FETCH_V12,  # 1 parsed: 2 consumer_fetch
    FETCH_V13,  # 2 parsed: 2 consumer_fetch
    FETCH_V15,  # 3 parsed: 1 consumer_fetch
    DEBUG_FETCH,  # 4 ignored
    LIST_V8,  # 5 parsed: 1 list_offsets
    LIST_V0,  # 6 parsed: 1 list_offsets
    LIST_FOLLOWER,  # 7 ignored
    LIST_EARLIEST,  # 8 ignored
    LIST_ERROR,  # 9 parsed
    EPOCH_V4,  # 10 parsed: 1 consumer_epoch_answer
    FETCH_V13.replace('"highWatermark":320', '"highWatermark":"320x"'),  # 11 garbled
    FETCH_V15[: len(FETCH_V15) // 2],  # 12 cut
    FETCH_V12.replace('"fetchOffset":42,', '"fetchOffset":4.2e,'),  # 13 garbled position
    LIST_V8.replace('"offset":330', '"offset":3x0'),  # 14 garbled
    LIST_V8[: LIST_V8.index('"connection"')],  # 15 cut
    # 16 an answer for a partition not asked: which timestamp it answers is unknown
    LIST_V8.replace('"partitionIndex":0,"errorCode"', '"partitionIndex":4,"errorCode"'),
    EPOCH_V4.replace('"endOffset":300', '"endOffset":30o'),  # 17 garbled
    EPOCH_V4[:300],  # 18 cut
]


# --- text (1.0-2.7) ---------------------------------------------------------------------

#: 2.4-2.6 FetchRequest/FetchResponse.java v11: a consumer's fetch (replica_id=-1),
#: the answer in ``partition_header``.
FETCH_V11 = h1(
    "2020-03-01 10:00:01,000", "FETCH", 11, "consumer-app-1",
    {"replica_id": -1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 52428800,
     "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
         {"topic": "orders", "partitions": [
             {"partition": 0, "current_leader_epoch": 4, "fetch_offset": 90,
              "log_start_offset": -1, "partition_max_bytes": 1048576}]}],
     "forgotten_topics_data": [], "rack_id": ""},
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition_header": {"partition": 0, "error_code": 0, "high_watermark": 120,
                                  "last_stable_offset": 120, "log_start_offset": 5,
                                  "aborted_transactions": None, "preferred_read_replica": -1},
             "record_set": "FileRecords(size=2400, file=/var/lib/kafka/orders-0/"
                           "00000000000000000000.log, start=7200, end=9600)"}]}]},
)  # fmt: skip
#: 2.7 FetchResponse.json v12 (generated): the partition level flat, tagged fields.
FETCH_V12_2_7 = h1(
    "2020-11-02 10:00:02,000", "FETCH", 12, "consumer-app-2",
    {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52428800,
     "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
         {"topic": "orders", "partitions": [
             {"partition": 0, "current_leader_epoch": 4, "fetch_offset": 120,
              "last_fetched_epoch": -1, "log_start_offset": -1,
              "partition_max_bytes": 1048576, "_tagged_fields": {}},
             {"partition": 1, "current_leader_epoch": 4, "fetch_offset": 60,
              "last_fetched_epoch": -1, "log_start_offset": -1,
              "partition_max_bytes": 1048576, "_tagged_fields": {}}],
          "_tagged_fields": {}}],
     "forgotten_topics_data": [], "rack_id": "", "_tagged_fields": {}},
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition": 1, "error_code": 0, "high_watermark": 64, "last_stable_offset": 64,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
             "record_set": "FileRecords(size=0, file=/var/lib/kafka/orders-1/"
                           "00000000000000000000.log, start=0, end=0)", "_tagged_fields": {}}],
         "_tagged_fields": {}}],
     "_tagged_fields": {}},
)  # fmt: skip
#: 1.1 FetchRequest.java v7: ``max_bytes``, the session ``epoch``, no leader epoch.
FETCH_V7 = h1(
    "2018-06-01 08:00:03,000", "FETCH", 7, "consumer-1",
    {"replica_id": -1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 52428800,
     "isolation_level": 0, "session_id": 0, "epoch": -1, "topics": [
         {"topic": "orders", "partitions": [
             {"partition": 2, "fetch_offset": 10, "log_start_offset": -1,
              "max_bytes": 1048576}]}],
     "forgetten_topics_data": []},
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "orders", "partition_responses": [
            {"partition_header": {"partition": 2, "error_code": 0, "high_watermark": 20,
                                  "last_stable_offset": 20, "log_start_offset": 0,
                                  "aborted_transactions": None},
             "record_set": "org.apache.kafka.common.record.FileRecords@1b2c3d4e"}]}]},
    tail=TAIL_1_1,
)  # fmt: skip
#: 2.4 ListOffsetRequest/Response.java v5: leader epochs (v4+).
LIST_V5 = h1(
    "2020-03-01 10:00:04,000", "LIST_OFFSETS", 5, "consumer-app-1",
    {"replica_id": -1, "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "current_leader_epoch": 4, "timestamp": -1},
        {"partition": 1, "current_leader_epoch": 4, "timestamp": 1588320000000}]}]},
    {"throttle_time_ms": 0, "responses": [{"topic": "orders", "partition_responses": [
        {"partition": 0, "error_code": 0, "timestamp": -1, "offset": 120, "leader_epoch": 4},
        {"partition": 1, "error_code": 0, "timestamp": 1588320000100, "offset": 33,
         "leader_epoch": 4}]}]},
)  # fmt: skip
#: 1.1 v2: no leader epoch.
LIST_V2 = h1(
    "2018-06-01 08:00:05,000", "LIST_OFFSETS", 2, "consumer-1",
    {"replica_id": -1, "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
        {"partition": 2, "timestamp": -1}]}]},
    {"throttle_time_ms": 0, "responses": [{"topic": "orders", "partition_responses": [
        {"partition": 2, "error_code": 0, "timestamp": -1, "offset": 20}]}]},
    tail=TAIL_1_1,
)  # fmt: skip
#: 2.7 ListOffsetRequest.json / ListOffsetResponse.json v5 (generated names).
LIST_V5_2_7 = h1(
    "2020-11-02 10:00:06,000", "LIST_OFFSETS", 5, "consumer-app-2",
    {"replica_id": -1, "isolation_level": 1, "topics": [{"name": "orders", "partitions": [
        {"partition_index": 1, "current_leader_epoch": 4, "timestamp": -1}]}]},
    {"throttle_time_ms": 0, "topics": [{"name": "orders", "partitions": [
        {"partition_index": 1, "error_code": 0, "timestamp": -1, "offset": 62,
         "leader_epoch": 4}]}]},
)  # fmt: skip
#: 2.6 v0: ``max_num_offsets`` asked, the ``offsets`` list answered (HWM first).
LIST_V0_TEXT = h1(
    "2020-06-01 10:00:07,000", "LIST_OFFSETS", 0, "legacy-client",
    {"replica_id": -1, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "timestamp": -1, "max_num_offsets": 2}]}]},
    {"responses": [{"topic": "orders", "partition_responses": [
        {"partition": 0, "error_code": 0, "offsets": [118, 0]}]}]},
)  # fmt: skip
#: 2.4 OffsetsForLeaderEpoch v3 from a consumer.
EPOCH_V3 = h1(
    "2020-03-01 10:00:08,000", "OFFSET_FOR_LEADER_EPOCH", 3, "consumer-app-1",
    {"replica_id": -1, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "current_leader_epoch": 5, "leader_epoch": 4}]}]},
    {"throttle_time_ms": 0, "topics": [{"topic": "orders", "partitions": [
        {"error_code": 0, "partition": 0, "leader_epoch": 4, "end_offset": 110}]}]},
)  # fmt: skip
#: 0.11 (``{api_key=...}`` header): no answer printed: nothing to read.
FETCH_0_11 = h0(
    "2017-08-01 09:00:09,000", 1, 5, "consumer-1",
    {"replica_id": -1, "max_wait_time": 500, "min_bytes": 1, "max_bytes": 52428800,
     "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
         {"partition": 0, "fetch_offset": 100, "log_start_offset": -1,
          "max_bytes": 1048576}]}]},
)  # fmt: skip
LIST_0_11 = h0(
    "2017-08-01 09:00:10,000", 2, 2, "consumer-1",
    {"replica_id": -1, "isolation_level": 0, "topics": [{"topic": "orders", "partitions": [
        {"partition": 0, "timestamp": -1}]}]},
)  # fmt: skip

TEXT_LINES = [
    FETCH_V11,  # 1 parsed
    FETCH_V12_2_7,  # 2 parsed: partition 1 only answered
    FETCH_V7,  # 3 parsed
    LIST_V5,  # 4 parsed: the LATEST answer only
    LIST_V2,  # 5 parsed
    LIST_V5_2_7,  # 6 parsed
    LIST_V0_TEXT,  # 7 parsed
    EPOCH_V3,  # 8 parsed
    FETCH_0_11,  # 9 ignored
    LIST_0_11,  # 10 ignored
    FETCH_V11[: FETCH_V11.index(" from connection")],  # 11 cut: no tail
    FETCH_V11.replace("high_watermark=120", "high_watermark=12o"),  # 12 garbled
    LIST_V5.replace("offset=120", "offset=1e2"),  # 13 garbled
    LIST_V2.replace("{replica_id=-1,", "{"),  # 14 no sender
    EPOCH_V3.replace("end_offset=110", "end_offset=11O"),  # 15 garbled
    LIST_V5_2_7.replace("{partition_index=1,error_code", "{partition_index=3,error_code"),  # 16
]


def scala_consumer(ts: str, info: list[tuple[str, int, int]] | None) -> str:
    """0.10.1: a consumer's Scala Fetch (ReplicaId -1), no answer printed."""
    line = scala_fetch(ts, 3, -1, info, max_bytes=True)
    return line.replace("ReplicaFetcherThread-0-1", "consumer-1")


#: 0.10.1 (no answer printed): the consumer's position only.
OLD_LINES = [
    # 1 TRACE details: one position per partition
    scala_consumer("2016-09-01 12:00:00,000", [("orders", 0, 10), ("orders", 1, 7)]),
    # 2 DEBUG: no RequestInfo, no offsets: ignored
    scala_consumer("2016-09-01 12:00:01,000", None),
    # 3 a garbled offset
    scala_consumer("2016-09-01 12:00:02,000", [("orders", 0, 10)]).replace(
        "PartitionFetchInfo(10,", "PartitionFetchInfo(1O,"
    ),
]


@pytest.fixture(scope="module")
def result(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from pipeline.ingest import ingest

    root = tmp_path_factory.mktemp("consumer_answers")
    for broker, name, lines in ((1, "kafka-request.log", JSON_LINES),
                                (2, "kafka-request.log.2020-11-02-10", TEXT_LINES),
                                (3, "kafka-request.log.2016-09-01-12", OLD_LINES)):  # fmt: skip
        folder = root / f"broker-{broker}"
        folder.mkdir()
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = ingest(spark, [str(root)], cluster="c")
    out = {
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": [q.asDict() for q in r.quarantine.collect()],
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }
    r.unpersist()
    return out


def _got(result: dict[str, Any], name: str) -> list[tuple[int, int, dict[str, Any]]]:
    common = frozenset({"cluster", "source_file", "seq", "observer", "event_time", "line_no"})
    return [(e["line_no"], e["seq"] % 100_000, non_null(e, common))
            for e in events_of(result, name)]  # fmt: skip


def test_json_consumer_answers(result: dict[str, Any]) -> None:
    app1 = {"client_id": "consumer-app-1", "replica": -1}
    by_id = {"topic_id": TOPIC_ID, "client_id": "consumer-app-2", "replica": -1}
    assert _got(result, "kafka-request.log") == [
        # 2.8: paired by partition, not by position
        (1, 0, {**app1, "kind": "consumer_fetch", "topic": "orders", "partition": 1,
                "fetch_offset": 42, "hwm": 50, "log_start_offset": 10, "error_code": 0,
                "api_version": 12}),
        (1, 1, {**app1, "kind": "consumer_fetch", "topic": "orders", "partition": 0,
                "fetch_offset": 310, "hwm": -1, "log_start_offset": -1, "error_code": 6,
                "api_version": 12}),
        (2, 0, {**by_id, "kind": "consumer_fetch", "partition": 0, "fetch_offset": 300,
                "hwm": 320, "log_start_offset": 0, "error_code": 0, "api_version": 13}),
        # not asked in this request: position unknown
        (2, 1, {**by_id, "topic_id": OTHER_ID, "kind": "consumer_fetch", "partition": 3,
                "hwm": 7, "log_start_offset": 0, "error_code": 0, "api_version": 13}),
        # v15: no replica key, replica null
        (3, 0, {"topic_id": TOPIC_ID, "client_id": "consumer-app-3", "kind": "consumer_fetch",
                "partition": 0, "fetch_offset": 320, "hwm": 330, "log_start_offset": 0,
                "error_code": 0, "api_version": 15}),
        # the LATEST answer of two (EARLIEST ignored, though it comes first)
        (5, 0, {**app1, "kind": "list_offsets", "topic": "orders", "partition": 0, "hwm": 330,
                "leader_epoch": 7, "error_code": 0, "api_version": 8}),
        (6, 0, {**app1, "kind": "list_offsets", "topic": "orders", "partition": 2, "hwm": 120,
                "error_code": 0, "api_version": 0}),
        (9, 0, {**app1, "kind": "list_offsets", "topic": "orders", "partition": 0, "hwm": -1,
                "leader_epoch": -1, "error_code": 6, "api_version": 8}),
        (10, 0, {**app1, "kind": "consumer_epoch_answer", "topic": "orders", "partition": 0,
                 "leader_epoch": 7, "end_offset": 300, "error_code": 0}),
    ]  # fmt: skip
    times = {e["line_no"]: e["event_time"] for e in events_of(result, "kafka-request.log")}
    assert times[1] == dt.datetime(2024, 5, 1, 10, 0, 1)
    assert times[10] == dt.datetime(2024, 5, 1, 10, 0, 10)
    assert {e["observer"] for e in events_of(result, "kafka-request.log")} == {1}


def test_text_consumer_answers(result: dict[str, Any]) -> None:
    app1 = {"client_id": "consumer-app-1", "replica": -1, "topic": "orders"}
    app2 = {"client_id": "consumer-app-2", "replica": -1, "topic": "orders"}
    old = {"client_id": "consumer-1", "replica": -1, "topic": "orders"}
    assert _got(result, "kafka-request.log.2020-11-02-10") == [
        (1, 0, {**app1, "kind": "consumer_fetch", "partition": 0, "fetch_offset": 90,
                "hwm": 120, "log_start_offset": 5, "error_code": 0, "api_version": 11}),
        (2, 0, {**app2, "kind": "consumer_fetch", "partition": 1, "fetch_offset": 60,
                "hwm": 64, "log_start_offset": 0, "error_code": 0, "api_version": 12}),
        (3, 0, {**old, "kind": "consumer_fetch", "partition": 2, "fetch_offset": 10,
                "hwm": 20, "log_start_offset": 0, "error_code": 0, "api_version": 7}),
        # a timestamp other than LATEST (partition 1) is ignored
        (4, 0, {**app1, "kind": "list_offsets", "partition": 0, "hwm": 120, "leader_epoch": 4,
                "error_code": 0, "api_version": 5}),
        (5, 0, {**old, "kind": "list_offsets", "partition": 2, "hwm": 20, "error_code": 0,
                "api_version": 2}),
        # read_committed: the LSO, never above the HWM
        (6, 0, {**app2, "kind": "list_offsets", "partition": 1, "hwm": 62, "leader_epoch": 4,
                "error_code": 0, "api_version": 5}),
        (7, 0, {"client_id": "legacy-client", "replica": -1, "topic": "orders",
                "kind": "list_offsets", "partition": 0, "hwm": 118, "error_code": 0,
                "api_version": 0}),
        (8, 0, {**app1, "kind": "consumer_epoch_answer", "partition": 0, "leader_epoch": 4,
                "end_offset": 110, "error_code": 0}),
    ]  # fmt: skip
    assert {e["observer"] for e in events_of(result, "kafka-request.log.2020-11-02-10")} == {2}


def test_cut_and_garbled_lines_are_quarantined(result: dict[str, Any]) -> None:
    rows = sorted((Path(q["source_file"]).name, q["line_no"], q["reason"])
                  for q in result["quarantine"])  # fmt: skip
    bad_json = "bad JSON in Completed request"
    text = "kafka-request.log.2020-11-02-10"
    assert rows == [
        ("kafka-request.log", 11, bad_json),
        ("kafka-request.log", 12, bad_json),
        ("kafka-request.log", 13, bad_json),
        ("kafka-request.log", 14, bad_json),
        ("kafka-request.log", 15, bad_json),
        ("kafka-request.log", 16, "unknown LIST_OFFSETS shape"),
        ("kafka-request.log", 17, bad_json),
        ("kafka-request.log", 18, bad_json),
        ("kafka-request.log.2016-09-01-12", 3, "unreadable FETCH text request"),
        (text, 11, "text request line without its connection tail (cut)"),
        (text, 12, "unreadable FETCH text request"),
        (text, 13, "unreadable LIST_OFFSETS text request"),
        (text, 14, "unreadable LIST_OFFSETS text request"),
        (text, 15, "unreadable OFFSET_FOR_LEADER_EPOCH text request"),
        (text, 16, "unreadable LIST_OFFSETS text request"),
    ]
    by_line = {(Path(q["source_file"]).name, q["line_no"]): q["text"] for q in result["quarantine"]}
    assert by_line[("kafka-request.log", 16)] == JSON_LINES[15]
    assert by_line[(text, 12)] == TEXT_LINES[11]


def test_accounting(result: dict[str, Any]) -> None:
    # (kind, observer, read, parsed, ignored, quarantined)
    assert accounting(result["file_stats"]) == {
        "kafka-request.log": ("request_log", 1, 18, 7, 3, 8),
        "kafka-request.log.2020-11-02-10": ("request_log", 2, 16, 8, 2, 6),
        "kafka-request.log.2016-09-01-12": ("request_log", 3, 3, 1, 1, 1),
    }


def test_a_pre_1_0_consumer_fetch_gives_its_position(result: dict[str, Any]) -> None:
    old = {"client_id": "consumer-1", "replica": -1, "topic": "orders",
           "kind": "consumer_position", "api_version": 3}  # fmt: skip
    assert _got(result, "kafka-request.log.2016-09-01-12") == [
        (1, 0, {**old, "partition": 0, "fetch_offset": 10}),
        (1, 1, {**old, "partition": 1, "fetch_offset": 7}),
    ]


# --- run compression (pipeline/reconstruct.py) ----------------------------------------


def test_idle_repeats_keep_the_first_and_last_of_each_run(spark: Any) -> None:
    """Idle consumers see the same answer again and again: only the first and
    the last of each run (same observer, partition, HWM, log start) reach the
    replay, whichever consumer asked; a change of HWM starts a new run."""
    from pipeline.reconstruct import compress, with_topic_key
    from schemas.tables import PARTITION_EVENTS

    names = [f.name for f in PARTITION_EVENTS.fields]

    def row(seq: int, kind: str, hwm: int, observer: int = 1, start: int = 0,
            client: str = "consumer-app-1", error: int = 0) -> tuple[Any, ...]:  # fmt: skip
        values: dict[str, Any] = dict.fromkeys(names)
        values |= {"cluster": "c", "topic": "orders", "partition": 0, "observer": observer,
                   "source_file": "f", "line_no": seq, "seq": seq * 100_000, "kind": kind,
                   "event_time": dt.datetime(2024, 5, 1, 10, 0, seq), "hwm": hwm,
                   "log_start_offset": start, "error_code": error, "replica": -1,
                   "client_id": client, "fetch_offset": hwm}  # fmt: skip
        if kind == "list_offsets":
            values |= {"log_start_offset": None, "fetch_offset": None, "leader_epoch": 7}
        return tuple(values[n] for n in names)

    rows = [
        row(1, "consumer_fetch", 50),
        row(2, "consumer_fetch", 50, client="consumer-app-2"),
        row(3, "consumer_fetch", 50),
        row(4, "consumer_fetch", 50),  # last of the run 1-4
        row(5, "consumer_fetch", 60),
        row(6, "consumer_fetch", 60, start=10),  # log start moved: a new run
        row(7, "consumer_fetch", 60, start=10),
        row(8, "consumer_fetch", 60, start=10),
        row(9, "consumer_fetch", 60, observer=2),  # another broker's answer
        row(10, "list_offsets", 60),
        row(11, "list_offsets", 60),
        row(12, "list_offsets", 60),
        row(13, "list_offsets", 60, error=6),
    ]
    frame = spark.createDataFrame(rows, PARTITION_EVENTS)
    kept = compress(with_topic_key(frame)).select("line_no").collect()
    assert sorted(r.line_no for r in kept) == [1, 4, 5, 6, 8, 9, 10, 12, 13]
