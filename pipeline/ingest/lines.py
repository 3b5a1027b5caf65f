"""Reading, numbering and classifying the raw lines of every input file.

Pass 1 (:func:`index_blocks`) is one cheap aggregate over every line: per
(file, block) the first row id and line count (for exact line numbers), the
marks that decide each file's kind, and a few tiny collections the parsers
need (dump section starts, topic records). Everything downstream joins its
small result back with a broadcast; no data goes to the driver.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pipeline.ingest import (
    broker_log,
    checkpoint,
    metadata_dump,
    request_log,
    segment_dump,
    znode_dump,
)
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
    spark: SparkSession,
    paths: list[str],
    bundles: Sequence[bundle_.Bundle] = (),
    files: Sequence[str] | None = None,
) -> tuple[DataFrame, list[str]]:
    """Every line of every file under ``paths``, and the files themselves.

    Returns (source_file, block_start, row_id, value) and the listed files.
    ``files`` is the explicit list to read (:func:`list_files` of ``paths``
    when not given; ``ingest`` passes it without the binary log files).
    Files are found by content, so every file is read (Spark's text source
    decompresses ``.gz`` and friends by extension). A corrupt compressed
    file yields the lines read before the damage instead of failing the run
    (DESIGN.md: nothing in the input is fatal).

    ``row_id`` is assigned before any filter: ids are consecutive within a
    Spark partition, and a partition reads its file blocks one after the
    other, so ``row_id - min(row_id) of the (file, block)`` is the line's
    index inside the block (see :func:`block_offsets`).
    """
    if not paths:
        raise ValueError("ingest needs at least one input path")
    if files is None:
        files = list_files(spark, paths)
    if not files:
        empty = spark.createDataFrame(
            [], "source_file string, block_start long, row_id long, value string"
        )
        return empty, []
    # Explicit files (list_files): Spark's own listing would skip the
    # ``__cluster_metadata-0/`` folder of a Kafka data dir.
    # recursiveFileLookup also turns off partition inference (a cluster=NAME/
    # folder must stay part of the path, not become a column).
    text = (
        spark.read.option("recursiveFileLookup", "true")
        .option("ignoreCorruptFiles", "true")
        .text([escape_glob(f) for f in files])
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


# --- listing ---------------------------------------------------------------------------

#: Hadoop glob metacharacters, escaped in the explicit paths handed to Spark.
_GLOB = frozenset("*?[]{}\\")


def escape_glob(path: str) -> str:
    """``path`` with Hadoop's glob characters escaped, so Spark reads that file."""
    return "".join("\\" + c if c in _GLOB else c for c in path)


def _unescape_glob(path: str) -> str:
    return re.sub(r"\\([*?\[\]{}\\])", r"\1", path)


def _skipped(name: str) -> bool:
    """Spark's text and binary-file sources drop a file whose own name starts
    with ``_`` or ``.`` even when named explicitly, so such files are not
    listed (no file_stats row that no reader would fill). Folders starting
    with ``_`` are walked (``__cluster_metadata-0/``); hidden ``.`` folders
    (``.git``, editor and Hadoop ``.crc`` litter) are not."""
    return name.startswith(("_", "."))


def local_file(path: str) -> str | None:
    """The local path behind a listed or given path (no scheme, or
    ``file:``), else None. ``file:`` paths here are not URL-encoded."""
    if path.startswith("file:"):
        rest = path[len("file:") :]
        return rest[2:] if rest.startswith("///") else rest
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
        return None
    return path


def list_files(spark: SparkSession, paths: Sequence[str]) -> list[str]:
    """Every file under ``paths``, recursively, as explicit paths: local ones
    as ``file:/abs/path`` (``os.walk``; no symbolic link is followed out of
    the given tree), other schemes through Hadoop's FileSystem API (globs
    allowed there). A path that matches nothing raises ValueError.

    Spark's own listing skips names starting with ``_`` or ``.``, so a Kafka
    data dir's ``__cluster_metadata-0/`` would never be read from a folder.
    """
    out: list[str] = []
    for given in paths:
        local = local_file(given)
        found: list[str] | None = None
        if local is not None:
            for candidate in (local, _unescape_glob(local)):
                if os.path.lexists(candidate):
                    found = _walk_local(candidate)
                    break
            if found is None and any(c in _GLOB for c in local):
                # a local glob: Hadoop's glob syntax, as Spark read it before
                found = _list_hadoop(spark, "file:" + os.path.abspath(local))
        else:
            found = _list_hadoop(spark, given)
        if found is None:
            raise ValueError(f"input path does not exist: {given}")
        out += found
    return list(dict.fromkeys(out))


def _walk_local(path: str) -> list[str]:
    # Paths keep the names given (a broker-1/ folder may be a link: its name
    # names the observer); links are checked against the real tree.
    top = os.path.abspath(path)
    if os.path.isfile(top):
        # A file named explicitly is handed over whatever its name (Spark
        # drops a leading '_' or '.' file even then, as it always did).
        return ["file:" + Path(top).as_posix()]
    root = os.path.realpath(top)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if _skipped(name):
                continue
            full = os.path.join(dirpath, name)
            real = os.path.realpath(full)
            # A symbolic link may point anywhere: only inside the tree.
            if not os.path.isfile(real) or os.path.commonpath([root, real]) != root:
                continue
            out.append("file:" + Path(full).as_posix())
    return out


def hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """(Hadoop FileSystem, Path) of ``path`` through the session's JVM."""
    jvm: Any = spark._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark._jsc.hadoopConfiguration()), hpath


def _list_hadoop(spark: SparkSession, given: str) -> list[str] | None:
    """Files under ``given`` (a glob allowed) through the JVM's Hadoop
    FileSystem, recursively; None when nothing matches."""
    fs, hpath = hadoop_path(spark, given)
    statuses = fs.globStatus(hpath)
    if not statuses:
        return None
    out: list[str] = []
    for status in statuses:
        if not status.isDirectory():
            out.append(status.getPath().toString())
            continue
        root = status.getPath().toString().rstrip("/") + "/"
        files = fs.listFiles(status.getPath(), True)
        while files.hasNext():
            f = files.next().getPath().toString()
            below = f[len(root) :] if f.startswith(root) else f.rsplit("/", 1)[-1]
            parts = below.split("/")
            if any(p.startswith(".") for p in parts[:-1]) or _skipped(parts[-1]):
                continue
            out.append(f)
    return sorted(out)


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
        F.count_if(znode_dump.marks_file(value)).alias("znode_dump_marks"),
        *[agg.alias(name) for name, agg in collect.items()],
    )


def file_kind(
    request_log_marks: Column,
    metadata_dump_marks: Column,
    broker_log_marks: Column,
    is_checkpoint: Column,
    segment_dump_marks: Column | None = None,
    metadata_headers: Column | None = None,
    znode_dump_marks: Column | None = None,
) -> Column:
    """Kind by content: a checkpoint by name and first line (it is tiny and
    has no other mark), else the file's lines vote (a request log may quote
    anything in a client id, a dump may hold anything in a payload, a broker
    log may carry a stray request-log line); ties keep the older kinds.

    A data-log dump is decided by its ``Dumping`` headers alone (no other
    file kind has a line starting ``Dumping ``): some header names a file
    that is not the metadata log and none names the metadata log. Its
    record payloads may look like anything (even a metadata envelope), so
    they never vote.

    A ZooKeeper znode dump is decided by its partition-state JSON lines
    (``{"controller_epoch":..,"leader_epoch":..}`` at the start of a line,
    keys no other artefact writes in snake case) when they outnumber the
    broker-log and metadata-dump marks (a log may quote a state, not start
    a line with one)."""
    rl, md, bl = request_log_marks, metadata_dump_marks, broker_log_marks
    sd = F.lit(0) if segment_dump_marks is None else segment_dump_marks
    mh = F.lit(0) if metadata_headers is None else metadata_headers
    zn = F.lit(0) if znode_dump_marks is None else znode_dump_marks
    return (
        F.when(is_checkpoint, F.lit(checkpoint.KIND))
        .when((rl > md) & (rl >= bl), F.lit(request_log.KIND))
        .when((sd > 0) & (mh == 0), F.lit(segment_dump.KIND))
        .when((zn > 0) & (zn > md) & (zn > bl), F.lit(znode_dump.KIND))
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
            F.sum("znode_dump_marks").over(by_file),
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
