"""The outcome row every input line reduces to, shared by both parsers.

Each line that needs a look becomes an array of *outcome rows*:

* one row per event it yields (``kind`` set, ``reason`` null): the line is
  *parsed*;
* exactly one row with ``reason`` set (and ``text``): the line is
  *quarantined*;
* null or an empty array: the line is *ignored by rule*.

The parsers build events with :func:`event` and name a quarantine reason;
``pipeline/ingest/__init__.py`` wraps a reason with :func:`quarantined`. All
rows thus share one struct type, and one ``posexplode_outer`` turns them into
rows (see there for why it is ``_outer``).
"""

from __future__ import annotations

import functools

from pyspark.sql import Column
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    StringType,
    StructField,
    StructType,
)

from pipeline import sqltext as F
from schemas.tables import PARTITION_EVENTS

#: DESIGN.md "Hostile input": a line longer than this is quarantined unparsed.
LINE_LENGTH_LIMIT = 1 << 20
#: QUARANTINE.text keeps the first 8 KiB of the raw line.
QUARANTINE_TEXT_LIMIT = 8192
#: ``seq = line_no * SEQ_STRIDE + position in the line``. A parsed line is at
#: most LINE_LENGTH_LIMIT characters, and the smallest partition entry that
#: yields an event takes 12 of them (``{"index":0},``; an entry without its
#: partition id is quarantined), so a line yields < 87,382 events and seq
#: never runs into the next line's.
SEQ_STRIDE = 100_000

#: Columns that belong to the line rather than to one event of it.
LINE_LEVEL_COLUMNS: frozenset[str] = frozenset(
    {"cluster", "observer", "source_file", "line_no", "event_time", "metadata_offset", "seq"}
)

#: The per-event part of PARTITION_EVENTS, in table order.
EVENT_FIELDS: tuple[StructField, ...] = tuple(
    f for f in PARTITION_EVENTS.fields if f.name not in LINE_LEVEL_COLUMNS
)
_EVENT_TYPES: dict[str, DataType] = {f.name: f.dataType for f in EVENT_FIELDS}

OUTCOME_ROW = StructType(
    [StructField(f.name, f.dataType, True) for f in EVENT_FIELDS]
    + [
        StructField("reason", StringType(), True),
        StructField("text", StringType(), True),
        StructField("text_truncated", BooleanType(), True),
    ]
)
OUTCOME_ROWS = ArrayType(OUTCOME_ROW)
_OUTCOME_TYPES: dict[str, DataType] = {f.name: f.dataType for f in OUTCOME_ROW.fields}


@functools.cache
def _null_field(name: str) -> Column:
    """``CAST(NULL AS <type>) AS name`` for an OUTCOME_ROW field.

    Cached: an outcome struct has ~40 fields and the parsers build a dozen
    of them, and each Column built costs several py4j round trips (seconds
    in all). A Column is an immutable expression, safe to reuse.
    """
    return F.lit(None).cast(_OUTCOME_TYPES[name]).alias(name)


def event(kind: str, **values: Column) -> Column:
    """One outcome row carrying an event of ``kind``; unnamed columns are null.

    Every value is cast to its PARTITION_EVENTS type here, once, so the
    parsers can hand over whatever from_json gave them (int16 codes as int,
    etc.) and every branch ends with the same struct type.
    """
    unknown = set(values) - set(_EVENT_TYPES)
    if unknown:  # a typo here would silently drop a field: fail at build time
        raise ValueError(f"not PARTITION_EVENTS columns: {sorted(unknown)}")
    if "kind" in values:
        raise ValueError("kind is given positionally")
    fields: list[Column] = []
    for f in EVENT_FIELDS:
        if f.name not in values and f.name != "kind":
            fields.append(_null_field(f.name))
            continue
        if f.name == "kind":
            value = F.lit(kind)
        elif f.name in values and isinstance(f.dataType, ArrayType):
            # The tables' int arrays hold no nulls (containsNull=False), a type a
            # cast cannot produce; array_compact can. Callers quarantine a list
            # with a null in it before it gets here, so nothing is dropped.
            element = ArrayType(f.dataType.elementType)
            value = F.array_compact(values[f.name].cast(element))
        else:
            value = values[f.name].cast(f.dataType)
        fields.append(value.alias(f.name))
    fields += [_null_field("reason"), _null_field("text"), _null_field("text_truncated")]
    return F.struct(*fields)


def quarantined(reason: Column, value: Column) -> Column:
    """The single outcome row of a quarantined line (QUARANTINE: text is the
    first 8 KiB, made valid UTF-8 so that reports can print it)."""
    fields = [_null_field(f.name) for f in EVENT_FIELDS]
    fields += [
        reason.cast(StringType()).alias("reason"),
        F.make_valid_utf8(F.substring(value, 1, QUARANTINE_TEXT_LIMIT)).alias("text"),
        longer_than(value, QUARANTINE_TEXT_LIMIT).alias("text_truncated"),
    ]
    return F.array(F.struct(*fields))


def no_rows() -> Column:
    """An empty array of outcome rows (a line read but yielding nothing)."""
    return F.array().cast(OUTCOME_ROWS)


def or_empty(rows: Column) -> Column:
    """``rows``, or an empty array when a missing JSON array made it null."""
    return F.coalesce(rows, no_rows())


def longer_than(value: Column, limit: int) -> Column:
    """length(value) > limit, without counting characters of ordinary lines:
    a string has at least as many bytes as characters, and octet_length is
    O(1) where length walks the whole line."""
    return (F.octet_length(value) > limit) & (F.length(value) > limit)


def too_long(value: Column) -> Column:
    return longer_than(value, LINE_LENGTH_LIMIT)


TOO_LONG_REASON = f"line longer than {LINE_LENGTH_LIMIT} characters"
INVALID_UTF8_REASON = "invalid UTF-8"


def unreadable_reason(value: Column) -> Column:
    """The quarantine reason every recognised file applies first, or null.

    The length check comes first so that an over-long line is not even
    scanned for UTF-8 (DESIGN.md: quarantined, not parsed). Spark keeps the
    raw bytes of a line and shows invalid sequences as U+FFFD; is_valid_utf8
    looks at the bytes.
    """
    return F.when(too_long(value), F.lit(TOO_LONG_REASON)).when(
        ~F.is_valid_utf8(value), F.lit(INVALID_UTF8_REASON)
    )


def long_substr(value: Column, start: Column) -> Column:
    """value[start:] (1-based) with a Column start position."""
    return value.substr(start, F.lit(1 << 30))


def between(value: Column, start: Column, end: Column) -> Column:
    """value[start:end) (1-based, end exclusive) with Column positions."""
    return value.substr(start, end - start)
