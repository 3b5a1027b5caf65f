"""The finding catalogue (DESIGN.md), one documented frozen dataclass per kind.

Every kind carries the common fields DESIGN.md defines, the property of the
protocol it violates (with the seed section), and ``explain()``: the one place
its sentence is written. The CLI, the report and Parquet all call it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from replay.state import AckedProduce
from replay.types import Confidence, FindingKind, PartitionKey, Scope, Severity, Source


def _range(start: int | None, end: int | None) -> str:
    if start is None and end is None:
        return "an unknown range"
    lo = "?" if start is None else str(start)
    hi = "?" if end is None else str(end)
    return f"[{lo}, {hi})"


def _records(n: int | None) -> str:
    if n is None:
        return "an unknown number of records"
    return f"{n} record" + ("" if n == 1 else "s")


@dataclass(frozen=True, slots=True)
class Finding:
    """Fields every finding has; see DESIGN.md for what each means per kind."""

    key: PartitionKey
    leader_epoch: int | None
    replica: int | None
    offset_start: int | None
    offset_end: int | None
    records_lost: int | None
    confidence: Confidence
    evidence: tuple[Source, ...]
    detected_at: datetime | None
    qualifier: Scope | None = None
    caused_by: tuple[str, ...] = ()
    acked_produces: tuple[AckedProduce, ...] = ()
    #: the high watermark it is judged against is derived from the ISR
    #: followers' fetch offsets (no answer showed it), so it is ``probable``
    derived_mark: bool = False

    KIND: ClassVar[FindingKind]
    #: the property broken, with the protocol text it comes from
    VIOLATES: ClassVar[str]

    @property
    def kind(self) -> FindingKind:
        return self.KIND

    @property
    def anomaly_id(self) -> str:
        """A stable hash of the finding's identity: the same evidence gives
        the same id on every run."""
        k = self.key
        identity = "|".join(
            str(part)
            for part in (
                self.KIND.value,
                k.cluster,
                k.topic if k.topic is not None else f"id:{k.topic_id}",
                k.partition,
                self.leader_epoch,
                self.replica,
                self.offset_start,
                self.offset_end,
            )
        )
        return hashlib.sha256(identity.encode()).hexdigest()[:16]

    @property
    def severity(self) -> Severity:
        return Severity.CRITICAL

    def explain(self) -> str:
        raise NotImplementedError

    def derived_note(self) -> str:
        if not self.derived_mark:
            return ""
        return (
            " The high watermark here is derived, not seen: the least fetch offset of the ISR "
            "followers, to which the leader raises its HW (seed 000); no answer in the "
            "evidence shows it."
        )


@dataclass(frozen=True, slots=True)
class UncleanElection(Finding):
    """A leader epoch began with a leader outside the previous ISR, or the
    controller marked it RECOVERING. ``[offset_start, offset_end)`` is what
    the new leader lacked: [its log end, the true HWM before the election)."""

    isr_before: tuple[int, ...] = ()
    #: elected from LastKnownELR by unclean recovery (KIP-966, seed 002 5.3)
    recovery: bool = False
    #: seen only in point-in-time views (a leader outside the last ISR seen)
    from_views: bool = False
    #: unclean.leader.election.enable as the topic's or a broker's config
    #: stated it (None: not in evidence)
    unclean_enabled: bool | None = None

    KIND = FindingKind.UNCLEAN_ELECTION
    VIOLATES = (
        "Leader Candidate Completeness: only ISR members, which hold every committed offset, "
        "may be elected (seed 003 sections 2.4 and 2.8; KIP-704)"
    )

    @property
    def severity(self) -> Severity:
        return Severity.CRITICAL if self.records_lost else Severity.WARNING

    def explain(self) -> str:
        text = self._explain()
        if self.unclean_enabled is False:
            text += (
                " The configuration in evidence has unclean.leader.election.enable=false: the "
                "controller elected against it."
            )
        return text

    def _explain(self) -> str:
        how = "an unclean recovery" if self.recovery else "an unclean election"
        head = (
            f"Broker {self.replica} became leader of {self.key.describe()} in epoch "
            f"{self.leader_epoch} by {how} (previous ISR "
            f"[{', '.join(map(str, self.isr_before))}])"
        )
        if self.from_views:
            epoch = "" if self.leader_epoch is None else f" in epoch {self.leader_epoch}"
            return (
                f"Broker {self.replica} appears as leader of {self.key.describe()}{epoch} in a "
                "point-in-time view while the last ISR seen before it was "
                f"[{', '.join(map(str, self.isr_before))}]: an unclean election, probable since "
                "snapshots can miss a step; the views show no offset, so what it lacked is not "
                "in the evidence."
            )
        if self.records_lost == 0:
            return head + "; it already held every committed offset, so nothing was lost."
        if self.offset_start is None:
            reached = "" if self.offset_end is None else f" (the HWM had reached {self.offset_end})"
            return head + f"; how much committed data it lacked{reached} is not in the evidence."
        return (
            head + f"; it lacked committed offsets {_range(self.offset_start, self.offset_end)}: "
            f"{_records(self.records_lost)} at risk." + self.derived_note()
        )


@dataclass(frozen=True, slots=True)
class TruncationBelowHwm(Finding):
    """A replica's log end moved below the true HWM: committed offsets
    ``[offset_start, offset_end)`` removed from it. ``qualifier`` is
    ``global`` when the leader of the time did not hold them either."""

    from_offset: int | None = None
    #: judged under zk-hw, where followers truncate to their own HW by design
    hw_truncation_era: bool = False

    KIND = FindingKind.TRUNCATION_BELOW_HWM
    VIOLATES = (
        "Log Matching / durability of the committed prefix: a replica never truncates below "
        "the high watermark (seed 003 section 2.3; seed 000 'Existing flaws'; KIP-101)"
    )

    @property
    def severity(self) -> Severity:
        return Severity.CRITICAL if self.qualifier == Scope.GLOBAL else Severity.WARNING

    def explain(self) -> str:
        text = (
            f"Replica {self.replica} of {self.key.describe()} truncated its log from "
            f"{self.from_offset} to {self.offset_start} in epoch {self.leader_epoch}, below the "
            f"high watermark {self.offset_end}: committed offsets "
            f"{_range(self.offset_start, self.offset_end)} were removed from it"
        )
        if self.qualifier == Scope.GLOBAL:
            text += f"; the leader did not hold them either ({_records(self.records_lost)} lost)"
        elif self.qualifier == Scope.LOCAL:
            text += "; the leader still held them, so the replica can fetch them again"
        else:
            text += "; whether another replica still held them is not in the evidence"
        if self.hw_truncation_era:
            text += (
                " (before 0.11 a follower truncates to its own high watermark on restart, a known "
                "hazard that KIP-101's leader epochs removed)"
            )
        return text + "." + self.derived_note()


@dataclass(frozen=True, slots=True)
class LogDivergence(Finding):
    """Two replicas hold different leader epochs for the same offsets and the
    follower kept its diverging suffix below the HWM (``unresolved``)."""

    leader: int | None = None
    diverging_epoch: int | None = None

    KIND = FindingKind.LOG_DIVERGENCE
    VIOLATES = (
        "Log Matching: the committed prefix is identical on all replicas; a follower truncates "
        "to the leader's epoch end offset (seed 000 'Epoch in data diverge scenario'; KIP-101, "
        "KIP-320)"
    )

    def explain(self) -> str:
        return (
            f"Replica {self.replica} of {self.key.describe()} kept offsets "
            f"{_range(self.offset_start, self.offset_end)} that diverge from leader "
            f"{self.leader}'s log in epoch {self.leader_epoch} (on the leader, epoch "
            f"{self.diverging_epoch} ends at {self.offset_start}) and did not truncate them, "
            "although they lie below the high watermark."
        )


@dataclass(frozen=True, slots=True)
class HwmRegression(Finding):
    """A leader exposed a HWM below one exposed before, and did not hold the
    offsets in between: consumer-visible offsets were rewritten."""

    KIND = FindingKind.HWM_REGRESSION
    VIOLATES = (
        "The high watermark is monotonic: what consumers could read stays readable "
        "(seed 003 sections 2.4.2 and 2.7; seed 002 section 5.3, last replica standing)"
    )

    def explain(self) -> str:
        return (
            f"Leader {self.replica} of {self.key.describe()} exposed high watermark "
            f"{self.offset_start} in epoch {self.leader_epoch} after the high watermark had "
            f"reached {self.offset_end}: consumer-visible offsets "
            f"{_range(self.offset_start, self.offset_end)} went back." + self.derived_note()
        )


@dataclass(frozen=True, slots=True)
class CommittedDataLoss(Finding):
    """Offsets once below the true HWM that no longer exist, with the epoch
    they were written in, on the leader from ``leader_epoch`` on."""

    leader: int | None = None
    #: more acks=all answers in the range were acknowledged than
    #: ``acked_produces`` holds (the oldest are not kept: ``EpochView.acked``)
    acked_at_least: bool = False

    KIND = FindingKind.COMMITTED_DATA_LOSS
    VIOLATES = (
        "Leader Completeness: the leader hosts every offset below the true HWM "
        "(seed 003 section 2.3)"
    )

    def explain(self) -> str:
        acked = ""
        if self.acked_produces:
            n = len(self.acked_produces)
            acked = (
                f"; {'at least ' if self.acked_at_least else ''}{n} acks=all produce "
                f"request{'s' if n != 1 else ''} acknowledged in that range were swallowed"
            )
        return (
            f"Committed offsets {_range(self.offset_start, self.offset_end)} of "
            f"{self.key.describe()} ({_records(self.records_lost)}) no longer exist on the "
            f"leader from epoch {self.leader_epoch}: leader {self.leader} began the epoch at "
            f"offset {self.offset_start if self.offset_start is not None else 'unknown'} while "
            f"the high watermark had reached {self.offset_end}{acked}." + self.derived_note()
        )


@dataclass(frozen=True, slots=True)
class FencingViolation(Finding):
    """A broker acted as leader of ``leader_epoch`` (acknowledged produce
    requests, answered follower fetches) later than its leadership ended,
    by more than the clock-skew allowance: two leaders at once.
    ``[offset_start, offset_end)`` spans the base offsets it acknowledged then
    (both null when it only served fetches)."""

    produces: int = 0
    fetches: int = 0
    #: an acks=all produce it acknowledged then lies where the next leader
    #: wrote its own records: the producer was told of a write that is gone
    acks_all_lost: bool = False
    #: "fenced" when a fence ended its leadership, else "new epoch"
    ended: str = "new epoch"

    KIND = FindingKind.FENCING_VIOLATION
    VIOLATES = (
        "One leader per epoch: a broker whose leadership ended (a new leader epoch, or fencing) "
        "stops acting as leader (seed 003 sections 1.2.2, 2.8 and 2.10)"
    )

    @property
    def severity(self) -> Severity:
        return Severity.CRITICAL if self.acks_all_lost else Severity.WARNING

    def explain(self) -> str:
        acts = []
        if self.produces:
            acts.append(
                f"acknowledged {self.produces} produce request{'s' if self.produces != 1 else ''}"
                f" (base offsets {_range(self.offset_start, self.offset_end)})"
            )
        if self.fetches:
            acts.append(
                f"answered {self.fetches} follower fetch{'es' if self.fetches != 1 else ''}"
            )
        why = "it was fenced" if self.ended == "fenced" else "the next leader epoch began"
        text = (
            f"Broker {self.replica} acted as leader of {self.key.describe()} in epoch "
            f"{self.leader_epoch} after {why}, beyond the clock-skew allowance: it "
            f"{' and '.join(acts) or 'acted'}"
        )
        if self.acks_all_lost:
            text += "; acks=all writes it acknowledged then were overwritten by the next leader"
        return text + "."


@dataclass(frozen=True, slots=True)
class IsrRuleViolation(Finding):
    """An ISR rule broken (seed 003 2.6, 2.9). ``variant`` ``expansion``: the
    ISR of ``leader_epoch`` took in ``replica`` while its known log end
    ``offset_start`` was below ``offset_end`` (the leader's HWM or the epoch's
    start offset). ``under_min_isr``: leader ``replica`` acknowledged acks=all
    produce requests (base offsets ``[offset_start, offset_end)``) while the
    ISR was below min ISR."""

    variant: str = "expansion"
    leader: int | None = None
    isr: tuple[int, ...] = ()
    min_isr: int | None = None
    #: the leader's own (under-min-isr) line said so (3.6+)
    marker: bool = False
    acks: int = 0
    #: ``unclean_exclusion``: "elr" (kept in the ELR at its registration) or
    #: "elected" (elected from the ISR or ELR) before it caught up
    how: str = ""

    KIND = FindingKind.ISR_RULE_VIOLATION
    VIOLATES = (
        "ISR rules: a follower joins the ISR only once its fetch offset reached the HWM and the "
        "leader epoch start offset (seed 003 section 2.9); acks=all is refused while the ISR is "
        "below min.insync.replicas (seed 003 section 2.6); a replica back from an unclean "
        "shutdown stays out of the ISR, the ELR and leadership until it caught up (seed 002 "
        "5.1.2, KIP-966)"
    )

    @property
    def severity(self) -> Severity:
        return Severity.WARNING

    def explain(self) -> str:
        if self.variant == "unclean_exclusion":
            what = (
                "was kept in the ELR when it registered again"
                if self.how == "elr"
                else "was elected leader"
            )
            behind = (
                f" with its log ending at {self.offset_start}, below the committed "
                f"{self.offset_end}"
                if self.offset_start is not None
                else ""
            )
            return (
                f"Replica {self.replica} of {self.key.describe()} came back from an unclean "
                f"shutdown and {what} in epoch {self.leader_epoch}{behind}, before it caught up: "
                "KIP-966's Unclean Exclusion keeps such a replica out of the ISR, the ELR and "
                "leadership until it has."
            )
        if self.variant == "expansion":
            return (
                f"Replica {self.replica} joined the ISR of {self.key.describe()} in epoch "
                f"{self.leader_epoch} (leader {self.leader}) while its log ended at "
                f"{self.offset_start}, below {self.offset_end} (the high watermark or the "
                "epoch's start offset), so the ISR held a replica without every committed "
                "offset."
            )
        isr = ", ".join(map(str, self.isr))
        why = (
            "its own (under-min-isr) line said the ISR was below min ISR"
            if self.marker
            else f"the ISR was [{isr}], below min.insync.replicas {self.min_isr}"
        )
        return (
            f"Leader {self.replica} of {self.key.describe()} acknowledged {self.acks} acks=all "
            f"produce request{'s' if self.acks != 1 else ''} (base offsets "
            f"{_range(self.offset_start, self.offset_end)}) in epoch {self.leader_epoch} while "
            f"{why}."
        )


#: Every finding kind, once.
REGISTRY: dict[FindingKind, type[Finding]] = {
    cls.KIND: cls
    for cls in (
        UncleanElection,
        TruncationBelowHwm,
        LogDivergence,
        HwmRegression,
        CommittedDataLoss,
        FencingViolation,
        IsrRuleViolation,
    )
}
