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

from dataclasses import dataclass
from datetime import datetime

from replay.findings import (
    CommittedDataLoss,
    FencingViolation,
    Finding,
    HwmRegression,
    IsrRuleViolation,
    LogDivergence,
    TruncationBelowHwm,
    UncleanElection,
)
from replay.state import (
    Act,
    Acts,
    EpochView,
    History,
    IsrExpansion,
    ReplayContext,
    Truncation,
    UnderMinIsr,
    replace,
)
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
    #: ``committed`` rests only on a derived HW (``derived_counts``), shown by
    #: these fetch lines
    derived: bool = False
    derived_sources: tuple[Source, ...] = ()


def derived_counts(view: EpochView, profile: Profile | None) -> bool:
    """Whether an epoch's derived HW (the ISR followers' least fetch offset,
    ``transitions._derive_leader_hw``) stands for its exposed HWM: in zk-hw,
    whose request log shows no HWM (kafka-formats.md 1.2), always; in
    zk-epoch, when no answer in the epoch showed one.

    Findings resting only on it are ``probable``: seed 000 fixes the rule
    (the leader raises its HW to the ISR's least LEO as it processes a
    fetch), but not the two facts it is applied to here: the ISR the leader
    held at that moment (the evidence has ZooKeeper's, written on another
    clock) and that no fetch offset the leader stored is missing from its
    request log."""
    if view.derived is None:
        return False
    if profile == Profile.ZK_HW:
        return True
    return profile == Profile.ZK_EPOCH and view.first_exposure is None


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


def marks(history: History, profile: Profile | None = None) -> dict[int, Mark]:
    out: dict[int, Mark] = {}
    committed: int | None = None
    source: Source | None = None
    derived: tuple[Source, ...] | None = None  # the fetch lines, when derived
    for view in history.epochs:
        start, start_sources = start_offset(view, history)
        lost = (
            view.leader != NO_LEADER
            and start is not None
            and committed is not None
            and start < committed
        )
        base = start if lost else committed
        out[view.leader_epoch] = Mark(
            view,
            committed,
            source,
            start,
            start_sources,
            lost,
            base,
            derived is not None,
            derived or (),
        )
        if lost:
            committed, source, derived = start, None, None
        if view.committed is not None and (committed is None or view.committed > committed):
            committed, source, derived = view.committed, view.committed_source, None
        if (
            derived_counts(view, profile)
            and view.derived is not None
            and (committed is None or view.derived > committed)
        ):
            committed, source = view.derived, view.derived_sources[-1]
            derived = view.derived_sources
    return out


def start_floor(mark: Mark, history: History, ctx: ReplayContext) -> int | None:
    """A floor of X for an epoch whose start is in no line (its leader
    printed no ``starts at leader epoch``: down when elected, or its log not
    given). A replica's log end falls only by recovery at a restart (its
    load line) or by a truncation, which its own server.log prints (every
    era: ``Truncating ... to offset``), on a leader's diverging or epoch
    answer (in that leader's request log) or, in zk-hw, on becoming a
    follower.

    X is the leader's log end when elected. Up then, that is the end it was
    last seen holding (``leader_log_end``), when every leader before it has
    its request log in evidence, no diverging answer to it is unsettled, and
    its server.log is in evidence (the timed load line below). Down then
    (elected before its session expired), X is its on-disk log end, which
    it comes back with at its next restart (``leader_reloaded``, a timed
    line of its server.log: never a pasted excerpt, which may leave lines
    out). Either way X is at least the lower of the two."""
    view = mark.view
    if view.leader_log_end is None or view.leader_reloaded is None:
        return None
    if any(
        d.replica == view.leader and d.resolved_by is None and d.persisted_by is None
        for d in history.divergences
    ):
        return None
    leaders = {v.leader for v in history.epochs if v.leader_epoch < view.leader_epoch}
    if not leaders - {NO_LEADER} <= ctx.request_log_observers:
        return None
    return min(view.leader_log_end, view.leader_reloaded)


def unclean_elections(history: History, ctx: ReplayContext) -> list[UncleanElection]:
    found = []
    for mark in marks(history, ctx.profile).values():
        view = mark.view
        if view.election not in UNCLEAN:
            continue
        hwm, start = mark.committed, mark.start
        floor = start_floor(mark, history, ctx) if start is None else None
        start_sources = mark.start_sources
        if hwm is not None and start is not None:
            lo, hi, lost = (start, hwm, hwm - start) if start < hwm else (None, None, 0)
        elif hwm is not None and floor is not None and floor >= hwm:
            lo, hi, lost = None, None, 0
            start_sources += (view.leader_reloaded_source,) if view.leader_reloaded_source else ()
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
                confidence=Confidence.PROBABLE if mark.derived else Confidence.CONFIRMED,
                evidence=_sources(
                    view.began, mark.committed_source, mark.derived_sources, start_sources
                ),
                detected_at=view.began_at,
                derived_mark=mark.derived,
                isr_before=view.isr_before,
                recovery=view.election == ElectionKind.UNCLEAN_RECOVERY,
                unclean_enabled=unclean_enabled(history, view.leader),
            )
        )
    return found


def unclean_enabled(history: History, leader: int | None) -> bool | None:
    """``unclean.leader.election.enable`` in force: the topic's config, else
    the static value of the new leader's broker, else of a broker whose file
    does not say which it is; None when no config in evidence states it."""
    by_scope = {(c.scope, c.broker): c.value for c in history.unclean_config}
    for key in (("topic", None), ("static", leader), ("static", None)):
        if key in by_scope:
            return by_scope[key]
    return None


def sole_leader(all_marks: dict[int, Mark], mark: Mark) -> bool:
    """Whether ``mark``'s leader has led the partition since it was created,
    in every epoch in evidence (numbered from 0 with none missing), and no
    startup line of it came after any of them began. A leader truncates only
    on becoming a follower, and loses records only in a crash: such a leader
    holds every record the partition ever had, and every replica's records
    are copies of its own, whatever epoch they were written in. (A ZooKeeper
    controller re-elects a sole replica that comes back with the next epoch
    and no leaderless one between: hence the startup lines.)"""
    epoch = mark.view.leader_epoch
    views = [m.view for e, m in sorted(all_marks.items()) if e <= epoch]
    return (
        [v.leader_epoch for v in views] == list(range(epoch + 1))
        and views[0].election == ElectionKind.INITIAL
        and all(v.leader == mark.view.leader and not v.leader_restarted for v in views)
    )


def first_epoch_only(all_marks: dict[int, Mark], t: Truncation) -> bool:
    """Whether the replica that made ``t`` holds the first epoch's records
    only: it led that epoch (the partition's first, ``initial``), it led no
    epoch after it up to the one ``t`` happened in (numbered from 0 with none
    missing, so none went unseen), and no fetch dated newer records to it
    (``t.top_epoch`` unknown). A partition starts empty and a leader writes
    only in the epoch it leads, so whatever such a replica held was written
    in the first epoch. (Before 0.11 no line dates a leader's own records:
    its produce requests show no answer.)"""
    if t.top_epoch is not None or t.leader_epoch is None or t.from_offset <= 0:
        return False
    views = [m.view for e, m in sorted(all_marks.items()) if e <= t.leader_epoch]
    return (
        [v.leader_epoch for v in views] == list(range(t.leader_epoch + 1))
        and views[0].election == ElectionKind.INITIAL
        and views[0].leader == t.replica
        and all(v.leader != t.replica for v in views[1:])
    )


def _removed_committed(
    t: Truncation,
    all_marks: dict[int, Mark],
    profile: Profile | None = None,
    floors: dict[int, int] | None = None,
) -> tuple[int | None, Source | None, Scope, int | None, tuple[Source, ...] | None]:
    """How much of what ``t`` removed was committed, and was it on the leader.

    Returns (end of the committed part, its source, scope, records lost, and
    the fetch lines when that end rests only on a derived HW).

    Data the replica got in the epoch in force is the leader's own lineage:
    committed up to that epoch's mark; the leader still holds it (local).
    Data from an older epoch was committed up to the mark when that epoch
    ended; offsets from the start of any later epoch were rewritten by that
    epoch's leader, so a replica holding them held data that is gone (global).
    A later epoch whose start is in no line but has a floor (``floors``,
    ``start_floor``) rewrote nothing below that floor: local when every such
    start is at or above the committed part; global, with every record of
    the range lost, when another later epoch's stated start is at or below
    the offset cut to; else not decided. Under the partition's only leader
    (``sole_leader``) nothing was rewritten: local.
    """
    mark = all_marks.get(t.leader_epoch) if t.leader_epoch is not None else None
    if mark is None:
        return None, None, Scope.UNKNOWN, None, None
    if first_epoch_only(all_marks, t):
        t = replace(t, top_epoch=0)
    if t.top_epoch is not None and t.leader_epoch is not None and t.top_epoch >= t.leader_epoch:
        candidates = [v for v in (mark.base, t.epoch_committed) if v is not None]
        end = max(candidates) if candidates else None
        src = t.epoch_committed_source if end == t.epoch_committed else mark.committed_source
        derived = mark.derived_sources if mark.derived and end == mark.base else None
        if (
            t.epoch_derived is not None
            and derived_counts(mark.view, profile)
            and (end is None or t.epoch_derived > end)
        ):
            end, src, derived = t.epoch_derived, None, t.epoch_derived_sources
        return end, src, Scope.LOCAL, None, derived
    # epochs that began with no leader hold no data and rewrite nothing
    later = [
        m
        for e, m in sorted(all_marks.items())
        if t.top_epoch is not None
        and t.top_epoch < e <= (t.leader_epoch or 0)
        and m.view.leader != NO_LEADER
    ]
    if t.top_epoch is None or not later:
        derived = mark.derived_sources if mark.derived else None
        return mark.committed, mark.committed_source, Scope.UNKNOWN, None, derived
    ended = later[0]  # the epoch that followed the replica's data
    end = ended.committed
    if end is None:
        return None, None, Scope.UNKNOWN, None, None
    derived = ended.derived_sources if ended.derived else None
    if sole_leader(all_marks, mark):
        return end, ended.committed_source, Scope.LOCAL, None, derived
    starts = [m.start for m in later]
    top = min(t.from_offset, end)
    if any(s is None for s in starts):
        floored = [
            m.start if m.start is not None else (floors or {}).get(m.view.leader_epoch)
            for m in later
        ]
        if all(f is not None and f >= top for f in floored):
            return end, ended.committed_source, Scope.LOCAL, None, derived
        known = [s for s in starts if s is not None]
        if known and min(known) <= t.to_offset:
            # a later epoch began at or below the cut: it rewrote all of the
            # range, whatever the epochs whose start is in no line did
            return end, ended.committed_source, Scope.GLOBAL, top - t.to_offset, derived
        return end, ended.committed_source, Scope.UNKNOWN, None, derived
    rewritten_from = min(s for s in starts if s is not None)
    if rewritten_from >= top:
        return end, ended.committed_source, Scope.LOCAL, None, derived
    lost = top - max(rewritten_from, t.to_offset)
    return end, ended.committed_source, Scope.GLOBAL, lost, derived


def truncations_below_hwm(
    history: History, ctx: ReplayContext, causes: dict[int, str], all_marks: dict[int, Mark]
) -> list[TruncationBelowHwm]:
    found = []
    floors = {
        e: f
        for e, m in all_marks.items()
        if m.start is None and (f := start_floor(m, history, ctx)) is not None
    }
    for t in history.truncations:
        committed, committed_source, scope, lost, derived = _removed_committed(
            t, all_marks, ctx.profile, floors
        )
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
                # fetches, so the HWM it is judged against is the later one;
                # a derived HW is a lower bound (``derived_counts``).
                confidence=Confidence.CONFIRMED
                if t.answered and derived is None
                else Confidence.PROBABLE,
                evidence=_sources(committed_source, derived, t.before, t.after),
                detected_at=t.at,
                derived_mark=derived is not None,
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
        # Before 0.11 the request log prints no fetch answer; the leader's
        # own line on taking the epoch states the HWM it starts serving.
        exposure = view.first_exposure
        if exposure is None and ctx.profile == Profile.ZK_HW:
            exposure = view.start_exposure
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
                confidence=Confidence.PROBABLE if mark.derived else Confidence.CONFIRMED,
                evidence=_sources(mark.committed_source, mark.derived_sources, exposure.source),
                detected_at=exposure.at,
                caused_by=(cause,) if cause else (),
                derived_mark=mark.derived,
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
        acked_at_least = any(
            earlier.acked_dropped_hi is not None and earlier.acked_dropped_hi >= floor
            for earlier in history.epochs
            if earlier.leader_epoch < view.leader_epoch
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
                confidence=Confidence.CONFIRMED
                if start is not None and not mark.derived
                else Confidence.PROBABLE,
                evidence=_sources(
                    view.began,
                    mark.committed_source,
                    mark.derived_sources,
                    mark.start_sources,
                    tuple(s for t in linked for s in t.evidence),
                    tuple(a.source for a in acked),
                ),
                detected_at=view.began_at,
                caused_by=((cause,) if cause else ()) + tuple(t.anomaly_id for t in linked),
                acked_produces=acked,
                acked_at_least=acked_at_least,
                leader=view.leader,
                derived_mark=mark.derived,
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

#: evidence lines kept per finding for acts (the first ones)
_ACTS_SHOWN = 16


def _seconds(later: datetime | None, earlier: datetime | None) -> float | None:
    if later is None or earlier is None:
        return None
    return (later - earlier).total_seconds()


def _beyond(later: datetime | None, earlier: datetime | None, skew: float) -> bool:
    """``later`` is after ``earlier`` by more than the skew allowance: their
    order is fixed although the two clocks differ."""
    gap = _seconds(later, earlier)
    return gap is not None and gap > skew


def _where(source: Source) -> str:
    return f"{source.source_file}:{source.line_no}"


def _offsets(acts: list[Act]) -> tuple[int | None, int | None]:
    offsets = [a.base_offset for a in acts if a.base_offset is not None]
    if not offsets:
        return None, None
    return min(offsets), max(offsets) + 1


def _widen(lo: int | None, hi: int | None, acts: Acts) -> tuple[int | None, int | None]:
    """Add the acts summed up past ACTS_KEPT to a [lo, hi) range."""
    if acts.more_lo is None or acts.more_hi is None:
        return lo, hi
    return (
        acts.more_lo if lo is None else min(lo, acts.more_lo),
        acts.more_hi + 1 if hi is None else max(hi, acts.more_hi + 1),
    )


def fencing_violations(
    history: History, ctx: ReplayContext, all_marks: dict[int, Mark]
) -> tuple[list[FencingViolation], list[str]]:
    """One leader per epoch (seed 003 1.2.2, 2.8): a broker acting as leader
    after its leadership ended. Acts within the skew allowance of the end
    have no fixed order: no finding, a gap."""
    skew = ctx.max_clock_skew_s
    found: list[FencingViolation] = []
    notes: list[str] = []
    for s in history.stale:
        acts = s.acts
        beyond = [a for a in acts.kept if _beyond(a.at, s.ended_at, skew)]
        more = acts.more > 0 and _beyond(acts.more_first_at, s.ended_at, skew)
        if not beyond and not more:
            first = acts.kept[0] if acts.kept else None
            where = "" if first is None else f" ({_where(first.source)})"
            notes.append(
                f"broker {s.broker} acted as leader of epoch {s.leader_epoch}{where} after "
                f"{_where(s.ended_by)} ended its leadership, but within the clock-skew "
                f"allowance of {skew:g} s (or with no clock): whether it was two leaders at once "
                "is not fixed by the evidence"
            )
            continue
        lo, hi = _offsets(beyond)
        if more:
            lo, hi = _widen(lo, hi, acts)
        produces = sum(1 for a in beyond if a.base_offset is not None)
        fetches = sum(1 for a in beyond if a.base_offset is None)
        if more:
            produces += acts.more if acts.more_lo is not None else 0
        # where the next leader wrote its own records, the stale leader's are gone
        rewritten_from = next(
            (
                m.start
                for e, m in sorted(all_marks.items())
                if e > s.leader_epoch and m.view.leader not in (NO_LEADER, s.broker)
            ),
            None,
        )
        acks_all = [a.base_offset for a in beyond if a.acks == -1 and a.base_offset is not None]
        if more and acts.more_acks_all_hi is not None:
            acks_all.append(acts.more_acks_all_hi)
        lost = rewritten_from is not None and any(o >= rewritten_from for o in acks_all)
        found.append(
            FencingViolation(
                key=ctx.key,
                leader_epoch=s.leader_epoch,
                replica=s.broker,
                offset_start=lo,
                offset_end=hi,
                records_lost=None,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(tuple(a.source for a in beyond[:_ACTS_SHOWN]), s.ended_by),
                detected_at=beyond[0].at if beyond else acts.more_first_at,
                produces=produces,
                fetches=fetches,
                acks_all_lost=lost,
                ended="fenced" if s.by_fence else "new epoch",
            )
        )
    return found, notes


def _isr_expansions(
    history: History, ctx: ReplayContext, all_marks: dict[int, Mark]
) -> tuple[list[IsrRuleViolation], list[str]]:
    """Seed 003 2.9: a follower joins the ISR only when its fetch offset has
    reached the HWM and the leader epoch start offset.

    Judged by the clocks, not by the order of the fold, so that no order the
    skew allowance leaves open changes it: the bound is the start offset and
    the highest HWM exposed beyond the allowance before the expansion; the
    replica's log end is its latest fetch at or before the expansion's time,
    which must lie within the allowance of it (an older one leaves time to
    catch up unseen, unless a fetch beyond the allowance after it, and every
    fetch between, show the same offset), and no fetch within the allowance
    after it may have reached the bound. A fetch is logged once answered, so
    the one that let the leader add the replica comes after the expansion:
    with no later fetch of the replica in evidence, nothing is found."""
    skew = ctx.max_clock_skew_s
    found: list[IsrRuleViolation] = []
    notes: list[str] = []
    for x in history.expansions:
        mark = all_marks.get(x.leader_epoch)
        start = mark.start if mark is not None else None
        steps = [h for h in x.hwm_steps if _beyond(x.at, h.at, skew)]
        step = max(steps, key=lambda h: h.value) if steps else None
        hwm = None if step is None else step.value
        if hwm is not None and start is not None and not _beyond(x.at, x.first_write_at, skew):
            # a leader that wrote nothing in its epoch yet ends at its start offset
            hwm = min(hwm, start)
        bounds = [b for b in (hwm, start) if b is not None]
        if not bounds or x.at is None:
            continue
        bound = max(bounds)
        before = [f for f in x.fetches if f.at is not None and f.at <= x.at]
        after = [f for f in x.fetches if f.at is not None and f.at > x.at]
        if not before:
            continue
        last = max(before, key=lambda f: (f.at, f.source.line_no))
        if last.offset >= bound:
            continue
        head = (
            f"replica {x.replica} joined the ISR of epoch {x.leader_epoch} "
            f"({_where(x.sources[0])}) with its last fetch at {last.offset} "
            f"({_where(last.source)}), below {bound}"
        )
        if _beyond(x.at, last.at, skew):
            # A log end only rises between fetches (a truncation aside), and
            # each fetch shows it: a fetch surely after the expansion at the
            # same offset, with none between showing another, fixes the log
            # end at the expansion.
            later = sorted(
                (f for f in after if _beyond(f.at, x.at, skew)),
                key=lambda f: (f.at, f.source.line_no),
            )
            # a fetch with no time may lie anywhere: counted as between
            first = later[0].at if later else None
            between = [f for f in after if first is not None and (f.at is None or f.at <= first)]
            if not later or any(f.offset != last.offset for f in between):
                notes.append(
                    head + f", but that fetch is older than the expansion by more than the "
                    f"clock-skew allowance of {skew:g} s: it may have caught up unseen"
                )
                continue
        caught_up = [f for f in after if f.offset >= bound and not _beyond(f.at, x.at, skew)]
        if caught_up and _joined_by(x, bound):
            continue
        if caught_up:
            notes.append(
                head + f"; its fetch at {caught_up[0].offset} ({_where(caught_up[0].source)}) "
                f"lies within the clock-skew allowance of {skew:g} s of the expansion and may "
                "have preceded it"
            )
            continue
        if not after:
            # A fetch is logged once answered: the fetch that let the leader
            # add the replica is answered after the expansion, and a leader
            # that stopped before answering it logged it nowhere.
            notes.append(
                head + ", and no later fetch of it from that leader is in evidence: the one "
                "that let it join is logged only once answered, so it may be missing"
            )
            continue
        bound_sources: tuple[Source, ...] = ()
        if step is not None and bound == step.value:
            bound_sources = (step.source,)
        elif mark is not None:
            bound_sources = mark.start_sources
        found.append(
            IsrRuleViolation(
                key=ctx.key,
                leader_epoch=x.leader_epoch,
                replica=x.replica,
                offset_start=last.offset,
                offset_end=bound,
                records_lost=None,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(last.source, x.sources, bound_sources),
                detected_at=x.at,
                variant="expansion",
                leader=x.leader,
            )
        )
    # one expansion told twice (the controller's record and the leader's line
    # with a differently numbered version) is one finding
    merged: dict[str, IsrRuleViolation] = {}
    for f in found:
        seen = merged.get(f.anomaly_id)
        merged[f.anomaly_id] = (
            f if seen is None else replace(seen, evidence=_sources(seen.evidence, f.evidence))
        )
    return list(merged.values()), notes


def _joined_by(x: IsrExpansion, bound: int) -> bool:
    """On the leader's own clock (its line telling the expansion, its request
    log dating the fetches), the first fetch of the replica logged at or after
    the expansion is the one in flight when the leader added it (a follower
    has one fetch in flight; a fetch is logged once answered): at or above
    the bound, the replica joined caught up."""
    if x.own_at is None:
        return False
    after = [f for f in x.fetches if f.at is not None and f.at >= x.own_at]
    if not after:
        return False
    first = min(after, key=lambda f: (f.at or x.own_at, f.source.line_no))
    return first.offset >= bound


def _acks_under_min_isr(
    history: History, ctx: ReplayContext
) -> tuple[list[IsrRuleViolation], list[str]]:
    """Seed 003 2.6: acks=all is refused while the ISR is below min ISR. By
    the controller's ISR, an ack counts when its clock puts it beyond the skew
    allowance after the record that shrank the ISR and before the one that
    grew it back; after the leader's own (under-min-isr) line (one clock), it
    counts as it stands."""
    skew = ctx.max_clock_skew_s
    decided: dict[tuple[int, int], list[tuple[UnderMinIsr, list[Act], bool]]] = {}
    open_: dict[tuple[int, int], list[str]] = {}
    for u in history.under_min_isr:
        key = (u.leader, u.leader_epoch)
        acts = list(u.acts.kept)
        if u.marker:
            counted, tail = acts, u.acts.more > 0
        else:
            grown_at: datetime | None = None
            grown = False
            if u.isr_index is not None and u.min_isr is not None:
                for change in history.isr_changes[u.isr_index + 1 :]:
                    if change.leader_epoch != u.leader_epoch or len(change.isr) >= u.min_isr:
                        grown, grown_at = True, change.at
                        break

            counted = [
                a
                for a in acts
                if _beyond(a.at, u.since_at, skew) and (not grown or _beyond(grown_at, a.at, skew))
            ]
            tail = u.acts.more > 0 and not grown and _beyond(u.acts.more_first_at, u.since_at, skew)
            if len(counted) < len(acts):
                open_.setdefault(key, []).append(
                    f"leader {u.leader} acknowledged acks=all in epoch {u.leader_epoch} "
                    f"({_where(next(a for a in acts if a not in counted).source)}) while the "
                    f"ISR [{', '.join(map(str, u.isr))}] was below min ISR {u.min_isr}, within "
                    f"the clock-skew allowance of {skew:g} s of the ISR change "
                    f"({_where(u.since)}) or of its end: its order is not fixed by the evidence"
                )
        if counted or tail:
            decided.setdefault(key, []).append((u, counted, tail))
    found: list[IsrRuleViolation] = []
    for (leader, epoch), groups in decided.items():
        acts = [a for _, counted, _ in groups for a in counted]
        lo, hi = _offsets(acts)
        count = len(acts)
        for u, _, tail in groups:
            if tail:
                lo, hi = _widen(lo, hi, u.acts)
                count += u.acts.more
        units = [u for u, _, _ in groups]
        by_isr = next((u for u in units if not u.marker), None)
        first = by_isr or units[0]
        found.append(
            IsrRuleViolation(
                key=ctx.key,
                leader_epoch=epoch,
                replica=leader,
                offset_start=lo,
                offset_end=hi,
                records_lost=None,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(
                    tuple(u.since for u in units),
                    tuple(u.min_isr_source for u in units if u.min_isr_source is not None),
                    tuple(a.source for a in acts[:_ACTS_SHOWN]),
                ),
                detected_at=acts[0].at if acts else None,
                variant="under_min_isr",
                leader=leader,
                isr=first.isr,
                min_isr=first.min_isr,
                marker=by_isr is None,
                acks=count,
            )
        )
    notes = [n for key, items in open_.items() if key not in decided for n in items]
    return found, notes


def _unclean_exclusions(
    history: History, ctx: ReplayContext, all_marks: dict[int, Mark]
) -> tuple[list[IsrRuleViolation], list[str]]:
    """Seed 002 5.1.2, Unclean Exclusion (KIP-966, kraft-elr): a replica back
    from an unclean shutdown stays out of the ISR, the ELR and leadership
    until it has caught up. Broken when its registration left it in the ELR
    (judged when it was unfenced or elected) or when it was elected from the
    ISR or ELR first; ``[its log end at the restart, the committed mark)``,
    both null when it had reached the mark. A restart whose version prints
    nothing about the shutdown is of unknown kind: a gap, never a finding."""
    if ctx.profile != Profile.KRAFT_ELR:
        return [], []
    found: list[IsrRuleViolation] = []
    notes: list[str] = []
    for x in history.exclusions:
        mark = all_marks.get(x.leader_epoch)
        marks_known = [v for v in (x.committed, mark.committed if mark else None) if v is not None]
        committed = max(marks_known) if marks_known else None
        if x.clean is None:
            notes.append(
                f"broker {x.broker} restarted ({_where(x.sources[0])}) and its version prints "
                f"nothing about its shutdown; it was then {_exclusion_how(x.how)} in epoch "
                f"{x.leader_epoch}: whether Unclean Exclusion held is not in evidence"
            )
            continue
        behind = x.log_end is not None and committed is not None and x.log_end < committed
        found.append(
            IsrRuleViolation(
                key=ctx.key,
                leader_epoch=x.leader_epoch,
                replica=x.broker,
                offset_start=x.log_end if behind else None,
                offset_end=committed if behind else None,
                records_lost=None,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(
                    x.sources, mark.committed_source if mark is not None and behind else None
                ),
                detected_at=x.at,
                variant="unclean_exclusion",
                how=x.how,
            )
        )
    return found, notes


def _exclusion_how(how: str) -> str:
    return "kept in the ELR at its registration" if how == "elr" else "elected"


def isr_rule_violations(
    history: History, ctx: ReplayContext, all_marks: dict[int, Mark]
) -> tuple[list[IsrRuleViolation], list[str]]:
    expansions, expansion_notes = _isr_expansions(history, ctx, all_marks)
    acks, ack_notes = _acks_under_min_isr(history, ctx)
    exclusions, exclusion_notes = _unclean_exclusions(history, ctx, all_marks)
    return expansions + acks + exclusions, expansion_notes + ack_notes + exclusion_notes


def view_elections(history: History, ctx: ReplayContext) -> list[UncleanElection]:
    """Point-in-time views (DESIGN.md, Inputs): a leader that appears outside
    the last ISR (and ELR) seen before it was elected uncleanly, ``probable``
    since samples can miss a step. Only where no metadata log or controller
    decision gives the partition's epochs (those judge the election
    exactly); a view names no offset, so the range is unknown."""
    if history.epochs:
        return []
    return [
        UncleanElection(
            key=ctx.key,
            leader_epoch=v.leader_epoch,
            replica=v.leader,
            offset_start=None,
            offset_end=None,
            records_lost=None,
            confidence=Confidence.PROBABLE,
            evidence=_sources(v.before, v.source),
            detected_at=None,
            isr_before=v.isr_before,
            recovery=v.recovery,
            from_views=True,
            unclean_enabled=unclean_enabled(history, v.leader),
        )
        for v in history.view_elections
    ]


def judge(history: History, ctx: ReplayContext) -> list[Finding]:
    all_marks = marks(history, ctx.profile)
    elections = unclean_elections(history, ctx)
    causes = {f.leader_epoch: f.anomaly_id for f in elections if f.leader_epoch is not None}
    truncations = _once(truncations_below_hwm(history, ctx, causes, all_marks))
    findings: list[Finding] = []
    findings += elections
    findings += view_elections(history, ctx)
    findings += truncations
    findings += unresolved_divergences(history, ctx, all_marks)
    findings += hwm_regressions(history, ctx, causes, all_marks)
    findings += committed_data_losses(history, ctx, causes, truncations, all_marks)
    findings += fencing_violations(history, ctx, all_marks)[0]
    findings += isr_rule_violations(history, ctx, all_marks)[0]
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
    for mark in marks(history, ctx.profile).values():
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
    # acts whose order against the controller's records only skewed clocks give
    rule_marks = marks(history, ctx.profile)
    out += fencing_violations(history, ctx, rule_marks)[1]
    out += isr_rule_violations(history, ctx, rule_marks)[1]
    return tuple(dict.fromkeys(out))
