"""Replica logs and controller registrations.

A replica log is kept as its leader-epoch cache: ``[(epoch, start offset)]``
with both strictly increasing, plus the log end offset. Kafka's cache is
exactly the lineage of the log (one entry per epoch that wrote data, plus at
most one empty entry at the end for a leader that has not written yet), so
batches need not be stored: memory stays bounded by the number of epochs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

UNDEFINED = -1
NO_LEADER = -1
NO_LEADER_CHANGE = -2


class Log:
    """One replica's partition log: epoch cache, LEO, flushed offset, local HWM."""

    __slots__ = ("cache", "leo", "flushed", "hwm", "hwm_checkpoint", "kip101")

    def __init__(self, kip101: bool = False) -> None:
        self.cache: list[tuple[int, int]] = []
        self.leo = 0
        self.flushed = 0
        self.hwm = 0
        self.hwm_checkpoint = 0
        #: 0.11-1.1 ``LeaderEpochFileCache.assign``: an epoch not above the
        #: latest is ignored (a follower that failed to truncate appends the
        #: leader's older-epoch batches under its own newer entry, KIP-279)
        self.kip101 = kip101

    # -- epoch cache (LeaderEpochFileCache) ---------------------------------
    def latest_epoch(self) -> int:
        return self.cache[-1][0] if self.cache else UNDEFINED

    def assign(self, epoch: int, start: int) -> None:
        """Add (epoch, start), dropping entries that conflict (``assign``)."""
        if self.cache and self.cache[-1][0] == epoch and self.cache[-1][1] <= start:
            # ``isUpdateNeeded``: the same epoch from a later offset changes
            # nothing (a ZK leader re-leading its epoch after a restart)
            return
        if self.cache and self.cache[-1][0] > epoch:
            if self.kip101:
                return
            raise AssertionError(f"epoch {epoch} assigned after {self.cache[-1]}")
        while self.cache and (self.cache[-1][0] >= epoch or self.cache[-1][1] >= start):
            self.cache.pop()
        self.cache.append((epoch, start))

    def truncate_cache_from_end(self, offset: int) -> None:
        while self.cache and self.cache[-1][1] >= offset:
            self.cache.pop()

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """``endOffsetFor``: (largest epoch <= requested, where it ends)."""
        if epoch == UNDEFINED or not self.cache:
            return UNDEFINED, UNDEFINED
        if epoch == self.cache[-1][0]:
            return epoch, self.leo
        higher = None
        floor = None
        for e, start in self.cache:
            if e <= epoch:
                floor = (e, start)
            elif higher is None:
                higher = (e, start)
        if higher is None:
            return UNDEFINED, UNDEFINED
        if floor is None:
            return epoch, higher[1]
        return floor[0], higher[1]

    def epoch_at(self, offset: int) -> int:
        """The epoch of the record at ``offset`` (UNDEFINED beyond the end)."""
        if offset < 0 or offset >= self.leo:
            return UNDEFINED
        found = UNDEFINED
        for e, start in self.cache:
            if start <= offset:
                found = e
            else:
                break
        return found

    def top_data_epoch(self) -> int:
        return self.epoch_at(self.leo - 1)

    def runs(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """(epoch, from, to) pieces of [start, end) in this log."""
        out = []
        for i, (e, s) in enumerate(self.cache):
            nxt = self.cache[i + 1][1] if i + 1 < len(self.cache) else self.leo
            lo, hi = max(s, start), min(nxt, end)
            if lo < hi:
                out.append((e, lo, hi))
        return out

    # -- data ----------------------------------------------------------------
    def append(self, records: int, epoch: int) -> int:
        base = self.leo
        if not self.cache or self.cache[-1][0] != epoch:
            self.assign(epoch, base)
        self.leo += records
        return base

    def truncate_to(self, offset: int) -> bool:
        """``UnifiedLog.truncateTo``; returns True when records were removed."""
        if offset >= self.leo:
            self.truncate_cache_from_end(self.leo)
            return False
        self.leo = offset
        self.flushed = min(self.flushed, offset)
        self.hwm = min(self.hwm, offset)
        self.hwm_checkpoint = min(self.hwm_checkpoint, offset)
        self.truncate_cache_from_end(offset)
        return True

    def flush(self) -> None:
        self.flushed = self.leo

    def checkpoint_hwm(self) -> None:
        """replication-offset-checkpoint (written every 5 s by default)."""
        self.hwm_checkpoint = self.hwm

    def lose_unflushed(self) -> None:
        """Unclean shutdown with the page cache gone: recover from disk."""
        self.leo = self.flushed
        self.truncate_cache_from_end(self.leo)
        self.hwm = min(self.hwm_checkpoint, self.leo)


@dataclass
class Registration:
    """The controller's PartitionRegistration."""

    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    recovery: int = 0  # leaderRecoveryState: 0 RECOVERED, 1 RECOVERING
    elr: list[int] | None = None  # eligibleLeaderReplicas (kraft-elr only)
    lkelr: list[int] | None = None  # lastKnownElr (kraft-elr only)

    def merge(
        self,
        isr: list[int] | None,
        leader: int,
        recovery: int,
        elr: list[int] | None = None,
        lkelr: list[int] | None = None,
    ) -> Registration:
        """``PartitionRegistration.merge`` (kafka-formats.md 2.5)."""
        return Registration(
            replicas=list(self.replicas),
            isr=list(isr) if isr is not None else list(self.isr),
            leader=self.leader if leader == NO_LEADER_CHANGE else leader,
            leader_epoch=self.leader_epoch if leader == NO_LEADER_CHANGE else self.leader_epoch + 1,
            partition_epoch=self.partition_epoch + 1,
            recovery=self.recovery if recovery == -1 else recovery,
            elr=list(elr) if elr is not None else self.elr,
            lkelr=list(lkelr) if lkelr is not None else self.lkelr,
        )


@dataclass
class BrokerReg:
    """The controller's view of one broker."""

    epoch: int
    fenced: bool = True
    shutting_down: bool = False
    generation: int = 0


@dataclass
class FollowerState:
    """What a leader knows of one follower (``Replica`` state)."""

    fetch_offset: int = -1
    last_fetch_ms: int = -1
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = -1
    logged_offset: int = -1  # zk-hw: its last fetch offset in the request log


@dataclass
class Pending:
    """An acks=all produce waiting for the HWM."""

    client: int
    received_ms: int
    base: int
    records: int
    epoch: int

    @property
    def end(self) -> int:
        return self.base + self.records


@dataclass
class ReplicaState:
    """One broker's replica of one partition."""

    log: Log = field(default_factory=Log)
    # the registration as this broker last applied it
    leader: int = NO_LEADER
    leader_epoch: int = -1
    isr: list[int] = field(default_factory=list)
    partition_epoch: int = -1
    recovery: int = 0
    fresh: bool = True  # no Partition object yet (start, or restart): no previous leader
    # leader-side state
    is_leader: bool = False
    start_offset: int = 0  # Leader Epoch Start Offset of the epoch it leads
    exposed_hwm: int = 0  # the highest HWM it put in a fetch answer in that epoch
    #: when each rise of exposed_hwm happened (ms, value): the latest one older
    #: than the clock-skew allowance is kept, the ones after it
    exposed_rises: list[tuple[int, int]] = field(default_factory=list)
    followers: dict[int, FollowerState] = field(default_factory=dict)
    pending: list[Pending] = field(default_factory=list)
    #: 1.1 / 2.4 follower: an OffsetsForLeaderEpoch round is due before fetching
    truncating: bool = False
    #: restarted with startup lines on: the next metadata apply prints "Log loaded"
    reloaded: bool = False
