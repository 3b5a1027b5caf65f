"""Reading, numbering and classifying the raw lines of every input file.

Pass 1 (:func:`index_blocks`) is one cheap aggregate over every line: per
(file, block) the first row id and line count (for exact line numbers), the
marks that decide each file's kind, and a few tiny collections the parsers
need (dump section starts, topic records). Everything downstream joins its
small result back with a broadcast; no data goes to the driver.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pipeline.ingest import broker_log, checkpoint, metadata_dump, request_log, segment_dump
from pipeline.ingest import bundle as bundle_
from pipeline.ingest.outcome import long_substr

UNRECOGNISED = "unrecognised"

#: DESIGN.md "Inputs": the broker that wrote a file, from a whole directory
#: name like broker-1/, broker=1/, broker_1/ or kafka-1/ (case-insensitive).
#: The greedy ``.*`` takes the directory nearest to the file.
_OBSERVER_DIR = r"(?i)^.*/(?:broker|kafka)[-=_](\d{1,10})/"

#: A hive-style ``cluster=NAME/`` directory names the cluster of the files
#: below it, so one run can audit a fleet's archive (one folder per cluster).
#: It wins over ``--cluster``, which names the files outside such folders.
_CLUSTER_DIR = r"^.*/cluster=([^/]+)/"


def cluster(source_file: Column, default: str) -> Column:
    """The cluster a file belongs to: its ``cluster=NAME/`` folder, else ``default``."""
    from_path = F.regexp_extract(source_file, _CLUSTER_DIR, 1)
    return F.when(from_path != "", from_path).otherwise(F.lit(default))


def cluster_of(path: str, default: str) -> str:
    """:func:`cluster` for one path, on the driver."""
    match = re.match(_CLUSTER_DIR, path)
    return match.group(1) if match else default


def read_lines(
    spark: SparkSession, paths: list[str], bundles: Sequence[bundle_.Bundle] = ()
) -> tuple[DataFrame, list[str]]:
    """Every line of every file under ``paths``, and the files themselves.

    Returns (source_file, block_start, row_id, value) and the listed files.
    Files are found by content, so every file is read (recursively; Spark's
    text source decompresses ``.gz`` and friends by extension). A corrupt
    compressed file yields the lines read before the damage instead of
    failing the run (DESIGN.md: nothing in the input is fatal).

    ``row_id`` is assigned before any filter: ids are consecutive within a
    Spark partition, and a partition reads its file blocks one after the
    other, so ``row_id - min(row_id) of the (file, block)`` is the line's
    index inside the block (see :func:`block_offsets`).
    """
    if not paths:
        raise ValueError("ingest needs at least one input path")
    # Known gap: Spark's file listing skips names starting with '_' or '.', so
    # a Kafka data dir's ``__cluster_metadata-0/`` (its leader-epoch-checkpoint,
    # partition.metadata, quorum-state) is never read from a directory given
    # here. The fix is to list local paths ourselves (os.walk, no symlink out of
    # the tree) and pass explicit files, escaping Hadoop glob characters
    # (``*?[]{}\``) in their names; not done yet. file_stats has no row for
    # such files, so the gap is silent.
    text = (
        spark.read.option("recursiveFileLookup", "true")
        .option("ignoreCorruptFiles", "true")
        .text(paths)
    )
    raw = text.select(
        member_path(F.col("_metadata.file_path"), bundles).alias("source_file"),
        F.col("_metadata.file_block_start").alias("block_start"),
        F.monotonically_increasing_id().alias("row_id"),
        F.col("value"),
    )
    # inputFiles() is the driver's file listing (already done by read): it
    # is how a file with no line at all still gets its file_stats row.
    return raw, [member_path_of(spark_file_path(p), bundles) for p in text.inputFiles()]


def member_path(source_file: Column, bundles: Sequence[bundle_.Bundle]) -> Column:
    """A file extracted from a bundle is named ``<archive>!/<member>``."""
    out = source_file
    for b in bundles:
        out = F.when(
            source_file.startswith(b.prefix),
            F.concat(F.lit(b.archive + "!/"), long_substr(source_file, F.lit(len(b.prefix) + 1))),
        ).otherwise(out)
    return out


def member_path_of(path: str, bundles: Sequence[bundle_.Bundle]) -> str:
    """:func:`member_path` for one path, on the driver."""
    for b in bundles:
        if path.startswith(b.prefix):
            return b.archive + "!/" + path[len(b.prefix) :]
    return path


def spark_file_path(listed: str) -> str:
    """The listing says ``file:///x``, ``_metadata.file_path`` says ``file:/x``;
    every table keys files the way ``_metadata`` spells them."""
    return re.sub(r"^file:///", "file:/", listed)


def observer(source_file: Column, broker_id: int | None) -> Column:
    """The broker whose file it is: path first, then ``--broker-id``, else null."""
    from_path = F.nullif(F.regexp_extract(source_file, _OBSERVER_DIR, 1), F.lit(""))
    return F.coalesce(from_path.try_cast("int"), F.lit(broker_id).cast("int"))


def index_blocks(raw: DataFrame, collect: Mapping[str, Column]) -> DataFrame:
    """Pass 1: per (file, block) of the scan, the numbering base, the kind
    marks and the ``collect`` aggregates (which must stay tiny)."""
    value = F.col("value")
    return raw.groupBy("source_file", "block_start").agg(
        F.min("row_id").alias("first_row_id"),
        F.count(F.lit(1)).alias("lines"),
        F.count_if(request_log.marks_file(value)).alias("request_log_marks"),
        F.count_if(metadata_dump.marks_file(value)).alias("metadata_dump_marks"),
        F.count_if(broker_log.marks_file(value)).alias("broker_log_marks"),
        F.count_if(segment_dump.marks_file(value)).alias("segment_dump_marks"),
        F.count_if(segment_dump.metadata_header(value)).alias("metadata_headers"),
        *[agg.alias(name) for name, agg in collect.items()],
    )


def file_kind(
    request_log_marks: Column,
    metadata_dump_marks: Column,
    broker_log_marks: Column,
    is_checkpoint: Column,
    segment_dump_marks: Column | None = None,
    metadata_headers: Column | None = None,
) -> Column:
    """Kind by content: a checkpoint by name and first line (it is tiny and
    has no other mark), else the file's lines vote (a request log may quote
    anything in a client id, a dump may hold anything in a payload, a broker
    log may carry a stray request-log line); ties keep the older kinds.

    A data-log dump is decided by its ``Dumping`` headers alone (no other
    file kind has a line starting ``Dumping ``): some header names a file
    that is not the metadata log and none names the metadata log. Its
    record payloads may look like anything (even a metadata envelope), so
    they never vote."""
    rl, md, bl = request_log_marks, metadata_dump_marks, broker_log_marks
    sd = F.lit(0) if segment_dump_marks is None else segment_dump_marks
    mh = F.lit(0) if metadata_headers is None else metadata_headers
    return (
        F.when(is_checkpoint, F.lit(checkpoint.KIND))
        .when((rl > md) & (rl >= bl), F.lit(request_log.KIND))
        .when((sd > 0) & (mh == 0), F.lit(segment_dump.KIND))
        .when((md > 0) & (md >= bl), F.lit(metadata_dump.KIND))
        .when(bl > 0, F.lit(broker_log.KIND))
        .otherwise(F.lit(UNRECOGNISED))
    )


def block_offsets(blocks: DataFrame, broker_id: int | None) -> DataFrame:
    """Per block: lines in the file's earlier blocks, the file's kind,
    observer and line count. Blocks of one file are ordered by their start."""
    by_file = Window.partitionBy("source_file")
    earlier = by_file.orderBy("block_start").rowsBetween(Window.unboundedPreceding, -1)
    return blocks.select(
        "*",
        F.coalesce(F.sum("lines").over(earlier), F.lit(0)).alias("lines_before"),
        F.sum("lines").over(by_file).alias("lines_read"),
        file_kind(
            F.sum("request_log_marks").over(by_file),
            F.sum("metadata_dump_marks").over(by_file),
            F.sum("broker_log_marks").over(by_file),
            checkpoint.is_checkpoint(
                F.col("source_file"),
                # the file's first line: that of its first block
                F.max(F.when(F.col("block_start") == 0, F.col("cp_first_line"))).over(by_file),
            ),
            F.sum("segment_dump_marks").over(by_file),
            F.sum("metadata_headers").over(by_file),
        ).alias("kind"),
        observer(F.col("source_file"), broker_id).alias("observer"),
    )


def line_no(row_id: Column, first_row_id: Column, lines_before: Column) -> Column:
    """1-based line number within the file of a row of pass 1."""
    return row_id - first_row_id + lines_before + 1


def number_lines(raw: DataFrame, offsets: DataFrame) -> DataFrame:
    """(source_file, line_no, observer, kind, value) for every line.

    The numbering holds only if this scan splits and packs the files as
    pass 1's did. Both follow the session's ``spark.sql.files.*`` settings
    and its default parallelism, and the files must not change in between.
    A row outside its block's known range proves otherwise: the job fails
    with that message rather than attach wrong line numbers to evidence.
    """
    small = offsets.select(
        "source_file", "block_start", "first_row_id", "lines", "lines_before", "kind", "observer"
    )
    joined = raw.join(F.broadcast(small), ["source_file", "block_start"], "left")
    index_in_block = F.col("row_id") - F.col("first_row_id")
    numbered = F.when(
        index_in_block.between(F.lit(0), F.col("lines") - 1),
        index_in_block + F.col("lines_before") + 1,
    ).otherwise(F.raise_error(F.lit(SPLIT_CHANGED)))
    return joined.select(
        "source_file",
        numbered.alias("line_no"),
        "observer",
        "kind",
        "value",
    )


SPLIT_CHANGED = (
    "epochtrail ingest: the input files, or Spark's file-split settings "
    "(spark.sql.files.maxPartitionBytes / openCostInBytes / minPartitionNum, default "
    "parallelism), changed between ingest() and this action, so line numbers cannot be "
    "trusted; run ingest() again"
)


def file_index(
    spark: SparkSession, offsets: DataFrame, listed: list[str], broker_id: int | None
) -> DataFrame:
    """One row per input file: (source_file, kind, observer, lines_read).

    A full outer join with the listing, so that an empty file (no line, no
    block) is still reported, and a file would show twice rather than vanish
    if the two spellings of its path ever disagreed.
    """
    seen = offsets.groupBy("source_file").agg(
        F.first("kind").alias("kind"), F.first("lines_read").alias("lines_read")
    )
    listing = spark.createDataFrame([(p,) for p in listed], "source_file string")
    joined = listing.join(seen, "source_file", "full_outer")
    return joined.select(
        "source_file",
        F.coalesce(F.col("kind"), F.lit(UNRECOGNISED)).alias("kind"),
        observer(F.col("source_file"), broker_id).alias("observer"),
        F.coalesce(F.col("lines_read"), F.lit(0)).cast("long").alias("lines_read"),
    )
