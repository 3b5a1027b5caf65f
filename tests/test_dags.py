"""The daily audit DAG: its pure helper, one real audit, and (with Airflow) the DAG.

`dags/epochtrail_tasks.py` holds every decision the DAG makes and imports the
standard library only, so most of this runs without Airflow. The tests that
need Airflow (the optional `.[airflow]` extra) are skipped, with the reason
shown, when it is not installed: they never count as passing without it. CI
installs it and sets EPOCHTRAIL_REQUIRE_AIRFLOW=1, so there they cannot skip.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DAGS = ROOT / "dags"
INCIDENT = ROOT / "examples" / "unclean-election"
CONSOLE = Path(sys.executable).parent / "epochtrail"

# Airflow puts the DAGs folder on sys.path; so does this test, to import the
# helper by the name the DAG file uses.
if str(DAGS) not in sys.path:
    sys.path.insert(0, str(DAGS))

import epochtrail_tasks as et  # noqa: E402

HAS_AIRFLOW = importlib.util.find_spec("airflow") is not None
# CI installs the extra and sets this: there, a missing Airflow fails the
# tests below instead of skipping them
REQUIRE_AIRFLOW = os.environ.get("EPOCHTRAIL_REQUIRE_AIRFLOW") == "1"
needs_airflow = pytest.mark.skipif(
    not HAS_AIRFLOW and not REQUIRE_AIRFLOW,
    reason="Airflow is not installed (optional extra .[airflow]): the DAG file is not parsed here",
)

DAY = "2024-05-01"


def config(tmp_path: Path, **overrides: Any) -> et.AuditConfig:
    raw: dict[str, Any] = {
        "archive_root": str(tmp_path / "archive"),
        "lake_root": str(tmp_path / "lake"),
        "state_root": str(tmp_path / "state"),
        "spark_master": "local[2]",
        "clusters": ["prod", "staging"],
        "epochtrail": str(CONSOLE),
    }
    raw.update(overrides)
    return et.parse_config(raw)


# -- configuration -------------------------------------------------------------


def test_unset_variable_means_the_documented_default_and_an_empty_fleet() -> None:
    cfg = et.parse_config(None)
    assert cfg == et.AuditConfig(
        archive_root="/data/kafka-archive",
        lake_root="/data/epochtrail/lake",
        state_root="/data/epochtrail/state",
        spark_master="local[*]",
        clusters=(),
    )
    # nothing to audit: the task is skipped, and no run starts
    with pytest.raises(et.ArchiveMissing, match="any cluster"):
        et.run_fleet_audit(cfg, DAY, runner=lambda command: pytest.fail("ran"))


def test_config_reads_json_text_and_survives_the_xcom_round_trip(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "archive_root": "/a",
            "lake_root": "file:///l",
            "state_root": "/s",
            "spark_master": "spark://m:7077",
            "clusters": ["eu-1", "us.2"],
            "max_clock_skew_s": 5,
            "extra_args": ["--broker-id", "1"],
        }
    )
    cfg = et.parse_config(text)
    assert cfg.lake_root == "/l"
    assert cfg.clusters == ("eu-1", "us.2")
    assert cfg.max_clock_skew_s == 5.0
    # what the config task hands the audit is JSON, and reads back the same
    xcom = json.loads(json.dumps(et.config_for_xcom(cfg)))
    assert xcom["clusters"] == ["eu-1", "us.2"]
    assert et.parse_config(xcom) == cfg


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"clusters": ["../etc"]}, "not a plain name"),
        ({"clusters": ["a/b"]}, "not a plain name"),
        ({"clusters": [""]}, "not a plain name"),
        ({"clusters": [".hidden"]}, "not a plain name"),
        ({"clusters": ["a", "a"]}, "twice"),
        ({"clusters": "prod"}, "list of names"),
        ({"lake_root": "relative/lake"}, "absolute"),
        ({"archive_root": "s3a://bucket/archive"}, "local or mounted"),
        ({"state_root": ""}, "non-empty"),
        ({"profile": "kraft2"}, "profile"),
        ({"max_clock_skew_s": -1}, "max_clock_skew_s"),
        ({"max_clock_skew_s": True}, "max_clock_skew_s"),
        ({"spark_master": ""}, "spark_master"),
        ({"extra_args": "--x"}, "extra_args"),
        ({"lake": "/typo"}, "unknown keys: lake"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, override: dict[str, Any], message: str) -> None:
    with pytest.raises(et.ConfigError, match=message):
        config(tmp_path, **override)


def test_config_that_is_not_a_json_object_is_refused() -> None:
    with pytest.raises(et.ConfigError, match="not JSON"):
        et.parse_config("{clusters: [prod]}")
    with pytest.raises(et.ConfigError, match="JSON object"):
        et.parse_config("[1, 2]")


# -- the command and the day ---------------------------------------------------


def test_one_command_for_the_fleets_day(tmp_path: Path) -> None:
    cfg = config(tmp_path, profile="kraft", max_clock_skew_s=0.5, extra_args=["--no-validate"])
    assert et.fleet_command(cfg, ["prod", "staging"], DAY) == [
        str(CONSOLE),
        "run",
        f"{tmp_path}/state/_inputs/2024-05-01/cluster=prod",
        f"{tmp_path}/state/_inputs/2024-05-01/cluster=staging",
        "--out",
        f"{tmp_path}/lake",
        "--master",
        "local[2]",
        "--profile",
        "kraft",
        "--max-clock-skew",
        "0.5",
        "--state",
        f"{tmp_path}/state/_fleet",
        "--no-validate",
    ]


def test_command_refuses_a_cluster_outside_the_config_and_a_day_that_is_not_one(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path)
    with pytest.raises(et.ConfigError, match="other not in"):
        et.fleet_command(cfg, ["prod", "other"], DAY)
    with pytest.raises(ValueError, match="no cluster"):
        et.fleet_command(cfg, [], DAY)
    for day in ("2024-5-1", "2024-05-01/..", "20240501", "2024-02-30"):
        with pytest.raises(ValueError, match="YYYY-MM-DD"):
            et.fleet_command(cfg, ["prod"], day)


def test_the_survey_tells_missing_and_empty_folders(tmp_path: Path) -> None:
    cfg = config(tmp_path, clusters=["a", "b", "c", "d"])
    (with_archive(cfg, "a") / "broker-1").mkdir()
    (with_archive(cfg, "a") / "broker-1" / "server.log").write_text("x\n")
    # hidden files are not artefacts: a folder holding only those is empty
    (with_archive(cfg, "c") / ".partial").write_text("x\n")
    with_archive(cfg, "d")
    assert et.survey(cfg, DAY) == et.FleetDay(audited=("a",), missing=("b",), empty=("c", "d"))


def test_inputs_are_linked_anew_for_each_run_of_a_day(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    prod, staging = with_archive(cfg, "prod"), with_archive(cfg, "staging")
    day = tmp_path / "state" / "_inputs" / DAY
    assert et.link_inputs(cfg, ["prod", "staging"], DAY) == [
        str(day / "cluster=prod"),
        str(day / "cluster=staging"),
    ]
    assert (day / "cluster=staging").resolve() == staging.resolve()
    # a rerun of the day without staging's folder: its link goes
    assert et.link_inputs(cfg, ["prod"], DAY) == [str(day / "cluster=prod")]
    assert sorted(p.name for p in day.iterdir()) == ["cluster=prod"]
    assert (day / "cluster=prod").resolve() == prod.resolve()


def test_the_day_is_the_data_interval_start_in_utc() -> None:
    assert et.day_of(datetime(2024, 5, 1, tzinfo=UTC)) == DAY
    # the same instant written in another zone is the same day
    cest = timezone(timedelta(hours=2))
    assert et.day_of(datetime(2024, 5, 1, 2, 0, tzinfo=cest)) == DAY
    with pytest.raises(ValueError, match="no data interval"):
        et.day_of(None)
    with pytest.raises(ValueError, match="naive"):
        et.day_of(datetime(2024, 5, 1))
    with pytest.raises(ValueError, match="not at midnight"):
        et.day_of(datetime(2024, 5, 1, 6, 0, tzinfo=UTC))


# -- exit codes and validation -------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(0, et.Outcome.VALID), (1, et.Outcome.FINDINGS), (3, et.Outcome.UNKNOWN)],
)
def test_published_exit_codes_succeed(code: int, outcome: et.Outcome) -> None:
    assert et.interpret_exit(code) is outcome


@pytest.mark.parametrize(
    ("code", "retryable", "message"),
    [
        (2, False, "usage"),
        (4, False, "bad input"),
        (5, False, "Java"),
        (137, True, "crashed"),
        (-9, True, "signal 9"),
        (6, True, "crashed"),
    ],
)
def test_other_exit_codes_fail(code: int, retryable: bool, message: str) -> None:
    with pytest.raises(et.AuditFailed, match=message) as failed:
        et.interpret_exit(code)
    assert failed.value.retryable is retryable


def test_validation_absent_is_not_reported_as_a_pass() -> None:
    assert et.validation_status({"exit_code": 1}) is et.Validation.NOT_REPORTED
    # what `epochtrail run --no-validate` writes
    assert et.validation_status({"validation": None}) is et.Validation.NOT_REPORTED
    assert et.validation_status({"validation": {"success": True}}) is et.Validation.PASSED
    assert et.validation_status({"validation": {"success": False}}) is et.Validation.FAILED
    for malformed in ({"success": "false"}, {}, [False]):
        with pytest.raises(et.AuditFailed, match="boolean success"):
            et.validation_status({"validation": malformed})


# -- run_fleet_audit with a stand-in for the CLI ---------------------------------


class FakeCli:
    """Records the command and files the manifest the real CLI would: per
    cluster (from the `cluster=NAME` inputs) under the day the run started."""

    def __init__(self, cfg: et.AuditConfig, code: int, **manifest: Any) -> None:
        self.cfg, self.code, self.manifest = cfg, code, manifest
        self.commands: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> int:
        self.commands.append(list(command))
        if self.manifest.get("write", True):
            inputs = list(command[2 : command.index("--out")])
            clusters = [Path(i).name.removeprefix("cluster=") for i in inputs]
            body = {
                "started_at": datetime.now(UTC).isoformat(),
                "inputs": inputs,
                "cluster": "default",
                "exit_code": self.code,
                "partitions": 3,
                "verdicts": {"valid": 2, "invalid": 1, "unknown": 0},
                "findings_by_kind": {"unclean_election": 1, "hwm_regression": 0},
                "quarantined_lines": 1,
                "profile": {"chosen": "kraft"},
                "profiles": {c: {"chosen": "kraft", "why": "metadata"} for c in clusters},
            }
            body.update({k: v for k, v in self.manifest.items() if k not in ("write", "only")})
            for cluster in self.manifest.get("only", clusters):
                path = et.manifest_path(self.cfg, cluster, datetime.now(UTC).date().isoformat())
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(body))
        return self.code


def with_archive(cfg: et.AuditConfig, cluster: str = "prod", files: int = 0) -> Path:
    folder = et.archive_dir(cfg, cluster, DAY)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        (folder / f"server.log.{n}").write_text("x\n")
    return folder


def test_a_day_without_any_archive_folder_skips_without_running(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    cli = FakeCli(cfg, 0)
    with pytest.raises(et.ArchiveMissing, match="any cluster on 2024-05-01"):
        et.run_fleet_audit(cfg, DAY, runner=cli)
    assert cli.commands == []


def test_findings_succeed_with_a_summary_and_no_claimed_validation(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "prod", files=1)
    cli = FakeCli(cfg, 1)
    summary = et.run_fleet_audit(cfg, DAY, runner=cli)
    # one run for the fleet's day, over the clusters that have a folder
    assert cli.commands == [et.fleet_command(cfg, ["prod"], DAY)]
    assert summary == {
        "day": DAY,
        "clusters": ["prod"],
        "no_archive": ["staging"],
        "empty": [],
        "lake": cfg.lake_root,
        "exit_code": 1,
        "outcome": "findings",
        "validation": "not_reported",
        "partitions": 3,
        "verdicts": {"valid": 2, "invalid": 1, "unknown": 0},
        "findings_by_kind": {"unclean_election": 1},
        "quarantined_lines": 1,
        "profiles": {"prod": "kraft"},
    }


def test_every_cluster_with_an_archive_is_in_the_one_run(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "prod", files=1)
    with_archive(cfg, "staging", files=2)
    cli = FakeCli(cfg, 0)
    summary = et.run_fleet_audit(cfg, DAY, runner=cli)
    assert cli.commands == [et.fleet_command(cfg, ["prod", "staging"], DAY)]
    assert (summary["clusters"], summary["no_archive"], summary["outcome"]) == (
        ["prod", "staging"],
        [],
        "valid",
    )


def test_an_empty_folder_fails_after_the_others_are_audited(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "prod", files=1)
    with_archive(cfg, "staging")
    cli = FakeCli(cfg, 1)
    with pytest.raises(et.AuditFailed, match="no file for staging") as failed:
        et.run_fleet_audit(cfg, DAY, runner=cli)
    assert failed.value.retryable is False
    assert cli.commands == [et.fleet_command(cfg, ["prod"], DAY)]
    # the audit of the others is in the message, published
    assert '"outcome": "findings"' in str(failed.value)


def test_only_empty_folders_fail_without_running(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "staging")
    cli = FakeCli(cfg, 0)
    with pytest.raises(et.AuditFailed, match="no file for staging") as failed:
        et.run_fleet_audit(cfg, DAY, runner=cli)
    assert failed.value.retryable is False
    assert cli.commands == []


def test_passed_validation_is_reported(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)
    summary = et.run_fleet_audit(cfg, DAY, runner=FakeCli(cfg, 0, validation={"success": True}))
    assert (summary["outcome"], summary["validation"]) == ("valid", "passed")


def test_failed_validation_fails_the_audit_even_with_exit_0(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)
    # the shape of pipeline.quality's QualityReport.to_dict()
    section = {
        "success": False,
        "seconds": 1.5,
        "suites": [
            {
                "suite": "anomalies",
                "table": "anomalies",
                "success": False,
                "seconds": 1.0,
                "expectations": [
                    {"rule": "not_null", "columns": ["kind"], "success": True},
                    {
                        "rule": "in_domain",
                        "columns": ["kind"],
                        "success": False,
                        "unexpected_count": 2,
                    },
                ],
            }
        ],
    }
    cli = FakeCli(cfg, 0, validation=section)
    with pytest.raises(et.AuditFailed) as failed:
        et.run_fleet_audit(cfg, DAY, runner=cli)
    assert failed.value.retryable is False
    assert str(failed.value).endswith("anomalies: in_domain(kind): 2 unexpected")


def test_failed_validation_of_another_shape_is_shown_as_it_is(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)
    cli = FakeCli(cfg, 1, validation={"success": False, "failed": ["anomalies.kind in set"]})
    with pytest.raises(et.AuditFailed, match=r"anomalies\.kind in set"):
        et.run_fleet_audit(cfg, DAY, runner=cli)


def test_bad_input_fails_even_when_an_older_manifest_is_there(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)
    et.run_fleet_audit(cfg, DAY, runner=FakeCli(cfg, 1))  # leaves a manifest behind
    with pytest.raises(et.AuditFailed, match="bad input") as failed:
        et.run_fleet_audit(cfg, DAY, runner=FakeCli(cfg, 4, write=False))
    assert failed.value.retryable is False


@pytest.mark.parametrize(
    "stale",
    [
        {"inputs": ["/elsewhere"]},
        {"exit_code": 0},
        {"started_at": "2000-01-01T00:00:00+00:00"},
        # filed for prod only: staging's is missing
        {"only": ["prod"]},
    ],
)
def test_a_manifest_that_is_not_this_runs_fails(tmp_path: Path, stale: dict[str, Any]) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "prod", files=1)
    with_archive(cfg, "staging", files=1)
    with pytest.raises(et.AuditFailed, match="no manifest of this run") as failed:
        et.run_fleet_audit(cfg, DAY, runner=FakeCli(cfg, 1, **stale))
    assert failed.value.retryable is True
    assert ("for staging" if "only" in stale else "for prod") in str(failed.value)


def test_a_run_of_another_cluster_into_the_same_lake_leaves_this_runs_manifest(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, "prod", files=1)

    def with_a_neighbour(command: Sequence[str]) -> int:
        code = FakeCli(cfg, 3)(command)
        # another cluster's run, side by side into the same lake, files its
        # own manifest and rewrites the top-level one after this run's
        other = et.manifest_path(cfg, "other", datetime.now(UTC).date().isoformat())
        other.parent.mkdir(parents=True)
        other.write_text(json.dumps({"inputs": ["/other"], "exit_code": 0}))
        (tmp_path / "lake" / et.MANIFEST).write_text(json.dumps({"inputs": ["/other"]}))
        return code

    assert et.run_fleet_audit(cfg, DAY, runner=with_a_neighbour)["outcome"] == "unknown"


def test_a_manifest_that_is_not_json_fails(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)

    def broken(command: Sequence[str]) -> int:
        path = et.manifest_path(cfg, "prod", datetime.now(UTC).date().isoformat())
        path.parent.mkdir(parents=True)
        path.write_text("{")
        return 0

    with pytest.raises(et.AuditFailed, match="not JSON"):
        et.run_fleet_audit(cfg, DAY, runner=broken)


def test_exit_1_without_a_manifest_fails(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    with_archive(cfg, files=1)
    with pytest.raises(et.AuditFailed, match="no manifest of this run"):
        et.run_fleet_audit(cfg, DAY, runner=FakeCli(cfg, 1, write=False))


def test_the_cli_output_goes_to_the_task_log_and_its_exit_code_comes_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = "import sys; print('partitions 3'); print('oops', file=sys.stderr); sys.exit(3)"
    with caplog.at_level("INFO", logger=et.log.name):
        assert et.run_streaming([sys.executable, "-c", script]) == 3
    # stdout and stderr share the pipe; their relative order is the child's buffering
    assert sorted(r.getMessage() for r in caplog.records[1:]) == ["oops", "partitions 3"]
    assert caplog.records[0].getMessage().startswith("running: ")


# -- layering --------------------------------------------------------------------


def top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
    return found


def all_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_helper_imports_the_standard_library_only() -> None:
    modules = all_imports(DAGS / "epochtrail_tasks.py")
    assert modules - set(sys.stdlib_module_names) - {"__future__"} == set()


def test_the_dag_file_declares_only() -> None:
    # parsing runs at every scheduler loop: no Spark, no epochtrail package
    path = DAGS / "epochtrail_daily_audit.py"
    assert top_level_imports(path) == {
        "__future__",
        "datetime",
        "typing",
        "pendulum",
        "airflow",
        "epochtrail_tasks",
    }
    assert all_imports(path) - {"dataclasses"} == top_level_imports(path)


# -- one real audit, as the DAG calls it -------------------------------------------


@pytest.mark.spark
def test_a_real_audit_publishes_each_clusters_findings_in_one_run(tmp_path: Path) -> None:
    """The console script on local Spark over the demo incident laid out as the
    day of two clusters' archives, audited in one run: exit 1 is a success,
    each cluster's findings are in the lake under its name, and each cluster
    has the run's manifest filed."""
    import pyarrow.dataset as ds

    cfg = config(tmp_path, clusters=["prod", "staging", "idle"])
    for cluster in ("prod", "staging"):
        shutil.copytree(INCIDENT, et.archive_dir(cfg, cluster, DAY))
    launched = datetime.now(UTC)
    summary = et.run_fleet_audit(cfg, DAY)
    assert (summary["clusters"], summary["no_archive"]) == (["prod", "staging"], ["idle"])
    assert summary["exit_code"] == 1
    assert summary["outcome"] == "findings"
    assert summary["profiles"] == {"prod": "kraft", "staging": "kraft"}
    # the demo's tables are clean: once the CLI validates them, they pass
    manifest = json.loads((tmp_path / "lake" / et.MANIFEST).read_text())
    assert summary["validation"] == ("passed" if manifest.get("validation") else "not_reported")
    assert summary["verdicts"] == {"valid": 4, "invalid": 2, "unknown": 0}
    assert summary["findings_by_kind"] == {
        "unclean_election": 2,
        "truncation_below_hwm": 2,
        "hwm_regression": 2,
        "committed_data_loss": 2,
    }
    for cluster in ("prod", "staging"):
        filed = et.manifest_path(cfg, cluster, launched.date().isoformat())
        assert json.loads(filed.read_text()) == manifest
    anomalies = tmp_path / "lake" / "anomalies"
    assert sorted(p.name for p in anomalies.iterdir() if not p.name.startswith((".", "_"))) == [
        "cluster=prod",
        "cluster=staging",
    ]
    rows = ds.dataset(str(anomalies), format="parquet", partitioning="hive").to_table().to_pylist()
    assert sorted((r["kind"], r["cluster"], str(r["date"])) for r in rows) == sorted(
        (kind, cluster, DAY)
        for cluster in ("prod", "staging")
        for kind in (
            "unclean_election",
            "truncation_below_hwm",
            "hwm_regression",
            "committed_data_loss",
        )
    )
    # the next day continues from this day's saved state
    assert (tmp_path / "state" / "_fleet" / "CURRENT").is_file()


# -- with Airflow ------------------------------------------------------------------


def airflow_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        **extra,
    )
    return env


PARSE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from airflow.dag_processing.dagbag import BundleDagBag
    from airflow.serialization.serialized_objects import DagSerialization

    dags = Path(sys.argv[1])
    # what the DAG processor parses with: the bundle folder goes on sys.path
    bag = BundleDagBag(dag_folder=dags, bundle_path=dags, bundle_name="dags-folder")
    out = {
        "import_errors": bag.import_errors,
        "dag_ids": sorted(bag.dags),
        "parsed": sorted(Path(f).name for f in bag.file_last_changed),
    }
    dag = bag.dags.get("epochtrail_daily_audit")
    if dag is not None:
        # what the scheduler runs is the serialized DAG: it must round-trip
        back = DagSerialization.from_dict(DagSerialization.to_dict(dag))
        tt = back.timetable
        out.update(
            timetable=[type(tt).__name__, tt._expression, str(tt._timezone)],
            catchup=back.catchup,
            max_active_runs=back.max_active_runs,
            doc_md=bool(dag.doc_md and "epochtrail daily audit" in dag.doc_md),
            tasks={
                t.task_id: {
                    "type": type(t).__name__,
                    "upstream": sorted(t.upstream_task_ids),
                    "depends_on_past": t.depends_on_past,
                    "max_active_tis_per_dag": t.max_active_tis_per_dag,
                    "retries": t.retries,
                }
                for t in back.tasks
            },
        )
    print("RESULT " + json.dumps(out))
    """
)


@needs_airflow
def test_the_dag_parses_with_the_expected_structure(tmp_path: Path) -> None:
    # a subprocess: importing Airflow reads and writes AIRFLOW_HOME and global
    # settings, which must not leak into the rest of the suite
    proc = subprocess.run(
        [sys.executable, "-c", PARSE, str(DAGS)],
        env=airflow_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout + proc.stderr
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert result["import_errors"] == {}
    assert result["dag_ids"] == ["epochtrail_daily_audit"]
    # the helper is imported by the DAG, not parsed as a DAG file (.airflowignore)
    assert result["parsed"] == ["epochtrail_daily_audit.py"]
    assert result["timetable"] == ["CronDataIntervalTimetable", "0 0 * * *", "UTC"]
    assert result["catchup"] is False
    assert result["max_active_runs"] == 1
    assert result["doc_md"] is True
    assert result["tasks"] == {
        "config": {
            "type": "SerializedBaseOperator",
            "upstream": [],
            "depends_on_past": False,
            "max_active_tis_per_dag": None,
            "retries": 0,
        },
        # one audit for the whole fleet's day, not one per cluster
        "audit": {
            "type": "SerializedBaseOperator",
            "upstream": ["config"],
            "depends_on_past": True,
            "max_active_tis_per_dag": None,
            "retries": 1,
        },
    }


@needs_airflow
@pytest.mark.slow
@pytest.mark.spark
def test_airflow_runs_the_dag_over_a_day(tmp_path: Path) -> None:
    """`airflow dags test` for the day of the demo incident: the cluster with
    an archive folder is audited (exit 1, success), the one without left out."""
    home = tmp_path / "airflow"
    cfg = config(tmp_path, epochtrail=str(ROOT / ".venv" / "bin" / "epochtrail"))
    shutil.copytree(INCIDENT, et.archive_dir(cfg, "prod", DAY))
    env = airflow_env(home, AIRFLOW_VAR_EPOCHTRAIL_AUDIT=json.dumps(et.config_for_xcom(cfg)))
    airflow = Path(sys.executable).parent / "airflow"
    subprocess.run(
        [str(airflow), "db", "migrate"], env=env, check=True, capture_output=True, timeout=600
    )
    # a manual run for logical date D+1 has the data interval [D, D+1)
    proc = subprocess.run(
        [str(airflow), "dags", "test", "epochtrail_daily_audit", "2024-05-02"],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    assert "no archive folder" in log and "staging/2024-05-01" in log, log[-5000:]
    assert "'outcome': 'findings'" in log and "'no_archive': ['staging']" in log
    finished = [line for line in log.splitlines() if "DagRun Finished" in line]
    assert len(finished) == 1 and "state=success" in finished[0], finished
    assert (tmp_path / "lake" / "anomalies" / "cluster=prod" / f"date={DAY}").is_dir()
