"""End to end through the CLI, on Spark, on the bundled incident.

``examples/unclean-election`` holds authentic request logs of three brokers
and a metadata-log dump (see examples/make_incident.py for its story). The
story implies exactly four findings on orders-0, none elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app, validation_lines

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]
INCIDENT = ROOT / "examples" / "unclean-election"
CONSOLE = Path(sys.executable).parent / "epochtrail"


@pytest.fixture(scope="module")
def case(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("case")
    result = CliRunner().invoke(app, ["run", str(INCIDENT), "--out", str(out)])
    return out, result


def test_run_reports_the_story_and_exits_1(case) -> None:  # type: ignore[no-untyped-def]
    out, result = case
    assert result.exit_code == 1, result.output
    assert "partitions 3: valid 2, invalid 1, unknown 0" in result.output
    assert (
        "findings: unclean_election 1, truncation_below_hwm 1, hwm_regression 1, "
        "committed_data_loss 1" in result.output
    )
    assert "quarantined 1" in result.output


def anomalies_json(out: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [str(CONSOLE), "anomalies", str(out), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_anomalies_json_has_exactly_the_findings_the_story_implies(case) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    found = anomalies_json(out)
    summary = sorted(
        (
            f["kind"],
            f["topic"],
            f["partition"],
            f["leader_epoch"],
            f["replica"],
            f["offset_start"],
            f["offset_end"],
            f["records_lost"],
            f["severity"],
        )
        for f in found
    )
    assert summary == [
        ("committed_data_loss", "orders", 0, 2, None, 120, 150, 30, "critical"),
        ("hwm_regression", "orders", 0, 2, 2, 120, 150, None, "critical"),
        ("truncation_below_hwm", "orders", 0, 2, 1, 120, 150, 30, "critical"),
        ("unclean_election", "orders", 0, 2, 2, 120, 150, 30, "critical"),
    ]
    by_kind = {f["kind"]: f for f in found}
    election = by_kind["unclean_election"]
    truncation = by_kind["truncation_below_hwm"]
    loss = by_kind["committed_data_loss"]
    assert truncation["caused_by"] == [election["anomaly_id"]]
    assert truncation["qualifier"] == "global"
    assert loss["caused_by"] == [election["anomaly_id"], truncation["anomaly_id"]]
    assert [(p["client_id"], p["base_offset"]) for p in loss["acked_produces"]] == [
        ("checkout-service", 120),
        ("checkout-service", 130),
        ("checkout-service", 140),
    ]
    for finding in found:
        assert finding["confidence"] == "confirmed"
        assert finding["explanation"]
        assert all(e["text"] for e in finding["evidence"]), finding["evidence"]
    election_lines = [e["text"] for e in election["evidence"]]
    assert any('"leader":2,"leaderRecoveryState":1' in t for t in election_lines)
    truncation_lines = [e["text"] for e in truncation["evidence"]]
    assert any('"replicaId":1' in t and '"fetchOffset":120' in t for t in truncation_lines)
    assert any('"highWatermark":150' in t for t in truncation_lines)


def test_manifest_accounts_for_every_line(case) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    manifest = json.loads((out / "run_manifest.json").read_text())
    files = {Path(f["path"]).relative_to(INCIDENT).as_posix(): f for f in manifest["files"]}
    assert sorted(files) == [
        "broker-1/kafka-request.log",
        "broker-2/kafka-request.log",
        "broker-3/kafka-request.log.gz",
        "controller-3000/metadata-00000000000000000000.log.txt",
    ]
    for f in files.values():
        assert f["lines_read"] == f["lines_parsed"] + f["lines_ignored"] + f["lines_quarantined"]
        assert len(f["sha256"]) == 64
    broker1 = files["broker-1/kafka-request.log"]
    assert (broker1["kind"], broker1["observer"]) == ("request_log", 1)
    assert broker1["lines_quarantined"] == 1
    # a METADATA request; its consumer fetch is read (the HWM a client saw)
    assert (broker1["lines_parsed"], broker1["lines_ignored"]) == (24, 1)
    assert files["controller-3000/metadata-00000000000000000000.log.txt"]["kind"] == "metadata_dump"
    assert manifest["profile"]["chosen"] == "kraft"
    assert manifest["quarantined_lines"] == 1
    # DESIGN.md "Validation": every suite ran over what the run wrote, and held
    validation = manifest["validation"]
    assert validation["success"] is True
    assert {s["table"] for s in validation["suites"]} == {
        "partition_events",
        "anomalies",
        "epoch_lineage",
        "replica_offsets",
        "partition_verdicts",
        "isr_timeline",
        "partition_health_daily",
        "quarantine",
        "manifest",
    }
    assert "validation: every expectation met" in case[1].output


def test_a_failed_expectation_is_printed_one_line_each() -> None:
    validation = {
        "success": False,
        "suites": [
            {
                "suite": "gold.anomalies",
                "expectations": [
                    {"rule": "not_null", "columns": ["kind"], "success": True},
                    {
                        "rule": "offset_non_negative",
                        "columns": ["offset_start"],
                        "success": False,
                        "unexpected_count": 2,
                        "unexpected_examples": [-3, -1],
                    },
                ],
            }
        ],
    }
    assert validation_lines(validation) == [
        "gold.anomalies: offset_non_negative(offset_start) failed: 2 unexpected, e.g. [-3, -1]"
    ]


def test_gold_tables_read_as_a_bi_tool_would(case) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    con = duckdb.connect()
    verdicts = con.execute(
        f"select topic, partition, verdict, cluster, cast(date as varchar) from read_parquet("
        f"'{out}/partition_verdicts/**/*.parquet', hive_partitioning = true) order by 1, 2"
    ).fetchall()
    assert verdicts == [
        ("orders", 0, "invalid", "default", "2024-05-01"),
        ("orders", 1, "valid", "default", "2024-05-01"),
        ("payments", 0, "valid", "default", "2024-05-01"),
    ]
    lineage = con.execute(
        f"select partition, leader_epoch, leader, election_kind, start_offset from read_parquet("
        f"'{out}/epoch_lineage/**/*.parquet', hive_partitioning = true) "
        "where topic = 'orders' order by 1, 2"
    ).fetchall()
    assert lineage == [
        (0, 0, 1, "initial", 0),
        (0, 1, -1, "offline", None),
        (0, 2, 2, "unclean", 120),
        (1, 0, 1, "initial", 0),
        (1, 1, 3, "clean", 60),
    ]
    timeline = con.execute(
        f"select partition, leader_epoch, isr, min_isr, under_min_isr, strftime(start_time, "
        f"'%H:%M:%S'), strftime(end_time, '%H:%M:%S'), line_no from read_parquet("
        f"'{out}/isr_timeline/**/*.parquet', hive_partitioning = true) "
        "where topic = 'orders' order by 1, start_time"
    ).fetchall()
    assert timeline == [
        (0, 0, [1, 2, 3], 1, False, "09:56:00", "10:01:00", 13),
        (0, 0, [1], 1, False, "10:01:00", "10:05:00", 19),
        (0, 2, [2], 1, False, "10:05:00", "10:05:05", 25),
        (0, 2, [2, 3], 1, False, "10:05:05", "10:10:06", 27),
        (0, 2, [2, 3, 1], 1, False, "10:10:06", None, 32),
        (1, 0, [1, 3, 2], 1, False, "09:56:00", "10:02:00", 14),
        (1, 1, [3, 2], 1, False, "10:02:00", "10:10:06", 23),
        (1, 1, [3, 2, 1], 1, False, "10:10:06", None, 33),
    ]
    health = con.execute(
        "select topic, partition, cast(date as varchar), verdict, findings, critical_findings, "
        "unclean_elections, truncations_below_hwm, hwm_regressions, records_lost, "
        "leader_elections, isr_changes, under_min_isr_seconds from read_parquet("
        f"'{out}/partition_health_daily/**/*.parquet', hive_partitioning = true) order by 1, 2"
    ).fetchall()
    assert health == [
        ("orders", 0, "2024-05-01", "invalid", 4, 4, 1, 1, 1, 30, 3, 5, 0.0),
        ("orders", 1, "2024-05-01", "valid", 0, 0, 0, 0, 0, 0, 2, 3, 0.0),
        ("payments", 0, "2024-05-01", "valid", 0, 0, 0, 0, 0, 0, 1, 1, 0.0),
    ]
    [(reason, line_no)] = con.execute(
        f"select reason, line_no from read_parquet('{out}/quarantine/**/*.parquet', "
        "hive_partitioning = true)"
    ).fetchall()
    assert "JSON" in reason
    assert line_no == 26  # the last line, cut mid-JSON


def test_a_run_in_its_own_process_can_end_spark_then_validate(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """As a large input's run does: the process starts its own Spark, ends
    the JVM once the tables are written (run.py, session.end_spark), then
    validates them, silver's sample included, with no JVM left; the same
    findings and the same suites as the in-process run."""
    out = tmp_path / "demo"
    proc = subprocess.run(
        [str(CONSOLE), "run", str(INCIDENT), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        # as a large input's run does (session.end_spark_early)
        env={**os.environ, "EPOCHTRAIL_END_SPARK": "early"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "validation: every expectation met" in proc.stdout
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert list(manifest["timings_s"]) == [
        "spark_start",
        "ingest",
        "accounting",
        "reconstruct_replay",
        "publish",
        "spark_stop",
        "validate",
    ]
    assert manifest["spark_master"] == "local[*]"
    same = json.loads((case[0] / "run_manifest.json").read_text())
    assert manifest["findings_by_kind"] == same["findings_by_kind"]
    assert manifest["validation"]["success"] is True
    # every suite saw the rows the in-process run's saw, silver's (116,
    # sampled before Spark ended) included
    seen = {s["table"]: (s["rows"], s["expectations"]) for s in manifest["validation"]["suites"]}
    assert seen == {
        s["table"]: (s["rows"], s["expectations"]) for s in same["validation"]["suites"]
    }
    assert seen["partition_events"][0] == 116
    assert anomalies_json(out) == anomalies_json(case[0])


def test_missing_input_is_bad_input() -> None:
    result = CliRunner().invoke(app, ["run", "/no/such/incident", "--out", "/tmp/x"])
    assert result.exit_code == 4


def test_explain_gives_the_sentence_the_rule_and_the_evidence_in_order(case) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    [loss] = [f for f in anomalies_json(out) if f["kind"] == "committed_data_loss"]
    result = CliRunner().invoke(app, ["explain", str(out), str(loss["anomaly_id"])])
    assert result.exit_code == 0, result.output
    assert "Committed offsets [120, 150) of orders-0 (30 records)" in result.output
    assert "rule: Leader Completeness" in result.output
    assert "seed 003 section 2.3" in result.output
    assert "controller-3000/metadata-00000000000000000000.log.txt:" in result.output
    missing = CliRunner().invoke(app, ["explain", str(out), "0000000000000000"])
    assert missing.exit_code == 4


def test_timeline_tells_the_partition_story_in_time_order(case) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    result = CliRunner().invoke(app, ["timeline", str(out), "orders-0", "--format", "json"])
    assert result.exit_code == 0, result.output
    entries = [json.loads(line) for line in result.output.splitlines()]
    assert [(e["at"][11:], e["what"], e["leader_epoch"], e["text"][:30]) for e in entries] == [
        ("09:56:00", "epoch", 0, "epoch 0 begins (initial): lead"),
        ("09:56:00", "isr", 0, "ISR [1, 2, 3]"),
        ("10:01:00", "isr", 0, "ISR [1]"),
        ("10:02:00", "epoch", 1, "epoch 1 begins (offline): no l"),
        ("10:05:00", "epoch", 2, "epoch 2 begins (unclean): lead"),
        ("10:05:00", "isr", 2, "ISR [2]"),
        ("10:05:00", "finding", 2, "committed_data_loss (critical,"),
        ("10:05:00", "finding", 2, "unclean_election (critical, co"),
        ("10:05:01", "finding", 2, "hwm_regression (critical, conf"),
        ("10:05:05", "isr", 2, "ISR [2, 3]"),
        ("10:10:03", "finding", 2, "truncation_below_hwm (critical"),
        ("10:10:06", "isr", 2, "ISR [2, 3, 1]"),
    ]
    ids = {f["anomaly_id"] for f in anomalies_json(out) if f["partition"] == 0}
    assert {e["source"] for e in entries if e["what"] == "finding"} == ids
    assert CliRunner().invoke(app, ["timeline", str(out), "orders-9"]).exit_code == 4
    assert CliRunner().invoke(app, ["timeline", str(out), "orders"]).exit_code == 4


def test_report_is_one_html_page_with_every_finding(case, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out, _ = case
    target = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(out), "--html", str(target)])
    assert result.exit_code == 0, result.output
    page = target.read_text()
    summary = "3 partitions: 1 invalid, 0 unknown, 2 valid; 4 findings; committed records lost: 30"
    assert summary in page
    for f in anomalies_json(out):
        assert f'id="{f["anomaly_id"]}"' in page
    assert "<script" not in page
