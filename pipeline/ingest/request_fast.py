"""The request log's fast lane: JSON FETCH lines (2.8+) read with string cuts.

Follower fetches are most of a busy broker's request log, and most of the
bytes of a line are its partition entries. ``from_json`` (and the
``transform`` lambdas that turn its arrays into events) reads them at a
few MB/s per core; cutting them out with ``split`` and ``instr`` and
casting the digits reads them several times faster. This module does that
for the one shape that is worth it, exactly as Kafka's JSON converter
writes it (kafka-formats.md 1.2 and 1.6), and leaves every other line to
the general reader (``request_log.py``):

* **Eligible** (:func:`is_fast`): a JSON line (``Completed request:{"isForwarded":``)
  of api key 1 in Kafka's own layout (``[timestamp] LEVEL ... (kafka.request.logger)``),
  at most 1 MiB, valid UTF-8, whose four top-level objects are where
  section 1.2 puts them, whose client id holds no JSON escape, and whose
  request and response list as many partition entries as they hold
  ``fetchOffset`` / ``highWatermark`` keys (a garbled entry marker merges
  two entries: the general reader then judges the line).
* **Cut** (:func:`entries`): the request and response objects, split at
  each topic (``{"topicId":"`` v13+, ``{"topic":"`` v0-12) and then at each
  partition entry (``{"partition":`` / ``{"partitionIndex":``, 2.8's
  ``{"partition":`` in ``partitionResponses``). JSON escapes every ``"``
  inside a string, so these markers (which hold a ``"`` right after a
  structural character) can only be structure, never text a client chose.
* **Read** (:func:`event_of`): each field from its key to the next ``,``
  or ``}``, cast to its type; a missing key is null, as from_json gives.
  An entry whose partition, fetch offset, error code or high watermark
  does not read is *rejected*: the line's events are dropped after the
  pass and the general reader judges it from its text (``plan.py``), so
  the lane never decides a quarantine itself.

Entries keep the order of the line, requests before responses, so ``pos``
(and ``seq``) are what the general reader gives. A test feeds every fetch
line of the test corpus through both readers and requires the same events.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

from pipeline.ingest.outcome import LINE_LENGTH_LIMIT, between, event

#: The lane can be switched off (a test compares both readers' events).
ENABLED = True

_HEAD = 320
_JSON_OPENER = 'Completed request:{"isForwarded":'
_FETCH = '"requestApiKey":1,'
_SUFFIX = "} (kafka.request.logger)"
_TIMESTAMP = r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] "

_HEADER_AT = '"requestHeader":'
_REQUEST_AT = ',"request":'
_RESPONSE_AT = ',"response":'
_CONNECTION_AT = ',"connection":'

#: split patterns (Java regex; the markers are literal)
_TOPIC_SPLIT = r'\{"topic(?:Id)?":"'
_REQUEST_ENTRY_SPLIT = r'\{"partition":'
_RESPONSE_ENTRY_SPLIT = r'\{"partition(?:Index)?":'
_FETCH_OFFSET = ',"fetchOffset":'
_HIGH_WATERMARK = ',"highWatermark":'

#: One partition entry of a line, before its fields are read.
ENTRY = StructType(
    [
        StructField("topic", StringType()),
        StructField("entry", StringType()),
        StructField("answer", BooleanType()),
        StructField("version", IntegerType()),
    ]
)


def _parts(value: Column) -> tuple[Column, Column, Column, Column, Column]:
    """(header at, request at, response at, connection at, request text,
    response text) positions of section 1.2's top-level keys."""
    header_at = F.instr(value, _HEADER_AT)
    request_at = F.instr(value, _REQUEST_AT)
    response_at = F.instr(value, _RESPONSE_AT)
    connection_at = F.instr(value, _CONNECTION_AT)
    return header_at, request_at, response_at, connection_at, value


def request_text(value: Column) -> Column:
    return between(
        value, F.instr(value, _REQUEST_AT) + len(_REQUEST_AT), F.instr(value, _RESPONSE_AT)
    )


def response_text(value: Column) -> Column:
    return between(
        value, F.instr(value, _RESPONSE_AT) + len(_RESPONSE_AT), F.instr(value, _CONNECTION_AT)
    )


def _count(text: Column, key: str) -> Column:
    """Occurrences of a literal ``key`` in ``text``."""
    return F.size(F.split(text, _literal(key))) - 1


def _literal(text: str) -> str:
    """``text`` as a Java regex matching it literally."""
    return "".join("\\" + c if c in r"\^$.|?*+()[]{}" else c for c in text)


def client_id(value: Column) -> Column:
    """The header's clientId (a plain string or null), from the line head."""
    head = F.substring(value, 1, _HEAD + 256)
    at = F.instr(head, '"clientId":')
    after = F.substring(head, at + len('"clientId":'), 1 << 16)
    text = F.substring_index(F.substring(after, 2, 1 << 16), '"', 1)
    return F.when(after.startswith('"'), text)


def _client_id_plain(value: Column) -> Column:
    """The client id is null, or a string with no escape: read as it is."""
    head = F.substring(value, 1, _HEAD + 256)
    at = F.instr(head, '"clientId":')
    after = F.substring(head, at + len('"clientId":'), 1 << 16)
    quoted = F.substring(after, 2, 1 << 16)
    closes = F.instr(quoted, '"')
    plain = (closes > 0) & (F.instr(F.substring(quoted, 1, closes), "\\") == 0)
    return (at > 0) & (after.startswith("null,") | (after.startswith('"') & plain))


def api_version(value: Column) -> Column:
    head = F.substring(value, 1, _HEAD)
    digits = F.regexp_extract(head, r'"requestApiVersion":(\d{1,5}),', 1)
    return F.nullif(digits, F.lit("")).try_cast("int")


def is_fast(value: Column) -> Column:
    """The line is one the lane reads (module docstring). Cheapest tests
    first: each is a CASE branch, so a failing one stops the line."""
    head = F.substring(value, 1, _HEAD)
    header_at, request_at, response_at, connection_at, _ = _parts(value)
    request, response = request_text(value), response_text(value)
    return (
        F.when(F.instr(head, _JSON_OPENER) == 0, F.lit(False))
        .when(F.instr(head, _FETCH) == 0, F.lit(False))
        .when(~value.endswith(_SUFFIX), F.lit(False))
        .when(F.octet_length(value) > LINE_LENGTH_LIMIT, F.lit(False))
        .when(~head.rlike(_TIMESTAMP), F.lit(False))
        .when(
            ~(
                (header_at > 0)
                & (request_at > header_at)
                & (response_at > request_at)
                & (connection_at > response_at)
            ),
            F.lit(False),
        )
        .when(api_version(value).isNull(), F.lit(False))
        .when(~_client_id_plain(value), F.lit(False))
        .when(~F.is_valid_utf8(value), F.lit(False))
        .when(~request.startswith("{") | ~response.startswith("{"), F.lit(False))
        .when(_count(request, '{"partition":') != _count(request, _FETCH_OFFSET), F.lit(False))
        .when(
            (_count(response, '{"partition') != _count(response, _HIGH_WATERMARK)),
            F.lit(False),
        )
        .otherwise(F.lit(True))
    )


def _topic_entries(text: Column, entry_split: str, answer: bool, version: Column) -> Column:
    """[ENTRY] of one object: every partition entry with its topic."""
    chunks = F.split(text, _TOPIC_SPLIT)

    def per_topic(chunk: Column) -> Column:
        topic = F.substring_index(chunk, '"', 1)
        parts = F.split(chunk, entry_split)
        return F.transform(
            F.slice(parts, 2, F.greatest(F.size(parts) - 1, F.lit(0))),
            lambda e: F.struct(
                topic.alias("topic"),
                e.alias("entry"),
                F.lit(answer).alias("answer"),
                version.alias("version"),
            ),
        )

    tail = F.slice(chunks, 2, F.greatest(F.size(chunks) - 1, F.lit(0)))
    return F.flatten(F.transform(tail, per_topic))


def entries(value: Column) -> Column:
    """[ENTRY] of a fast line: its request's entries, then its response's."""
    version = api_version(value)
    return F.concat(
        _topic_entries(request_text(value), _REQUEST_ENTRY_SPLIT, False, version),
        _topic_entries(response_text(value), _RESPONSE_ENTRY_SPLIT, True, version),
    )


def _field(entry: Column, key: str | None, dtype: str) -> Column:
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


def event_of(e: Column, replica: Column, client: Column) -> Column:
    """The OUTCOME_ROW of one ENTRY, as the general reader builds it."""
    entry, version = e["entry"], e["version"]
    topic = F.when(version < 13, e["topic"])
    topic_id = F.when(version >= 13, e["topic"])
    request = event(
        "fetch_request",
        topic=topic,
        topic_id=topic_id,
        partition=_field(entry, None, "int"),
        replica=replica,
        fetch_offset=_field(entry, _FETCH_OFFSET, "bigint"),
        last_fetched_epoch=_field(entry, ',"lastFetchedEpoch":', "int"),
        current_leader_epoch=_field(entry, ',"currentLeaderEpoch":', "int"),
        log_start_offset=_field(entry, ',"logStartOffset":', "bigint"),
        api_version=version,
        client_id=client,
    )
    records = F.coalesce(
        _field(entry, ',"recordsSizeInBytes":', "bigint"),
        _field(entry, ',"recordSetSizeInBytes":', "bigint"),
    )
    answer = event(
        "fetch_response",
        topic=topic,
        topic_id=topic_id,
        partition=_field(entry, None, "int"),
        replica=replica,
        hwm=_field(entry, _HIGH_WATERMARK, "bigint"),
        error_code=_field(entry, ',"errorCode":', "int"),
        diverging_epoch=_diverging(entry, 1, "int"),
        diverging_end_offset=_diverging(entry, 2, "bigint"),
        log_start_offset=_field(entry, ',"logStartOffset":', "bigint"),
        records_size=records,
        api_version=version,
    )
    return F.when(e["answer"], answer).otherwise(request)


#: Per event kind, each field the lane reads and its key in the entry.
_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "fetch_request": (
        ("fetch_offset", _FETCH_OFFSET),
        ("last_fetched_epoch", ',"lastFetchedEpoch":'),
        ("current_leader_epoch", ',"currentLeaderEpoch":'),
        ("log_start_offset", ',"logStartOffset":'),
    ),
    "fetch_response": (
        ("hwm", _HIGH_WATERMARK),
        ("error_code", ',"errorCode":'),
        ("log_start_offset", ',"logStartOffset":'),
        ("diverging_epoch", ',"divergingEpoch":{'),
    ),
}


def rejected(row: Column, e: Column) -> Column:
    """An entry the lane could not read as from_json would: a required field
    missing (partition, topic, fetch offset, high watermark, error code), or
    any key present whose value is no number of its type. The general reader
    then judges the line."""
    entry = e["entry"]

    def unread(kind: str) -> Column:
        out = F.lit(False)
        for name, key in _KEYS[kind]:
            out = out | ((F.instr(entry, key) > 0) & row[name].isNull())
        return out

    required = F.when(row["kind"] == "fetch_request", row["fetch_offset"].isNull()).otherwise(
        row["hwm"].isNull() | row["error_code"].isNull()
    )
    return (
        row["partition"].isNull()
        | (row["topic"].isNull() & row["topic_id"].isNull())
        | required
        | F.when(row["kind"] == "fetch_request", unread("fetch_request")).otherwise(
            unread("fetch_response")
        )
    )
