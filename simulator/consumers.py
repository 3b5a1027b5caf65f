"""Consumers: the high watermark the brokers showed to clients (issue 12, part 1).

One consumer per partition (``Evidence.consumers``), read_uncommitted, with
committed-offset-free ``assign`` semantics: it starts at offset 0 and reads up
to the high watermark. Every ``consumer_ms`` it

1. after a leader change, 2.3+ clients (the 2.4+ versions here) validate their
   position with OffsetsForLeaderEpoch (KIP-320, replicaId -1,
   formats-addendum.md 11.1): an end offset below the position means the log
   was truncated under them, and the position moves back to it;
2. after OFFSET_OUT_OF_RANGE, reset with ListOffsets LATEST (the HWM);
3. fetch from the leader (or, with ``consumer_from_follower``, from the first
   in-sync follower, KIP-392: its own HWM), and get every record below the
   HWM the answering replica exposed;
4. every ``list_offsets_ms``, also ask ListOffsets LATEST (an ``endOffsets``
   call of a lag monitor): the answer is the leader's HWM.

Each answer is an exposure of the HWM, told to the truth (``Truth.exposure``);
in 0.10.1, whose request log prints no answers, only the fetch offsets show
(a consumer's fetch offset was below the HWM of the answer that gave it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator import artefacts as art
from simulator.model import UNDEFINED
from simulator.textlog import StructRequestLog
from simulator.truth import Key

if TYPE_CHECKING:
    from simulator.cluster import Broker, Cluster

#: a consumer's fetch takes at most this many records (max.partition.fetch.bytes)
MAX_RECORDS = 10000


@dataclass
class Consumer:
    id: int
    key: Key
    position: int = 0
    #: the leader epoch of its metadata when it last fetched
    epoch: int = -1
    #: the leader epoch of the last record it consumed (KIP-320's offset epoch)
    offset_epoch: int = -1
    #: the position came from an answer's HWM (so it is below an exposed HWM)
    from_answer: bool = True
    reset: bool = False
    next_list_ms: int = 0
    #: 0.10.1: its last fetch line, as (server, the epoch the server led then
    #: or None, fetch offset)
    logged: tuple[int, int | None, int] | None = None


class Consumers:
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.consumers: list[Consumer] = []

    def start(self) -> None:
        ev = self.c.evidence
        for n, key in enumerate(sorted(self.c.regs), start=1):
            consumer = Consumer(n, key, next_list_ms=ev.list_offsets_ms)
            self.consumers.append(consumer)
            self.c.at(250 + (37 * n) % 500, self.tick, consumer)

    # -- the loop ------------------------------------------------------------------
    def tick(self, consumer: Consumer) -> None:
        c = self.c
        if c.stopped:
            return
        c.at(c.now + c.evidence.consumer_ms, self.tick, consumer)
        reg = c.regs[consumer.key]
        if reg.leader < 0:
            return
        leader = c.brokers[reg.leader]
        if not leader.reachable or not leader.registered:
            return  # the connection fails: nothing is logged
        epoch = reg.leader_epoch  # the client's metadata
        changed = consumer.epoch >= 0 and epoch > consumer.epoch and consumer.offset_epoch >= 0
        if changed and c.version.consumer_validates and not self.validate(consumer, leader, epoch):
            return
        consumer.epoch = epoch
        if consumer.reset:
            self.list_offsets(consumer, leader, epoch)
            if consumer.reset:
                return
        elif c.evidence.list_offsets_ms and c.now >= consumer.next_list_ms:
            consumer.next_list_ms = c.now + c.evidence.list_offsets_ms
            self.list_offsets(consumer, leader, epoch)
        self.fetch(consumer, self.server(consumer.key, reg.isr, leader, epoch), epoch)

    def server(self, key: Key, isr: list[int], leader: Broker, epoch: int) -> Broker:
        """The replica the consumer reads from: the leader, or (KIP-392) the first
        in-sync follower that is up and follows the same epoch."""
        if not self.c.evidence.consumer_from_follower:
            return leader
        for r in isr:
            b = self.c.brokers[r]
            if r == leader.id or not b.reachable or not b.registered:
                continue
            if b.replicas[key].leader_epoch == epoch:
                return b
        return leader

    # -- requests ------------------------------------------------------------------
    def validate(self, consumer: Consumer, leader: Broker, epoch: int) -> bool:
        """OffsetsForLeaderEpoch after a leader change; False: retry next time."""
        c, key = self.c, consumer.key
        lrs = leader.replicas[key]
        error, answered, end = art.NONE, UNDEFINED, UNDEFINED
        if not lrs.is_leader:
            error = art.NOT_LEADER_OR_FOLLOWER
        elif epoch < lrs.leader_epoch:
            error = art.FENCED_LEADER_EPOCH
        elif epoch > lrs.leader_epoch:
            error = art.UNKNOWN_LEADER_EPOCH
        else:
            answered, end = lrs.log.end_offset_for(consumer.offset_epoch)
        entry = (key[0], key[1], epoch, consumer.offset_epoch, error, answered, end)
        assert not isinstance(leader.log, art.TextRequestLog)  # 2.3+ clients only
        leader.log.offsets_for_leader_epoch(c.now, -1, consumer.id, [entry])
        if error != art.NONE:
            return False
        if end != UNDEFINED and end < consumer.position:
            # the log was truncated under the consumer: it goes back to the
            # first offset that diverges (SubscriptionState.maybeCompleteValidation)
            consumer.position = end
            consumer.from_answer = False
        return True

    def list_offsets(self, consumer: Consumer, leader: Broker, epoch: int) -> None:
        c, key = self.c, consumer.key
        lrs = leader.replicas[key]
        error = art.NONE
        if not lrs.is_leader:
            error = art.NOT_LEADER_OR_FOLLOWER
        elif epoch != lrs.leader_epoch:
            error = (
                art.FENCED_LEADER_EPOCH if epoch < lrs.leader_epoch else art.UNKNOWN_LEADER_EPOCH
            )
        hwm = lrs.log.hwm
        log = leader.log
        if isinstance(log, art.RequestLog):
            log.list_offsets(
                c.now,
                -1,
                consumer.id,
                key[0],
                key[1],
                epoch,
                error,
                hwm,
                lrs.leader_epoch,
                c.version.list_offsets_version,
            )
        else:
            log.list_offsets(
                c.now, -1, consumer.id, key[0], key[1], epoch, error, hwm, lrs.leader_epoch
            )
        if error != art.NONE:
            return
        c.truth.exposure(key, leader.id, lrs.leader_epoch, hwm)
        if consumer.reset:
            consumer.position = hwm
            consumer.offset_epoch = lrs.log.epoch_at(hwm - 1)
            consumer.from_answer = True
            consumer.reset = False

    def fetch(self, consumer: Consumer, server: Broker, epoch: int) -> None:
        c, key = self.c, consumer.key
        rs = server.replicas[key]
        offset = consumer.position
        error, hwm, records = art.NONE, -1, 0
        if server.id == c.regs[key].leader and not rs.is_leader:
            error = art.NOT_LEADER_OR_FOLLOWER  # it has not applied the change yet
        elif epoch < rs.leader_epoch:
            error = art.FENCED_LEADER_EPOCH
        elif epoch > rs.leader_epoch:
            error = art.UNKNOWN_LEADER_EPOCH
        elif offset > rs.log.leo:
            error = art.OFFSET_OUT_OF_RANGE
        else:
            hwm = rs.log.hwm
            # read_uncommitted: up to the HWM; at or beyond it an empty answer
            records = max(0, min(hwm, offset + MAX_RECORDS) - offset)
        wait = 0.0 if records or error != art.NONE else 499.8
        log = server.log
        if isinstance(log, art.TextRequestLog):
            # 0.10.1 logs the request when its answer is sent (no answer printed)
            shown = consumer.from_answer
            if records or error != art.NONE:
                self._logged_010(server, consumer, offset, server.incarnation, shown, 0)
            else:
                args = (server, consumer, offset, server.incarnation, shown, 500)
                c.at(c.now + 500, self._logged_010, *args)
        elif isinstance(log, StructRequestLog):
            log.consumer_fetch(
                c.now,
                consumer.id,
                key[0],
                key[1],
                epoch,
                offset,
                error,
                hwm,
                records,
                rs.log.leo,
                wait,
            )
        else:
            ref = key[0] if c.zk or c.version.before("3.0") else c.topic_ids[key[0]]
            log.consumer_fetch(
                c.now,
                consumer.id,
                ref,
                key[1],
                epoch,
                offset,
                error,
                hwm,
                records,
                wait,
                c.version.fetch_version,
            )
        if error == art.OFFSET_OUT_OF_RANGE:
            consumer.reset = True
            return
        if error != art.NONE:
            return
        c.truth.exposure(key, server.id, rs.leader_epoch, hwm)
        if records:
            consumer.position = offset + records
            consumer.offset_epoch = rs.log.epoch_at(consumer.position - 1)
            consumer.from_answer = True

    def _logged_010(
        self,
        server: Broker,
        consumer: Consumer,
        offset: int,
        incarnation: int,
        shown: bool,
        waited_ms: int,
    ) -> None:
        """0.10.1: the fetch line once the answer is sent (the broker still up).
        ``shown``: the offset came from answers (below a HWM they exposed).

        The line prints the position, not the answer: what the artefacts show
        is an advance. When the consumer's previous line was on the same
        server, leading the same epoch, at a lower offset, that leader's
        answer in between handed it the records up to this offset, all below
        the HWM it exposed; a position alone shows nothing (it may come from
        a ListOffsets answer the line does not print, or from another leader)."""
        c = self.c
        if server.incarnation != incarnation or not server.reachable:
            return
        assert isinstance(server.log, art.TextRequestLog)
        key = consumer.key
        server.log.consumer_fetch(c.now, consumer.id, key[0], key[1], offset, waited_ms)
        rs = server.replicas[key]
        led = rs.leader_epoch if rs.is_leader else None
        last, consumer.logged = consumer.logged, (server.id, led, offset)
        if (
            shown
            and led is not None
            and last is not None
            and last[:2] == (server.id, led)
            and offset > last[2]
        ):
            c.truth.fetch_mark(consumer.key, offset)
