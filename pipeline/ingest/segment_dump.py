"""``kafka-dump-log.sh --files <segment>.log`` of a data partition, kafka-formats.md section 3.

Same tool and line grammar as the metadata dump (section 2.1): per dumped
file a ``Dumping <path>`` header, ``Starting offset:`` / ``Log starting
offset:``, one batch line per batch::

    baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1
    producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false
    [deleteHorizonMs: OptionalLong.empty ]position: 0 CreateTime: 1739569505569 size: 131
    magic: 2 compresscodec: none crc: 90285099 isvalid: true

(one line) and, with ``--deep-iteration`` / ``--print-data-log``, one
``| offset: ...`` line per record. A dump whose ``Dumping`` path does not
name ``__cluster_metadata`` is a data-log dump (the metadata dump is
``metadata_dump.py``).

Each batch line is one ``segment_batch`` event: replica = observer, topic and
partition from the dumped path's ``<topic>-<partition>/`` folder, base and
last offset, leader_epoch = partitionLeaderEpoch, event_time = the batch's
(max) timestamp. Record lines, headers, trailers and magic v0/v1 entries
(``offset: N position: ...``) are ignored by rule. A batch the tool marks
``isvalid: false`` (CRC mismatch) is quarantined, as is a batch line we
cannot read or one whose dumped path names no partition folder.

Columns are prefixed ``sd_`` and are null for lines of other file kinds.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window

from pipeline import sqltext as F
from pipeline.ingest.outcome import event, unreadable_reason

KIND = "segment_dump"

_DUMPING = "Dumping "
_METADATA_LOG = "__cluster_metadata"
_BATCH = "baseOffset: "
#: ``<topic>-<partition>/<segment file>``: the partition after the last '-'.
_PARTITION_DIR = r"(?:^|/)([^/]+)-(\d+)/[^/]+$"
#: The batch line's fields we read (section 3), each by its key.
_FIELDS: dict[str, str] = {
    "base_offset": r"^baseOffset: (-?\d{1,19}) ",
    "last_offset": r" lastOffset: (-?\d{1,19}) ",
    "leader_epoch": r" partitionLeaderEpoch: (-?\d{1,10}) ",
    "timestamp": r" (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d{1,19}) ",
    "isvalid": r" isvalid: (true|false)\s*$",
}
#: Timestamps beyond year 9999 are not dates (same bound as metadata_dump).
_MAX_MILLIS = 253402300799999

INVALID_BATCH_REASON = "segment batch with isvalid: false"
UNRECOGNISED_REASON = "unrecognised segment batch line"
NO_PARTITION_REASON = "segment dump path names no <topic>-<partition> folder"


# --- file recognition and the first pass -------------------------------------------


def marks_line(line: str) -> bool:
    """A ``Dumping`` header of a file that is not the metadata log."""
    return line.startswith(_DUMPING) and _METADATA_LOG not in line


def metadata_header_line(line: str) -> bool:
    """A ``Dumping`` header of the metadata log: the file is no data dump."""
    return line.startswith(_DUMPING) and _METADATA_LOG in line


def sections(lines: DataFrame) -> DataFrame:
    """(source_file, first_pos, next_first_pos, topic, partition) of every
    ``Dumping`` header of the dump ``lines`` (a handful per file)."""
    header = F.col("value").startswith(_DUMPING) & (F.instr(F.col("value"), _METADATA_LOG) == 0)
    headers = lines.filter(header).select(
        "source_file", "pos", F.substring("value", len(_DUMPING) + 1, 4096).alias("path")
    )
    by_file = Window.partitionBy("source_file").orderBy("pos")
    path = F.rtrim(F.col("path"))
    return headers.select(
        "source_file",
        F.col("pos").alias("first_pos"),
        F.lead("pos").over(by_file).alias("next_first_pos"),
        F.nullif(F.regexp_extract(path, _PARTITION_DIR, 1), F.lit("")).alias("topic"),
        F.nullif(F.regexp_extract(path, _PARTITION_DIR, 2), F.lit(""))
        .try_cast("int")
        .alias("partition"),
    )


def with_sections(df: DataFrame, section_table: DataFrame, is_segment_dump: Column) -> DataFrame:
    """The dumped partition of each line (broadcast range join, a handful of
    sections per file, as metadata_dump.with_sections)."""
    s = F.broadcast(section_table.alias("sd_s"))
    cond = (
        is_segment_dump
        & (F.col("l.source_file") == F.col("sd_s.source_file"))
        & (F.col("l.pos") >= F.col("sd_s.first_pos"))
        & (F.col("sd_s.next_first_pos").isNull() | (F.col("l.pos") < F.col("sd_s.next_first_pos")))
    )
    joined = df.alias("l").join(s, cond, "left")
    return joined.select(
        "l.*",
        F.col("sd_s.topic").alias("sd_topic"),
        F.col("sd_s.partition").alias("sd_partition"),
    )


def needs_a_look(value: Column) -> Column:
    """Batch lines only; everything else in a data dump is ignored by rule."""
    return value.startswith(_BATCH)


# --- stages ---------------------------------------------------------------------------


def with_cheap_columns(df: DataFrame, is_segment_dump: Column) -> DataFrame:
    v = F.col("value")
    staged = df.select("*", F.when(is_segment_dump, unreadable_reason(v)).alias("sd_unreadable"))
    readable = is_segment_dump & F.col("sd_unreadable").isNull() & needs_a_look(v)
    staged = staged.select("*", F.when(readable, v).alias("sd_value"))
    r = F.col("sd_value")
    return staged.select(
        "*",
        *[
            F.nullif(F.regexp_extract(r, regex, 1), F.lit("")).alias(f"sd_{name}")
            for name, regex in _FIELDS.items()
        ],
    )


def with_verdict(df: DataFrame) -> DataFrame:
    """``sd_events`` (the batch's event), ``sd_quarantine`` and ``sd_time``."""
    r = F.col("sd_value")
    base = F.col("sd_base_offset").try_cast("long")
    last = F.col("sd_last_offset").try_cast("long")
    epoch = F.col("sd_leader_epoch").try_cast("int")
    ts = F.col("sd_timestamp").try_cast("long")
    readable = (
        base.isNotNull() & last.isNotNull() & epoch.isNotNull() & (F.col("sd_isvalid").isNotNull())
    )
    quarantine = (
        F.when(F.col("sd_unreadable").isNotNull(), F.col("sd_unreadable"))
        .when(r.isNull(), F.lit(None))
        .when(~readable, F.lit(UNRECOGNISED_REASON))
        .when(F.col("sd_isvalid") == "false", F.lit(INVALID_BATCH_REASON))
        .when(F.col("sd_partition").isNull(), F.lit(NO_PARTITION_REASON))
    )
    batch = event(
        "segment_batch",
        topic=F.col("sd_topic"),
        partition=F.col("sd_partition"),
        replica=F.col("observer"),
        base_offset=base,
        last_offset=last,
        leader_epoch=epoch,
    )
    return df.select(
        "*",
        F.when(r.isNotNull(), F.array(batch)).alias("sd_events"),
        quarantine.alias("sd_quarantine"),
        F.when(ts.between(0, _MAX_MILLIS), F.timestamp_millis(ts)).alias("sd_time"),
    )
