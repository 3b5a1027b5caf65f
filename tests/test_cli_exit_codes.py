"""Every exit code of ``epochtrail`` and every bad argument, end to end.

pipeline/cli.py defines them: 0 no findings, 1 findings, 2 usage (typer),
3 unknown verdicts only, 4 bad input, 5 environment (no Java 17+). Each test
expects exactly one code. The runs read small folders: a simulated clean
failover, the bundled incident, one broker's request log alone, nothing, and
files of no supported kind.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import simulator
from examples import make_incident
from pipeline.cli import app
from pipeline.run import read_table

INCIDENT = Path(__file__).resolve().parents[1] / "examples" / "unclean-election"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "run_manifest.json").read_text())


# -- 2: usage (typer), before anything runs -------------------------------------


def test_run_without_out_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("run", INCIDENT)
    assert result.exit_code == 2, result.output
    assert "--out" in result.output


def test_an_unknown_profile_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("run", INCIDENT, "--out", tmp_path / "out", "--profile", "zk-3")
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out").exists()


def test_a_negative_clock_skew_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("run", INCIDENT, "--out", tmp_path / "out", "--max-clock-skew", "-1")
    assert result.exit_code == 2, result.output


def test_a_broker_id_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("run", INCIDENT, "--out", tmp_path / "out", "--broker-id", "two")
    assert result.exit_code == 2, result.output


def test_an_unknown_command_and_an_unknown_option_are_usage_errors(tmp_path: Path) -> None:
    assert invoke("rerun", INCIDENT).exit_code == 2
    assert invoke("run", INCIDENT, "--out", tmp_path, "--fast").exit_code == 2
    assert invoke("timeline", tmp_path, "orders-0", "--format", "yaml").exit_code == 2


# -- 4 and 5 without Spark ----------------------------------------------------------


def test_a_missing_input_path_is_bad_input(tmp_path: Path) -> None:
    result = invoke("run", tmp_path / "nowhere", "--out", tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "input path does not exist" in result.output


def test_no_java_is_an_environment_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on it
    monkeypatch.delenv("JAVA_HOME", raising=False)
    result = invoke("run", INCIDENT, "--out", tmp_path / "out")
    assert result.exit_code == 5, result.output
    assert "Java 17" in result.output
    assert not (tmp_path / "out").exists()


def test_timeline_of_a_partition_that_is_no_partition_name_is_bad_input(tmp_path: Path) -> None:
    assert invoke("timeline", tmp_path, "orders").exit_code == 4
    assert invoke("timeline", tmp_path / "nowhere", "orders-0").exit_code == 4


# -- the bundled example --------------------------------------------------------------


def test_make_incident_regenerates_exactly_the_committed_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(make_incident, "ROOT", tmp_path / "unclean-election")
    make_incident.main()
    written = sorted(p.relative_to(tmp_path / "unclean-election") for p in
                     (tmp_path / "unclean-election").rglob("*") if p.is_file())  # fmt: skip
    committed = sorted(p.relative_to(INCIDENT) for p in INCIDENT.rglob("*") if p.is_file())
    assert written == committed
    for rel in committed:
        new, old = (tmp_path / "unclean-election" / rel).read_bytes(), (INCIDENT / rel).read_bytes()
        if rel.suffix == ".gz":
            new, old = gzip.decompress(new), gzip.decompress(old)
        assert new == old, rel


# -- through Spark: one run per case ----------------------------------------------------


@pytest.mark.spark
def test_a_clean_cluster_exits_0(spark: Any, tmp_path: Path) -> None:
    simulator.simulate("kraft-clean-failover", tmp_path / "in", seed=0)
    (tmp_path / "in" / "truth.json").unlink()
    result = invoke("run", tmp_path / "in", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    m = manifest(tmp_path / "out")
    assert (m["exit_code"], m["verdicts"]) == (0, {"valid": 1, "invalid": 0, "unknown": 0})
    assert "findings: none" in result.output


@pytest.mark.spark
def test_one_request_log_alone_with_a_broker_id_and_a_profile_exits_3(
    spark: Any, tmp_path: Path
) -> None:
    # no metadata log: no lineage, so every verdict is unknown; the file's
    # path names no broker, so --broker-id says whose log it is
    (tmp_path / "in").mkdir()
    shutil.copy(INCIDENT / "broker-2" / "kafka-request.log", tmp_path / "in" / "requests.log")
    result = invoke(
        "run", tmp_path / "in", "--out", tmp_path / "out",
        "--broker-id", "2", "--profile", "kraft-elr",
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    m = manifest(tmp_path / "out")
    assert m["exit_code"] == 3
    assert m["verdicts"] == {"valid": 0, "invalid": 0, "unknown": 4}
    assert m["profile"] == {
        "requested": "kraft-elr",
        "chosen": "kraft-elr",
        "why": "requested with --profile kraft-elr",
    }
    [stats] = m["files"]
    assert (stats["kind"], stats["observer"], stats["lines_read"]) == ("request_log", 2, 18)


@pytest.mark.spark
def test_an_empty_folder_is_bad_input(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    result = invoke("run", tmp_path / "in", "--out", tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "no input files found" in result.output


@pytest.mark.spark
def test_a_folder_of_only_unrecognised_files_is_bad_input(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("the cluster was slow on Monday\nask Bob\n")
    (tmp_path / "in" / "heap.bin").write_bytes(bytes(range(32)) * 64)
    result = invoke("run", tmp_path / "in", "--out", tmp_path / "out")
    assert result.exit_code == 4, result.output
    assert "no file of a supported kind" in " ".join(result.output.split())


@pytest.mark.spark
def test_a_state_that_names_no_saved_state_is_bad_input(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "CURRENT").write_text("v7\n")  # and no v7/
    result = invoke("run", INCIDENT, "--out", tmp_path / "out", "--state", tmp_path / "state")
    assert result.exit_code == 4, result.output
    assert "names no saved state" in " ".join(result.output.split())


@pytest.mark.spark
def test_redacted_run_of_the_incident_exits_1_and_its_timeline_by_cluster(
    spark: Any, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = invoke("run", INCIDENT, "--out", out, "--redact", "--cluster", "prod-eu")
    assert result.exit_code == 1, result.output
    anomalies = read_table(str(out), "anomalies")
    assert {a["cluster"] for a in anomalies} == {"prod-eu"}
    texts = [e["text"] for a in anomalies for e in a["evidence"]]
    clients = [p["client_id"] for a in anomalies for p in a["acked_produces"]]
    assert texts and clients
    assert not [t for t in texts if "checkout-service" in t or "User:ANONYMOUS" in t]
    assert "checkout-service" not in clients
    assert len(set(clients)) == 1  # one client, one pseudonym

    timeline = invoke("timeline", out, "orders-0", "--cluster", "prod-eu", "--format", "json")
    assert timeline.exit_code == 0, timeline.output
    entries = [json.loads(line) for line in timeline.output.splitlines()]
    # in time order; the two of 10:05:00 share their millisecond
    found = [(e["at"][11:19], e["text"].split(" ")[0]) for e in entries if e["what"] == "finding"]
    assert sorted(found[:2]) == [
        ("10:05:00", "committed_data_loss"),
        ("10:05:00", "unclean_election"),
    ]
    assert found[2:] == [("10:05:01", "hwm_regression"), ("10:10:03", "truncation_below_hwm")]
    assert invoke("timeline", out, "orders-0", "--cluster", "prod-us").exit_code == 4
