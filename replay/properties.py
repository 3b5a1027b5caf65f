"""The protocol's promises, checked against a partition's history.

Each function below encodes one property of the seed documents and returns
the findings that break it; ``replay/README.md`` maps each to its source.
They read only the history the transitions built, so they can be reasoned
about (and tested) one at a time.

The true HWM is derived here, per leader epoch, from the HWMs each epoch's
leader exposed: ``Mark.committed`` is the highest offset committed before an
epoch began. When an epoch begins with a leader that lacks committed offsets
(X < committed), those offsets are gone and the new leader's log is the
lineage from then on, so the mark restarts from X: a later epoch is judged
against what was committed in the surviving lineage, and a loss is counted
once, where it happened.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from replay.findings import (
    CommittedDataLoss,
    Finding,
    HwmRegression,
    LogDivergence,
    TruncationBelowHwm,
    UncleanElection,
)
from replay.state import EpochView, History, ReplayContext, Truncation
from replay.types import NO_LEADER, Confidence, ElectionKind, Profile, Scope, Source

UNCLEAN = (ElectionKind.UNCLEAN, ElectionKind.UNCLEAN_RECOVERY)


def _sources(*groups: tuple[Source, ...] | Source | None) -> tuple[Source, ...]:
    out: list[Source] = []
    for group in groups:
        items = (group,) if isinstance(group, Source) else (group or ())
        for source in items:
            if source not in out:
                out.append(source)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Mark:
    """What was committed when an epoch began, and where the epoch started."""

    view: EpochView
    #: the true HWM just before the epoch began (in the surviving lineage)
    committed: int | None
    committed_source: Source | None
    #: the new leader's log end when the epoch began (its start offset X)
    start: int | None
    start_sources: tuple[Source, ...]
    #: offsets [start, committed) existed before and not on this leader
    lost: bool
    #: committed mark inside this epoch's lineage at its start
    base: int | None


def start_offset(view: EpochView, history: History) -> tuple[int | None, tuple[Source, ...]]:
    """X of an epoch: pinned by the transitions, or read off the leader's
    first HWM while it was the only ISR member (seed 003 2.10.1: such a
    leader's HWM is its log end) when it had written nothing below it."""
    exact = view.start_offset.exact
    if exact is not None:
        return exact, view.start_offset.sources
    exposure = view.first_sole_exposure
    if exposure is not None and (view.lowest_write is None or view.lowest_write >= exposure.hwm):
        hi = view.start_offset.hi
        if hi is None or hi >= exposure.hwm:
            return exposure.hwm, view.start_offset.sources + (exposure.source,)
    return None, view.start_offset.sources


def marks(history: History) -> dict[int, Mark]:
    out: dict[int, Mark] = {}
    committed: int | None = None
    source: Source | None = None
    for view in history.epochs:
        start, start_sources = start_offset(view, history)
        lost = (
            view.leader != NO_LEADER
            and start is not None
            and committed is not None
            and start < committed
        )
        base = start if lost else committed
        out[view.leader_epoch] = Mark(view, committed, source, start, start_sources, lost, base)
        if lost:
            committed, source = start, None
        if view.committed is not None and (committed is None or view.committed > committed):
            committed, source = view.committed, view.committed_source
    return out


def unclean_elections(history: History, ctx: ReplayContext) -> list[UncleanElection]:
    found = []
    for mark in marks(history).values():
        view = mark.view
        if view.election not in UNCLEAN:
            continue
        hwm, start = mark.committed, mark.start
        if hwm is not None and start is not None:
            lo, hi, lost = (start, hwm, hwm - start) if start < hwm else (None, None, 0)
        else:
            lo, hi, lost = None, hwm, None
        found.append(
            UncleanElection(
                key=ctx.key,
                leader_epoch=view.leader_epoch,
                replica=view.leader,
                offset_start=lo,
                offset_end=hi,
                records_lost=lost,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(view.began, mark.committed_source, mark.start_sources),
                detected_at=view.began_at,
                isr_before=view.isr_before,
                recovery=view.election == ElectionKind.UNCLEAN_RECOVERY,
            )
        )
    return found


def _removed_committed(
    t: Truncation, all_marks: dict[int, Mark]
) -> tuple[int | None, Source | None, Scope, int | None]:
    """How much of what ``t`` removed was committed, and was it on the leader.

    Returns (end of the committed part, its source, scope, records lost).

    Data the replica got in the epoch in force is the leader's own lineage:
    committed up to that epoch's mark; the leader still holds it (local).
    Data from an older epoch was committed up to the mark when that epoch
    ended; offsets from the start of any later epoch were rewritten by that
    epoch's leader, so a replica holding them held data that is gone (global).
    """
    mark = all_marks.get(t.leader_epoch) if t.leader_epoch is not None else None
    if mark is None:
        return None, None, Scope.UNKNOWN, None
    if t.top_epoch is not None and t.leader_epoch is not None and t.top_epoch >= t.leader_epoch:
        candidates = [v for v in (mark.base, t.epoch_committed) if v is not None]
        end = max(candidates) if candidates else None
        src = t.epoch_committed_source if end == t.epoch_committed else mark.committed_source
        return end, src, Scope.LOCAL, None
    # epochs that began with no leader hold no data and rewrite nothing
    later = [
        m
        for e, m in sorted(all_marks.items())
        if t.top_epoch is not None
        and t.top_epoch < e <= (t.leader_epoch or 0)
        and m.view.leader != NO_LEADER
    ]
    if t.top_epoch is None or not later:
        return mark.committed, mark.committed_source, Scope.UNKNOWN, None
    ended = later[0]  # the epoch that followed the replica's data
    end = ended.committed
    if end is None:
        return None, None, Scope.UNKNOWN, None
    starts = [m.start for m in later]
    if any(s is None for s in starts):
        return end, ended.committed_source, Scope.UNKNOWN, None
    rewritten_from = min(s for s in starts if s is not None)
    top = min(t.from_offset, end)
    if rewritten_from >= top:
        return end, ended.committed_source, Scope.LOCAL, None
    return end, ended.committed_source, Scope.GLOBAL, top - max(rewritten_from, t.to_offset)


def truncations_below_hwm(
    history: History, ctx: ReplayContext, causes: dict[int, str], all_marks: dict[int, Mark]
) -> list[TruncationBelowHwm]:
    found = []
    for t in history.truncations:
        committed, committed_source, scope, lost = _removed_committed(t, all_marks)
        if committed is None or t.to_offset >= committed:
            continue
        end = min(t.from_offset, committed)
        if end <= t.to_offset:
            continue
        cause = causes.get(t.leader_epoch) if t.leader_epoch is not None else None
        found.append(
            TruncationBelowHwm(
                key=ctx.key,
                leader_epoch=t.leader_epoch,
                replica=t.replica,
                offset_start=t.to_offset,
                offset_end=end,
                records_lost=lost,
                # Without a diverging answer the loss happened between two
                # fetches, so the HWM it is judged against is the later one.
                confidence=Confidence.CONFIRMED if t.answered else Confidence.PROBABLE,
                evidence=_sources(committed_source, t.before, t.after),
                detected_at=t.at,
                qualifier=scope,
                caused_by=(cause,) if cause and scope != Scope.LOCAL else (),
                from_offset=t.from_offset,
                hw_truncation_era=ctx.profile == Profile.ZK_HW,
            )
        )
    return found


def unresolved_divergences(
    history: History, ctx: ReplayContext, all_marks: dict[int, Mark]
) -> list[LogDivergence]:
    found = []
    for d in history.divergences:
        if d.persisted_by is None or d.leader_epoch is None:
            continue
        mark = all_marks.get(d.leader_epoch)
        candidates = [
            v for v in (mark.committed if mark else None, d.epoch_committed) if v is not None
        ]
        committed = max(candidates) if candidates else None
        if committed is None or d.end_offset >= committed:
            continue
        found.append(
            LogDivergence(
                key=ctx.key,
                leader_epoch=d.leader_epoch,
                replica=d.replica,
                offset_start=d.end_offset,
                offset_end=d.follower_leo,
                records_lost=min(d.follower_leo, committed) - d.end_offset,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(d.request, d.answer, d.persisted_by),
                detected_at=d.at,
                qualifier=Scope.UNRESOLVED,
                leader=d.leader,
                diverging_epoch=d.diverging_epoch,
            )
        )
    return found


def hwm_regressions(
    history: History, ctx: ReplayContext, causes: dict[int, str], all_marks: dict[int, Mark]
) -> list[HwmRegression]:
    """A leader that lacks committed offsets and exposes a HWM below them."""
    found = []
    for mark in all_marks.values():
        if not mark.lost or mark.committed is None:
            continue
        view = mark.view
        # A leader's HWM only rises within its epoch: its first is its lowest.
        exposure = view.first_exposure
        if exposure is None or exposure.hwm >= mark.committed:
            continue
        cause = causes.get(view.leader_epoch)
        found.append(
            HwmRegression(
                key=ctx.key,
                leader_epoch=view.leader_epoch,
                replica=view.leader,
                offset_start=exposure.hwm,
                offset_end=mark.committed,
                records_lost=None,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(mark.committed_source, exposure.source),
                detected_at=exposure.at,
                caused_by=(cause,) if cause else (),
            )
        )
    return found


def committed_data_losses(
    history: History,
    ctx: ReplayContext,
    causes: dict[int, str],
    truncations: list[TruncationBelowHwm],
    all_marks: dict[int, Mark],
) -> list[CommittedDataLoss]:
    """Leader Completeness: every leader holds the committed log.

    A loss is certain when the new leader's start offset is known and below
    the true HWM, or when it is known only to lie below it (then its size is
    not fixed and the finding is ``probable``)."""
    losses: list[tuple[Mark, int | None, int, int]] = []
    for mark in all_marks.values():
        view, hwm = mark.view, mark.committed
        if view.leader == NO_LEADER or hwm is None:
            continue
        if mark.lost and mark.start is not None:
            losses.append((mark, mark.start, hwm, mark.start))
        elif (
            mark.start is None and view.start_offset.hi is not None and (view.start_offset.hi < hwm)
        ):
            losses.append((mark, None, hwm, view.start_offset.hi))
    found = []
    for i, (mark, start, hwm, floor) in enumerate(losses):
        view = mark.view
        until = losses[i + 1][0].view.leader_epoch if i + 1 < len(losses) else None
        linked = [
            t
            for t in truncations
            if t.leader_epoch is not None
            and view.leader_epoch <= t.leader_epoch
            and (until is None or t.leader_epoch < until)
            and t.qualifier != Scope.LOCAL
            and t.offset_start is not None
            and t.offset_end is not None
            and t.offset_start < hwm
            and t.offset_end > floor
        ]
        acked = tuple(
            a
            for earlier in history.epochs
            if earlier.leader_epoch < view.leader_epoch
            for a in earlier.acked
            if floor <= a.base_offset < hwm
        )
        cause = causes.get(view.leader_epoch)
        found.append(
            CommittedDataLoss(
                key=ctx.key,
                leader_epoch=view.leader_epoch,
                replica=None,
                offset_start=start,
                offset_end=hwm,
                records_lost=None if start is None else hwm - start,
                confidence=Confidence.CONFIRMED if start is not None else Confidence.PROBABLE,
                evidence=_sources(
                    view.began,
                    mark.committed_source,
                    mark.start_sources,
                    tuple(s for t in linked for s in t.evidence),
                    tuple(a.source for a in acked),
                ),
                detected_at=view.began_at,
                caused_by=((cause,) if cause else ()) + tuple(t.anomaly_id for t in linked),
                acked_produces=acked,
                leader=view.leader,
            )
        )
    return found


def _once(truncations: list[TruncationBelowHwm]) -> list[TruncationBelowHwm]:
    """One truncation seen several ways (the leader's log of the follower's
    fetches, and the follower's own fetcher and log lines, whose relative
    order only clocks give) is one finding, with all its evidence."""
    merged: dict[str, TruncationBelowHwm] = {}
    for t in truncations:
        seen = merged.get(t.anomaly_id)
        if seen is None:
            merged[t.anomaly_id] = t
        else:
            merged[t.anomaly_id] = replace(
                seen,
                evidence=_sources(seen.evidence, t.evidence),
                confidence=min(seen.confidence, t.confidence, key=_CONFIDENCE_ORDER.index),
            )
    return list(merged.values())


_CONFIDENCE_ORDER = [Confidence.CONFIRMED, Confidence.PROBABLE, Confidence.UNKNOWN]


def judge(history: History, ctx: ReplayContext) -> list[Finding]:
    all_marks = marks(history)
    elections = unclean_elections(history, ctx)
    causes = {f.leader_epoch: f.anomaly_id for f in elections if f.leader_epoch is not None}
    truncations = _once(truncations_below_hwm(history, ctx, causes, all_marks))
    findings: list[Finding] = []
    findings += elections
    findings += truncations
    findings += unresolved_divergences(history, ctx, all_marks)
    findings += hwm_regressions(history, ctx, causes, all_marks)
    findings += committed_data_losses(history, ctx, causes, truncations, all_marks)
    return findings


def gaps(history: History, ctx: ReplayContext) -> tuple[str, ...]:
    """What the evidence does not cover; any gap keeps a verdict off ``valid``."""
    out = list(history.gaps)
    if history.registration is None:
        out.append(
            "no PartitionRecord or snapshot for this partition: its leader epochs are not in "
            "evidence"
        )
    missing: dict[int, list[int]] = {}
    for view in history.epochs:
        if view.leader >= 0 and view.leader not in ctx.request_log_observers:
            missing.setdefault(view.leader, []).append(view.leader_epoch)
    for broker, epochs in sorted(missing.items()):
        out.append(
            f"no request log from broker {broker}, leader in epoch(s) "
            f"{', '.join(map(str, epochs))}: the HWM it exposed is not in evidence"
        )
    for d in history.divergences:
        if d.resolved_by is None and d.persisted_by is None:
            out.append(
                f"replica {d.replica} was told to truncate to {d.end_offset} "
                f"({d.answer.source_file}:{d.answer.line_no}) and no later fetch shows whether "
                "it did"
            )
    for mark in marks(history).values():
        view = mark.view
        if (
            mark.start is None
            and view.leader != NO_LEADER
            and view.election not in UNCLEAN
            and mark.committed is not None
            and view.leader_log_end is not None
            and view.leader_log_end < mark.committed
            and (view.start_offset.lo is None or view.start_offset.lo < mark.committed)
        ):
            out.append(
                f"leader {view.leader} of epoch {view.leader_epoch} was last seen holding up to "
                f"offset {view.leader_log_end}, below the committed {mark.committed}, and where "
                "its epoch started is not in evidence: a loss cannot be ruled out"
            )
        if mark.view.election in UNCLEAN and mark.start is None:
            out.append(
                f"epoch {mark.view.leader_epoch} began with an unclean election and its start "
                "offset is not in evidence: later epochs are judged as if it held the "
                "committed log"
            )
    return tuple(dict.fromkeys(out))
