"""The request log's fast lane: JSON FETCH and PRODUCE lines (2.8+) read with string cuts.

Fetches and produces are most of a busy broker's request log, and most of
the bytes of a line are its partition entries. ``from_json`` (and the
``transform`` lambdas that turn its arrays into events) reads them at a few
MB/s per core; cutting them out with ``split`` and ``instr`` and casting the
digits reads them several times faster. This module does that for the two
shapes worth it, exactly as Kafka's JSON converter writes them
(kafka-formats.md 1.2, 1.5, 1.6), and leaves every other line to the
general reader (``request_log.py``):

* **Eligible** (:func:`lane`): a JSON line (``Completed request:{"isForwarded":``)
  of api key 1 or 0 in Kafka's own layout (``[timestamp] LEVEL ...
  (kafka.request.logger)``), at most 1 MiB, valid UTF-8, whose four
  top-level objects are where section 1.2 puts them, whose request and
  response are objects, and whose client id holds no JSON escape.
* **Cut** (:func:`entries`): FETCH: the request and response objects, split
  at each topic (``{"topicId":"`` v13+, ``{"topic":"`` v0-12) and at each
  partition entry (``{"partition":`` / ``{"partitionIndex":``; 2.8's
  ``{"partition":`` in ``partitionResponses``). PRODUCE: the response,
  split at each topic (``{"name":"`` / ``{"topicId":"`` v13+) and entry
  (``{"index":``); ``acks`` from the request. JSON escapes every ``"`` inside
  a string, so these markers (a ``"`` right after a structural character)
  can only be structure, never text a client chose.
* **Consumers** (formats-addendum.md 11.1): a consumer's FETCH (replica id
  -1, or no replica key from v15) becomes one ``consumer_fetch`` per answered
  partition, its position read from the request entry of the same partition,
  paired as the general reader pairs them (``request_log.asked_at``); a
  request entry no answer names is not read. A fetch from any other sender
  (a debug consumer's -2) is left to the general reader.
* **Read** (:func:`event_of`): each field from its key to the next ``,`` or
  ``}``, cast to its type; a missing optional key is null, as from_json
  gives. An entry is *rejected* (:func:`rejected`) when a field it must
  have is missing, a key it holds is no number of its type, a key appears
  twice (a damaged entry marker merged two entries) or a topic header sits
  inside it (a damaged topic marker), or a topic's partition list holds an
  object the split found no entry marker in (``UNREAD``): the line's rows are dropped after the
  pass and the general reader judges it from its text (``plan.py``). The
  lane never decides a quarantine itself.

What the lane does not do is validate the bytes it does not read: a line
whose entries are intact is read even if a field we never look at (a rack
id, a timing) is damaged, where ``from_json`` would reject the whole object.
Kafka writes no invalid JSON, so this differs only on damaged lines, and
there it keeps evidence the entries still hold. Everything else is the
general reader's: a test feeds a varied corpus through both readers and
requires the same events, quarantine and accounting.

Entries keep the order of the line, requests before responses, so ``pos``
(and ``seq``) are what the general reader gives.
"""

from __future__ import annotations

import os

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from pipeline.ingest import request_log
from pipeline.ingest.outcome import LINE_LENGTH_LIMIT, between, event

#: The lane can be switched off (a test compares both readers' events).
#: ``EPOCHTRAIL_FAST_LANE=0`` turns it off for a benchmark (docs/performance.md).
ENABLED = os.environ.get("EPOCHTRAIL_FAST_LANE", "1") != "0"

FETCH = 1
PRODUCE = 0
#: The api keys the lane reads.
APIS: tuple[int, ...] = (FETCH, PRODUCE)
#: the lane's code of a consumer's FETCH line (replica id -1, or none from v15)
CONSUMER_FETCH = -1
#: ``ENTRY.what`` of a partition list the lane could not cut (always rejected)
UNREAD = "unread"

_HEAD = 320
_JSON_OPENER = 'Completed request:{"isForwarded":'
_SUFFIX = "} (kafka.request.logger)"
_TIMESTAMP = r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] "

_HEADER_AT = '"requestHeader":'
_REQUEST_AT = ',"request":'
_RESPONSE_AT = ',"response":'
_CONNECTION_AT = ',"connection":'

#: split patterns (Java regex; the markers are literal)
_FETCH_TOPIC = r'\{"topic(?:Id)?":"'
_FETCH_REQUEST_ENTRY = r'\{"partition":'
_FETCH_RESPONSE_ENTRY = r'\{"partition(?:Index)?":'
_PRODUCE_TOPIC = r'\{"(?:name|topicId)":"'
_PRODUCE_ENTRY = r'\{"index":'
#: a topic header inside an entry: its topic marker was damaged
_TOPIC_HEADERS = ('"partitions":[', '"partitionResponses":[', '"partitionData":[')

_FETCH_OFFSET = ',"fetchOffset":'
_HIGH_WATERMARK = ',"highWatermark":'
_BASE_OFFSET = ',"baseOffset":'
_ERROR_CODE = ',"errorCode":'

#: One partition entry of a line, before its fields are read; ``what`` is
#: the event kind it becomes.
#: ``asked``: for a consumer's answer, the request entry of the same
#: partition (its fetch offset), else null.
ENTRY = StructType(
    [
        StructField("topic", StringType()),
        StructField("entry", StringType()),
        StructField("what", StringType()),
        StructField("asked", StringType()),
    ]
)


def request_text(value: Column) -> Column:
    return between(
        value, F.instr(value, _REQUEST_AT) + len(_REQUEST_AT), F.instr(value, _RESPONSE_AT)
    )


def response_text(value: Column) -> Column:
    return between(
        value, F.instr(value, _RESPONSE_AT) + len(_RESPONSE_AT), F.instr(value, _CONNECTION_AT)
    )


def _head(value: Column) -> Column:
    return F.substring(value, 1, _HEAD + 256)


def client_id(value: Column) -> Column:
    """The header's clientId (a plain string or null), from the line head."""
    head = _head(value)
    at = F.instr(head, '"clientId":')
    after = F.substring(head, at + len('"clientId":'), 1 << 16)
    text = F.substring_index(F.substring(after, 2, 1 << 16), '"', 1)
    return F.when(after.startswith('"'), text)


def _client_id_plain(value: Column) -> Column:
    """The client id is null, or a string with no escape: read as it is."""
    head = _head(value)
    at = F.instr(head, '"clientId":')
    after = F.substring(head, at + len('"clientId":'), 1 << 16)
    quoted = F.substring(after, 2, 1 << 16)
    closes = F.instr(quoted, '"')
    plain = (closes > 0) & (F.instr(F.substring(quoted, 1, closes), "\\") == 0)
    return (at > 0) & (after.startswith("null,") | (after.startswith('"') & plain))


def _header_int(value: Column, key: str) -> Column:
    digits = F.regexp_extract(F.substring(value, 1, _HEAD), f'"{key}":(\\d{{1,5}}),', 1)
    return F.nullif(digits, F.lit("")).try_cast("int")


def api_key(value: Column) -> Column:
    return _header_int(value, "requestApiKey")


def api_version(value: Column) -> Column:
    return _header_int(value, "requestApiVersion")


def _fetch_lane(value: Column) -> Column:
    """FETCH for a follower's fetch (replica id >= 0), CONSUMER_FETCH for a
    consumer's (-1, or no replica key from v15), null for any other sender
    (a debug fetch: the general reader's, which ignores it). The replica id
    is read once: clamped to -2..0, it indexes the three answers."""
    replica = F.coalesce(_first_int(value, "replicaId"), F.lit(-1))
    at = F.greatest(F.least(replica, F.lit(0)), F.lit(-2)) + 3
    answers = F.array(F.lit(None).cast("int"), F.lit(CONSUMER_FETCH), F.lit(FETCH))
    return F.try_element_at(answers, at)


def lane(value: Column) -> Column:
    """The lane's code of a line it reads (PRODUCE, FETCH, CONSUMER_FETCH),
    else null (module docstring). Cheapest tests first: each is a CASE
    branch, so a failing one stops the line."""
    head = F.substring(value, 1, _HEAD)
    key = api_key(value)
    header_at = F.instr(value, _HEADER_AT)
    request_at = F.instr(value, _REQUEST_AT)
    response_at = F.instr(value, _RESPONSE_AT)
    connection_at = F.instr(value, _CONNECTION_AT)
    placed = (
        (header_at > 0)
        & (request_at > header_at)
        & (response_at > request_at)
        & (connection_at > response_at)
    )
    objects = F.substring(value, request_at + len(_REQUEST_AT), 1).eqNullSafe("{") & F.substring(
        value, response_at + len(_RESPONSE_AT), 1
    ).eqNullSafe("{")
    no = F.lit(None).cast("int")
    return (
        F.when(F.instr(head, _JSON_OPENER) == 0, no)
        .when(~key.isin(*APIS) | key.isNull(), no)
        .when(~value.endswith(_SUFFIX), no)
        .when(F.octet_length(value) > LINE_LENGTH_LIMIT, no)
        .when(~head.rlike(_TIMESTAMP), no)
        .when(~placed, no)
        .when(~objects, no)
        .when(api_version(value).isNull(), no)
        .when(~_client_id_plain(value), no)
        .when(~F.is_valid_utf8(value), no)
        .when(key == PRODUCE, key)
        .otherwise(_fetch_lane(value))
    )


def _topic_entries(text: Column, topic_split: str, entry_split: str, what: str) -> Column:
    """[ENTRY] of one object: every partition entry with its topic."""
    chunks = F.split(text, topic_split)

    def per_topic(chunk: Column) -> Column:
        topic = F.substring_index(chunk, '"', 1)
        parts = F.split(chunk, entry_split)
        # A partition list holding an object none of whose markers the split
        # found (a renamed or damaged key): one UNREAD entry, always rejected.
        lost = F.lit(False)
        for header in _TOPIC_HEADERS:
            lost = lost | (F.instr(chunk, header + "{") > 0)
        unread = F.array(
            F.struct(
                topic.alias("topic"),
                chunk.alias("entry"),
                F.lit(UNREAD).alias("what"),
                F.lit(None).cast("string").alias("asked"),
            )
        )
        read = F.transform(
            F.slice(parts, 2, F.greatest(F.size(parts) - 1, F.lit(0))),
            lambda e: F.struct(
                topic.alias("topic"),
                e.alias("entry"),
                F.lit(what).alias("what"),
                F.lit(None).cast("string").alias("asked"),
            ),
        )
        return F.when((F.size(parts) < 2) & lost, unread).otherwise(read)

    tail = F.slice(chunks, 2, F.greatest(F.size(chunks) - 1, F.lit(0)))
    return F.flatten(F.transform(tail, per_topic))


def _consumer_entries(value: Column) -> Column:
    """[ENTRY] of a consumer's FETCH line: one per answered partition, with
    the request entry of the same partition (``asked``), paired as the
    general reader pairs them (``request_log.asked_at``: the entry at the
    answer's own index when it matches, else the first that does)."""
    asked = _topic_entries(request_text(value), _FETCH_TOPIC, _FETCH_REQUEST_ENTRY, "asked")
    answered = _topic_entries(
        response_text(value), _FETCH_TOPIC, _FETCH_RESPONSE_ENTRY, "consumer_fetch"
    )
    keyed = F.transform(
        asked,
        lambda a: F.struct(
            a["topic"].alias("key"),
            _number(a["entry"], None, "int").alias("partition"),
            a["entry"].alias("entry"),
        ),
    )

    def pair(requested: Column) -> Column:
        def one(e: Column, j: Column) -> Column:
            match = request_log.asked_at(requested, e["topic"], _number(e["entry"], None, "int"), j)
            return e.withField("asked", match["entry"])

        return F.transform(answered, one)

    # ``keyed`` is built once per line: bound as the single element of an
    # array (a lambda would evaluate an outer expression once per answer).
    return F.flatten(F.transform(F.array(keyed), pair))


def entries(value: Column, key: Column) -> Column:
    """[ENTRY] of a lane line: FETCH, its request's entries then its
    response's; a consumer's FETCH, its answers (:func:`_consumer_entries`);
    PRODUCE, its response's."""
    fetch = F.concat(
        _topic_entries(request_text(value), _FETCH_TOPIC, _FETCH_REQUEST_ENTRY, "fetch_request"),
        _topic_entries(response_text(value), _FETCH_TOPIC, _FETCH_RESPONSE_ENTRY, "fetch_response"),
    )
    produce = _topic_entries(response_text(value), _PRODUCE_TOPIC, _PRODUCE_ENTRY, "produce")
    return (
        F.when(key == FETCH, fetch)
        .when(key == CONSUMER_FETCH, _consumer_entries(value))
        .when(key == PRODUCE, produce)
    )


def _number(entry: Column, key: str | None, dtype: str) -> Column:
    """The number after ``key`` in an entry (the entry's first value when
    ``key`` is None), null when the key is absent or the value no number."""
    if key is None:
        rest = entry
    else:
        at = F.instr(entry, key)
        rest = F.when(at > 0, F.substring(entry, at + len(key), 24))
    digits = F.substring_index(F.substring_index(rest, ",", 1), "}", 1)
    return digits.try_cast(dtype)


def _diverging(entry: Column, group: int, dtype: str) -> Column:
    """divergingEpoch (tagged, v12+): present only when the follower must truncate."""
    at = F.instr(entry, ',"divergingEpoch":{')
    text = F.regexp_extract(
        F.substring(entry, at, 96),
        r'^,"divergingEpoch":\{"epoch":(-?\d{1,10}),"endOffset":(-?\d{1,19})\}',
        group,
    )
    return F.when(at > 0, F.nullif(text, F.lit("")).try_cast(dtype))


def line_columns(value: Column) -> dict[str, Column]:
    """What every entry of a lane line shares, computed once per line."""
    request = request_text(value)
    acks_at = F.instr(request, '"acks":')
    acks = F.when(acks_at > 0, _number(F.substring(request, acks_at, 32), '"acks":', "int"))
    return {
        "_version": api_version(value),
        "_client": client_id(value),
        "_replica": _first_int(value, "replicaId"),
        "_acks": acks,
    }


def _first_int(value: Column, key: str) -> Column:
    digits = F.regexp_extract(value, f'"{key}":(-?\\d{{1,11}})', 1)
    return F.nullif(digits, F.lit("")).try_cast("int")


def event_of(e: Column) -> Column:
    """The OUTCOME_ROW of one ENTRY (with :func:`line_columns` beside it), as
    the general reader builds it."""
    entry, what = e["entry"], e["what"]
    version = F.col("_version")
    replica = F.col("_replica")
    client = F.col("_client")
    # FETCH names topics by name to v12, by id from v13; so does PRODUCE.
    topic = F.when(version < 13, e["topic"])
    topic_id = F.when(version >= 13, e["topic"])
    partition = _number(entry, None, "int")
    request = event(
        "fetch_request",
        topic=topic,
        topic_id=topic_id,
        partition=partition,
        replica=replica,
        fetch_offset=_number(entry, _FETCH_OFFSET, "bigint"),
        last_fetched_epoch=_number(entry, ',"lastFetchedEpoch":', "int"),
        current_leader_epoch=_number(entry, ',"currentLeaderEpoch":', "int"),
        log_start_offset=_number(entry, ',"logStartOffset":', "bigint"),
        api_version=version,
        client_id=client,
    )
    records = F.coalesce(
        _number(entry, ',"recordsSizeInBytes":', "bigint"),
        _number(entry, ',"recordSetSizeInBytes":', "bigint"),
    )
    answer = event(
        "fetch_response",
        topic=topic,
        topic_id=topic_id,
        partition=partition,
        replica=replica,
        hwm=_number(entry, _HIGH_WATERMARK, "bigint"),
        error_code=_number(entry, _ERROR_CODE, "int"),
        diverging_epoch=_diverging(entry, 1, "int"),
        diverging_end_offset=_diverging(entry, 2, "bigint"),
        log_start_offset=_number(entry, ',"logStartOffset":', "bigint"),
        records_size=records,
        api_version=version,
    )
    produce = event(
        "produce",
        topic=topic,
        topic_id=topic_id,
        partition=partition,
        acks=F.col("_acks"),
        base_offset=_number(entry, _BASE_OFFSET, "bigint"),
        error_code=_number(entry, _ERROR_CODE, "int"),
        client_id=client,
        api_version=version,
    )
    consumer = event(
        "consumer_fetch",
        topic=topic,
        topic_id=topic_id,
        partition=partition,
        fetch_offset=_number(e["asked"], _FETCH_OFFSET, "bigint"),
        hwm=_number(entry, _HIGH_WATERMARK, "bigint"),
        log_start_offset=_number(entry, ',"logStartOffset":', "bigint"),
        error_code=_number(entry, _ERROR_CODE, "int"),
        replica=replica,
        client_id=client,
        api_version=version,
    )
    return (
        F.when(what == "fetch_request", request)
        .when(what == "fetch_response", answer)
        .when(what == "consumer_fetch", consumer)
        .otherwise(produce)
    )


#: Per event kind: the fields the lane reads with their keys, and which of
#: them an entry must have.
_FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "fetch_request": (
        ("fetch_offset", _FETCH_OFFSET, True),
        ("last_fetched_epoch", ',"lastFetchedEpoch":', False),
        ("current_leader_epoch", ',"currentLeaderEpoch":', False),
        ("log_start_offset", ',"logStartOffset":', False),
    ),
    "fetch_response": (
        ("hwm", _HIGH_WATERMARK, True),
        ("error_code", _ERROR_CODE, True),
        ("log_start_offset", ',"logStartOffset":', False),
        ("diverging_epoch", ',"divergingEpoch":{', False),
    ),
    "produce": (
        ("base_offset", _BASE_OFFSET, True),
        ("error_code", _ERROR_CODE, True),
    ),
    "consumer_fetch": (
        ("hwm", _HIGH_WATERMARK, True),
        ("error_code", _ERROR_CODE, True),
        ("log_start_offset", ',"logStartOffset":', False),
    ),
}


def _twice(entry: Column, key: str) -> Column:
    at = F.instr(entry, key)
    return (at > 0) & (F.instr(F.substring(entry, at + len(key), 1 << 30), key) > 0)


def rejected(row: Column, e: Column) -> Column:
    """An entry the lane could not read as the general reader would (module
    docstring): the general reader then judges its line."""
    entry, what = e["entry"], e["what"]
    out = (
        (what == UNREAD)
        | _damaged(entry)
        | row["partition"].isNull()
        | (row["topic"].isNull() & row["topic_id"].isNull())
    )
    for kind, fields in _FIELDS.items():
        bad = F.lit(False)
        for name, key, required in fields:
            missing = row[name].isNull()
            bad = bad | (missing if required else (F.instr(entry, key) > 0) & missing)
            bad = bad | _twice(entry, key)
        if kind == "produce":
            bad = bad | F.col("_acks").isNull()
        if kind == "consumer_fetch":
            bad = bad | _asked_rejected(e["asked"])
        out = out | ((what == kind) & bad)
    return out


#: The fields of a request entry and their types (those the general reader's
#: from_json types, so that a value it cannot take is caught here too).
_ASKED_TYPES = {
    "fetch_offset": "bigint",
    "last_fetched_epoch": "int",
    "current_leader_epoch": "int",
    "log_start_offset": "bigint",
}


def _asked_rejected(asked: Column) -> Column:
    """The request entry a consumer's answer was paired with holds a value
    the general reader could not take (its line would be quarantined)."""
    bad = F.lit(False)
    for name, key, _ in _FIELDS["fetch_request"]:
        value = _number(asked, key, _ASKED_TYPES[name])
        bad = bad | _twice(asked, key) | ((F.instr(asked, key) > 0) & value.isNull())
    return F.coalesce(bad | _damaged(asked), F.lit(False))


def _damaged(entry: Column) -> Column:
    out = F.lit(False)
    for header in _TOPIC_HEADERS:
        out = out | (F.instr(entry, header) > 0)
    return out
