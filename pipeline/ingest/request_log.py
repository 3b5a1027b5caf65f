"""Broker request log (``kafka.request.logger``), kafka-formats.md section 1.

A line is ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL Completed request:{json} (kafka.request.logger)``
(section 1.2; 2.8+ JSON, KIP-673). The JSON's top-level keys come in a fixed
order (``isForwarded``, ``requestHeader``, ``request``, ``response``,
``connection``, ...), and JSON strings cannot hold an unescaped ``"``, so the
header, request and response objects are cut out with ``instr`` and each is
parsed on its own with a minimal schema: the connection/timing tail is never
parsed, and most lines are settled by cheap string tests before any
``from_json`` runs (the budget note in pipeline/ingest/__init__.py).

Three stages, each a DataFrame -> DataFrame step, so that every ``from_json``
is evaluated once per line (see ``pipeline/ingest/__init__.py``):

1. :func:`with_cheap_columns`: timestamps, positions, api key, replica id, and
   a verdict from string tests only;
2. :func:`with_parsed`: ``from_json`` of the header/request/response objects,
   only for candidate lines of the api keys we read;
3. :func:`with_verdict`: the events, or why the line is quarantined.

Columns are prefixed ``rl_`` and are null for lines of other file kinds.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.ingest.outcome import (
    between,
    event,
    or_empty,
    unreadable_reason,
)

KIND = "request_log"

#: Section 1.1: the request logger's message; the JSON follows the colon.
COMPLETED_REQUEST = "Completed request:"
#: The marker sits right after ``[timestamp] LEVEL `` in Kafka's layout
#: (``[%d] %p %m (%c)%n``); looking only at the head of the line keeps the
#: per-line cost flat however long the JSON is. 256 leaves room for custom
#: layouts that add a thread name.
_MARKER_WINDOW = 256
_LOGGER_SUFFIX = " (kafka.request.logger)"

#: Section 1.4.
PRODUCE = 0
FETCH = 1
LEADER_AND_ISR = 4
OFFSET_FOR_LEADER_EPOCH = 23
API_KEY_NAMES: dict[int, str] = {
    PRODUCE: "PRODUCE",
    FETCH: "FETCH",
    LEADER_AND_ISR: "LEADER_AND_ISR",
    OFFSET_FOR_LEADER_EPOCH: "OFFSET_FOR_LEADER_EPOCH",
}

BAD_JSON_REASON = "bad JSON in Completed request"
NO_TIMESTAMP_REASON = "request log line without a timestamp"

# --- minimal from_json schemas (only the fields we read) ---------------------
# Keys are the generated JSON converters' camelCase names (section 0); a key
# that is absent in a version simply parses as null. ``_corrupt_record`` is how
# from_json reports a value it could not read: without it a cut or mistyped
# object would parse as a struct of nulls, indistinguishable from "absent".

_CORRUPT = "_corrupt_record"
JSON_OPTIONS = {"columnNameOfCorruptRecord": _CORRUPT, "mode": "PERMISSIVE"}

#: RequestHeader.json (section 1.2).
REQUEST_HEADER = f"requestApiKey INT, requestApiVersion INT, clientId STRING, {_CORRUPT} STRING"

#: FetchRequest (section 1.6): ``topic`` v0-12 / ``topicId`` v13+.
FETCH_REQUEST = (
    "topics ARRAY<STRUCT<topic: STRING, topicId: STRING, partitions: ARRAY<STRUCT<"
    "partition: INT, currentLeaderEpoch: INT, fetchOffset: BIGINT, lastFetchedEpoch: INT, "
    f"logStartOffset: BIGINT>>>>, {_CORRUPT} STRING"
)

#: FetchResponse (section 1.6). 2.8 spells the partition list ``partitionResponses``,
#: its id ``partition`` and the records size ``recordSetSizeInBytes``; 3.0+
#: ``partitions`` / ``partitionIndex`` / ``recordsSizeInBytes`` (section 1.3).
_FETCH_RESPONSE_PARTITION = (
    "STRUCT<partitionIndex: INT, partition: INT, errorCode: INT, highWatermark: BIGINT, "
    "logStartOffset: BIGINT, divergingEpoch: STRUCT<epoch: INT, endOffset: BIGINT>, "
    "recordsSizeInBytes: BIGINT, recordSetSizeInBytes: BIGINT>"
)
FETCH_RESPONSE = (
    "responses ARRAY<STRUCT<topic: STRING, topicId: STRING, "
    f"partitions: ARRAY<{_FETCH_RESPONSE_PARTITION}>, "
    f"partitionResponses: ARRAY<{_FETCH_RESPONSE_PARTITION}>>>, {_CORRUPT} STRING"
)

#: ProduceRequest (section 1.5): only ``acks``; records are logged as sizes.
PRODUCE_REQUEST = f"acks INT, {_CORRUPT} STRING"

#: ProduceResponse (section 1.5): ``name`` (``topicId`` from v13).
PRODUCE_RESPONSE = (
    "responses ARRAY<STRUCT<name: STRING, topicId: STRING, partitionResponses: ARRAY<STRUCT<"
    f"index: INT, errorCode: INT, baseOffset: BIGINT>>>>, {_CORRUPT} STRING"
)

#: OffsetForLeaderEpochRequest/Response (section 1.7).
OFFSET_FOR_LEADER_EPOCH_REQUEST = (
    "topics ARRAY<STRUCT<topic: STRING, partitions: ARRAY<STRUCT<"
    f"partition: INT, currentLeaderEpoch: INT, leaderEpoch: INT>>>>, {_CORRUPT} STRING"
)
OFFSET_FOR_LEADER_EPOCH_RESPONSE = (
    "topics ARRAY<STRUCT<topic: STRING, partitions: ARRAY<STRUCT<"
    f"errorCode: INT, partition: INT, leaderEpoch: INT, endOffset: BIGINT>>>>, {_CORRUPT} STRING"
)

#: LeaderAndIsrRequest (section 1.9; ZK controller -> broker, 2.8-3.9): the
#: partition states, v0-1 ``ungroupedPartitionStates`` (topicName in each
#: state), v2+ ``topicStates[].partitionStates``; ``zkVersion`` (<= 3.2)
#: renamed ``partitionEpoch`` (3.3+); ``leaderRecoveryState`` v6+ only.
_LEADER_AND_ISR_STATE = (
    "STRUCT<topicName: STRING, partitionIndex: INT, controllerEpoch: INT, leader: INT, "
    "leaderEpoch: INT, isr: ARRAY<INT>, zkVersion: INT, partitionEpoch: INT, "
    "replicas: ARRAY<INT>, leaderRecoveryState: INT>"
)
LEADER_AND_ISR_REQUEST = (
    f"controllerEpoch INT, ungroupedPartitionStates ARRAY<{_LEADER_AND_ISR_STATE}>, "
    f"topicStates ARRAY<STRUCT<topicName: STRING, topicId: STRING, "
    f"partitionStates: ARRAY<{_LEADER_AND_ISR_STATE}>>>, {_CORRUPT} STRING"
)

# --- file recognition --------------------------------------------------------


def completed_request_at(value: Column) -> Column:
    """1-based position of ``Completed request:`` in the head of the line, or 0."""
    return F.instr(F.substring(value, 1, _MARKER_WINDOW), COMPLETED_REQUEST)


def marks_file(value: Column) -> Column:
    """True for a line that says "this file is a request log"."""
    return completed_request_at(value) > 0


def needs_a_look(value: Column) -> Column:
    """Lines of a request log that may be parsed or quarantined beyond the
    checks every recognised file gets. Everything else in a request log is
    another logger's line, a blank or a stack trace: ignored by rule."""
    return marks_file(value)


# --- stage 1: string tests only ----------------------------------------------

_TIMESTAMP = r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\]"


def line_time(value: Column) -> Column:
    """The log4j ``[%d]`` timestamp (ISO8601 with a comma, session time zone UTC)."""
    text = F.regexp_extract(F.substring(value, 1, 32), _TIMESTAMP, 1)
    return F.try_to_timestamp(F.nullif(text, F.lit("")), F.lit("yyyy-MM-dd HH:mm:ss,SSS"))


def _first_int(value: Column, key: str) -> Column:
    """The first ``"key":N`` of the line as an int (null when absent or out of range)."""
    digits = F.regexp_extract(value, f'"{key}":(-?\\d{{1,11}})', 1)
    return F.nullif(digits, F.lit("")).try_cast("int")


def with_cheap_columns(df: DataFrame, is_request_log: Column) -> DataFrame:
    """Stage 1. ``rl_reason`` (quarantine) / ``rl_candidate`` (parse) come from
    string tests alone; a line of a request log with neither is ignored by rule.

    Built as a few consecutive selects so that each test runs once per line
    (Spark does not share a sub-expression across CASE WHEN branches).
    """
    v = F.col("value")
    staged = df.select(
        "*",
        F.when(is_request_log, unreadable_reason(v)).alias("rl_unreadable"),
        # From the head of the line only, so that it dates quarantined lines too.
        F.when(is_request_log, line_time(v)).alias("rl_time"),
    )
    # rl_value: the line, for the lines worth reading; null for all others, so
    # every test below costs nothing on them (and never runs on an over-long
    # line: quarantined unparsed).
    readable = is_request_log & F.col("rl_unreadable").isNull() & marks_file(v)
    staged = staged.select("*", F.when(readable, v).alias("rl_value"))

    r = F.col("rl_value")
    marker_at = completed_request_at(r)
    body_head = F.ltrim(r.substr(marker_at + len(COMPLETED_REQUEST), F.lit(32)))
    staged = staged.select(
        "*",
        body_head.alias("rl_body_head"),
        _first_int(r, "requestApiKey").alias("rl_api_key"),
        # Section 1.2: the top-level keys in order; their positions cut the line.
        F.instr(r, '"requestHeader":').alias("rl_header_at"),
        F.instr(r, ',"request":').alias("rl_request_at"),
        F.instr(r, ',"response":').alias("rl_response_at"),
        F.instr(r, ',"connection":').alias("rl_connection_at"),
    )
    api_key = F.col("rl_api_key")
    uses_replica = api_key.isin(FETCH, OFFSET_FOR_LEADER_EPOCH)
    # Sections 1.6/1.7: followers send replicaId >= 0 (Fetch v0-14 at the top
    # level, v15+ inside the tagged replicaState; OffsetsForLeaderEpoch v3+).
    # Consumers send -1 (from Fetch v15: nothing), -2 is a debug consumer.
    # The first "replicaId" of the line is the request's: the header and the
    # responses have no such key, and JSON strings hold no unescaped '"'.
    staged = staged.select(
        "*", F.when(uses_replica, _first_int(r, "replicaId")).alias("rl_replica_id")
    )

    head = F.col("rl_body_head")
    header_at, request_at = F.col("rl_header_at"), F.col("rl_request_at")
    response_at, connection_at = F.col("rl_response_at"), F.col("rl_connection_at")
    well_formed = (
        (header_at > 0)
        & (request_at > header_at)
        & (response_at > request_at)
        & (connection_at > response_at)
        & (r.endswith("}") | r.endswith("}" + _LOGGER_SUFFIX))
    )
    reason = (
        F.when(F.col("rl_unreadable").isNotNull(), F.col("rl_unreadable"))
        .when(r.isNull(), F.lit(None))  # another logger, a blank, a stack trace
        # <= 2.7 text format (section 1.2), ``RequestHeader(apiKey=..) -- {..}``:
        # at DEBUG the body is a summary without per-partition offsets (a
        # follower FETCH says nothing we read); the TRACE form is not read
        # yet. Ignored by rule, every api key.
        .when(head.startswith("RequestHeader("), F.lit(None))
        .when(~head.startswith("{"), F.lit(BAD_JSON_REASON))
        .when(F.col("rl_time").isNull(), F.lit(NO_TIMESTAMP_REASON))
        .when(api_key.isNull(), F.lit(BAD_JSON_REASON))
        # A cut line (the last line of a file being written, a truncated copy)
        # loses its tail first: quarantine it even for api keys we skip.
        .when(~well_formed, F.lit(BAD_JSON_REASON))
    )
    staged = staged.select("*", reason.alias("rl_reason"))
    candidate = (
        r.isNotNull()
        & F.col("rl_reason").isNull()
        & head.startswith("{")
        & api_key.isin(*API_KEY_NAMES)
        & (~uses_replica | (F.col("rl_replica_id") >= 0))
    )
    staged = staged.select("*", F.coalesce(candidate, F.lit(False)).alias("rl_candidate"))
    c = F.col("rl_candidate")
    return staged.select(
        "*",
        F.when(c, between(r, header_at + len('"requestHeader":'), request_at)).alias(
            "rl_header_text"
        ),
        F.when(c, between(r, request_at + len(',"request":'), response_at)).alias(
            "rl_request_text"
        ),
        F.when(c, between(r, response_at + len(',"response":'), connection_at)).alias(
            "rl_response_text"
        ),
    )


# --- stage 2: from_json -------------------------------------------------------


def _is_object(text: Column) -> Column:
    return text.startswith("{")


def _parse(api_key: int, text: Column, schema: str) -> Column:
    """from_json for candidate lines of ``api_key`` whose object is present.

    ``request``/``response`` are ``""`` (2.8-3.9) or ``null`` (later) when
    absent (section 1.2); those, like every other line, give null here.
    """
    guard = F.col("rl_candidate") & (F.col("rl_api_key") == api_key) & _is_object(text)
    return F.when(guard, F.from_json(text, schema, JSON_OPTIONS))


def with_parsed(df: DataFrame) -> DataFrame:
    """Stage 2: one from_json per object we read, each evaluated only when its
    guard holds (CASE WHEN evaluates the chosen branch only)."""
    req, resp = F.col("rl_request_text"), F.col("rl_response_text")
    return df.select(
        "*",
        F.when(
            F.col("rl_candidate"),
            F.from_json(F.col("rl_header_text"), REQUEST_HEADER, JSON_OPTIONS),
        ).alias("rl_header"),
        _parse(FETCH, req, FETCH_REQUEST).alias("rl_fetch_request"),
        _parse(FETCH, resp, FETCH_RESPONSE).alias("rl_fetch_response"),
        _parse(PRODUCE, req, PRODUCE_REQUEST).alias("rl_produce_request"),
        _parse(PRODUCE, resp, PRODUCE_RESPONSE).alias("rl_produce_response"),
        _parse(OFFSET_FOR_LEADER_EPOCH, req, OFFSET_FOR_LEADER_EPOCH_REQUEST).alias(
            "rl_epoch_request"
        ),
        _parse(LEADER_AND_ISR, req, LEADER_AND_ISR_REQUEST).alias("rl_leader_and_isr_request"),
        _parse(OFFSET_FOR_LEADER_EPOCH, resp, OFFSET_FOR_LEADER_EPOCH_RESPONSE).alias(
            "rl_epoch_response"
        ),
    )


# --- stage 3: events ----------------------------------------------------------


def _per_partition(
    topics: Column, partitions_key: str, make: Callable[[Column, Column], Column]
) -> Column:
    """flatten(topics[].partitions[] -> make(topic, partition)), [] when absent."""
    per_topic = lambda t: F.transform(t[partitions_key], lambda p: make(t, p))  # noqa: E731
    return or_empty(F.flatten(F.transform(topics, per_topic)))


def _fetch_events() -> tuple[Column, Column]:
    """Section 1.6: one fetch_request per requested partition, one
    fetch_response per answered partition; replica = the follower."""
    replica = F.col("rl_replica_id")
    header = F.col("rl_header")
    requests = _per_partition(
        F.col("rl_fetch_request.topics"),
        "partitions",
        lambda t, p: event(
            "fetch_request",
            topic=t["topic"],
            topic_id=t["topicId"],
            partition=p["partition"],
            replica=replica,
            fetch_offset=p["fetchOffset"],
            last_fetched_epoch=p["lastFetchedEpoch"],
            current_leader_epoch=p["currentLeaderEpoch"],
            log_start_offset=p["logStartOffset"],
            api_version=header["requestApiVersion"],
            client_id=header["clientId"],
        ),
    )

    def per_topic(t: Column) -> Column:
        # 3.0+ "partitions", 2.8 "partitionResponses" (section 1.6 rename history).
        parts = F.coalesce(t["partitions"], t["partitionResponses"])
        return F.transform(
            parts,
            lambda p: event(
                "fetch_response",
                topic=t["topic"],
                topic_id=t["topicId"],
                partition=F.coalesce(p["partitionIndex"], p["partition"]),
                replica=replica,
                hwm=p["highWatermark"],
                error_code=p["errorCode"],
                # Tagged (v12+): present only when the follower must truncate.
                diverging_epoch=p["divergingEpoch"]["epoch"],
                diverging_end_offset=p["divergingEpoch"]["endOffset"],
                log_start_offset=p["logStartOffset"],
                records_size=F.coalesce(p["recordsSizeInBytes"], p["recordSetSizeInBytes"]),
                api_version=header["requestApiVersion"],
            ),
        )

    responses = or_empty(F.flatten(F.transform(F.col("rl_fetch_response.responses"), per_topic)))
    return requests, responses


def _produce_events() -> Column:
    """Section 1.5: one produce event per response partition (acks=0 has no
    response, hence no event)."""
    header = F.col("rl_header")
    return _per_partition(
        F.col("rl_produce_response.responses"),
        "partitionResponses",
        lambda t, p: event(
            "produce",
            topic=t["name"],
            topic_id=t["topicId"],
            partition=p["index"],
            acks=F.col("rl_produce_request.acks"),
            base_offset=p["baseOffset"],
            error_code=p["errorCode"],
            client_id=header["clientId"],
            api_version=header["requestApiVersion"],
        ),
    )


def _epoch_events() -> tuple[Column, Column]:
    """Section 1.7: epoch_query per requested partition (requested_epoch =
    leaderEpoch), epoch_answer per answered partition."""
    replica = F.col("rl_replica_id")
    queries = _per_partition(
        F.col("rl_epoch_request.topics"),
        "partitions",
        lambda t, p: event(
            "epoch_query",
            topic=t["topic"],
            partition=p["partition"],
            replica=replica,
            requested_epoch=p["leaderEpoch"],
            current_leader_epoch=p["currentLeaderEpoch"],
        ),
    )
    answers = _per_partition(
        F.col("rl_epoch_response.topics"),
        "partitions",
        lambda t, p: event(
            "epoch_answer",
            topic=t["topic"],
            partition=p["partition"],
            replica=replica,
            leader_epoch=p["leaderEpoch"],
            end_offset=p["endOffset"],
            error_code=p["errorCode"],
        ),
    )
    return queries, answers


def _leader_and_isr_events() -> Column:
    """Section 1.9: one leader_and_isr per partition state the controller sent
    (the broker whose request log it is received it: the observer)."""
    request = F.col("rl_leader_and_isr_request")
    header = F.col("rl_header")

    def state(topic: Column, topic_id: Column | None, p: Column) -> Column:
        lrs = p["leaderRecoveryState"]
        return event(
            "leader_and_isr",
            topic=topic,
            topic_id=topic_id if topic_id is not None else F.lit(None),
            partition=p["partitionIndex"],
            leader=p["leader"],
            leader_epoch=p["leaderEpoch"],
            isr=p["isr"],
            replicas=p["replicas"],
            partition_epoch=F.coalesce(p["partitionEpoch"], p["zkVersion"]),
            leader_recovery_state=F.when(lrs.isin(0, 1), lrs),
            controller_epoch=F.coalesce(request["controllerEpoch"], p["controllerEpoch"]),
            api_version=header["requestApiVersion"],
            client_id=header["clientId"],
        )

    ungrouped = or_empty(
        F.transform(request["ungroupedPartitionStates"], lambda p: state(p["topicName"], None, p))
    )
    grouped = _per_partition(
        request["topicStates"],
        "partitionStates",
        lambda t, p: state(t["topicName"], t["topicId"], p),
    )
    return F.concat(ungrouped, grouped)


def _leader_and_isr_bad_lists() -> Column:
    """A partition state whose isr/replicas hold a value we could not read."""
    request = F.col("rl_leader_and_isr_request")

    def bad(p: Column) -> Column:
        return F.coalesce(
            F.exists(p["isr"], lambda x: x.isNull())
            | F.exists(p["replicas"], lambda x: x.isNull()),
            F.lit(False),
        )

    in_topics = F.exists(request["topicStates"], lambda t: F.exists(t["partitionStates"], bad))
    return F.coalesce(in_topics, F.lit(False)) | F.coalesce(
        F.exists(request["ungroupedPartitionStates"], bad), F.lit(False)
    )


def _unreadable(text_col: str, parsed_col: str) -> Column:
    """The object is present (not ``""``/``null``) but not a JSON object we could read."""
    text = F.col(text_col)
    present = ~text.isin('""', "null")
    return present & (~_is_object(text) | F.col(f"{parsed_col}.{_CORRUPT}").isNotNull())


def with_verdict(df: DataFrame) -> DataFrame:
    """Stage 3: ``rl_events`` (the line's events, maybe none) and
    ``rl_quarantine`` (why the line is quarantined, else null)."""
    api_key = F.col("rl_api_key")
    fetch_requests, fetch_responses = _fetch_events()
    queries, answers = _epoch_events()
    # Requests before responses: seq follows the array position.
    events = (
        F.when(api_key == FETCH, F.concat(fetch_requests, fetch_responses))
        .when(api_key == PRODUCE, _produce_events())
        .when(api_key == OFFSET_FOR_LEADER_EPOCH, F.concat(queries, answers))
        .when(api_key == LEADER_AND_ISR, _leader_and_isr_events())
    )
    staged = df.select("*", F.when(F.col("rl_candidate"), events).alias("rl_events"))

    bad_json = (
        F.col(f"rl_header.{_CORRUPT}").isNotNull()
        | F.when(api_key == FETCH, _unreadable("rl_request_text", "rl_fetch_request"))
        .when(api_key == PRODUCE, _unreadable("rl_request_text", "rl_produce_request"))
        .when(
            api_key == LEADER_AND_ISR,
            _unreadable("rl_request_text", "rl_leader_and_isr_request"),
        )
        .otherwise(_unreadable("rl_request_text", "rl_epoch_request"))
        | F.when(api_key == FETCH, _unreadable("rl_response_text", "rl_fetch_response"))
        .when(api_key == PRODUCE, _unreadable("rl_response_text", "rl_produce_response"))
        # LeaderAndIsr: the response (per-partition error codes) is not read.
        .when(api_key == LEADER_AND_ISR, F.lit(False))
        .otherwise(_unreadable("rl_response_text", "rl_epoch_response"))
        | F.when(api_key == LEADER_AND_ISR, _leader_and_isr_bad_lists()).otherwise(F.lit(False))
    )
    # A partition entry without its id or topic is a shape we do not know
    # (a renamed key in a version we have not seen): never guess.
    unknown_shape = F.exists(
        "rl_events",
        lambda e: e["partition"].isNull() | (e["topic"].isNull() & e["topic_id"].isNull()),
    )
    api_name = (
        F.when(api_key == FETCH, F.lit("FETCH"))
        .when(api_key == PRODUCE, F.lit("PRODUCE"))
        .when(api_key == LEADER_AND_ISR, F.lit("LEADER_AND_ISR"))
        .otherwise(F.lit("OFFSET_FOR_LEADER_EPOCH"))
    )
    quarantine = (
        F.when(F.col("rl_reason").isNotNull(), F.col("rl_reason"))
        .when(~F.col("rl_candidate"), F.lit(None))
        .when(bad_json, F.lit(BAD_JSON_REASON))
        .when(unknown_shape, F.format_string("unknown %s shape", api_name))
    )
    return staged.select("*", quarantine.alias("rl_quarantine"))
