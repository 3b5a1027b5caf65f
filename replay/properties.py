"""The protocol's promises, checked against a partition's history.

Each function below encodes one property of the seed documents and returns
the findings that break it; ``replay/README.md`` maps each to its source.
They read only the history the transitions built, so they can be reasoned
about (and tested) one at a time.
"""

from __future__ import annotations

from replay.findings import (
    CommittedDataLoss,
    Finding,
    HwmRegression,
    LogDivergence,
    TruncationBelowHwm,
    UncleanElection,
)
from replay.state import EpochView, History, ReplayContext, Truncation
from replay.types import NO_LEADER, Confidence, ElectionKind, Scope, Source

UNCLEAN = (ElectionKind.UNCLEAN, ElectionKind.UNCLEAN_RECOVERY)


def _sources(*groups: tuple[Source, ...] | Source | None) -> tuple[Source, ...]:
    out: list[Source] = []
    for group in groups:
        items = (group,) if isinstance(group, Source) else (group or ())
        for source in items:
            if source not in out:
                out.append(source)
    return tuple(out)


def lost_on_election(view: EpochView) -> tuple[int | None, int | None]:
    """Committed offsets the new leader of ``view`` lacked: [start, true HWM)."""
    hwm = view.true_hwm_before
    start = view.start_offset.exact
    if hwm is None or start is None or start >= hwm:
        return None, None
    return start, hwm


def unclean_elections(history: History, ctx: ReplayContext) -> list[UncleanElection]:
    found = []
    for view in history.epochs:
        if view.election not in UNCLEAN:
            continue
        hwm, start = view.true_hwm_before, view.start_offset.exact
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
                evidence=_sources(
                    view.began, view.true_hwm_before_source, view.start_offset.sources
                ),
                detected_at=view.began_at,
                isr_before=view.isr_before,
            )
        )
    return found


def _scope(t: Truncation, history: History, end: int) -> tuple[Scope, int | None]:
    """Did the leader of the epoch in force still hold what was truncated?

    It did when the replica's data came from that epoch (the leader wrote it)
    or lay below the epoch's start offset (the leader had it before it was
    elected). Offsets from the start offset on were rewritten in the epoch; a
    replica holding them from an older epoch held data that is gone."""
    if t.top_epoch is not None and t.leader_epoch is not None and t.top_epoch >= t.leader_epoch:
        return Scope.LOCAL, None
    view = history.epoch(t.leader_epoch)
    start = None if view is None else view.start_offset.exact
    if start is None or t.top_epoch is None:
        return Scope.UNKNOWN, None
    if start >= end:
        return Scope.LOCAL, None
    return Scope.GLOBAL, end - max(start, t.to_offset)


def truncations_below_hwm(
    history: History, ctx: ReplayContext, causes: dict[int, str]
) -> list[TruncationBelowHwm]:
    found = []
    for t in history.truncations:
        if t.true_hwm is None or t.to_offset >= t.true_hwm:
            continue
        end = min(t.from_offset, t.true_hwm)
        if end <= t.to_offset:
            continue
        scope, lost = _scope(t, history, end)
        cause = causes.get(t.leader_epoch) if t.leader_epoch is not None else None
        found.append(
            TruncationBelowHwm(
                key=ctx.key,
                leader_epoch=t.leader_epoch,
                replica=t.replica,
                offset_start=t.to_offset,
                offset_end=end,
                records_lost=lost,
                confidence=Confidence.CONFIRMED,
                evidence=_sources(t.true_hwm_source, t.before, t.after),
                detected_at=t.at,
                qualifier=scope,
                caused_by=(cause,) if cause and scope != Scope.LOCAL else (),
                from_offset=t.from_offset,
            )
        )
    return found


def unresolved_divergences(history: History, ctx: ReplayContext) -> list[LogDivergence]:
    found = []
    for d in history.divergences:
        if d.persisted_by is None or d.true_hwm is None or d.end_offset >= d.true_hwm:
            continue
        committed_end = min(d.follower_leo, d.true_hwm)
        found.append(
            LogDivergence(
                key=ctx.key,
                leader_epoch=d.leader_epoch,
                replica=d.replica,
                offset_start=d.end_offset,
                offset_end=d.follower_leo,
                records_lost=committed_end - d.end_offset,
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
    history: History, ctx: ReplayContext, causes: dict[int, str]
) -> list[HwmRegression]:
    """A leader that lacks committed offsets and exposes a HWM below them."""
    found = []
    for view in history.epochs:
        start, hwm = lost_on_election(view)
        if start is None or hwm is None:
            continue
        for exposure in history.exposures:
            if (
                exposure.leader_epoch == view.leader_epoch
                and exposure.leader == view.leader
                and exposure.hwm < hwm
            ):
                cause = causes.get(view.leader_epoch)
                found.append(
                    HwmRegression(
                        key=ctx.key,
                        leader_epoch=view.leader_epoch,
                        replica=view.leader,
                        offset_start=exposure.hwm,
                        offset_end=hwm,
                        records_lost=None,
                        confidence=Confidence.CONFIRMED,
                        evidence=_sources(view.true_hwm_before_source, exposure.source),
                        detected_at=exposure.at,
                        caused_by=(cause,) if cause else (),
                    )
                )
                break
    return found


def committed_data_losses(
    history: History,
    ctx: ReplayContext,
    causes: dict[int, str],
    truncations: list[TruncationBelowHwm],
) -> list[CommittedDataLoss]:
    """Leader Completeness: every leader holds the committed log.

    A loss is certain when the new leader's start offset is known and below
    the true HWM, or when it is known only to lie below it (then its size is
    not fixed and the finding is ``probable``)."""
    losses: list[tuple[EpochView, int | None, int, int]] = []
    for view in history.epochs:
        hwm = view.true_hwm_before
        if view.leader == NO_LEADER or hwm is None:
            continue
        start = view.start_offset.exact
        if start is not None and start < hwm:
            losses.append((view, start, hwm, start))
        elif start is None and view.start_offset.hi is not None and view.start_offset.hi < hwm:
            losses.append((view, None, hwm, view.start_offset.hi))
    found = []
    for i, (view, start, hwm, floor) in enumerate(losses):
        until = losses[i + 1][0].leader_epoch if i + 1 < len(losses) else None
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
            for a in history.acked
            if floor <= a.base_offset < hwm
            and (a.leader_epoch is None or a.leader_epoch < view.leader_epoch)
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
                    view.true_hwm_before_source,
                    view.start_offset.sources,
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


def judge(history: History, ctx: ReplayContext) -> list[Finding]:
    elections = unclean_elections(history, ctx)
    causes = {f.leader_epoch: f.anomaly_id for f in elections if f.leader_epoch is not None}
    truncations = truncations_below_hwm(history, ctx, causes)
    findings: list[Finding] = []
    findings += elections
    findings += truncations
    findings += unresolved_divergences(history, ctx)
    findings += hwm_regressions(history, ctx, causes)
    findings += committed_data_losses(history, ctx, causes, truncations)
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
        if (
            d.resolved_by is None
            and d.persisted_by is None
            and d.true_hwm is not None
            and d.end_offset < d.true_hwm
        ):
            out.append(
                f"replica {d.replica} was told to truncate to {d.end_offset} "
                f"({d.answer.source_file}:{d.answer.line_no}) and no later fetch shows whether "
                "it did"
            )
    for t in history.truncations:
        if t.true_hwm is None:
            out.append(
                f"replica {t.replica} truncated from {t.from_offset} to {t.to_offset} while no "
                "high watermark was yet in evidence"
            )
    return tuple(dict.fromkeys(out))
