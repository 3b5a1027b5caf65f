"""The Spark session: embedded ``local[*]`` by default, any master unchanged."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

DEFAULT_MASTER = "local[*]"
#: One Spark partition per file block of this size, never two blocks in one
#: (``openCostInBytes`` = ``maxPartitionBytes``): ingest numbers a line by
#: its index in its partition (pipeline/ingest/lines.py).
FILE_BLOCK_BYTES = 256 << 20
#: Hadoop's line reader skips (without holding it) a line longer than this:
#: the JVM never builds a "line" of a file with no line breaks. Lines longer
#: than 1 MiB are quarantined unparsed anyway (DESIGN.md "Hostile input").
MAX_LINE_BYTES = 64 << 20


class JavaMissing(RuntimeError):
    """No usable Java 17+ for Spark."""


def java_major_version() -> int | None:
    java = shutil.which("java")
    if java is None and os.environ.get("JAVA_HOME"):
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        java = candidate if os.path.exists(candidate) else None
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    # Java 8 and older print "1.8.0_x".
    return int(match.group(2) or 0) if major == 1 else major


#: Below this much input (``sniff.input_bytes``: compressed files counted inflated)
#: a run ends before HotSpot's optimising compiler (C2) pays back what it
#: costs to compile Spark's own code and the readers' generated classes, so
#: the driver JVM stops at the quick compiler (C1). Measured JVM CPU
#: (docs/performance.md): the README demo's whole run 71.5 s -> 45.1 s; the
#: busy 64 MB ingest 66.6 s -> 57.1 s; at 256 MB C2 wins (104.6 s against
#: 116.0 s); the lines cross near 150 MB.
QUICK_JIT_BELOW_BYTES = 128 * 1024 * 1024


def small_input(size: int | None) -> bool:
    """Whether a run over ``size`` input bytes (None: unknown) is a short
    one: the one line every size-chosen setting draws (the JIT, the Python
    workers' reuse, when GE loads), :data:`QUICK_JIT_BELOW_BYTES`."""
    return size is not None and size < QUICK_JIT_BELOW_BYTES


def quick_jit(size: int | None) -> bool:
    """Whether a run over ``size`` input bytes should stop at the quick JIT.
    ``EPOCHTRAIL_JIT=quick|full`` decides instead when set."""
    chosen = os.environ.get("EPOCHTRAIL_JIT", "").strip().lower()
    if chosen in ("quick", "full"):
        return chosen == "quick"
    return small_input(size)


#: With C2 off, HotSpot falls back to the non-tiered code cache of 48 MiB.
#: One long-lived JVM (the test session, a fleet run) fills that with C1 code
#: and the readers' generated classes; a full cache disables the JIT and then
#: fails Spark's calls outright ("Out of space in CodeCache for adapters").
#: 240 MiB is the tiered default: it is reserved address space, committed only
#: as code is compiled.
QUICK_JIT_CODE_CACHE = "240m"


#: With the optimising compiler on (large inputs), it also compiles methods
#: over 8,000 bytes of bytecode, which HotSpot otherwise leaves to its
#: interpreter for good: the readers' whole-stage methods are 25-31 KB
#: (Spark logs "Generated method too long to be JIT compiled"), and they
#: run once per line. The 1 GiB ingest: 36.2-37.5 s against 38.6-39.6 s.
HUGE_METHODS_COMPILED = "-XX:-DontCompileHugeMethods"


def jit_options(size: int | None) -> list[str]:
    """The driver JVM options that ``quick_jit`` chooses for ``size``."""
    if not quick_jit(size):
        return [HUGE_METHODS_COMPILED]
    return ["-XX:TieredStopAtLevel=1", f"-XX:ReservedCodeCacheSize={QUICK_JIT_CODE_CACHE}"]


def interpreted(input_size: int | None) -> bool:
    """Whether a run over ``input_size`` bytes evaluates its expressions
    interpreted instead of compiling them (whole-stage code generation off,
    no generated projections): for small inputs. The readers' plans are
    large, and generating and compiling their Java (Janino, then the JIT)
    costs a short run more than the compiled code returns: the README
    demo took 18.7 s instead of 22.0 s, idle machine, two runs each
    (docs/performance.md "The fixed cost"). ``EPOCHTRAIL_CODEGEN=on|off``
    decides instead when set."""
    chosen = os.environ.get("EPOCHTRAIL_CODEGEN", "").strip().lower()
    if chosen in ("on", "off"):
        return chosen == "off"
    return small_input(input_size)


#: the settings of an interpreted evaluation: whole-stage code generation
#: off, no generated projections
INTERPRETED_SETTINGS = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def codegen_settings(input_size: int | None) -> dict[str, str]:
    """The Spark settings :func:`interpreted` chooses for ``input_size``."""
    return dict(INTERPRETED_SETTINGS) if interpreted(input_size) else {}


@contextlib.contextmanager
def evaluated_interpreted(spark: SparkSession) -> Iterator[None]:
    """Queries run inside are evaluated interpreted
    (:data:`INTERPRETED_SETTINGS`), whatever the session's settings, which
    are restored after."""
    saved = {k: spark.conf.get(k, None) for k in INTERPRETED_SETTINGS}
    for key, value in INTERPRETED_SETTINGS.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, was in saved.items():
            if was is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, was)


def end_spark_early(input_size: int | None) -> bool:
    """Whether a run over ``input_size`` bytes that started its own Spark
    ends it before validation (:func:`end_spark`): for large inputs, where
    the JVM beside GE's frames was the run's peak memory. A small run's
    peak is far below that, and stopping Spark in the run costs it about a
    second that the process's exit otherwise hides.
    ``EPOCHTRAIL_END_SPARK=early|late`` decides instead when set."""
    chosen = os.environ.get("EPOCHTRAIL_END_SPARK", "").strip().lower()
    if chosen in ("early", "late"):
        return chosen == "early"
    return not small_input(input_size)


def reuse_python_workers(input_size: int | None) -> bool:
    """Whether a Python worker outlives its task: for small inputs only.
    Reused, the replay's two workers (pyarrow, pandas and the replay loaded:
    150 MiB each) and their siblings stay resident to the end of the run,
    490 MiB of the peak at 1 GiB of input; a worker that ends with its task
    costs the next one a fork and those imports again, 1.5 s of the demo's
    24 s (and 2 of the test suite's 9.5 minutes), nothing a large run
    notices."""
    return small_input(input_size)


def _load_replay(batches: Iterator[Any]) -> Iterator[Any]:
    """In a Python worker: load what the replay's Arrow function imports."""
    import pipeline.bridge  # noqa: F401
    import pipeline.offsets  # noqa: F401

    yield from batches


def prestart_python_workers(spark: SparkSession) -> threading.Thread:
    """Start the Python workers the replay will use (reused for small
    inputs, ``reuse_python_workers``) now, in the background: the fork
    server's start and the replay's imports (about 0.7 s, the replay job's
    whole time on the README demo) overlap the ingest, whose driver mostly
    waits on the JVM. A failure here is the replay's to report: ignored."""

    def start() -> None:
        with contextlib.suppress(Exception):
            spark.sparkContext.setJobDescription("epochtrail: Python workers started early")
            spark.range(1).mapInArrow(_load_replay, "id long").collect()

    thread = threading.Thread(target=start, name="epochtrail-python-workers", daemon=True)
    thread.start()
    return thread


#: The driver JVM's heap (``EPOCHTRAIL_DRIVER_MEMORY`` overrides)
DRIVER_MEMORY = "768m"

#: The driver JVM's collector: the throughput one. A run is a batch job,
#: and on this machine's two cores G1's concurrent work takes CPU from the
#: tasks: at 1 GiB of busy input (validation off) the run took 106.5 s
#: against G1's 122.9 s, peak memory 1694 against 1866 MiB
#: (docs/performance.md).
GC_OPTIONS = ["-XX:+UseParallelGC"]


def gc_options(extra: list[str]) -> list[str]:
    """:data:`GC_OPTIONS`, unless ``extra`` (EPOCHTRAIL_JAVA_OPTS) chooses a
    collector itself (two would stop the JVM from starting)."""
    if any(o.startswith("-XX:+Use") and o.endswith("GC") for o in extra):
        return []
    return list(GC_OPTIONS)


def get_spark(
    master: str | None = None, app_name: str = "epochtrail", input_size: int | None = None
) -> SparkSession:
    """Start (or reuse) the session. Workers run this same interpreter, so the
    pinned pandas/pyarrow serve the replay bridge.

    ``input_size`` (bytes, ``sniff.input_bytes``) chooses the driver JVM's JIT
    (``quick_jit``); it matters only when this call starts the JVM.
    ``EPOCHTRAIL_JAVA_OPTS`` adds driver JVM options (profiling)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Spark's start-up chatter (hostname, native-hadoop) is noise in a CLI.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pipeline import classarchive

    log_config = Path(__file__).with_name("log4j2.properties")
    extra = os.environ.get("EPOCHTRAIL_JAVA_OPTS", "").split()
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or os.environ.get("EPOCHTRAIL_SPARK_MASTER", DEFAULT_MASTER))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config(
            "spark.driver.extraJavaOptions",
            " ".join(
                [f"-Dlog4j.configurationFile=file:{log_config}"]
                + jit_options(input_size)
                + gc_options(extra)
                # Spark's classes parsed and verified once, at set-up
                + classarchive.jvm_options()
                + extra
            ),
        )
        .config("spark.sql.session.timeZone", "UTC")
        .config(
            "spark.sql.shuffle.partitions",
            os.environ.get("EPOCHTRAIL_SHUFFLE_PARTITIONS", str(os.cpu_count() or 2)),
        )
        .config("spark.sql.files.maxPartitionBytes", str(FILE_BLOCK_BYTES))
        .config("spark.sql.files.openCostInBytes", str(FILE_BLOCK_BYTES))
        .config("spark.hadoop.mapreduce.input.linerecordreader.line.maxlength", str(MAX_LINE_BYTES))
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # The heap is not where big inputs go: ingest streams file blocks,
        # and the materialised tables spill to disk (MEMORY_AND_DISK). The
        # JVM is most of the process tree's memory (its heap is committed
        # whole, plus some 470 MiB of metaspace, code, threads and GC
        # tables): 768 MiB keeps the tree near 2 GiB at 1 GiB of input,
        # for about 5% more time than 1 GiB (docs/performance.md).
        .config("spark.driver.memory", os.environ.get("EPOCHTRAIL_DRIVER_MEMORY", DRIVER_MEMORY))
        .config("spark.sql.files.ignoreCorruptFiles", "false")
        # Every Column call would otherwise capture the Python call site over
        # several py4j round trips (Spark 4): most of the cost of building the
        # readers' plans, for error messages no user of the CLI sees.
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        # The readers' columns reach the JVM as SQL text (pipeline/sqltext.py)
        # and ANTLR keeps the DFA of every parse for the JVM's life. At 1 GiB
        # of input it reached 32,000 states (3.2 million ATN configurations,
        # some 190 MiB of the 768 MiB heap) and the replay, short of heap,
        # took 56 s against 34. Spark then manages the cache: it drops it
        # once its estimate passes 5% of the heap (the same run: 650 states
        # left, replay 34 s; the demo's 560 never reach it).
        .config("spark.sql.parser.manageParserCaches", "true")
        .config("spark.sql.parser.parserDfaCacheFlushRatio", "5")
        .config("spark.python.worker.reuse", str(reuse_python_workers(input_size)).lower())
        # What the driver keeps of finished work: Spark's status store holds
        # every SQL execution's plan description (the ingest pass's is
        # ~200 KB) and every job's and stage's record; a long-lived process
        # (a test session, a notebook) running many audits filled the heap
        # with them. The pass reads its own job's task metrics right after
        # it ends, well inside these bounds.
        .config("spark.sql.ui.retainedExecutions", "20")
        .config("spark.ui.retainedJobs", "200")
        .config("spark.ui.retainedStages", "200")
        .config("spark.sql.maxPlanStringLength", "16384")
        # Small files reach Spark as driver rows (a LocalRelation). This rule
        # would evaluate every projection over them on the driver, row by
        # row and interpreted, at every planning of every later query; over
        # a fleet's thousands of small files that exhausted the heap.
        .config(
            "spark.sql.optimizer.excludedRules",
            "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation",
        )
    )
    for key, value in codegen_settings(input_size).items():
        builder = builder.config(key, value)
    event_log = os.environ.get("EPOCHTRAIL_EVENT_LOG")
    if event_log:
        # Profiling (docs/performance.md): every job, stage and task metric
        # to a folder, for bench/eventlog.py.
        os.makedirs(event_log, exist_ok=True)
        builder = (
            builder.config("spark.eventLog.enabled", "true")
            .config("spark.eventLog.dir", Path(event_log).resolve().as_uri())
            .config("spark.eventLog.compress", "false")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_running() -> bool:
    """Whether a Spark session (its context) is already running in this
    process: a run that finds one leaves it running when it ends."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


def end_spark(spark: SparkSession, timeout_s: float = 30.0) -> None:
    """Stop ``spark`` and end the JVM this process started for it.

    ``SparkSession.stop`` stops the context but leaves the gateway JVM
    running, its heap committed, until Python exits. A run that started its
    own session ends it here once no Spark work is left: the run's last
    step, validation, reads the published Parquet with pyarrow, and the
    JVM's 1.3 GiB resident beside it was the run's peak (docs/performance.md
    "Memory"). A later ``get_spark`` in the same process starts a new JVM.
    The JVM ends itself when its standard input closes (PySpark's gateway
    watches it)."""
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    with contextlib.suppress(Exception):  # the JVM is ending either way
        gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc is None:
        return
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


#: the DDL types :func:`local_frame` spells
_DDL_TYPES = {"string": StringType, "long": LongType, "bigint": LongType, "int": IntegerType}


def local_frame(
    spark: SparkSession, rows: Sequence[tuple[Any, ...]], schema: str | StructType
) -> DataFrame:
    """A few driver-built rows as a local relation (an Arrow table), typed by
    ``schema`` (a StructType, or DDL "name type, ..." of string, long and
    int). ``createDataFrame`` over a Python list makes a parallelised RDD
    that Python workers unpickle in every query that reads it; an Arrow
    table is a LocalTableScan in the JVM (docs/performance.md, "The fixed
    cost")."""
    if isinstance(schema, str):
        fields = []
        for column in schema.split(","):
            name, kind = column.split()
            fields.append(StructField(name, _DDL_TYPES[kind.lower()]()))
        schema = StructType(fields)
    zone = str(spark.conf.get("spark.sql.session.timeZone", "UTC"))
    arrow = to_arrow_schema(schema, timezone=zone)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema.fields]
    table = pa.Table.from_arrays(
        [pa.array(list(values), type=f.type) for values, f in zip(columns, arrow, strict=True)],
        schema=arrow,
    )
    return spark.createDataFrame(table, schema)


def materialise(df: DataFrame) -> DataFrame:
    """``df`` computed once now (memory, spilling to disk) and cut from its
    plan: later plans start from its rows. A persisted frame keeps its whole
    plan instead, and every later analysis, join, AQE re-plan and plan
    description (Spark builds one per query even without a UI) walks it
    again; for the ingest and replay plans that costs more than computing
    them on small inputs. Free it with :func:`release`."""
    return df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)


def release(df: DataFrame) -> None:
    """Drop a frame's cached rows: a persisted plan's, or those of a frame
    from :func:`materialise` (its RDD's blocks, freed only with that RDD)."""
    df.unpersist()
    plan = df._jdf.queryExecution().analyzed()
    if plan.nodeName() == "LogicalRDD":
        plan.rdd().unpersist(False)
