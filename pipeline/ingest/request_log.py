"""Broker request log (``kafka.request.logger``), kafka-formats.md section 1.

A line is ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL Completed request:{desc} (kafka.request.logger)``.

**2.8+ (JSON, KIP-673, section 1.2).** The JSON's top-level keys come in a
fixed order (``isForwarded``, ``requestHeader``, ``request``, ``response``,
``connection``, ...), and JSON strings cannot hold an unescaped ``"``, so the
header, request and response objects are cut out with ``split`` and each is
parsed on its own with a minimal schema: the connection/timing tail is never
parsed, and most lines are settled by cheap string tests before any
``from_json`` runs (the budget note in pipeline/ingest/__init__.py). Api keys
read: PRODUCE, FETCH, LIST_OFFSETS (consumers' only), LEADER_AND_ISR,
OFFSET_FOR_LEADER_EPOCH and ALTER_ISR/ALTER_PARTITION (56; field names per version from
``clients/src/main/resources/common/message/AlterIsrRequest.json`` /
``AlterIsrResponse.json`` @2.7.0 and ``AlterPartitionRequest.json`` /
``AlterPartitionResponse.json`` @3.2.0, @3.3.1, @3.5.0).

**<= 2.7 (text).** Read from apache/kafka at the tags named (``git show
<tag>:<path>``); parsed with string functions only (``instr``/``startswith``
first, then ``regexp_extract`` and ``split``).

* The line (``core/src/main/scala/kafka/network/RequestChannel.scala``):

  - 0.8.2.2: ``Completed request:{describe} from client {addr};totalTime:...``
    (TRACE: ``describe(true)``, else DEBUG ``describe(false)``);
  - 0.9.0.1-0.10.1.1: ``Completed request:{requestDesc} from connection {id};
    totalTime:%d,...,securityProtocol:%s,principal:%s`` (TRACE details, else DEBUG);
  - 0.10.2.2: the same plus ``,listener:%s``, logged only when TRACE is on
    (``requestLogger.trace`` inside ``isDebugEnabled``), always with details;
  - 0.11.0.x: DEBUG, times ``%f``, details when TRACE is on;
  - 1.0.x-2.7.x: ``Completed request:{requestDesc},response:{responseString}
    from connection {id};totalTime:..,...,listener:..[,clientInformation:..]``
    (responseString = ``AbstractResponse.toString(version)`` =
    ``toStruct(version).toString()``, ``clients/.../requests/AbstractResponse.java``).

  ``requestDesc`` is the old Scala ``kafka.api`` object's ``describe(details)``
  when the broker still parsed that api with it (0.8.2/0.9: Produce, Fetch,
  LeaderAndIsr and others, ``core/.../api/RequestKeys.scala``; 0.10.0/0.10.1:
  Fetch only, ``keyToNameAndDeserializerMap`` in RequestChannel.scala), else
  ``{header} -- {body}``.
* Headers: 0.9-0.11 ``RequestHeader`` is a ``Struct`` (``{api_key=1,
  api_version=3,correlation_id=7,client_id=x}``, ``Protocol.REQUEST_HEADER``);
  1.0-2.7 ``RequestHeader(apiKey=FETCH, apiVersion=11, clientId=x,
  correlationId=7)`` (``clients/.../requests/RequestHeader.java``).
* Bodies: ``Struct.toString`` (``clients/.../protocol/types/Struct.java``,
  unchanged 0.9-2.7): ``{name=value,...}``, arrays ``[a,b]``, no spaces;
  ``AbstractRequest.toString(verbose)`` ignores ``verbose`` for every request
  but Produce (0.11-2.7), so FETCH, OffsetsForLeaderEpoch and LeaderAndIsr
  print every partition at DEBUG too. 2.4+ generated messages name fields by
  ``FieldSpec.snakeCaseName`` and end flexible structs with
  ``_tagged_fields={...}`` (``MessageDataGenerator.java`` @2.7.0).

  - FETCH, Scala (``core/.../api/FetchRequest.scala`` @0.8.2.2-0.10.1.1):
    ``Name: FetchRequest; Version: V; CorrelationId: C; ClientId: X; ReplicaId:
    R; MaxWait: W ms; MinBytes: B bytes[; MaxBytes:M bytes (0.10.1)]``, and with
    details ``; RequestInfo: ([topic,0],PartitionFetchInfo(offset,fetchSize)),...``
    (``TopicAndPartition.toString`` = ``[%s,%d]``). Without details there are
    no offsets: ignored by rule.
  - FETCH, Struct (``Protocol.java`` @0.10.2.2, ``FetchRequest.java`` @0.11-2.6,
    ``FetchRequest.json`` @2.7.0): ``{replica_id=R,max_wait_time|max_wait_ms=..,
    ...,topics=[{topic=T,partitions=[{partition=P[,current_leader_epoch=E (v9+)],
    fetch_offset=O[,last_fetched_epoch=L (v12)][,log_start_offset=S (v5+)],
    max_bytes|partition_max_bytes=M...}]}]...}`` (``max_bytes`` and the session
    ``epoch`` up to 2.0, ``partition_max_bytes`` / ``session_epoch`` from 2.1,
    ``FetchRequest.java`` @2.0.1 / @2.1.1). Response (1.0-2.7):
    ``...responses=[{topic=T,partition_responses=[{partition_header={partition=P,
    error_code=E,high_watermark=H,...},record_set=...}]}]`` (2.7 generated: no
    ``partition_header``, and a set DivergingEpoch as ``_tagged_fields={0={epoch=
    E,end_offset=O,...}}``, ``FetchResponse.json`` @2.7.0).
  - PRODUCE: 0.11-2.7 ``ProduceRequest.toString(verbose)`` prints
    ``{acks=A,timeout=T,numPartitions=N}`` (DEBUG) or ``partitionSizes=[..]``;
    the response (1.0-2.7, ``ProduceResponse.java``) ``{responses=[{topic=T,
    partition_responses=[{partition=P,error_code=E,base_offset=B,...}]}]...}``
    gives one produce event per partition. Earlier lines (Scala
    ``ProducerRequest.describe`` 0.8/0.9, Struct 0.10, 0.11) carry no response:
    a request is not an acknowledgement, so they are ignored by rule.
  - OFFSET_FOR_LEADER_EPOCH (0.11+, ``Protocol.java`` @0.11.0.3,
    ``OffsetsForLeaderEpochRequest/Response.java`` @1.1-2.7): request
    ``{[replica_id=R (v3+),]topics=[{topic=T,partitions=[{partition_id|partition=P
    [,current_leader_epoch=C],leader_epoch=E}]}]}``, response (1.0+)
    ``...partitions=[{error_code=X,partition_id|partition=P[,leader_epoch=E],
    end_offset=O}]``. Before v3 the follower is named only by its client id
    ``broker-<id>-fetcher-<n>`` (``ReplicaFetcherBlockingSend``).
  - LEADER_AND_ISR, Struct (``Protocol.java`` @0.10.2.2, ``LeaderAndIsrRequest.java``
    @1.1.1/@2.2.2, ``LeaderAndIsrRequest.json`` @2.7.0): partition states
    ``{[topic|topic_name=T,]partition|partition_index=P,controller_epoch=C,
    leader=L,leader_epoch=E,isr=[..],zk_version=Z,replicas=[..]...}``, the topic
    inside the state (v0-1) or in ``topic_states=[{topic|topic_name=T,
    partition_states=[..]}]`` (v2+). The 0.8/0.9 Scala form is not read.
  - ALTER_ISR (2.7 only; ``AlterIsrRequest.json``/``AlterIsrResponse.json``
    @2.7.0, ``AbstractRequest.toString`` = ``data.toStruct(0).toString()``):
    ``{broker_id=B,broker_epoch=..,topics=[{name=T,partitions=[{partition_index=P,
    leader_epoch=E,new_isr=[..],current_isr_version=V,_tagged_fields={}}],...}``,
    response ``...partitions=[{partition_index=P,error_code=X,leader_id=L,
    leader_epoch=E,isr=[..],current_isr_version=V,...}]``.

**Consumers' answers** (formats-addendum.md 11.1), in both forms: a
consumer's Fetch (replica id -1; none from v15) gives one ``consumer_fetch``
per answered partition (the HWM and log start offset the broker exposed, the
position from the request entry of the same partition); a consumer's
ListOffsets (-1) one ``list_offsets`` per answered partition whose request
entry asked LATEST (-1; other timestamps ignored by rule, an answer for a
partition not asked quarantined); a consumer's OffsetsForLeaderEpoch (-1 or
-2) one ``consumer_epoch_answer`` per answered partition. A follower's
ListOffsets (answered with the log end) and a debug Fetch (-2) are ignored
by rule. Text lines before 1.0 print no answer: a consumer's Scala Fetch
(0.8.2-0.10.1, with details) gives one ``consumer_position`` per partition
(its fetch offset, client id), the answer's HWM unknown; run-length
compression keeps each run's ends (pipeline/reconstruct.py ``SERIES_FIELDS``)
and the replay reads the advances (replay/transitions.py
``_client_position``). A consumer's Fetch in the Struct form of 0.10.2 and
0.11, answer not printed either, yields nothing yet.

A text line of a shape we know but cannot read (no connection tail: cut; a
header that does not parse; a partition entry whose numbers are malformed or
out of range) is quarantined. The same event kinds and columns as the JSON
path come out, with ``api_version`` from the header.

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

from pipeline import sqltext as F
from pipeline.ingest.outcome import (
    between,
    event,
    long_substr,
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
LIST_OFFSETS = 2
LEADER_AND_ISR = 4
OFFSET_FOR_LEADER_EPOCH = 23
#: ALTER_ISR (2.7-3.1) / ALTER_PARTITION (3.2+), section 1.8.
ALTER_PARTITION = 56
API_KEY_NAMES: dict[int, str] = {
    PRODUCE: "PRODUCE",
    FETCH: "FETCH",
    LIST_OFFSETS: "LIST_OFFSETS",
    LEADER_AND_ISR: "LEADER_AND_ISR",
    OFFSET_FOR_LEADER_EPOCH: "OFFSET_FOR_LEADER_EPOCH",
    ALTER_PARTITION: "ALTER_PARTITION",
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

#: ListOffsetsRequest/Response (formats-addendum.md 11.1; ``ListOffsetsRequest.json``
#: / ``ListOffsetsResponse.json`` 2.8+): ``timestamp`` per requested partition
#: (-1 LATEST); the answer's ``offset`` (v1+) or ``oldStyleOffsets`` (v0, the
#: HWM first for a consumer's LATEST), ``leaderEpoch`` v4+. The answer's own
#: ``timestamp`` is -1 for EARLIEST too: only the request says which was asked.
LIST_OFFSETS_REQUEST = (
    "topics ARRAY<STRUCT<name: STRING, partitions: ARRAY<STRUCT<"
    f"partitionIndex: INT, timestamp: BIGINT>>>>, {_CORRUPT} STRING"
)
LIST_OFFSETS_RESPONSE = (
    "topics ARRAY<STRUCT<name: STRING, partitions: ARRAY<STRUCT<"
    "partitionIndex: INT, errorCode: INT, oldStyleOffsets: ARRAY<BIGINT>, offset: BIGINT, "
    f"leaderEpoch: INT>>>>, {_CORRUPT} STRING"
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

#: AlterIsr (2.7-3.1, v0: ``name``, ``currentIsrVersion``) / AlterPartition
#: (3.2+: v0-1 ``name`` (3.2) or ``topicName`` (3.3+), v2+ ``topicId``,
#: ``partitionEpoch``, v1+ ``leaderRecoveryState``, v3+ ``newIsrWithEpochs``
#: instead of ``newIsr``); section 1.8.
ALTER_PARTITION_REQUEST = (
    "brokerId INT, topics ARRAY<STRUCT<name: STRING, topicName: STRING, topicId: STRING, "
    "partitions: ARRAY<STRUCT<partitionIndex: INT, leaderEpoch: INT, newIsr: ARRAY<INT>, "
    "newIsrWithEpochs: ARRAY<STRUCT<brokerId: INT>>, leaderRecoveryState: INT, "
    f"partitionEpoch: INT, currentIsrVersion: INT>>>>, {_CORRUPT} STRING"
)
ALTER_PARTITION_RESPONSE = (
    "topics ARRAY<STRUCT<name: STRING, topicName: STRING, topicId: STRING, "
    "partitions: ARRAY<STRUCT<partitionIndex: INT, errorCode: INT, leaderId: INT, "
    "leaderEpoch: INT, isr: ARRAY<INT>, leaderRecoveryState: INT, partitionEpoch: INT, "
    f"currentIsrVersion: INT>>>>, {_CORRUPT} STRING"
)

# --- file recognition --------------------------------------------------------


def completed_request_at(value: Column) -> Column:
    """1-based position of ``Completed request:`` in the head of the line, or 0."""
    return F.instr(F.substring(value, 1, _MARKER_WINDOW), COMPLETED_REQUEST)


def marks_file(value: Column) -> Column:
    """True for a line that says "this file is a request log"."""
    return completed_request_at(value) > 0


def marks_line(line: str) -> bool:
    """A line that says "this file is a request log" (``sniff.classify``)."""
    return COMPLETED_REQUEST in line[:_MARKER_WINDOW]


def needs_a_look(value: Column) -> Column:
    """Lines of a request log that may be parsed or quarantined beyond the
    checks every recognised file gets. Everything else in a request log is
    another logger's line, a blank or a stack trace: ignored by rule."""
    return marks_file(value)


# --- <= 2.7 text lines (see the module docstring for the formats) -------------

#: ``rl_text_form`` values: the header shape that opens the request description.
TEXT_H1 = "h1"  # 1.0-2.7 ``RequestHeader(apiKey=FETCH, ...) -- {...},response:{...}``
TEXT_H0 = "h0"  # 0.9-0.11 ``{api_key=1,api_version=3,...} -- {...}``
TEXT_SCALA = "scala"  # 0.8-0.10.1 ``Name: FetchRequest; Version: ...``

TEXT_HEADER_REASON = "unreadable text request header"
TEXT_CUT_REASON = "text request line without its connection tail (cut)"

#: ``ApiKeys`` enum names (1.0+ headers) and old Scala class names (0.8-0.10.1)
#: of the api keys read from text lines.
_TEXT_API_NAMES: dict[str, int] = {
    "PRODUCE": PRODUCE,
    "FETCH": FETCH,
    "LIST_OFFSETS": LIST_OFFSETS,
    "LEADER_AND_ISR": LEADER_AND_ISR,
    "OFFSET_FOR_LEADER_EPOCH": OFFSET_FOR_LEADER_EPOCH,
    "ALTER_ISR": ALTER_PARTITION,
    "ProducerRequest": PRODUCE,
    "FetchRequest": FETCH,
    "LeaderAndIsrRequest": LEADER_AND_ISR,
}

_INT = r"(-?\d{1,11})"
_LONG = r"(-?\d{1,20})"
#: A value read from a Struct text ends at its field's end: a garbled number
#: (``12o``) is unreadable, never read as its digits.
_END = r"(?=[,}])"
_TEXT_HEADERS: dict[str, tuple[str, tuple[int, int, int]]] = {
    # form: (regex, group of (api key or name, api version, client id))
    TEXT_H1: (
        r"Completed request:\s*RequestHeader\(apiKey=([A-Za-z_]+), apiVersion=(-?\d{1,6}), "
        r"clientId=(.*?), correlationId=-?\d{1,11}\) -- ",
        (1, 2, 3),
    ),
    TEXT_H0: (
        r"Completed request:\s*\{api_key=(-?\d{1,6}),api_version=(-?\d{1,6}),"
        r"correlation_id=-?\d{1,11},client_id=(.*?)\} -- ",
        (1, 2, 3),
    ),
    TEXT_SCALA: (
        r"Completed request:\s*Name: ([A-Za-z]+); Version: (-?\d{1,6}); "
        r"CorrelationId: -?\d{1,11}; ClientId: (.*?); ",
        (1, 2, 3),
    ),
}


def text_form(head: Column) -> Column:
    """Which <= 2.7 shape the description after ``Completed request:`` has, or null."""
    return (
        F.when(head.startswith("RequestHeader("), F.lit(TEXT_H1))
        .when(head.startswith("{api_key="), F.lit(TEXT_H0))
        .when(head.startswith("Name: "), F.lit(TEXT_SCALA))
    )


def _groups(text: Column, pattern: str) -> Callable[[int, str], Column]:
    """``g(i, dtype)``: group ``i`` of ``pattern`` in ``text`` (:func:`_num`)."""

    def group(i: int, dtype: str) -> Column:
        return _num(text, pattern, i, dtype)

    return group


def _text_opener_cut(head: Column) -> Column:
    """``head`` is a non-empty proper beginning of a text header's opener
    (``RequestHe``, ``Name``): a text line cut inside its header."""
    return (head != "") & (
        F.lit("RequestHeader(").startswith(head) | F.lit("Name: ").startswith(head)
    )


def _num(text: Column, pattern: str, group: int, dtype: str) -> Column:
    """A regex group as ``dtype``; null when it did not take part or is out of range."""
    return F.nullif(F.regexp_extract(text, pattern, group), F.lit("")).try_cast(dtype)


def text_header_match(r: Column, form: Column) -> Column:
    """The header as the form's regex matched it (``""`` when it does not):
    the one regex over the whole line; the fields come from this short text."""
    out = F.regexp_extract(r, _TEXT_HEADERS[TEXT_SCALA][0], 0)
    for name in (TEXT_H0, TEXT_H1):
        out = F.when(form == name, F.regexp_extract(r, _TEXT_HEADERS[name][0], 0)).otherwise(out)
    return out


def _text_header(r: Column, form: Column, match: Column) -> Column:
    """struct(api_key, api_version, client_id, body_at) from the header
    ``match``: api_key -1 for an api not read, null when the header cannot be
    read; body_at is the 1-based position right after the header (and, in
    the Scala form, ``ClientId``)."""

    def one(name: str) -> Column:
        pattern, (g_key, g_version, g_client) = _TEXT_HEADERS[name]
        key_text = F.regexp_extract(match, pattern, g_key)
        if name == TEXT_H0:
            api_key = F.nullif(key_text, F.lit("")).try_cast("int")
        else:
            api_key = F.lit(-1)
            for key_name, key in _TEXT_API_NAMES.items():
                api_key = F.when(key_text == key_name, F.lit(key)).otherwise(api_key)
        return F.struct(
            api_key.alias("api_key"),
            _num(match, pattern, g_version, "int").alias("api_version"),
            F.regexp_extract(match, pattern, g_client).alias("client_id"),
        )

    fields = (
        F.when(form == TEXT_H1, one(TEXT_H1))
        .when(form == TEXT_H0, one(TEXT_H0))
        .otherwise(one(TEXT_SCALA))
    )
    return F.when(
        match != "",
        F.struct(
            fields["api_key"].alias("api_key"),
            fields["api_version"].alias("api_version"),
            fields["client_id"].alias("client_id"),
            (F.instr(r, match) + F.length(match)).alias("body_at"),
        ),
    )


def _locate_from(r: Column, needle: str, start: Column) -> Column:
    """1-based position of ``needle`` in ``r`` at or after ``start``, else 0."""
    found = F.instr(long_substr(r, start), needle)
    return F.when(found > 0, found + start - 1).otherwise(F.lit(0))


def text_positions(r: Column, header: Column) -> Column:
    """struct(connection, client, response_at): where `` from connection ``,
    `` from client `` (0.8) and ``,response:`` first occur after the header
    (0 when absent). Each string is searched once per line here."""
    body_at = header["body_at"]
    return F.struct(
        _locate_from(r, " from connection ", body_at).alias("connection"),
        _locate_from(r, " from client ", body_at).alias("client"),
        _locate_from(r, ",response:", body_at).alias("response_at"),
    )


def _text_parts(r: Column, form: Column, header: Column, positions: Column) -> Column:
    """struct(request, response, tail_at): the request body, the response
    string (1.0-2.7 only) and where the ``from connection`` tail starts
    (null when the line has none: cut)."""
    body_at = header["body_at"]
    tail_at = F.coalesce(
        F.nullif(positions["connection"], F.lit(0)), F.nullif(positions["client"], F.lit(0))
    )
    response_at = positions["response_at"]
    has_response = (form == TEXT_H1) & (response_at > 0) & (response_at < tail_at)
    request_end = F.when(form == TEXT_H1, F.when(has_response, response_at)).otherwise(tail_at)
    return F.struct(
        between(r, body_at, request_end).alias("request"),
        F.when(has_response, between(r, response_at + len(",response:"), tail_at)).alias(
            "response"
        ),
        F.when(form == TEXT_H1, F.when(has_response, tail_at)).otherwise(tail_at).alias("tail_at"),
    )


def _text_replica_id() -> Column:
    """The follower that sent a FETCH / OffsetsForLeaderEpoch text request.

    Struct forms: ``replica_id`` first (Fetch all versions; OffsetsForLeaderEpoch
    v3+); Scala Fetch: ``ReplicaId: N``. OffsetsForLeaderEpoch v0-2 carries no
    replica id: a follower's client id is ``broker-<id>-fetcher-<n>``
    (ReplicaFetcherBlockingSend, 0.11-2.7); anything else is not a follower.
    """
    request = F.col("rl_tparts.request")
    struct_id = _num(request, r"^\{replica_id=" + _INT + ",", 1, "int")
    scala_id = _num(request, r"^ReplicaId: " + _INT + "; ", 1, "int")
    client_id = _num(F.col("rl_theader.client_id"), r"^broker-(\d{1,10})-fetcher-\d+$", 1, "int")
    return (
        F.when(F.col("rl_text_form") == TEXT_SCALA, scala_id)
        .when(F.col("rl_api_key").isin(FETCH, LIST_OFFSETS), struct_id)
        .otherwise(F.coalesce(struct_id, client_id))
    )


def _text_reason() -> Column:
    """Why a text line is quarantined, or null (parse it or ignore it)."""
    api_key = F.col("rl_api_key")
    return (
        F.when(F.col("rl_time").isNull(), F.lit(NO_TIMESTAMP_REASON))
        .when(
            api_key.isNull() | F.col("rl_theader.api_version").isNull(),
            F.lit(TEXT_HEADER_REASON),
        )
        # A cut line loses its tail first: quarantine it even for api keys we skip.
        .when(F.col("rl_tparts.tail_at").isNull(), F.lit(TEXT_CUT_REASON))
        .when(
            (api_key == FETCH) & F.col("rl_replica_id").isNull(),
            F.lit("unreadable FETCH text request"),
        )
        .when(
            (api_key == LIST_OFFSETS)
            & (F.col("rl_text_form") == TEXT_H1)
            & F.col("rl_replica_id").isNull(),
            F.lit("unreadable LIST_OFFSETS text request"),
        )
    )


def _text_readable() -> Column:
    """A text line whose shape carries what we read (else: ignored by rule).

    FETCH: the Scala summary (DEBUG) form has no ``RequestInfo``, no offsets.
    PRODUCE: only 1.0-2.7 lines carry the response (base offset, error); an
    earlier line is a request, not an acknowledgement. OffsetsForLeaderEpoch:
    0.11+ (no Scala form). LeaderAndIsr: the Struct forms (0.10-2.7); the
    0.8/0.9 Scala ``describe`` form is not read. ListOffsets: only 1.0-2.7
    lines carry the answer (addendum 11.1). A consumer's Fetch before 1.0
    carries no answer either: with details it gives the consumer's position
    only (``consumer_position``, :func:`_text_events`).
    """
    api_key, form = F.col("rl_api_key"), F.col("rl_text_form")
    request = F.col("rl_tparts.request")
    return (
        F.when(
            api_key == FETCH,
            (form != TEXT_SCALA) | (F.instr(request, "; RequestInfo: ") > 0),
        )
        .when(api_key == PRODUCE, form == TEXT_H1)
        .when(api_key.isin(OFFSET_FOR_LEADER_EPOCH, LEADER_AND_ISR), form != TEXT_SCALA)
        .when(api_key.isin(ALTER_PARTITION, LIST_OFFSETS), form == TEXT_H1)
        .otherwise(F.lit(False))
    )


#: Struct.toString pieces: one per topic (``{topic=NAME,partition...``), then
#: one per partition entry; 1.0-2.6 Fetch responses nest the partition id in
#: ``partition_header={partition=N,...}``, 0.11/1.0 OffsetsForLeaderEpoch name
#: it ``partition_id``.
_TOPIC_SEP = r"\{topic="
_TOPIC_NAME = r"^([^,{}\[\]=]+),partition"
_PARTITION_SEP = r"\{(?:partition_header=\{)?partition(?:_id)?=(?=-?\d)"
_ERROR_FIRST_SEP = r"\{error_code=(?=-?\d)"


def _after_first(text: Column, sep: str) -> Column:
    """split(text, sep) without the part before the first separator."""
    return F.filter(F.split(text, sep), lambda _, i: i > 0)


def _text_per_partition(
    text: Column, partition_sep: str, make: Callable[[Column, Column], Column]
) -> Column:
    """flatten(topic pieces -> partition pieces -> make(topic, piece)), [] when absent."""

    def per_topic(piece: Column) -> Column:
        topic = F.nullif(F.regexp_extract(piece, _TOPIC_NAME, 1), F.lit(""))
        return F.transform(_after_first(piece, partition_sep), lambda p: make(topic, p))

    return or_empty(F.flatten(F.transform(_after_first(text, _TOPIC_SEP), per_topic)))


#: A Fetch request partition after ``{partition=``: v9+ current_leader_epoch,
#: v12 last_fetched_epoch, v5+ log_start_offset; the partition's max bytes is
#: ``max_bytes`` (<= 2.0) or ``partition_max_bytes`` (2.1+).
_FETCH_PARTITION = (
    rf"^{_INT}(?:,current_leader_epoch={_INT})?,fetch_offset={_LONG}"
    rf"(?:,last_fetched_epoch={_INT})?(?:,log_start_offset={_LONG})?,(?:partition_)?max_bytes="
)
#: A Fetch response partition: ``partition=N,error_code=E,high_watermark=H``;
#: 2.7 v12 puts a set DivergingEpoch (tag 0) in ``_tagged_fields``.
_FETCH_RESPONSE_PARTITION = (
    rf"^{_INT},error_code={_INT},high_watermark={_LONG}{_END}"
    rf"(?:,last_stable_offset=-?\d+)?(?:,log_start_offset={_LONG}{_END})?"
)
_DIVERGING = rf"_tagged_fields=\{{0=\{{epoch={_INT},end_offset={_LONG}"
#: Scala ``RequestInfo`` entry after ``([``: ``orders,0],PartitionFetchInfo(3200,1048576))``.
_SCALA_FETCH_ENTRY = (
    r"^([^,\[\]]+),(-?\d{1,11})\],PartitionFetchInfo\((-?\d{1,20}),(-?\d{1,11})\)\)"
)
_PRODUCE_RESPONSE_PARTITION = rf"^{_INT},error_code={_INT},base_offset={_LONG}"
_EPOCH_QUERY_PARTITION = rf"^{_INT}(?:,current_leader_epoch={_INT})?,leader_epoch={_INT}"
_EPOCH_ANSWER_PARTITION = (
    rf"^{_INT},partition(?:_id)?={_INT}(?:,leader_epoch={_INT})?,end_offset={_LONG}{_END}"
)


#: A LeaderAndIsr partition state (0.10-2.3 hand-written ``topic``/``partition``,
#: 2.4-2.7 generated ``topic_name``/``partition_index``; the topic is in the
#: state in v0-1, in its ``topic_states`` group from v2).
_LAI_LIST = r"\[((?:-?\d{1,11}(?:,-?\d{1,11})*)?)\]"
_LAI_STATE = (
    r"^(?:topic(?:_name)?=([^,{}\[\]=]+),)?partition(?:_index)?=(\d{1,11}),"
    rf"controller_epoch={_INT},leader={_INT},leader_epoch={_INT},isr={_LAI_LIST},"
    rf"zk_version={_INT},replicas={_LAI_LIST}"
)
_LAI_GROUP_SEP = r"\{topic(?:_name)?=(?=[^,{}\[\]=]+,partition_states=\[)"
_LAI_GROUPED_STATE_SEP = r"\{(?=partition(?:_index)?=-?\d)"
_LAI_UNGROUPED_STATE_SEP = r"\{(?=topic(?:_name)?=[^,{}\[\]=]+,partition(?:_index)?=-?\d)"


def _int_list(text: Column) -> Column:
    """``1,2,3`` -> [1, 2, 3], ``""`` -> []; null when an entry is out of range."""
    items = F.transform(F.split(text, ","), lambda x: x.try_cast("int"))
    items = F.when(text == "", F.array().cast("array<int>")).otherwise(items)
    return F.when(~F.exists(items, lambda x: x.isNull()), items)


def _text_leader_and_isr() -> Column:
    """Section 1.9 from a Struct-form LeaderAndIsr request: one leader_and_isr
    per partition state, as the JSON path (partition_epoch = zk_version)."""
    request = F.col("rl_tparts.request")
    controller_epoch = _num(request, r"^\{controller_id=-?\d+,controller_epoch=" + _INT, 1, "int")

    def state(topic: Column, p: Column) -> Column:
        g = _groups(p, _LAI_STATE)
        matched = F.regexp_extract(p, _LAI_STATE, 0) != ""
        return event(
            "leader_and_isr",
            topic=topic,
            partition=g(2, "int"),
            leader=g(4, "int"),
            leader_epoch=g(5, "int"),
            isr=F.when(matched, _int_list(F.regexp_extract(p, _LAI_STATE, 6))),
            replicas=F.when(matched, _int_list(F.regexp_extract(p, _LAI_STATE, 8))),
            partition_epoch=g(7, "int"),
            controller_epoch=F.coalesce(controller_epoch, g(3, "int")),
            api_version=F.col("rl_theader.api_version"),
            client_id=F.col("rl_theader.client_id"),
        )

    def per_group(piece: Column) -> Column:
        topic = F.nullif(
            F.regexp_extract(piece, r"^([^,{}\[\]=]+),partition_states=", 1), F.lit("")
        )
        return F.transform(_after_first(piece, _LAI_GROUPED_STATE_SEP), lambda p: state(topic, p))

    grouped = or_empty(F.flatten(F.transform(_after_first(request, _LAI_GROUP_SEP), per_group)))
    ungrouped = or_empty(
        F.transform(
            _after_first(request, _LAI_UNGROUPED_STATE_SEP),
            lambda p: state(F.nullif(F.regexp_extract(p, _LAI_STATE, 1), F.lit("")), p),
        )
    )
    return F.concat(ungrouped, grouped)


#: AlterIsr v0 (2.7 only as text; ``AlterIsrRequest.json`` /
#: ``AlterIsrResponse.json`` @2.7.0, generated names): ``{broker_id=B,
#: broker_epoch=..,topics=[{name=T,partitions=[{partition_index=P,...}]}]}``.
_ALTER_ISR_TOPIC_SEP = r"\{name=(?=[^,{}\[\]=]+,partitions=\[)"
_ALTER_ISR_PARTITION_SEP = r"\{(?=partition_index=-?\d)"
_ALTER_ISR_PROPOSAL = (
    rf"^partition_index=(\d{{1,11}}),leader_epoch={_INT},new_isr={_LAI_LIST},"
    rf"current_isr_version={_INT}"
)
_ALTER_ISR_ANSWER = (
    rf"^partition_index=(\d{{1,11}}),error_code={_INT},leader_id={_INT},leader_epoch={_INT},"
    rf"isr={_LAI_LIST},current_isr_version={_INT}"
)


def _text_alter_isr() -> Column:
    """Section 1.8 from a 2.7 AlterIsr text line: proposals, then answers,
    as the JSON path."""
    request, response = F.col("rl_tparts.request"), F.col("rl_tparts.response")
    sender = _num(request, r"^\{broker_id=" + _INT + ",", 1, "int")
    version = F.col("rl_theader.api_version")
    client_id = F.col("rl_theader.client_id")

    def per_partition(text: Column, make: Callable[[Column, Column], Column]) -> Column:
        def per_topic(piece: Column) -> Column:
            name = F.regexp_extract(piece, r"^([^,{}\[\]=]+),partitions=", 1)
            parts = _after_first(piece, _ALTER_ISR_PARTITION_SEP)
            return F.transform(parts, lambda p: make(F.nullif(name, F.lit("")), p))

        topics = _after_first(text, _ALTER_ISR_TOPIC_SEP)
        return or_empty(F.flatten(F.transform(topics, per_topic)))

    def proposal(topic: Column, p: Column) -> Column:
        g = _groups(p, _ALTER_ISR_PROPOSAL)
        matched = F.regexp_extract(p, _ALTER_ISR_PROPOSAL, 0) != ""
        return event(
            "alter_partition",
            topic=topic,
            partition=g(1, "int"),
            replica=sender,
            leader_epoch=g(2, "int"),
            isr=F.when(matched, _int_list(F.regexp_extract(p, _ALTER_ISR_PROPOSAL, 3))),
            partition_epoch=g(4, "int"),
            api_version=version,
            client_id=client_id,
        )

    def answer(topic: Column, p: Column) -> Column:
        g = _groups(p, _ALTER_ISR_ANSWER)
        matched = F.regexp_extract(p, _ALTER_ISR_ANSWER, 0) != ""
        return event(
            "alter_partition",
            topic=topic,
            partition=g(1, "int"),
            replica=sender,
            error_code=g(2, "int"),
            leader=g(3, "int"),
            leader_epoch=g(4, "int"),
            isr=F.when(matched, _int_list(F.regexp_extract(p, _ALTER_ISR_ANSWER, 5))),
            partition_epoch=g(6, "int"),
            api_version=version,
            client_id=client_id,
        )

    return F.concat(per_partition(request, proposal), per_partition(response, answer))


#: ListOffsets text (addendum 11.1): <= 2.6 ``topics=[{topic=T,partitions=[{partition=P,
#: [current_leader_epoch=C,]timestamp=S[,max_num_offsets=N]}]}]`` and the answer
#: ``responses=[{topic=T,partition_responses=[{partition=P,error_code=E,
#: timestamp=S,offset=O[,leader_epoch=L]}]}]`` (v0: ``offsets=[O,...]``); 2.7
#: (generated) ``topics=[{name=T,partitions=[{partition_index=P,...`` both ways,
#: v0's list named ``old_style_offsets``.
_LIST_TOPIC_SEP = r"\{(?:topic|name)="
_LIST_PARTITION_SEP = r"\{partition(?:_index)?=(?=-?\d)"
_LIST_ASKED = rf"^{_INT}(?:,current_leader_epoch=-?\d{{1,11}})?,timestamp={_LONG}"
_LIST_ANSWER = (
    rf"^{_INT},error_code={_INT}(?:,(?:old_style_)?offsets=\[{_LONG}?[-\d,]*\])?"
    rf"(?:,timestamp=-?\d{{1,20}})?(?:,offset={_LONG}{_END})?(?:,leader_epoch={_INT}{_END})?"
)


def _text_flat(text: Column, topic_sep: str, partition_sep: str) -> Column:
    """[struct(topic, piece)]: every partition piece of a Struct text with its
    topic name (null when the text is)."""

    def per_topic(piece: Column) -> Column:
        topic = F.nullif(F.regexp_extract(piece, _TOPIC_NAME, 1), F.lit(""))
        return F.transform(
            _after_first(piece, partition_sep),
            lambda p: F.struct(topic.alias("topic"), p.alias("piece")),
        )

    return F.flatten(F.transform(_after_first(text, topic_sep), per_topic))


def _text_asked() -> Column:
    """``rl_asked`` of a consumer's Fetch or ListOffsets text line."""
    request = F.col("rl_tparts.request")
    fetch = F.transform(
        _text_flat(request, _TOPIC_SEP, _PARTITION_SEP),
        lambda x: _asked(
            x["topic"],
            _num(x["piece"], _FETCH_PARTITION, 1, "int"),
            _num(x["piece"], _FETCH_PARTITION, 3, "bigint"),
        ),
    )
    listed = F.transform(
        _text_flat(request, _LIST_TOPIC_SEP, _LIST_PARTITION_SEP),
        lambda x: _asked(
            x["topic"],
            _num(x["piece"], _LIST_ASKED, 1, "int"),
            _num(x["piece"], _LIST_ASKED, 2, "bigint"),
        ),
    )
    return F.when(F.col("rl_api_key") == FETCH, fetch).otherwise(listed)


def _text_listed() -> Column:
    """Per answered ListOffsets partition of a text line: what was asked, and
    its event (as :func:`_json_listed`)."""
    response = F.col("rl_tparts.response")

    def make(x: Column, j: Column) -> Column:
        g = _groups(x["piece"], _LIST_ANSWER)
        partition = g(1, "int")
        asked = asked_at(F.col("rl_asked"), x["topic"], partition, j)
        ev = event(
            "list_offsets",
            topic=x["topic"],
            partition=partition,
            hwm=F.coalesce(g(4, "bigint"), g(3, "bigint")),
            leader_epoch=g(5, "int"),
            error_code=g(2, "int"),
            replica=F.col("rl_replica_id"),
            client_id=F.col("rl_theader.client_id"),
            api_version=F.col("rl_theader.api_version"),
        )
        return F.struct(asked.alias("asked"), ev.alias("event"))

    return F.transform(_text_flat(response, _LIST_TOPIC_SEP, _LIST_PARTITION_SEP), make)


def _text_consumer_fetches() -> Column:
    """One consumer_fetch per answered partition of a consumer's text Fetch
    (1.0-2.7; earlier lines carry no answer: none)."""
    response = F.col("rl_tparts.response")

    def make(x: Column, j: Column) -> Column:
        g = _groups(x["piece"], _FETCH_RESPONSE_PARTITION)
        partition = g(1, "int")
        asked = asked_at(F.col("rl_asked"), x["topic"], partition, j)
        return event(
            "consumer_fetch",
            topic=x["topic"],
            partition=partition,
            fetch_offset=asked["value"],
            hwm=g(3, "bigint"),
            log_start_offset=g(4, "bigint"),
            error_code=g(2, "int"),
            replica=F.col("rl_replica_id"),
            client_id=F.col("rl_theader.client_id"),
            api_version=F.col("rl_theader.api_version"),
        )

    return or_empty(F.transform(_text_flat(response, _TOPIC_SEP, _PARTITION_SEP), make))


def _text_events() -> Column:
    """The events of a text line (stage 3), requests before responses."""
    api_key, form = F.col("rl_api_key"), F.col("rl_text_form")
    request, response = F.col("rl_tparts.request"), F.col("rl_tparts.response")
    replica = F.col("rl_replica_id")
    version = F.col("rl_theader.api_version")
    client_id = F.col("rl_theader.client_id")

    def fetch_request(topic: Column, p: Column) -> Column:
        g = _groups(p, _FETCH_PARTITION)
        return event(
            "fetch_request",
            topic=topic,
            partition=g(1, "int"),
            replica=replica,
            fetch_offset=g(3, "bigint"),
            last_fetched_epoch=g(4, "int"),
            current_leader_epoch=g(2, "int"),
            log_start_offset=g(5, "bigint"),
            api_version=version,
            client_id=client_id,
        )

    def scala_fetch_entry(kind: str) -> Callable[[Column], Column]:
        """A Scala ``RequestInfo`` entry: a follower's ``fetch_request`` or,
        from a consumer, its ``consumer_position`` (the same fields)."""

        def make(p: Column) -> Column:
            g = _groups(p, _SCALA_FETCH_ENTRY)
            return event(
                kind,
                topic=F.nullif(F.regexp_extract(p, _SCALA_FETCH_ENTRY, 1), F.lit("")),
                partition=g(2, "int"),
                replica=replica,
                fetch_offset=g(3, "bigint"),
                api_version=version,
                client_id=client_id,
            )

        return make

    def fetch_response(topic: Column, p: Column) -> Column:
        g = _groups(p, _FETCH_RESPONSE_PARTITION)
        return event(
            "fetch_response",
            topic=topic,
            partition=g(1, "int"),
            replica=replica,
            hwm=g(3, "bigint"),
            error_code=g(2, "int"),
            diverging_epoch=_num(p, _DIVERGING, 1, "int"),
            diverging_end_offset=_num(p, _DIVERGING, 2, "bigint"),
            log_start_offset=g(4, "bigint"),
            api_version=version,
        )

    def produce(topic: Column, p: Column) -> Column:
        g = _groups(p, _PRODUCE_RESPONSE_PARTITION)
        return event(
            "produce",
            topic=topic,
            partition=g(1, "int"),
            acks=_num(request, r"^\{acks=" + _INT + ",", 1, "int"),
            base_offset=g(3, "bigint"),
            error_code=g(2, "int"),
            client_id=client_id,
            api_version=version,
        )

    def epoch_query(topic: Column, p: Column) -> Column:
        g = _groups(p, _EPOCH_QUERY_PARTITION)
        return event(
            "epoch_query",
            topic=topic,
            partition=g(1, "int"),
            replica=replica,
            requested_epoch=g(3, "int"),
            current_leader_epoch=g(2, "int"),
        )

    def epoch_answer(topic: Column, p: Column) -> Column:
        g = _groups(p, _EPOCH_ANSWER_PARTITION)
        return event(
            "epoch_answer",
            topic=topic,
            partition=g(2, "int"),
            replica=replica,
            leader_epoch=g(3, "int"),
            end_offset=g(4, "bigint"),
            error_code=g(1, "int"),
        )

    def consumer_epoch_answer(topic: Column, p: Column) -> Column:
        g = _groups(p, _EPOCH_ANSWER_PARTITION)
        return event(
            "consumer_epoch_answer",
            topic=topic,
            partition=g(2, "int"),
            replica=replica,
            leader_epoch=g(3, "int"),
            end_offset=g(4, "bigint"),
            error_code=g(1, "int"),
            client_id=client_id,
        )

    scala_info = F.substring_index(request, "; RequestInfo: ", -1)
    scala_entries = _after_first(scala_info, r"\(\[")
    scala_fetches = or_empty(F.transform(scala_entries, scala_fetch_entry("fetch_request")))
    scala_positions = or_empty(F.transform(scala_entries, scala_fetch_entry("consumer_position")))
    fetches = F.concat(
        _text_per_partition(request, _PARTITION_SEP, fetch_request),
        _text_per_partition(response, _PARTITION_SEP, fetch_response),
    )
    from_consumer = consumer(api_key, replica)
    return (
        F.when((api_key == FETCH) & from_consumer & (form == TEXT_SCALA), scala_positions)
        .when((api_key == FETCH) & from_consumer, _text_consumer_fetches())
        .when((api_key == FETCH) & (form == TEXT_SCALA), scala_fetches)
        .when(api_key == FETCH, fetches)
        .when(api_key == PRODUCE, _text_per_partition(response, _PARTITION_SEP, produce))
        .when(api_key == LIST_OFFSETS, _latest(F.col("rl_listed")))
        .when(
            (api_key == OFFSET_FOR_LEADER_EPOCH) & from_consumer,
            _text_per_partition(response, _ERROR_FIRST_SEP, consumer_epoch_answer),
        )
        .when(
            api_key == OFFSET_FOR_LEADER_EPOCH,
            F.concat(
                _text_per_partition(request, _PARTITION_SEP, epoch_query),
                _text_per_partition(response, _ERROR_FIRST_SEP, epoch_answer),
            ),
        )
        .when(api_key == LEADER_AND_ISR, _text_leader_and_isr())
        .when(api_key == ALTER_PARTITION, _text_alter_isr())
    )


def _text_unreadable() -> Column:
    """A text line we read with a partition entry we could not: a field the
    version always prints came out null (cut, malformed or out of range)."""

    def bad(e: Column) -> Column:
        kind = e["kind"]
        missing = e["partition"].isNull() | e["topic"].isNull()
        return missing | F.coalesce(
            F.when(kind.isin("fetch_request", "consumer_position"), e["fetch_offset"].isNull())
            .when(kind == "fetch_response", e["hwm"].isNull() | e["error_code"].isNull())
            .when(
                kind == "produce",
                e["acks"].isNull() | e["base_offset"].isNull() | e["error_code"].isNull(),
            )
            .when(kind == "epoch_query", e["requested_epoch"].isNull())
            .when(
                kind.isin("epoch_answer", "consumer_epoch_answer"),
                e["end_offset"].isNull() | e["error_code"].isNull(),
            )
            .when(kind == "consumer_fetch", e["hwm"].isNull() | e["error_code"].isNull())
            # v0 answers an error with no offset at all
            .when(
                kind == "list_offsets",
                e["error_code"].isNull() | (e["hwm"].isNull() & (e["error_code"] == 0)),
            )
            .when(
                kind == "leader_and_isr",
                e["leader"].isNull()
                | e["leader_epoch"].isNull()
                | e["isr"].isNull()
                | e["replicas"].isNull()
                | e["partition_epoch"].isNull(),
            )
            .when(
                kind == "alter_partition",
                e["replica"].isNull()
                | e["leader_epoch"].isNull()
                | e["isr"].isNull()
                | e["partition_epoch"].isNull()
                | (e["leader"].isNotNull() & e["error_code"].isNull()),
            ),
            F.lit(False),
        )

    return F.exists("rl_events", bad) | _unasked(F.col("rl_listed"))


# --- stage 1: string tests only ----------------------------------------------

_TIMESTAMP = r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\]"


def line_time(value: Column) -> Column:
    """The log4j ``[%d]`` timestamp (ISO8601 with a comma, session time zone UTC)."""
    text = F.regexp_extract(F.substring(value, 1, 32), _TIMESTAMP, 1)
    return F.try_to_timestamp(F.nullif(text, F.lit("")), F.lit("yyyy-MM-dd HH:mm:ss,SSS"))


def first_int(value: Column, key: str) -> Column:
    """The first ``"key":N`` of the line as an int (null when absent or out of range)."""
    digits = F.regexp_extract(value, f'"{key}":(-?\\d{{1,11}})', 1)
    return F.nullif(digits, F.lit("")).try_cast("int")


def consumer(api_key: Column, replica: Column) -> Column:
    """The request came from a consumer (addendum 11.1): a Fetch with replica
    id -1 or none (v15+: no ``replicaState``), a ListOffsets with -1, an
    OffsetsForLeaderEpoch with -1 or -2 (``forConsumer``; -2 the v3+ default).
    A ListOffsets of -2 (debug) is answered with the log end, not the HWM."""
    return (
        F.when(api_key == FETCH, replica.isNull() | (replica == -1))
        .when(api_key == LIST_OFFSETS, F.coalesce(replica == -1, F.lit(False)))
        .when(api_key == OFFSET_FOR_LEADER_EPOCH, F.coalesce(replica.isin(-1, -2), F.lit(False)))
        .otherwise(F.lit(False))
    )


def read_from(api_key: Column, replica: Column) -> Column:
    """The lines of ``api_key`` read, by sender: every line of the api keys
    that name none; a follower's (replica id >= 0) Fetch or
    OffsetsForLeaderEpoch; a consumer's Fetch, ListOffsets or
    OffsetsForLeaderEpoch (:func:`consumer`). Others (a follower's ListOffsets,
    a debug Fetch) are ignored by rule."""
    follower = api_key.isin(FETCH, OFFSET_FOR_LEADER_EPOCH) & F.coalesce(replica >= 0, F.lit(False))
    named = api_key.isin(FETCH, OFFSET_FOR_LEADER_EPOCH, LIST_OFFSETS)
    return ~named | follower | consumer(api_key, replica)


def with_cheap_columns(df: DataFrame, is_request_log: Column) -> DataFrame:
    """Stage 1. ``rl_reason`` (quarantine) / ``rl_candidate`` (parse a JSON
    line) / ``rl_tcandidate`` (parse a <= 2.7 text line) come from string
    tests alone; a line of a request log with none is ignored by rule.

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
    staged = staged.select("*", body_head.alias("rl_body_head"))
    head = F.col("rl_body_head")
    staged = staged.select("*", text_form(head).alias("rl_text_form"))
    is_text = F.col("rl_text_form").isNotNull()
    # Section 1.2: the top-level keys in order cut the line into the header,
    # request and response texts. Each cut splits what lies before the next
    # key's first occurrence at its own first occurrence: a key missing, or
    # out of order, leaves a piece without its second half (null). Split
    # searches the line as a Java string (Boyer-Moore over the characters);
    # Spark's instr/locate/substring walk it character by character from
    # its start, once per key and per cut, and on a 7 KB follower fetch
    # line the cuts cost three times as much (docs/performance.md).
    staged = staged.select(
        "*",
        F.when(~is_text, first_int(r, "requestApiKey")).alias("rl_json_api_key"),
        F.when(~is_text, F.split(r, ',"connection":', 2)).alias("rl_to_connection"),
        F.when(is_text, text_header_match(r, F.col("rl_text_form"))).alias("rl_theader_match"),
    )
    for key, before, cut in (
        (',"response":', "rl_to_connection", "rl_to_response"),
        (',"request":', "rl_to_response", "rl_to_request"),
        ('"requestHeader":', "rl_to_request", "rl_to_header"),
    ):
        staged = staged.select("*", F.split(F.get(F.col(before), 0), key, 2).alias(cut))
    staged = staged.select(
        "*",
        F.when(is_text, _text_header(r, F.col("rl_text_form"), F.col("rl_theader_match"))).alias(
            "rl_theader"
        ),
    )
    staged = staged.select(
        "*",
        F.coalesce(F.col("rl_json_api_key"), F.col("rl_theader.api_key")).alias("rl_api_key"),
    )
    api_key = F.col("rl_api_key")
    uses_replica = api_key.isin(FETCH, OFFSET_FOR_LEADER_EPOCH, LIST_OFFSETS)
    # Sections 1.6/1.7: followers send replicaId >= 0 (Fetch v0-14 at the top
    # level, v15+ inside the tagged replicaState; OffsetsForLeaderEpoch v3+).
    # Consumers send -1 (from Fetch v15: nothing), -2 is a debug consumer.
    # ListOffsets (addendum 11.1) always names its sender first.
    # The first "replicaId" of the line is the request's: the header and the
    # responses have no such key, and JSON strings hold no unescaped '"'.
    staged = staged.select(
        "*",
        F.when(uses_replica & ~is_text, first_int(r, "replicaId")).alias("rl_json_replica_id"),
        F.when(is_text, text_positions(r, F.col("rl_theader"))).alias("rl_tpositions"),
    )
    staged = staged.select(
        "*",
        F.when(
            is_text,
            _text_parts(r, F.col("rl_text_form"), F.col("rl_theader"), F.col("rl_tpositions")),
        ).alias("rl_tparts"),
    )
    staged = staged.select(
        "*",
        F.coalesce(
            F.col("rl_json_replica_id"),
            F.when(uses_replica & is_text, _text_replica_id()),
        ).alias("rl_replica_id"),
    )

    header_text = F.get(F.col("rl_to_header"), 1)
    request_text = F.get(F.col("rl_to_request"), 1)
    response_text = F.get(F.col("rl_to_response"), 1)
    well_formed = (
        (F.size(F.col("rl_to_connection")) == 2)
        & response_text.isNotNull()
        & request_text.isNotNull()
        & header_text.isNotNull()
        & (r.endswith("}") | r.endswith("}" + _LOGGER_SUFFIX))
    )
    reason = (
        F.when(F.col("rl_unreadable").isNotNull(), F.col("rl_unreadable"))
        .when(r.isNull(), F.lit(None))  # another logger, a blank, a stack trace
        .when(is_text, _text_reason())
        # A text header cut before its first field: still a text line.
        .when(_text_opener_cut(head), F.lit(TEXT_HEADER_REASON))
        .when(~head.startswith("{"), F.lit(BAD_JSON_REASON))
        .when(F.col("rl_time").isNull(), F.lit(NO_TIMESTAMP_REASON))
        .when(api_key.isNull(), F.lit(BAD_JSON_REASON))
        # A cut line (the last line of a file being written, a truncated copy)
        # loses its tail first: quarantine it even for api keys we skip.
        .when(~well_formed, F.lit(BAD_JSON_REASON))
    )
    staged = staged.select("*", reason.alias("rl_reason"))
    wanted = F.coalesce(read_from(api_key, F.col("rl_replica_id")), F.lit(False))
    candidate = (
        r.isNotNull()
        & F.col("rl_reason").isNull()
        & ~is_text
        & head.startswith("{")
        & api_key.isin(*API_KEY_NAMES)
        & wanted
    )
    text_candidate = (
        r.isNotNull() & F.col("rl_reason").isNull() & is_text & _text_readable() & wanted
    )
    staged = staged.select(
        "*",
        F.coalesce(candidate, F.lit(False)).alias("rl_candidate"),
        F.coalesce(text_candidate, F.lit(False)).alias("rl_tcandidate"),
    )
    c = F.col("rl_candidate")
    return staged.select(
        "*",
        F.when(c, header_text).alias("rl_header_text"),
        F.when(c, request_text).alias("rl_request_text"),
        F.when(c, response_text).alias("rl_response_text"),
    ).drop("rl_to_connection", "rl_to_response", "rl_to_request", "rl_to_header")


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
        _parse(ALTER_PARTITION, req, ALTER_PARTITION_REQUEST).alias("rl_alter_request"),
        _parse(ALTER_PARTITION, resp, ALTER_PARTITION_RESPONSE).alias("rl_alter_response"),
        _parse(LIST_OFFSETS, req, LIST_OFFSETS_REQUEST).alias("rl_list_request"),
        _parse(LIST_OFFSETS, resp, LIST_OFFSETS_RESPONSE).alias("rl_list_response"),
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


def _alter_partition_events() -> Column:
    """Section 1.8: one alter_partition per request partition (the leader's
    proposal: replica = the sending broker, leader_epoch, isr, partition_epoch,
    leader_recovery_state; error_code and leader null), then one per response
    partition (the controller's answer: error_code, leader, leader_epoch, isr,
    partition_epoch, leader_recovery_state; replica = the same sender).

    Per version: AlterIsr (2.7-3.1) names the topic ``name`` and the partition
    epoch ``currentIsrVersion``; AlterPartition 3.2 ``name`` / 3.3+ ``topicName``
    (v0-1) or ``topicId`` (v2+), ``partitionEpoch``; v3+ proposes
    ``newIsrWithEpochs[].brokerId`` instead of ``newIsr``; ``leaderRecoveryState``
    from v1 (null before: the version has no such field).
    """
    request, response = F.col("rl_alter_request"), F.col("rl_alter_response")
    header = F.col("rl_header")
    sender = request["brokerId"]

    def topic(t: Column) -> Column:
        return F.coalesce(t["topicName"], t["name"])

    def recovery(p: Column) -> Column:
        lrs = p["leaderRecoveryState"]
        return F.when(lrs.isin(0, 1), lrs)

    proposals = _per_partition(
        request["topics"],
        "partitions",
        lambda t, p: event(
            "alter_partition",
            topic=topic(t),
            topic_id=t["topicId"],
            partition=p["partitionIndex"],
            replica=sender,
            leader_epoch=p["leaderEpoch"],
            isr=F.coalesce(
                p["newIsr"], F.transform(p["newIsrWithEpochs"], lambda b: b["brokerId"])
            ),
            partition_epoch=F.coalesce(p["partitionEpoch"], p["currentIsrVersion"]),
            leader_recovery_state=recovery(p),
            api_version=header["requestApiVersion"],
            client_id=header["clientId"],
        ),
    )
    answers = _per_partition(
        response["topics"],
        "partitions",
        lambda t, p: event(
            "alter_partition",
            topic=topic(t),
            topic_id=t["topicId"],
            partition=p["partitionIndex"],
            replica=sender,
            error_code=p["errorCode"],
            leader=p["leaderId"],
            leader_epoch=p["leaderEpoch"],
            isr=p["isr"],
            partition_epoch=F.coalesce(p["partitionEpoch"], p["currentIsrVersion"]),
            leader_recovery_state=recovery(p),
            api_version=header["requestApiVersion"],
            client_id=header["clientId"],
        ),
    )
    return F.concat(proposals, answers)


def _alter_partition_bad_lists() -> Column:
    """A newIsr / isr holding a value we could not read (as LeaderAndIsr)."""
    request, response = F.col("rl_alter_request"), F.col("rl_alter_response")

    def has_null(key: str) -> Callable[[Column], Column]:
        return lambda p: F.coalesce(F.exists(p[key], lambda x: x.isNull()), F.lit(False))

    in_request = F.exists(
        request["topics"], lambda t: F.exists(t["partitions"], has_null("newIsr"))
    )
    in_response = F.exists(response["topics"], lambda t: F.exists(t["partitions"], has_null("isr")))
    return F.coalesce(in_request, F.lit(False)) | F.coalesce(in_response, F.lit(False))


def _alter_partition_unknown_shape() -> Column:
    """A proposal without its sender, leader epoch or ISR (v3: an entry
    without its ``brokerId``), or an answer without its error code: a shape
    we do not know, never guessed."""
    request, response = F.col("rl_alter_request"), F.col("rl_alter_response")

    def bad_proposal(p: Column) -> Column:
        with_epochs = F.transform(p["newIsrWithEpochs"], lambda b: b["brokerId"])
        isr = F.coalesce(p["newIsr"], with_epochs)
        return (
            isr.isNull()
            | F.exists(isr, lambda x: x.isNull())
            | p["leaderEpoch"].isNull()
            | request["brokerId"].isNull()
        )

    def bad_answer(p: Column) -> Column:
        return p["errorCode"].isNull() | p["leaderEpoch"].isNull() | p["isr"].isNull()

    in_request = F.exists(request["topics"], lambda t: F.exists(t["partitions"], bad_proposal))
    in_response = F.exists(response["topics"], lambda t: F.exists(t["partitions"], bad_answer))
    return F.coalesce(in_request, F.lit(False)) | F.coalesce(in_response, F.lit(False))


# --- consumers' answers (formats-addendum.md 11.1) -----------------------------
#
# A consumer's Fetch answer carries the HWM (and log start offset) the
# answering broker exposed, and its position is in the request entry of the
# same partition; a ListOffsets answer is LATEST only if its request entry
# asked timestamp -1. Both pair each answered partition with the request
# entry of the same (topic, partition): ``rl_asked`` holds the request's
# entries once per line, and each answer looks at the entry at its own index
# first (a full request is answered in its order), then searches.

#: One request entry: its topic (name, or id from Fetch v13), partition, and
#: the value the answer needs (the fetch offset; ListOffsets: the timestamp).
ASKED = "array<struct<key: string, partition: int, value: bigint>>"
#: ListOffsets' LATEST timestamp.
LATEST = -1


def asked_at(asked: Column, key: Column, partition: Column, index: Column) -> Column:
    """The entry of ``asked`` for (``key``, ``partition``): the one at the
    answer's own 0-based ``index`` when it matches, else the first that does;
    null when none does."""

    def same(a: Column) -> Column:
        return (a["key"] == key) & (a["partition"] == partition)

    here = F.try_element_at(asked, index + 1)
    return F.when(F.coalesce(same(here), F.lit(False)), here).otherwise(
        F.try_element_at(F.filter(asked, same), F.lit(1))
    )


def _asked(key: Column, partition: Column, value: Column) -> Column:
    return F.struct(
        key.alias("key"),
        partition.cast("int").alias("partition"),
        value.cast("bigint").alias("value"),
    )


def _flat(topics: Column, parts: Callable[[Column], Column]) -> Column:
    """[struct(t, p)]: every partition entry of ``topics`` with its topic."""
    return F.flatten(
        F.transform(
            topics, lambda t: F.transform(parts(t), lambda p: F.struct(t.alias("t"), p.alias("p")))
        )
    )


def _json_asked() -> Column:
    """``rl_asked`` of a JSON line (Fetch: fetchOffset; ListOffsets: timestamp)."""
    fetch = _flat(F.col("rl_fetch_request.topics"), lambda t: t["partitions"])
    listed = _flat(F.col("rl_list_request.topics"), lambda t: t["partitions"])
    return F.when(
        F.col("rl_api_key") == FETCH,
        F.transform(
            fetch,
            lambda x: _asked(
                F.coalesce(x["t"]["topic"], x["t"]["topicId"]),
                x["p"]["partition"],
                x["p"]["fetchOffset"],
            ),
        ),
    ).when(
        F.col("rl_api_key") == LIST_OFFSETS,
        F.transform(
            listed,
            lambda x: _asked(x["t"]["name"], x["p"]["partitionIndex"], x["p"]["timestamp"]),
        ),
    )


def _consumer_fetch_events() -> Column:
    """One consumer_fetch per answered partition of a consumer's Fetch."""
    header = F.col("rl_header")
    flat = _flat(
        F.col("rl_fetch_response.responses"),
        lambda t: F.coalesce(t["partitions"], t["partitionResponses"]),
    )

    def make(x: Column, j: Column) -> Column:
        t, p = x["t"], x["p"]
        partition = F.coalesce(p["partitionIndex"], p["partition"])
        asked = asked_at(F.col("rl_asked"), F.coalesce(t["topic"], t["topicId"]), partition, j)
        return event(
            "consumer_fetch",
            topic=t["topic"],
            topic_id=t["topicId"],
            partition=partition,
            fetch_offset=asked["value"],
            hwm=p["highWatermark"],
            log_start_offset=p["logStartOffset"],
            error_code=p["errorCode"],
            replica=F.col("rl_replica_id"),
            client_id=header["clientId"],
            api_version=header["requestApiVersion"],
        )

    return or_empty(F.transform(flat, make))


def _json_listed() -> Column:
    """Per answered ListOffsets partition: what was asked, and its event."""
    header = F.col("rl_header")
    flat = _flat(F.col("rl_list_response.topics"), lambda t: t["partitions"])

    def make(x: Column, j: Column) -> Column:
        t, p = x["t"], x["p"]
        asked = asked_at(F.col("rl_asked"), t["name"], p["partitionIndex"], j)
        ev = event(
            "list_offsets",
            topic=t["name"],
            partition=p["partitionIndex"],
            hwm=F.coalesce(p["offset"], F.try_element_at(p["oldStyleOffsets"], F.lit(1))),
            leader_epoch=p["leaderEpoch"],
            error_code=p["errorCode"],
            replica=F.col("rl_replica_id"),
            client_id=header["clientId"],
            api_version=header["requestApiVersion"],
        )
        return F.struct(asked.alias("asked"), ev.alias("event"))

    return F.transform(flat, make)


def _latest(listed: Column) -> Column:
    """The list_offsets events of the LATEST answers; other timestamps are
    ignored by rule."""
    latest = F.filter(listed, lambda x: F.coalesce(x["asked"]["value"] == LATEST, F.lit(False)))
    return or_empty(F.transform(latest, lambda x: x["event"]))


def _unasked(listed: Column) -> Column:
    """A ListOffsets answer for a partition the request did not ask: which
    timestamp it answers is unknown (never guessed)."""
    return F.coalesce(F.exists(listed, lambda x: x["asked"].isNull()), F.lit(False))


def _consumer_epoch_events() -> Column:
    """One consumer_epoch_answer per answered partition (the leader's end
    offset for the epoch asked; for its current epoch, its LEO)."""
    header = F.col("rl_header")
    return _per_partition(
        F.col("rl_epoch_response.topics"),
        "partitions",
        lambda t, p: event(
            "consumer_epoch_answer",
            topic=t["topic"],
            partition=p["partition"],
            replica=F.col("rl_replica_id"),
            leader_epoch=p["leaderEpoch"],
            end_offset=p["endOffset"],
            error_code=p["errorCode"],
            client_id=header["clientId"],
        ),
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
    from_consumer = consumer(api_key, F.col("rl_replica_id"))
    # Consumers' request entries and ListOffsets answers, once per line (the
    # events below look into them per answered partition).
    pairs = api_key.isin(FETCH, LIST_OFFSETS) & from_consumer
    df = df.select(
        "*",
        F.when(pairs & F.col("rl_candidate"), _json_asked())
        .when(pairs & F.col("rl_tcandidate"), _text_asked())
        .alias("rl_asked"),
    )
    listed = api_key == LIST_OFFSETS
    df = df.select(
        "*",
        F.when(listed & F.col("rl_candidate"), _json_listed())
        .when(listed & F.col("rl_tcandidate"), _text_listed())
        .alias("rl_listed"),
    )
    fetch_requests, fetch_responses = _fetch_events()
    queries, answers = _epoch_events()
    # Requests before responses: seq follows the array position.
    events = (
        F.when((api_key == FETCH) & from_consumer, _consumer_fetch_events())
        .when(api_key == FETCH, F.concat(fetch_requests, fetch_responses))
        .when(api_key == PRODUCE, _produce_events())
        .when(api_key == LIST_OFFSETS, _latest(F.col("rl_listed")))
        .when((api_key == OFFSET_FOR_LEADER_EPOCH) & from_consumer, _consumer_epoch_events())
        .when(api_key == OFFSET_FOR_LEADER_EPOCH, F.concat(queries, answers))
        .when(api_key == LEADER_AND_ISR, _leader_and_isr_events())
        .when(api_key == ALTER_PARTITION, _alter_partition_events())
    )
    staged = df.select(
        "*",
        F.when(F.col("rl_candidate"), events)
        .when(F.col("rl_tcandidate"), _text_events())
        .alias("rl_events"),
    )

    def by_api(**per_api: Column) -> Column:
        out = F.lit(False)
        for name, check in per_api.items():
            out = F.when(api_key == getattr(_Api, name), check).otherwise(out)
        return out

    bad_json = (
        F.col(f"rl_header.{_CORRUPT}").isNotNull()
        | by_api(
            FETCH=_unreadable("rl_request_text", "rl_fetch_request"),
            PRODUCE=_unreadable("rl_request_text", "rl_produce_request"),
            LEADER_AND_ISR=_unreadable("rl_request_text", "rl_leader_and_isr_request"),
            OFFSET_FOR_LEADER_EPOCH=_unreadable("rl_request_text", "rl_epoch_request"),
            ALTER_PARTITION=_unreadable("rl_request_text", "rl_alter_request"),
            LIST_OFFSETS=_unreadable("rl_request_text", "rl_list_request"),
        )
        | by_api(
            FETCH=_unreadable("rl_response_text", "rl_fetch_response"),
            PRODUCE=_unreadable("rl_response_text", "rl_produce_response"),
            # LeaderAndIsr: the response (per-partition error codes) is not read.
            OFFSET_FOR_LEADER_EPOCH=_unreadable("rl_response_text", "rl_epoch_response"),
            ALTER_PARTITION=_unreadable("rl_response_text", "rl_alter_response"),
            LIST_OFFSETS=_unreadable("rl_response_text", "rl_list_response"),
        )
        | by_api(
            LEADER_AND_ISR=_leader_and_isr_bad_lists(),
            ALTER_PARTITION=_alter_partition_bad_lists(),
        )
    )
    # A partition entry without its id or topic is a shape we do not know
    # (a renamed key in a version we have not seen): never guess.
    unknown_shape = F.exists(
        "rl_events",
        lambda e: e["partition"].isNull() | (e["topic"].isNull() & e["topic_id"].isNull()),
    ) | by_api(
        ALTER_PARTITION=_alter_partition_unknown_shape(),
        LIST_OFFSETS=_unasked(F.col("rl_listed")),
    )
    api_name = F.lit("OFFSET_FOR_LEADER_EPOCH")
    for key in (FETCH, PRODUCE, LEADER_AND_ISR, ALTER_PARTITION, LIST_OFFSETS):
        api_name = F.when(api_key == key, F.lit(API_KEY_NAMES[key])).otherwise(api_name)
    quarantine = (
        F.when(F.col("rl_reason").isNotNull(), F.col("rl_reason"))
        .when(
            F.col("rl_tcandidate"),
            F.when(_text_unreadable(), F.format_string("unreadable %s text request", api_name)),
        )
        .when(~F.col("rl_candidate"), F.lit(None))
        .when(bad_json, F.lit(BAD_JSON_REASON))
        .when(unknown_shape, F.format_string("unknown %s shape", api_name))
    )
    return staged.select("*", quarantine.alias("rl_quarantine"))


class _Api:
    """Api key constants by name, for :func:`with_verdict`'s per-api checks."""

    FETCH = FETCH
    PRODUCE = PRODUCE
    LIST_OFFSETS = LIST_OFFSETS
    LEADER_AND_ISR = LEADER_AND_ISR
    OFFSET_FOR_LEADER_EPOCH = OFFSET_FOR_LEADER_EPOCH
    ALTER_PARTITION = ALTER_PARTITION
