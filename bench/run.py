"""Benchmark: epochtrail end to end on a busy cluster's artefacts, against DuckDB.

    .venv/bin/python bench/run.py --sizes 256,1024

For each size:

1. ``bench/load.py`` writes a busy, healthy KRaft cluster's artefacts of about
   that many MB (1000 partitions, offsets moving on almost every fetch,
   consumer traffic, several topics per fetch; ``--load simulator`` uses the
   simulator's random cluster instead, ``--gzip`` gzips the request logs).
2. ``epochtrail run`` reads them on the embedded local Spark; the wall time,
   the stage timings from run_manifest.json and the peak resident memory of
   the whole process tree (Python driver, JVM, Python workers) are recorded.
3. Baseline: DuckDB extracts the same follower-fetch fields from the same
   request logs (what a hand-written SQL script would do).

Then the ratios the performance goals are stated in: whole-run MB/s over
DuckDB's MB/s at each size and, with two sizes, the **marginal** ratio: the
extra MB of the larger input per extra second of ``run``, over DuckDB's
MB/s (Spark's start and the other fixed costs cancel out). ``--demo`` also
times the README's demo against a bare local SparkSession start plus
``range(1).count()``.

Results are printed and written to ``--results`` (default
``bench/results/<UTC timestamp>.json``); bench/RESULTS.md keeps the history.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
            time.sleep(0.25)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    code = proc.wait()
    done.set()
    watcher.join()
    return time.perf_counter() - start, peak // 1024, code


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def duckdb_baseline(folder: Path) -> dict[str, float]:
    """DuckDB extracting the follower fetches' partition fields (partition,
    fetch offset, last fetched epoch, current leader epoch) from the same
    request logs, plain or gzipped."""
    import duckdb

    logs = sorted(str(p) for p in folder.rglob("kafka-request.log*"))
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


def generate(load: str, folder: Path, mb: float, seed: int, gzip_logs: bool) -> None:
    if load == "simulator":
        sys.path.insert(0, str(ROOT))
        from simulator import simulate

        simulate("random", folder, seed=seed, scale=max(1.0, mb / MB_PER_SCALE))
    else:
        sys.path.insert(0, str(ROOT / "bench"))
        from load import generate as busy  # type: ignore[import-not-found]

        busy(folder, mb, seed=seed, gzip_logs=gzip_logs)


def one_size(args: argparse.Namespace, mb: float, work: Path) -> dict[str, Any]:
    incident, out = work / f"incident-{int(mb)}", work / f"out-{int(mb)}"
    start = time.perf_counter()
    generate(args.load, incident, mb, args.seed, args.gzip)
    generated_s = time.perf_counter() - start
    disk_mb = size_mb(incident)
    console = Path(sys.executable).with_name("epochtrail")
    wall, peak_mib, code = run_measured([str(console), "run", str(incident), "--out", str(out)])
    manifest = json.loads((out / "run_manifest.json").read_text())
    baseline = duckdb_baseline(incident)
    result = {
        "input_mb": round(disk_mb, 1),
        "input_lines": manifest["lines_read"],
        "generate_s": round(generated_s, 1),
        "run_wall_s": round(wall, 1),
        "run_mb_per_s": round(disk_mb / wall, 2),
        "run_exit_code": code,
        "peak_rss_mib": peak_mib,
        "stages_s": manifest["timings_s"],
        "partitions": manifest["partitions"],
        "verdicts": manifest["verdicts"],
        "findings_by_kind": {k: v for k, v in manifest["findings_by_kind"].items() if v},
        "duckdb_baseline": baseline,
        "ratio_whole": round((disk_mb / wall) / baseline["mb_per_s"], 4),
    }
    if not args.keep:
        shutil.rmtree(incident, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return result


def demo(work: Path, repeats: int = 3) -> dict[str, Any]:
    """The README's demo against a bare local SparkSession start plus
    ``range(1).count()``, each the median of ``repeats`` runs (this machine's
    walls vary by a second or more run to run).

    The bare start is PySpark's own builder with its defaults, as a user
    would write it: the denominator of the goal. epochtrail's session
    (``get_spark``) maps the class archive built at set-up and starts
    faster than that; its bare start is reported beside it."""
    console = Path(sys.executable).with_name("epochtrail")
    plain = (
        "from pyspark.sql import SparkSession; "
        "SparkSession.builder.master('local[*]').getOrCreate().range(1).count()"
    )
    ours = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); from pipeline.session import get_spark; "
        "get_spark().range(1).count()"
    )
    out = work / "demo"

    def median_wall(cmd: list[str]) -> tuple[float, int, int]:
        runs = sorted(run_measured(cmd) for _ in range(repeats))
        return runs[len(runs) // 2]

    bare_wall = median_wall([sys.executable, "-c", plain])[0]
    ours_wall = median_wall([sys.executable, "-c", ours])[0]
    wall, peak, code = median_wall(
        [str(console), "run", str(ROOT / "examples" / "unclean-election"), "--out", str(out)]
    )
    manifest = json.loads((out / "run_manifest.json").read_text())
    return {
        "repeats": repeats,
        "bare_spark_s": round(bare_wall, 1),
        "bare_epochtrail_session_s": round(ours_wall, 1),
        "demo_wall_s": round(wall, 1),
        "demo_exit_code": code,
        "demo_peak_rss_mib": peak,
        "ratio": round(wall / bare_wall, 2),
        "stages_s": manifest["timings_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256", help="comma-separated MB, e.g. 256,1024")
    parser.add_argument("--size-mb", type=float, default=None, help="one size (older option)")
    parser.add_argument("--load", choices=("busy", "simulator"), default="busy")
    parser.add_argument("--gzip", action="store_true", help="gzip the busy load's request logs")
    parser.add_argument("--demo", action="store_true", help="also time the README demo")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the inputs and outputs")
    parser.add_argument("--results", type=Path, default=None, help="where to write the JSON")
    args = parser.parse_args()

    sizes = [args.size_mb] if args.size_mb else [float(s) for s in args.sizes.split(",")]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="epochtrail-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    runs = [one_size(args, mb, work) for mb in sizes]
    result: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(),
        "cpus": os.cpu_count(),
        "load": args.load + (" (gzipped request logs)" if args.gzip else ""),
        "runs": runs,
    }
    if len(runs) >= 2:
        small, large = runs[0], runs[-1]
        extra_mb = large["input_mb"] - small["input_mb"]
        extra_s = large["run_wall_s"] - small["run_wall_s"]
        marginal = extra_mb / extra_s if extra_s > 0 else float("inf")
        duck = large["duckdb_baseline"]["mb_per_s"]
        result["marginal"] = {
            "extra_mb": round(extra_mb, 1),
            "extra_run_s": round(extra_s, 1),
            "mb_per_s": round(marginal, 1),
            "duckdb_mb_per_s": duck,
            "ratio": round(marginal / duck, 3),
        }
    if args.demo:
        result["demo"] = demo(work)
    stamp = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    target = args.results or (ROOT / "bench" / "results" / stamp)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
