"""The line table: every line of every text file, with where it sits.

Two routes, one shape (``source_file, block_start, idx, value``):

* **small files** (``sniff.py`` read them whole on the driver): cut into
  lines there, exactly as Hadoop's reader cuts them (LF, CR, CRLF), and
  handed to Spark as rows, so thousands of tiny files cost no file scan;
* **large files**: Spark's text source, one scan per artefact family, with
  file splits that are never packed together (``spark.sql.files.
  openCostInBytes`` = ``maxPartitionBytes``, set by ``session.get_spark``):
  each Spark partition reads exactly one block of one file, so a line's
  index in its partition is its index in its block (``idx``).

A line's place in its file is ``pos = 2 * block_start + idx``: a block
holds at most (its length + 1) lines, each starting at one of its bytes, so
the positions of one block never reach the next block's (2 * its start). The
readers order and join lines by ``pos``; line numbers come after the single
pass over the bytes: per block, the lines read are Spark's own input metric
for the task that read it (``plan.py``), and a line's number is the lines of
the earlier blocks of its file plus ``idx + 1``.

Listing rules (``list_files``), observers and clusters from paths are here
too; this module depends on no reader.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession

from pipeline import sqltext as F
from pipeline.ingest import bundle as bundle_
from pipeline.ingest.outcome import long_substr

#: ``idx`` from ``monotonically_increasing_id``: the row's index in its
#: partition is in the lower 33 bits.
_IDX_MASK = (1 << 33) - 1
#: The columns every line table has (readers add ``observer`` and ``kind``).
LINE_COLUMNS = ("source_file", "block_start", "idx", "pos", "value", "scanned")

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
    """The cluster a file belongs to: its ``cluster=NAME/`` folder, else ``default``.
    Evaluated on every row: a path without the folder's mark is decided by a
    substring test, the regex left to those with it."""
    from_path = F.regexp_extract(source_file, _CLUSTER_DIR, 1)
    return (
        F.when(F.instr(source_file, "/cluster=") == 0, F.lit(default))
        .when(from_path != "", from_path)
        .otherwise(F.lit(default))
    )


def cluster_of(path: str, default: str) -> str:
    """:func:`cluster` for one path, on the driver."""
    match = re.match(_CLUSTER_DIR, path)
    return match.group(1) if match else default


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


# --- the two routes ----------------------------------------------------------------


def position(block_start: Column, idx: Column) -> Column:
    """A line's place in its file (module docstring)."""
    return block_start * 2 + idx


def split_lines(data: bytes) -> list[bytes]:
    """Lines as Hadoop's LineReader cuts them: at LF, CR or CRLF; a final
    terminator ends the last line, it does not start an empty one (bytes'
    ``splitlines`` knows exactly these three terminators)."""
    return data.splitlines()


def small_lines(
    spark: SparkSession, files: Sequence[tuple[str, bytes]], bundles: Sequence[bundle_.Bundle]
) -> DataFrame:
    """The lines of files read whole on the driver: (listed path, content)."""
    names: list[str] = []
    idx: list[int] = []
    values: list[bytes] = []
    for path, content in files:
        name = member_path_of(path, bundles)
        for i, line in enumerate(split_lines(content)):
            names.append(name)
            idx.append(i)
            values.append(line)
    table = pa.table(
        {
            "source_file": pa.array(names, pa.string()),
            "idx": pa.array(idx, pa.int64()),
            "raw": pa.array(values, pa.binary()),
        }
    )
    rows = spark.createDataFrame(table)
    # binary -> string keeps the bytes as they are, as the text source does
    # (invalid UTF-8 stays invalid, for the readers' is_valid_utf8 check).
    return rows.select(
        "source_file",
        F.lit(0).cast("long").alias("block_start"),
        "idx",
        position(F.lit(0).cast("long"), F.col("idx")).alias("pos"),
        F.col("raw").cast("string").alias("value"),
        F.lit(False).alias("scanned"),
    )


def scan(spark: SparkSession, files: Sequence[str], bundles: Sequence[bundle_.Bundle]) -> DataFrame:
    """The lines of large files through Spark's text source (``scanned``).

    ``monotonically_increasing_id`` is taken right above the scan, before any
    filter (Spark pushes no filter below a nondeterministic column), so a
    row's index counts every line of its block. A corrupt compressed file
    yields the lines read before the damage (DESIGN.md: nothing is fatal).
    """
    text = (
        spark.read.option("recursiveFileLookup", "true")
        .option("ignoreCorruptFiles", "true")
        .text([escape_glob(f) for f in files])
    )
    row_id = F.monotonically_increasing_id()
    raw = text.select(
        member_path(unquoted(F.col("_metadata.file_path")), bundles).alias("source_file"),
        F.col("_metadata.file_block_start").alias("block_start"),
        row_id.alias("row_id"),
        F.col("value"),
    )
    idx = F.col("row_id").bitwiseAND(F.lit(_IDX_MASK))
    return raw.select(
        "source_file",
        "block_start",
        idx.alias("idx"),
        position(F.col("block_start"), idx).alias("pos"),
        "value",
        F.lit(True).alias("scanned"),
    )


def unquoted(file_path: Column) -> Column:
    """A path as the listing spells it (``file:/dir/a[1] b.log``), from the
    URI Spark's ``_metadata.file_path`` gives (``file:/dir/a%5B1%5D%20b.log``):
    percent escapes decoded, a literal ``+`` kept (URI paths do not encode it,
    form decoding would turn it into a space)."""
    return F.url_decode(F.replace(file_path, F.lit("+"), F.lit("%2B")))


def with_observer(lines: DataFrame, broker_id: int | None) -> DataFrame:
    return lines.withColumn("observer", observer(F.col("source_file"), broker_id))


def numbered(lines: DataFrame, blocks: DataFrame) -> DataFrame:
    """``lines`` (of either route) with their ``line_no``, from the block
    table (source_file, block_start, lines_before, lines) of the pass that
    numbered them. A line outside its block's known range proves that the
    files or Spark's split settings changed since: fail rather than attach
    wrong line numbers to evidence."""
    joined = lines.join(F.broadcast(blocks), ["source_file", "block_start"], "left")
    line_no = F.when(
        F.col("idx").between(F.lit(0), F.col("lines") - 1),
        F.col("idx") + F.col("lines_before") + 1,
    ).otherwise(F.raise_error(F.lit(SPLIT_CHANGED)))
    return joined.select(*[c for c in lines.columns], line_no.alias("line_no"))


SPLIT_CHANGED = (
    "epochtrail ingest: the input files, or Spark's file-split settings "
    "(spark.sql.files.maxPartitionBytes / openCostInBytes), changed between ingest() and "
    "this action, so line numbers cannot be trusted; run ingest() again"
)
