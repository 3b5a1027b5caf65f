"""Validation: Great Expectations suites over the silver and gold tables.

DESIGN.md "Validation". Every suite is generated from ``schemas/``: a column
declared non-nullable must hold no null, an offset column (Kafka's words:
``*offset*``, ``hwm``, ``leo``, ``truncate_to``) no negative value, an enum
column only its declared domain. Two rules need more than one column or row
and are checked on a derived column, in Spark, before GE sees the frame:

* ``topic_key``: a per-partition table (``partition`` declared non-null) must
  name the partition's topic by name or by id.
* ``previous_leader_epoch_by_*``: within a partition's lineage, the leader
  epoch of the previous row in an order the evidence establishes, the
  controller's (``metadata_offset``) and the partition epoch's (KIP-631: each
  change bumps it). Never clock order: clocks of different brokers drift, and
  the replay, not the validation, owns the skew allowance.

GE 1.24's Spark execution engine runs on PySpark 4.3 (measured: see
docs/validation.md), so the tables that grow with the input (silver,
replica_offsets, isr_timeline, quarantine) are validated where they are, on
Spark; only GE's per-expectation results (counts and at most ``EXAMPLES``
unexpected values) come back to the driver. Tables bounded by the number of
partitions (``DRIVER_TABLES``) go to GE's pandas engine instead: same
expectations, a tenth of the cost. The manifest's accounting identity is plain
Python over the ``files`` list the run already holds.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, IntegerType, LongType, StructType

from replay.types import Profile
from schemas.domains import (
    CONFIDENCES,
    ELECTION_KINDS,
    EVENT_KINDS,
    FILE_KINDS,
    FINDING_KINDS,
    SEVERITIES,
    VERDICTS,
)
from schemas.tables import FILE_STATS, GOLD_TABLES, PARTITION_EVENTS

#: Unexpected values kept per failed expectation (the report goes into
#: run_manifest.json: it stays small).
EXAMPLES = 5

SILVER_TABLES: dict[str, StructType] = {
    "partition_events": PARTITION_EVENTS,
    "file_stats": FILE_STATS,
}
TABLES: dict[str, StructType] = {**SILVER_TABLES, **GOLD_TABLES}

#: The profiles a finding or verdict can be judged under (``auto`` is only
#: ever a request: the run resolves it per cluster).
JUDGED_PROFILES: tuple[str, ...] = tuple(p.value for p in Profile if p is not Profile.AUTO)

#: Which declared domain each enum column takes its values from.
DOMAINS: dict[tuple[str, str], tuple[str, ...]] = {
    ("partition_events", "kind"): EVENT_KINDS,
    ("file_stats", "kind"): FILE_KINDS,
    ("anomalies", "kind"): FINDING_KINDS,
    ("anomalies", "severity"): SEVERITIES,
    ("anomalies", "confidence"): CONFIDENCES,
    ("anomalies", "profile"): JUDGED_PROFILES,
    ("epoch_lineage", "election_kind"): ELECTION_KINDS,
    ("partition_verdicts", "verdict"): VERDICTS,
    ("partition_verdicts", "profile"): JUDGED_PROFILES,
    ("partition_health_daily", "verdict"): VERDICTS,
}

#: An offset in Kafka's words: log offsets, HWM, LEO, truncation point,
#: controller order. ``line_no``, ``seq``, epochs and sizes are not offsets.
OFFSET_COLUMN = re.compile(r"(^|_)offset($|_)|^hwm$|^previous_hwm$|^leo$|^truncate_to$")
#: Counts and durations: never negative either (the accounting's ``lines_*``,
#: sizes, and the BI rollup's per-day counts and seconds).
COUNT_COLUMN = re.compile(
    r"^lines_|^records_(lost|size)$|findings$|^events$|_size$|^truncations_"
    r"|_(elections|changes|divergences|regressions|violations|seconds)$"
)

#: Silver keeps values exactly as Kafka encodes them, so an offset may be
#: Kafka's "unknown" sentinel (UNDEFINED_OFFSET / UNDEFINED_EPOCH_OFFSET = -1,
#: e.g. the HWM of a fetch answer with an error). Gold holds no sentinel.
SILVER_MIN_OFFSET = -1
GOLD_MIN_OFFSET = 0

#: Tables that are a leader-epoch lineage (one row per partition x epoch).
LINEAGE_TABLES: tuple[str, ...] = ("epoch_lineage",)
#: The orders in which a lineage's leader epochs must not go back, by the
#: column that establishes the order.
LINEAGE_ORDERS: tuple[str, ...] = ("metadata_offset", "partition_epoch")

#: One row per identity (DESIGN.md "Gold outputs").
IDENTITIES: dict[str, tuple[str, ...]] = {
    "anomalies": ("anomaly_id",),
    "epoch_lineage": ("cluster", "topic_key", "partition", "leader_epoch"),
    "partition_verdicts": ("cluster", "topic_key", "partition"),
    "partition_health_daily": ("cluster", "topic_key", "partition", "date"),
}

#: Tables whose size follows the number of partitions (and days), not the
#: number of input lines: they are validated on the driver, by GE's pandas
#: engine, after one Spark job that collects just the columns the suite reads.
#: Measured on the demo's tables, warm: 1.9 s against 15.8 s for the same four
#: suites on GE's Spark engine, whose fixed cost is a handful of Spark jobs
#: and some 20 planned-and-executed ``limit(0)`` queries per suite. Tables
#: that grow with the input (silver, replica_offsets, isr_timeline,
#: quarantine) stay on Spark.
DRIVER_TABLES: tuple[str, ...] = (
    "anomalies",
    "epoch_lineage",
    "partition_verdicts",
    "partition_health_daily",
)

TOPIC_KEY = "topic_key"
NUMBER = (IntegerType, LongType, DoubleType)


# --- the report ---------------------------------------------------------------


@dataclass
class ExpectationResult:
    #: the rule, e.g. ``not_null``, ``offset_non_negative``, ``in_domain``
    rule: str
    #: the GE expectation type, or ``python`` for the manifest's checks
    expectation: str
    #: the column(s) it reads
    columns: list[str]
    success: bool
    unexpected_count: int | None = None
    #: at most EXAMPLES unexpected values (pairs for pair rules)
    unexpected_examples: list[Any] = field(default_factory=list)
    element_count: int | None = None
    #: GE raised while computing it (counts as a failure)
    error: str | None = None

    @property
    def key(self) -> str:
        return f"{self.rule}({', '.join(self.columns)})"


@dataclass
class SuiteResult:
    suite: str
    table: str
    success: bool
    seconds: float
    expectations: list[ExpectationResult]

    def failed(self) -> list[ExpectationResult]:
        return [e for e in self.expectations if not e.success]


@dataclass
class ValidationFailed(Exception):
    """A run's tables broke at least one expectation (fails the DAG task)."""

    def __init__(self, report: QualityReport) -> None:
        super().__init__("\n".join(report.lines()))
        self.report = report


@dataclass
class QualityReport:
    success: bool
    seconds: float
    suites: list[SuiteResult]

    def suite(self, table: str) -> SuiteResult:
        return next(s for s in self.suites if s.table == table)

    def failures(self) -> list[tuple[str, ExpectationResult]]:
        return [(s.suite, e) for s in self.suites for e in s.failed()]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: run_manifest.json's ``validation``."""
        return _jsonable(asdict(self))  # type: ignore[no-any-return]

    def raise_for_failures(self) -> None:
        if not self.success:
            raise ValidationFailed(self)

    def lines(self) -> list[str]:
        """One line per failed expectation, for the CLI."""
        out = []
        for suite, e in self.failures():
            what = e.error or (
                f"{e.unexpected_count} unexpected"
                + (f", e.g. {e.unexpected_examples}" if e.unexpected_examples else "")
            )
            out.append(f"{suite}: {e.key} failed: {what}")
        return out


def _plain(value: Any) -> Any:
    """A Python value for a pandas/numpy one (an example from the driver engine)."""
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "item") and callable(value.item):
        value = value.item()  # numpy scalar
    if isinstance(value, float) and value.is_integer():
        return int(value)  # a nullable integer column read by pandas as float
    return value


def _jsonable(value: Any) -> Any:
    value = _plain(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


# --- suites, generated from the schemas ---------------------------------------


@dataclass(frozen=True)
class Suite:
    table: str
    stage: str  # silver | gold
    #: adds the derived columns the expectations read (topic_key, previous epochs)
    derive: Callable[[DataFrame], DataFrame]
    #: (rule, GE expectation) in report order
    expectations: tuple[tuple[str, Any], ...]
    #: declared columns the frame must carry
    declared: tuple[str, ...]


def _is_per_partition(schema: StructType) -> bool:
    names = schema.fieldNames()
    return (
        "partition" in names
        and not schema["partition"].nullable
        and "topic" in names
        and "topic_id" in names
    )


def _previous_epoch(order: str) -> str:
    return f"previous_leader_epoch_by_{order}"


def _derive(table: str, schema: StructType) -> Callable[[DataFrame], DataFrame]:
    per_partition = _is_per_partition(schema)
    lineage = table in LINEAGE_TABLES

    def derive(df: DataFrame) -> DataFrame:
        if per_partition:
            df = df.withColumn(TOPIC_KEY, F.coalesce(F.col("topic"), F.col("topic_id")))
        if lineage:
            for order in LINEAGE_ORDERS:
                # Only rows that carry the order column are ordered by it; the
                # leader epoch breaks ties, so a tie can never fail the rule.
                keyed = F.col(order).isNotNull()
                window = Window.partitionBy("cluster", TOPIC_KEY, "partition", keyed).orderBy(
                    order, "leader_epoch"
                )
                df = df.withColumn(
                    _previous_epoch(order),
                    F.when(keyed, F.lag("leader_epoch").over(window)),
                )
        return df

    return derive


def build_suite(table: str) -> Suite:
    """The suite of one table, from its declared schema and domains."""
    import great_expectations.expectations as gxe

    schema = TABLES[table]
    stage = "silver" if table in SILVER_TABLES else "gold"
    names = schema.fieldNames()
    rules: list[tuple[str, Any]] = []
    for f in schema.fields:
        if not f.nullable:
            rules.append(("not_null", gxe.ExpectColumnValuesToNotBeNull(column=f.name)))
    if _is_per_partition(schema):
        rules.append(("not_null", gxe.ExpectColumnValuesToNotBeNull(column=TOPIC_KEY)))
    for f in schema.fields:
        if isinstance(f.dataType, LongType | IntegerType) and OFFSET_COLUMN.search(f.name):
            low = SILVER_MIN_OFFSET if stage == "silver" else GOLD_MIN_OFFSET
            rules.append(
                (
                    "offset_non_negative",
                    gxe.ExpectColumnValuesToBeBetween(column=f.name, min_value=low),
                )
            )
        elif isinstance(f.dataType, NUMBER) and COUNT_COLUMN.search(f.name):
            rules.append(
                (
                    "count_non_negative",
                    gxe.ExpectColumnValuesToBeBetween(column=f.name, min_value=0),
                )
            )
        elif f.name == "line_no":
            rules.append(
                ("line_no_positive", gxe.ExpectColumnValuesToBeBetween(column=f.name, min_value=1))
            )

    def at_most(low: str, high: str) -> Any:
        """``low <= high`` on every row holding both."""
        return gxe.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A=high, column_B=low, or_equal=True, ignore_row_if="either_value_is_missing"
        )

    if "hwm" in names and "leo" in names:
        # A replica's HWM never passes its own log end (Kafka clamps it to LEO).
        rules.append(("hwm_le_leo", at_most("hwm", "leo")))
    if "offset_start" in names and "offset_end" in names:
        # [offset_start, offset_end) is half-open: it may be empty, never reversed.
        rules.append(("range_ordered", at_most("offset_start", "offset_end")))
    for f in schema.fields:
        domain = DOMAINS.get((table, f.name))
        if domain is not None:
            rules.append(
                (
                    "in_domain",
                    gxe.ExpectColumnValuesToBeInSet(column=f.name, value_set=list(domain)),
                )
            )
    if table in LINEAGE_TABLES:
        for order in LINEAGE_ORDERS:
            rules.append(
                (
                    f"leader_epoch_non_decreasing_by_{order}",
                    gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                        column_A="leader_epoch",
                        column_B=_previous_epoch(order),
                        or_equal=True,
                        ignore_row_if="either_value_is_missing",
                    ),
                )
            )
    identity = IDENTITIES.get(table)
    if identity is not None:
        if len(identity) == 1:
            rules.append(("unique", gxe.ExpectColumnValuesToBeUnique(column=identity[0])))
        else:
            rules.append(
                ("unique", gxe.ExpectCompoundColumnsToBeUnique(column_list=list(identity)))
            )
    return Suite(
        table=table,
        stage=stage,
        derive=_derive(table, schema),
        expectations=tuple(rules),
        declared=tuple(n for n in names if n != "date"),
    )


# --- running them -------------------------------------------------------------


@dataclass
class _Context:
    context: Any
    #: whole-dataframe batch definitions: Spark frames, pandas frames
    batch: Any
    pandas_batch: Any


@functools.cache
def _context() -> _Context:
    """One ephemeral GE context per process (creating it imports and wires a
    good part of GE); no analytics, no progress bars, nothing on disk."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
    )
    context = gx.get_context(mode="ephemeral", project_config=config)
    # persist=False: GE would persist every batch and never release it; the
    # caller's frames are persisted (or cheap), and validate_run persists the
    # derived frame itself for the length of its suite.
    source = context.data_sources.add_spark("epochtrail", persist=False)
    batch = source.add_dataframe_asset("table").add_batch_definition_whole_dataframe("whole")
    driver = context.data_sources.add_pandas("epochtrail_driver")
    pandas_batch = driver.add_dataframe_asset("table").add_batch_definition_whole_dataframe("whole")
    return _Context(context, batch, pandas_batch)


def _columns_of(config: Any) -> list[str]:
    kwargs = config.kwargs
    if "column" in kwargs:
        return [kwargs["column"]]
    if "column_A" in kwargs:
        return [kwargs["column_A"], kwargs["column_B"]]
    return list(kwargs.get("column_list", []))


def _rule_key(config: Any) -> str:
    return f"{(config.meta or {}).get('rule')}:{config.type}:{_columns_of(config)}"


def _expectation_of(config: Any) -> Any:
    """A fresh expectation from a result's configuration (a suite owns the
    expectations added to it)."""
    expectation = config.to_domain_obj()
    expectation.id = None
    return expectation


def run_suite(suite: Suite, df: DataFrame) -> SuiteResult:
    """Validate one frame against one suite: on Spark, or on the driver for
    the ``DRIVER_TABLES``."""
    import great_expectations as gx

    started = time.perf_counter()
    results: list[ExpectationResult] = []
    missing = [c for c in suite.declared if c not in df.columns]
    results.append(
        ExpectationResult(
            rule="declared_columns",
            expectation="python",
            columns=list(suite.declared),
            success=not missing,
            unexpected_count=len(missing),
            unexpected_examples=missing[:EXAMPLES],
        )
    )
    present = set(df.columns)
    derived = suite.derive(df)
    present |= set(derived.columns)
    runnable = [
        (rule, e)
        for rule, e in suite.expectations
        if all(c in present for c in _columns_of(e.configuration))
    ]
    ctx = _context()
    gx_suite = gx.ExpectationSuite(name=f"{suite.stage}.{suite.table}")
    for rule, expectation in runnable:
        expectation.meta = {"rule": rule}
        gx_suite.add_expectation(expectation)
    on_driver = suite.table in DRIVER_TABLES
    if on_driver:
        read = sorted({c for _, e in runnable for c in _columns_of(e.configuration)})
        frame = derived.select(*read).toPandas()
        owned = False
    else:
        # GE runs several jobs over the frame: cache it for the suite, unless
        # the caller already did (then it is the caller's to release).
        owned = not derived.is_cached
        frame = derived.persist(StorageLevel.MEMORY_AND_DISK) if owned else derived
    try:
        definition = ctx.pandas_batch if on_driver else ctx.batch
        batch = definition.get_batch(batch_parameters={"dataframe": frame})
        # Counts first, without examples: GE then bundles the unexpected counts
        # of a frame into a few aggregate jobs (8 on partition_events, against
        # 38 when every expectation also fetches its examples). Only the
        # expectations that failed are run again for their examples.
        validation = batch.validate(
            gx_suite, result_format={"result_format": "BASIC", "partial_unexpected_count": 0}
        )
        failed = [r for r in validation.results if not r.success]
        examples: dict[str, list[Any]] = {}
        if failed:
            again = gx.ExpectationSuite(name=f"{gx_suite.name}.examples")
            for r in failed:
                again.add_expectation(_expectation_of(r.expectation_config))
            rerun = batch.validate(
                again,
                result_format={"result_format": "BASIC", "partial_unexpected_count": EXAMPLES},
            )
            for r in rerun.results:
                examples[_rule_key(r.expectation_config)] = [
                    _plain(v)
                    for v in ((r.result or {}).get("partial_unexpected_list") or [])[:EXAMPLES]
                ]
    finally:
        if owned:
            frame.unpersist()
    for r in validation.results:
        config = r.expectation_config
        info = r.exception_info or {}
        raised = bool(info.get("raised_exception"))
        result = r.result or {}
        results.append(
            ExpectationResult(
                rule=str((config.meta or {}).get("rule", config.type)),
                expectation=config.type,
                columns=_columns_of(config),
                success=bool(r.success) and not raised,
                unexpected_count=result.get("unexpected_count"),
                unexpected_examples=examples.get(_rule_key(config), []),
                element_count=result.get("element_count"),
                error=str(info.get("exception_message")) if raised else None,
            )
        )
    order = {rule: i for i, (rule, _) in enumerate(suite.expectations)}
    results[1:] = sorted(results[1:], key=lambda e: (order.get(e.rule, len(order)), e.columns))
    return SuiteResult(
        suite=f"{suite.stage}.{suite.table}",
        table=suite.table,
        success=all(e.success for e in results),
        seconds=round(time.perf_counter() - started, 3),
        expectations=results,
    )


def check_manifest(manifest: Mapping[str, Any]) -> SuiteResult:
    """The manifest's accounting, in plain Python: per file, lines read =
    parsed + ignored by rule + quarantined (DESIGN.md "Inputs"), the counts
    are not negative, the kind is declared; and the totals add up."""
    started = time.perf_counter()
    files = list(manifest.get("files", []))
    counts = [f.name for f in FILE_STATS.fields if COUNT_COLUMN.search(f.name)]

    def check(rule: str, columns: list[str], bad: list[Any]) -> ExpectationResult:
        return ExpectationResult(
            rule=rule,
            expectation="python",
            columns=columns,
            success=not bad,
            unexpected_count=len(bad),
            unexpected_examples=bad[:EXAMPLES],
            element_count=len(files),
        )

    def unaccounted(f: Mapping[str, Any]) -> bool:
        return bool(
            f["lines_read"] != f["lines_parsed"] + f["lines_ignored"] + f["lines_quarantined"]
        )

    results = [
        check(
            "accounting_identity",
            ["lines_read", "lines_parsed", "lines_ignored", "lines_quarantined"],
            [f.get("path") for f in files if unaccounted(f)],
        ),
        check(
            "count_non_negative",
            counts,
            [f.get("path") for f in files if any((f.get(c) or 0) < 0 for c in counts)],
        ),
        check(
            "in_domain",
            ["kind"],
            [f.get("kind") for f in files if f.get("kind") not in DOMAINS[("file_stats", "kind")]],
        ),
    ]
    totals = {
        "lines_read": "lines_read",
        "lines_parsed": "lines_parsed",
        "lines_ignored": "lines_ignored",
        "quarantined_lines": "lines_quarantined",
    }
    off = [
        key
        for key, column in totals.items()
        if key in manifest and manifest[key] != sum(f[column] for f in files)
    ]
    results.append(check("totals_match_files", list(totals), off))
    return SuiteResult(
        suite="manifest.files",
        table="manifest",
        success=all(e.success for e in results),
        seconds=round(time.perf_counter() - started, 3),
        expectations=results,
    )


def validate_run(
    spark: SparkSession | None,
    tables: Mapping[str, DataFrame],
    manifest: Mapping[str, Any] | None = None,
) -> QualityReport:
    """Validate a run's silver and gold frames, and its manifest's accounting.

    ``tables`` maps table names (``partition_events``, ``file_stats``, and the
    gold tables of ``schemas.tables.GOLD_TABLES``) to Spark DataFrames; any
    subset may be given. ``spark`` is accepted for symmetry with the other
    jobs: the frames carry their session.
    """
    del spark
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"no suite for table(s) {unknown}; known: {sorted(TABLES)}")
    started = time.perf_counter()
    suites = [run_suite(build_suite(name), tables[name]) for name in TABLES if name in tables]
    if manifest is not None:
        suites.append(check_manifest(manifest))
    return QualityReport(
        success=all(s.success for s in suites),
        seconds=round(time.perf_counter() - started, 3),
        suites=suites,
    )
