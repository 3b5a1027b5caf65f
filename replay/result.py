"""What a partition's replay returns: findings, a verdict, and its coverage."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import datetime

from replay.findings import Finding
from replay.order import FOLD_BUDGET, MAX_JUMP, OrderDependence
from replay.state import EpochView, History, replace
from replay.types import PartitionKey, Profile, Verdict


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which evidence existed, and what was missing (``gaps``)."""

    evidence_kinds: tuple[str, ...]
    observers: tuple[int, ...]
    gaps: tuple[str, ...]
    events: int
    first_time: datetime | None
    last_time: datetime | None
    clock_placed: int
    #: judgements that rest on an order only skewed clocks give (DESIGN.md
    #: "Ordering"); each is also a gap, with the two lines it depends on
    order_dependent: int = 0


@dataclass(frozen=True, slots=True)
class ReplayResult:
    key: PartitionKey
    profile: Profile
    verdict: Verdict
    findings: tuple[Finding, ...]
    lineage: tuple[EpochView, ...]
    coverage: Coverage
    #: the partition's history at the end, to continue from (``--state``)
    history: History


def verdict_of(findings: tuple[Finding, ...], gaps: tuple[str, ...]) -> Verdict:
    """Three-valued: a finding makes it invalid; a gap is never valid."""
    if findings:
        return Verdict.INVALID
    if gaps:
        return Verdict.UNKNOWN
    return Verdict.VALID


def judgement_key(finding: Finding) -> tuple[object, ...]:
    """What a finding states: compared across orders of the evidence."""
    return (
        finding.kind.value,
        finding.leader_epoch,
        finding.replica,
        finding.offset_start,
        finding.offset_end,
        finding.records_lost,
        finding.qualifier,
    )


#: kind, leader epoch, replica, offset_start: what a finding is, not how far
STEM = 4


def _stem(key: object) -> object:
    return key[:STEM] if isinstance(key, tuple) else key


def describe(finding: Finding) -> str:
    lo = "?" if finding.offset_start is None else finding.offset_start
    hi = "?" if finding.offset_end is None else finding.offset_end
    who = "" if finding.replica is None else f"replica {finding.replica}, "
    return f"{finding.kind.value} ({who}epoch {finding.leader_epoch}, [{lo}, {hi}))"


def judgements(findings: Iterable[Finding]) -> dict[object, str]:
    return {judgement_key(f): describe(f) for f in findings}


def settle_order(
    findings: tuple[Finding, ...],
    dependences: tuple[OrderDependence, ...],
    max_clock_skew_s: float,
    truncated: bool = False,
) -> tuple[tuple[Finding, ...], tuple[str, ...]]:
    """Keep only the findings every tried order makes; the others, and any
    finding another order would make, become reasons the verdict is not
    ``valid`` (DESIGN.md "Ordering": never a finding stated as fact)."""
    # a dependence judged before the end (order.HORIZON) names the finding as
    # it stood then; its later growth is the same finding: matched on what it
    # is and where it starts
    dropped = frozenset(_stem(k) for d in dependences for k in d.dropped)
    kept = tuple(f for f in findings if judgement_key(f)[:STEM] not in dropped)
    gone = {f.anomaly_id for f in findings if judgement_key(f)[:STEM] in dropped}
    if gone:
        kept = tuple(
            replace(f, caused_by=tuple(c for c in f.caused_by if c not in gone)) for f in kept
        )
    reasons = [d.reason(max_clock_skew_s) for d in dependences]
    if truncated:
        reasons.append(
            f"not every order the {max_clock_skew_s:g} s skew allowance leaves open was tried "
            f"(more than {MAX_JUMP} places for one event, or more alternatives than "
            f"{FOLD_BUDGET} extra folds per event pay for): a judgement may rest on one"
        )
    return kept, tuple(dict.fromkeys(reasons))


#: History fields whose judgements weigh the clock-skew allowance themselves
#: (fencing_violation, isr_rule_violation: an act or a fetch within the
#: allowance of a controller record is a gap there, never a finding), so an
#: order that changes only them needs no second judgement
SKEW_JUDGED = ("isr_changes", "expansions", "fences", "stale", "under_min_isr", "under_min_marks")


#: History fields whose order of entries no judgement reads (each entry is
#: judged on its own): two orders that differ only in them are alike
UNORDERED = ("gaps", "last_seen")
_COMPARED = tuple(
    f.name for f in fields(History) if f.name not in SKEW_JUDGED and f.name not in UNORDERED
)


def alike_for_order(a: History, b: History) -> bool:
    """Two histories folded in different orders that no other judgement can
    tell apart (``order_dependences``). Field by field, shared values by
    identity first: the alternatives share most of their history with the
    given order, and this runs once per alternative per event."""
    for name in _COMPARED:
        x, y = getattr(a, name), getattr(b, name)
        if x is not y and x != y:
            return False
    return all(
        set(getattr(a, name)) == set(getattr(b, name))
        for name in UNORDERED
        if getattr(a, name) is not getattr(b, name)
    )
