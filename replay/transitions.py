"""One handler per event kind: fold an observation into the history.

Transitions only record what happened (epochs, HWM exposures, log ends,
truncations, divergences, acknowledged writes). Whether that broke a promise
is decided afterwards by ``replay.properties``, because an epoch's judgement
needs evidence that arrives after its first event (its start offset is often
pinned only by a later divergence answer).
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from replay.state import (
    ACKED_KEPT,
    FETCHES_KEPT,
    HWM_STEPS_KEPT,
    AckedProduce,
    Act,
    Bound,
    ConfigSetting,
    Divergence,
    EpochView,
    Exclusion,
    Exposure,
    Fence,
    FetchSeen,
    History,
    HwmStep,
    IsrChange,
    IsrExpansion,
    MinIsrSetting,
    PartitionRegistration,
    PartitionViewSeen,
    PositionSeen,
    RestartLoss,
    Session,
    StaleLeadership,
    Truncation,
    UncleanRestart,
    UnderMinIsr,
    ViewElection,
    replace,
)
from replay.types import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERING,
    AlterPartition,
    BecomeFollower,
    BecomeLeader,
    BrokerConfig,
    BrokerFencing,
    BrokerRegistration,
    BrokerRestart,
    ClientEpochAnswer,
    ClientHwm,
    ClientPosition,
    ControllerChange,
    ElectionKind,
    EpochAnswer,
    EpochCheckpoint,
    Event,
    FetchAnswer,
    FetcherHalt,
    FollowerFetch,
    IsrUpdated,
    LeaderAndIsr,
    LogLoaded,
    LogRecovered,
    LogTruncated,
    MinIsrConfig,
    OffsetReset,
    Origin,
    PartitionChangeRecord,
    PartitionOffline,
    PartitionRecord,
    PartitionView,
    ProduceAck,
    RecoveryTruncation,
    Source,
    TopicConfig,
)

ERROR_NONE = 0
ACKS_ALL = -1


def step(history: History, event: Event) -> History:
    """Fold one event into the history (pure)."""
    history = _observe(history, event.origin, event)
    match event:
        case PartitionRecord():
            return _partition_record(history, event)
        case PartitionChangeRecord():
            return _partition_change(history, event)
        case BrokerRegistration():
            return _broker_registration(history, event)
        case BrokerFencing():
            return _broker_fencing(history, event)
        case FollowerFetch():
            return _follower_fetch(history, event)
        case FetchAnswer():
            return _fetch_answer(history, event)
        case ProduceAck():
            return _produce_ack(history, event)
        case EpochAnswer():
            return _epoch_answer(history, event)
        case BecomeLeader():
            return _become_leader(history, event)
        case BecomeFollower():
            return _become_follower(history, event)
        case LogTruncated():
            return _log_truncated(history, event)
        case EpochCheckpoint():
            return _epoch_checkpoint(history, event)
        case LeaderAndIsr():
            return _leader_and_isr(history, event)
        case ControllerChange():
            return _controller_change(history, event)
        case PartitionOffline():
            return _partition_offline(history, event)
        case MinIsrConfig():
            return _min_isr_config(history, event)
        case IsrUpdated():
            return _isr_updated(history, event)
        case AlterPartition():
            return _alter_partition(history, event)
        case ClientHwm():
            return _client_hwm(history, event)
        case ClientEpochAnswer():
            return _client_epoch_answer(history, event)
        case ClientPosition():
            return _client_position(history, event)
        case BrokerRestart():
            return _broker_restart(history, event)
        case LogRecovered():
            return _log_recovered(history, event)
        case RecoveryTruncation():
            return _loaded(history, event.broker, event.to_offset, event.origin)
        case LogLoaded():
            return _loaded(history, event.broker, event.log_end, event.origin)
        case BrokerConfig():
            return _broker_config(history, event)
        case TopicConfig():
            return _topic_config(history, event)
        case FetcherHalt():
            return _fetcher_halt(history, event)
        case OffsetReset():
            return _offset_reset(history, event)
        case PartitionView():
            return _partition_view(history, event)
        case _:
            assert_never(event)


def _evidence_kind(event: Event) -> str:
    if isinstance(
        event,
        PartitionRecord | PartitionChangeRecord | BrokerRegistration | BrokerFencing | MinIsrConfig,
    ):
        return "metadata"
    if isinstance(event, LeaderAndIsr | PartitionOffline):
        return "zk_controller"
    if isinstance(event, ControllerChange):
        return "controller_log"
    if isinstance(
        event,
        BecomeLeader
        | BecomeFollower
        | LogTruncated
        | IsrUpdated
        | BrokerRestart
        | LogRecovered
        | RecoveryTruncation
        | LogLoaded
        | BrokerConfig
        | FetcherHalt
        | OffsetReset,
    ):
        return "broker_log"
    if isinstance(event, EpochCheckpoint):
        return "checkpoint"
    if isinstance(event, PartitionView | TopicConfig):
        return "point_in_time_view"
    return "request_log"


#: evidence kind per event class (``_evidence_kind``, worked out once per class)
_EVIDENCE_KINDS: dict[type, str] = {}


def _observe(history: History, origin: Origin, event: Event) -> History:
    kind = _EVIDENCE_KINDS.get(type(event)) or _EVIDENCE_KINDS.setdefault(
        type(event), _evidence_kind(event)
    )
    first, last = history.first_time, history.last_time
    if origin.time is not None:
        first = origin.time if first is None or origin.time < first else first
        last = origin.time if last is None or origin.time > last else last
    observers = history.observers
    last_seen = history.last_seen
    if kind not in ("metadata", "zk_controller", "controller_log") and origin.observer is not None:
        if origin.observer not in observers:
            observers = observers | {origin.observer}
        if origin.time is not None:
            mark = (origin.time, origin.source.source_file, origin.seq)
            previous = next((s[1:] for s in last_seen if s[0] == origin.observer), None)
            if previous is None or mark > previous:
                last_seen = tuple(s for s in last_seen if s[0] != origin.observer) + (
                    (origin.observer, *mark),
                )
    last_offset = history.last_metadata_offset
    if origin.metadata_offset is not None and (
        last_offset is None or origin.metadata_offset > last_offset
    ):
        last_offset = origin.metadata_offset
    return replace(
        history,
        last_seen=last_seen,
        last_metadata_offset=last_offset,
        events=history.events + 1,
        first_time=first,
        last_time=last,
        evidence_kinds=history.evidence_kinds
        if kind in history.evidence_kinds
        else history.evidence_kinds | {kind},
        observers=observers,
    )


# --- metadata -------------------------------------------------------------------


def _partition_record(history: History, record: PartitionRecord) -> History:
    registration = PartitionRegistration.of(record)
    current = history.current_epoch
    if current is not None and record.leader_epoch <= current.leader_epoch:
        # The same registration again (a snapshot over a replayed log): it
        # resets the controller's view but starts no epoch.
        return replace(history, registration=registration)
    if current is not None and record.leader_epoch > current.leader_epoch + 1:
        history = history.with_gap(
            f"leader epochs {current.leader_epoch + 1}..{record.leader_epoch - 1} are missing "
            "from the metadata evidence (a snapshot follows an earlier record)"
        )
    fresh = record.leader_epoch == 0 and record.partition_epoch == 0
    start = Bound().pin(0, record.origin.source) if fresh else Bound()
    view = EpochView(
        leader_epoch=record.leader_epoch,
        leader=record.leader,
        election=ElectionKind.INITIAL if fresh else ElectionKind.UNKNOWN,
        partition_epoch=record.partition_epoch,
        isr_before=(),
        isr=record.isr,
        elr=record.elr or (),
        began=record.origin.source,
        began_at=record.origin.time,
        metadata_offset=record.origin.metadata_offset,
        leader_last_fetched_epoch=None,
        start_offset=start,
    )
    history = _isr_recorded(history, view.leader_epoch, view.leader, record.isr, record.origin)
    return _end_current_epoch(history, record.origin, registration, view)


def election_was_clean(new_leader: int, prev_isr: tuple[int, ...]) -> bool:
    """Kafka's own test (PartitionRegistration.electionWasClean): a leader
    change is clean when there is no leader or the new one was in the ISR."""
    return new_leader == NO_LEADER or new_leader in prev_isr


def classify_election(
    before: PartitionRegistration, after: PartitionRegistration, record: PartitionChangeRecord
) -> ElectionKind:
    if after.leader == NO_LEADER:
        return ElectionKind.OFFLINE
    recovering = record.leader_recovery_state == RECOVERING
    if not recovering and after.leader not in before.isr and after.leader in before.elr:
        # KIP-966 (seed 002 5.2, case B): an ELR member is complete, so its
        # election is clean, although Kafka's electionWasClean test, which
        # only knows the ISR, logs it "UNCLEAN" (kafka-formats.md 2.6).
        return ElectionKind.ELR
    if recovering or not election_was_clean(after.leader, before.isr):
        # Seed 003 section 2.8 and kafka-formats.md 2.6: the controller marks an
        # unclean leader RECOVERING (KIP-704); Kafka logs "UNCLEAN partition
        # change" whenever the new leader was outside the previous ISR. With
        # ISR and ELR empty, a leader from LastKnownELR is an unclean recovery
        # (seed 002 5.3).
        if not before.isr and not before.elr and after.leader in before.last_known_elr:
            return ElectionKind.UNCLEAN_RECOVERY
        return ElectionKind.UNCLEAN
    if after.replicas != before.replicas or record.adding_replicas or record.removing_replicas:
        return ElectionKind.REASSIGNMENT
    if (
        after.leader != before.leader
        and after.replicas
        and after.leader == after.replicas[0]
        and before.leader != NO_LEADER
        and before.leader in after.isr
    ):
        return ElectionKind.PREFERRED
    return ElectionKind.CLEAN


def _partition_change(history: History, record: PartitionChangeRecord) -> History:
    before = history.registration
    if before is None:
        return history.with_gap(
            "a PartitionChangeRecord precedes any PartitionRecord or snapshot: the leader epochs "
            "it creates cannot be numbered"
        )
    after = before.merge(record)
    if record.isr is not None:
        history = _isr_recorded(history, after.leader_epoch, after.leader, after.isr, record.origin)
    if record.leader == NO_LEADER_CHANGE:
        history = _expanded(
            history,
            after.leader_epoch,
            after.leader,
            tuple(r for r in after.isr if r not in before.isr),
            after.partition_epoch,
            record.origin,
        )
        current = history.current_epoch
        if current is not None:
            history = history.with_epoch(replace(current, isr=after.isr, elr=after.elr))
        history = _unclean_members(history, before.isr, after, None, record.origin)
        return replace(history, registration=after)
    new_leader_log = history.replica(after.leader)
    view = EpochView(
        leader_epoch=after.leader_epoch,
        leader=after.leader,
        election=classify_election(before, after, record),
        partition_epoch=after.partition_epoch,
        isr_before=before.isr,
        isr=after.isr,
        elr=after.elr,
        began=record.origin.source,
        began_at=record.origin.time,
        metadata_offset=record.origin.metadata_offset,
        leader_last_fetched_epoch=new_leader_log.last_fetched_epoch,
        leader_log_end=new_leader_log.held,
    )
    history = _end_current_epoch(history, record.origin, after, view)
    return _unclean_members(history, before.isr, after, view, record.origin)


def _end_current_epoch(
    history: History, origin: Origin, registration: PartitionRegistration, view: EpochView
) -> History:
    current = history.current_epoch
    if current is not None:
        history = history.with_epoch(replace(current, ended_at=origin.time))
    if any(x.replica == view.leader for x in history.restart_losses):
        # elected with less than it held: the election's findings count it
        history = replace(
            history,
            restart_losses=tuple(x for x in history.restart_losses if x.replica != view.leader),
        )
    # A leader may write in the epoch it leads. Before 0.11 no line dates
    # what it writes (produce answers print no offsets, fetches no epoch),
    # so what dated its newest data before, a fetch naming no epoch
    # (``_epochless_top``), no longer does.
    log = history.replica(view.leader) if view.leader >= 0 else None
    if (
        log is not None
        and log.last_fetched_epoch is None
        and log.top_epoch is not None
        and log.top_epoch < view.leader_epoch
    ):
        history = history.with_replica(view.leader, replace(log, top_epoch=None))
    return replace(history, registration=registration, epochs=history.epochs + (view,))


def _fence_marked(history: History, broker: int, origin: Origin | None) -> History:
    """Keep the latest fence of ``broker`` (None: it was unfenced)."""
    fences = tuple(f for f in history.fences if f.broker != broker)
    if origin is not None:
        current = history.current_epoch
        epoch = None if current is None else current.leader_epoch
        fences += (Fence(broker, origin.time, origin.source, epoch),)
    return replace(history, fences=fences)


def _broker_registration(history: History, record: BrokerRegistration) -> History:
    fenced = history.fenced | {record.broker} if record.fenced else history.fenced - {record.broker}
    epochs = tuple((b, e) for b, e in history.broker_epochs if b != record.broker)
    # A new registration is a new uptime session: the previous one is over.
    history = _fence_marked(history, record.broker, record.origin if record.fenced else None)
    history = _registered_after_restart(history, record.broker, record.origin)
    return replace(
        history, fenced=fenced, broker_epochs=epochs + ((record.broker, record.broker_epoch),)
    )


def _broker_fencing(history: History, record: BrokerFencing) -> History:
    if record.fenced == 1:
        history = _fence_marked(history, record.broker, record.origin)
        return replace(history, fenced=history.fenced | {record.broker})
    if record.fenced == -1:
        history = _fence_marked(history, record.broker, None)
        history = _kept_when_unfenced(history, record.broker, record.origin)
        history = _without_elr_registration(history, record.broker)
        return replace(history, fenced=history.fenced - {record.broker})
    return history


# --- ISR changes, min ISR, and leaders acting out of turn -------------------------


def _isr_recorded(
    history: History, leader_epoch: int, leader: int, isr: tuple[int, ...], origin: Origin
) -> History:
    """The controller recorded ``isr``. A leader's (under-min-isr) line
    holds within its epoch only."""
    change = IsrChange(leader_epoch, leader, isr, origin.time, origin.source)
    marks = tuple(m for m in history.under_min_marks if m[1] >= leader_epoch)
    return replace(history, isr_changes=history.isr_changes + (change,), under_min_marks=marks)


def _expanded(
    history: History,
    leader_epoch: int,
    leader: int,
    added: tuple[int, ...],
    partition_epoch: int | None,
    origin: Origin,
) -> History:
    """``added`` joined the ISR of ``leader_epoch``: note what the leader knew
    of each one's log end and of its own HWM then (seed 003 2.9)."""
    view = history.epoch(leader_epoch)
    if view is None or leader < 0:
        return history
    for replica in sorted(set(added)):
        if replica == leader:
            continue
        same = next(
            (
                x
                for x in history.expansions
                if (x.leader_epoch, x.replica, x.partition_epoch)
                == (leader_epoch, replica, partition_epoch)
            ),
            None,
        )
        if same is not None:
            # the same expansion seen again (controller record, leader's line)
            merged = replace(same, sources=same.sources + (origin.source,))
            if merged.own_at is None and origin.observer == leader:
                merged = replace(merged, own_at=origin.time)
            history = replace(
                history,
                expansions=tuple(merged if x is same else x for x in history.expansions),
            )
            continue
        tail = next((t for lead, f, t in history.fetch_tail if (lead, f) == (leader, replica)), ())
        expansion = IsrExpansion(
            replica=replica,
            leader=leader,
            leader_epoch=leader_epoch,
            partition_epoch=partition_epoch,
            at=origin.time,
            sources=(origin.source,),
            fetches=tail,
            hwm_steps=view.hwm_steps,
            first_write_at=view.first_write_at,
            own_at=origin.time if origin.observer == leader else None,
        )
        history = replace(history, expansions=history.expansions + (expansion,))
    return history


#: expansions still collecting the joined replica's next fetches
EXPANSIONS_WAITING = 16


def _fetch_seen(history: History, leader: int | None, fetch: FollowerFetch) -> History:
    """Keep the follower's latest fetches per leader, and the first ones
    after each of its ISR expansions: had it caught up by then?"""
    seen = FetchSeen(fetch.fetch_offset, fetch.origin.time, fetch.origin.source)
    pair = (leader, fetch.replica)
    tail = next((t for lead, f, t in history.fetch_tail if (lead, f) == pair), ())
    rest = tuple(e for e in history.fetch_tail if (e[0], e[1]) != pair)
    history = replace(
        history, fetch_tail=rest + ((leader, fetch.replica, (tail + (seen,))[-FETCHES_KEPT:]),)
    )
    # only recent expansions still wait for fetches: look at the last few
    expansions_seen = history.expansions
    waiting = [
        i
        for i in range(max(0, len(expansions_seen) - EXPANSIONS_WAITING), len(expansions_seen))
        if expansions_seen[i].fetches_after < FETCHES_KEPT
        and (expansions_seen[i].leader, expansions_seen[i].replica) == pair
    ]
    if not waiting:
        return history
    expansions = list(history.expansions)
    for i in waiting:
        x = expansions[i]
        expansions[i] = replace(x, fetches=x.fetches + (seen,), fetches_after=x.fetches_after + 1)
    return replace(history, expansions=tuple(expansions))


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return min(a, b)


def _min_isr_config(history: History, event: MinIsrConfig) -> History:
    if event.topic is not None:
        scope, broker = "topic", None
    elif event.broker is not None:
        scope, broker = "broker", event.broker
    else:
        scope, broker = "cluster", None
    value = event.min_isr if event.min_isr is None or event.min_isr >= 0 else None
    rest = tuple(m for m in history.min_isr if (m.scope, m.broker) != (scope, broker))
    setting = MinIsrSetting(scope, broker, value, event.origin.source)
    return replace(history, min_isr=rest + (setting,))


def _zk_written(history: History) -> bool:
    """The partition's leaders and ISR come from a ZooKeeper controller's
    decisions, not from a metadata log: between two decisions the leader
    writes its ISR changes to ZooKeeper itself (formats-addendum.md 9.4), so
    its ISR line is the partition's state the next election starts from."""
    return "zk_controller" in history.evidence_kinds and "metadata" not in history.evidence_kinds


def _isr_updated(history: History, event: IsrUpdated) -> History:
    """The leader's ISR confirmation (kafka-formats.md 5.3): an expansion when
    it names a replica the controller's ISR did not hold yet, and from 3.6 the
    (under-min-isr) marker. In the ZooKeeper eras it is also the ISR the
    leader wrote to ZooKeeper (``_zk_written``; before 2.4 the only INFO line
    of that write is the leader's ``Shrinking`` / ``Expanding ISR``, which
    pipeline/bridge.py brings here too): the previous ISR of the next
    election, and the ISR the min ISR rule counts."""
    current = history.current_epoch
    if current is None or current.leader != event.broker:
        return history
    registration = history.registration
    before = registration.isr if registration is not None else ()
    history = _expanded(
        history,
        current.leader_epoch,
        event.broker,
        tuple(r for r in event.isr if r not in before),
        event.partition_epoch,
        event.origin,
    )
    if registration is not None and event.isr != before and _zk_written(history):
        history = _isr_recorded(
            history, current.leader_epoch, event.broker, event.isr, event.origin
        )
        view = history.current_epoch
        assert view is not None
        history = history.with_epoch(replace(view, isr=event.isr))
        if event.partition_epoch is not None:
            written = replace(
                registration, isr=event.isr, partition_epoch=event.partition_epoch, zk_known=None
            )
        else:
            # (after an election whose version is not in evidence, none is)
            known = None
            if registration.partition_epoch >= 0:
                known = registration.zk_known or (registration.partition_epoch, before)
            written = replace(registration, isr=event.isr, zk_known=known)
        history = replace(history, registration=written)
    if event.under_min_isr is None:
        return history
    marks = tuple(m for m in history.under_min_marks if m[0] != event.broker)
    if event.under_min_isr:
        marks += ((event.broker, current.leader_epoch, event.origin.time, event.origin.source),)
    return replace(history, under_min_marks=marks)


def _alter_partition(history: History, event: AlterPartition) -> History:
    """A controller's answer confirming a leader's AlterPartition (kafka-formats
    1.8): the ISR it confirmed, for the epoch it names."""
    if event.error_code != ERROR_NONE or event.isr is None or event.leader_epoch is None:
        return history
    view = history.epoch(event.leader_epoch)
    leader = event.leader if event.leader is not None and event.leader >= 0 else event.broker
    if view is None or leader is None or view.leader != leader:
        return history
    registration = history.registration
    before = registration.isr if registration is not None else ()
    return _expanded(
        history,
        view.leader_epoch,
        leader,
        tuple(r for r in event.isr if r not in before),
        event.partition_epoch,
        event.origin,
    )


def _stale_leadership(
    history: History, broker: int, named: int | None
) -> tuple[int, datetime | None, Source, bool] | None:
    """If ``broker`` no longer leads the epoch it acts in: (that epoch, when
    its leadership ended, the record that ended it, whether a fence did). ``named`` is the epoch a
    follower's fetch named; a produce names none, so it acts in the epoch it
    last led."""
    if named is not None:
        view = history.epoch(named)
        if view is None or view.leader != broker:
            return None
    else:
        led = [v for v in history.epochs if v.leader == broker]
        if not led:
            return None
        view = led[-1]
    later = False
    for v in history.epochs:
        if later and v.leader != broker:
            return view.leader_epoch, v.began_at, v.began, False
        later = later or v is view
    fence = next((f for f in history.fences if f.broker == broker), None)
    if (
        fence is not None
        and fence.leader_epoch is not None
        and fence.leader_epoch >= view.leader_epoch
    ):
        return view.leader_epoch, fence.at, fence.source, True
    return None


def _acted(
    history: History, broker: int | None, named: int | None, act: Act, repeats: int = 0
) -> History:
    """Note an act of leadership by a broker that no longer led, when its
    clock puts it after the end (how far after is judged with the skew);
    ``repeats`` more like it came after it (a folded run's answers)."""
    if broker is None:
        return history
    stale = _stale_leadership(history, broker, named)
    if stale is None:
        return history
    epoch, ended_at, ended_by, by_fence = stale
    if ended_at is not None and act.at is not None and act.at <= ended_at:
        return history
    for i, s in enumerate(history.stale):
        if (s.broker, s.leader_epoch) == (broker, epoch):
            updated = replace(s, acts=s.acts.add(act, repeats))
            return replace(history, stale=history.stale[:i] + (updated,) + history.stale[i + 1 :])
    fresh = StaleLeadership(broker, epoch, ended_at, ended_by, by_fence=by_fence)
    fresh = replace(fresh, acts=fresh.acts.add(act, repeats))
    return replace(history, stale=history.stale + (fresh,))


def _acked_under_min_isr(
    history: History, leader: int, epoch: int, act: Act, ack_time: datetime | None
) -> History:
    """acks=all answered while the ISR was below min ISR (seed 003 2.6)."""
    registration = history.registration
    setting = history.effective_min_isr(leader)
    groups: list[UnderMinIsr] = []
    if (
        registration is not None
        and setting is not None
        and setting.value is not None
        and len(registration.isr) < setting.value
        and history.isr_changes
    ):
        # the record that took the ISR below min ISR, in this epoch
        index = len(history.isr_changes) - 1
        while (
            index > 0
            and history.isr_changes[index - 1].leader_epoch == epoch
            and len(history.isr_changes[index - 1].isr) < setting.value
        ):
            index -= 1
        change = history.isr_changes[index]
        groups.append(
            UnderMinIsr(
                leader,
                epoch,
                False,
                registration.isr,
                setting.value,
                setting.source,
                change.source,
                change.at,
                index,
            )
        )
    mark = next((m for m in history.under_min_marks if m[0] == leader and m[1] == epoch), None)
    # strictly later: within one millisecond the order of the broker's request
    # log and its server log is in no artefact
    if mark is not None and (mark[2] is None or ack_time is None or mark[2] < ack_time):
        groups.append(
            UnderMinIsr(
                leader,
                epoch,
                True,
                registration.isr if registration is not None else (),
                None if setting is None else setting.value,
                None if setting is None else setting.source,
                mark[3],
                mark[2],
                None,
            )
        )
    for group in groups:
        key = (group.leader, group.leader_epoch, group.marker, group.since)
        for i, u in enumerate(history.under_min_isr):
            if (u.leader, u.leader_epoch, u.marker, u.since) == key:
                updated = replace(u, acts=u.acts.add(act))
                history = replace(
                    history,
                    under_min_isr=history.under_min_isr[:i]
                    + (updated,)
                    + history.under_min_isr[i + 1 :],
                )
                break
        else:
            history = replace(
                history,
                under_min_isr=history.under_min_isr + (replace(group, acts=group.acts.add(act)),),
            )
    return history


# --- observations ---------------------------------------------------------------


def _epoch_in_force(history: History, named: int | None) -> int | None:
    if named is not None and named >= 0:
        return named
    current = history.current_epoch
    return None if current is None else current.leader_epoch


def _note_unknown_epoch(history: History, named: int | None, source: Source) -> History:
    current = history.current_epoch
    if named is not None and current is not None and named > current.leader_epoch:
        return history.with_gap(
            f"{source.source_file}:{source.line_no} names leader epoch {named}, which the "
            "metadata evidence does not reach"
        )
    return history


def _commit(
    history: History,
    epoch: int | None,
    value: int,
    source: Source,
    at: datetime | None = None,
) -> History:
    """Offsets below ``value`` were committed in ``epoch`` (exposed as its HWM)."""
    view = history.epoch(epoch)
    if view is None or (view.committed is not None and value <= view.committed):
        return history
    steps = (view.hwm_steps + (HwmStep(value, at, source),))[-HWM_STEPS_KEPT:]
    return history.with_epoch(
        replace(view, committed=value, committed_source=source, hwm_steps=steps)
    )


def _committed_in(history: History, epoch: int | None) -> tuple[int | None, Source | None]:
    view = history.epoch(epoch)
    return (None, None) if view is None else (view.committed, view.committed_source)


def _hold(history: History, broker: int, offset: int, source: Source) -> History:
    """The broker's log is known to have reached ``offset``."""
    log = history.replica(broker)
    if log.held is not None and offset <= log.held:
        return history
    return history.with_replica(broker, replace(log, held=offset, held_source=source))


def _follower_fetch(history: History, fetch: FollowerFetch) -> History:
    source = fetch.origin.source
    leader = fetch.origin.observer
    history = _note_unknown_epoch(history, fetch.current_leader_epoch, source)
    if history.restart_losses:
        history = _restart_loss_shown(history, fetch)
    history = _fetch_seen(history, leader, fetch)
    history = _log_end_seen(
        history,
        fetch.replica,
        fetch.fetch_offset,
        fetch.current_leader_epoch,
        fetch.last_fetched_epoch,
        fetch.origin,
    )
    history = _settle_divergences(
        history, fetch.replica, fetch.fetch_offset, fetch.last_fetched_epoch, source
    )
    # A follower holding data of the epoch it fetches in has that epoch's first
    # batch below its fetch offset: the epoch started before it.
    view = history.epoch(fetch.current_leader_epoch)
    if (
        view is not None
        and view.leader == leader
        and fetch.last_fetched_epoch == view.leader_epoch
        and fetch.fetch_offset > 0
    ):
        history = history.with_epoch(
            replace(view, start_offset=view.start_offset.at_most(fetch.fetch_offset - 1, source))
        )
    in_epoch = _epoch_in_force(history, fetch.current_leader_epoch)
    history = _epochless_top(history, leader, fetch, in_epoch)
    before = history.session(leader, fetch.replica)
    lowest = fetch.fetch_offset
    if before is not None and before.in_epoch == in_epoch and before.lowest is not None:
        lowest = min(lowest, before.lowest)
    history = history.with_session(
        leader,
        fetch.replica,
        Session(
            fetch_offset=fetch.fetch_offset,
            last_fetched_epoch=fetch.last_fetched_epoch,
            current_leader_epoch=fetch.current_leader_epoch,
            source=source,
            at=fetch.origin.time,
            in_epoch=in_epoch,
            lowest=lowest,
        ),
    )
    return _derive_leader_hw(history, leader, in_epoch)


def _epochless_top(
    history: History, leader: int | None, fetch: FollowerFetch, in_epoch: int | None
) -> History:
    """A fetch that names no epoch (before 0.11) still shows where the
    follower's newest data comes from: in the first epoch there is no other;
    and a follower whose fetch offset grew, in this epoch, from this leader
    holds that leader's records up to it, the epoch's lineage, which the
    epoch's mark judges (``properties._removed_committed``: data the
    replica got in the epoch in force). The epoch's start need not be known
    (0.10 prints it nowhere): whoever wrote them, the records it got are the
    leader's."""
    view = history.epoch(in_epoch)
    if fetch.last_fetched_epoch is not None or view is None or view.leader != leader:
        return history
    first = view.election == ElectionKind.INITIAL and history.epochs[0] is view
    previous = history.session(leader, fetch.replica)
    grew = (
        previous is not None
        and previous.in_epoch == view.leader_epoch
        and fetch.fetch_offset > previous.fetch_offset
    )
    if not (first and fetch.fetch_offset > 0) and not grew:
        return history
    log = history.replica(fetch.replica)
    if log.top_epoch is not None and log.top_epoch >= view.leader_epoch:
        return history
    return history.with_replica(fetch.replica, replace(log, top_epoch=view.leader_epoch))


def _derive_leader_hw(history: History, leader: int | None, in_epoch: int | None) -> History:
    """The leader's HW from its followers' fetch offsets (zk-hw; any epoch
    whose answers show no HWM).

    Seed 000 "When to update high watermark": the leader updates its HW when
    it processes a follower's fetch, after storing the follower's LEO (its
    fetch offset); seeds 004 and 001: to the minimum LEO of the ISR. The
    leader's own LEO is at least any fetch offset it answered. So once every
    ISR follower has fetched in this epoch, the leader's HW is at least the
    least of their latest fetch offsets. A lower bound, recorded apart from
    what answers showed (``EpochView.derived``); the properties say when it
    counts and that findings resting only on it are ``probable``."""
    view = history.epoch(in_epoch)
    registration = history.registration
    if (
        view is None
        or registration is None
        or leader is None
        or view.leader != leader
        or view is not history.current_epoch
        or view.first_exposure is not None  # answers show the HWM itself
        or leader not in registration.isr
    ):
        return history
    followers = [r for r in registration.isr if r != leader]
    if not followers:
        return history
    offsets: list[int] = []
    sources: list[Source] = []
    for follower in followers:
        session = history.session(leader, follower)
        if session is None or session.in_epoch != view.leader_epoch:
            return history
        offsets.append(session.fetch_offset)
        sources.append(session.source)
    low = min(offsets)
    if view.derived is not None and low <= view.derived:
        return history
    history = history.with_epoch(replace(view, derived=low, derived_sources=tuple(sources)))
    # its own log holds its HW (the least log end of the ISR, its own included)
    return _hold(history, leader, low, sources[-1])


def _log_end_seen(
    history: History,
    replica: int,
    offset: int,
    named_epoch: int | None,
    last_fetched_epoch: int | None,
    origin: Origin,
    explained: bool = False,
) -> History:
    """The evidence shows ``replica``'s log ending at ``offset``: below what it
    was known to hold, that is a truncation."""
    source = origin.source
    log = history.replica(replica)
    if log.held is not None and offset < log.held:
        epoch = _epoch_in_force(history, named_epoch)
        committed, committed_source = _committed_in(history, epoch)
        view = history.epoch(epoch)
        cause = _divergence_resolved_by(history, replica, offset)
        if cause is not None:
            # Kafka truncated when it read the diverging answer, not when it
            # next fetched: judge against what was committed then.
            committed = cause.epoch_committed
            committed_source = None
        history = replace(
            history,
            truncations=history.truncations
            + (
                Truncation(
                    replica=replica,
                    from_offset=log.held,
                    to_offset=offset,
                    leader_epoch=epoch,
                    top_epoch=log.top_epoch,
                    epoch_committed=committed,
                    epoch_committed_source=committed_source,
                    epoch_derived=None if cause is not None or view is None else view.derived,
                    epoch_derived_sources=()
                    if cause is not None or view is None
                    else view.derived_sources,
                    before=log.held_source,
                    after=source,
                    at=origin.time,
                    answered=cause is not None or explained,
                ),
            ),
        )
        held: int = offset
        held_source: Source | None = source
    elif log.held is None or offset >= log.held:
        # the newest line showing the replica at its end is the best evidence
        held, held_source = offset, source
    else:
        held, held_source = log.held, log.held_source
    return history.with_replica(
        replica,
        replace(
            log,
            leo=offset,
            held=held,
            held_source=held_source,
            last_fetched_epoch=last_fetched_epoch
            if last_fetched_epoch is not None
            else log.last_fetched_epoch,
            leo_source=source,
            top_epoch=(
                last_fetched_epoch
                if last_fetched_epoch is not None and last_fetched_epoch >= 0
                else log.top_epoch
            ),
        ),
    )


def _divergence_resolved_by(history: History, replica: int, offset: int) -> Divergence | None:
    for d in reversed(history.divergences):
        if (
            d.replica == replica
            and d.resolved_by is None
            and d.persisted_by is None
            and offset <= d.end_offset
        ):
            return d
    return None


def _settle_divergences(
    history: History,
    replica: int,
    offset: int,
    last_fetched_epoch: int | None,
    source: Source,
) -> History:
    changed = False
    settled: list[Divergence] = []
    for d in history.divergences:
        if d.replica != replica or d.resolved_by or d.persisted_by:
            settled.append(d)
            continue
        if offset <= d.end_offset:
            d = replace(d, resolved_by=source)
            changed = True
        elif (
            last_fetched_epoch is not None
            and last_fetched_epoch == d.follower_last_fetched_epoch
            and offset >= d.follower_leo
        ):
            # Fetching on from the same epoch past the divergence point: the
            # follower kept the diverging suffix.
            d = replace(d, persisted_by=source)
            changed = True
        settled.append(d)
    return replace(history, divergences=tuple(settled)) if changed else history


def _learn_start_offset(
    history: History,
    leader: int | None,
    named_epoch: int | None,
    asked_epoch: int | None,
    answered_epoch: int,
    end_offset: int,
    source: Source,
) -> History:
    """A leader said: in my log, epoch ``answered_epoch`` ends at ``end_offset``.

    For the epoch E it leads, when the follower asked about the newest epoch
    before E that had a leader (or the answer is the leader's own last epoch
    before E), that end is where E began: Kafka appends (E, LEO) to the
    leader's epoch cache when it becomes leader (seed 000, "Epoch concept";
    KIP-101). Otherwise it is a floor.
    """
    view = history.epoch(named_epoch)
    if view is None or view.leader != leader or answered_epoch >= view.leader_epoch:
        return history
    # Epochs that began with no leader hold no data, so the newest epoch the
    # leader's cache can hold below E is the newest earlier epoch that had one.
    led_before = [
        e.leader_epoch
        for e in history.epochs
        if e.leader_epoch < view.leader_epoch and e.leader >= 0
    ]
    newest_led = max(led_before) if led_before else None
    # The leader's cache holds the epochs of the data it fetched and every
    # epoch it led (it appends (E, LEO) on becoming leader, data or not).
    own = [
        e.leader_epoch
        for e in history.epochs
        if e.leader == leader and e.leader_epoch < view.leader_epoch
    ]
    if view.leader_last_fetched_epoch is not None:
        own.append(view.leader_last_fetched_epoch)
    asked_newest = asked_epoch is not None and newest_led is not None and asked_epoch >= newest_led
    exact = asked_newest or (
        view.leader_last_fetched_epoch is not None and answered_epoch == max(own)
    )
    bound = (
        view.start_offset.pin(end_offset, source)
        if exact
        else view.start_offset.at_least(end_offset, source)
    )
    return history.with_epoch(replace(view, start_offset=bound))


def _diverge(
    history: History,
    leader: int | None,
    follower: int,
    answered_epoch: int,
    end_offset: int,
    source: Source,
    origin: Origin,
) -> History:
    session = history.session(leader, follower)
    if session is None:
        return history
    history = _learn_start_offset(
        history,
        leader,
        _epoch_in_force(history, session.current_leader_epoch),
        session.last_fetched_epoch,
        answered_epoch,
        end_offset,
        source,
    )
    if end_offset >= session.fetch_offset:
        return history
    divergence = Divergence(
        replica=follower,
        leader=leader,
        leader_epoch=_epoch_in_force(history, session.current_leader_epoch),
        diverging_epoch=answered_epoch,
        end_offset=end_offset,
        follower_leo=session.fetch_offset,
        follower_last_fetched_epoch=session.last_fetched_epoch,
        epoch_committed=_committed_in(
            history, _epoch_in_force(history, session.current_leader_epoch)
        )[0],
        request=session.source,
        answer=source,
        at=origin.time,
    )
    return replace(history, divergences=history.divergences + (divergence,))


def _fetch_answer(history: History, answer: FetchAnswer) -> History:
    if answer.error_code != ERROR_NONE:
        return history
    source = answer.origin.source
    leader = answer.origin.observer
    session = history.session(leader, answer.replica)
    named = None if session is None else session.current_leader_epoch
    if named is not None and named >= 0:
        history = _acted(history, leader, named, Act(answer.origin.time, source), answer.folded)
    if answer.hwm is not None and answer.hwm >= 0:
        epoch = _epoch_in_force(history, named)
        registration = history.registration
        exposure = Exposure(
            leader=leader,
            leader_epoch=epoch,
            hwm=answer.hwm,
            source=source,
            at=answer.origin.time,
            sole_isr=registration is not None
            and leader is not None
            and registration.isr == (leader,),
        )
        view = history.epoch(epoch)
        if view is not None and view.leader == leader:
            if view.first_exposure is None:
                view = replace(view, first_exposure=exposure)
            if exposure.sole_isr and view.first_sole_exposure is None:
                view = replace(view, first_sole_exposure=exposure)
            history = history.with_epoch(view)
        history = _commit(history, epoch, answer.hwm, source, answer.origin.time)
        if leader is not None:
            # A leader's HWM never exceeds its own log end, and its log holds
            # no data of an epoch after the one it leads.
            history = _hold(history, leader, answer.hwm, source)
            log = history.replica(leader)
            if epoch is not None and (log.top_epoch is None or log.top_epoch < epoch):
                history = history.with_replica(leader, replace(log, top_epoch=epoch))
    if (
        answer.diverging_epoch is not None
        and answer.diverging_epoch >= 0
        and answer.diverging_end_offset is not None
        and answer.diverging_end_offset >= 0
    ):
        history = _diverge(
            history,
            leader,
            answer.replica,
            answer.diverging_epoch,
            answer.diverging_end_offset,
            source,
            answer.origin,
        )
    return history


def _produce_ack(history: History, ack: ProduceAck) -> History:
    if ack.error_code != ERROR_NONE or ack.base_offset is None or ack.base_offset < 0:
        return history
    source = ack.origin.source
    leader = ack.origin.observer
    current = history.current_epoch
    epoch = current.leader_epoch if current is not None and current.leader == leader else None
    act = Act(ack.origin.time, source, ack.base_offset, ack.acks)
    history = _acted(history, leader, None, act)
    if ack.acks == ACKS_ALL and leader is not None and epoch is not None:
        history = _acked_under_min_isr(history, leader, epoch, act, ack.origin.time)
    if leader is not None:
        history = _hold(history, leader, ack.base_offset + 1, source)
        if epoch is not None:
            log = history.replica(leader)
            if log.top_epoch is None or log.top_epoch < epoch:
                history = history.with_replica(leader, replace(log, top_epoch=epoch))
    if current is not None and epoch is not None:
        # Written in this epoch, so the epoch began at or below it.
        lowest = current.lowest_write
        history = history.with_epoch(
            replace(
                current,
                start_offset=current.start_offset.at_most(ack.base_offset, source),
                lowest_write=ack.base_offset if lowest is None else min(lowest, ack.base_offset),
                first_write_at=_earliest(current.first_write_at, ack.origin.time),
            )
        )
    if ack.acks == ACKS_ALL:
        # acks=all is answered only once the HWM passed the batch (seed 003
        # 2.7); the log shows the batch's size in bytes, not its record count,
        # so base + 1 is what the evidence fixes.
        history = _commit(history, epoch, ack.base_offset + 1, source, ack.origin.time)
        view = history.epoch(epoch)
        if view is not None:
            acked = view.acked + (
                AckedProduce(leader, epoch, ack.client_id, ack.base_offset, source),
            )
            dropped_hi = view.acked_dropped_hi
            if len(acked) > 2 * ACKED_KEPT:  # trimmed in halves: appends stay cheap
                dropped = max(a.base_offset for a in acked[:-ACKED_KEPT])
                dropped_hi = dropped if dropped_hi is None else max(dropped_hi, dropped)
                acked = acked[-ACKED_KEPT:]
            history = history.with_epoch(replace(view, acked=acked, acked_dropped_hi=dropped_hi))
    return history


def _epoch_answer(history: History, answer: EpochAnswer) -> History:
    if (
        answer.error_code != ERROR_NONE
        or answer.replica is None
        or answer.leader_epoch is None
        or answer.leader_epoch < 0
        or answer.end_offset is None
        or answer.end_offset < 0
    ):
        return history
    return _diverge(
        history,
        answer.origin.observer,
        answer.replica,
        answer.leader_epoch,
        answer.end_offset,
        answer.origin.source,
        answer.origin,
    )


# --- broker logs and checkpoint files ------------------------------------------------


def _become_leader(history: History, event: BecomeLeader) -> History:
    """Partition.makeLeader's line: "from offset X" is the leader's log end,
    the start offset of its epoch (kafka-formats.md 5.5)."""
    source = event.origin.source
    history = _note_unknown_epoch(history, event.leader_epoch, source)
    if event.hwm is not None and event.hwm >= 0:
        history = _commit(history, event.leader_epoch, event.hwm, source, event.origin.time)
    if event.start_offset is None or event.start_offset < 0:
        return history
    view = history.epoch(event.leader_epoch)
    if view is None and history.epochs and event.leader_epoch < history.epochs[0].leader_epoch:
        # It led an epoch older than the lineage in evidence (a ticket's
        # excerpts begin later): its data is of that epoch or older, so the
        # known epochs after it are the ones that could rewrite it.
        log = history.replica(event.broker)
        if log.top_epoch is None or log.top_epoch < event.leader_epoch:
            history = history.with_replica(event.broker, replace(log, top_epoch=event.leader_epoch))
        return history
    if view is not None and view.leader == event.broker:
        view = replace(view, start_offset=view.start_offset.pin(event.start_offset, source))
        if event.hwm is not None and event.hwm >= 0 and view.start_exposure is None:
            view = replace(
                view,
                start_exposure=Exposure(
                    leader=event.broker,
                    leader_epoch=event.leader_epoch,
                    hwm=event.hwm,
                    source=source,
                    at=event.origin.time,
                    sole_isr=False,
                ),
            )
        history = history.with_epoch(view)
        # A leader that comes back with less than it had (an unclean
        # shutdown) lost it as the epoch's leader: committed_data_loss reports
        # that with this start offset, so its log end is reset, not judged as
        # a truncation.
        log = history.replica(event.broker)
        history = history.with_replica(
            event.broker, replace(log, held=event.start_offset, held_source=source)
        )
    return history


def _become_follower(history: History, event: BecomeFollower) -> History:
    """``Follower tp starts at leader epoch E from offset X``: a broker knows
    epoch E, and its log reached X. Its HWM was exposed by a leader of epoch
    E or earlier; it counts for E, since a follower restarting mid-epoch logs
    this line too. A loss it shows (an unclean shutdown) is
    not judged here but when the follower next fetches, in the epoch it
    fetches in; a higher log end is kept, so a later truncation line has its
    starting point."""
    source = event.origin.source
    history = _note_unknown_epoch(history, event.leader_epoch, source)
    if event.hwm is not None and event.hwm >= 0:
        history = _commit(
            history,
            _follower_hw_epoch(history, event.leader_epoch, event.hwm, event.broker),
            event.hwm,
            source,
            event.origin.time,
        )
    if event.log_end is None or event.log_end < 0:
        return history
    return _hold(history, event.broker, event.log_end, source)


def _follower_hw_epoch(
    history: History, named: int | None, hwm: int, follower: int | None = None
) -> int | None:
    """The epoch whose leader exposed a follower's HW. A follower keeps the
    HW it last had when it starts following the leader of epoch E, so after
    an unclean election that HW is the previous leader's, which the new one
    never had (it began below it): it counts for the epoch before E, not for
    E, unless E's own leader already exposed as much, or the follower's
    fetches from E's leader in E (already folded) show its log ending below
    the HW: a HW never exceeds its log end, so the one it carried over was
    lower, and this one came from E's leader.

    So, too, after an election from the ELR whose leader began E below the
    HW (its start offset at most lower): a leader that lost records in an
    unclean shutdown and was elected anyway (KIP-966's rule broken) never
    had it either. (Only there: a clean election's leader held the HW, and
    an order of lines within the clock skew that puts its start below one
    is not evidence that it did not.)"""
    view = history.epoch(named)
    if view is None:
        return named
    began_below = (
        view.election == ElectionKind.ELR
        and view.start_offset.hi is not None
        and view.start_offset.hi < hwm
    )
    if (
        view.election not in (ElectionKind.UNCLEAN, ElectionKind.UNCLEAN_RECOVERY)
        and not began_below
    ):
        return named
    if view.committed is not None and hwm <= view.committed:
        return named
    session = None if follower is None else history.session(view.leader, follower)
    if (
        session is not None
        and session.in_epoch == view.leader_epoch
        and session.lowest is not None
        and session.lowest < hwm
    ):
        return named
    earlier = [e.leader_epoch for e in history.epochs if e.leader_epoch < view.leader_epoch]
    return max(earlier) if earlier else named


def _log_truncated(history: History, event: LogTruncated) -> History:
    """The broker's own word that its log now ends at ``to_offset``."""
    if event.to_offset < 0:
        return history
    explained = event.diverging_epoch is not None and event.diverging_end_offset is not None
    history = _log_end_seen(
        history, event.broker, event.to_offset, None, None, event.origin, explained=explained
    )
    return _settle_divergences(history, event.broker, event.to_offset, None, event.origin.source)


def _epoch_checkpoint(history: History, event: EpochCheckpoint) -> History:
    """A leader-epoch-checkpoint entry (epoch, start offset). The leader of
    that epoch wrote it when it became leader: its start offset exactly. Any
    other replica's first batch of the epoch lies at or above it."""
    view = history.epoch(event.leader_epoch)
    if view is None or event.start_offset < 0:
        return history
    source = event.origin.source
    bound = (
        view.start_offset.pin(event.start_offset, source)
        if view.leader == event.broker
        else view.start_offset.at_most(event.start_offset, source)
    )
    return history.with_epoch(replace(view, start_offset=bound))


# --- ZooKeeper era ------------------------------------------------------------


def _zk_election(event: LeaderAndIsr, isr_before: tuple[int, ...]) -> ElectionKind:
    if event.leader == NO_LEADER:
        return ElectionKind.OFFLINE
    if event.leader_recovery_state == RECOVERING or event.leader not in isr_before:
        return ElectionKind.UNCLEAN
    return ElectionKind.CLEAN


def _zk_isr_read(
    known: tuple[int, tuple[int, ...]], zk_version: int, written: tuple[int, ...]
) -> tuple[int, ...]:
    """The ISR a ZooKeeper controller's decision of zkVersion ``zk_version``
    was made from. Every write of the partition's state znode (a controller's
    decision, a leader's own ISR write) is a conditional update that adds one
    to its version: a decision one version above the last state whose version
    is in evidence (``known``) was made from that state, so the leader's ISR
    writes printed since did not land. Otherwise the latest write stands."""
    version, isr = known
    return isr if zk_version == version + 1 else written


def _zk_version_shown(history: History, event: LeaderAndIsr) -> History:
    """A copy of the current epoch's decision that states its zkVersion (the
    broker's ``received LeaderAndIsr request PartitionState(...)``) after a
    copy that did not (the controller's line): the election is judged again
    from the ISR the version shows it was made from."""
    registration, current = history.registration, history.current_epoch
    if registration is None or registration.partition_epoch >= 0 or current is None:
        return history
    known = registration.zk_known
    if known is None or event.partition_epoch is None:
        return history
    history = replace(
        history,
        registration=replace(registration, partition_epoch=event.partition_epoch, zk_known=None),
    )
    if current.began_at is None or current.election not in (
        ElectionKind.CLEAN,
        ElectionKind.UNCLEAN,
    ):
        return history
    isr_before = _zk_isr_read(known, event.partition_epoch, current.isr_before)
    if isr_before == current.isr_before:
        return history
    election = _zk_election(event, isr_before)
    return history.with_epoch(replace(current, isr_before=isr_before, election=election))


def _controller_change(history: History, event: ControllerChange) -> History:
    """A KRaft controller's printed change, as the two states it names: the
    one it changed (a decision already folded when the previous change ended
    in it) and the one it made, each a whole partition state like a
    ZooKeeper controller's decision. The election is judged from the ISR the
    line says it replaced (kafka-formats.md 2.6: UNCLEAN when the new leader
    was not in it), not from whatever ISR the replay last knew."""
    origin = event.origin
    before = LeaderAndIsr(
        origin,
        event.leader_before,
        event.leader_epoch_before,
        event.isr_before,
        event.partition_epoch_before,
    )
    current = history.current_epoch
    if current is None or current.leader_epoch < event.leader_epoch_before:
        history = _leader_and_isr(history, before)
    else:
        registration = history.registration
        if registration is not None and current.leader_epoch == event.leader_epoch_before:
            history = replace(history, registration=replace(registration, isr=event.isr_before))
    after = LeaderAndIsr(
        origin,
        event.leader,
        event.leader_epoch,
        event.isr,
        event.partition_epoch,
        event.leader_recovery_state,
    )
    return _leader_and_isr(history, after)


def _partition_offline(history: History, event: PartitionOffline) -> History:
    """Remember that the controller took the partition offline in the
    current epoch (``_leader_and_isr`` reads it at the next decision)."""
    current = history.current_epoch
    if current is None or event.after_epoch != current.leader_epoch:
        return history
    return replace(history, offline=(current.leader_epoch, event.origin))


def _leader_and_isr(history: History, event: LeaderAndIsr) -> History:
    """A ZooKeeper controller's decision carries the partition's whole state:
    a new leader epoch is an election; the same epoch, an ISR change. An
    election whose leader was outside the previous ISR is unclean (seed 004:
    only ISR members are eligible unless unclean.leader.election.enable;
    kafka-formats.md 5.6: 3.2+ marks such a leader RECOVERING)."""
    before = history.registration
    current = history.current_epoch
    replicas = before.replicas if before is not None else ()
    after = PartitionRegistration(
        replicas=replicas,
        isr=event.isr,
        leader=event.leader,
        leader_epoch=event.leader_epoch,
        partition_epoch=event.partition_epoch if event.partition_epoch is not None else -1,
        leader_recovery_state=event.leader_recovery_state or RECOVERED,
    )
    if current is not None and event.leader_epoch <= current.leader_epoch:
        if event.leader_epoch == current.leader_epoch:
            history = _zk_version_shown(history, event)
            current = history.current_epoch
            assert current is not None
            if before is None or event.isr != before.isr:
                history = _isr_recorded(
                    history, event.leader_epoch, event.leader, event.isr, event.origin
                )
            history = _expanded(
                history,
                event.leader_epoch,
                event.leader,
                tuple(r for r in event.isr if before is None or r not in before.isr),
                event.partition_epoch,
                event.origin,
            )
            history = history.with_epoch(replace(current, isr=event.isr))
            return replace(history, registration=after)
        return history  # an older decision repeated late: nothing new
    if current is None:
        fresh = event.leader_epoch == 0
        election = ElectionKind.INITIAL if fresh else ElectionKind.UNKNOWN
        isr_before: tuple[int, ...] = ()
        start = Bound().pin(0, event.origin.source) if fresh else Bound()
    else:
        offline = history.offline
        if (
            event.leader_epoch == current.leader_epoch + 2
            and offline is not None
            and offline[0] == current.leader_epoch
            and before is not None
            and before.leader != NO_LEADER
        ):
            # The one missing epoch is the one the controller wrote when it
            # took the dead leader out of the ISR (formats-addendum.md 9.2):
            # no leader, the ISR without it unless it was the last member.
            # Any leader the controller elected after would have its own
            # line.
            isr = tuple(r for r in before.isr if r != before.leader) or before.isr
            history = _leader_and_isr(
                history,
                LeaderAndIsr(
                    offline[1], NO_LEADER, current.leader_epoch + 1, isr,
                    controller_epoch=event.controller_epoch,
                ),
            )  # fmt: skip
            return _leader_and_isr(history, event)
        if event.leader_epoch > current.leader_epoch + 1:
            whose = (
                # a KRaft controller prints a clean change at DEBUG only
                "the KRaft controller's printed partition changes"
                if "controller_log" in history.evidence_kinds
                else "the ZooKeeper controller's evidence"
            )
            history = history.with_gap(
                f"leader epochs {current.leader_epoch + 1}..{event.leader_epoch - 1} are missing "
                f"from {whose}"
            )
        isr_before = before.isr if before is not None else ()
        known = before.zk_known if before is not None else None
        if known is not None and event.partition_epoch is not None:
            isr_before = _zk_isr_read(known, event.partition_epoch, isr_before)
            known = None
        after = replace(after, zk_known=known)
        election = _zk_election(event, isr_before)
        start = Bound()
    new_leader_log = history.replica(event.leader)
    view = EpochView(
        leader_epoch=event.leader_epoch,
        leader=event.leader,
        election=election,
        partition_epoch=event.partition_epoch,
        isr_before=isr_before,
        isr=event.isr,
        elr=(),
        began=event.origin.source,
        began_at=event.origin.time,
        metadata_offset=None,
        leader_last_fetched_epoch=new_leader_log.last_fetched_epoch,
        start_offset=start,
        leader_log_end=new_leader_log.held,
    )
    history = _isr_recorded(history, event.leader_epoch, event.leader, event.isr, event.origin)
    return _end_current_epoch(history, event.origin, after, view)


# --- what clients were shown (formats-addendum.md 11) -----------------------------


def _client_hwm(history: History, event: ClientHwm) -> History:
    """A consumer's Fetch answer or a ListOffsets LATEST answer: the HWM the
    answering broker exposed to a client. From the leader of the epoch, it
    is that leader's exposure, like a fetch answer's; from any other broker
    (a follower serving reads, KIP-392) it is a HW no higher than its
    leader's, so committed all the same, and held in its log."""
    if event.error_code != ERROR_NONE or event.hwm is None or event.hwm < 0:
        return history
    broker = event.origin.observer
    if broker is None:
        return history
    source = event.origin.source
    named = event.leader_epoch
    if named is not None and named < 0:
        named = None
    view = history.epoch(named) if named is not None else history.current_epoch
    if view is None:
        return _hold(history, broker, event.hwm, source)
    epoch: int | None = view.leader_epoch
    if view.leader == broker:
        registration = history.registration
        exposure = Exposure(
            leader=broker,
            leader_epoch=epoch,
            hwm=event.hwm,
            source=source,
            at=event.origin.time,
            sole_isr=registration is not None and registration.isr == (broker,),
        )
        if view.first_exposure is None:
            view = replace(view, first_exposure=exposure)
        if exposure.sole_isr and view.first_sole_exposure is None:
            view = replace(view, first_sole_exposure=exposure)
        history = history.with_epoch(view)
        log = history.replica(broker)
        if log.top_epoch is None or log.top_epoch < view.leader_epoch:
            history = history.with_replica(broker, replace(log, top_epoch=view.leader_epoch))
    else:
        # another broker's HW, as a follower's line: from before an unclean
        # election it is the previous leader's
        epoch = _follower_hw_epoch(history, epoch, event.hwm, broker)
    history = _commit(history, epoch, event.hwm, source, event.origin.time)
    return _hold(history, broker, event.hwm, source)


def _client_epoch_answer(history: History, event: ClientEpochAnswer) -> History:
    """A consumer's OffsetsForLeaderEpoch answer: the answering broker's log
    reaches the end offset it gave."""
    broker = event.origin.observer
    if (
        event.error_code != ERROR_NONE
        or broker is None
        or event.end_offset is None
        or event.end_offset < 0
    ):
        return history
    return _hold(history, broker, event.end_offset, event.origin.source)


def _client_position(history: History, event: ClientPosition) -> History:
    """A consumer's position on a broker whose line prints no answer (before
    1.0). A leader hands a consumer only records below its HWM (seed 000;
    formats-addendum.md 11.1), and a consumer moves its position past the
    records it was handed. So when the same client's position on the same
    broker moves from X to Y > X while that broker leads the same epoch, the
    answer between showed an HWM of at least Y: offsets below Y were
    committed in that epoch, and the leader's log held them. One position
    alone proves nothing (a consumer may seek, and a fetch above the HWM is
    answered empty); neither does an advance across a change of epoch (the
    records may have come from another leader in between)."""
    broker = event.origin.observer
    offset = event.fetch_offset
    if broker is None or offset is None or offset < 0:
        return history
    view = history.current_epoch
    epoch = view.leader_epoch if view is not None and view.leader == broker else None
    source = event.origin.source
    last = next(
        (p for p in history.positions if p.broker == broker and p.client_id == event.client_id),
        None,
    )
    seen = PositionSeen(broker, event.client_id, offset, epoch, source)
    history = replace(
        history, positions=tuple(p for p in history.positions if p is not last) + (seen,)
    )
    if last is None or epoch is None or last.leader_epoch != epoch or offset <= last.offset:
        return history
    history = _commit(history, epoch, offset, source, event.origin.time)
    return _hold(history, broker, offset, source)


# --- a broker coming back (formats-addendum.md 10) -------------------------------


def _unclean_restart(history: History, broker: int) -> UncleanRestart | None:
    return next((u for u in history.unclean_restarts if u.broker == broker), None)


def _with_unclean_restart(history: History, broker: int, restart: UncleanRestart | None) -> History:
    rest = tuple(u for u in history.unclean_restarts if u.broker != broker)
    return replace(history, unclean_restarts=rest + ((restart,) if restart is not None else ()))


def _leader_restarted(history: History, broker: int) -> History:
    """Note on every epoch ``broker`` led so far that it restarted since."""
    for view in history.epochs:
        if view.leader == broker and not view.leader_restarted:
            history = history.with_epoch(replace(view, leader_restarted=True))
    return history


def _broker_restart(history: History, event: BrokerRestart) -> History:
    """A broker started. A clean shutdown ends any earlier unclean state; an
    unclean one, or one its version does not describe, opens one."""
    history = _leader_restarted(history, event.broker)
    if event.clean is True:
        history = _without_elr_registration(history, event.broker)
        return _with_unclean_restart(history, event.broker, None)
    restart = UncleanRestart(event.broker, event.clean, event.origin.source, event.origin.time)
    return _opened(history, restart)


def _log_recovered(history: History, event: LogRecovered) -> History:
    """Recovering an unflushed segment: the shutdown was not clean."""
    restart = _unclean_restart(history, event.broker)
    if restart is None:
        return _opened(
            history, UncleanRestart(event.broker, False, event.origin.source, event.origin.time)
        )
    if restart.clean is not False:
        restart = replace(restart, clean=False)
    return _with_unclean_restart(history, event.broker, restart)


def _opened(history: History, restart: UncleanRestart) -> History:
    """An unclean (or unknown) restart begins. A KRaft broker registers before
    it loads its logs (the clean-shutdown file it reads first is what tells
    the controller, KIP-966), so a registration of this broker still waiting
    for its unfence is this restart's: if it left the broker in the ELR, the
    restart was kept there (``_registered_after_restart`` in the other
    order)."""
    pending = next((r for r in history.elr_registrations if r[0] == restart.broker), None)
    if pending is not None:
        history = _without_elr_registration(history, restart.broker)
        registration = history.registration
        if registration is not None and restart.broker in registration.elr:
            restart = replace(restart, kept=(pending[1], pending[2]))
    return _with_unclean_restart(history, restart.broker, restart)


def _without_elr_registration(history: History, broker: int) -> History:
    if not any(r[0] == broker for r in history.elr_registrations):
        return history
    rest = tuple(r for r in history.elr_registrations if r[0] != broker)
    return replace(history, elr_registrations=rest)


def _loaded(history: History, broker: int, log_end: int, origin: Origin) -> History:
    """The log end a replica came back with (after recovery cut it, or as
    loaded): its LEO at the restart. Below what it held, that is a crash
    loss: measured against the committed mark now, at the restart that shows
    it, and judged as a truncation when the replica next fetches as a
    follower (``_restart_loss_shown``)."""
    if log_end < 0:
        return history
    log = history.replica(broker)
    if log.held is not None and log_end < log.held:
        current = history.current_epoch
        committed, committed_source = _committed_in(
            history, None if current is None else current.leader_epoch
        )
        loss = RestartLoss(
            replica=broker,
            from_offset=log.held,
            to_offset=log_end,
            top_epoch=log.top_epoch,
            committed=committed,
            committed_source=committed_source,
            before=log.held_source,
            after=origin.source,
            at=origin.time,
        )
        others = tuple(x for x in history.restart_losses if x.replica != broker)
        history = replace(history, restart_losses=others + (loss,))
        history = history.with_replica(
            broker,
            replace(
                log,
                leo=log_end,
                leo_source=origin.source,
                held=log_end,
                held_source=origin.source,
            ),
        )
    else:
        history = _log_end_seen(history, broker, log_end, None, None, origin)
    restart = _unclean_restart(history, broker)
    if restart is not None:
        restart = replace(restart, log_end=log_end, log_end_source=origin.source)
        history = _with_unclean_restart(history, broker, restart)
    history = _leader_restarted(history, broker)
    for view in history.epochs:
        if origin.time is None:
            break  # a pasted excerpt may leave lines out (``start_floor``)
        if view.leader == broker and view.leader_reloaded is None:
            history = history.with_epoch(
                replace(view, leader_reloaded=log_end, leader_reloaded_source=origin.source)
            )
    return history


def _registered_after_restart(history: History, broker: int, origin: Origin) -> History:
    """An unclean replica registered again: KIP-966 takes it out of every ELR
    (into LastKnownELR) in the records that follow its registration. Whether
    the controller did is decided when it is unfenced or elected."""
    restart = _unclean_restart(history, broker)
    registration = history.registration
    current = history.current_epoch
    if registration is None or current is None or broker not in registration.elr:
        return _without_elr_registration(history, broker)
    if restart is None:
        # its startup lines may follow (``_opened``)
        history = _without_elr_registration(history, broker)
        entry = (broker, current.leader_epoch, origin.source)
        return replace(history, elr_registrations=history.elr_registrations + (entry,))
    kept = (current.leader_epoch, origin.source)
    return _with_unclean_restart(history, broker, replace(restart, kept=kept))


def _exclusion(
    history: History, restart: UncleanRestart, how: str, epoch: int, origin: Origin
) -> History:
    view = history.epoch(epoch)
    if how == "elected":
        committed = _committed_before(history, epoch)
    else:
        in_epoch = None if view is None else view.committed
        committed = max(
            (v for v in (_committed_before(history, epoch), in_epoch) if v is not None),
            default=None,
        )
    sources = tuple(
        s
        for s in (restart.source, restart.log_end_source, restart.kept and restart.kept[1])
        if s is not None
    ) + (origin.source,)
    exclusion = Exclusion(
        broker=restart.broker,
        how=how,
        leader_epoch=epoch,
        clean=restart.clean,
        log_end=restart.log_end,
        committed=committed,
        sources=tuple(dict.fromkeys(sources)),
        at=origin.time,
    )
    history = replace(history, exclusions=history.exclusions + (exclusion,))
    return _with_unclean_restart(history, restart.broker, None)


def _committed_before(history: History, epoch: int) -> int | None:
    """The highest HWM exposed in any epoch before ``epoch`` (what the
    transitions know; the properties measure against the lineage's mark)."""
    values = [
        v.committed for v in history.epochs if v.leader_epoch < epoch and v.committed is not None
    ]
    return max(values) if values else None


def _kept_when_unfenced(history: History, broker: int, origin: Origin) -> History:
    restart = _unclean_restart(history, broker)
    registration = history.registration
    if restart is None or restart.kept is None or registration is None:
        return history
    if broker not in registration.elr:
        return _with_unclean_restart(history, broker, replace(restart, kept=None))
    return _exclusion(history, restart, "elr", restart.kept[0], origin)


def _unclean_members(
    history: History,
    isr_before: tuple[int, ...],
    after: PartitionRegistration,
    view: EpochView | None,
    origin: Origin,
) -> History:
    """Unclean replicas in a partition change: elected by a clean (or ELR)
    election before catching up, or still kept in the ELR their registration
    left them in, break Unclean Exclusion; taken into the ISR, or elected
    uncleanly (its own finding), they are no longer this rule's concern (one
    that stayed in the ISR through its restart has not re-joined it)."""
    for restart in history.unclean_restarts:
        broker = restart.broker
        if view is not None and view.leader == broker:
            if view.election in (ElectionKind.UNCLEAN, ElectionKind.UNCLEAN_RECOVERY):
                history = _with_unclean_restart(history, broker, None)
            elif restart.kept is not None:
                history = _exclusion(history, restart, "elr", restart.kept[0], origin)
            else:
                history = _exclusion(history, restart, "elected", view.leader_epoch, origin)
            continue
        if broker in after.isr and broker not in isr_before:
            # it joined the ISR: its leader found it caught up
            history = _with_unclean_restart(history, broker, None)
        elif restart.kept is not None and broker not in after.elr:
            # the controller took it out of the ELR, as KIP-966 says
            history = _with_unclean_restart(history, broker, replace(restart, kept=None))
    return history


# --- configs ----------------------------------------------------------------------


def _unclean_setting(history: History, setting: ConfigSetting) -> History:
    rest = tuple(
        c for c in history.unclean_config if (c.scope, c.broker) != (setting.scope, setting.broker)
    )
    return replace(history, unclean_config=rest + (setting,))


def _min_isr_setting(history: History, setting: MinIsrSetting) -> History:
    rest = tuple(
        m for m in history.min_isr if (m.scope, m.broker) != (setting.scope, setting.broker)
    )
    return replace(history, min_isr=rest + (setting,))


def _broker_config(history: History, event: BrokerConfig) -> History:
    """``KafkaConfig values:``: a broker's static settings, below any dynamic
    one the metadata states (``History.effective_min_isr``)."""
    source = event.origin.source
    if event.min_isr is not None and event.min_isr > 0:
        history = _min_isr_setting(
            history, MinIsrSetting("static", event.broker, event.min_isr, source)
        )
    if event.unclean_election_enabled is not None:
        history = _unclean_setting(
            history,
            ConfigSetting("static", event.broker, event.unclean_election_enabled, source),
        )
    return history


def _topic_config(history: History, event: TopicConfig) -> History:
    """A describe header's topic configs (the topic's own overrides)."""
    source = event.origin.source
    if event.min_isr is not None and event.min_isr > 0:
        history = _min_isr_setting(history, MinIsrSetting("topic", None, event.min_isr, source))
    if event.unclean_election_enabled is not None:
        history = _unclean_setting(
            history, ConfigSetting("topic", None, event.unclean_election_enabled, source)
        )
    return history


# --- pre-2.8 fetcher lines (formats-addendum.md 9.6) --------------------------------


def _fetcher_halt(history: History, event: FetcherHalt) -> History:
    """A follower halted rather than truncate below its leader: both log ends
    are the broker's own word."""
    source = event.origin.source
    if event.log_end is not None and event.log_end >= 0:
        history = _hold(history, event.broker, event.log_end, source)
    if event.leader is not None and event.leader_log_end is not None and event.leader_log_end >= 0:
        history = _hold(history, event.leader, event.leader_log_end, source)
    return history


def _offset_reset(history: History, event: OffsetReset) -> History:
    """A follower reset its fetch offset: its log now ends there (below what
    it held, a truncation)."""
    if event.to_offset < 0:
        return history
    return _log_end_seen(history, event.broker, event.to_offset, None, None, event.origin)


# --- point-in-time views (formats-addendum.md 12) ----------------------------------


def _partition_view(history: History, event: PartitionView) -> History:
    """A snapshot of leader, ISR and ELR. A leader outside the ISR and ELR of
    the last snapshot before it was elected uncleanly (samples can miss a
    step, so the properties call it probable)."""
    last = history.last_view
    elr = event.elr or ()
    if (
        last is not None
        and event.leader >= 0
        and event.leader != last.leader
        and event.leader not in last.isr
        and event.leader not in last.elr
    ):
        election = ViewElection(
            leader=event.leader,
            isr_before=last.isr,
            elr_before=last.elr,
            leader_epoch=event.leader_epoch,
            before=last.source,
            source=event.origin.source,
            recovery=not last.isr and not last.elr and event.leader in last.last_known_elr,
        )
        history = replace(history, view_elections=history.view_elections + (election,))
    seen = PartitionViewSeen(
        event.leader, event.isr, elr, event.last_known_elr or (), event.origin.source
    )
    return replace(history, last_view=seen)


def _restart_loss_shown(history: History, fetch: FollowerFetch) -> History:
    """A replica's first fetch after a restart that lost data: the loss the
    startup lines showed is a truncation in the epoch it fetches in, judged
    against the committed mark at the restart (the line fixes the moment)."""
    loss = next((x for x in history.restart_losses if x.replica == fetch.replica), None)
    if loss is None:
        return history
    truncation = Truncation(
        replica=loss.replica,
        from_offset=loss.from_offset,
        to_offset=loss.to_offset,
        leader_epoch=_epoch_in_force(history, fetch.current_leader_epoch),
        top_epoch=loss.top_epoch,
        epoch_committed=loss.committed,
        epoch_committed_source=loss.committed_source,
        before=loss.before,
        after=loss.after,
        at=loss.at,
        answered=True,
    )
    return replace(
        history,
        truncations=history.truncations + (truncation,),
        restart_losses=tuple(x for x in history.restart_losses if x is not loss),
    )
