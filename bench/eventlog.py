"""Where a run's time goes, job by job, from Spark's event log.

    EPOCHTRAIL_EVENT_LOG=/tmp/evlog .venv/bin/epochtrail run INPUT --out OUT
    .venv/bin/python bench/eventlog.py /tmp/evlog

One row per Spark job: its wall time, the summed task run time and executor
CPU time of its stages, the records its scans read, and where in the code it
was started (the job group, or the call site). The totals show how much of a
run is Spark work and, against the run's wall, how much is the driver
(planning, py4j, Python between jobs). Python worker time (the replay's
``applyInArrow``) is not in the executor CPU column: it shows as task run
time well above CPU time in the replay job.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any


def read_events(folder: Path) -> list[dict[str, Any]]:
    """Every event of the newest application log in ``folder`` (uncompressed:
    the session writes it so when EPOCHTRAIL_EVENT_LOG is set)."""
    logs = sorted(
        (
            p
            for p in folder.rglob("*")
            if p.is_file() and not p.name.startswith(("appstatus", ".")) and p.suffix != ".zstd"
        ),
        key=lambda p: p.stat().st_mtime,
    )
    if not logs:
        raise SystemExit(f"no event log under {folder}")
    newest = logs[-1]
    app = newest.parent if newest.parent != folder else None
    files = sorted(app.iterdir()) if app is not None else [newest]
    events = []
    for f in files:
        if f.name.startswith(("appstatus", ".")) or f.suffix in (
            ".zstd",
            ".lz4",
            ".snappy",
            ".lzf",
        ):
            continue  # compressed logs: decompress first (zstd -d)
        with f.open(encoding="utf-8") as fh:
            events.extend(json.loads(line) for line in fh if line.strip())
    return events


def jobs_table(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stages: dict[int, Counter[str]] = {}
    jobs: dict[int, dict[str, Any]] = {}
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            jobs[e["Job ID"]] = {
                "job": e["Job ID"],
                "start_ms": e["Submission Time"],
                "stages": e["Stage IDs"],
                "where": props.get("spark.jobGroup.id") or props.get("callSite.short", ""),
            }
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end_ms"] = e["Completion Time"]
        elif kind == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            s = stages.setdefault(e["Stage ID"], Counter())
            s["run_ms"] += m.get("Executor Run Time", 0)
            s["cpu_ms"] += m.get("Executor CPU Time", 0) // 1_000_000
            s["records"] += (m.get("Input Metrics") or {}).get("Records Read", 0)
            s["tasks"] += 1
    rows = []
    for job in sorted(jobs.values(), key=lambda j: j["job"]):
        mine = [stages.get(s, Counter()) for s in job["stages"]]
        rows.append(
            {
                "job": job["job"],
                "wall_s": (job.get("end_ms", job["start_ms"]) - job["start_ms"]) / 1000,
                "run_s": sum(s["run_ms"] for s in mine) / 1000,
                "cpu_s": sum(s["cpu_ms"] for s in mine) / 1000,
                "records": sum(s["records"] for s in mine),
                "tasks": sum(s["tasks"] for s in mine),
                "where": job["where"],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=0, help="only the N longest jobs")
    args = parser.parse_args()
    rows = jobs_table(read_events(args.folder))
    shown = sorted(rows, key=lambda r: -r["wall_s"])[: args.top] if args.top else rows
    print(f"{'job':>4} {'wall s':>8} {'run s':>8} {'cpu s':>8} {'records':>10} {'tasks':>5}  where")
    for r in shown:
        print(
            f"{r['job']:>4} {r['wall_s']:>8.2f} {r['run_s']:>8.2f} {r['cpu_s']:>8.2f} "
            f"{r['records']:>10} {r['tasks']:>5}  {r['where'][:70]}"
        )
    total = {k: sum(r[k] for r in rows) for k in ("wall_s", "run_s", "cpu_s")}
    print(
        f"jobs {len(rows)}: wall {total['wall_s']:.1f} s, task run {total['run_s']:.1f} s, "
        f"executor CPU {total['cpu_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
