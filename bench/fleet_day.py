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
with the CPU seconds (user + system) of each command's whole process tree
(Airflow, the CLI, the JVM and its Python workers): on a shared machine the
CPU seconds say what the work costs when the wall says mostly how busy the
machine was. dags/README.md keeps the figures. Needs the ``airflow`` extra
(``bash setup.sh --dev --airflow``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def airflow_day(work: Path, dags: Path, names: list[str], day: str) -> tuple[float, float]:
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
    start, cpu = time.perf_counter(), cpu_of_children()
    proc = subprocess.run(
        [str(BIN / "airflow"), "dags", "test", "epochtrail_daily_audit", logical],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
    )
    wall, cpu = time.perf_counter() - start, cpu_of_children() - cpu
    log = proc.stdout + proc.stderr
    (work / "airflow-dags-test.log").write_text(log)
    finished = [line for line in log.splitlines() if "DagRun Finished" in line]
    if proc.returncode != 0 or not finished or "state=success" not in finished[-1]:
        raise SystemExit(f"airflow dags test failed; log in {work / 'airflow-dags-test.log'}")
    return wall, cpu


def fleet_run(work: Path, names: list[str], day: str) -> tuple[float, float]:
    view = work / "view"
    view.mkdir()
    for name in names:
        (view / f"cluster={name}").symlink_to(work / "archive" / name / day)
    start, cpu = time.perf_counter(), cpu_of_children()
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
    wall, cpu = time.perf_counter() - start, cpu_of_children() - cpu
    (work / "fleet-run.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"epochtrail run exited {proc.returncode}; log in {work}/fleet-run.log")
    return wall, cpu


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
        dag_wall, dag_cpu = airflow_day(work, args.dags.resolve(), names, args.day)
        result.update(dag_wall_s=round(dag_wall, 1), dag_cpu_s=round(dag_cpu, 1))
        print(json.dumps(result), flush=True)
    if not args.skip_fleet_run:
        fleet_wall, fleet_cpu = fleet_run(work, names, args.day)
        result.update(fleet_run_wall_s=round(fleet_wall, 1), fleet_run_cpu_s=round(fleet_cpu, 1))
    if not args.skip_dag and not args.skip_fleet_run:
        result["ratio"] = round(dag_wall / fleet_wall, 2)
        result["cpu_ratio"] = round(dag_cpu / fleet_cpu, 2)
    print(json.dumps(result))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
