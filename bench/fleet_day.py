"""Benchmark: a fleet's day through the daily audit DAG, against one fleet run.

    .venv/bin/python bench/fleet_day.py --clusters 20 [--dags DIR] [--skip-fleet-run]

1. Simulates ``--clusters`` clusters' artefacts (the named KRaft scenarios in
   turn, a seed per cluster) as one day of the archive the DAG reads,
   ``<work>/archive/<cluster>/<day>/``.
2. Times ``airflow dags test epochtrail_daily_audit <day + 1>`` with the DAGs
   folder ``--dags`` (default: this checkout's ``dags/``; point it at an older
   copy to measure that one) and the Variable naming every cluster.
3. Times one ``epochtrail run`` over the same archive in one Spark application
   (each cluster's day folder linked as ``cluster=<name>``, as the DAG's fleet
   audit does), with ``--state``, into a lake of its own.

Prints the two walls and their ratio (the goal of issue 11: <= 1.5) as JSON,
with the load average when it started (the machine may be shared: the two
walls compare only when measured under the same load). The manifests each
run files in its lake (`manifests/cluster=*/date=*/run_manifest.json`) give
the stage timings. dags/README.md keeps the figures. Needs the ``airflow`` extra
(``bash setup.sh --dev --airflow``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIOS = (
    "kraft-clean",
    "kraft-clean-failover",
    "kraft-acks1-truncation",
    "kraft-unclean-election",
    "kraft-last-replica-standing",
    "seed000-hw-truncation-epoch",
    "seed000-divergence-epoch",
    "elr-5.2.2",
    "elr-5.3.3",
)


def make_archive(archive: Path, clusters: int, day: str) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from simulator.api import simulate

    names = []
    for i in range(clusters):
        name = f"c{i:02d}"
        folder = archive / name / day
        simulate(SCENARIOS[i % len(SCENARIOS)], folder, seed=i)
        (folder / "truth.json").unlink(missing_ok=True)  # not an artefact of the cluster
        names.append(name)
    return names


def airflow_day(work: Path, dags: Path, names: list[str], day: str) -> float:
    home = work / "airflow"
    variable = {
        "archive_root": str(work / "archive"),
        "lake_root": str(work / "lake-dag"),
        "state_root": str(work / "state-dag"),
        "spark_master": "local[*]",
        "clusters": names,
        "epochtrail": str(BIN / "epochtrail"),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(dags),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW_VAR_EPOCHTRAIL_AUDIT=json.dumps(variable),
    )
    subprocess.run(
        [str(BIN / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True
    )
    logical = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    start = time.perf_counter()
    proc = subprocess.run(
        [str(BIN / "airflow"), "dags", "test", "epochtrail_daily_audit", logical],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
    )
    wall = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    (work / "airflow-dags-test.log").write_text(log)
    finished = [line for line in log.splitlines() if "DagRun Finished" in line]
    if proc.returncode != 0 or not finished or "state=success" not in finished[-1]:
        raise SystemExit(f"airflow dags test failed; log in {work / 'airflow-dags-test.log'}")
    return wall


def fleet_run(work: Path, names: list[str], day: str) -> float:
    view = work / "view"
    view.mkdir()
    for name in names:
        (view / f"cluster={name}").symlink_to(work / "archive" / name / day)
    start = time.perf_counter()
    proc = subprocess.run(
        [
            str(BIN / "epochtrail"),
            "run",
            *(str(view / f"cluster={name}") for name in names),
            "--out",
            str(work / "lake-fleet"),
            "--state",
            str(work / "state-fleet"),
        ],
        capture_output=True,
        text=True,
        errors="replace",
    )
    wall = time.perf_counter() - start
    (work / "fleet-run.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"epochtrail run exited {proc.returncode}; log in {work}/fleet-run.log")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--day", default="2024-05-01")
    parser.add_argument("--dags", type=Path, default=ROOT / "dags")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    parser.add_argument("--skip-fleet-run", action="store_true")
    parser.add_argument("--skip-dag", action="store_true")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="epochtrail-fleet-"))
    work.mkdir(parents=True, exist_ok=True)
    names = make_archive(work / "archive", args.clusters, args.day)
    mb = sum(f.stat().st_size for f in (work / "archive").rglob("*") if f.is_file()) / 1e6
    result: dict[str, object] = {
        "clusters": args.clusters,
        "load_average_1m_at_start": os.getloadavg()[0],
        "archive_mb": round(mb, 2),
        "dags": str(args.dags),
    }
    if not args.skip_dag:
        dag_wall = airflow_day(work, args.dags.resolve(), names, args.day)
        result["dag_wall_s"] = round(dag_wall, 1)
        print(json.dumps(result), flush=True)
    if not args.skip_fleet_run:
        result["load_average_1m_before_fleet_run"] = os.getloadavg()[0]
        fleet_wall = fleet_run(work, names, args.day)
        result["fleet_run_wall_s"] = round(fleet_wall, 1)
    if not args.skip_dag and not args.skip_fleet_run:
        result["ratio"] = round(dag_wall / fleet_wall, 2)
    print(json.dumps(result))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
