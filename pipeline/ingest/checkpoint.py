"""Broker on-disk checkpoint files, kafka-formats.md section 4.

``CheckpointFile`` (3.x ``server-common``; 2.8 Scala, same format)::

    <version>\\n<count>\\n<entry>\\n ... (count lines)

read as strictly as Kafka reads it (``CheckpointReadBuffer.read``): the
version line must be an int equal to 0 (else ``Unrecognised version:...``),
the count line an int, every later line an entry (fields split on runs of
whitespace; else ``Malformed line in checkpoint file [...]: <line>``), and
there must be exactly ``count`` entries (else ``Expected [c] entries in
checkpoint file [...], but found only [n]``). A file with no line, or with
only its version line, holds no entry (Kafka: an empty list). On any error
Kafka rejects the whole file, so every line of it is quarantined with that
reason; a good file's version and count lines are ignored by rule and each
entry is parsed.

* ``leader-epoch-checkpoint`` (a partition folder ``<topic>-<p>/``):
  ``<epoch> <startOffset>`` -> ``epoch_checkpoint``;
* ``replication-offset-checkpoint`` (a log dir): ``<topic> <partition> <hw>``
  -> ``hwm_checkpoint``;
* ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``cleaner-offset-checkpoint`` (a log dir, ``<topic> <partition> <offset>``):
  validated like the others and quarantined the same way; a good file's
  lines are ignored by rule (the replay uses none of these offsets yet);
* ``partition.metadata`` (``version: 0`` / ``topic_id: <id>``, exactly two
  lines, ``PartitionMetadataReadBuffer``): a ``topic_record`` (topic from the
  folder name), which also feeds the topic-name join; ZERO_UUID is rejected
  (``Invalid topic ID in partition metadata file (...)``).

Two leniencies a person's copy needs (DESIGN "Inputs"): trailing blanks on
a line (a checkpoint pasted into a ticket) are not part of its values; and a
well-formed ``leader-epoch-checkpoint`` or ``partition.metadata`` outside a
``<topic>-<partition>/`` folder, whose partition no path names, is read and
ignored by rule (unattributable), where a malformed one is still quarantined
with Kafka's reason.

Files are recognised by name and content (the first line an int, or
``version`` for partition.metadata; ``sniff.py``). They are small by nature
(one line per partition at most), so the driver reads them whole and the
verdicts are computed from those lines: checkpoint outcomes never scan the
input in Spark.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame

from pipeline import sqltext as F
from pipeline.ingest.outcome import (
    QUARANTINE_TEXT_LIMIT,
    event,
    quarantined,
    unreadable_reason,
)

KIND = "checkpoint"

LEADER_EPOCH = "leader-epoch-checkpoint"
REPLICATION_OFFSET = "replication-offset-checkpoint"
PARTITION_METADATA = "partition.metadata"
#: Validated, not used yet: a good file's lines are ignored by rule.
IGNORED = ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
           "cleaner-offset-checkpoint")  # fmt: skip
READ = (LEADER_EPOCH, REPLICATION_OFFSET, PARTITION_METADATA)
NAMES = READ + IGNORED

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
_INT = r"^[+-]?\d{1,10}$"
_LONG = r"^[+-]?\d{1,19}$"
_UUID = r"^[A-Za-z0-9_-]{22}$"
#: ``<topic>-<partition>/<file>``: the partition after the last '-'.
_PARTITION_DIR = r"/([^/]+)-(\d+)/[^/]+$"
#: How much of a bad line a reason quotes.
_QUOTE = 200


def name_of(source_file: Column) -> Column:
    """The checkpoint file name of a path, else null."""
    out = F.lit(None).cast("string")
    for name in reversed(NAMES):
        out = F.when(source_file.endswith("/" + name), F.lit(name)).otherwise(out)
    return out


# --- recognition ---------------------------------------------------------------------


_INT_RE = re.compile(_INT)


def checkpoint_name(path: str) -> str | None:
    """The checkpoint file name of a path, else None."""
    return next((n for n in NAMES if path.endswith("/" + n)), None)


def is_checkpoint_file(path: str, first_line: str | None) -> bool:
    """By name, then by content: a leading int line (partition.metadata:
    ``version``). ``first_line`` is the first line of the file."""
    name = checkpoint_name(path)
    if name is None or first_line is None:
        return False
    head = first_line[:64].rstrip()
    if name == PARTITION_METADATA:
        return head.startswith("version")
    return bool(_INT_RE.search(head))


# --- verdicts -------------------------------------------------------------------


def _malformed(location: Column, line: Column) -> Column:
    return F.format_string(
        "Malformed line in checkpoint file [%s]: %s",
        location,
        F.make_valid_utf8(F.substring(line, 1, _QUOTE)),
    )


def _split(text: Column) -> Column:
    """Java ``"\\s+"``-split: trailing empty strings dropped, a leading one kept."""
    return F.split(F.regexp_replace(text, r"\s+$", ""), r"\s+")


def _offsets_entry(name: Column, text: Column) -> Column:
    """(ok, a, b, c) of one entry line: LEC ``epoch offset``, ROC ``topic partition offset``."""
    parts = _split(text)
    n = F.size(parts)
    p0, p1, p2 = F.get(parts, 0), F.get(parts, 1), F.get(parts, 2)
    lec_ok = (
        (n == 2)
        & p0.rlike(_INT)
        & p0.try_cast("int").isNotNull()
        & p1.rlike(_LONG)
        & (p1.try_cast("long").isNotNull())
    )
    roc_ok = (
        (n == 3) & (p0 != "") & p1.rlike(_INT) & p1.try_cast("int").isNotNull()
        & p2.rlike(_LONG) & p2.try_cast("long").isNotNull()
    )  # fmt: skip
    return F.when(name == LEADER_EPOCH, lec_ok).otherwise(roc_ok)


def _offset_file_reason(name: Column, lines: Column, location: Column) -> Column:
    """``CheckpointReadBuffer.read``: the first error Kafka would raise, or null."""
    n = F.size(lines)
    first, second = F.get(lines, 0), F.get(lines, 1)
    version = F.when(first["text"].rlike(_INT), first["text"].try_cast("int"))
    count = F.when(second["text"].rlike(_INT), second["text"].try_cast("int"))
    entries = F.filter(lines, lambda e: e["line_no"] > 2)
    bad = F.filter(
        entries, lambda e: e["unreadable"].isNotNull() | ~_offsets_entry(name, e["text"])
    )
    unreadable_header = F.filter(lines, lambda e: (e["line_no"] <= 2) & e["unreadable"].isNotNull())
    return (
        F.when(n == 0, F.lit(None))
        .when(F.size(unreadable_header) > 0,
              _malformed(location, F.get(unreadable_header, 0)["text"]))
        .when(version.isNull(), _malformed(location, first["text"]))
        .when(
            version != 0,
            F.format_string(
                "Unrecognised version:%d, expected version: 0 in checkpoint file at: %s",
                version,
                location,
            ),
        )
        .when(n == 1, F.lit(None))
        .when(count.isNull(), _malformed(location, second["text"]))
        .when(F.size(bad) > 0, _malformed(location, F.get(bad, 0)["text"]))
        .when(
            F.size(entries) != count,
            F.format_string(
                "Expected [%d] entries in checkpoint file [%s], but found only [%d]",
                count,
                location,
                F.size(entries),
            ),
        )
    )  # fmt: skip


def _partition_metadata(lines: Column, location: Column) -> tuple[Column, Column]:
    """(reason, topic_id) per ``PartitionMetadataReadBuffer`` (the strict,
    newest reader: exactly two lines, ``version: <int >= 0>``, ``topic_id: <uuid>``)."""
    n = F.size(lines)
    first, second = F.get(lines, 0)["text"], F.get(lines, 1)["text"]
    v = F.split(first, r":\s+", 2)
    t = F.split(second, r":\s+", 2)
    version = F.when(F.get(v, 1).rlike(_INT), F.get(v, 1).try_cast("int"))
    topic_id = F.get(t, 1)
    content = F.array_join(F.transform(lines, lambda e: e["text"]), "\n")
    any_unreadable = F.exists(lines, lambda e: e["unreadable"].isNotNull())
    reason = (
        F.when((n != 2) | any_unreadable, _malformed(location, content))
        .when((F.size(v) != 2) | (F.get(v, 0) != "version") | version.isNull(),
              _malformed(location, first))
        .when(
            version < 0,
            F.format_string(
                "Unrecognized version of partition metadata file (%s): %d", location, version
            ),
        )
        .when((F.size(t) != 2) | (F.get(t, 0) != "topic_id") | ~topic_id.rlike(_UUID),
              _malformed(location, second))
        .when(topic_id == ZERO_UUID,
              F.format_string("Invalid topic ID in partition metadata file (%s)", location))
    )  # fmt: skip
    return reason, topic_id


def outcomes(lines: DataFrame) -> DataFrame:
    """The outcome rows of every line of the checkpoint files ``lines``
    (source_file, idx, observer, value: files read whole, so ``idx`` is the
    line's index in its file): (source_file, line_no, observer, line_time,
    metadata_offset, pos, <OUTCOME_ROW fields>). Lines with no row (a good
    file's version and count lines) are ignored by rule. Kafka judges a
    checkpoint file whole, and so do these verdicts."""
    value = F.col("value")
    per_block = lines.select(
        "source_file",
        "observer",
        F.struct(
            (F.col("idx") + 1).alias("line_no"),
            # a person's paste may leave trailing blanks: read without them
            F.regexp_replace(
                F.substring(value, 1, QUARANTINE_TEXT_LIMIT + 1), r"[ \t]+$", ""
            ).alias("text"),
            unreadable_reason(value).alias("unreadable"),
            F.substring(value, 1, QUARANTINE_TEXT_LIMIT + 1).alias("raw"),
        ).alias("l"),
    )
    files = per_block.groupBy("source_file", "observer").agg(
        F.array_sort(F.collect_list("l")).alias("lines")
    )
    source_file = F.col("source_file")
    name = name_of(source_file)
    file_lines = F.col("lines")  # the file's lines, in order (``lines`` is the input frame)
    location = F.regexp_replace(source_file, "^file:", "")
    dir_topic = F.nullif(F.regexp_extract(source_file, _PARTITION_DIR, 1), F.lit(""))
    dir_partition = F.nullif(F.regexp_extract(source_file, _PARTITION_DIR, 2), F.lit(""))
    dir_partition = dir_partition.try_cast("int")
    pm_reason, topic_id = _partition_metadata(file_lines, location)
    reason = F.when(name == PARTITION_METADATA, pm_reason).otherwise(
        _offset_file_reason(name, file_lines, location)
    )
    verdicts = files.select(
        "source_file", "observer", "lines", reason.alias("reason"),
        name.alias("name"), dir_topic.alias("dir_topic"), dir_partition.alias("dir_partition"),
        F.when(name == PARTITION_METADATA, topic_id).alias("topic_id"),
    )  # fmt: skip
    per_line = verdicts.select(
        "source_file", "observer", "reason", "name", "dir_topic", "dir_partition", "topic_id",
        F.explode("lines").alias("l"),
    )  # fmt: skip
    text = F.col("l.text")
    parts = _split(text)
    header = F.col("l.line_no") <= 2
    observer = F.col("observer")
    name_c, reason_c = F.col("name"), F.col("reason")
    entry = (
        F.when(
            name_c == LEADER_EPOCH,
            event(
                "epoch_checkpoint",
                topic=F.col("dir_topic"),
                partition=F.col("dir_partition"),
                replica=observer,
                leader_epoch=F.get(parts, 0),
                base_offset=F.get(parts, 1),
            ),
        )
        .when(
            name_c == REPLICATION_OFFSET,
            event(
                "hwm_checkpoint",
                topic=F.get(parts, 0),
                partition=F.get(parts, 1),
                replica=observer,
                hwm=F.get(parts, 2),
            ),
        )
        .when(
            name_c == PARTITION_METADATA,
            event("topic_record", topic=F.col("dir_topic"), topic_id=F.col("topic_id")),
        )
    )
    # partition.metadata: the topic_id line (2) is the record; others (1) header.
    is_record = F.when(name_c == PARTITION_METADATA, F.col("l.line_no") == 2).otherwise(~header)
    # null (no row) for the header lines of a good file: ignored by rule; so
    # is every line of a good file whose partition no path names (a
    # leader-epoch-checkpoint or partition.metadata outside its
    # ``<topic>-<partition>/`` folder: unattributable).
    attributable = (
        ~name_c.isin(LEADER_EPOCH, PARTITION_METADATA) | F.col("dir_partition").isNotNull()
    )
    rows = F.when(reason_c.isNotNull(), quarantined(reason_c, F.col("l.raw"))).when(
        is_record & name_c.isin(*READ) & attributable, F.array(entry)
    )
    exploded = per_line.select(
        "source_file",
        F.col("l.line_no").alias("line_no"),
        "observer",
        F.lit(None).cast("timestamp").alias("line_time"),
        F.lit(None).cast("long").alias("metadata_offset"),
        F.posexplode(rows).alias("pos", "row"),
    )
    return exploded.select("*", "row.*").drop("row")
