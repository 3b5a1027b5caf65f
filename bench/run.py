"""Benchmark: epochtrail end to end on simulated load, against a DuckDB baseline.

    .venv/bin/python bench/run.py --size-mb 1024

1. The simulator writes a random KRaft cluster's artefacts (request logs and a
   metadata dump) of about ``--size-mb`` (streamed, bounded memory).
2. ``epochtrail run`` reads them on the embedded local Spark; the wall time,
   the stage timings from run_manifest.json and the peak resident memory of
   the whole process tree (Python driver, JVM, Python workers) are recorded.
3. Baseline: DuckDB extracts the same follower-fetch fields from the same
   request logs (what a hand-written SQL script would do), for scale.

Results are printed and written to bench/results/<UTC timestamp>.json.
Figures from this machine go into the closing notes, not into tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB_PER_SCALE = 2.15  # simulator random, default knobs: about 431 MB at scale 200


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc)."""
    total = 0
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
        stack.extend(children.get(current, []))
    return total


def run_measured(cmd: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak tree RSS in MiB, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kib(proc.pid))
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    code = proc.wait()
    done.set()
    watcher.join()
    return time.perf_counter() - start, peak // 1024, code


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def duckdb_baseline(folder: Path) -> dict[str, float]:
    import duckdb

    logs = [str(p) for p in folder.rglob("kafka-request.log")]
    start = time.perf_counter()
    con = duckdb.connect()
    rows = con.execute(
        """
        with lines as (
          select line from read_csv($files, columns = {'line': 'VARCHAR'}, header = false,
                                    delim = '\x01', quote = '', escape = '')
          where instr(line, '"requestApiKey":1,') > 0
        ), fetches as (
          select cast(regexp_extract(line, '"replicaId":(-?[0-9]+)', 1) as int) as replica,
                 regexp_extract(line, 'Completed request:(\\{.*\\}) \\(kafka[.]request',
                                1) as body
          from lines
        )
        select count(*) from (
          select unnest(from_json(json_extract(body, '$.request.topics'),
                 '[{"partitions":[{"partition":"INTEGER","fetchOffset":"BIGINT",
                    "lastFetchedEpoch":"INTEGER","currentLeaderEpoch":"INTEGER"}]}]'))
          from fetches where replica >= 0)
        """,
        {"files": logs},
    ).fetchone()
    seconds = time.perf_counter() - start
    mb = sum(Path(p).stat().st_size for p in logs) / 1e6
    return {
        "seconds": round(seconds, 2),
        "mb": round(mb, 1),
        "mb_per_s": round(mb / seconds, 1),
        "topic_entries": rows[0] if rows else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=256.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from simulator import simulate

    work = args.workdir or Path(tempfile.mkdtemp(prefix="epochtrail-bench-"))
    incident, out = work / "incident", work / "out"
    scale = max(1.0, args.size_mb / MB_PER_SCALE)
    start = time.perf_counter()
    simulate("random", incident, seed=args.seed, scale=scale)
    generated_s = time.perf_counter() - start
    mb = size_mb(incident)

    console = Path(sys.executable).with_name("epochtrail")
    wall, peak_mib, code = run_measured([str(console), "run", str(incident), "--out", str(out)])
    manifest = json.loads((out / "run_manifest.json").read_text())
    result = {
        "when": datetime.now(UTC).isoformat(),
        "cpus": os.cpu_count(),
        "input_mb": round(mb, 1),
        "input_lines": manifest["lines_read"],
        "simulate_s": round(generated_s, 1),
        "run_wall_s": round(wall, 1),
        "run_mb_per_s": round(mb / wall, 1),
        "run_exit_code": code,
        "peak_rss_mib": peak_mib,
        "stages_s": manifest["timings_s"],
        "partitions": manifest["partitions"],
        "verdicts": manifest["verdicts"],
        "findings_by_kind": {k: v for k, v in manifest["findings_by_kind"].items() if v},
        "duckdb_baseline": duckdb_baseline(incident),
    }
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json").write_text(
        json.dumps(result, indent=2) + "\n"
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
