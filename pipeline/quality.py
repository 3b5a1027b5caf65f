"""Validation: Great Expectations suites over the silver and gold tables.

DESIGN.md "Validation". Every suite is generated from ``schemas/``: a column
declared non-nullable must hold no null, an offset column (Kafka's words:
``*offset*``, ``hwm``, ``leo``, ``truncate_to``) no negative value, an enum
column only its declared domain. Two rules need more than one column or row
and are checked on a derived column, computed before GE sees the frame:

* ``topic_key``: a per-partition table (``partition`` declared non-null) must
  name the partition's topic by name or by id.
* ``previous_leader_epoch_by_*``: within a partition's lineage, the leader
  epoch of the previous row in an order the evidence establishes, the
  controller's (``metadata_offset``) and the partition epoch's (KIP-631: each
  change bumps it). Never clock order: clocks of different brokers drift, and
  the replay, not the validation, owns the skew allowance.

Every suite runs on GE's pandas engine, after at most one query for its
rows: the gold tables as the run published them (read back with pyarrow, no
Spark), silver's first ``SILVER_SAMPLE_ROWS`` rows (one Spark ``limit``
query per table). GE's Spark engine costs a few Spark jobs and some 20
planned ``limit(0)`` queries per suite whatever the size of the table
(docs/validation.md): on the demo that was a quarter of the run. A silver
table read only in part says so (``SuiteResult.sampled``). The manifest's
accounting identity is plain Python over the ``files`` list the run already
holds, so every line is accounted for whatever the bound.

Besides the summary the manifest keeps, GE's own validation results are
written as GE writes them (``OUT/validation/<suite>.json``) and, on request,
GE's static Data Docs site (``OUT/data_docs/``).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
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

#: A pandas frame (what GE validates). pandas ships no type information and
#: its stubs are not installed, so to mypy this is Any; the alias says which
#: frames are pandas and which are Spark's ``DataFrame``.
PandasFrame = Any

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

#: silver rows GE reads per table: the first this many (silver grows with the
#: input; its rules are per row, and the replay accounts for every row
#: anyway). Gold tables are read whole.
SILVER_SAMPLE_ROWS = 20_000

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
    #: rows GE read
    rows: int | None = None
    #: a silver table's first SILVER_SAMPLE_ROWS rows, not all of it
    sampled: bool = False

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
    #: where GE's own results went, relative to the run's out folder:
    #: ``results`` (validation-result JSON files), ``data_docs`` (index page)
    written: dict[str, Any] | None = None

    def suite(self, table: str) -> SuiteResult:
        return next(s for s in self.suites if s.table == table)

    def failures(self) -> list[tuple[str, ExpectationResult]]:
        return [(s.suite, e) for s in self.suites for e in s.failed()]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: run_manifest.json's ``validation``."""
        plain: dict[str, Any] = _jsonable(asdict(self))
        return plain

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
    derive: Callable[[PandasFrame], PandasFrame]
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


def _derive(table: str, schema: StructType) -> Callable[[PandasFrame], PandasFrame]:
    """The derived columns of a table's suite, on the pandas frame GE reads."""
    per_partition = _is_per_partition(schema)
    lineage = table in LINEAGE_TABLES

    def derive(pdf: PandasFrame) -> PandasFrame:
        pdf = pdf.copy()
        if per_partition and {"topic", "topic_id"} <= set(pdf.columns):
            pdf[TOPIC_KEY] = pdf["topic"].where(pdf["topic"].notna(), pdf["topic_id"])
        if lineage and {"cluster", TOPIC_KEY, "partition", "leader_epoch"} <= set(pdf.columns):
            for order in LINEAGE_ORDERS:
                if order not in pdf.columns:
                    continue
                # Only rows that carry the order column are ordered by it; the
                # leader epoch breaks ties, so a tie can never fail the rule.
                keyed = pdf[pdf[order].notna()].sort_values([order, "leader_epoch"], kind="stable")
                previous = keyed.groupby(
                    ["cluster", TOPIC_KEY, "partition"], dropna=False, sort=False
                )["leader_epoch"].shift(1)
                pdf[_previous_epoch(order)] = previous.reindex(pdf.index)
        return pdf

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

_CONTEXT_LOCK = threading.Lock()


@functools.cache
def _cached_context() -> tuple[Any, Any]:
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
    driver = context.data_sources.add_pandas("epochtrail")
    batch = driver.add_dataframe_asset("table").add_batch_definition_whole_dataframe("whole")
    return context, batch


def _context() -> tuple[Any, Any]:
    """One ephemeral GE context per process, with its pandas batch definition
    (creating it imports and wires a good part of GE: seconds); no
    analytics, no progress bars, nothing on disk."""
    with _CONTEXT_LOCK:
        return _cached_context()


def prewarm() -> threading.Thread:
    """Import GE and create the context in the background: Spark's work then
    hides GE's fixed cost (the run calls it as it starts, or for a large
    input after the replay, ``session.small_input``)."""
    thread = threading.Thread(target=_context, name="epochtrail-ge-prewarm", daemon=True)
    thread.start()
    return thread


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


#: the derived columns and what each is computed from
_DERIVED_FROM: dict[str, tuple[str, ...]] = {
    TOPIC_KEY: ("topic", "topic_id"),
    **{
        _previous_epoch(o): ("cluster", "topic", "topic_id", "partition", "leader_epoch", o)
        for o in LINEAGE_ORDERS
    },
}


#: a gold table whose rules are all row by row (no identity, no lineage
#: order) is validated this many rows at a time: the results add up, and
#: the memory GE needs stays the same however large the table grows (at
#: 1 GiB of busy input, replica_offsets' 1.1 million rows whole took the
#: run's Python process to 980 MiB)
GOLD_BATCH_ROWS = 100_000


@dataclass(frozen=True)
class Published:
    """A gold table as the run wrote it, read back with pyarrow when a suite
    asks (only the columns it reads), whole or in batches."""

    root: str
    clusters: tuple[str, ...] | None = None

    def _dataset(self) -> Any:
        import pyarrow as pa
        import pyarrow.dataset as ds

        partitioning = ds.partitioning(
            pa.schema([("cluster", pa.string()), ("date", pa.string())]), flavor="hive"
        )
        return ds.dataset(self.root, format="parquet", partitioning=partitioning)

    def _filter(self) -> Any:
        import pyarrow.dataset as ds

        return None if self.clusters is None else ds.field("cluster").isin(list(self.clusters))

    @property
    def columns(self) -> list[str]:
        return list(self._dataset().schema.names)

    def read(self, columns: list[str]) -> PandasFrame:
        return self._dataset().to_table(columns=columns, filter=self._filter()).to_pandas()

    def batches(self, columns: list[str], rows: int) -> Iterator[PandasFrame]:
        """The table ``rows`` rows at a time (at least one frame, maybe empty)."""
        import pyarrow as pa

        dataset = self._dataset()
        pending: list[Any] = []
        held = 0
        sent = False
        # One batch in memory at a time: the scanner's default read-ahead
        # (16 batches, 4 files) would hold most of a large table. The
        # system allocator returns what a batch used (Arrow's default pool
        # keeps it: 43 MiB more at the peak of a 1 GiB run).
        pool = pa.system_memory_pool()
        scanned = dataset.to_batches(
            columns=columns,
            filter=self._filter(),
            batch_size=rows,
            batch_readahead=0,
            fragment_readahead=0,
            memory_pool=pool,
        )
        for batch in scanned:
            pending.append(batch)
            held += batch.num_rows
            while held >= rows:
                table = pa.Table.from_batches(pending)
                yield table.slice(0, rows).to_pandas(memory_pool=pool)
                rest = table.slice(rows)
                pending, held = rest.to_batches(), rest.num_rows
                sent = True
        if held or not sent:
            rest = (
                pa.Table.from_batches(pending)
                if pending
                else dataset.schema.empty_table().select(columns)
            )
            yield rest.to_pandas(memory_pool=pool)


@dataclass(frozen=True)
class Sampled:
    """A silver Spark frame's sample, taken ahead of validation by a run that
    ends its Spark session first: the frame's columns, and the rows
    :func:`_frames` would have asked Spark for (``SILVER_SAMPLE_ROWS`` and
    one more, of the columns its suite reads)."""

    columns: list[str]
    frame: PandasFrame


def silver_sample(table: str, df: DataFrame) -> Sampled:
    """:class:`Sampled` of silver ``table``'s frame ``df``, one Spark query."""
    suite = build_suite(table)
    if suite.stage != "silver":
        raise ValueError(f"{table} is not a silver table")
    columns = list(df.columns)
    _, read = _plan(suite, columns)
    return Sampled(columns, df.select(*read).limit(SILVER_SAMPLE_ROWS + 1).toPandas())


def _row_local(suite: Suite) -> bool:
    """Every rule of the suite judges one row at a time."""
    return suite.table not in IDENTITIES and suite.table not in LINEAGE_TABLES


def _frames(suite: Suite, df: Any, read: list[str]) -> tuple[Iterator[PandasFrame], int | None]:
    """The rows GE sees, as pandas frames (one, or batches of a row-local
    gold table), and the row bound when it was reached. A Spark frame
    costs one query: its read columns, silver limited to
    ``SILVER_SAMPLE_ROWS`` (one more row is asked, to know the bound was
    reached)."""
    if isinstance(df, Published):
        if _row_local(suite):
            return df.batches(read, GOLD_BATCH_ROWS), None
        return iter([df.read(read)]), None
    limit = SILVER_SAMPLE_ROWS if suite.stage == "silver" else None
    pdf: PandasFrame
    if isinstance(df, Sampled):
        pdf = df.frame[read]
    elif isinstance(df, DataFrame):
        frame = df.select(*read)
        if limit is not None:
            frame = frame.limit(limit + 1)
        pdf = frame.toPandas()
    else:
        pdf = df[read]
    if limit is not None and len(pdf) > limit:
        return iter([pdf.iloc[:limit]]), limit
    return iter([pdf]), None


def _validate_frame(
    suite: Suite, runnable: list[tuple[str, Any]], frame: PandasFrame
) -> tuple[list[ExpectationResult], Any, Any]:
    """One frame through GE: each runnable expectation's result, and GE's
    suite and validation result."""
    import great_expectations as gx

    _, definition = _context()
    gx_suite = gx.ExpectationSuite(name=f"{suite.stage}.{suite.table}")
    for rule, expectation in runnable:
        expectation = _expectation_of(expectation.configuration)
        expectation.meta = {"rule": rule}
        gx_suite.add_expectation(expectation)
    batch = definition.get_batch(batch_parameters={"dataframe": frame})
    # Counts first, without examples; only the expectations that failed run
    # again for their examples (docs/validation.md).
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
    results = []
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
    return results, gx_suite, validation


def _added(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def _merged(before: list[ExpectationResult], batch: list[ExpectationResult]) -> None:
    """Add one batch's results into ``before`` (the same expectations, by key)."""
    held = {e.key: e for e in before}
    for e in batch:
        known = held.get(e.key)
        if known is None:
            before.append(e)
            held[e.key] = e
            continue
        known.success = known.success and e.success
        known.unexpected_count = _added(known.unexpected_count, e.unexpected_count)
        known.element_count = _added(known.element_count, e.element_count)
        room = EXAMPLES - len(known.unexpected_examples)
        known.unexpected_examples += e.unexpected_examples[: max(room, 0)]
        known.error = known.error or e.error


def _plan(suite: Suite, columns: list[str]) -> tuple[list[tuple[str, Any]], list[str]]:
    """The suite's expectations that a table of ``columns`` can run (their
    columns present or derivable), and the columns they read."""
    present = set(columns) | {
        d for d, inputs in _DERIVED_FROM.items() if all(c in columns for c in inputs)
    }
    runnable = [
        (rule, e)
        for rule, e in suite.expectations
        if all(c in present for c in _columns_of(e.configuration))
    ]
    needed = {c for _, e in runnable for c in _columns_of(e.configuration)}
    read = sorted(
        {c for c in needed if c in columns}
        | {i for d in needed if d in _DERIVED_FROM for i in _DERIVED_FROM[d] if i in columns}
    )
    return runnable, read


def _run_suite(suite: Suite, df: Any) -> tuple[SuiteResult, list[tuple[str, Any, Any]]]:
    """One suite over one table: its summary, and GE's own (name, suite,
    validation result) per frame validated (a row-local gold table in
    batches: one each, named ``<suite>.batch-N`` after the first)."""
    started = time.perf_counter()
    results: list[ExpectationResult] = []
    columns = list(df.columns)
    missing = [c for c in suite.declared if c not in columns]
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
    runnable, read = _plan(suite, columns)
    frames, bound = _frames(suite, df, read)
    checked: list[ExpectationResult] = []
    ge: list[tuple[str, Any, Any]] = []
    rows = 0
    for pdf in frames:
        frame = suite.derive(pdf)
        rows += len(frame)
        del pdf
        batch_results, gx_suite, validation = _validate_frame(suite, runnable, frame)
        del frame
        _merged(checked, batch_results)
        name = gx_suite.name if not ge else f"{gx_suite.name}.batch-{len(ge) + 1}"
        ge.append((name, gx_suite, validation))
    results += checked
    order = {rule: i for i, (rule, _) in enumerate(suite.expectations)}
    results[1:] = sorted(results[1:], key=lambda e: (order.get(e.rule, len(order)), e.columns))
    summary = SuiteResult(
        suite=f"{suite.stage}.{suite.table}",
        table=suite.table,
        success=all(e.success for e in results),
        seconds=round(time.perf_counter() - started, 3),
        expectations=results,
        rows=rows,
        sampled=bound is not None,
    )
    return summary, ge


def run_suite(suite: Suite, df: Any) -> SuiteResult:
    """Validate one frame (Spark or pandas) against one suite, on GE's pandas
    engine: a gold table whole, a silver table's first
    ``SILVER_SAMPLE_ROWS`` rows."""
    return _run_suite(suite, df)[0]


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


def read_published(
    out: str, tables: tuple[str, ...], clusters: list[str] | None = None
) -> dict[str, Published]:
    """Gold tables as the run wrote them, to be read back without Spark
    (pyarrow, ``cluster`` and ``date`` as strings) when their suites run;
    ``clusters`` keeps those clusters' folders only. A table with no file
    is left out."""
    frames = {}
    for table in tables:
        root = Path(out) / table
        if not root.is_dir() or not any(root.rglob("*.parquet")):
            continue
        frames[table] = Published(str(root), None if clusters is None else tuple(clusters))
    return frames


def write_results(
    out: str, runs: list[tuple[str, Any, Any]], data_docs: bool = False
) -> dict[str, Any]:
    """Each suite's validation result as GE writes it (its
    ``ExpectationSuiteValidationResult`` JSON) under ``OUT/validation/``,
    and with ``data_docs`` GE's static Data Docs site under
    ``OUT/data_docs/``. Returns where they are, for the manifest."""
    folder = Path(out) / "validation"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, _, validation in runs:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(validation.to_json_dict(), indent=2) + "\n", encoding="utf-8")
        written.append(f"validation/{path.name}")
    where: dict[str, Any] = {"results": written, "data_docs": None}
    if data_docs and runs:
        where["data_docs"] = _build_data_docs(Path(out) / "data_docs", runs)
    return where


def _build_data_docs(site: Path, runs: list[tuple[str, Any, Any]]) -> str:
    """GE's own site builder, in a context of its own (the shared one keeps
    no suite), over this run's results."""
    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    context = gx.get_context(
        mode="ephemeral",
        project_config=DataContextConfig(
            store_backend_defaults=InMemoryStoreBackendDefaults(),
            analytics_enabled=False,
            progress_bars=ProgressBarsConfig(globally=False),
        ),
    )
    run_id = RunIdentifier(run_name="epochtrail")
    added: set[str] = set()
    for name, gx_suite, validation in runs:
        if gx_suite.name not in added:  # a table validated in batches: one suite
            added.add(gx_suite.name)
            context.suites.add(
                gx.ExpectationSuite(
                    name=gx_suite.name,
                    expectations=[_expectation_of(e.configuration) for e in gx_suite.expectations],
                )
            )
        key = ValidationResultIdentifier(
            expectation_suite_identifier=ExpectationSuiteIdentifier(name=gx_suite.name),
            run_id=run_id,
            batch_identifier=name.split(".", 1)[-1],
        )
        context.validation_results_store.set(key, validation)
    context.add_data_docs_site(
        "epochtrail",
        {
            "class_name": "SiteBuilder",
            "store_backend": {
                "class_name": "TupleFilesystemStoreBackend",
                "base_directory": str(site),
            },
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        },
    )
    context.build_data_docs(site_names=["epochtrail"])
    return "data_docs/index.html"


def validate_run(
    spark: SparkSession | None,
    tables: Mapping[str, Any],
    manifest: Mapping[str, Any] | None = None,
    out: str | None = None,
    data_docs: bool = False,
) -> QualityReport:
    """Validate a run's silver and gold frames, and its manifest's accounting.

    ``tables`` maps table names (``partition_events``, ``file_stats``, and the
    gold tables of ``schemas.tables.GOLD_TABLES``) to Spark or pandas frames;
    any subset may be given. With ``out``, GE's own validation results are
    written there too (:func:`write_results`). ``spark`` is accepted for
    symmetry with the other jobs: the frames carry their session.
    """
    del spark
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"no suite for table(s) {unknown}; known: {sorted(TABLES)}")
    started = time.perf_counter()
    runs = [_run_suite(build_suite(name), tables[name]) for name in TABLES if name in tables]
    suites = [summary for summary, _ in runs]
    if manifest is not None:
        suites.append(check_manifest(manifest))
    where = None
    if out is not None:
        where = write_results(out, [one for _, ge in runs for one in ge], data_docs)
    return QualityReport(
        success=all(s.success for s in suites),
        seconds=round(time.perf_counter() - started, 3),
        suites=suites,
        written=where,
    )
