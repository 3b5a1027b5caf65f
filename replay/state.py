"""What Kafka holds, and apart from it, what only an observer can know.

``PartitionRegistration`` is the controller's view of one partition, merged
exactly as ``PartitionRegistration.merge`` does (kafka-formats.md section 2.5).
``History`` is the observer's bookkeeping: every leader epoch with what is
known of its start offset and the highest HWM exposed in it (from which the
properties derive the true HWM, which never goes back while a replica's local
HWM can), each replica's log end as the evidence shows it, and the
truncations and divergences seen. The
properties judge the history; they never look at raw events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from operator import attrgetter
from typing import Any, TypeVar

from replay.types import (
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERY_NO_CHANGE,
    ElectionKind,
    Origin,
    PartitionChangeRecord,
    PartitionKey,
    PartitionRecord,
    Profile,
    Source,
)

_T = TypeVar("_T")
_SET = object.__setattr__
_NEW = object.__new__
#: per record class: its field names, their positions, and a getter of all
_LAYOUTS: dict[type, tuple[tuple[str, ...], dict[str, int], Callable[[Any], Any]]] = {}


def _layout(cls: type) -> tuple[tuple[str, ...], dict[str, int], Callable[[Any], Any]]:
    names = tuple(f.name for f in fields(cls))
    get = attrgetter(*names)
    read = get if len(names) > 1 else lambda obj: (get(obj),)
    layout = _LAYOUTS[cls] = (names, {n: i for i, n in enumerate(names)}, read)
    return layout


def replace(obj: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace`` for the frozen records of this package (no
    ``__post_init__``, every field in ``__init__``). The replay folds every
    event once per order it tries, and copying records is most of a fold:
    the records copied on every event (``History``, ``EpochView``,
    ``ReplicaLog``) keep their fields in a ``__dict__``, copied in one go
    (several times cheaper than field by field); the slotted ones are
    copied field by field. A change to nothing new returns the record
    itself: it is frozen, so it is its own copy."""
    try:
        state = obj.__dict__
    except AttributeError:
        return _replace_slotted(obj, changes)
    try:
        for name, value in changes.items():
            if state[name] is not value:
                break
        else:
            return obj
    except KeyError as error:
        raise TypeError(f"{type(obj).__name__} has no field {error.args[0]}") from None
    copied = state.copy()
    copied.update(changes)
    if len(copied) != len(state):
        unknown = sorted(changes.keys() - state.keys())
        raise TypeError(f"{type(obj).__name__} has no field {unknown[0]}")
    new = _NEW(type(obj))
    _SET(new, "__dict__", copied)
    return new


def _replace_slotted(obj: _T, changes: dict[str, Any]) -> _T:
    cls = type(obj)
    names, index, read = _LAYOUTS.get(cls) or _layout(cls)
    values = list(read(obj))
    for name, value in changes.items():
        if name not in index:
            raise TypeError(f"{cls.__name__} has no field {name}")
        values[index[name]] = value
    new = _NEW(cls)
    for name, value in zip(names, values, strict=True):
        _SET(new, name, value)
    return new


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int = RECOVERED
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    #: ZooKeeper eras: (zkVersion, ISR) of the last state whose zkVersion is
    #: in evidence, while ``isr`` holds a leader's own ISR write that no
    #: version confirms (its ``Shrinking`` / ``Expanding ISR`` line is printed
    #: before the conditional ZooKeeper write, which may fail); kept on an
    #: election whose own zkVersion is not in evidence yet
    zk_known: tuple[int, tuple[int, ...]] | None = None

    @staticmethod
    def of(record: PartitionRecord) -> PartitionRegistration:
        return PartitionRegistration(
            replicas=record.replicas,
            isr=record.isr,
            leader=record.leader,
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
            leader_recovery_state=record.leader_recovery_state,
            adding_replicas=record.adding_replicas,
            removing_replicas=record.removing_replicas,
            elr=record.elr or (),
            last_known_elr=record.last_known_elr or (),
        )

    def merge(self, record: PartitionChangeRecord) -> PartitionRegistration:
        """Kafka's merge: an absent field is unchanged; a present ``leader``
        (even -1, even the same id) starts a new leader epoch; every record
        bumps the partition epoch."""
        if record.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = record.leader, self.leader_epoch + 1
        recovery = (
            self.leader_recovery_state
            if record.leader_recovery_state == RECOVERY_NO_CHANGE
            else record.leader_recovery_state
        )
        return PartitionRegistration(
            replicas=_pick(record.replicas, self.replicas),
            isr=_pick(record.isr, self.isr),
            leader=leader,
            leader_epoch=leader_epoch,
            partition_epoch=self.partition_epoch + 1,
            leader_recovery_state=recovery,
            adding_replicas=_pick(record.adding_replicas, self.adding_replicas),
            removing_replicas=_pick(record.removing_replicas, self.removing_replicas),
            elr=_pick(record.elr, self.elr),
            last_known_elr=_pick(record.last_known_elr, self.last_known_elr),
        )


def _pick(new: tuple[int, ...] | None, current: tuple[int, ...]) -> tuple[int, ...]:
    return current if new is None else new


# --- observer bookkeeping -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bound:
    """An offset known exactly, or only between ``lo`` and ``hi``."""

    lo: int | None = None
    hi: int | None = None
    sources: tuple[Source, ...] = ()

    @property
    def exact(self) -> int | None:
        if self.lo is not None and self.lo == self.hi:
            return self.lo
        return None

    def at_least(self, value: int, source: Source) -> Bound:
        if self.lo is not None and value <= self.lo:
            return self
        return replace(self, lo=value, sources=self.sources + (source,))

    def at_most(self, value: int, source: Source) -> Bound:
        if self.hi is not None and value >= self.hi:
            return self
        return replace(self, hi=value, sources=self.sources + (source,))

    def pin(self, value: int, source: Source) -> Bound:
        return Bound(lo=value, hi=value, sources=self.sources + (source,))


#: how many acknowledged produce requests an epoch keeps as evidence
ACKED_KEPT = 256


# no slots: copied on (nearly) every event, as one dict (``replace``)
@dataclass(frozen=True)
class EpochView:
    """One leader epoch as the metadata log and the observations tell it.

    ``start_offset`` is the leader's log end when the epoch began (its Leader
    Epoch Start Offset): offsets below it keep the epochs the leader already
    had; offsets at or above it are written in this epoch.
    """

    leader_epoch: int
    leader: int
    election: ElectionKind
    partition_epoch: int | None
    isr_before: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    began: Source
    began_at: datetime | None
    metadata_offset: int | None
    #: the new leader's last fetched epoch as a follower, when it was seen.
    leader_last_fetched_epoch: int | None
    start_offset: Bound = field(default_factory=Bound)
    ended_at: datetime | None = None
    #: the highest HWM exposed (or implied by an acks=all ack) in this epoch
    committed: int | None = None
    committed_source: Source | None = None
    #: the lowest base offset its leader acknowledged in this epoch
    lowest_write: int | None = None
    #: the highest log end the new leader was seen to hold before it
    leader_log_end: int | None = None
    #: the log end its leader came back with at its first restart after the
    #: epoch began (its ``Completed load of log`` line), with that line
    leader_reloaded: int | None = None
    leader_reloaded_source: Source | None = None
    #: its leader's startup lines (any form, a pasted excerpt too) came after
    #: the epoch began: the leader restarted at some time after that
    leader_restarted: bool = False
    #: the first HWM its leader exposed in it (a leader's HWM only rises
    #: within its epoch, so this is the lowest), and the first while it was
    #: the only ISR member
    first_exposure: Exposure | None = None
    first_sole_exposure: Exposure | None = None
    #: the HWM its leader logged on taking the epoch ("starts at leader epoch
    #: E ... with high watermark H"): the first it serves, shown where the
    #: request log prints no fetch answer (zk-hw)
    start_exposure: Exposure | None = None
    #: acknowledged acks=all produce requests in this epoch, the latest
    #: ACKED_KEPT of them: the ones a loss at the epoch's end swallows
    acked: tuple[AckedProduce, ...] = ()
    #: the highest base offset of the acknowledged ones no longer kept in
    #: ``acked``: a loss reaching below it swallowed more than ``acked`` says
    acked_dropped_hi: int | None = None
    #: the latest HWM_STEPS_KEPT rises of ``committed``, with their clocks
    hwm_steps: tuple[HwmStep, ...] = ()
    #: when its leader first acknowledged a write in it (its clock)
    first_write_at: datetime | None = None
    #: a lower bound of the leader's HW derived from the fetch offsets (log
    #: ends) of every ISR follower in this epoch (seed 000 "When to update
    #: high watermark"; seeds 004, 001: HW = the ISR's minimum LEO), with the
    #: fetch lines it rests on; counted where no answer shows the HWM
    derived: int | None = None
    derived_sources: tuple[Source, ...] = ()


# no slots: copied on (nearly) every event, as one dict (``replace``)
@dataclass(frozen=True)
class ReplicaLog:
    """What the evidence says about one replica's log."""

    leo: int | None = None  # last fetch offset it sent as a follower
    held: int | None = None  # highest log end it is known to have reached
    held_source: Source | None = None
    last_fetched_epoch: int | None = None
    leo_source: Source | None = None
    #: the leader epoch of the newest data it is known to hold
    top_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """A follower's fetch session with one leader: its latest request."""

    fetch_offset: int
    last_fetched_epoch: int | None
    current_leader_epoch: int | None
    source: Source
    at: datetime | None = None
    #: the leader epoch in force when the leader logged it
    in_epoch: int | None = None
    #: the lowest fetch offset of the pair's fetches logged in ``in_epoch``
    lowest: int | None = None


@dataclass(frozen=True, slots=True)
class Truncation:
    replica: int
    from_offset: int
    to_offset: int
    leader_epoch: int | None
    #: epoch of the replica's newest data before it truncated
    top_epoch: int | None
    #: the highest HWM exposed in the epoch in force when it truncated
    epoch_committed: int | None
    epoch_committed_source: Source | None
    before: Source | None
    after: Source
    at: datetime | None
    #: a diverging-epoch answer explains it; otherwise the replica lost data
    #: (e.g. an unclean shutdown) at a moment the evidence does not fix
    answered: bool = False
    #: the derived HW lower bound of the epoch in force when it truncated
    epoch_derived: int | None = None
    epoch_derived_sources: tuple[Source, ...] = ()


@dataclass(frozen=True, slots=True)
class Divergence:
    replica: int
    leader: int | None
    leader_epoch: int | None
    diverging_epoch: int
    end_offset: int
    follower_leo: int
    follower_last_fetched_epoch: int | None
    epoch_committed: int | None
    request: Source
    answer: Source
    at: datetime | None
    resolved_by: Source | None = None
    persisted_by: Source | None = None


@dataclass(frozen=True, slots=True)
class Exposure:
    """A leader exposed a HWM (in a fetch answer)."""

    leader: int | None
    leader_epoch: int | None
    hwm: int
    source: Source
    at: datetime | None
    #: the leader was the only ISR member: its HWM was its log end
    sole_isr: bool


@dataclass(frozen=True, slots=True)
class AckedProduce:
    leader: int | None
    leader_epoch: int | None
    client_id: str | None
    base_offset: int
    source: Source


#: how many acts a stale leader, or acks under min ISR, keep one by one
ACTS_KEPT = 64
#: rises of an epoch's HWM kept with their clocks, and fetches per follower
HWM_STEPS_KEPT = 16
FETCHES_KEPT = 8


@dataclass(frozen=True, slots=True)
class HwmStep:
    """The HWM exposed in an epoch rose to ``value`` (the exposer's clock)."""

    value: int
    at: datetime | None
    source: Source


@dataclass(frozen=True, slots=True)
class Act:
    """One thing a broker did as a leader: acknowledged a produce (with its
    acks and base offset) or answered a follower's fetch (``base_offset``
    None)."""

    at: datetime | None
    source: Source
    base_offset: int | None = None
    acks: int | None = None


@dataclass(frozen=True, slots=True)
class Acts:
    """Acts in one situation, in the observer's clock order: the first
    ACTS_KEPT one by one, the rest summed up (``more_*``)."""

    kept: tuple[Act, ...] = ()
    more: int = 0
    more_first_at: datetime | None = None
    more_lo: int | None = None
    more_hi: int | None = None
    more_acks_all_hi: int | None = None

    def add(self, act: Act, repeats: int = 0) -> Acts:
        """Add ``act``, and ``repeats`` more like it that came after it (the
        answers a folded run left out: summed up, from the act's time)."""
        if len(self.kept) < ACTS_KEPT:
            kept = replace(self, kept=self.kept + (act,))
            return kept if repeats <= 0 else kept._more(act, repeats)
        return self._more(act, 1 + max(repeats, 0))

    def _more(self, act: Act, count: int) -> Acts:
        offset = act.base_offset
        lo, hi, top = self.more_lo, self.more_hi, self.more_acks_all_hi
        if offset is not None:
            lo = offset if lo is None else min(lo, offset)
            hi = offset if hi is None else max(hi, offset)
            if act.acks == -1:
                top = offset if top is None else max(top, offset)
        return replace(
            self,
            more=self.more + count,
            more_first_at=self.more_first_at or act.at,
            more_lo=lo,
            more_hi=hi,
            more_acks_all_hi=top,
        )


@dataclass(frozen=True, slots=True)
class StaleLeadership:
    """A broker acting as leader of ``leader_epoch`` after its leadership
    ended: at ``ended_at`` (the controller's clock) by ``ended_by``, the
    record that began the next leader's epoch or fenced the broker."""

    broker: int
    leader_epoch: int
    ended_at: datetime | None
    ended_by: Source
    acts: Acts = field(default_factory=Acts)
    by_fence: bool = False


@dataclass(frozen=True, slots=True)
class Fence:
    """The latest fence of a broker (BrokerFencing, or a registration that
    starts fenced)."""

    broker: int
    at: datetime | None
    source: Source
    #: the partition's leader epoch when it came: it ends leaderships up to it
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class MinIsrSetting:
    """``min.insync.replicas`` as the metadata stated it: ``scope`` is
    ``topic``, ``broker`` (with ``broker``) or ``cluster``; ``value`` None
    means the setting was deleted."""

    scope: str
    broker: int | None
    value: int | None
    source: Source


@dataclass(frozen=True, slots=True)
class IsrChange:
    """The ISR the controller recorded, and when (its clock)."""

    leader_epoch: int
    leader: int
    isr: tuple[int, ...]
    at: datetime | None
    source: Source


@dataclass(frozen=True, slots=True)
class FetchSeen:
    """A follower's fetch as its leader logged it: the follower's log end."""

    offset: int
    at: datetime | None
    source: Source


@dataclass(frozen=True, slots=True)
class IsrExpansion:
    """``replica`` joined the ISR of ``leader_epoch`` (led by ``leader``).

    Everything is kept with its clock, so that the judgement does not rest
    on an order only skewed clocks give: ``fetches``, the replica's fetches
    the leader logged around the expansion (the latest FETCHES_KEPT before,
    the first FETCHES_KEPT after); ``hwm_steps``, the latest rises of the
    HWM the leader exposed (or an acks=all ack implied) in the epoch; and
    ``first_write_at``, when the leader first acknowledged a write in it
    (until then its log end, and so its HWM, is the epoch's start offset)."""

    replica: int
    leader: int
    leader_epoch: int
    partition_epoch: int | None
    at: datetime | None
    sources: tuple[Source, ...]
    fetches: tuple[FetchSeen, ...]
    hwm_steps: tuple[HwmStep, ...]
    first_write_at: datetime | None
    fetches_after: int = 0
    #: the time of the leader's own line telling the expansion, if one does:
    #: its clock is the one its request log dates the fetches by
    own_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class UnderMinIsr:
    """acks=all acknowledged by ``leader`` in ``leader_epoch`` while the ISR
    was below min ISR: by the controller's ISR (``marker`` False; ``since``
    the record that shrank it, ``isr_index`` its place in ``isr_changes``)
    or after the leader's own ``(under-min-isr)`` line (``marker`` True)."""

    leader: int
    leader_epoch: int
    marker: bool
    isr: tuple[int, ...]
    min_isr: int | None
    min_isr_source: Source | None
    since: Source
    since_at: datetime | None
    isr_index: int | None
    acts: Acts = field(default_factory=Acts)


@dataclass(frozen=True, slots=True)
class UncleanRestart:
    """A replica back from a shutdown that was not clean (or of unknown kind:
    ``clean`` None), not yet back in the ISR: until it catches up, KIP-966's
    Unclean Exclusion (seed 002 5.1.2) keeps it out of the ISR, the ELR and
    leadership."""

    broker: int
    clean: bool | None
    source: Source
    at: datetime | None
    #: the log end it came back with (``Completed load of log``), if printed
    log_end: int | None = None
    log_end_source: Source | None = None
    #: its registration after the restart left it in the partition's ELR:
    #: (leader epoch then, the registration record); judged at its unfence
    kept: tuple[int, Source] | None = None


@dataclass(frozen=True, slots=True)
class PartitionViewSeen:
    """The leader, ISR and ELR a point-in-time view showed."""

    leader: int
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    source: Source


@dataclass(frozen=True, slots=True)
class RestartLoss:
    """A replica came back from a restart with less than it held (its startup
    lines print the log end it loaded). Judged as a truncation when it next
    fetches as a follower, against the committed mark at the restart; if it
    is elected first, the election's own findings count the loss."""

    replica: int
    from_offset: int
    to_offset: int
    top_epoch: int | None
    committed: int | None
    committed_source: Source | None
    before: Source | None
    after: Source
    at: datetime | None


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A replica back from an unclean shutdown re-entered before it caught up:
    kept in the ELR at its registration (``how`` "elr"), or elected (``how``
    "elected"), in ``leader_epoch``."""

    broker: int
    how: str
    leader_epoch: int
    clean: bool | None
    log_end: int | None
    #: the committed mark (true HWM) the transitions saw then
    committed: int | None
    sources: tuple[Source, ...]
    at: datetime | None


@dataclass(frozen=True, slots=True)
class ViewElection:
    """Point-in-time views (kafka-topics --describe, metadata shell): a leader
    that appears outside the ISR (and ELR) of the last view before it."""

    leader: int
    isr_before: tuple[int, ...]
    elr_before: tuple[int, ...]
    leader_epoch: int | None
    before: Source
    source: Source
    recovery: bool = False


@dataclass(frozen=True, slots=True)
class ConfigSetting:
    """``unclean.leader.election.enable`` as a broker or topic config states
    it (``scope`` ``topic``, ``broker`` with ``broker``, or ``static``)."""

    scope: str
    broker: int | None
    value: bool
    source: Source


@dataclass(frozen=True, slots=True)
class PositionSeen:
    """A consumer's latest position on a broker (``ClientPosition``), with the
    epoch that broker led when it was logged (None: it led none)."""

    broker: int
    client_id: str | None
    offset: int
    leader_epoch: int | None
    source: Source


@dataclass(frozen=True, slots=True)
class ReplayContext:
    """What a partition's replay needs to know from outside its events."""

    key: PartitionKey
    profile: Profile = Profile.KRAFT
    max_clock_skew_s: float = 2.0
    #: brokers whose request logs are in the evidence (any partition).
    request_log_observers: frozenset[int] = frozenset()


# no slots: copied on (nearly) every event, as one dict (``replace``)
@dataclass(frozen=True)
class History:
    registration: PartitionRegistration | None = None
    epochs: tuple[EpochView, ...] = ()
    replicas: tuple[tuple[int, ReplicaLog], ...] = ()
    sessions: tuple[tuple[tuple[int | None, int], Session], ...] = ()
    truncations: tuple[Truncation, ...] = ()
    divergences: tuple[Divergence, ...] = ()
    fenced: frozenset[int] = frozenset()
    broker_epochs: tuple[tuple[int, int], ...] = ()
    gaps: tuple[str, ...] = ()
    events: int = 0
    first_time: datetime | None = None
    last_time: datetime | None = None
    evidence_kinds: frozenset[str] = frozenset()
    observers: frozenset[int] = frozenset()
    #: min.insync.replicas as the metadata stated it, newest per scope
    min_isr: tuple[MinIsrSetting, ...] = ()
    #: every ISR the controller recorded, in order
    isr_changes: tuple[IsrChange, ...] = ()
    expansions: tuple[IsrExpansion, ...] = ()
    #: per (leader, follower), the follower's latest fetches the leader logged
    fetch_tail: tuple[tuple[int | None, int, tuple[FetchSeen, ...]], ...] = ()
    fences: tuple[Fence, ...] = ()
    stale: tuple[StaleLeadership, ...] = ()
    under_min_isr: tuple[UnderMinIsr, ...] = ()
    #: per leader, its latest ``(under-min-isr)`` line still in force:
    #: (leader, leader epoch, time, source)
    under_min_marks: tuple[tuple[int, int, datetime | None, Source], ...] = ()
    #: the highest metadata offset folded in; a later run skips records up to it
    last_metadata_offset: int | None = None
    #: per observer, the last observation folded in (time, file, seq); a later
    #: run given the same files again skips what it already saw
    last_seen: tuple[tuple[int, datetime, str, int], ...] = ()
    #: replicas back from an unclean (or unknown) shutdown, not yet caught up
    unclean_restarts: tuple[UncleanRestart, ...] = ()
    #: brokers registered while in the partition's ELR and not yet unfenced
    #: nor shown restarting since: (broker, leader epoch then, the record).
    #: A KRaft broker registers before it loads its logs, so its startup
    #: lines may come after the registration they belong to.
    elr_registrations: tuple[tuple[int, int, Source], ...] = ()
    #: losses restarts showed, until the replica's next fetch shows them
    restart_losses: tuple[RestartLoss, ...] = ()
    #: Unclean Exclusion broken: an unclean replica kept or elected
    exclusions: tuple[Exclusion, ...] = ()
    #: the last point-in-time view of the partition, and the elections views show
    last_view: PartitionViewSeen | None = None
    view_elections: tuple[ViewElection, ...] = ()
    #: unclean.leader.election.enable as configs state it
    unclean_config: tuple[ConfigSetting, ...] = ()
    #: a ZooKeeper controller moved the partition offline in this leader
    #: epoch (``PartitionOffline``): (the epoch, the line)
    offline: tuple[int, Origin] | None = None
    #: per (broker, client), the consumer's latest position logged there
    positions: tuple[PositionSeen, ...] = ()

    # small read helpers; every write goes through dataclasses.replace

    def replica(self, broker: int) -> ReplicaLog:
        for b, log in self.replicas:
            if b == broker:
                return log
        return ReplicaLog()

    def with_replica(self, broker: int, log: ReplicaLog) -> History:
        replicas = self.replicas  # sorted by broker
        for i, (b, known) in enumerate(replicas):
            if b == broker:
                if known is log:
                    return self
                return replace(self, replicas=(*replicas[:i], (broker, log), *replicas[i + 1 :]))
        return replace(self, replicas=tuple(sorted(replicas + ((broker, log),))))

    def session(self, leader: int | None, follower: int) -> Session | None:
        for key, session in self.sessions:
            if key == (leader, follower):
                return session
        return None

    def with_session(self, leader: int | None, follower: int, session: Session) -> History:
        """The pair's session, moved to the end (the latest last)."""
        key = (leader, follower)
        sessions = self.sessions  # one per pair
        for i, (known, _) in enumerate(sessions):
            if known == key:
                return replace(self, sessions=(*sessions[:i], *sessions[i + 1 :], (key, session)))
        return replace(self, sessions=(*sessions, (key, session)))

    def epoch(self, leader_epoch: int | None) -> EpochView | None:
        if leader_epoch is None:
            return None
        for view in reversed(self.epochs):
            if view.leader_epoch == leader_epoch:
                return view
        return None

    def with_epoch(self, view: EpochView) -> History:
        epochs = self.epochs
        for i in range(len(epochs) - 1, -1, -1):  # mostly the newest
            if epochs[i].leader_epoch == view.leader_epoch:
                if epochs[i] is view:
                    return self
                return replace(self, epochs=(*epochs[:i], view, *epochs[i + 1 :]))
        return self

    @property
    def current_epoch(self) -> EpochView | None:
        return self.epochs[-1] if self.epochs else None

    def effective_min_isr(self, leader: int | None) -> MinIsrSetting | None:
        """The min ISR a leader applies: the topic's override, else the
        leader's own broker setting, else the cluster default, else the
        static value its ``KafkaConfig values:`` printed (a broker whose log
        is not attributed: ``static`` of None); None when no evidence stated
        one (Kafka's built-in default is not evidence)."""
        by_scope = {(m.scope, m.broker): m for m in self.min_isr}
        for key in (
            ("topic", None),
            ("broker", leader),
            ("cluster", None),
            ("static", leader),
            ("static", None),
        ):
            setting = by_scope.get(key)
            if setting is not None and setting.value is not None:
                return setting
        return None

    def with_gap(self, gap: str) -> History:
        if gap in self.gaps:
            return self
        return replace(self, gaps=self.gaps + (gap,))
