"""The discrete-event model of a KRaft (3.6, MV >= 3.6) cluster.

One controller, brokers, producers. Time is an integer millisecond clock; the
event queue is ordered by (time, insertion order) so a seed fixes every byte.

Protocol rules implemented (seed 003 sections 2.2-2.10, kafka-formats.md 2.5,
2.6):

* registrations change only through PartitionChangeRecords (``merge``);
  ISR shrink/expand never bump the leader epoch;
* ONLINE elections keep a valid leader, else take the first replica in replica
  order that is in the ISR and unfenced; with nobody, ``leader: -1`` and the
  ISR untouched; UNCLEAN only through an explicit ElectLeaders fault;
* follower fetch with lastFetchedEpoch validation and divergingEpoch; follower
  truncation the way ``AbstractFetcherThread`` computes it;
* leader HWM = min(leader LEO, ISR followers' fetch offsets), never backwards
  within a leadership; follower HWM = min(LEO, answered HWM);
* ISR shrink on ``replica.lag.time.max.ms``, expansion when the follower has
  reached the HWM and the epoch start offset in the current epoch;
* produce acks 0 / 1 / all and min.insync.replicas;
* broker epochs, session-timeout fencing, controlled shutdown (flush),
  unclean shutdown (unflushed data lost), restart, network partition, slow
  or paused follower fetching;
* a zombie leader: a broker cut off from the controller and the other brokers
  that producers still reach (``isolate_from_cluster``, ``produce_to``): it
  keeps acknowledging in the epoch it last knew after the controller fenced it;
* rule-breaking mutations (``Spec.mutations``): a lagging follower admitted
  to the ISR, acks=all acknowledged under min.insync.replicas.

zk-hw (0.10.1) logs a follower's fetch when its answer is sent: at once when
it carries records, else when the long poll expires (maxWait, 500 ms), and
never when either end drops the connection first (``_late_fetch_line``). A
long poll is modelled as expiring at maxWait: data arriving meanwhile is
fetched by the next fetch.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator import artefacts as art
from simulator import logs as lg
from simulator import oldlogs as old
from simulator import startup, versions
from simulator.consumers import Consumers
from simulator.describe import Describe
from simulator.model import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    UNDEFINED,
    BrokerReg,
    FollowerState,
    Log,
    Pending,
    Registration,
    ReplicaState,
)
from simulator.sinks import Output
from simulator.spec import ZK_ERAS, ProducerSpec, Spec
from simulator.textlog import StructRequestLog
from simulator.truth import SKEW_MS, Key, Truth

PRODUCE_TIMEOUT_MS = 30000
ERROR_NAMES = {
    art.NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_FOR_PARTITION",
    art.UNKNOWN_LEADER_EPOCH: "UNKNOWN_LEADER_EPOCH",
}


def end_offset_v0(log: Log, epoch: int) -> int:
    """1.1's ``LeaderEpochFileCache.endOffsetFor`` (KIP-101, before KIP-279): the
    log end for the latest epoch, else the start of the first later epoch, and
    an undefined offset for an epoch below the first entry or with none after."""
    if epoch == UNDEFINED or not log.cache:
        return UNDEFINED
    if epoch == log.cache[-1][0]:
        return log.leo
    later = [start for e, start in log.cache if e > epoch]
    if not later or epoch < log.cache[0][0]:
        return UNDEFINED
    return later[0]


def lg_tp(key: Key) -> str:
    return f"{key[0]}-{key[1]}"


class Broker:
    def __init__(
        self,
        bid: int,
        log: art.RequestLog | art.TextRequestLog | StructRequestLog,
        flush_ms: int | None,
        logs: lg.BrokerLogs,
    ) -> None:
        self.id = bid
        self.up = True
        self.isolated = False
        # cut off from the controller and the other brokers, yet producers
        # still reach it (a zombie leader)
        self.clients_reach = False
        # + 1 whenever its connections drop (down, bounce, cut off)
        self.incarnation = 0
        self.registered = False  # has a registration and applied metadata
        self.fetch_paused = False
        self.fetch_factor = 1
        self.flush_ms = flush_ms
        self.replicas: dict[Key, ReplicaState] = {}
        self.log = log
        self.logs = logs
        self.sessions = 0
        # KIP-966: a controlled shutdown writes the broker epoch to a file; a
        # registration without it is an unclean shutdown
        self.clean_file = True

    @property
    def reachable(self) -> bool:
        return self.up and not self.isolated


class Cluster:
    def __init__(self, spec: Spec, out: Path, seed: int, truth: Truth, check: bool = False) -> None:
        self.spec = spec
        self.out = out
        self.rng = random.Random(seed)
        self.truth = truth
        self.check = check
        self.now = -300000
        self._queue: list[tuple[int, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = 0
        self.events = 0
        self.zk = spec.era in ZK_ERAS
        self.hw_era = spec.era == "zk-hw"
        ev = spec.evidence
        self.evidence = ev
        #: the Kafka version whose texts every artefact uses (simulator/versions.py)
        self.version = versions.resolve(spec.era, ev.version)
        #: a pre-2.8 template set (formats-addendum.md 9) chosen with ``version``
        self.old = ev.version is not None and self.version.before("2.8")
        #: 1.1 and 2.4: followers truncate after an OffsetsForLeaderEpoch answer
        #: when they start following, not from a fetch answer (KIP-101, KIP-279)
        self.epoch_requests = (
            self.zk and self.version.epochs and not self.version.truncation_on_fetch
        )
        output = Output(ev.write, ev.excerpts, ev.excerpts_only)
        self.output = output
        self.dump: art.MetadataDump | art.NullDump
        if self.zk or not ev.writes("metadata"):
            self.dump = art.NullDump()
        else:
            self.dump = art.MetadataDump(out / "controller" / "metadata.log.txt")
        self.brokers: dict[int, Broker] = {}
        for b in spec.brokers:
            flush = spec.flush_ms.get(b, spec.default_flush_ms)
            folder = out / f"broker-{b}"
            path = folder / "kafka-request.log"
            request_log: art.RequestLog | art.TextRequestLog | StructRequestLog
            broker_logs: lg.BrokerLogs
            if self.hw_era:
                request_log = art.TextRequestLog(path, b, output)
            elif self.zk and not self.version.json_request_log:
                request_log = StructRequestLog(path, b, self.version, output)
            else:
                request_log = art.RequestLog(path, b, kafka28=self.zk, output=output)
            if self.old:
                broker_logs = old.OldBrokerLogs(folder, b, self.version, output)
            elif self.zk:
                broker_logs = lg.ZkBrokerLogs(folder, b, spec.era, output)
            else:
                broker_logs = lg.BrokerLogs(folder, b, output)
            self.brokers[b] = Broker(b, request_log, flush, broker_logs)
        self.elr = spec.era == "kraft-elr"
        if self.zk:
            self.zclog = (
                old.OldControllerLogs(out / "controller", self.version, output)
                if self.old
                else lg.ZkControllerLogs(out / "controller", output)
            )
            self.controller: int | None = min(spec.brokers)
            self.controller_epoch = 1
            #: the controller epoch stored with each partition's LeaderAndIsr znode
            self.zk_cepoch: dict[Key, int] = {}
            #: per broker: (the event that sent its last LeaderAndIsr, its correlation id)
            self.zk_sent: dict[int, tuple[int, int]] = {}
        else:
            self.clog = lg.ControllerLog(out / "controller" / "controller.log", output)
        self.breg: dict[int, BrokerReg] = {}
        self.regs: dict[Key, Registration] = {}
        self.topic_ids: dict[str, str] = {}
        self.min_isr: dict[str, int] = {}
        self.fence_due: dict[int, int] = {}
        self.producing: dict[Key, bool] = {}
        self.leader_epochs_seen: dict[Key, int] = {}
        self.violations: list[str] = truth.violations
        self.stopped = False
        #: brokers that stopped themselves (a FATAL in the fetcher): an operator
        #: starts them again at the end of the fault schedule
        self.halted: set[int] = set()
        self.describe: Describe | None = None
        #: 1.1: KIP-101 without KIP-279 (``model.Log.kip101``)
        self.kip101 = self.old and self.version.epochs and self.version.before("2.0")

    # -- event queue -----------------------------------------------------------
    def at(self, ms: int, fn: Callable[..., None], *args: Any) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (ms, self._seq, fn, args))

    def run_until(self, end_ms: int) -> None:
        while self._queue and self._queue[0][0] <= end_ms:
            ms, _, fn, args = heapq.heappop(self._queue)
            self.now = max(self.now, ms)
            fn(*args)
            self.events += 1
            if self.check:
                self.check_invariants()
        self.now = max(self.now, end_ms)

    # -- controller --------------------------------------------------------------
    def commit(self, records: list[dict[str, Any]], changed: list[Key]) -> None:
        """Write one metadata batch; every reachable registered broker applies it."""
        self.dump.batch(self.now, records)
        for b in self.brokers.values():
            if b.reachable and b.registered:
                for key in changed:
                    if key in b.replicas:
                        self.apply(b, key)

    def change(
        self,
        records: list[dict[str, Any]],
        changed: list[Key],
        key: Key,
        isr: list[int] | None = None,
        leader: int = NO_LEADER_CHANGE,
        recovery: int = -1,
        elr: list[int] | None = None,
        lkelr: list[int] | None = None,
        unclean: bool = False,
    ) -> None:
        """Build one PartitionChangeRecord with only the fields that changed."""
        reg = self.regs[key]
        if isr is not None and isr == reg.isr:
            isr = None
        if leader != NO_LEADER_CHANGE and leader == reg.leader:
            leader = NO_LEADER_CHANGE
        if recovery != -1 and recovery == reg.recovery:
            recovery = -1
        if elr is not None and elr == (reg.elr or []):
            elr = None
        if lkelr is not None and lkelr == (reg.lkelr or []):
            lkelr = None
        if (
            isr is None
            and leader == NO_LEADER_CHANGE
            and recovery == -1
            and elr is None
            and lkelr is None
        ):
            return
        topic_id = self.topic_ids[key[0]]
        records.append(
            art.partition_change(
                topic_id, key[1], isr, leader, recovery, elr, lkelr, 2 if self.elr else 0
            )
        )
        new = reg.merge(isr, leader, recovery, elr, lkelr)
        if unclean and leader != NO_LEADER_CHANGE:
            self.clog.unclean_leader(self.now, topic_id, key[1], leader)
        # electionWasClean: no leader, or a leader from the previous ISR (or ELR)
        if new.leader != NO_LEADER and new.leader not in reg.isr + (reg.elr or []):
            diff = lg.registration_diff(reg, new)
            self.clog.unclean_change(self.now, key[0], key[1], topic_id, diff)
        if leader != NO_LEADER_CHANGE:
            # an ELR election is clean (docs/findings.md): the previous ELR counts
            self._epoch_began(
                key, new.leader_epoch, leader, reg.isr + (reg.elr or []), recovery == 1
            )
        for r in new.isr:
            if r not in reg.isr:
                self.truth.caught_up(key, r)
        self.regs[key] = new
        self._isr_in_force(key)
        if key not in changed:
            changed.append(key)

    def _isr_in_force(self, key: Key) -> None:
        """Tell the truth whether the registration now in force is under min ISR."""
        self.truth.isr_in_force(key, len(self.regs[key].isr) < self.min_isr[key[0]], self.now)

    def mutated(self, name: str) -> bool:
        """A rule-breaking mutation strikes on this occasion (``Spec.mutations``)."""
        rate = self.spec.mutations.get(name, 0.0)
        return rate >= 1.0 or (rate > 0.0 and self.rng.random() < rate)

    def acceptable(self, b: int) -> bool:
        r = self.breg.get(b)
        return r is not None and not r.fenced and not r.shutting_down

    def elect(self, reg: Registration, isr: list[int], unclean: bool = False) -> tuple[int, bool]:
        if reg.leader in isr and self.acceptable(reg.leader):
            return reg.leader, False
        for r in reg.replicas:
            if r in isr and self.acceptable(r):
                return r, False
        if unclean:
            for r in reg.replicas:
                if self.acceptable(r):
                    return r, True
        return NO_LEADER, False

    # -- kraft-elr: KIP-966 (kafka-formats.md 2.6, seed 002 5.2-5.3) --------------
    def _elr_targets(
        self, key: Key, reg: Registration, target_isr: list[int], unclean_shutdown: tuple[int, ...]
    ) -> tuple[list[int], list[int]]:
        """``maybePopulateTargetElr``: (ELR, LastKnownELR) for a target ISR."""
        if len(target_isr) >= self.min_isr[key[0]]:
            return [], []  # cases E, F, G: the HWM can advance, nobody is kept
        candidates = set(reg.elr or []) | set(reg.isr)  # cases A, C
        elr = sorted(r for r in candidates if r not in target_isr and r not in unclean_shutdown)
        candidates |= set(reg.lkelr or [])
        lkelr = sorted(r for r in candidates if r not in target_isr and r not in elr)
        return elr, lkelr

    def _elect_elr(
        self,
        key: Key,
        reg: Registration,
        isr: list[int],
        elr: list[int],
        lkelr: list[int],
        unclean: bool,
    ) -> tuple[int, str]:
        """ISR, else an unfenced ELR member (clean), else balanced unclean recovery
        from the LastKnownELR once every member answers (seed 002 5.3.1, 5.3.3),
        else (ElectLeaders UNCLEAN only) the first acceptable replica."""

        def valid(r: int) -> bool:
            return (r in isr or (not isr and r in elr)) and self.acceptable(r)

        if reg.leader >= 0 and valid(reg.leader):
            return reg.leader, "keep"
        for r in reg.replicas:
            if valid(r):
                return r, "isr" if r in isr else "elr"
        if not isr and not elr and lkelr and all(self.acceptable(r) for r in lkelr):

            def log_info(r: int) -> tuple[int, int, int]:
                log = self.brokers[r].replicas[key].log  # GetReplicaLogInfo
                return log.latest_epoch(), log.leo, -reg.replicas.index(r)

            return max(lkelr, key=log_info), "recovery"
        if unclean:
            for r in reg.replicas:
                if self.acceptable(r):
                    return r, "unclean"
        return NO_LEADER, "none"

    def _build(
        self,
        records: list[dict[str, Any]],
        changed: list[Key],
        key: Key,
        target_isr: list[int],
        recovery: int = -1,
        unclean: bool = False,
        unclean_shutdown: tuple[int, ...] = (),
    ) -> None:
        """The kraft-elr ``PartitionChangeBuilder.build``."""
        reg = self.regs[key]
        isr = list(target_isr)
        elr, lkelr = self._elr_targets(key, reg, isr, unclean_shutdown)
        chosen, how = self._elect_elr(key, reg, isr, elr, lkelr, unclean)
        leader = NO_LEADER_CHANGE
        forced = False
        if chosen != reg.leader:
            leader = chosen
            if how == "elr":  # case B: from the ELR into the ISR
                isr = [chosen]
                elr = [r for r in elr if r != chosen]
            elif how in ("recovery", "unclean"):
                isr = [chosen]
                recovery = 1 if reg.recovery != 1 else -1
                elr, lkelr = [], []  # an unclean election clears both
                forced = True
        self.change(records, changed, key, isr, leader, recovery, elr, lkelr, unclean=forced)

    def _leave(self, b: int, records: list[dict[str, Any]], changed: list[Key]) -> None:
        """``generateLeaderAndIsrUpdates`` for a fenced or shutting-down broker."""
        if self.zk:
            self._zk_leave(b, changed)
            return
        for key, reg in self.regs.items():
            if b not in reg.replicas:
                continue
            if self.elr:
                self._build(records, changed, key, [r for r in reg.isr if r != b])
                continue
            isr = [r for r in reg.isr if r != b] or list(reg.isr)
            leader = NO_LEADER_CHANGE
            if reg.leader == b or reg.leader == NO_LEADER:
                chosen, _ = self.elect(reg, isr)
                leader = chosen
            self.change(records, changed, key, isr=isr, leader=leader)

    def fence(self, b: int) -> None:
        reg = self.breg[b]
        if reg.fenced:
            return
        reg.fenced = True
        records = [art.broker_change(b, reg.epoch, fenced=1)]
        changed: list[Key] = []
        self._leave(b, records, changed)
        self.commit(records, changed)

    def unfence(self, b: int, generation: int) -> None:
        reg = self.breg.get(b)
        broker = self.brokers[b]
        if reg is None or not reg.fenced or reg.generation != generation or not broker.reachable:
            return
        reg.fenced = False
        reg.shutting_down = False
        records = [art.broker_change(b, reg.epoch, fenced=-1)]
        changed: list[Key] = []
        if self.zk:
            self._zk_startup(b, changed)
            self.commit(records, changed)
            return
        for key, preg in self.regs.items():
            if self.elr and preg.leader == NO_LEADER:
                self._build(records, changed, key, preg.isr)
            elif preg.leader == NO_LEADER and b in preg.replicas:
                chosen, _ = self.elect(preg, preg.isr)
                self.change(records, changed, key, leader=chosen)
        self.commit(records, changed)

    def register(self, b: int) -> None:
        """A (re)started broker registers: a new broker epoch, fenced."""
        old = self.breg.get(b)
        generation = 0 if old is None else old.generation + 1
        epoch = self.dump.offset  # a broker epoch is its registration's offset
        self.breg[b] = BrokerReg(epoch=epoch, fenced=True, generation=generation)
        broker = self.brokers[b]
        records = [art.register_broker(b, epoch, generation, self.elr)]
        changed: list[Key] = []
        unclean = self.elr and not broker.clean_file
        if unclean and not self.mutated("unclean_kept_in_elr"):
            # handleBrokerUncleanShutdown: out of every ELR, into the LastKnownELR
            for key, reg in self.regs.items():
                if b in (reg.elr or []):
                    self._build(records, changed, key, reg.isr, unclean_shutdown=(b,))
        broker.clean_file = False  # read at start-up; written again by a controlled shutdown
        self.commit(records, changed)
        if unclean:
            # the mutation left it a leader candidate (seed 002 5.2: it must not be)
            for key, reg in self.regs.items():
                if b in (reg.elr or []):
                    self.truth.unclean_member(key, b, reg.leader_epoch, "elr")
        broker.registered = True
        if self.zk:
            # a ZK registration is live at once: onBrokerStartup elects, then
            # sends the broker LeaderAndIsr for its partitions
            self.unfence(b, generation)
            for key in broker.replicas:
                self.apply(broker, key)
            return
        for key in broker.replicas:
            self.apply(broker, key)
        self.at(self.now + self.spec.unfence_ms, self.unfence, b, generation)

    def alter_partition(self, b: Broker, key: Key, isr: list[int], recovery: int) -> bool:
        """AlterPartition from the leader; the controller answers at once."""
        if not b.reachable:
            return False
        reg = self.regs[key]
        rs = b.replicas[key]
        if reg.leader != b.id or reg.leader_epoch != rs.leader_epoch:
            return False
        if reg.partition_epoch != rs.partition_epoch:
            return False
        if any(r not in reg.isr and not self.acceptable(r) for r in isr):
            return False
        if self.zk and self.controller is None:
            return False  # AlterIsr needs a controller; the leader retries
        records: list[dict[str, Any]] = []
        changed: list[Key] = []
        old_isr = list(reg.isr)
        if self.elr:
            self._build(records, changed, key, isr, recovery=recovery)
        elif self.zk:
            # 2.8 AlterIsr / <= 2.7 the leader's own ZK write: zkVersion + 1 only
            self.zk_change(changed, key, isr=isr, from_state="OnlinePartition", by_leader=True)
        else:
            self.change(records, changed, key, isr=isr, recovery=recovery)
        self.commit(records, changed)
        new = self.regs[key]
        if (self.hw_era or self.old) and len(new.isr) > len(old_isr):
            # <= 2.7: the leader's own ZK write, announced before it (9.4)
            assert isinstance(b.logs, lg.ZkBrokerLogs)
            b.logs.expand_isr(self.now, lg_tp(key), old_isr, new.isr)
        under = len(new.isr) < self.min_isr[key[0]]
        b.logs.isr_updated(self.now, lg_tp(key), new.isr, under, new.partition_epoch)
        if under and not isinstance(b.logs, lg.ZkBrokerLogs):
            # only the KRaft-era template (3.6+) prints the marker
            self.truth.under_min_logged(key, b.id, self.now)
        return True

    def _epoch_began(
        self, key: Key, epoch: int, leader: int, members: list[int], recovering: bool
    ) -> None:
        """A new leader epoch is in force: check it grew, and tell the truth
        (the leader's log end, and whether it was among ``members``)."""
        if epoch <= self.leader_epochs_seen.get(key, -1):
            self.violations.append(f"leader epoch of {key} did not increase")
        self.leader_epochs_seen[key] = epoch
        x = self.brokers[leader].replicas[key].log.leo if leader >= 0 else 0
        alive = leader >= 0 and self.brokers[leader].reachable
        self.truth.epoch_began(
            key,
            epoch,
            leader,
            x,
            members,
            recovering,
            leader_alive=alive,
            now=self.now,
            # 0.10's makeLeader prints no start offset (from 0.11 it does)
            start_printed=not (self.old and not self.version.at_least("0.11")),
        )

    def elect_unclean(self, key: Key) -> None:
        """ElectLeaders(UNCLEAN) (kafka-leader-election --election-type unclean)."""
        reg = self.regs[key]
        records: list[dict[str, Any]] = []
        changed: list[Key] = []
        if self.zk:
            if not self.hw_era and self.controller is not None:
                # kafka-leader-election --election-type unclean (2.4+)
                self._zk_elect_offline(changed, key, unclean=True)
                self.commit(records, changed)
            return
        if self.elr:
            self._build(records, changed, key, reg.isr, unclean=True)
            self.commit(records, changed)
            return
        chosen, unclean = self.elect(reg, reg.isr, unclean=True)
        if unclean:
            self.change(
                records, changed, key, isr=[chosen], leader=chosen, recovery=1, unclean=True
            )
        else:
            self.change(records, changed, key, leader=chosen)
        self.commit(records, changed)

    # -- ZK controller (zk-epoch 2.8, zk-hw 0.8-0.10) ------------------------------
    # LeaderAndIsr znode writes: zkVersion (kept in partition_epoch) + 1 on every
    # write; ``newLeaderAndIsr`` (leader epoch + 1) on every controller write
    # (elections, and removing a failed or shutting-down replica from the ISR,
    # ``doRemoveReplicasFromIsr``); the leader's own ISR changes (AlterIsr in
    # 2.8, a direct ZK write before) keep the leader epoch.

    def _zk_line(
        self, key: Key, from_state: str, reg: Registration, prev_isr: list[int] | None = None
    ) -> None:
        assert self.controller is not None
        if isinstance(self.zclog, old.OldControllerLogs):
            self._zk_line_old(key, from_state, reg, prev_isr)
            return
        self.zclog.changed(
            self.now,
            self.controller,
            self.controller_epoch,
            lg_tp(key),
            from_state,
            "OnlinePartition" if reg.leader >= 0 else "OfflinePartition",
            reg.leader,
            reg.leader_epoch,
            reg.isr,
            reg.partition_epoch,
        )

    def _zk_line_old(
        self, key: Key, from_state: str, reg: Registration, prev_isr: list[int] | None
    ) -> None:
        """A pre-2.8 controller's partition state machine lines (formats-addendum
        9.2, 9.7): an election from OfflinePartition or a new partition is a move
        to OnlinePartition (0.10 also names the offline leader selection in
        controller.log, with "potential data loss" when the leader is not from the
        ISR); a controlled-shutdown move stays OnlinePartition; no leader is a move
        to OfflinePartition. The controller's ISR-only change (a replica removed,
        the epoch bumped) is a replica state machine change: no partition line."""
        assert isinstance(self.zclog, old.OldControllerLogs) and self.controller is not None
        state = self._zk_state(key, reg)
        c, e = self.controller, self.controller_epoch
        if reg.leader < 0:
            self.zclog.partition_offline(self.now, c, e, state)
            return
        if from_state == "OfflinePartition":
            if prev_isr is not None and reg.leader not in prev_isr:
                live = [r for r in reg.replicas if self.acceptable(r)]
                self.zclog.unclean_selected(self.now, state, live)
            self.zclog.offline_selected(self.now, state)
        self.zclog.partition_online(self.now, c, e, from_state, state)

    def zk_change(
        self,
        changed: list[Key],
        key: Key,
        leader: int = NO_LEADER_CHANGE,
        isr: list[int] | None = None,
        bump: bool = False,
        from_state: str = "OnlinePartition",
        by_leader: bool = False,
    ) -> None:
        """``by_leader``: the leader's own ISR change (AlterIsr in 2.8; before 2.7
        the leader writes the znode itself, and no controller line is logged)."""
        reg = self.regs[key]
        new_leader = reg.leader if leader == NO_LEADER_CHANGE else leader
        new_isr = list(isr) if isr is not None else list(reg.isr)
        bump = bump or new_leader != reg.leader
        if not bump and new_isr == reg.isr:
            return
        new = Registration(
            replicas=list(reg.replicas),
            isr=new_isr,
            leader=new_leader,
            leader_epoch=reg.leader_epoch + (1 if bump else 0),
            partition_epoch=reg.partition_epoch + 1,
        )
        if not self.old:
            self._zk_line(key, from_state, new)
        elif not by_leader:
            self.zk_cepoch[key] = self.controller_epoch
            if new.leader != reg.leader:
                self._zk_line(key, from_state, new, reg.isr)
        if bump:
            # unclean when the leader was not in the previous ISR (docs/findings.md)
            self._epoch_began(key, new.leader_epoch, new_leader, reg.isr, False)
        self.regs[key] = new
        self._isr_in_force(key)
        if key not in changed:
            changed.append(key)

    def _zk_elected(self, ms: int) -> None:
        """A broker won /controller (9.7): controller.log, and before 0.11 the
        broker's own server.log (ZookeeperLeaderElector)."""
        assert self.controller is not None
        self.zclog.elected(ms, self.controller, self.controller_epoch)
        if isinstance(self.zclog, old.OldControllerLogs):
            self.zclog.elected_to(self.brokers[self.controller].logs.server, ms, self.controller)

    def _zk_live(self, b: int) -> bool:
        return self.acceptable(b) and self.brokers[b].reachable

    def _zk_move_controller(self, gone: int) -> None:
        """The controller's broker left: the first live broker wins /controller;
        with none, nobody acts until a broker starts (``_zk_startup``)."""
        if gone != self.controller:
            return
        live = [b for b in sorted(self.brokers) if b != gone and self._zk_live(b)]
        self.controller = live[0] if live else None
        if self.controller is not None:
            self.controller_epoch += 1
            self._zk_elected(self.now)

    def _zk_elect_offline(self, changed: list[Key], key: Key, unclean: bool) -> None:
        """``OfflinePartitionLeaderElection``: the first live ISR member in replica
        order, ISR = the live ISR; else (unclean) the first live replica, ISR = [it]."""
        reg = self.regs[key]
        if reg.leader >= 0 and self.acceptable(reg.leader):
            return
        live_isr = [r for r in reg.isr if self.acceptable(r)]
        for r in reg.replicas:
            if r in live_isr:
                self.zk_change(changed, key, r, live_isr, from_state="OfflinePartition")
                return
        if unclean:
            for r in reg.replicas:
                if self.acceptable(r):
                    self.zk_change(changed, key, r, [r], from_state="OfflinePartition")
                    return

    def _zk_leave(self, b: int, changed: list[Key], failover: bool = False) -> None:
        """``onBrokerFailure`` (session expired) or a controlled shutdown; with
        ``failover``, a new controller settling a broker that died while there
        was none."""
        breg = self.breg[b]
        controlled = breg.shutting_down and not breg.fenced
        if not failover:
            self._zk_move_controller(b)
            if self.controller is None:
                return  # no live broker: no controller to react
            if not controlled:
                self.zclog.broker_failure(self.now, self.controller, [b])
        for key, reg in self.regs.items():
            if b not in reg.replicas:
                continue
            if reg.leader == b:
                live_isr = [r for r in reg.isr if r != b and self.acceptable(r)]
                chosen = next((r for r in reg.replicas if r in live_isr), NO_LEADER)
                state = "OnlinePartition" if controlled else "OfflinePartition"
                if chosen != NO_LEADER:
                    self.zk_change(changed, key, chosen, live_isr, from_state=state)
                    continue
                if controlled:
                    continue  # the last ISR member keeps leading until it is gone
                if self.spec.unclean_election:
                    live = [r for r in reg.replicas if r != b and self.acceptable(r)]
                    if live:
                        self.zk_change(changed, key, live[0], [live[0]], from_state=state)
                        continue
                isr = [r for r in reg.isr if r != b] or list(reg.isr)
                self.zk_change(changed, key, NO_LEADER, isr, from_state=state)
            elif b in reg.isr:
                isr = [r for r in reg.isr if r != b] or list(reg.isr)
                state = "OnlinePartition" if reg.leader >= 0 else "OfflinePartition"
                self.zk_change(changed, key, isr=isr, bump=True, from_state=state)

    def _zk_startup(self, b: int, changed: list[Key]) -> None:
        """``onBrokerStartup``: offline partitions get a leader if they can."""
        if self.controller is None or not self._zk_live(self.controller):
            self.controller = b
            self.controller_epoch += 1
            self._zk_elected(self.now)
            # onControllerFailover: brokers that died while there was no controller
            for d in sorted(self.brokers):
                if self.breg[d].fenced:
                    self._zk_leave(d, changed, failover=True)
        live = [r for r in sorted(self.brokers) if self.acceptable(r)]
        self.zclog.brokers_changed(self.now, self.controller, [b], [], live)
        if isinstance(self.zclog, old.OldControllerLogs):
            self.zclog.broker_startup(self.now, self.controller, [b])
        for key, reg in self.regs.items():
            if reg.leader == NO_LEADER:
                self._zk_elect_offline(changed, key, self.spec.unclean_election)

    def bounce(self, bid: int) -> None:
        """A process restart the controller never sees (faster than the ZK
        session timeout; 0.8-1.0 controllers missed such bounces, KAFKA-1120):
        registration, ISR and epochs unchanged; the broker reloads its logs,
        reads its HW from the checkpoint and gets LeaderAndIsr again."""
        b = self.brokers[bid]
        if not b.reachable or not b.registered:
            return
        b.incarnation += 1
        for key, rs in b.replicas.items():
            rs.log.flush()
            rs.log.checkpoint_hwm()
            if rs.is_leader:
                self.fail_pending(b, key, rs, art.NOT_LEADER_OR_FOLLOWER)
            rs.fresh = True
            rs.is_leader = False
            rs.leader = NO_LEADER
            rs.leader_epoch = -1
            rs.log.hwm = min(rs.log.hwm_checkpoint, rs.log.leo)
        self._startup_lines(b, True)  # the process stopped cleanly: flushed, marker written
        for key in b.replicas:
            self.apply(b, key)

    def _startup_lines(self, b: Broker, clean: bool) -> None:
        """A (re)started broker loads its logs (formats-addendum.md 10) and, with
        ``startup_lines``, says so; its Partitions print the initial HW when
        the first metadata for them arrives (``apply``)."""
        if not self.evidence.startup_lines:
            return
        parts = [
            (key[0], key[1], self.topic_ids[key[0]], rs.log.leo)
            for key, rs in sorted(b.replicas.items())
        ]
        startup.write_startup(b.logs, self.version, self.now, parts, clean)
        for key, rs in b.replicas.items():
            rs.reloaded = True
            self.truth.restart_shown(key, b.id, rs.log.leo, clean)

    # -- broker: applying metadata ---------------------------------------------
    def apply(self, b: Broker, key: Key) -> None:
        reg = self.regs[key]
        rs = b.replicas[key]
        was_leader, old_epoch = rs.is_leader, rs.leader_epoch
        prev_leader = None if rs.fresh else rs.leader
        new_epoch = rs.fresh or reg.leader_epoch > old_epoch
        fresh = rs.fresh
        rs.fresh = False
        tp = lg_tp(key)
        if rs.reloaded:
            # the Partition is created again after a restart: the checkpointed
            # HW, capped at the log end (formats-addendum.md 10.3, 2.4+)
            rs.reloaded = False
            if self.version.at_least("2.4"):
                b.logs.log_loaded(self.now, tp, rs.log.hwm)
                self.truth.hw_shown(key, rs.log.hwm)
        if self.old and new_epoch:
            self._apply_old(b, key, reg, rs, was_leader, old_epoch, prev_leader, fresh)
        elif reg.leader == b.id and new_epoch:
            if reg.recovery == 1:
                b.logs.recovering(self.now, tp)
            b.logs.leader(
                self.now,
                tp,
                self.topic_ids[key[0]],
                reg.leader_epoch,
                rs.log.leo,
                reg.partition_epoch,
                rs.log.hwm,
                reg.isr,
                len(reg.isr) < self.min_isr[key[0]],
                prev_leader,
                old_epoch,
            )
            self.truth.hw_shown(key, rs.log.hwm)
            self.truth.start_shown(key, reg.leader_epoch, rs.log.leo)
        elif reg.leader != b.id and new_epoch and self.zk:
            assert isinstance(b.logs, lg.ZkBrokerLogs)
            b.logs.follower28(self.now, tp, reg.leader_epoch, rs.log.leo, rs.log.hwm, old_epoch)
            self.truth.hw_shown(key, rs.log.hwm)
            if self.hw_era and reg.leader >= 0 and prev_leader != reg.leader:
                # 0.8-0.10 makeFollower: a new leader (or a fresh start) truncates
                # the log to the replica's own HW before fetching (seed 004, 001)
                log = rs.log
                frm, top, to = log.leo, log.top_data_epoch(), min(log.hwm, log.leo)
                b.logs.hw_truncation(self.now, tp, reg.leader, to, frm)
                log.truncate_to(to)
                if to < frm:
                    # its "starts at leader epoch E from offset" line above
                    # printed the log end it cuts from
                    self.truth.truncated(key, b.id, frm, to, reg.leader_epoch, top, now=self.now)
        elif reg.leader != b.id and new_epoch:
            b.logs.follower(
                self.now,
                tp,
                reg.leader_epoch,
                rs.log.leo,
                reg.partition_epoch,
                rs.log.hwm,
                reg.leader,
            )
            self.truth.hw_shown(key, rs.log.hwm)
        rs.isr = list(reg.isr)
        rs.partition_epoch = reg.partition_epoch
        rs.recovery = reg.recovery
        if self.old and reg.leader < 0 and not fresh and not was_leader:
            # before 2.8 a follower refuses a LeaderAndIsr without a live leader
            # ("cannot become follower"): its Partition keeps the leader and epoch
            # it had, and its fetcher the leader it fetched from (9.3)
            return
        rs.leader = reg.leader
        rs.leader_epoch = reg.leader_epoch
        if reg.leader == b.id:
            if not was_leader or reg.leader_epoch != old_epoch:
                self.become_leader(b, key, rs, reg)
            else:
                self.maybe_increment_hwm(b, key, rs)
        elif was_leader:
            rs.is_leader = False
            self.fail_pending(b, key, rs, art.NOT_LEADER_OR_FOLLOWER)

    def _zk_state(self, key: Key, reg: Registration) -> old.PartitionState:
        """The partition state the ZK controller sends in LeaderAndIsr requests."""
        return old.PartitionState(
            key[0],
            key[1],
            self.zk_cepoch.get(key, self.controller_epoch),
            reg.leader,
            reg.leader_epoch,
            tuple(reg.isr),
            reg.partition_epoch,
            tuple(reg.replicas),
            is_new=reg.partition_epoch == 0,
        )

    def _zk_correlation(self, b: int) -> int:
        """One LeaderAndIsr request per broker per controller action: the
        partitions applied in the same event share its correlation id."""
        event, corr = self.zk_sent.get(b, (-1, -1))
        if event != self.events:
            event, corr = self.events, corr + 1
            self.zk_sent[b] = (event, corr)
        return corr

    def _apply_old(
        self,
        b: Broker,
        key: Key,
        reg: Registration,
        rs: ReplicaState,
        was_leader: bool,
        old_epoch: int,
        prev_leader: int | None,
        fresh: bool,
    ) -> None:
        """A pre-2.8 broker handling the controller's LeaderAndIsr (formats-addendum
        9.2, 9.3): the controller's "Sending" line, the broker's "Received" line,
        then ``makeLeaders`` / ``makeFollowers`` with the version's transitions."""
        assert isinstance(b.logs, old.OldBrokerLogs) and isinstance(
            self.zclog, old.OldControllerLogs
        )
        state = self._zk_state(key, reg)
        controller = self.controller if self.controller is not None else b.id
        cepoch = self.controller_epoch
        corr = self._zk_correlation(b.id)
        self.zclog.sending(self.now, controller, cepoch, b.id, state)
        b.logs.lai_received(self.now, state, corr, controller, cepoch)
        tp = lg_tp(key)
        log = rs.log
        if reg.leader == b.id:
            b.logs.lai_leader(
                self.now,
                state,
                corr,
                controller,
                cepoch,
                not was_leader,
                log.leo,
                log.hwm,
                old_epoch,
            )
            if self.version.at_least("2.4"):  # the line prints the leader's HW
                self.truth.hw_shown(key, log.hwm)
            if self.version.at_least("0.11"):  # and from 0.11 its log end
                self.truth.start_shown(key, reg.leader_epoch, log.leo)
            return
        if reg.leader < 0:
            b.logs.lai_no_leader(self.now, state, corr, controller, cepoch)
            return
        # makeFollower is false for the same leader (and, from 2.1, the same epoch)
        changed = fresh or prev_leader != reg.leader
        if self.version.at_least("2.4"):
            changed = changed or reg.leader_epoch != old_epoch
        b.logs.lai_follower_start(self.now, state, corr, controller, cepoch, changed)
        if not changed:
            return
        if not self.version.epochs:
            # 0.8-0.10 makeFollowers: truncate to the replica's own HW (seed 004,
            # 001; formats-addendum 9.5), then fetch from the log end
            frm, top, hwm = log.leo, log.top_data_epoch(), log.hwm
            b.logs.hw_truncation(self.now, tp, reg.leader, hwm, frm)
            self.truth.hw_shown(key, hwm)  # the truncation line prints the HW
            to = min(hwm, frm)
            log.truncate_to(to)
            if to < frm:
                self.truth.truncated(
                    key, b.id, frm, to, reg.leader_epoch, top, line_shows_end=False, now=self.now
                )
            init = log.leo
        else:
            # 1.1+: the fetcher starts from the HW, truncating first (KIP-101)
            rs.truncating = True
            init = log.hwm
            self.truth.hw_shown(key, init)  # "Added fetcher ... offset" is the HW
        b.logs.lai_follower_end(self.now, state, corr, controller, cepoch, init)

    def become_leader(self, b: Broker, key: Key, rs: ReplicaState, reg: Registration) -> None:
        rs.is_leader = True
        if not (self.old and self.version.epochs and self.version.before("2.0")):
            # 2.0+ caches the new epoch's start offset at once (KIP-279); 1.1
            # assigns it with the leader's first append (Log.append)
            rs.log.assign(reg.leader_epoch, rs.log.leo)
        rs.start_offset = rs.log.leo
        rs.exposed_hwm = 0
        rs.exposed_rises = []
        rs.followers = {
            f: FollowerState(last_caught_up_ms=self.now if f in reg.isr else 0)
            for f in reg.replicas
            if f != b.id
        }
        self.truth.became_leader(key, b.id)
        self.maybe_increment_hwm(b, key, rs)

    def maybe_increment_hwm(self, b: Broker, key: Key, rs: ReplicaState) -> None:
        if not rs.is_leader:
            return
        if self.elr and len(rs.isr) < self.min_isr[key[0]]:
            return  # KIP-966: under min ISR the HWM does not advance (seed 002 5.2)
        new = rs.log.leo
        for f in rs.isr:
            if f != b.id:
                new = min(new, rs.followers[f].fetch_offset)
        if new > rs.log.hwm:
            rs.log.hwm = new
            self.complete_pending(b, key, rs)

    def complete_pending(self, b: Broker, key: Key, rs: ReplicaState) -> None:
        keep = []
        for p in rs.pending:
            if p.end <= rs.log.hwm:
                enough = len(rs.isr) >= self.min_isr[key[0]]
                if not enough and self.mutated("acks_all_under_min_isr"):
                    enough = True  # the bug: acknowledged under min ISR
                error = art.NONE if enough else art.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                self.answer_produce(b, key, p, -1, error)
            else:
                keep.append(p)
        rs.pending = keep

    def answer_produce(self, b: Broker, key: Key, p: Pending, acks: int, error: int) -> None:
        b.log.produce(
            self.now,
            p.client,
            key[0],
            key[1],
            acks,
            p.records,
            error,
            p.base,
            self.now - p.received_ms,
        )
        if acks == -1 and error == art.NONE:
            self.truth.ack(key, p.base, p.records)
        rs = b.replicas[key]
        if error == art.NONE and acks != 0 and rs.is_leader:
            self.truth.acknowledged(key, b.id, rs.leader_epoch, p.base, acks, self.now)
        if error == art.NONE and acks != 0 and not self.hw_era:
            # (0.10.1 prints no produce offsets)
            self.truth.position_seen(key, b.id, p.base + 1, grows=True)

    def fail_pending(self, b: Broker, key: Key, rs: ReplicaState, error: int) -> None:
        for p in rs.pending:
            self.answer_produce(b, key, p, -1, error)
        rs.pending = []

    def produce_timeout(self, b: Broker, key: Key, p: Pending) -> None:
        rs = b.replicas[key]
        if b.up and p in rs.pending:
            rs.pending.remove(p)
            self.answer_produce(b, key, p, -1, art.REQUEST_TIMED_OUT)

    # -- producers -------------------------------------------------------------
    def produce(self, key: Key, acks: int, records: int, client: int) -> None:
        reg = self.regs[key]
        if reg.leader == NO_LEADER:
            return
        b = self.brokers[reg.leader]
        if not b.reachable or not b.registered:
            return  # the request never arrives; the client retries elsewhere
        self.produce_at(b, key, acks, records, client)

    def produce_to(
        self, bid: int, topic: str, partition: int, acks: int, records: int, client: int = 9
    ) -> None:
        """A producer with stale metadata sends to broker ``bid`` whatever the
        controller says (it reaches a zombie leader the others cannot)."""
        b = self.brokers[bid]
        key = (topic, partition)
        if not b.up or not b.registered or key not in b.replicas:
            return
        if not (b.reachable or b.clients_reach):
            return
        self.produce_at(b, key, acks, records, client)

    def produce_at(self, b: Broker, key: Key, acks: int, records: int, client: int) -> None:
        rs = b.replicas[key]
        pending = Pending(client, self.now, -1, records, rs.leader_epoch)
        if not rs.is_leader:
            if acks != 0:
                self.answer_produce(b, key, pending, acks, art.NOT_LEADER_OR_FOLLOWER)
            return
        under = acks == -1 and len(rs.isr) < self.min_isr[key[0]]
        if under and not self.mutated("acks_all_under_min_isr"):
            self.answer_produce(b, key, pending, acks, art.NOT_ENOUGH_REPLICAS)
            return
        pending.base = rs.log.append(records, rs.leader_epoch)
        if b.flush_ms == 0:
            rs.log.flush()
        if acks == 0:
            b.log.produce(self.now, client, key[0], key[1], 0, records, None, pending.base, 0)
        elif acks == 1:
            self.answer_produce(b, key, pending, 1, art.NONE)
        else:
            rs.pending.append(pending)
            self.at(self.now + PRODUCE_TIMEOUT_MS, self.produce_timeout, b, key, pending)
        self.maybe_increment_hwm(b, key, rs)

    def producer_tick(self, ps: ProducerSpec, k: int) -> None:
        key = (ps.topic, ps.partition)
        stop = ps.stop_ms if ps.stop_ms is not None else self.spec.duration_ms
        if self.now >= stop or self.stopped:
            return
        if self.producing.get(key, True):
            acks = ps.acks
            if ps.acks_mix:
                r = self.rng.random()
                for value, weight in ps.acks_mix:
                    acks = value
                    if r < weight:
                        break
                    r -= weight
            records = self.rng.randint(1, ps.max_records) if ps.max_records else ps.records
            self.produce(key, acks, records, ps.client)
        nxt = ps.start_ms + ps.phase_ms + (k + 1) * ps.interval_ms
        if ps.jitter_ms:
            nxt += self.rng.randint(0, ps.jitter_ms)
        self.at(max(nxt, self.now + 1), self.producer_tick, ps, k + 1)

    # -- follower fetching -------------------------------------------------------
    def fetch_tick(self, b: Broker) -> None:
        if self.stopped:
            return
        interval = self.spec.fetch_ms * max(1, b.fetch_factor)
        if self.spec.fetch_jitter_ms:
            interval += self.rng.randint(0, self.spec.fetch_jitter_ms)
        self.at(self.now + interval, self.fetch_tick, b)
        if not b.reachable or not b.registered or b.fetch_paused:
            return
        by_leader: dict[int, list[Key]] = {}
        for key, rs in b.replicas.items():
            if not rs.is_leader and rs.leader >= 0 and rs.leader != b.id:
                by_leader.setdefault(rs.leader, []).append(key)
        for leader_id in sorted(by_leader):
            leader = self.brokers[leader_id]
            if not leader.reachable:
                continue  # connection fails: nothing is logged
            self.fetch_from(b, leader, by_leader[leader_id])

    def fetch_from(self, f: Broker, leader: Broker, keys: list[Key]) -> None:
        if self.epoch_requests:
            keys = self._epoch_round(f, leader, keys)
            if not keys:
                return
        parts = []
        for key in keys:
            rs = f.replicas[key]
            lfe = UNDEFINED if self.hw_era or self.epoch_requests else rs.log.latest_epoch()
            parts.append((key, rs.leader_epoch, rs.log.leo, lfe))
        answers = [self.leader_fetch(leader, f.id, *part) for part in parts]
        leader.sessions += 1
        wait = 0.0 if any(a[3] or a[2] for a in answers) else 499.8
        line = (
            f.id,
            1000 * leader.id + leader.sessions % 1000,
            [(self._topic_ref(k), k[1], cle, off, lfe) for k, cle, off, lfe in parts],
            [
                (
                    self._topic_ref(k),
                    k[1],
                    err,
                    hwm,
                    div,
                    art.batch_bytes(sum(r[2] - r[1] for r in runs)),
                )
                for (k, cle, off, lfe), (err, hwm, div, runs) in zip(parts, answers, strict=True)
            ],
            wait,
        )
        if self.hw_era and wait:
            # 0.10.1 logs a request once its response is sent: a long poll
            # after maxWait, and never if either end drops the connection first
            marks = [(k, cle, off) for k, cle, off, _ in parts]
            # (the DelayedFetch expires at maxWait, 500 ms: just before the next
            # fetch the follower sends on receiving the answer)
            due = self.now + 499
            self.at(
                due,
                self._late_fetch_line,
                leader,
                f,
                leader.incarnation,
                f.incarnation,
                line,
                marks,
            )
        elif isinstance(leader.log, StructRequestLog):
            # the text form prints the record set, which depends on the read
            ends = {(self._topic_ref(k), k[1]): leader.replicas[k].log.leo for k, *_ in parts}
            leader.log.fetch(self.now, *line, leos=ends)
        else:
            leader.log.fetch(self.now, *line)
            if self.hw_era:
                self._hw_marks(leader, f.id, [(k, cle, off) for k, cle, off, _ in parts])
        late = bool(self.hw_era and wait)
        for (key, cle, off, _lfe), (err, hwm, _div, _runs) in zip(parts, answers, strict=True):
            self.truth.follower_fetch(key, f.id, cle, off, self.now, logged=not late)
            if err == art.NONE:
                self.truth.exposure(key, leader.id, cle, hwm)
        for (key, cle, _off, _lfe), (err, hwm, div, runs) in zip(parts, answers, strict=True):
            self.follower_apply(f, key, leader.id, cle, err, hwm, div, runs)

    def _epoch_round(self, f: Broker, leader: Broker, keys: list[Key]) -> list[Key]:
        """Before IBP 2.7 a follower truncates when it starts following: the
        fetcher's ``maybeTruncate`` sends one OffsetsForLeaderEpoch for its
        partitions in the Truncating state (latest epoch of its cache) and
        truncates each to the answer; then ``maybeFetch`` fetches every partition
        done truncating (kafka-formats.md 1.6; formats-addendum 9.6). Returns
        the keys to fetch now.

        1.1 (KIP-101, ``ReplicaFetcherThread.maybeTruncate`` @1.1.1): an answer
        at or beyond the log end truncates nothing; an unknown offset truncates
        to the initial fetch offset (the HW); else to the answer. A partition
        with no epoch gets that unknown offset without asking. 2.4 (KIP-279,
        ``AbstractFetcherThread.getOffsetTruncationState`` @2.4.1): the leader
        answers (epoch, end offset); a follower without that epoch truncates to
        the end of its own largest smaller epoch and asks again next round; a
        partition with no epoch truncates to its HW without asking."""
        assert isinstance(f.logs, old.OldBrokerLogs)
        v24 = self.version.at_least("2.4")
        ask = [k for k in keys if f.replicas[k].truncating]
        entries: list[tuple[str, int, int, int, int, int, int]] = []
        answers: dict[Key, tuple[int, int, int]] = {}
        for key in ask:
            rs = f.replicas[key]
            epoch = rs.log.latest_epoch()
            if epoch == UNDEFINED:
                continue
            lrs = leader.replicas[key]
            error, answered, end = art.NONE, UNDEFINED, UNDEFINED
            if not lrs.is_leader:
                error = art.NOT_LEADER_OR_FOLLOWER
            elif v24 and rs.leader_epoch < lrs.leader_epoch:
                error = art.FENCED_LEADER_EPOCH
            elif v24 and rs.leader_epoch > lrs.leader_epoch:
                error = art.UNKNOWN_LEADER_EPOCH
            elif v24:
                answered, end = lrs.log.end_offset_for(epoch)
            else:
                end = end_offset_v0(lrs.log, epoch)
            answers[key] = (error, answered, end)
            entries.append((key[0], key[1], rs.leader_epoch, epoch, error, answered, end))
        if entries:
            assert isinstance(leader.log, StructRequestLog)
            leader.log.offsets_for_leader_epoch(self.now, f.id, 0, entries)
        for key in ask:
            rs = f.replicas[key]
            log, tp = rs.log, lg_tp(key)
            frm, top = log.leo, log.top_data_epoch()
            done = True
            if key not in answers:  # no epoch in the cache
                if v24:
                    f.logs.hw_truncation(self.now, tp, leader.id, log.hwm, log.leo)
                else:
                    f.logs.epoch_unknown_offset(self.now, tp, leader.id, log.hwm)
                    f.logs.epoch_truncation(
                        self.now, tp, key[1], leader.id, log.hwm, -1, -1, frm, 0
                    )
                to = log.hwm
            else:
                error, answered, end = answers[key]
                if error == art.FENCED_LEADER_EPOCH:
                    f.logs.epoch_fenced(self.now, tp, leader.id, rs.leader_epoch)
                    continue
                if error != art.NONE:
                    f.logs.epoch_retry(self.now, tp, leader.id, ERROR_NAMES[error])
                    continue
                if end == UNDEFINED:
                    f.logs.epoch_unknown_offset(self.now, tp, leader.id, log.hwm)
                    to = log.hwm
                elif not v24:
                    if end >= frm:
                        f.logs.epoch_no_truncation(self.now, tp, leader.id, end, frm)
                        rs.truncating = False
                        continue
                    to = end
                else:
                    fe, fend = log.end_offset_for(answered)
                    if fe == UNDEFINED:
                        f.logs.epoch_below_tracked(self.now, tp, leader.id, answered, end)
                        to = min(end, frm)
                    elif fe != answered:
                        to = min(fend, frm)
                        f.logs.epoch_unknown_to_replica(self.now, tp, leader.id, answered, to)
                        done = False
                    else:
                        to = min(fend, end, frm)
                f.logs.epoch_truncation(self.now, tp, key[1], leader.id, to, -1, -1, frm, log.hwm)
            log.truncate_to(to)
            if to < frm:
                self.truth.truncated(key, f.id, frm, to, rs.leader_epoch, top, now=self.now)
            rs.truncating = not done
        return [k for k in keys if not f.replicas[k].truncating]

    def _out_of_range(self, f: Broker, key: Key, leader: Broker) -> None:
        """OFFSET_OUT_OF_RANGE on a fetch without epochs (0.10, 1.1, 2.4): the
        follower asks the leader's log end with ListOffsets (LATEST, its replica
        id) and, if it is below its own, truncates to it (``handleOffsetOutOfRange``
        / ``fetchOffsetAndTruncate``, formats-addendum 9.6) - unless the topic
        forbids unclean election and the version still checks it (<= 1.1): then
        the broker stops (FATAL, ``System.exit`` / ``FatalExitError``; the
        shutdown hook closes it cleanly)."""
        rs, lrs = f.replicas[key], leader.replicas[key]
        if not lrs.is_leader or not leader.reachable or f.id in self.halted:
            return
        leader_leo = lrs.log.leo
        assert not isinstance(leader.log, art.RequestLog)  # the text forms, before 2.8
        leader.log.list_offsets(
            self.now,
            f.id,
            0,
            key[0],
            key[1],
            rs.leader_epoch,
            art.NONE,
            leader_leo,
            lrs.leader_epoch,
        )
        log, tp = rs.log, lg_tp(key)
        if leader_leo >= log.leo:
            return  # the leader's start offset case: fetch on from our own end
        assert isinstance(f.logs, old.OldBrokerLogs)
        if not self.spec.unclean_election and self.version.before("2.0"):
            f.logs.truncation_not_allowed(self.now, tp, leader.id, log.leo, leader_leo)
            self.halted.add(f.id)
            self.at(self.now + 1, self.shutdown, f.id)
            return
        frm, top = log.leo, log.top_data_epoch()
        f.logs.offset_reset(self.now, tp, leader.id, frm, leader_leo, log.hwm)
        log.truncate_to(leader_leo)
        self.truth.truncated(key, f.id, frm, leader_leo, rs.leader_epoch, top, now=self.now)

    def _late_fetch_line(
        self,
        leader: Broker,
        f: Broker,
        leader_incarnation: int,
        f_incarnation: int,
        line: tuple[Any, ...],
        marks: list[tuple[Key, int, int]],
    ) -> None:
        if leader.incarnation != leader_incarnation or f.incarnation != f_incarnation:
            return
        if leader.reachable and f.reachable:
            leader.log.fetch(self.now, *line)
            for key, _cle, offset in marks:
                self.truth.position_seen(key, f.id, offset)
            self._hw_marks(leader, f.id, marks)

    def _hw_marks(self, leader: Broker, follower: int, marks: list[tuple[Key, int, int]]) -> None:
        """zk-hw: what a logged fetch shows. 0.10.1's request log carries the
        fetch offsets (= the followers' LEOs); the leader's HW is their
        minimum over the ISR (seed 000 "HW/LEO update rules")."""
        for key, cle, offset in marks:
            rs = leader.replicas[key]
            if not rs.is_leader or rs.leader_epoch != cle or follower not in rs.followers:
                continue
            fs = rs.followers[follower]
            if 0 <= fs.logged_offset < offset:
                # the follower's log grew between two of its logged fetches
                # from this leader, by records only this leader sent it: the
                # leader's log end is in evidence up to the later one (its
                # produce requests show no offsets in this era)
                self.truth.position_seen(key, leader.id, offset)
            fs.logged_offset = offset
            offsets = [rs.followers[r].logged_offset for r in rs.isr if r != leader.id]
            if offsets and min(offsets) >= 0:
                self.truth.fetch_mark(key, min(offsets), now=self.now, fetched=(follower, offset))

    def _topic_ref(self, key: Key) -> str:
        """Fetch v13 names topics by id; v12 (2.8) by name."""
        return key[0] if self.zk else self.topic_ids[key[0]]

    def leader_fetch(
        self, b: Broker, follower: int, key: Key, cle: int, offset: int, lfe: int
    ) -> tuple[int, int, tuple[int, int] | None, list[tuple[int, int, int]]]:
        rs = b.replicas[key]
        if not rs.is_leader:
            return art.NOT_LEADER_OR_FOLLOWER, -1, None, []
        if cle < rs.leader_epoch:
            return art.FENCED_LEADER_EPOCH, -1, None, []
        if cle > rs.leader_epoch:
            return art.UNKNOWN_LEADER_EPOCH, -1, None, []
        hwm = rs.log.hwm
        if lfe != UNDEFINED:
            epoch, end = rs.log.end_offset_for(lfe)
            if epoch < lfe or end < offset:
                return art.NONE, hwm, (epoch, end), []
        if offset > rs.log.leo:
            # zk-hw: the follower learns the leader's log end (ListOffsets)
            return art.OFFSET_OUT_OF_RANGE, rs.log.leo if self.hw_era else -1, None, []
        upto = min(rs.log.leo, offset + self.spec.max_fetch_records)
        runs = rs.log.runs(offset, upto)
        # updateFollowerFetchState: after the read, so the answer carries the
        # HWM from before this fetch (the second round propagates it).
        fs = rs.followers[follower]
        if offset >= rs.log.leo:
            fs.last_caught_up_ms = max(fs.last_caught_up_ms, self.now)
        elif fs.last_fetch_leader_leo >= 0 and offset >= fs.last_fetch_leader_leo:
            fs.last_caught_up_ms = max(fs.last_caught_up_ms, fs.last_fetch_ms)
        fs.fetch_offset = offset
        fs.last_fetch_ms = self.now
        fs.last_fetch_leader_leo = rs.log.leo
        if hwm > rs.exposed_hwm:  # this answer carries it
            rs.exposed_hwm = hwm
            rs.exposed_rises.append((self.now, hwm))
            old = [i for i, (ms, _) in enumerate(rs.exposed_rises) if self.now - ms > SKEW_MS]
            if len(old) > 1:
                del rs.exposed_rises[: old[-1]]
        self.maybe_expand_isr(b, key, rs, follower)
        self.maybe_increment_hwm(b, key, rs)
        return art.NONE, hwm, None, runs

    def maybe_expand_isr(self, b: Broker, key: Key, rs: ReplicaState, follower: int) -> None:
        if follower in rs.isr:
            return
        fs = rs.followers[follower]
        lagging = fs.fetch_offset < rs.log.hwm or fs.fetch_offset < rs.start_offset
        if fs.fetch_offset < 0 or (lagging and not self.mutated("lagging_isr_join")):
            return
        if not self.acceptable(follower):
            return
        recovery = 0 if rs.recovery == 1 else -1
        epoch, offset = rs.leader_epoch, fs.fetch_offset
        if self.alter_partition(b, key, rs.isr + [follower], recovery) and lagging:
            self.truth.lagging_join(
                key,
                follower,
                epoch,
                offset,
                rs.exposed_hwm,
                # the HWM an answer showed more than the clock-skew allowance
                # before: a later answer may, by the clocks, follow the change
                max((v for ms, v in rs.exposed_rises if self.now - ms > SKEW_MS), default=0),
                rs.start_offset,
                rs.log.hwm,
                self.now,
            )

    def follower_apply(
        self,
        f: Broker,
        key: Key,
        leader: int,
        cle: int,
        err: int,
        hwm: int,
        div: tuple[int, int] | None,
        runs: list[tuple[int, int, int]],
    ) -> None:
        rs = f.replicas[key]
        if rs.is_leader or rs.leader != leader or rs.leader_epoch != cle:
            return
        log = rs.log
        if err == art.OFFSET_OUT_OF_RANGE and self.old:
            self._out_of_range(f, key, self.brokers[leader])
            return
        if err == art.OFFSET_OUT_OF_RANGE and self.hw_era and 0 <= hwm < log.leo:
            # no epochs: the leader's log ends below ours (handleOffsetOutOfRange)
            assert isinstance(f.logs, lg.ZkBrokerLogs)
            frm, top = log.leo, log.top_data_epoch()
            f.logs.offset_reset(self.now, lg_tp(key), leader, frm, hwm, log.hwm)
            log.truncate_to(hwm)
            self.truth.truncated(key, f.id, frm, hwm, cle, top, now=self.now)
            return
        if err != art.NONE:
            return
        if div is not None:
            epoch, end = div
            if end < 0:
                to = min(log.hwm, log.leo)
            else:
                fe, fend = log.end_offset_for(epoch)
                to = min(end, log.leo) if fe == UNDEFINED else min(fend, end, log.leo)
            frm, top = log.leo, log.top_data_epoch()
            f.logs.epoch_truncation(
                self.now, lg_tp(key), key[1], leader, to, epoch, end, log.leo, log.hwm
            )
            log.truncate_to(to)
            if to < frm:
                self.truth.truncated(key, f.id, frm, to, cle, top, now=self.now)
            return
        for epoch, lo, hi in runs:
            if lo != log.leo:
                self.violations.append(f"{key} follower {f.id} got records at {lo}, LEO {log.leo}")
                return
            log.append(hi - lo, epoch)
        if f.flush_ms == 0:
            log.flush()
        log.hwm = max(0, min(log.leo, hwm))

    # -- leader housekeeping -----------------------------------------------------
    def isr_tick(self, b: Broker) -> None:
        if self.stopped:
            return
        self.at(self.now + self.spec.lag_ms // 2, self.isr_tick, b)
        if not b.reachable:
            return
        for key, rs in b.replicas.items():
            if not rs.is_leader:
                continue
            out = [
                f
                for f in rs.isr
                if f != b.id
                and rs.followers[f].fetch_offset != rs.log.leo
                and self.now - rs.followers[f].last_caught_up_ms > self.spec.lag_ms
            ]
            if out:
                new = [r for r in rs.isr if r not in out]
                b.logs.shrink_isr(
                    self.now,
                    lg_tp(key),
                    rs.isr,
                    new,
                    rs.log.hwm,
                    rs.log.leo,
                    [
                        (f, rs.followers[f].fetch_offset, rs.followers[f].last_caught_up_ms)
                        for f in out
                    ],
                )
                self.alter_partition(b, key, new, -1)

    def flush_tick(self, b: Broker) -> None:
        if self.stopped or b.flush_ms is None or b.flush_ms <= 0:
            return
        self.at(self.now + b.flush_ms, self.flush_tick, b)
        if b.up:
            for rs in b.replicas.values():
                rs.log.flush()

    def checkpoint_tick(self, b: Broker) -> None:
        if self.stopped:
            return
        self.at(self.now + self.spec.checkpoint_ms, self.checkpoint_tick, b)
        if b.up:
            for rs in b.replicas.values():
                rs.log.checkpoint_hwm()

    # -- faults ----------------------------------------------------------------
    def _lost_session(self, b: Broker) -> None:
        """Heartbeats stop: the controller fences after the session timeout."""
        due = self.now + self.spec.session_ms
        self.fence_due[b.id] = due
        self.at(due, self._session_expired, b.id, due)

    def _session_expired(self, bid: int, due: int) -> None:
        if self.fence_due.get(bid) != due:
            return
        del self.fence_due[bid]
        if not self.brokers[bid].reachable:
            self.fence(bid)

    def _go_down(self, b: Broker, lossy: bool) -> None:
        b.up = False
        b.incarnation += 1
        b.registered = False
        for key, rs in b.replicas.items():
            rs.fresh = True
            rs.pending = []
            rs.is_leader = False
            rs.leader = NO_LEADER
            rs.leader_epoch = -1
            if lossy:
                frm, top = rs.log.leo, rs.log.top_data_epoch()
                rs.log.lose_unflushed()
                self.truth.crash_drop(key, b.id, frm, rs.log.leo, top)
            if self.zk:  # a restart reads the HW from replication-offset-checkpoint
                rs.log.hwm = min(rs.log.hwm_checkpoint, rs.log.leo)

    def crash(self, bid: int, lossy: bool = True) -> None:
        """Unclean shutdown; with ``lossy`` the page cache is gone too."""
        b = self.brokers[bid]
        if not b.up:
            return
        was_reachable = b.reachable
        b.clean_file = False
        self._go_down(b, lossy)
        if was_reachable:
            self._lost_session(b)

    def shutdown(self, bid: int) -> None:
        """Controlled shutdown: leadership moves away, logs flushed, then fenced."""
        b = self.brokers[bid]
        if not b.reachable or not b.registered:
            return
        reg = self.breg[bid]
        reg.shutting_down = True
        records = [art.broker_change(bid, reg.epoch, shutdown=True)]
        changed: list[Key] = []
        self._leave(bid, records, changed)
        self.commit(records, changed)
        for rs in b.replicas.values():
            rs.log.flush()
            rs.log.checkpoint_hwm()
        b.clean_file = True
        self._go_down(b, lossy=False)
        self.fence(bid)

    def restart(self, bid: int) -> None:
        b = self.brokers[bid]
        if b.up:
            return
        due = self.fence_due.get(bid)
        if due is not None or not self.breg[bid].fenced:
            # the old registration's session is still alive: retry after it
            self.at(max(self.now + 1000, due or 0), self.restart, bid)
            return
        b.up = True
        b.isolated = False
        b.clients_reach = False
        self.halted.discard(bid)
        for key, rs in b.replicas.items():
            self.truth.restarted(key, bid, rs.log.leo, b.clean_file)
        self._startup_lines(b, b.clean_file)
        self.register(bid)

    def isolate(self, bid: int) -> None:
        """Network partition: no traffic to or from the broker."""
        b = self.brokers[bid]
        if not b.reachable:
            return
        b.isolated = True
        b.incarnation += 1
        self._lost_session(b)

    def isolate_from_cluster(self, bid: int) -> None:
        """Cut off from the controller and the other brokers only: producers
        still reach it, so as a leader it keeps acknowledging in its old epoch
        after the controller fenced it and elected another (a zombie)."""
        b = self.brokers[bid]
        if not b.reachable:
            return
        self.isolate(bid)
        b.clients_reach = True

    def heal(self, bid: int) -> None:
        b = self.brokers[bid]
        if not b.isolated:
            return
        b.isolated = False
        b.clients_reach = False
        if not b.up:
            return  # still down: the session timer (if any) keeps running
        self.fence_due.pop(bid, None)
        for key in b.replicas:
            self.apply(b, key)  # catches up with the metadata log
        reg = self.breg[bid]
        if reg.fenced:
            self.at(self.now + self.spec.unfence_ms, self.unfence, bid, reg.generation)

    def pause_fetch(self, bid: int) -> None:
        self.brokers[bid].fetch_paused = True

    def resume_fetch(self, bid: int) -> None:
        self.brokers[bid].fetch_paused = False

    def slow(self, bid: int, factor: int) -> None:
        self.brokers[bid].fetch_factor = factor

    def flush(self, bid: int) -> None:
        b = self.brokers[bid]
        if b.up:
            for rs in b.replicas.values():
                rs.log.flush()

    def set_producing(self, topic: str, partition: int, on: bool) -> None:
        self.producing[(topic, partition)] = on

    def produce_once(self, topic: str, partition: int, acks: int, records: int) -> None:
        self.produce((topic, partition), acks, records, 9)

    def elect_unclean_action(self, topic: str, partition: int) -> None:
        self.elect_unclean((topic, partition))

    def restore_all(self) -> None:
        """End of the fault schedule: every broker up, connected, fetching."""
        for bid, b in sorted(self.brokers.items()):
            b.fetch_paused = False
            b.fetch_factor = 1
            if b.isolated:
                self.heal(bid)
            if not b.up:
                self.restart(bid)
        for key in self.regs:
            self.producing[key] = True

    # -- invariants ------------------------------------------------------------
    def check_invariants(self) -> None:
        for b in self.brokers.values():
            for key, rs in b.replicas.items():
                log = rs.log
                if log.hwm > log.leo:
                    self.violations.append(f"{self.now}: {key} broker {b.id} HWM {log.hwm} > LEO")
                if log.flushed > log.leo:
                    self.violations.append(f"{self.now}: {key} broker {b.id} flushed > LEO")
                starts = [s for _, s in log.cache]
                epochs = [e for e, _ in log.cache]
                if starts != sorted(set(starts)) or epochs != sorted(set(epochs)):
                    self.violations.append(f"{self.now}: {key} broker {b.id} cache {log.cache}")

    def final_consistency(self) -> None:
        """Every follower's log must be a prefix of its leader's (no divergence left)."""
        for key, reg in self.regs.items():
            if reg.leader < 0:
                if not (self.halted and set(reg.isr) <= self.halted):
                    self.violations.append(f"{key} has no leader at the end")
                # else: its ISR stopped itself (formats-addendum 9.6 FATAL): an outage
                continue
            lead = self.brokers[reg.leader].replicas[key].log
            for r in reg.replicas:
                if r == reg.leader or r in self.halted:
                    continue  # a broker that stopped itself keeps the log it stopped with
                log = self.brokers[r].replicas[key].log
                if log.leo > lead.leo or log.runs(0, log.leo) != lead.runs(0, log.leo):
                    if self.old and (not self.version.epochs or self.kip101):
                        # 0.10: a follower truncating to its HW can keep records the
                        # new leader never had (seed 000, "Replica divergence on
                        # restart after multiple hard failures"); 1.1: an
                        # OffsetsForLeaderEpoch answer for an epoch the leader never
                        # had ends after the divergence (the gap KIP-279 closed)
                        at = next(
                            (
                                o
                                for o in range(min(log.leo, lead.leo))
                                if log.epoch_at(o) != lead.epoch_at(o)
                            ),
                            min(log.leo, lead.leo),
                        )
                        self.truth.unseen_divergence(key, r, reg.leader, at, self.kip101)
                        continue
                    self.violations.append(
                        f"{key} replica {r} diverges from leader {reg.leader}: "
                        f"{log.cache}/{log.leo} vs {lead.cache}/{lead.leo}"
                    )

    # -- the run -----------------------------------------------------------------
    ACTIONS = {
        "crash": "crash",
        "shutdown": "shutdown",
        "restart": "restart",
        "isolate": "isolate",
        "isolate_from_cluster": "isolate_from_cluster",
        "produce_to": "produce_to",
        "heal": "heal",
        "pause_fetch": "pause_fetch",
        "resume_fetch": "resume_fetch",
        "slow": "slow",
        "flush": "flush",
        "producing": "set_producing",
        "produce": "produce_once",
        "elect_unclean": "elect_unclean_action",
        "bounce": "bounce",
    }

    def bootstrap(self) -> None:
        spec = self.spec
        for b in spec.brokers:
            epoch = self.dump.offset + spec.brokers.index(b)
            self.breg[b] = BrokerReg(epoch=epoch)
        self.dump.batch(
            self.now,
            [art.register_broker(b, self.breg[b].epoch, 0, self.elr) for b in spec.brokers],
        )
        self.now += 1000
        for b in spec.brokers:
            self.breg[b].fenced = False
        self.dump.batch(
            self.now, [art.broker_change(b, self.breg[b].epoch, fenced=-1) for b in spec.brokers]
        )
        self.now += 59000
        if self.zk:
            assert self.controller is not None
            self._zk_elected(self.now - 59000)
        records: list[dict[str, Any]] = []
        for t in spec.topics:
            self.topic_ids[t.name] = t.topic_id
            self.min_isr[t.name] = t.min_isr
            records.append(art.topic_record(t.name, t.topic_id))
            for p, replicas in enumerate(t.assignments):
                key = (t.name, p)
                self.regs[key] = Registration(list(replicas), list(replicas), replicas[0])
                if self.elr:
                    self.regs[key].elr, self.regs[key].lkelr = [], []
                self.leader_epochs_seen[key] = 0
                self.truth.add_partition(key, leader=replicas[0])
                if self.zk:
                    self.zk_cepoch[key] = self.controller_epoch
                    self._zk_line(key, "NewPartition", self.regs[key])
                records.append(
                    art.partition_record(
                        t.topic_id, p, replicas, replicas, replicas[0], elr=self.elr
                    )
                )
                for r in replicas:
                    self.brokers[r].replicas[key] = ReplicaState(log=Log(kip101=self.kip101))
            if t.min_isr != 1:
                records.append(art.config_record(t.name, "min.insync.replicas", str(t.min_isr)))
        self.dump.batch(self.now, records)
        for registered in self.brokers.values():
            registered.registered = True
            for key in registered.replicas:
                self.apply(registered, key)
        for b in spec.brokers:
            broker = self.brokers[b]
            phase = spec.fetch_phase.get(b, 300 + 50 * (b % 4))
            self.at(phase, self.fetch_tick, broker)
            self.at(spec.lag_ms // 2 + b, self.isr_tick, broker)
            self.at(spec.checkpoint_ms + b, self.checkpoint_tick, broker)
            if broker.flush_ms:
                self.at(broker.flush_ms + 7 * b, self.flush_tick, broker)
        for ps in spec.producers:
            self.at(ps.start_ms + ps.phase_ms, self.producer_tick, ps, 0)
        if self.evidence.consumers:
            Consumers(self).start()
        ev = self.evidence
        if (ev.describe_every_ms or ev.describe_at) and ev.writes("describe"):
            path = self.out / "describe" / "kafka-topics-describe.txt"
            self.describe = Describe(path, self.version)
            times = set(ev.describe_at)
            if ev.describe_every_ms:
                end = spec.duration_ms + spec.settle_ms
                times |= set(range(0, end + 1, ev.describe_every_ms))
            for ms in sorted(times):
                self.at(ms, self.describe_tick)
        for action in spec.schedule:
            fn = getattr(self, self.ACTIONS[action.name])
            self.at(action.at_ms, fn, *action.args)
        self.at(spec.duration_ms, self.restore_all)

    def run(self) -> None:
        spec = self.spec
        self.bootstrap()
        end = spec.duration_ms + spec.settle_ms
        if spec.tail_ms:
            self.run_until(end)
            for ps in spec.producers:
                tail = ProducerSpec(
                    **{**ps.__dict__, "start_ms": end, "stop_ms": end + spec.tail_ms}
                )
                self.at(end + ps.phase_ms, self.tail_tick, tail, 0)
            end += spec.tail_ms
        self.run_until(end)
        self.stopped = True
        self.final_consistency()
        if self.evidence.write is None or "request" in self.evidence.write:
            self.truth.silent_request_logs(
                {b.id for b in self.brokers.values() if b.log.lines == 0}
            )
        self.truth.artefacts_written(self.evidence.write, self.evidence.excerpts_only)
        self.close()

    def describe_tick(self) -> None:
        """One ``kafka-topics --describe`` run (formats-addendum 12.1): the ZooKeeper
        path before 2.4 reads the znodes; later versions ask a broker, which has
        to be reachable."""
        assert self.describe is not None
        if self.version.at_least("2.4") and not any(
            b.reachable and b.registered for b in self.brokers.values()
        ):
            return
        topics = []
        for t in self.spec.topics:
            configs: dict[str, str] = {}
            if t.min_isr != 1:
                configs["min.insync.replicas"] = str(t.min_isr)
            if self.zk and self.spec.unclean_election:
                configs["unclean.leader.election.enable"] = "true"
            parts = [(p, self.regs[(t.name, p)]) for p in range(len(t.assignments))]
            topics.append((t.name, t.topic_id, configs, parts))
            for p, reg in parts:
                self.truth.described((t.name, p), reg.leader, list(reg.isr), self.now)
        self.describe.snapshot(topics)

    def tail_tick(self, ps: ProducerSpec, k: int) -> None:
        stop = ps.stop_ms or 0
        if self.now >= stop:
            return
        self.produce(
            (ps.topic, ps.partition),
            ps.acks if not ps.acks_mix else -1,
            ps.records if not ps.max_records else self.rng.randint(1, ps.max_records),
            ps.client,
        )
        self.at(ps.start_ms + ps.phase_ms + (k + 1) * ps.interval_ms, self.tail_tick, ps, k + 1)

    def close(self) -> None:
        self.dump.close()
        if self.describe is not None:
            self.describe.close()
        if self.zk:
            self.zclog.close()
        else:
            self.clog.close()
        for b in self.brokers.values():
            b.log.close()
            b.logs.close()
            if not self.evidence.writes("checkpoints"):
                continue
            lg.write_checkpoints(
                self.out / f"broker-{b.id}",
                [
                    (
                        key[0],
                        key[1],
                        self.topic_ids[key[0]],
                        rs.log.cache,
                        rs.log.hwm_checkpoint,
                        rs.log.flushed,
                    )
                    for key, rs in sorted(b.replicas.items())
                ],
                per_partition=not self.hw_era,
            )


def write_truth(out: Path, truth: dict[str, Any]) -> None:
    (out / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
