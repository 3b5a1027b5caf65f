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
   an observation with no clock (a checkpoint file) describes the end.

A placement that only the clock decides, within ``max_clock_skew_s`` of a
metadata record, is not fixed by the evidence; such placements are counted so
that a judgement depending on them can say so.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import datetime

from replay.types import (
    METADATA_EVENTS,
    NO_LEADER_CHANGE,
    BecomeFollower,
    BecomeLeader,
    Event,
    FollowerFetch,
    LeaderAndIsr,
    PartitionChangeRecord,
    PartitionRecord,
)


def named_epoch(event: Event) -> int | None:
    """The leader epoch an observation says its broker knew of."""
    if isinstance(event, FollowerFetch):
        return event.current_leader_epoch
    if isinstance(event, BecomeLeader | BecomeFollower):
        return event.leader_epoch
    return None


@dataclass(frozen=True, slots=True)
class Ordered:
    events: tuple[Event, ...]
    #: observations whose place among metadata records only a skewed clock gives
    clock_placed: int
    #: metadata records dropped as copies of one already seen
    duplicates: int


def _payload(event: Event) -> tuple[object, ...]:
    return tuple(getattr(event, f.name) for f in fields(event) if f.name != "origin")


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _controller_order(event: Event) -> tuple[object, ...]:
    """KRaft: the metadata log's offsets. ZooKeeper era: a partition's leader
    epoch and zkVersion / partition epoch only grow, so they order the
    controller's decisions; the clock breaks what they leave tied."""
    origin = event.origin
    if isinstance(event, LeaderAndIsr):
        version = event.partition_epoch if event.partition_epoch is not None else -1
        return (
            1,
            event.leader_epoch,
            version,
            _ts(origin.time) or 0.0,
            origin.source.source_file,
            origin.seq,
        )
    offset = origin.metadata_offset
    return (
        0 if offset is not None else 2,
        offset or 0,
        0,
        0.0,
        origin.source.source_file,
        origin.seq,
    )


def order_events(events: Iterable[Event], max_clock_skew_s: float = 2.0) -> Ordered:
    metadata: list[Event] = []
    observed: list[Event] = []
    for event in events:
        (metadata if isinstance(event, METADATA_EVENTS) else observed).append(event)

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
    duplicates = len(metadata) - len(kept)

    # Where each leader epoch was created, and the controller's clock per record.
    created_at: dict[int, int] = {}
    epoch: int | None = None
    clock: list[float] = []
    last = float("-inf")
    for index, event in enumerate(kept):
        if isinstance(event, PartitionRecord | LeaderAndIsr):
            epoch = event.leader_epoch
            created_at.setdefault(epoch, index)
        elif (
            isinstance(event, PartitionChangeRecord)
            and event.leader != NO_LEADER_CHANGE
            and epoch is not None
        ):
            epoch += 1
            created_at.setdefault(epoch, index)
        t = _ts(event.origin.time)
        last = max(last, t) if t is not None else last
        clock.append(last)
    known_epochs = sorted(created_at)

    def floor_for(named: int | None) -> int:
        if named is None or not known_epochs:
            return 0
        i = bisect.bisect_right(known_epochs, named) - 1
        return 0 if i < 0 else created_at[known_epochs[i]] + 1

    by_observer: dict[int | None, list[Event]] = {}
    for event in observed:
        by_observer.setdefault(event.origin.observer, []).append(event)

    placed: list[tuple[tuple[object, ...], Event]] = []
    clock_placed = 0
    for observer, items in by_observer.items():
        items.sort(
            key=lambda e: (
                _ts(e.origin.time) is None,
                _ts(e.origin.time) or 0.0,
                e.origin.source.source_file,
                e.origin.seq,
            )
        )
        named: int | None = None
        for event in items:
            epoch = named_epoch(event)
            if epoch is not None and epoch >= 0:
                named = max(named or 0, epoch)
            floor = floor_for(named)
            t = _ts(event.origin.time)
            if t is None:
                # No clock at all (checkpoint files): a picture of the end.
                pos = len(kept)
            else:
                by_clock = bisect.bisect_right(clock, t)
                pos = max(floor, by_clock)
                early = max(floor, bisect.bisect_right(clock, t - max_clock_skew_s))
                late = max(floor, bisect.bisect_right(clock, t + max_clock_skew_s))
                if early != late:
                    clock_placed += 1
            key = (
                pos,
                0,
                t if t is not None else float("inf"),
                observer if observer is not None else -1,
                event.origin.source.source_file,
                event.origin.seq,
            )
            placed.append((key, event))

    for index, event in enumerate(kept):
        placed.append(((index, 1, 0.0, -1, "", 0), event))
    placed.sort(key=lambda item: item[0])
    return Ordered(tuple(e for _, e in placed), clock_placed, duplicates)
