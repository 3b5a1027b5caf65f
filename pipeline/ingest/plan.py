"""Ingest: raw artefacts -> silver ``partition_events`` + quarantine + accounting.

One trip through the data, as it flows:

1. **List** every file under the inputs (``lines.list_files``; bundles are
   extracted first, ``bundle.py``); Kafka's binary log segments go to their
   own decoder (``binary_segment.py``).
2. **Sniff** each text file's head on the driver (``sniff.py``): its kind,
   whether it is text at all, and, for a small file, its whole content.
3. **Read each family from its own files**, in one Spark job: per kind
   present, one reader over its line table (``lines.py``: small files as
   driver rows, large ones as a text scan whose partitions are single file
   blocks). A reader is a chain of DataFrame stages (string tests, then
   narrow parsing of the candidates only, then outcome rows); no plan holds
   a parser for a kind absent from the input. Every line's outcome rows
   (events, or one quarantine row) come out of one ``posexplode_outer``.
4. **Number** the lines after that single pass: per block, the number of
   lines is Spark's own input metric for the task that read it (each task
   reads one block); a line's number is the lines of its file's earlier
   blocks plus its index in its block, plus one. Nothing is scanned twice.
5. **Account**: per file, read = parsed + ignored + quarantined; lines no
   reader looked at are ignored by rule.

Re-flowed broker-log lines (a template cut over two physical lines) are
re-joined after the pass, from the open starts it found (``broker_log.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.types import (
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pipeline import sqltext as F
from pipeline.ingest import binary_segment as binary_
from pipeline.ingest import (
    broker_log,
    checkpoint,
    metadata_dump,
    request_log,
    segment_dump,
    sniff,
    views,
    znode_dump,
)
from pipeline.ingest import bundle as bundle_
from pipeline.ingest import lines as lines_
from pipeline.ingest.outcome import EVENT_FIELDS, OUTCOME_ROW, SEQ_STRIDE, quarantined, too_long
from pipeline.session import evaluated_interpreted, local_frame, materialise, release
from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE, RAW_LINES

__all__ = ["IngestResult", "ingest"]


@dataclass(frozen=True)
class IngestResult:
    events: DataFrame  # schema == schemas.tables.PARTITION_EVENTS
    quarantine: DataFrame  # schema == schemas.tables.QUARANTINE
    file_stats: DataFrame  # schema == schemas.tables.FILE_STATS, one row per input file
    lines: DataFrame  # schema == schemas.tables.RAW_LINES (lazy: scans again when used)
    cached: tuple[DataFrame, ...] = ()
    #: extracted incident bundles: their files must outlive every action
    bundles: tuple[bundle_.Bundle, ...] = ()
    #: per text file, what the head showed (kind, and why a file was not read)
    sniffed: tuple[sniff.Sniffed, ...] = ()
    #: RAW_LINES of the files named (all with None): reads only those files
    lines_of: Callable[[list[str] | None], DataFrame] | None = field(default=None, compare=False)

    def unpersist(self) -> None:
        """Release cached frames and delete extracted bundle files."""
        for df in self.cached:
            release(df)
        bundle_.cleanup(list(self.bundles))


#: What each family's reader needs: its prefix, which lines it looks at, and
#: its stages given the guard column ("this line needs a look").
_Stages = Callable[[DataFrame, Column, DataFrame], DataFrame]


@dataclass(frozen=True)
class _Reader:
    prefix: str
    needs_a_look: Callable[[Column], Column]
    #: (lines, guard, the family's own lines for its context) -> staged
    stages: _Stages


def _request_log(df: DataFrame, guard: Column, _: DataFrame) -> DataFrame:
    return (
        df.transform(lambda d: request_log.with_cheap_columns(d, guard))
        .transform(request_log.with_parsed)
        .transform(request_log.with_verdict)
    )


def _metadata_dump(df: DataFrame, guard: Column, own: DataFrame) -> DataFrame:
    return (
        df.transform(lambda d: metadata_dump.with_sections(d, metadata_dump.sections(own), guard))
        .transform(lambda d: metadata_dump.with_cheap_columns(d, guard))
        .transform(metadata_dump.with_parsed)
        .transform(metadata_dump.with_verdict)
    )


def _broker_log(df: DataFrame, guard: Column, _: DataFrame) -> DataFrame:
    staged = (
        df.transform(lambda d: broker_log.with_cheap_columns(d, guard))
        .transform(broker_log.with_parsed)
        .transform(broker_log.with_verdict)
    )
    # A quarantined line that starts a template and does not complete it may
    # be the first half of a re-flowed pair: kept for the pass after numbering.
    opened = F.col("bl_quarantine").isNotNull() & broker_log.open_start(F.col("value"))
    return staged.select("*", F.coalesce(opened, F.lit(False)).alias("open_start"))


def _segment_dump(df: DataFrame, guard: Column, own: DataFrame) -> DataFrame:
    return (
        df.transform(lambda d: segment_dump.with_sections(d, segment_dump.sections(own), guard))
        .transform(lambda d: segment_dump.with_cheap_columns(d, guard))
        .transform(segment_dump.with_verdict)
    )


def _znode_dump(df: DataFrame, guard: Column, own: DataFrame) -> DataFrame:
    return df.transform(
        lambda d: znode_dump.with_context(d, znode_dump.contexts(own), guard)
    ).transform(lambda d: znode_dump.with_verdict(d, guard))


def _views(df: DataFrame, guard: Column, own: DataFrame) -> DataFrame:
    return df.transform(lambda d: views.with_context(d, views.contexts(own), guard)).transform(
        lambda d: views.with_verdict(d, guard)
    )


READERS: dict[str, _Reader] = {
    request_log.KIND: _Reader("rl", request_log.needs_a_look, _request_log),
    metadata_dump.KIND: _Reader("md", metadata_dump.needs_a_look, _metadata_dump),
    broker_log.KIND: _Reader("bl", broker_log.needs_a_look, _broker_log),
    segment_dump.KIND: _Reader("sd", segment_dump.needs_a_look, _segment_dump),
    znode_dump.KIND: _Reader("zn", znode_dump.needs_a_look, _znode_dump),
    views.KIND: _Reader("vw", views.needs_a_look, _views),
}


def ingest(
    spark: SparkSession,
    paths: list[str],
    cluster: str = "default",
    broker_id: int | None = None,
    persist: bool = True,
    work_dir: str | None = None,
    bundle_limit: int = bundle_.DEFAULT_TOTAL_LIMIT,
    bundle_member_limit: int = bundle_.DEFAULT_MEMBER_LIMIT,
) -> IngestResult:
    """Read every file under ``paths`` (recursively, plain or compressed).

    ``cluster`` fills the cluster column of every row outside a
    ``cluster=NAME/`` folder (which names its own); ``broker_id`` is the
    observer of files whose path names no broker (``--broker-id``).

    The single pass over the bytes runs here: its outcome rows are computed
    once and kept (memory, spilling to disk; ``session.materialise``), and
    ``events``, ``quarantine`` and ``file_stats`` are narrow plans over
    them. ``persist`` is accepted for callers of the earlier lazy plan; the
    pass always runs here, since line numbers need it. Call
    ``IngestResult.unpersist`` when done.

    ``.tar.gz``/``.tgz``/``.zip`` bundles are extracted first (``bundle.py``)
    into a folder under ``work_dir`` (default: the system temp folder), with
    at most ``bundle_limit`` bytes per bundle and ``bundle_member_limit`` per
    member; the folder must outlive every action on the result.
    """
    del persist
    paths, bundles = bundle_.expand(paths, work_dir, bundle_limit, bundle_member_limit)
    text_files, binary_files = binary_.split(spark, lines_.list_files(spark, paths))
    sniffed = sniff.sniff(spark, text_files)
    table = _LineTable(spark, sniffed, bundles, broker_id)

    small, large = _outcomes(table)
    passed, counted, cached = _pass(spark, small, large)
    blocks = table.blocks(counted, passed)
    outcomes = _numbered(passed, blocks)
    reflowed = _reflow(outcomes, table, blocks)
    if reflowed is not None:
        outcomes = outcomes.filter(~F.col("open_start")).unionByName(reflowed.rows)
    outcomes = outcomes.drop("open_start")
    if table.checkpoints:
        outcomes = outcomes.unionByName(checkpoint.outcomes(table.small_of(checkpoint.KIND)))
    files = table.file_index(blocks)
    binary_lines: DataFrame | None = None
    if binary_files:
        # One unit per record batch: the same outcome rows as a text line.
        decoded, binary_listed = binary_.decode(spark, binary_files, bundles, broker_id)
        files = files.unionByName(
            binary_.file_rows(decoded, binary_listed).withColumn("note", F.lit(None).cast("string"))
        )
        outcomes = outcomes.unionByName(binary_.outcomes(decoded))
        binary_lines = binary_.raw_lines(decoded)

    def lines_of(wanted: list[str] | None) -> DataFrame:
        text = table.numbered_lines(blocks, wanted)
        if binary_lines is None:
            return _conform(text, RAW_LINES)
        units = binary_lines
        if wanted is not None:
            units = units.filter(F.col("source_file").isin(*wanted))
        return _conform(text.unionByName(units), RAW_LINES)

    if bundles:
        files = files.unionByName(_bundle_files(spark, bundles, broker_id))
        if any(b.refused for b in bundles):
            outcomes = outcomes.unionByName(_bundle_outcomes(spark, bundles, broker_id))
    names = _collected(spark, _topic_names(outcomes, cluster).distinct())
    events = _events(outcomes, cluster).transform(lambda df: _fill_topics(df, names))
    parts = None if reflowed is None else reflowed.parts
    return IngestResult(
        events=_conform(events, PARTITION_EVENTS),
        quarantine=_conform(_quarantine(outcomes, cluster), QUARANTINE),
        file_stats=_conform(_file_stats(files, outcomes, parts), FILE_STATS),
        lines=lines_of(None),
        cached=tuple(cached),
        bundles=tuple(bundles),
        sniffed=tuple(sniffed),
        lines_of=lines_of,
    )


# --- the line table --------------------------------------------------------------------


class _LineTable:
    """The text files by kind and route (small: driver rows; large: scans)."""

    def __init__(
        self,
        spark: SparkSession,
        sniffed: list[sniff.Sniffed],
        bundles: list[bundle_.Bundle],
        broker_id: int | None,
    ) -> None:
        self.spark = spark
        self.sniffed = sniffed
        self.bundles = bundles
        self.broker_id = broker_id
        self.small_files = [s for s in sniffed if s.content is not None]
        self.large: dict[str, list[str]] = {}
        for s in sniffed:
            if s.content is None and s.note is None:
                self.large.setdefault(s.kind, []).append(s.path)
        self.checkpoints = any(s.kind == checkpoint.KIND for s in self.small_files)
        self._small: DataFrame | None = None

    def kinds(self) -> list[str]:
        present = {s.kind for s in self.small_files} | set(self.large)
        return [k for k in READERS if k in present]

    @property
    def small(self) -> DataFrame | None:
        """Every small file's lines, with its kind (one driver-built frame)."""
        if self._small is None and self.small_files:
            lines = lines_.small_lines(
                self.spark, [(s.path, s.content or b"") for s in self.small_files], self.bundles
            )
            kinds = local_frame(
                self.spark,
                [(lines_.member_path_of(s.path, self.bundles), s.kind) for s in self.small_files],
                "source_file string, kind string",
            )
            self._small = lines.join(F.broadcast(kinds), "source_file").select(
                *lines_.LINE_COLUMNS, "kind"
            )
        return self._small

    def small_of(self, kind: str) -> DataFrame:
        assert self.small is not None
        return lines_.with_observer(
            self.small.filter(F.col("kind") == kind).drop("kind"), self.broker_id
        )

    def scanned(self, kind: str) -> DataFrame:
        """The lines of one family's large files: one text scan."""
        scanned = lines_.scan(self.spark, self.large[kind], self.bundles)
        return lines_.with_observer(scanned, self.broker_id)

    def unread(self) -> DataFrame | None:
        """Large files no reader reads (unrecognised): scanned for their
        first line per block only, so that their lines are counted."""
        files = self.large.get(lines_.UNRECOGNISED)
        if not files:
            return None
        scanned = lines_.scan(self.spark, files, self.bundles)
        return lines_.with_observer(scanned, self.broker_id).filter(F.col("idx") == 0)

    def blocks(self, counted: dict[int, int], outcomes: DataFrame) -> DataFrame:
        """(source_file, block_start, lines_before, lines) of every block read.

        Small files: one block, counted on the driver. Large files: each
        block's first line left a marker row naming the task that read it,
        and that task read exactly the block's lines (``counted``). Should
        a task's metric be missing (an executor that reports none), the
        blocks of its files are counted by a scan of those files instead.
        """
        per_block: dict[tuple[str, int], int] = {}
        for s in self.small_files:
            assert s.content is not None
            name = lines_.member_path_of(s.path, self.bundles)
            per_block[(name, 0)] = len(lines_.split_lines(s.content))
        markers = (
            outcomes.filter(F.col("scanned") & (F.col("idx") == 0))
            .select("source_file", "block_start", "task")
            .distinct()
            .collect()
        )
        uncounted: set[str] = set()
        for m in markers:
            lines = counted.get(m.task)
            if lines is None:
                uncounted.add(m.source_file)
            else:
                per_block[(m.source_file, m.block_start)] = lines
        if uncounted:
            large = [p for ps in self.large.values() for p in ps
                     if lines_.member_path_of(p, self.bundles) in uncounted]  # fmt: skip
            recount = (
                lines_.scan(self.spark, large, self.bundles)
                .groupBy("source_file", "block_start")
                .count()
                .collect()
            )
            for r in recount:
                per_block[(r.source_file, r.block_start)] = r["count"]
        rows: list[tuple[str, int, int, int]] = []
        before: dict[str, int] = {}
        for (name, start), lines in sorted(per_block.items()):
            rows.append((name, start, before.get(name, 0), lines))
            before[name] = before.get(name, 0) + lines
        return local_frame(
            self.spark, rows, "source_file string, block_start long, lines_before long, lines long"
        )

    def file_index(self, blocks: DataFrame) -> DataFrame:
        """One row per text file: (source_file, kind, observer, lines_read);
        a file with no line (empty, or not read: binary) reads 0."""
        listed = local_frame(
            self.spark,
            [(lines_.member_path_of(s.path, self.bundles), s.kind, s.note) for s in self.sniffed],
            "source_file string, kind string, note string",
        )
        per_file = blocks.groupBy("source_file").agg(F.sum("lines").alias("lines_read"))
        joined = listed.join(F.broadcast(per_file), "source_file", "left")
        return joined.select(
            "source_file",
            "kind",
            lines_.observer(F.col("source_file"), self.broker_id).alias("observer"),
            F.coalesce(F.col("lines_read"), F.lit(0)).cast("long").alias("lines_read"),
            "note",
        )

    def numbered_lines(self, blocks: DataFrame, wanted: list[str] | None) -> DataFrame:
        """RAW_LINES of the text files (all, or the ``wanted`` ones): small
        files from their driver rows, large ones scanned again."""
        parts: list[DataFrame] = []
        keep = None if wanted is None else set(wanted)
        if self.small is not None:
            small = self.small
            if keep is not None:
                small = small.filter(F.col("source_file").isin(*keep))
            parts.append(small.select("source_file", (F.col("idx") + 1).alias("line_no"), "value"))
        large = [
            p
            for files in self.large.values()
            for p in files
            if keep is None or lines_.member_path_of(p, self.bundles) in keep
        ]
        if large:
            scanned = lines_.scan(self.spark, large, self.bundles)
            parts.append(lines_.numbered(scanned, blocks).select("source_file", "line_no", "value"))
        if not parts:
            return local_frame(
                self.spark, [], "source_file string, line_no long, observer int, value string"
            )
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out.select(
            "source_file",
            "line_no",
            lines_.observer(F.col("source_file"), self.broker_id).alias("observer"),
            "value",
        )


# --- the pass ------------------------------------------------------------------------


def _family(kind: str, lines: DataFrame, context: DataFrame | None = None) -> DataFrame:
    """One family's outcome rows (before numbering): one row per event or
    quarantined line, and one per block's first line (its marker).

    ``context``: the family's own lines, for readers that need file context
    (dump sections, znode paths).
    """
    reader = READERS[kind]
    value = F.col("value")
    look = too_long(value) | reader.needs_a_look(value) | ~F.is_valid_utf8(value)
    # Every block's first line stays, looked at or not: its row marks the
    # block for numbering (``_LineTable.blocks``).
    staged = lines.select("*", look.alias("_look")).filter(F.col("_look") | (F.col("idx") == 0))
    staged = reader.stages(staged, F.col("_look"), lines if context is None else context)
    p = reader.prefix
    reason = F.col(f"{p}_quarantine")
    rows = F.when(reason.isNotNull(), quarantined(reason, value)).otherwise(F.col(f"{p}_events"))
    line_time = F.col(f"{p}_time")
    metadata_offset = F.col("md_metadata_offset") if p == "md" else F.lit(None).cast("long")
    open_start = F.col("open_start") if p == "bl" else F.lit(False)
    line = staged.select(
        *_LINE_COLUMNS[:5],
        line_time.alias("line_time"),
        metadata_offset.alias("metadata_offset"),
        open_start.alias("open_start"),
        rows.alias("rows"),
    )
    # An *outer* generator on purpose: a filter above a Generate that reads its
    # output is never pushed below it, and an outer Generate gets no inferred
    # ``size(...) > 0`` filter, so the optimizer cannot copy the parsers'
    # expressions into a filter and evaluate them twice.
    flat = line.select(*_LINE_COLUMNS, F.posexplode_outer("rows").alias("pos", "row"))
    flat = flat.select("*", "row.*").drop("row")
    keep = F.col("kind").isNotNull() | F.col("reason").isNotNull()
    marker = F.col("scanned") & (F.col("idx") == 0)
    return flat.filter(keep | marker)


_LINE_COLUMNS = (
    "source_file",
    "block_start",
    "idx",
    "scanned",
    "observer",
    "line_time",
    "metadata_offset",
    "open_start",
)


def _outcomes(table: _LineTable) -> tuple[DataFrame | None, DataFrame | None]:
    """The outcome rows of every family present, plus one marker row per
    large block (kind and reason null), each with the ``task`` that read it:
    those of the small files (driver rows) and those of the large ones
    (scans), apart, so that each runs in a job of its own (``_pass``)."""
    small: list[DataFrame] = []
    large: list[DataFrame] = []
    for kind in table.kinds():
        if any(s.kind == kind for s in table.small_files):
            small.append(_family(kind, table.small_of(kind)))
        if kind in table.large:
            large.append(_family(kind, table.scanned(kind)))
    unread = table.unread()
    if unread is not None:
        large.append(
            unread.select(
                *_LINE_COLUMNS[:5],
                F.lit(None).cast("timestamp").alias("line_time"),
                F.lit(None).cast("long").alias("metadata_offset"),
                F.lit(False).alias("open_start"),
                F.lit(None).cast("int").alias("pos"),
                *[F.lit(None).cast(f.dataType).alias(f.name) for f in OUTCOME_ROW.fields],
            )
        )
    return _with_task(small), _with_task(large)


def _with_task(families: list[DataFrame]) -> DataFrame | None:
    if not families:
        return None
    union = families[0]
    for f in families[1:]:
        union = union.unionByName(f)
    # The task that read each row: taken above the union, so that it is the
    # union's partition index, the index Spark's task metrics know it by.
    return union.select("*", F.spark_partition_id().alias("task"))


_EMPTY_OUTCOMES = StructType(
    [
        StructField("source_file", StringType()),
        StructField("block_start", LongType()),
        StructField("idx", LongType()),
        StructField("scanned", BooleanType()),
        StructField("task", IntegerType()),
        StructField("observer", IntegerType()),
        StructField("line_time", TimestampType()),
        StructField("metadata_offset", LongType()),
        StructField("open_start", BooleanType()),
        StructField("pos", IntegerType()),
        *OUTCOME_ROW.fields,
    ]
)


def _pass(
    spark: SparkSession, small: DataFrame | None, large: DataFrame | None
) -> tuple[DataFrame, dict[int, int], list[DataFrame]]:
    """Run the pass once (``session.materialise``) and read, per Spark
    partition of the large files' part, how many lines its task read
    (Spark's input metric ``recordsRead``: one per line a text scan
    returns). Returns the outcome rows, those counts, and the frames to
    release.

    The small files' part (driver rows: a few server.logs, a metadata dump)
    runs first, as a job of its own, always interpreted: compiled, its
    readers' generated code (the broker-log and metadata readers are the
    largest) cost more to compile than to run, about 6 s of the pass at
    256 MB of request logs with six small server.logs and a dump beside them
    (docs/performance.md). Small inputs are interpreted anyway; the large
    files' part keeps the session's settings."""
    done: list[DataFrame] = []
    counted: dict[int, int] = {}
    if small is not None:
        with evaluated_interpreted(spark):
            done.append(materialise(small))
    if large is not None:
        sc = spark.sparkContext
        group = f"epochtrail-ingest-{uuid.uuid4().hex}"
        sc.setJobGroup(group, "epochtrail ingest: the pass over the bytes")
        try:
            done.append(materialise(large))
        finally:
            # None unsets a local property (setLocalProperty's own docstring
            # says so); pyspark's annotation says ``value: str``, which is wrong.
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
        counted = _records_read(spark, group)
    if not done:
        return local_frame(spark, [], _EMPTY_OUTCOMES), counted, []
    passed = done[0] if len(done) == 1 else done[0].unionByName(done[1])
    return passed, counted, done


def _records_read(spark: SparkSession, group: str) -> dict[int, int]:
    """{task partition: records read} of the last job of ``group``, the one
    that ran the pass (broadcasts of the readers' context run before it)."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    jobs = sorted(tracker.getJobIdsForGroup(group))
    if not jobs:
        return {}
    info = tracker.getJobInfo(jobs[-1])
    if info is None:
        return {}
    store = sc._jsc.sc().statusStore()  # the live store behind Spark's REST API
    out: dict[int, int] = {}
    for stage_id in info.stageIds:
        stage = tracker.getStageInfo(stage_id)
        attempt = 0 if stage is None else stage.currentAttemptId
        tasks = store.taskList(stage_id, attempt, 1 << 30).iterator()
        while tasks.hasNext():
            task = tasks.next()
            metrics = task.taskMetrics()
            if task.status() != "SUCCESS" or not metrics.isDefined():
                continue
            read = int(metrics.get().inputMetrics().recordsRead())
            if read:
                out[int(task.index())] = read
    return out


def _numbered(outcomes: DataFrame, blocks: DataFrame) -> DataFrame:
    """Outcome rows with their ``line_no`` (and no marker rows); a row whose
    block the table does not know, or whose index passes its block's count,
    fails the run rather than carry a wrong line number (a task metric that
    does not match the pass)."""
    joined = outcomes.join(F.broadcast(blocks), ["source_file", "block_start"], "left")
    known = F.col("idx").between(F.lit(0), F.col("lines") - 1)
    line_no = F.when(known, F.col("idx") + F.col("lines_before") + 1).otherwise(
        F.raise_error(F.lit(_UNNUMBERED))
    )
    kept = joined.filter(F.col("kind").isNotNull() | F.col("reason").isNotNull())
    return kept.select(
        "source_file",
        line_no.alias("line_no"),
        "observer",
        "line_time",
        "metadata_offset",
        "pos",
        "open_start",
        *[f.name for f in OUTCOME_ROW.fields],
    )


_UNNUMBERED = (
    "epochtrail ingest: a line's block is missing from the line counts of the pass "
    "(Spark's input metrics for its tasks were not available)"
)


# --- re-flowed broker-log lines --------------------------------------------------------


@dataclass(frozen=True)
class _Reflowed:
    #: outcome rows of the kept pairs (in place of their first lines' rows)
    rows: DataFrame
    #: per file, the continuation lines parsed as part of their pair
    parts: DataFrame


def _reflow(outcomes: DataFrame, table: _LineTable, blocks: DataFrame) -> _Reflowed | None:
    """Re-join the open starts the pass found (rare), from their files only."""
    if broker_log.KIND not in table.kinds():
        return None
    starts = (
        outcomes.filter(F.col("open_start"))
        .select("source_file", F.col("line_no").alias("start"), "observer")
        .orderBy("source_file", "start")
        .limit(broker_log.REFLOW_LIMIT)
        .localCheckpoint(eager=True)
    )
    if starts.isEmpty():
        return None
    files = [r.source_file for r in starts.select("source_file").distinct().collect()]
    pairs = broker_log.reflow_pairs(starts, table.numbered_lines(blocks, files))
    kept = F.broadcast(pairs.select("source_file", F.col("line_no").alias("start")))
    # The open starts no pair completes stay quarantined as they were.
    unpaired = outcomes.filter(F.col("open_start")).join(
        kept.withColumnRenamed("start", "line_no"), ["source_file", "line_no"], "left_anti"
    )
    exploded = pairs.select(
        "source_file",
        "line_no",
        "observer",
        "line_time",
        F.lit(None).cast("long").alias("metadata_offset"),
        F.lit(False).alias("open_start"),
        F.posexplode("events").alias("pos", "row"),
    )
    rows = (
        exploded.select("*", "row.*")
        .drop("row")
        .unionByName(unpaired.withColumn("open_start", F.lit(False)))
    )
    parts = pairs.groupBy("source_file").agg(F.count(F.lit(1)).alias("parts"))
    return _Reflowed(rows, parts)


# --- silver and accounting ---------------------------------------------------------------


def _events(outcomes: DataFrame, cluster: str) -> DataFrame:
    line_level: dict[str, Column] = {
        "cluster": lines_.cluster(F.col("source_file"), cluster),
        "observer": F.col("observer"),
        "source_file": F.col("source_file"),
        "line_no": F.col("line_no"),
        "event_time": F.col("line_time"),
        "metadata_offset": F.col("metadata_offset"),
        # Order inside the file: line, then position in the line (requests
        # before responses). Snapshot records keep their internal order here.
        "seq": F.col("line_no") * SEQ_STRIDE + F.col("pos"),
    }
    event_fields = {f.name for f in EVENT_FIELDS}
    cols = [
        line_level[f.name].alias(f.name) if f.name not in event_fields else F.col(f.name)
        for f in PARTITION_EVENTS.fields
    ]
    return outcomes.filter(F.col("kind").isNotNull()).select(*cols)


def _quarantine(outcomes: DataFrame, cluster: str) -> DataFrame:
    # DESIGN.md: the line's date when it has a timestamp, else the run date.
    date = F.date_format(F.coalesce(F.to_date("line_time"), F.current_date()), "yyyy-MM-dd")
    return outcomes.filter(F.col("reason").isNotNull()).select(
        lines_.cluster(F.col("source_file"), cluster).alias("cluster"),
        "source_file",
        "line_no",
        "reason",
        "text",
        "text_truncated",
        date.alias("date"),
    )


def _file_stats(files: DataFrame, outcomes: DataFrame, parts: DataFrame | None = None) -> DataFrame:
    # A parsed line's rows are all events and its first is at pos 0; a
    # quarantined line has exactly one row, with a reason. ``parts``: per
    # file, the continuation lines of re-joined broker-log pairs, parsed as
    # part of their pair's first line (broker_log.py), never looked at here.
    per_file = outcomes.groupBy("source_file").agg(
        F.count_if((F.col("pos") == 0) & F.col("kind").isNotNull()).alias("parsed"),
        F.count_if(F.col("reason").isNotNull()).alias("quarantined"),
    )
    joined = files.join(F.broadcast(per_file), "source_file", "left")
    parsed = F.coalesce(F.col("parsed"), F.lit(0))
    if parts is not None:
        joined = joined.join(F.broadcast(parts), "source_file", "left")
        parsed = parsed + F.coalesce(F.col("parts"), F.lit(0))
    quarantined = F.coalesce(F.col("quarantined"), F.lit(0))
    return joined.select(
        F.col("source_file").alias("path"),
        "kind",
        "observer",
        "lines_read",
        parsed.alias("lines_parsed"),
        (F.col("lines_read") - parsed - quarantined).alias("lines_ignored"),
        quarantined.alias("lines_quarantined"),
        "note",
    )


# --- bundles (bundle.py) -------------------------------------------------------------


def _bundle_files(
    spark: SparkSession, bundles: list[bundle_.Bundle], broker_id: int | None
) -> DataFrame:
    """file_stats rows of the archives: their members are their "lines"."""
    rows = local_frame(
        spark, [(b.archive, b.members) for b in bundles], "source_file string, lines_read long"
    )
    return rows.select(
        "source_file",
        F.lit(bundle_.KIND).alias("kind"),
        lines_.observer(F.col("source_file"), broker_id).alias("observer"),
        "lines_read",
        F.lit(None).cast("string").alias("note"),
    )


def _bundle_outcomes(
    spark: SparkSession, bundles: list[bundle_.Bundle], broker_id: int | None
) -> DataFrame:
    """One quarantined outcome (line 0) per refused member."""
    rows = local_frame(
        spark,
        [(b.archive, f"refused bundle member: {reason}", member)
         for b in bundles for member, reason in b.refused],
        "source_file string, reason string, member string",
    )  # fmt: skip
    exploded = rows.select(
        "source_file",
        F.lit(0).cast("long").alias("line_no"),
        lines_.observer(F.col("source_file"), broker_id).alias("observer"),
        F.lit(None).cast("timestamp").alias("line_time"),
        F.lit(None).cast("long").alias("metadata_offset"),
        F.posexplode(quarantined(F.col("reason"), F.col("member"))).alias("pos", "row"),
    )
    return exploded.select("*", "row.*").drop("row")


# --- topic names -------------------------------------------------------------------------


def _topic_names(outcomes: DataFrame, cluster: str) -> DataFrame:
    """(cluster, topic_id, topic) of every topic record read: the metadata
    log's TOPIC_RECORDs (dumped or raw), partition.metadata files,
    ``kafka-topics --describe`` headers (2.8+ print the TopicId), and the log
    lines that print both: a KRaft controller's ``UNCLEAN partition change
    for tp with topic ID U`` and a 3.3+ leader's ``Leader tp with topic id
    Some(U)`` (a ticket's excerpts may hold no other)."""
    return outcomes.filter(
        F.col("kind").isin(
            "topic_record", "topic_config", "unclean_partition_change", "become_leader"
        )
        & F.col("topic").isNotNull()
        & F.col("topic_id").isNotNull()
    ).select(
        lines_.cluster(F.col("source_file"), cluster).alias("cluster"), "topic_id", "topic"
    )  # fmt: skip


def _collected(spark: SparkSession, small: DataFrame) -> DataFrame:
    """``small`` computed once now and held as a driver-built (local) frame.
    The topic names are a handful of rows read out of all the outcomes: as
    a plan, every query on ``events`` scanned all the outcomes again for
    them (one whole extra scan per query: at 1 GiB of busy input, five
    of them before the replay, docs/performance.md)."""
    table = small.toArrow()
    if not table.num_rows:
        return local_frame(spark, [], small.schema)
    return spark.createDataFrame(table)


def _fill_topics(events: DataFrame, names: DataFrame) -> DataFrame:
    """Fetch v13+ and metadata records name topics by id only, older fetches,
    produce and OffsetsForLeaderEpoch by name only (sections 1.6, 2.4): fill
    the other from the topic records. A topic id has one name for life; a
    name re-created gets a new id, so a name seen with two ids stays unknown.
    """

    def unique(key: str, other: str, key_as: str, other_as: str) -> DataFrame:
        # min == max: exactly one value of ``other`` per (cluster, ``key``).
        agg = names.groupBy("cluster", key).agg(F.min(other).alias("lo"), F.max(other).alias("hi"))
        unique = agg.filter(F.col("lo") == F.col("hi"))
        return unique.select(
            F.col("cluster").alias("_cluster"),
            F.col(key).alias(key_as),
            F.col("lo").alias(other_as),
        )

    same_cluster = F.col("cluster") == F.col("_cluster")
    by_id = unique("topic_id", "topic", "_by_id", "_name")
    by_name = unique("topic", "topic_id", "_by_name", "_id")
    named = events.join(
        F.broadcast(by_id), same_cluster & (F.col("topic_id") == F.col("_by_id")), "left"
    ).drop("_cluster")
    named = named.withColumn("topic", F.coalesce("topic", "_name"))
    named = named.join(
        F.broadcast(by_name), same_cluster & (F.col("topic") == F.col("_by_name")), "left"
    ).drop("_cluster")
    named = named.withColumn("topic_id", F.coalesce("topic_id", "_id"))
    return named.select(*[f.name for f in PARTITION_EVENTS.fields])


# --- exact schemas -------------------------------------------------------------------


def _never_null(dtype: DataType) -> Column:
    if isinstance(dtype, StringType):
        return F.lit("")
    if isinstance(dtype, LongType):
        return F.lit(0).cast("long")
    if isinstance(dtype, BooleanType):
        return F.lit(False)
    raise TypeError(f"no stand-in for non-nullable {dtype}")


def _conform(df: DataFrame, schema: StructType) -> DataFrame:
    """Select ``schema``'s columns in order, with its exact types and nullability.

    Spark cannot prove some non-null columns non-null (an aggregate, a join
    side); they are non-null by construction, and the coalesce only tells
    Spark so. The reverse also happens. A mismatch left after that is a bug
    here: fail at build time.
    """
    cols = []
    for f in schema.fields:
        c = F.col(f.name)
        if df.schema[f.name].dataType != f.dataType:
            c = c.cast(f.dataType)
        if not f.nullable:
            c = F.coalesce(c, _never_null(f.dataType))
        elif not df.schema[f.name].nullable:
            # e.g. observer with --broker-id: never null here, nullable in the
            # contract. nullif(c, NULL) is c, typed nullable.
            c = F.nullif(c, F.lit(None).cast(f.dataType))
        cols.append(c.alias(f.name))
    out = df.select(*cols)
    if out.schema != schema:
        raise AssertionError(f"schema drift:\n{out.schema}\n!=\n{schema}")
    return out
