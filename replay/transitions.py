"""One handler per event kind: fold an observation into the history.

Transitions only record what happened (epochs, HWM exposures, log ends,
truncations, divergences, acknowledged writes). Whether that broke a promise
is decided afterwards by ``replay.properties``, because an epoch's judgement
needs evidence that arrives after its first event (its start offset is often
pinned only by a later divergence answer).
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from replay.state import (
    ACKED_KEPT,
    AckedProduce,
    Bound,
    Divergence,
    EpochView,
    Exposure,
    History,
    PartitionRegistration,
    Session,
    Truncation,
)
from replay.types import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERING,
    BecomeFollower,
    BecomeLeader,
    BrokerFencing,
    BrokerRegistration,
    ElectionKind,
    EpochAnswer,
    EpochCheckpoint,
    Event,
    FetchAnswer,
    FollowerFetch,
    LeaderAndIsr,
    LogTruncated,
    Origin,
    PartitionChangeRecord,
    PartitionRecord,
    ProduceAck,
    Source,
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
        case _:
            assert_never(event)


def _evidence_kind(event: Event) -> str:
    if isinstance(
        event, PartitionRecord | PartitionChangeRecord | BrokerRegistration | BrokerFencing
    ):
        return "metadata"
    if isinstance(event, LeaderAndIsr):
        return "zk_controller"
    if isinstance(event, BecomeLeader | BecomeFollower | LogTruncated):
        return "broker_log"
    if isinstance(event, EpochCheckpoint):
        return "checkpoint"
    return "request_log"


def _observe(history: History, origin: Origin, event: Event) -> History:
    kind = _evidence_kind(event)
    first, last = history.first_time, history.last_time
    if origin.time is not None:
        first = origin.time if first is None or origin.time < first else first
        last = origin.time if last is None or origin.time > last else last
    observers = history.observers
    last_seen = history.last_seen
    if kind not in ("metadata", "zk_controller") and origin.observer is not None:
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
        evidence_kinds=history.evidence_kinds | {kind},
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
    if record.leader == NO_LEADER_CHANGE:
        current = history.current_epoch
        if current is not None:
            history = history.with_epoch(replace(current, isr=after.isr, elr=after.elr))
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
    return _end_current_epoch(history, record.origin, after, view)


def _end_current_epoch(
    history: History, origin: Origin, registration: PartitionRegistration, view: EpochView
) -> History:
    current = history.current_epoch
    if current is not None:
        history = history.with_epoch(replace(current, ended_at=origin.time))
    return replace(history, registration=registration, epochs=history.epochs + (view,))


def _broker_registration(history: History, record: BrokerRegistration) -> History:
    fenced = history.fenced | {record.broker} if record.fenced else history.fenced - {record.broker}
    epochs = tuple((b, e) for b, e in history.broker_epochs if b != record.broker)
    return replace(
        history, fenced=fenced, broker_epochs=epochs + ((record.broker, record.broker_epoch),)
    )


def _broker_fencing(history: History, record: BrokerFencing) -> History:
    if record.fenced == 1:
        return replace(history, fenced=history.fenced | {record.broker})
    if record.fenced == -1:
        return replace(history, fenced=history.fenced - {record.broker})
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


def _commit(history: History, epoch: int | None, value: int, source: Source) -> History:
    """Offsets below ``value`` were committed in ``epoch`` (exposed as its HWM)."""
    view = history.epoch(epoch)
    if view is None or (view.committed is not None and value <= view.committed):
        return history
    return history.with_epoch(replace(view, committed=value, committed_source=source))


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
    return history.with_session(
        leader,
        fetch.replica,
        Session(
            fetch_offset=fetch.fetch_offset,
            last_fetched_epoch=fetch.last_fetched_epoch,
            current_leader_epoch=fetch.current_leader_epoch,
            source=source,
        ),
    )


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
        history = _commit(history, epoch, answer.hwm, source)
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
            )
        )
    if ack.acks == ACKS_ALL:
        # acks=all is answered only once the HWM passed the batch (seed 003
        # 2.7); the log shows the batch's size in bytes, not its record count,
        # so base + 1 is what the evidence fixes.
        history = _commit(history, epoch, ack.base_offset + 1, source)
        view = history.epoch(epoch)
        if view is not None:
            acked = view.acked + (
                AckedProduce(leader, epoch, ack.client_id, ack.base_offset, source),
            )
            if len(acked) > 2 * ACKED_KEPT:  # trimmed in halves: appends stay cheap
                acked = acked[-ACKED_KEPT:]
            history = history.with_epoch(replace(view, acked=acked))
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
        history = _commit(history, event.leader_epoch, event.hwm, source)
    if event.start_offset is None or event.start_offset < 0:
        return history
    view = history.epoch(event.leader_epoch)
    if view is not None and view.leader == event.broker:
        history = history.with_epoch(
            replace(view, start_offset=view.start_offset.pin(event.start_offset, source))
        )
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
        history = _commit(history, event.leader_epoch, event.hwm, source)
    if event.log_end is None or event.log_end < 0:
        return history
    return _hold(history, event.broker, event.log_end, source)


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
            history = history.with_epoch(replace(current, isr=event.isr))
            return replace(history, registration=after)
        return history  # an older decision repeated late: nothing new
    if current is None:
        fresh = event.leader_epoch == 0
        election = ElectionKind.INITIAL if fresh else ElectionKind.UNKNOWN
        isr_before: tuple[int, ...] = ()
        start = Bound().pin(0, event.origin.source) if fresh else Bound()
    else:
        if event.leader_epoch > current.leader_epoch + 1:
            history = history.with_gap(
                f"leader epochs {current.leader_epoch + 1}..{event.leader_epoch - 1} are missing "
                "from the ZooKeeper controller's evidence"
            )
        isr_before = before.isr if before is not None else ()
        if event.leader == NO_LEADER:
            election = ElectionKind.OFFLINE
        elif event.leader_recovery_state == RECOVERING or event.leader not in isr_before:
            election = ElectionKind.UNCLEAN
        else:
            election = ElectionKind.CLEAN
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
    return _end_current_epoch(history, event.origin, after, view)
