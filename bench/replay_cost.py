"""Micro-benchmark: the replay's Python cost per event of one busy partition.

    .venv/bin/python bench/replay_cost.py --events 20000
    .venv/bin/python bench/replay_cost.py --events 20000 --profile 25

One healthy, busy partition's silver rows as Spark hands them to the bridge
(an Arrow table of the replayed columns, after run-length compression): three
replicas, the leader acknowledging acks=all produce requests and answering
its two followers' fetches, offsets moving on every fetch, and a few clean
elections (each a metadata record, the new leader's and followers' server
log lines, and a leader change of request log). Events are a few
milliseconds apart, so every election has thousands of events of two clocks
within the 2 s skew allowance of its record: the order search is exercised
as in a real busy partition.

Timed end to end (``replay_table``, what ``applyInArrow`` calls per group)
and phase by phase: Arrow -> events, order, the fold in the given order,
the alternative orders, the judgement (properties and gaps), result rows ->
Arrow. CPU time of this process (the machine is shared), the best of
``--repeat`` runs, printed in microseconds per event; ``--profile N`` adds cProfile's
top N functions of one end-to-end run. ``--check`` asserts the synthetic
partition is judged valid with no finding (the load is healthy).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import inspect
import pstats
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # type: ignore[import-untyped]  # noqa: E402

from pipeline import bridge  # noqa: E402
from replay import ReplayContext, replay_partition  # noqa: E402
from replay.order import order_dependences, order_events  # noqa: E402
from replay.properties import gaps, judge  # noqa: E402
from replay.result import alike_for_order, judgements  # noqa: E402
from replay.state import History  # noqa: E402
from replay.transitions import step  # noqa: E402
from replay.types import PartitionKey, Profile  # noqa: E402
from schemas.tables import PARTITION_EVENTS  # noqa: E402

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
BROKERS = (1, 2, 3)
TOPIC_ID = "5LHkG7R4S0aKxLbBzyP8wA"


def input_schema() -> pa.Schema:
    """The replayed columns with their silver types (as Spark sends them)."""
    from pyspark.sql.pandas.types import to_arrow_type

    types = {f.name: f.dataType for f in PARTITION_EVENTS.fields}
    out = []
    for name in bridge.REPLAYED_COLUMNS:
        if name == "topic_key":
            out.append(pa.field(name, pa.string()))
        else:
            out.append(pa.field(name, to_arrow_type(types[name], timezone="UTC")))
    return pa.schema(out)


class Partition:
    """Writes the rows of one partition, each file numbering its own lines."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.lines: dict[str, int] = {}
        self.ms = 0
        self.metadata_offset = 100

    def row(self, file: str, observer: int | None, kind: str, **fields: Any) -> dict[str, Any]:
        line = self.lines[file] = self.lines.get(file, 0) + 1
        row: dict[str, Any] = dict.fromkeys(bridge.REPLAYED_COLUMNS)
        row.update(
            cluster="default",
            topic_key="orders",
            partition=0,
            topic="orders",
            topic_id=TOPIC_ID,
            observer=observer,
            source_file=file,
            line_no=line,
            event_time=T0 + timedelta(milliseconds=self.ms),
            seq=line * 100,
            kind=kind,
        )
        row.update(fields)
        self.rows.append(row)
        return row

    def metadata(self, kind: str, **fields: Any) -> None:
        self.row(
            "controller-3000/metadata.log.txt",
            None,
            kind,
            metadata_offset=self.metadata_offset,
            **fields,
        )
        self.metadata_offset += 7


def busy_partition(
    events: int, elections: int = 4, step_ms: int = 3, isr_changes: int = 0
) -> list[dict[str, Any]]:
    """A healthy partition of about ``events`` rows (see the module doc);
    ``isr_changes`` times per epoch a follower leaves the ISR and rejoins it
    (the controller's records and the leader's ``ISR updated`` lines)."""
    p = Partition()
    p.metadata(
        "partition_record",
        replicas=list(BROKERS),
        isr=list(BROKERS),
        leader=1,
        leader_epoch=0,
        partition_epoch=0,
        leader_recovery_state=0,
        adding_replicas=[],
        removing_replicas=[],
    )
    leader, epoch = 1, 0
    leo = 0  # the leader's log end
    # each follower: (fetch offset, last fetched epoch)
    followers = {b: (0, 0) for b in BROKERS if b != leader}
    per_epoch = max(1, events // (elections + 1))
    while len(p.rows) < events:
        started = len(p.rows)
        log = f"broker-{leader}/kafka-request.log"
        flaps = {per_epoch * (k + 1) // (isr_changes + 1) for k in range(isr_changes)}
        while len(p.rows) - started < per_epoch and len(p.rows) < events:
            if flaps and len(p.rows) - started >= min(flaps):
                flaps.discard(min(flaps))
                isr_flap(p, leader, followers)
            p.ms += step_ms
            # a produce: the leader appends a batch of 1 to 20 records
            base = leo
            leo += 1 + (p.ms % 20)
            for follower in sorted(followers):
                p.ms += 1
                request = p.row(
                    log,
                    leader,
                    "fetch_request",
                    replica=follower,
                    fetch_offset=leo,
                    last_fetched_epoch=epoch,
                    current_leader_epoch=epoch,
                )
                followers[follower] = (leo, epoch)
                hwm = min(offset for offset, _ in followers.values())
                p.row(
                    log,
                    leader,
                    "fetch_response",
                    line_no=request["line_no"],
                    seq=request["seq"] + 1,
                    replica=follower,
                    hwm=hwm,
                    error_code=0,
                )
            p.row(
                log,
                leader,
                "produce",
                acks=-1,
                base_offset=base,
                error_code=0,
                client_id=f"producer-{p.ms % 7}",
            )
        if len(p.rows) >= events:
            break
        # a clean election: the next broker, caught up, leads epoch + 1
        p.ms += 50
        new = BROKERS[(BROKERS.index(leader) + 1) % len(BROKERS)]
        p.metadata("partition_change", leader=new, leader_recovery_state=-1)
        epoch += 1
        p.ms += 5
        p.row(
            f"broker-{new}/server.log",
            new,
            "become_leader",
            replica=new,
            leader_epoch=epoch,
            leo=leo,
            hwm=leo,
        )
        for b in BROKERS:
            if b != new:
                p.ms += 1
                p.row(
                    f"broker-{b}/server.log",
                    b,
                    "become_follower",
                    replica=b,
                    leader_epoch=epoch,
                    leo=leo,
                    leader=new,
                    hwm=leo,
                )
        leader = new
        followers = {b: (leo, epoch - 1) for b in BROKERS if b != leader}
    return p.rows


def isr_flap(p: Partition, leader: int, followers: dict[int, tuple[int, int]]) -> None:
    """A follower leaves the ISR and, caught up, rejoins it 400 ms later."""
    out = max(followers)
    full = sorted([leader, *followers])
    for isr in ([b for b in full if b != out], full):
        p.ms += 200
        p.metadata("partition_change", isr=isr, leader_recovery_state=-1)
        p.ms += 2
        p.row(f"broker-{leader}/server.log", leader, "isr_updated", replica=leader, isr=isr)
        p.ms += 200


def settings() -> bridge.BridgeSettings:
    return bridge.BridgeSettings(
        profile=Profile.KRAFT,
        max_clock_skew_s=2.0,
        request_log_observers={"default": frozenset(BROKERS)},
    )


def _timed(fn: Any, *args: Any) -> tuple[float, Any]:
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def phases(table: pa.Table, s: bridge.BridgeSettings) -> dict[str, float]:
    """Seconds per phase of one group's replay, done step by step (the
    cyclic collector off, as ``replay_table`` has it, when it does)."""
    collecting = gc.isenabled()
    if "gc.disable()" in inspect.getsource(bridge):
        gc.disable()
    try:
        return _phases(table, s)
    finally:
        if collecting:
            gc.enable()


def _phases(table: pa.Table, s: bridge.BridgeSettings) -> dict[str, float]:
    out: dict[str, float] = {}
    if hasattr(bridge, "table_events"):
        out["arrow -> events"], (events, _problems) = _timed(bridge.table_events, table)
    else:
        out["arrow -> rows"], rows = _timed(table.to_pylist)
        out["rows -> events"], (events, _problems) = _timed(bridge.to_events, rows)
    key = PartitionKey("default", "orders", TOPIC_ID, 0)
    ctx = ReplayContext(key, Profile.KRAFT, s.max_clock_skew_s, frozenset(BROKERS))
    out["order"], ordered = _timed(order_events, events, ctx.max_clock_skew_s)

    def fold() -> History:
        h = History()
        for e in ordered.events:
            h = step(h, e)
        return h

    out["fold (given order)"], history = _timed(fold)
    t, _ = _timed(
        order_dependences,
        ordered.events,
        ordered.placements,
        History(),
        step,
        lambda h: judgements(judge(h, ctx)),
        ctx.max_clock_skew_s,
        alike_for_order,
    )
    out["alternative orders"] = max(0.0, t - out["fold (given order)"])
    out["judge + gaps"], _ = _timed(lambda: (judge(history, ctx), gaps(history, ctx)))
    result = replay_partition(events, ctx)
    schema = _output_schema()

    def rows_out() -> pa.Table:
        if hasattr(bridge, "result_table"):
            return bridge.result_table(result, [], None, schema)
        return pa.Table.from_pylist(bridge.result_rows(result, []), schema=schema)

    out["result -> arrow"], _ = _timed(rows_out)
    return out


def _output_schema() -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(bridge.BRIDGE_SCHEMA, timezone="UTC")


def end_to_end(table: pa.Table, s: bridge.BridgeSettings) -> pa.Table:
    """What the Arrow function does for one group."""
    if hasattr(bridge, "replay_table"):
        return bridge.replay_table(table, s, _output_schema())
    rows = table.to_pylist()
    out = bridge.replay_group(rows, s) if rows else []
    return pa.Table.from_pylist(out, schema=_output_schema())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--elections", type=int, default=4)
    parser.add_argument("--isr-changes", type=int, default=0, help="ISR flaps per epoch")
    parser.add_argument("--repeat", type=int, default=3, help="end-to-end runs, best kept")
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N functions")
    parser.add_argument("--check", action="store_true", help="assert a valid verdict")
    args = parser.parse_args(argv)

    table = pa.Table.from_pylist(
        busy_partition(args.events, args.elections, isr_changes=args.isr_changes), input_schema()
    )
    s = settings()
    n = table.num_rows
    print(
        f"one partition, {n} events ({args.elections} elections, {args.isr_changes} ISR "
        "flaps per epoch), skew allowance 2 s"
    )

    best = float("inf")
    out = None
    for _ in range(args.repeat):
        t, out = _timed(end_to_end, table, s)
        best = min(best, t)
    assert out is not None
    print(f"end to end (replay_table): {best:.3f} s, {best / n * 1e6:.1f} us/event")
    runs = [phases(table, s) for _ in range(args.repeat)]
    for name in runs[0]:
        t = min(run[name] for run in runs)
        print(f"  {name:<22} {t:8.3f} s {t / n * 1e6:8.1f} us/event")

    verdicts = [r for r in out.to_pylist() if r["table"] == "partition_verdicts"]
    findings = [r for r in out.to_pylist() if r["table"] == "anomalies"]
    print(f"verdict {verdicts[0]['verdict']}, {len(findings)} findings, gaps {verdicts[0]['gaps']}")
    if args.check:
        assert verdicts[0]["verdict"] == "valid" and not findings, verdicts[0]

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        end_to_end(table, s)
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
