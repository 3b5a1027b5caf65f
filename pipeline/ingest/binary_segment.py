"""Raw binary log files through Spark: metadata segments, snapshots, data segments.

Issue 4 kinds 3 and 4. The decoding is ``kafka_binary.py`` (pure Python);
this module decides which files are binary, distributes the decoding with
Spark's binary file source and ``mapInArrow``, and shapes its output into
the outcome rows every text parser produces, so that ``events``,
``quarantine`` and ``file_stats`` need no special case.

* **Candidates** are decided on the driver from the file listing: a name
  ``<20 digits>.log`` or ``<20 digits>-<10 digits>.checkpoint``
  (``kafka_binary.classify``), confirmed by sniffing the first bytes
  (``kafka_binary.looks_binary``): a text file so named (a saved
  ``kafka-dump-log`` output, say) goes to the text path like any other.
* **The unit of accounting is the record batch**: ``line_no`` of a binary
  file is the 1-based ordinal of the batch in the file, lines_read is its
  number of batches (plus one for unreadable trailing bytes). A unit is
  parsed (it yields events), ignored by rule (a control batch, a batch of
  record types we do not read, a magic 0/1 entry), or quarantined whole
  (bad CRC, torn, undecodable, inflating past the limit per batch).
* ``RAW_LINES`` gets one row per unit whose text is the batch as
  ``kafka-dump-log`` prints its batch line, so evidence and quarantine show
  readable text.
* Events inside a unit get ``pos`` = their order among the batch's events
  (0, 1, ...; a record of a type we do not read takes no position), which
  keeps the records' order in ``seq`` and gives the unit's first event
  ``pos`` 0, which is what the accounting counts as a parsed line (with the
  record's index instead, a batch whose first record is ignored would count
  as ignored though it yields events).
  Metadata events carry the record's offset in ``metadata_offset``
  (snapshot records: end offset - 1, as the text dump's snapshot sections).
  Data-segment batches are ``segment_batch`` events whose replica is the
  observer and whose topic and partition come from the
  ``<topic>-<partition>/`` folder.

Memory: local files (``file:``) are opened by path in the executor and read
by seeking (only ``path`` is selected from the binary file source, so Spark
never loads ``content``): a data segment is read batch by batch, a large
batch in pieces of at most 8 MiB. Other schemes select ``content`` (the
whole file in memory, up to Spark's 2 GiB binary-file limit). Every batch's
CRC-32C is checked, data segments' included (``VERIFY_DATA_CRC``), with the
native google-crc32c extension (GB/s; the pure-Python fallback, if the
extension is missing, runs at about 10 MB/s).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from pipeline import sqltext as F
from pipeline.ingest import bundle as bundle_
from pipeline.ingest import kafka_binary
from pipeline.ingest import lines as lines_
from pipeline.ingest.outcome import OUTCOME_ROW, QUARANTINE_TEXT_LIMIT
from pipeline.session import local_frame

KINDS = (kafka_binary.METADATA_SEGMENT, kafka_binary.DATA_SEGMENT)
#: Check data-segment CRCs too (reads every byte; see the module docstring).
#: False reads the 61-byte headers only (``isvalid: not checked``).
VERIFY_DATA_CRC = True
#: Rows per Arrow batch handed back to Spark.
_ROWS_PER_BATCH = 8192
_HEAD = 64
_MAX_MILLIS = 253_402_300_799_999

#: What the decoder hands Spark: one row per outcome row of each unit (an
#: ignored unit: one row with pos, kind and reason null, as posexplode_outer
#: gives for a line without rows), and the unit's text on its first row.
DECODED = StructType(
    [
        StructField("source_file", StringType(), False),
        StructField("file_kind", StringType(), False),
        StructField("line_no", LongType(), False),
        StructField("time_ms", LongType(), True),
        StructField("metadata_offset", LongType(), True),
        StructField("pos", IntegerType(), True),
        *[StructField(f.name, f.dataType, True) for f in OUTCOME_ROW.fields],
        StructField("value", StringType(), True),
    ]
)


def _arrow_type(dtype: DataType) -> pa.DataType:
    if isinstance(dtype, StringType):
        return pa.string()
    if isinstance(dtype, LongType):
        return pa.int64()
    if isinstance(dtype, IntegerType):
        return pa.int32()
    if isinstance(dtype, BooleanType):
        return pa.bool_()
    if isinstance(dtype, ArrayType) and isinstance(dtype.elementType, IntegerType):
        return pa.list_(pa.int32())
    raise TypeError(f"no Arrow type for {dtype}")


# --- driver: which files are binary ---------------------------------------------------


def split(spark: SparkSession, files: Sequence[str]) -> tuple[list[str], list[str]]:
    """(text files, binary files) of a listing (``lines.list_files``)."""
    text: list[str] = []
    binary: list[str] = []
    for f in files:
        if kafka_binary.classify(f) is not None and kafka_binary.looks_binary(head(spark, f)):
            binary.append(f)
        else:
            text.append(f)
    return text, binary


def head(spark: SparkSession, path: str, n: int = _HEAD) -> bytes:
    """The first ``n`` bytes of a listed file (b"" if it cannot be read:
    it is then decoded, and quarantined, rather than read as text)."""
    local = lines_.local_file(path)
    try:
        if local is not None:
            with open(local, "rb") as f:
                return f.read(n)
        fs, hpath = lines_.hadoop_path(spark, path)
        stream = fs.open(hpath)
        try:
            return bytes(stream.readNBytes(n))
        finally:
            stream.close()
    except Exception:  # noqa: BLE001  (an unreadable file is quarantined downstream)
        return b""


# --- executors: decode ---------------------------------------------------------------


def _local_path(spark_path: str) -> str | None:
    """The local file behind a binary-file-source ``path`` (``file:/x``, not
    URL-encoded there), else None."""
    if not spark_path.startswith("file:"):
        return None
    rest = spark_path[len("file:") :]
    return rest[2:] if rest.startswith("///") else rest


def _unit_rows(path: str, content: bytes | None, verify: bool) -> Iterator[kafka_binary.Unit]:
    local = _local_path(path)
    if local is not None and content is None:
        try:
            f = open(local, "rb")  # noqa: SIM115  (closed below, after the generator)
        except OSError as e:
            yield kafka_binary.Unit(1, f"cannot open {path}", reason=f"cannot open file: {e}")
            return
        with f:
            last = 0
            try:
                size = f.seek(0, 2)
                src: kafka_binary.Source = kafka_binary.FileSource(f, size)
                for unit in kafka_binary.decode_file(path, src, verify):
                    last = unit.ordinal
                    yield unit
            except OSError as e:  # the file changed or vanished under us
                reason = f"read error: {e}"
                yield kafka_binary.Unit(last + 1, f"read error in {path}", reason=reason)
        return
    src = kafka_binary.BytesSource(content or b"")
    yield from kafka_binary.decode_file(path, src, verify)


def _decoder(verify: bool) -> Any:
    names = [f.name for f in DECODED.fields]
    schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in DECODED.fields])
    event_names = [f.name for f in OUTCOME_ROW.fields if f.name not in ("reason", "text")]

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        cols: dict[str, list[Any]] = {n: [] for n in names}

        def row(values: dict[str, Any]) -> None:
            for n in names:
                cols[n].append(values.get(n))

        def flush() -> pa.RecordBatch:
            out = pa.RecordBatch.from_pydict(cols, schema=schema)
            for n in names:
                cols[n] = []
            return out

        for batch in batches:
            data = batch.to_pydict()
            contents = data.get("content") or [None] * batch.num_rows
            for source_file, path, content in zip(
                data["source_file"], data["path"], contents, strict=True
            ):
                kind = _kind_of(path)
                for unit in _unit_rows(path, content, verify):
                    common = {
                        "source_file": source_file,
                        "file_kind": kind,
                        "line_no": unit.ordinal,
                        "value": unit.text,
                    }
                    if unit.reason is not None:
                        row(
                            {
                                **common,
                                "time_ms": unit.time_ms,
                                "pos": 0,
                                "reason": unit.reason,
                                "text": unit.text[:QUARANTINE_TEXT_LIMIT],
                                "text_truncated": len(unit.text) > QUARANTINE_TEXT_LIMIT,
                            }
                        )
                    elif not unit.events:
                        row({**common, "time_ms": unit.time_ms})
                    for pos, event in enumerate(unit.events if unit.reason is None else ()):
                        values = {k: event.get(k) for k in event_names}
                        values.update(
                            source_file=source_file,
                            file_kind=kind,
                            line_no=unit.ordinal,
                            time_ms=event.get("time_ms"),
                            metadata_offset=event.get("metadata_offset"),
                            pos=pos,
                            value=unit.text if pos == 0 else None,
                        )
                        row(values)
                    if len(cols["line_no"]) >= _ROWS_PER_BATCH:
                        yield flush()
        if cols["line_no"]:
            yield flush()

    return decode


def decode(
    spark: SparkSession,
    files: Sequence[str],
    bundles: Sequence[bundle_.Bundle] = (),
    broker_id: int | None = None,
    verify_data_crc: bool = VERIFY_DATA_CRC,
) -> tuple[DataFrame, DataFrame]:
    """(decoded, listed) for ``files`` (binary candidates from :func:`split`).

    decoded: DECODED's columns plus ``observer`` and ``line_time``, with
    ``replica`` = observer for ``segment_batch``; listed: (source_file,
    file_kind, observer) per file, spelled as ``_metadata.file_path`` spells
    it (as the text path keys files). Lazy; each action decodes again."""
    local = [f for f in files if lines_.local_file(f) is not None]
    remote = [f for f in files if lines_.local_file(f) is None]
    parts = []
    reads = []
    for group, columns in ((local, ["path"]), (remote, ["path", "content"])):
        if not group:
            continue
        read = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load([lines_.escape_glob(f) for f in group])
        )
        reads.append(read)
        source_file = lines_.member_path(F.col("_metadata.file_path"), bundles)
        parts.append(read.select(source_file.alias("source_file"), *columns))
    if not parts:
        raise ValueError("no binary file to decode")
    inputs = parts[0]
    for p in parts[1:]:
        inputs = inputs.unionByName(p, allowMissingColumns=True)
    decoded = inputs.mapInArrow(_decoder(verify_data_crc), DECODED)
    # The scan skips empty files (an empty active segment is common): the
    # listing comes from the driver's file index, spelled as _metadata is.
    spelled = [
        lines_.member_path_of(lines_.spark_file_path(p), bundles)
        for r in reads
        for p in r.inputFiles()
    ]
    rows = [(p, _kind_of(p)) for p in spelled]
    listed = local_frame(spark, rows, "source_file string, file_kind string")
    observer = lines_.observer(F.col("source_file"), broker_id)
    listed = listed.select("source_file", "file_kind", observer.alias("observer"))
    return _finish(decoded, broker_id), listed


def _kind_of(path: str) -> str:
    kind = kafka_binary.classify(path)
    return kafka_binary.DATA_SEGMENT if kind is None else kind[0]


def _finish(decoded: DataFrame, broker_id: int | None) -> DataFrame:
    observer = lines_.observer(F.col("source_file"), broker_id)
    ts = F.col("time_ms")
    out = decoded.select(
        "*",
        observer.alias("observer"),
        F.when(ts.between(0, _MAX_MILLIS), F.timestamp_millis(ts)).alias("line_time"),
    )
    return out.withColumn(
        "replica",
        F.when(F.col("kind") == "segment_batch", F.col("observer")).otherwise(F.col("replica")),
    )


# --- shapes the ingest plan unions ---------------------------------------------------


def outcomes(decoded: DataFrame) -> DataFrame:
    """(source_file, line_no, observer, line_time, metadata_offset, pos,
    <OUTCOME_ROW fields>), as ``ingest._outcomes`` gives."""
    return decoded.select(
        "source_file",
        "line_no",
        "observer",
        "line_time",
        "metadata_offset",
        "pos",
        *[f.name for f in OUTCOME_ROW.fields],
    )


def raw_lines(decoded: DataFrame) -> DataFrame:
    """RAW_LINES rows: one per unit, its kafka-dump-log style text."""
    return decoded.filter(F.col("value").isNotNull()).select(
        "source_file", "line_no", "observer", "value"
    )


def file_rows(decoded: DataFrame, listed: DataFrame) -> DataFrame:
    """(source_file, kind, observer, lines_read) per binary file; ``listed``
    (source_file, file_kind, observer) keeps a file without any batch."""
    units = decoded.groupBy("source_file").agg(F.max("line_no").alias("lines_read"))
    joined = listed.join(units, "source_file", "left")
    return joined.select(
        "source_file",
        F.col("file_kind").alias("kind"),
        "observer",
        F.coalesce(F.col("lines_read"), F.lit(0)).cast("long").alias("lines_read"),
    )


def topic_names(decoded: DataFrame, cluster: str) -> DataFrame:
    """(cluster, topic_id, topic) from the decoded TOPIC_RECORDs."""
    return decoded.filter(F.col("kind") == "topic_record").select(
        lines_.cluster(F.col("source_file"), cluster).alias("cluster"), "topic_id", "topic"
    )
