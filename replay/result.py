"""What a partition's replay returns: findings, a verdict, and its coverage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from replay.findings import Finding
from replay.state import EpochView, History
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
