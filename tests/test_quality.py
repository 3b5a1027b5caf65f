"""The validation suites (pipeline/quality.py, DESIGN.md "Validation").

A real run's tables pass every suite; a frame that breaks one rule fails
exactly that rule's expectation, with the count of rows that break it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import StructField, StructType

from pipeline.quality import (
    TABLES,
    QualityReport,
    SuiteResult,
    build_suite,
    check_manifest,
    run_suite,
    validate_run,
)
from schemas.domains import EVENT_KINDS, FINDING_KINDS
from schemas.tables import GOLD_TABLES

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]
INCIDENT = ROOT / "examples" / "unclean-election"

# --- a real run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The bundled incident through the main job: its published gold tables,
    its silver frames (ingested again) and its manifest."""
    from pipeline.ingest import ingest
    from pipeline.run import RunOptions, run_job

    out = tmp_path_factory.mktemp("demo")
    summary = run_job(RunOptions(paths=[str(INCIDENT)], out=str(out), validate=False))
    # read back what the run published, with the declared schemas (as a BI
    # tool would): the suites check the tables as written
    tables = {
        name: spark.read.schema(GOLD_TABLES[name]).parquet(str(out / name)) for name in GOLD_TABLES
    }
    ingested = ingest(spark, [str(INCIDENT)], persist=True)
    tables["partition_events"] = ingested.events
    tables["file_stats"] = ingested.file_stats
    report = validate_run(spark, tables, summary.manifest)
    yield report, tables
    ingested.unpersist()


def test_the_demo_run_passes_every_suite(demo) -> None:  # type: ignore[no-untyped-def]
    report, _ = demo
    assert report.lines() == []
    assert report.success
    suites = {s.suite for s in report.suites}
    assert suites == {"silver.partition_events", "silver.file_stats", "manifest.files"} | {
        f"gold.{t}" for t in GOLD_TABLES
    }


def test_the_demo_suites_really_read_rows(demo) -> None:  # type: ignore[no-untyped-def]
    report, tables = demo
    lineage = report.suite("epoch_lineage")
    rules = {e.rule for e in lineage.expectations}
    assert {
        "not_null",
        "offset_non_negative",
        "in_domain",
        "leader_epoch_non_decreasing_by_metadata_offset",
        "leader_epoch_non_decreasing_by_partition_epoch",
        "unique",
    } <= rules
    # every GE expectation saw the table's rows (115 events, 6 lineage rows)
    events = report.suite("partition_events")
    counted = {e.element_count for e in events.expectations if e.expectation != "python"}
    assert counted == {tables["partition_events"].count()}
    assert {e.element_count for e in lineage.expectations if e.expectation != "python"} == {6}
    assert report.suite("manifest").expectations[0].element_count == 4


def test_the_report_is_json_for_the_manifest(demo) -> None:  # type: ignore[no-untyped-def]
    report, _ = demo
    again = json.loads(json.dumps(report.to_dict()))
    assert again["success"] is True
    names = [s["suite"] for s in again["suites"]]
    assert "gold.epoch_lineage" in names
    first = again["suites"][0]["expectations"][1]
    assert set(first) >= {"rule", "expectation", "columns", "success", "unexpected_count"}


# --- one broken rule at a time --------------------------------------------------


def _nullable(schema: StructType) -> StructType:
    """The declared schema with every field nullable, so a test can hold the
    null a real frame must not."""
    return StructType([StructField(f.name, f.dataType, True) for f in schema.fields])


#: what a row holds unless a test says otherwise, by column
BASE: dict[str, Any] = {
    "cluster": "c1",
    "topic": "orders",
    "topic_id": "5LHkG7R4S0aKxLbBzyP8wA",
    "partition": 0,
    "source_file": "broker-1/kafka-request.log",
    "line_no": 1,
    "seq": 1,
    "kind": None,
    "anomaly_id": "a1",
    "severity": "critical",
    "confidence": "confirmed",
    "profile": "kraft",
    "explanation": "x",
    "date": "2024-05-01",
    "leader_epoch": 0,
    "leader": 1,
    "election_kind": "clean",
    "start_offset_known": True,
    "replica": 1,
    "verdict": "valid",
    "findings": 0,
    "events": 1,
    "reason": "bad_json",
    "text": "{",
    "text_truncated": False,
}


def frame(spark, table: str, *rows: dict[str, Any]):  # type: ignore[no-untyped-def]
    schema = _nullable(TABLES[table])
    names = schema.fieldNames()
    full = [{n: {**BASE, **row}.get(n) for n in names} for row in rows]
    return spark.createDataFrame(full, schema)


def failed(result: SuiteResult) -> dict[str, int | None]:
    return {e.key: e.unexpected_count for e in result.failed()}


def check(spark, table: str, *rows: dict[str, Any]) -> SuiteResult:  # type: ignore[no-untyped-def]
    return run_suite(build_suite(table), frame(spark, table, *rows))


EVENT = {"kind": "fetch_request", "replica": 2, "fetch_offset": 10}
LINEAGE = {"metadata_offset": 1, "partition_epoch": 0, "start_offset": 0}


def test_well_formed_rows_pass(spark) -> None:  # type: ignore[no-untyped-def]
    assert failed(check(spark, "partition_events", EVENT, {**EVENT, "fetch_offset": -1})) == {}
    assert failed(check(spark, "anomalies", {"kind": "unclean_election"})) == {}
    assert (
        failed(
            check(
                spark,
                "epoch_lineage",
                LINEAGE,
                {"leader_epoch": 1, "metadata_offset": 5, "partition_epoch": 2},
            )
        )
        == {}
    )


def test_a_null_key_fails_not_null(spark) -> None:  # type: ignore[no-untyped-def]
    result = check(spark, "epoch_lineage", LINEAGE, {**LINEAGE, "leader_epoch": 1, "cluster": None})
    assert failed(result) == {"not_null(cluster)": 1}
    # a partition named by neither topic nor topic id
    result = check(spark, "replica_offsets", {"topic": None, "topic_id": None}, {"topic": None})
    assert failed(result) == {"not_null(topic_key)": 1}
    result = check(spark, "anomalies", {"kind": "hwm_regression", "anomaly_id": None})
    assert failed(result) == {"not_null(anomaly_id)": 1}


def test_a_negative_offset_fails(spark) -> None:  # type: ignore[no-untyped-def]
    result = check(spark, "replica_offsets", {"leo": -5}, {"leo": 3}, {"hwm": 2})
    assert failed(result) == {"offset_non_negative(leo)": 1}
    assert result.failed()[0].unexpected_examples == [-5]
    # silver keeps Kafka's -1 sentinel, nothing below it
    result = check(spark, "partition_events", {**EVENT, "fetch_offset": -2}, EVENT)
    assert failed(result) == {"offset_non_negative(fetch_offset)": 1}


def test_hwm_above_leo_fails(spark) -> None:  # type: ignore[no-untyped-def]
    rows = ({"leo": 10, "hwm": 20}, {"leo": 10, "hwm": 10}, {"leo": 10}, {"hwm": 30})
    result = check(spark, "replica_offsets", *rows)
    assert failed(result) == {"hwm_le_leo(leo, hwm)": 1}
    assert result.failed()[0].unexpected_examples == [(10, 20)]
    become_leader = {"kind": "become_leader", "leo": 100, "hwm": 120}
    result = check(spark, "partition_events", become_leader)
    assert failed(result) == {"hwm_le_leo(leo, hwm)": 1}


def test_an_epoch_going_back_in_controller_order_fails(spark) -> None:  # type: ignore[no-untyped-def]
    rows = (
        {"leader_epoch": 0, "metadata_offset": 1, "partition_epoch": None},
        {"leader_epoch": 2, "metadata_offset": 5, "partition_epoch": None},
        {"leader_epoch": 1, "metadata_offset": 9, "partition_epoch": None},
        # another partition: its own lineage, not compared with the first
        {"partition": 1, "leader_epoch": 0, "metadata_offset": 10, "partition_epoch": None},
    )
    result = check(spark, "epoch_lineage", *rows)
    assert failed(result) == {
        "leader_epoch_non_decreasing_by_metadata_offset(leader_epoch, "
        "previous_leader_epoch_by_metadata_offset)": 1
    }
    # epoch_lineage is validated on the driver: the example is plain Python
    assert result.failed()[0].unexpected_examples == [(1, 2)]
    assert json.dumps(result.failed()[0].unexpected_examples) == "[[1, 2]]"


def test_an_epoch_going_back_in_partition_epoch_order_fails(spark) -> None:  # type: ignore[no-untyped-def]
    rows = (
        {"leader_epoch": 3, "metadata_offset": None, "partition_epoch": 4},
        {"leader_epoch": 2, "metadata_offset": None, "partition_epoch": 6},
        {"leader_epoch": 4, "metadata_offset": None, "partition_epoch": None},
    )
    result = check(spark, "epoch_lineage", *rows)
    assert failed(result) == {
        "leader_epoch_non_decreasing_by_partition_epoch(leader_epoch, "
        "previous_leader_epoch_by_partition_epoch)": 1
    }


def test_an_unknown_enum_value_fails_its_domain(spark) -> None:  # type: ignore[no-untyped-def]
    assert "bogus" not in FINDING_KINDS and "bogus" not in EVENT_KINDS
    result = check(
        spark,
        "anomalies",
        {"kind": "bogus", "anomaly_id": "a1"},
        {"kind": "unclean_election", "anomaly_id": "a2", "severity": "fatal"},
    )
    assert failed(result) == {"in_domain(kind)": 1, "in_domain(severity)": 1}
    result = check(spark, "partition_events", EVENT, {**EVENT, "kind": "bogus"})
    assert failed(result) == {"in_domain(kind)": 1}
    assert result.failed()[0].unexpected_examples == ["bogus"]
    result = check(spark, "epoch_lineage", {**LINEAGE, "election_kind": "dirty"})
    assert failed(result) == {"in_domain(election_kind)": 1}


def test_a_duplicate_identity_fails_unique(spark) -> None:  # type: ignore[no-untyped-def]
    result = check(spark, "partition_verdicts", {}, {"verdict": "invalid", "findings": 1})
    assert failed(result) == {"unique(cluster, topic_key, partition)": 2}


def test_a_missing_declared_column_fails(spark) -> None:  # type: ignore[no-untyped-def]
    df = frame(spark, "replica_offsets", {"leo": 1}).drop("source_file")
    result = run_suite(build_suite("replica_offsets"), df)
    assert failed(result) == {
        "declared_columns("
        + ", ".join(n for n in TABLES["replica_offsets"].fieldNames() if n != "date")
        + ")": 1
    }
    assert result.failed()[0].unexpected_examples == ["source_file"]


def _file(path: str, read: int, parsed: int, ignored: int, quarantined: int) -> dict[str, Any]:
    return {
        "path": path,
        "kind": "request_log",
        "observer": 1,
        "lines_read": read,
        "lines_parsed": parsed,
        "lines_ignored": ignored,
        "lines_quarantined": quarantined,
    }


def test_a_manifest_whose_counts_do_not_add_up_fails() -> None:
    good = _file("a.log", 26, 23, 2, 1)
    bad = _file("b.log", 10, 8, 1, 0)
    result = check_manifest({"files": [good, bad]})
    assert failed(result) == {
        "accounting_identity(lines_read, lines_parsed, lines_ignored, lines_quarantined)": 1
    }
    assert result.failed()[0].unexpected_examples == ["b.log"]
    assert check_manifest({"files": [good], "lines_read": 26, "quarantined_lines": 1}).success
    totals = check_manifest({"files": [good], "lines_read": 27})
    assert failed(totals) == {
        "totals_match_files(lines_read, lines_parsed, lines_ignored, quarantined_lines)": 1
    }


def test_the_report_names_each_failure_for_the_cli(spark) -> None:  # type: ignore[no-untyped-def]
    report = validate_run(
        spark,
        {"replica_offsets": frame(spark, "replica_offsets", {"leo": -5})},
        {"files": [_file("b.log", 10, 8, 1, 0)]},
    )
    assert isinstance(report, QualityReport)
    assert not report.success
    assert report.lines() == [
        "gold.replica_offsets: offset_non_negative(leo) failed: 1 unexpected, e.g. [-5]",
        "manifest.files: accounting_identity(lines_read, lines_parsed, lines_ignored, "
        "lines_quarantined) failed: 1 unexpected, e.g. ['b.log']",
    ]
    with pytest.raises(ValueError, match="no suite"):
        validate_run(spark, {"silver_nonsense": frame(spark, "replica_offsets", {})})


# --- GE's own results, pandas frames, the silver bound ---------------------------


def _pandas_rows(table: str, *rows: dict[str, Any]) -> Any:
    import pandas as pd

    names = [n for n in TABLES[table].fieldNames()]
    return pd.DataFrame([{n: {**BASE, **row}.get(n) for n in names} for row in rows])


def test_pandas_frames_are_validated_like_spark_ones() -> None:
    rows = (
        {"leader_epoch": 0, "metadata_offset": 1, "partition_epoch": None},
        {"leader_epoch": 2, "metadata_offset": 5, "partition_epoch": None},
        {"leader_epoch": 1, "metadata_offset": 9, "partition_epoch": None},
        {"partition": 1, "leader_epoch": 0, "metadata_offset": 10, "partition_epoch": None},
    )
    result = run_suite(build_suite("epoch_lineage"), _pandas_rows("epoch_lineage", *rows))
    assert failed(result) == {
        "leader_epoch_non_decreasing_by_metadata_offset(leader_epoch, "
        "previous_leader_epoch_by_metadata_offset)": 1
    }
    assert result.failed()[0].unexpected_examples == [(1, 2)]
    assert (result.rows, result.sampled) == (4, False)


def test_silver_is_read_up_to_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.quality as quality

    monkeypatch.setattr(quality, "SILVER_SAMPLE_ROWS", 2)
    events = _pandas_rows("partition_events", EVENT, EVENT, {**EVENT, "fetch_offset": -7})
    result = run_suite(build_suite("partition_events"), events)
    # the third row (the bad one) is past the bound: said, not hidden
    assert (result.rows, result.sampled, failed(result)) == (2, True, {})
    gold = run_suite(build_suite("replica_offsets"), _pandas_rows("replica_offsets", {}, {}, {}))
    assert (gold.rows, gold.sampled) == (3, False)


def test_a_silver_sample_taken_ahead_validates_as_its_spark_frame(
    spark, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """What a run that ends Spark before validating hands GE
    (quality.silver_sample): the same rows, columns, bound and failures as
    the Spark frame read at validation."""
    import pipeline.quality as quality
    from pipeline.quality import Sampled, silver_sample

    bad = {**EVENT, "fetch_offset": -7}
    events = frame(spark, "partition_events", bad, EVENT, EVENT)
    sample = silver_sample("partition_events", events)
    assert isinstance(sample, Sampled) and sample.columns == events.columns
    # only the columns the suite reads crossed into pandas
    assert "fetch_offset" in sample.frame.columns
    assert len(sample.frame.columns) < len(events.columns)
    ahead, late = (run_suite(build_suite("partition_events"), f) for f in (sample, events))
    assert failed(ahead) == failed(late) != {}
    assert ahead.expectations == late.expectations
    assert (ahead.rows, ahead.sampled) == (late.rows, late.sampled) == (3, False)
    monkeypatch.setattr(quality, "SILVER_SAMPLE_ROWS", 2)
    bounded = run_suite(build_suite("partition_events"), silver_sample("partition_events", events))
    assert (bounded.rows, bounded.sampled) == (2, True)
    with pytest.raises(ValueError, match="not a silver table"):
        silver_sample("anomalies", events)


def test_ge_results_are_written_as_ge_writes_them(tmp_path: Path) -> None:
    tables = {
        "anomalies": _pandas_rows("anomalies", {"kind": "unclean_election"}),
        "replica_offsets": _pandas_rows("replica_offsets", {"leo": -5}),
    }
    report = validate_run(None, tables, out=str(tmp_path), data_docs=True)
    assert report.written == {
        "results": ["validation/gold.anomalies.json", "validation/gold.replica_offsets.json"],
        "data_docs": "data_docs/index.html",
    }
    written = json.loads((tmp_path / "validation" / "gold.replica_offsets.json").read_text())
    assert set(written) >= {"success", "results", "suite_name", "statistics", "meta"}
    assert written["suite_name"] == "gold.replica_offsets" and written["success"] is False
    (leo,) = [
        r
        for r in written["results"]
        if r["expectation_config"]["type"] == "expect_column_values_to_be_between"
        and r["expectation_config"]["kwargs"]["column"] == "leo"
    ]
    assert (leo["success"], leo["result"]["unexpected_count"]) == (False, 1)
    index = (tmp_path / "data_docs" / "index.html").read_text()
    assert "gold.replica_offsets" in index
    assert report.to_dict()["written"]["data_docs"] == "data_docs/index.html"


# --- published tables, read back in batches ------------------------------------


def _publish(root: Path, table: str, *rows: dict[str, Any]) -> None:
    """``rows`` as the run publishes a gold table: Parquet under
    ``cluster=`` and ``date=`` folders, in row groups of two rows."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [n for n in TABLES[table].fieldNames() if n not in ("cluster", "date")]
    pdf = _pandas_rows(table, *rows)[names] if rows else pd.DataFrame({n: [] for n in names})
    folder = root / table / "cluster=c1" / "date=2024-05-01"
    folder.mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pandas(pdf, preserve_index=False), folder / "part-0.parquet", row_group_size=2
    )


def test_a_growing_gold_table_is_validated_in_batches_whose_results_add_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.quality as quality

    monkeypatch.setattr(quality, "GOLD_BATCH_ROWS", 3)
    rows = [{"leo": 10 + i, "hwm": None, "line_no": i + 1} for i in range(7)]
    rows[1]["leo"] = -1  # first batch
    rows[5]["leo"] = -2  # second
    rows[6]["line_no"] = 0  # third, one row
    _publish(tmp_path, "replica_offsets", *rows)
    report = validate_run(
        None, quality.read_published(str(tmp_path), ("replica_offsets",)), out=str(tmp_path)
    )
    result = report.suite("replica_offsets")
    assert (result.rows, result.sampled) == (7, False)
    assert failed(result) == {"offset_non_negative(leo)": 2, "line_no_positive(line_no)": 1}
    leo = next(e for e in result.expectations if e.key == "offset_non_negative(leo)")
    assert (leo.element_count, leo.unexpected_examples) == (7, [-1, -2])
    assert report.written is not None
    assert report.written["results"] == [
        "validation/gold.replica_offsets.json",
        "validation/gold.replica_offsets.batch-2.json",
        "validation/gold.replica_offsets.batch-3.json",
    ]
    third = json.loads((tmp_path / "validation" / "gold.replica_offsets.batch-3.json").read_text())
    assert third["success"] is False and third["statistics"]["unsuccessful_expectations"] == 1


def test_a_table_with_an_identity_is_read_whole_whatever_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Uniqueness is not a rule of one row: two copies of one partition's
    verdict, in what would be two batches, are still found."""
    import pipeline.quality as quality

    monkeypatch.setattr(quality, "GOLD_BATCH_ROWS", 2)
    rows = [{"partition": p} for p in (0, 1, 2, 3, 0)]
    _publish(tmp_path, "partition_verdicts", *rows)
    report = validate_run(None, quality.read_published(str(tmp_path), ("partition_verdicts",)))
    result = report.suite("partition_verdicts")
    assert result.rows == 5
    assert failed(result) == {"unique(cluster, topic_key, partition)": 2}


def test_an_empty_published_table_is_validated_as_empty(tmp_path: Path) -> None:
    _publish(tmp_path, "replica_offsets")
    report = validate_run(None, read_published_of(tmp_path, "replica_offsets"))
    assert (report.suite("replica_offsets").rows, report.success) == (0, True)


def read_published_of(root: Path, table: str) -> dict[str, Any]:
    from pipeline.quality import read_published

    return read_published(str(root), (table,))
