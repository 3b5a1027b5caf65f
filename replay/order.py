"""Putting one partition's evidence in the order it happened.

The metadata log is totally ordered (seed 003, section 1.2.1). Each broker's
own file is ordered by line. Across brokers only skewed clocks exist. So:

1. metadata events are sorted by metadata offset, and repeated copies of one
   record (the same log dumped from several controllers) are kept once;
2. each observer's events keep their own order (time, then file, then line);
3. an observation never goes before the record that created the leader epoch
   it names: no broker can know epoch E before the controller wrote it. The
   highest epoch an observer has named so far is a floor for all its later
   events;
4. above that floor, the observer's clock places it among metadata records;
   an observation with no clock (a checkpoint file) describes the end;
5. a broker's own copy of a LeaderAndIsr request names that epoch on its
   clock, as a line naming it does; and a follower's line in the same
   millisecond as its copy of epoch E's request (none later before it) is
   the act of handling it: it stays in E, before the record creating the
   next epoch, whatever the clocks.

A placement that only the clock decides, within ``max_clock_skew_s`` of a
metadata record, is not fixed by the evidence; such placements are counted so
that a judgement depending on them can say so.

Which judgements depend on such an order (``order_dependences``): every
event is tried at each earlier place its clock allows (``may_precede``):
before events of other clocks whose time lies within the skew allowance of
its own, never before an event of its own clock (a file's lines keep their
order), never before the record that created the leader epoch it names (nor
the partition's first record), and never across an event certainly earlier
(older by more than the allowance), and never before a cause it shows: a
follower's HWM shown to a client never before the leader's answer that
brought it that HWM (``_learned_from``), a follower's fetch from below its
previous one never before its own line that cut its log
(``_fetched_after_drop``), nor one after its fetch from the offset its
leader's epoch answer had it truncate to before that truncation
(``_fetched_after_epoch_truncation``). Each alternative order is folded in the
same pass as the given one; once its history is alike the given order's,
nothing it could change is left; one that never catches up is judged at the
end. A finding present in one order and absent in the other rests on an
order the evidence cannot fix (DESIGN.md "Ordering"): it is not stated as
fact, and the partition's verdict names the two lines it depends on.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from operator import itemgetter
from typing import NamedTuple, TypeVar, cast

from replay.types import (
    METADATA_EVENTS,
    NO_LEADER,
    NO_LEADER_CHANGE,
    BecomeFollower,
    BecomeLeader,
    BrokerConfig,
    BrokerFencing,
    BrokerRegistration,
    BrokerRestart,
    ClientHwm,
    ControllerChange,
    EpochAnswer,
    Event,
    FetchAnswer,
    FetcherHalt,
    FollowerFetch,
    IsrUpdated,
    LeaderAndIsr,
    LogLoaded,
    LogRecovered,
    LogTruncated,
    OffsetReset,
    PartitionChangeRecord,
    PartitionOffline,
    PartitionRecord,
    ProduceAck,
    RecoveryTruncation,
    Source,
)

#: a broker's own lines as it starts: they precede its registration
STARTUP_LINES = (BrokerRestart, LogRecovered, RecoveryTruncation, LogLoaded)
#: a broker's log lines, which a ticket may also hold pasted without their
#: timestamps (excerpts)
_LOG_LINE_TYPES = frozenset(
    {
        BecomeLeader,
        BecomeFollower,
        LogTruncated,
        IsrUpdated,
        BrokerRestart,
        LogRecovered,
        RecoveryTruncation,
        LogLoaded,
        BrokerConfig,
        FetcherHalt,
        OffsetReset,
    }
)
#: the controller's clock (metadata records, ZooKeeper decisions)
CONTROLLER = "controller"
#: events a leader's request log shows it doing as the partition's leader
LEADER_ACTS = (ProduceAck, FetchAnswer, FollowerFetch, EpochAnswer)
#: places tried per event; beyond it the verdict says not every order was tried.
#: The fold budget bounds what the places cost (a move past events it commutes
#: with costs two folds per place); at 64 a failover's record within 2 s of 65
#: leader lines already left a legal history unknown.
MAX_JUMP = 1024
#: extra folds allowed per event for the alternative orders, all together
FOLD_BUDGET = 16
#: events an alternative order is followed after it rejoined the given one
#: before both are judged where they stand (``order_dependences``)
HORIZON = 256


def named_epoch(event: Event) -> int | None:
    """The leader epoch an observation says its broker knew of."""
    if isinstance(event, FollowerFetch):
        return event.current_leader_epoch
    if isinstance(event, BecomeLeader | BecomeFollower):
        return event.leader_epoch
    return None


class Placement(NamedTuple):
    """What fixes an ordered event's place: its clock and time, and for a
    metadata record its index among them, for an observation how many
    metadata records must precede it (the floor of rule 3). A named tuple:
    one is made per event, and a tuple is the cheapest record to make."""

    clock: object
    time: float | None
    metadata_index: int | None
    floor: int
    #: the broker whose log the event shows as a follower's (its truncation,
    #: its "Follower ... starts" line). A follower truncates on a leader's
    #: answer or on becoming a leader's follower, and a leader never truncates
    #: its own log (seed 000 "Epoch concept"; seed 004): such an event is never
    #: moved into an epoch that broker led, nor into one without a leader
    follower: int | None = None
    #: the broker that acted as leader in this event (its request log: an
    #: acknowledged produce, a fetch it served, its answer). DESIGN.md counts
    #: a leader's act within the skew allowance of its epoch's end as in its
    #: epoch (a fencing_violation is only one beyond it), and a broker does not
    #: act as leader before it leads: such an act is never moved across the
    #: record that ended or began that broker's leadership
    leader_act: int | None = None
    #: a record that changes the leader: the leader before and after it
    leader_before: int | None = None
    leader_after: int | None = None
    #: a broker's startup lines (restart, log load and recovery), and the
    #: record registering that broker: a broker registers after it loaded its
    #: logs, so its registration never moves before its startup lines
    starting: int | None = None
    #: the index of the last event this one certainly follows for a cause,
    #: not a clock (``_learned_from``, ``_fetched_after_drop``): it never
    #: moves to before it
    after: int | None = None
    #: a follower's line in the same millisecond as its broker's own copy of
    #: the LeaderAndIsr request of the epoch it knew (and no copy of a later
    #: one before it): the act of handling that request. The index of the
    #: record creating the next known epoch; no record from it on moves
    #: before this line
    ceiling: int | None = None


@dataclass(frozen=True, slots=True)
class Ordered:
    events: tuple[Event, ...]
    #: observations whose place among metadata records only a skewed clock gives
    clock_placed: int
    #: metadata records dropped as copies of one already seen, and pasted log
    #: lines (no time) dropped as copies of a timed line of the same broker
    duplicates: int
    #: one per event of ``events``
    placements: tuple[Placement, ...] = ()


def _payload(event: Event) -> tuple[object, ...]:
    return tuple(getattr(event, f.name) for f in fields(event) if f.name != "origin")


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _controller_order(event: Event) -> tuple[object, ...]:
    """KRaft: the metadata log's offsets. ZooKeeper era: a partition's leader
    epoch and zkVersion / partition epoch only grow, so they order the
    controller's decisions; the clock breaks what they leave tied, a timed
    copy of a decision before an untimed one (a pasted excerpt of the
    controller's log): the copy kept is the one that says when."""
    origin = event.origin
    if isinstance(event, PartitionOffline):
        # after every decision of the epoch its controller logged before it
        return (
            1,
            event.after_epoch if event.after_epoch is not None else -1,
            _AFTER_EVERY_VERSION,
            origin.time is None,
            _ts(origin.time) or 0.0,
            origin.source.source_file,
            origin.seq,
        )
    if isinstance(event, LeaderAndIsr | ControllerChange):
        version = event.partition_epoch if event.partition_epoch is not None else -1
        return (
            1,
            event.leader_epoch,
            version,
            origin.time is None,
            _ts(origin.time) or 0.0,
            origin.source.source_file,
            origin.seq,
        )
    offset = origin.metadata_offset
    return (
        0 if offset is not None else 2,
        offset or 0,
        0,
        False,
        0.0,
        origin.source.source_file,
        origin.seq,
    )


_AFTER_EVERY_VERSION = 1 << 62


def _dated_offline(metadata: list[Event]) -> list[Event]:
    """Each ``PartitionOffline`` with the epoch it follows, where its own file
    (the controller's log, in line order) says which: the decision logged
    before it has epoch E and the next one E + 2, so the one epoch between
    was written while the partition was offline. Otherwise (the epochs
    between were another controller's, or the next decision is not in this
    file) ``after_epoch`` stays None and the line decides nothing."""
    if not any(isinstance(e, PartitionOffline) for e in metadata):
        return metadata
    decided: dict[str, list[tuple[int, int]]] = {}
    for e in metadata:
        if isinstance(e, LeaderAndIsr):
            decided.setdefault(e.origin.source.source_file, []).append(
                (e.origin.seq, e.leader_epoch)
            )
    out: list[Event] = []
    for e in metadata:
        if isinstance(e, PartitionOffline):
            mine = decided.get(e.origin.source.source_file, [])
            before = max((d for d in mine if d[0] < e.origin.seq), default=None)
            after = min((d for d in mine if d[0] > e.origin.seq), default=None)
            if before is not None and after is not None and after[1] == before[1] + 2:
                e = replace(e, after_epoch=before[1])
        out.append(e)
    return out


def _same_moment_rank(event: Event) -> int:
    """Within one millisecond of one broker: its ISR line before its request
    log. A request-log line is written when the response is sent, so an
    acks=all answer completed by an ISR change (the HWM can then advance)
    is logged after it; the reverse order would judge the ack against the
    ISR it waited out."""
    return 0 if isinstance(event, IsrUpdated) else 1


_INF = float("inf")
_first = itemgetter(0)
#: exact types (events are final classes): a set lookup per event, not an
#: isinstance chain
_FOLLOWER_LINES = (LogTruncated, BecomeFollower)
_LEADER_ACT_TYPES = frozenset(LEADER_ACTS)


def order_events(events: Iterable[Event], max_clock_skew_s: float = 2.0) -> Ordered:
    metadata: list[Event] = []
    observed: list[Event] = []
    for event in events:
        (metadata if isinstance(event, METADATA_EVENTS) else observed).append(event)

    metadata = _dated_offline(metadata)
    # A KRaft controller's printed change repeats a metadata record: where the
    # partition has records, they decide (kafka-formats.md 2.6).
    printed = 0
    if any(isinstance(e, PartitionRecord | PartitionChangeRecord) for e in metadata):
        kept_records: list[Event] = [e for e in metadata if not isinstance(e, ControllerChange)]
        printed = len(metadata) - len(kept_records)
        metadata = kept_records
    metadata.sort(key=_controller_order)
    kept: list[Event] = []
    seen: set[tuple[object, ...]] = set()
    for event in metadata:
        identity: tuple[object, ...] | None = None
        if isinstance(event, LeaderAndIsr):
            # the controller's line and the requests brokers received repeat it
            identity = ("LeaderAndIsr", _payload(event)[:5])
        elif event.origin.metadata_offset is not None:
            identity = (event.origin.metadata_offset, type(event).__name__, _payload(event))
        if identity is not None:
            if identity in seen:
                continue
            seen.add(identity)
        kept.append(event)
    duplicates = len(metadata) - len(kept) + printed

    # A broker's line pasted without its timestamp (an excerpt beside the log
    # it came from) says what its timed copy says, and the copy says when: an
    # untimed line whose event equals a timed one of the same broker is that
    # line. Left alone it would be judged at the end (no clock), where a
    # truncation long past reads as a truncation below the final HWM.
    timed_lines = {
        (e.origin.observer, type(e), _payload(e))
        for e in observed
        if e.origin.time is not None and type(e) in _LOG_LINE_TYPES
    }
    if timed_lines:
        pasted = [
            e
            for e in observed
            if e.origin.time is None
            and type(e) in _LOG_LINE_TYPES
            and (e.origin.observer, type(e), _payload(e)) in timed_lines
        ]
        if pasted:
            copies = {id(e) for e in pasted}
            observed = [e for e in observed if id(e) not in copies]
            duplicates += len(pasted)

    # Where each leader epoch was created, and the controller's clock per record.
    created_at: dict[int, int] = {}
    epoch: int | None = None
    clock: list[float] = []
    last = float("-inf")
    leader: int | None = None
    #: per record that changes the leader: (leader before, leader after)
    handover: dict[int, tuple[int | None, int]] = {}
    #: per broker, the known epochs it led
    led: dict[int, list[int]] = {}
    for index, event in enumerate(kept):
        if isinstance(event, ControllerChange) and (
            epoch is None or event.leader_epoch_before > epoch
        ):
            epoch = event.leader_epoch_before
            created_at.setdefault(epoch, index)
            led.setdefault(event.leader_before, []).append(epoch)
            leader = event.leader_before
        if isinstance(event, PartitionRecord | LeaderAndIsr | ControllerChange):
            if epoch is None or event.leader_epoch > epoch:
                handover[index] = (leader, event.leader)
                leader = event.leader
                led.setdefault(event.leader, []).append(event.leader_epoch)
            epoch = event.leader_epoch
            created_at.setdefault(epoch, index)
        elif (
            isinstance(event, PartitionChangeRecord)
            and event.leader != NO_LEADER_CHANGE
            and epoch is not None
        ):
            epoch += 1
            created_at.setdefault(epoch, index)
            handover[index] = (leader, event.leader)
            leader = event.leader
            led.setdefault(event.leader, []).append(epoch)
        t = _ts(event.origin.time)
        last = max(last, t) if t is not None else last
        clock.append(last)
    known_epochs = sorted(created_at)
    # No observation of the partition is moved before the record that
    # created its first known epoch.
    first = created_at[known_epochs[0]] + 1 if known_epochs else 0

    def floor_for(named: int | None) -> int:
        if named is None or not known_epochs:
            return 0
        i = bisect.bisect_right(known_epochs, named) - 1
        return 0 if i < 0 else created_at[known_epochs[i]] + 1

    def ceiling_for(named: int) -> int | None:
        """The index of the record creating the first known epoch after
        ``named``: a place before it is one in ``named`` or earlier."""
        i = bisect.bisect_right(known_epochs, named)
        return created_at[known_epochs[i]] if i < len(known_epochs) else None

    # A broker's own copy of a LeaderAndIsr request (``received LeaderAndIsr
    # request``, formats-addendum.md 9.3: its state-change log, its clock)
    # names the epoch the broker knew from then on: what it did later on
    # that clock (a become-follower truncation in the same millisecond) came
    # after the record that created the epoch, like a line naming it.
    received: dict[int, list[tuple[float, int]]] = {}
    for event in metadata:
        origin = event.origin
        if (
            isinstance(event, LeaderAndIsr)
            and origin.observer is not None
            and origin.time is not None
            and event.leader_epoch >= 0
        ):
            received.setdefault(origin.observer, []).append(
                (origin.time.timestamp(), event.leader_epoch)
            )
    for known in received.values():
        known.sort()

    by_observer: dict[int | None, list[Event]] = {}
    for event in observed:
        by_observer.setdefault(event.origin.observer, []).append(event)

    placed: list[tuple[tuple[object, ...], Event, Placement]] = []
    clock_placed = 0
    bisect_right = bisect.bisect_right
    end = len(kept)
    lowest = first
    for observer, items in by_observer.items():
        # each event's clock read once: (sort key, time, same-moment rank, event)
        keyed = []
        for event in items:
            origin = event.origin
            t = None if origin.time is None else origin.time.timestamp()
            rank = _same_moment_rank(event)
            keyed.append(
                (
                    (t is None, t or 0.0, rank, origin.source.source_file, origin.seq),
                    t,
                    rank,
                    event,
                )
            )
        keyed.sort(key=_first)
        merged = _untimed_order(keyed, led)
        observer_key = observer if observer is not None else -1
        named: int | None = None
        floor = floor_for(None)
        got = received.get(observer, []) if observer is not None else []
        next_got = 0
        copy: tuple[float, int] | None = None
        for _, t, rank, event in keyed:
            while t is not None and next_got < len(got) and got[next_got][0] <= t:
                copy = got[next_got]
                epoch = copy[1]
                next_got += 1
                if named is None or epoch > named:
                    named = epoch
                    floor = floor_for(named)
            epoch = named_epoch(event)
            if epoch is not None and epoch >= 0 and (named is None or epoch > named):
                named = epoch
                floor = floor_for(named)
            origin = event.origin
            if t is None:
                # No clock at all (checkpoint files): a picture of the end.
                pos = end
            else:
                by_clock = bisect_right(clock, t)
                pos = floor if floor > by_clock else by_clock
                early = max(floor, bisect_right(clock, t - max_clock_skew_s))
                late = max(floor, bisect_right(clock, t + max_clock_skew_s))
                if early != late:
                    clock_placed += 1
            ceiling = None
            if (
                copy is not None
                and copy[0] == t
                and copy[1] == named
                and isinstance(event, _FOLLOWER_LINES)
            ):
                ceiling = ceiling_for(named)
                if ceiling is not None and pos > ceiling:
                    pos = ceiling
            source_file = origin.source.source_file
            at = merged.get(id(event))
            key = (
                pos,
                0,
                t if t is not None else _INF,
                observer_key,
                rank if at is None else -1,
                source_file if at is None else "",
                origin.seq if at is None else at,
            )
            kind = type(event)
            placed.append(
                (
                    key,
                    event,
                    Placement(
                        observer if observer is not None else source_file,
                        t,
                        None,
                        floor if floor > lowest else lowest,
                        event.broker if isinstance(event, _FOLLOWER_LINES) else None,
                        observer if kind in _LEADER_ACT_TYPES else None,
                        starting=event.broker if isinstance(event, STARTUP_LINES) else None,
                        ceiling=ceiling,
                    ),
                )
            )

    for index, event in enumerate(kept):
        t = _ts(event.origin.time)
        before, after = handover.get(index, (None, None))
        placed.append(
            (
                (index, 1, 0.0, -1, 0, "", 0),
                event,
                Placement(
                    CONTROLLER,
                    t,
                    index,
                    0,
                    leader_before=before,
                    leader_after=after,
                    starting=event.broker if isinstance(event, BrokerRegistration) else None,
                ),
            )
        )
    placed.sort(key=_first)
    ordered = [e for _, e, _ in placed]
    placements = [p for _, _, p in placed]
    # one cause per event: the first concerns client showings, the second
    # and third fetches, the fourth unfences
    causes = (
        _learned_from(ordered, placements, max_clock_skew_s)
        | _fetched_after_epoch_truncation(ordered)
        | _fetched_after_drop(ordered)
        | _unfenced_after_load(ordered)
    )
    for index, cause in causes.items():
        placements[index] = placements[index]._replace(after=cause)
    return Ordered(tuple(ordered), clock_placed, duplicates, tuple(placements))


def _untimed_order(
    keyed: Sequence[tuple[tuple[object, ...], float | None, int, Event]],
    led: Mapping[int, list[int]],
) -> dict[int, int]:
    """One broker's log lines pasted without a time (a ticket's excerpts),
    in the order they happened as far as the lines say: each file's own
    order kept, files merged by the leader epoch each line names. A line
    that names none takes the epoch of the line above it in its file; a
    fetcher's truncation takes the epoch its leader (``leaderId``) led when
    that broker led one known epoch only; and within one epoch the broker's
    ``starts at leader epoch`` line comes first, since it acts in an epoch
    only once it has taken it. Returns each such event's place (by id)."""
    files: dict[str, list[Event]] = {}
    first = len(keyed)  # the untimed sort last (``keyed`` is sorted)
    while first and keyed[first - 1][1] is None:
        first -= 1
    for _, _, _, event in keyed[first:]:
        if type(event) in _LOG_LINE_TYPES:
            files.setdefault(event.origin.source.source_file, []).append(event)
    if not files:
        return {}
    keys: dict[str, list[tuple[int, int]]] = {}
    for name, lines in files.items():
        running = -1
        out = []
        for event in lines:
            named = named_epoch(event)
            if named is None and isinstance(event, LogTruncated) and event.leader is not None:
                epochs = led.get(event.leader, [])
                named = epochs[0] if len(epochs) == 1 else None
            if named is not None and named >= 0:
                running = max(running, named)
            taking = isinstance(event, BecomeLeader | BecomeFollower)
            out.append((running if named is None else named, 0 if taking else 1))
        keys[name] = out
    place: dict[int, int] = {}
    heads = dict.fromkeys(files, 0)
    while heads:
        name = min(heads, key=lambda f: (*keys[f][heads[f]], f))
        place[id(files[name][heads[name]])] = len(place)
        heads[name] += 1
        if heads[name] == len(files[name]):
            del heads[name]
    return place


def _learned_from(
    events: Sequence[Event], placements: Sequence[Placement], max_clock_skew_s: float
) -> dict[int, int]:
    """For each HWM a follower showed a client (KIP-392: a consumer reading
    from a follower), the leader's answer it learned that HWM from, where
    the evidence fixes it. Only the leader advances the HWM; followers learn
    it from its fetch answers (seed 003). A follower's HW is the last answer
    it applied, capped by its log end, or the one its "Follower ... starts"
    line states; after a point that puts it below ``H`` it shows ``H`` only
    once a later answer reached ``H``. Each answer is logged as it is sent,
    so the showing follows that answer, whatever the clocks say.

    Fixed only where nothing else could have raised that HW in between: a
    chain of such points all below ``H`` reaching back to one no order the
    clocks allow puts after the showing (older by more than the skew
    allowance, or the follower's own line, on its own clock), with no
    change of leader and no restart of the follower between it and the
    showing. When the last point below ``H`` is an answer that stands for a
    rising run the pipeline folded (``FetchAnswer.folded``), the answer that
    reached ``H`` may be one left out: the showing then only follows that
    last point below ``H``."""
    #: per follower, the points that set its HW: (index, HW, folded)
    points: dict[int, list[tuple[int, int, int]]] = {}
    showings: list[int] = []
    handovers: list[int] = []
    restarts: dict[int, list[int]] = {}
    for index, event in enumerate(events):
        kind = type(event)
        placement = placements[index]
        if kind is FetchAnswer:
            answer = cast(FetchAnswer, event)
            if answer.error_code == 0 and answer.hwm is not None and answer.hwm >= 0:
                points.setdefault(answer.replica, []).append((index, answer.hwm, answer.folded))
        elif kind is BecomeFollower:
            line = cast(BecomeFollower, event)
            if line.hwm is not None and line.hwm >= 0 and line.origin.observer == line.broker:
                points.setdefault(line.broker, []).append((index, line.hwm, 0))
        elif kind is ClientHwm:
            showing = cast(ClientHwm, event)
            if (
                showing.error_code == 0
                and showing.hwm is not None
                and showing.origin.observer is not None
                and placement.time is not None
            ):
                showings.append(index)
        if placement.leader_after is not None:
            handovers.append(index)
        if placement.starting is not None:
            restarts.setdefault(placement.starting, []).append(index)
    out: dict[int, int] = {}
    for index in showings:
        showing = cast(ClientHwm, events[index])
        follower = cast(int, showing.origin.observer)
        hwm = cast(int, showing.hwm)
        horizon = cast(float, placements[index].time) - max_clock_skew_s
        # the last change of leader or restart of the follower before the
        # showing: a chain may not reach across it
        floor = -1
        for breaks in (handovers, restarts.get(follower, ())):
            b = bisect.bisect_left(breaks, index) - 1
            if b >= 0:
                floor = max(floor, breaks[b])
        mine = points.get(follower, [])
        k = bisect.bisect_left(mine, (index,)) - 1
        reached: int | None = None
        while k >= 0 and mine[k][1] >= hwm:
            reached = mine[k][0]
            if _settled(placements[reached], follower, horizon):
                # nothing to fix (and the walk stays within the allowance,
                # however long the HWM stood still)
                reached = None
                break
            k -= 1
        if reached is None or k < 0:
            continue
        source = mine[k][0] if mine[k][2] else reached
        while k >= 0 and mine[k][0] > floor and mine[k][1] < hwm:
            if _settled(placements[mine[k][0]], follower, horizon):
                out[index] = source
                break
            k -= 1
    return out


def _settled(placement: Placement, clock: object, horizon: float) -> bool:
    """No order the clocks allow puts an event of ``clock`` whose allowance
    begins at ``horizon`` before ``placement``: on that same clock, or
    older than the allowance."""
    return placement.clock == clock or (placement.time is not None and placement.time < horizon)


def _unfenced_after_load(events: Sequence[Event]) -> dict[int, int]:
    """For each unfence of a broker (a BrokerRegistrationChange or Unfence
    record), that broker's own last startup line (restart, recovery, the log
    end it loaded) since its previous unfence. A KRaft broker loads its logs
    before it tells the controller it is ready to be unfenced (its metadata
    publisher starts the log manager, and the broker asks to be unfenced
    only once that first publication is done), so its startup lines came
    before the unfence, whatever the clocks say: Unclean Exclusion is judged
    at the unfence against the log end those lines show."""
    out: dict[int, int] = {}
    last: dict[int, int] = {}
    for index, event in enumerate(events):
        kind = type(event)
        if kind is BrokerFencing:
            fencing = cast(BrokerFencing, event)
            if fencing.fenced == -1:
                line = last.pop(fencing.broker, None)
                if line is not None:
                    out[index] = line
        elif isinstance(event, STARTUP_LINES):
            broker = event.broker
            if event.origin.observer == broker:
                last[broker] = index
    return out


def _fetched_after_drop(events: Sequence[Event]) -> dict[int, int]:
    """For each follower fetch from below the offset of that follower's
    previous fetch, the follower's own line that brought its log end that
    low. A replica's log end falls only by a truncation or by recovery at a
    restart, which its own logs print (``start_floor`` in
    replay/properties.py); its fetch offset is its log end. So when its
    fetches go from ``Y`` down to ``X`` and, between them, one of its own
    lines (``Truncating ... to offset``, recovery, the log end it loaded)
    brought its log end to ``X`` or below, the fetch from ``X`` came after
    the first such line, whatever the clocks say."""
    out: dict[int, int] = {}
    last_fetch: dict[int, int] = {}
    #: per broker, its lines since its last fetch: (index, log end it set)
    drops: dict[int, list[tuple[int, int]]] = {}
    for index, event in enumerate(events):
        kind = type(event)
        if kind is FollowerFetch:
            fetch = cast(FollowerFetch, event)
            previous = last_fetch.get(fetch.replica)
            if previous is not None and fetch.fetch_offset < previous:
                first = next(
                    (i for i, end in drops.get(fetch.replica, ()) if end <= fetch.fetch_offset),
                    None,
                )
                if first is not None:
                    out[index] = first
            last_fetch[fetch.replica] = fetch.fetch_offset
            drops.pop(fetch.replica, None)
        elif kind is LogTruncated or kind is RecoveryTruncation:
            line = cast(LogTruncated | RecoveryTruncation, event)
            if line.origin.observer == line.broker:
                drops.setdefault(line.broker, []).append((index, line.to_offset))
        elif kind is LogLoaded:
            loaded = cast(LogLoaded, event)
            if loaded.origin.observer == loaded.broker:
                drops.setdefault(loaded.broker, []).append((index, loaded.log_end))
    return out


def _fetched_after_epoch_truncation(events: Sequence[Event]) -> dict[int, int]:
    """For a follower that truncated on its leader's epoch answer: its
    fetches that followed, on the leader's clock, the fetch from the offset
    it truncated to. Before fetching, a follower asks OffsetsForLeaderEpoch,
    truncates its log to the answer's end offset ``X`` and fetches from its
    log end, ``X`` (KIP-101, KIP-279; formats-addendum.md 9.6). So when the
    leader's log shows the answer ``X`` to follower ``r``, then ``r``'s
    fetch from ``X``, and ``r``'s own line says it truncated to ``X``, that
    fetch came after the truncation, and so did every later fetch of ``r``
    in the leader's log (the log keeps its order): the first such fetch
    placed after the truncation line never moves before it. (The fetch from
    ``X`` itself may be placed before it by the clocks; moving a later
    fetch past the truncation would then pass nothing of its own clock.)"""
    out: dict[int, int] = {}
    #: per follower: (X, the leader's log, whether it fetched from X there,
    #: the index of its own line that truncated to X)
    pending: dict[int, tuple[int, object, bool, int | None]] = {}
    for index, event in enumerate(events):
        kind = type(event)
        if kind is EpochAnswer:
            answer = cast(EpochAnswer, event)
            if (
                answer.replica is not None
                and answer.end_offset is not None
                and answer.end_offset >= 0
                and answer.error_code == 0
            ):
                pending[answer.replica] = (answer.end_offset, answer.origin.observer, False, None)
        elif kind is LogTruncated:
            line = cast(LogTruncated, event)
            state = pending.get(line.broker)
            if (
                state is not None
                and line.origin.observer == line.broker
                and line.to_offset == state[0]
                and state[3] is None
            ):
                pending[line.broker] = (state[0], state[1], state[2], index)
        elif kind is FollowerFetch:
            fetch = cast(FollowerFetch, event)
            state = pending.get(fetch.replica)
            if state is None or fetch.origin.observer != state[1]:
                continue
            x, leader, fetched_x, truncated = state
            if not fetched_x:
                if fetch.fetch_offset != x:
                    del pending[fetch.replica]  # not the fetch the answer led to
                    continue
                fetched_x = True
                pending[fetch.replica] = (x, leader, True, truncated)
            if truncated is not None and truncated < index:
                out[index] = truncated
                del pending[fetch.replica]
    return out


def may_precede(moved: Placement, other: Placement, max_clock_skew_s: float) -> bool:
    """Could the event placed at ``moved`` have happened just before the
    earlier-placed ``other``? Only when their clocks differ, both have one,
    ``other`` is not older by more than the skew allowance, and no record
    that creates an epoch one of them names lies between them."""
    if moved.time is None or other.time is None or moved.clock == other.clock:
        return False
    if other.time < moved.time - max_clock_skew_s:
        return False
    if moved.metadata_index is not None and other.metadata_index is None:
        # the observation would follow the record: into the epoch it began
        return (
            other.floor <= moved.metadata_index
            and (other.ceiling is None or moved.metadata_index < other.ceiling)
            and (other.follower is None or moved.leader_after not in (other.follower, NO_LEADER))
            and (other.leader_act is None or other.leader_act != moved.leader_before)
            and (moved.starting is None or moved.starting != other.starting)
        )
    if moved.metadata_index is None and other.metadata_index is not None:
        # the observation would precede the record: into the epoch it ended
        return (
            moved.floor <= other.metadata_index
            and (moved.follower is None or other.leader_before not in (moved.follower, NO_LEADER))
            and (moved.leader_act is None or moved.leader_act != other.leader_after)
        )
    return True


def alternative_places(
    placements: Sequence[Placement], max_clock_skew_s: float
) -> list[tuple[int, tuple[int, ...]]]:
    """For each event j, the earlier places i (nearest first) it may move to:
    just before event i, with events i..j-1 after it.

    Bounded: the search walks back from j only while each earlier event may
    be passed, so only events of other clocks inside the skew window are
    candidates, and at most ``MAX_JUMP`` + 1 of them. An event whose nearest
    predecessor is on its own clock, or certainly earlier, or either without
    a clock (the usual case: a broker's file in its own order, or timestamps
    further apart than the allowance) costs one comparison, no search."""
    out: list[tuple[int, tuple[int, ...]]] = []
    previous: Placement | None = None
    for j, moved in enumerate(placements):
        nearest, previous = previous, moved
        if (
            nearest is None
            or moved.time is None
            or nearest.time is None
            or nearest.clock == moved.clock
            or nearest.time < moved.time - max_clock_skew_s
        ):
            continue  # may_precede(moved, nearest) is False
        places: list[int] = []
        stop = max(-1, j - 2 - MAX_JUMP, -1 if moved.after is None else moved.after)
        for i in range(j - 1, stop, -1):
            if not may_precede(moved, placements[i], max_clock_skew_s):
                break
            places.append(i)
        if places:
            out.append((j, tuple(places)))
    return out


S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class OrderDependence:
    """A judgement that changes when ``moved`` happened before ``passed``:
    two lines on different clocks within the skew allowance of each other."""

    passed: Source
    moved: Source
    #: judgements (finding descriptions) only the given order makes
    only_given: tuple[str, ...]
    #: judgements only the other order makes
    only_other: tuple[str, ...]
    #: identities of the findings only the given order makes
    dropped: frozenset[object]

    def reason(self, max_clock_skew_s: float) -> str:
        decided = []
        if self.only_given:
            decided.append(
                "; ".join(self.only_given) + " (found in the order the clocks give, not in the "
                "other)"
            )
        if self.only_other:
            decided.append("; ".join(self.only_other) + " (found only in the other order)")
        return (
            f"whether {self.passed.source_file}:{self.passed.line_no} happened before "
            f"{self.moved.source_file}:{self.moved.line_no} (different clocks, within the "
            f"{max_clock_skew_s:g} s skew allowance of each other) decides "
            f"{' and '.join(decided)}: not stated as fact"
        )


def order_dependences(
    events: Sequence[Event],
    placements: Sequence[Placement],
    initial: S,
    fold: Callable[[S, Event], S],
    judge: Callable[[S], Mapping[object, str]],
    max_clock_skew_s: float,
    alike: Callable[[S, S], bool] = lambda a, b: a == b,
) -> tuple[S, tuple[OrderDependence, ...], bool]:
    """Fold ``events`` in the given order and, in the same pass, every
    alternative order (``alternative_places``); report the judgements that
    differ.

    Returns the history in the given order, the dependences (at most one per
    moved event: the nearest place that changes a judgement), and whether not
    every order was tried (an event with more than ``MAX_JUMP`` places, or
    the pass over its fold budget).

    One pass: an alternative starts from the given history at its place,
    folds the moved event first, then the events it passed, and from there
    follows the given order. As soon as it is ``alike`` the given history it
    is dropped: nothing it could change is left. So is one alike the
    alternative that moves the same event one place less far, once both
    have folded the same events: it would be judged as that one, and the
    nearer place is the one a dependence names. One still different
    ``HORIZON`` events after it rejoined the given order has played out: both
    are judged there and it is dropped (most differences of order are facts
    recorded once, such as which ISR a fetch answer saw, and never fade).
    Those alive at the end are judged there. Memory follows the alternatives
    alive at once; the extra folds are at most ``FOLD_BUDGET`` times the
    events: past that, the alive ones are judged where they stand, no new
    one starts, and the given order is folded to its end."""
    moves = alternative_places(placements, max_clock_skew_s) if placements else []
    truncated = any(len(places) > MAX_JUMP for _, places in moves)
    starts: dict[int, list[tuple[int, int]]] = {}
    for j, places in moves:
        for i in places[:MAX_JUMP]:
            starts.setdefault(i, []).append((i, j))
    budget = FOLD_BUDGET * len(events) + 1000
    # live alternatives: (place, moved event, history so far)
    alive: list[tuple[int, int, S]] = []
    # judged alternatives: (place, moved event, given judgements, theirs)
    judged: list[tuple[int, int, Mapping[object, str], Mapping[object, str]]] = []
    state = initial
    for k, event in enumerate(events):
        if budget >= 0:
            for i, j in starts.get(k, ()):
                moved_first = fold(state, events[j])
                budget -= 1
                # The same move one place farther, started at the step before,
                # has now folded the same events; alike this one, it stays
                # alike, so its judgements are this one's, whose place is
                # nearer: it is dropped (a move past events it commutes with
                # costs two folds per place, not one per event passed).
                for n, (i_far, j_far, far) in enumerate(alive):
                    if j_far == j and i_far == i - 1:
                        if alike(far, moved_first):
                            del alive[n]
                        break
                alive.append((i, j, moved_first))
        state = fold(state, event)
        if not alive:
            continue
        still: list[tuple[int, int, S]] = []
        played_out: list[tuple[int, int, S]] = []
        for i, j, other in alive:
            if k != j:  # the moved event was folded first
                other = fold(other, event)
                budget -= 1
            if k >= j and alike(other, state):
                continue
            if k >= j + HORIZON:
                played_out.append((i, j, other))
            else:
                still.append((i, j, other))
        if budget < 0 and still:
            truncated = True
            played_out.extend(still)
            still = []
        if played_out:
            given_now = judge(state)
            judged.extend((i, j, given_now, judge(other)) for i, j, other in played_out)
        alive = still
    if alive:
        given = judge(state)
        judged.extend((i, j, given, judge(other)) for i, j, other in alive)
    found: dict[int, OrderDependence] = {}
    # nearest place first, one dependence per moved event
    for i, j, given, theirs in sorted(judged, key=lambda a: (a[1], -a[0])):
        if j in found or theirs.keys() == given.keys():
            continue
        found[j] = OrderDependence(
            passed=events[i].origin.source,
            moved=events[j].origin.source,
            only_given=tuple(v for key, v in given.items() if key not in theirs),
            only_other=tuple(v for key, v in theirs.items() if key not in given),
            dropped=frozenset(key for key in given if key not in theirs),
        )
    return state, tuple(found.values()), truncated
