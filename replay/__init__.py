"""The reference state machine of Kafka's replication protocol.

Pure: standard library only. ``replay_partition`` takes one partition's
events (any order) and returns its findings and verdict; ``step`` folds one
event into a partition's history.
"""

from __future__ import annotations

from collections.abc import Iterable

from replay.findings import REGISTRY, Finding
from replay.order import order_dependences, order_events
from replay.properties import gaps, judge
from replay.result import (
    Coverage,
    ReplayResult,
    alike_for_order,
    judgements,
    settle_order,
    verdict_of,
)
from replay.state import History, ReplayContext
from replay.transitions import step
from replay.types import Event, Profile

__all__ = [
    "REGISTRY",
    "Finding",
    "History",
    "ReplayContext",
    "ReplayResult",
    "replay_partition",
    "resolve_profile",
    "step",
]


def resolve_profile(
    requested: Profile,
    has_metadata_log: bool,
    has_elr: bool = False,
    has_zk_controller: bool = False,
    has_leader_epochs: bool = False,
) -> tuple[Profile, str]:
    """The profile to judge with, and why (recorded in the run manifest).

    ``has_leader_epochs``: fetches naming a current leader epoch, or
    leader-epoch-checkpoint files, both of which exist from 0.11 (KIP-101)."""
    if requested != Profile.AUTO:
        return requested, f"requested with --profile {requested.value}"
    if has_elr:
        return Profile.KRAFT_ELR, (
            "the metadata log carries ELR / LastKnownELR fields (PartitionRecord v2, KIP-966)"
        )
    if has_metadata_log:
        return Profile.KRAFT, "a KRaft metadata log is in the evidence"
    if has_zk_controller and has_leader_epochs:
        return Profile.ZK_EPOCH, (
            "a ZooKeeper controller's LeaderAndIsr decisions, and leader epochs in fetches or "
            "checkpoints (0.11+)"
        )
    if has_zk_controller:
        return Profile.ZK_HW, (
            "a ZooKeeper controller's LeaderAndIsr decisions and no leader epoch anywhere in the "
            "evidence (before 0.11)"
        )
    return Profile.KRAFT, (
        "neither a metadata log nor a ZooKeeper controller's decisions in the evidence: kraft "
        "is assumed and verdicts without a lineage are unknown"
    )


def already_folded(history: History, event: Event) -> bool:
    """Continuing a saved state: a metadata log dumped again repeats records
    already folded in, and a file given again repeats observations."""
    origin = event.origin
    if origin.metadata_offset is not None:
        done = history.last_metadata_offset
        return done is not None and origin.metadata_offset <= done
    if origin.observer is None or origin.time is None:
        return False
    for observer, time, source_file, seq in history.last_seen:
        if observer == origin.observer:
            return (origin.time, origin.source.source_file, origin.seq) <= (
                time,
                source_file,
                seq,
            ) and (origin.time < time or origin.source.source_file == source_file)
    return False


def replay_partition(
    events: Iterable[Event], ctx: ReplayContext, initial: History | None = None
) -> ReplayResult:
    history = initial if initial is not None else History()
    if initial is not None:
        events = [e for e in events if not already_folded(history, e)]
    ordered = order_events(events, ctx.max_clock_skew_s)
    # DESIGN.md "Ordering": a judgement an order only skewed clocks give
    # would reverse is not stated as fact (replay/order.py).
    history, dependences, truncated = order_dependences(
        ordered.events,
        ordered.placements,
        history,
        step,
        lambda h: judgements(judge(h, ctx)),
        ctx.max_clock_skew_s,
        alike_for_order,
    )
    findings, unsettled = settle_order(
        tuple(judge(history, ctx)), dependences, ctx.max_clock_skew_s, truncated
    )
    missing = tuple(dict.fromkeys(gaps(history, ctx) + unsettled))
    coverage = Coverage(
        evidence_kinds=tuple(sorted(history.evidence_kinds)),
        observers=tuple(sorted(history.observers)),
        gaps=missing,
        events=history.events,
        first_time=history.first_time,
        last_time=history.last_time,
        clock_placed=ordered.clock_placed,
        order_dependent=len(dependences),
    )
    return ReplayResult(
        key=ctx.key,
        profile=ctx.profile,
        verdict=verdict_of(findings, missing),
        findings=findings,
        lineage=history.epochs,
        coverage=coverage,
        history=history,
    )
