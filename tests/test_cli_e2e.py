"""End to end through the CLI, on Spark, on the bundled incident.

``examples/unclean-election`` holds authentic request logs of three brokers
and a metadata-log dump (see examples/make_incident.py for its story). The
story implies exactly four findings on orders-0, none elsewhere.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app

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
    assert broker1["lines_ignored"] == 2  # a consumer fetch and a METADATA request
    assert files["controller-3000/metadata-00000000000000000000.log.txt"]["kind"] == "metadata_dump"
    assert manifest["profile"]["chosen"] == "kraft"
    assert manifest["quarantined_lines"] == 1


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
    [(reason, line_no)] = con.execute(
        f"select reason, line_no from read_parquet('{out}/quarantine/**/*.parquet', "
        "hive_partitioning = true)"
    ).fetchall()
    assert "JSON" in reason
    assert line_no == 26  # the last line, cut mid-JSON


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
