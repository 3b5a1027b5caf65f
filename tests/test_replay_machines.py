"""Hypothesis state machines, one per protocol era, that run a partition by
that era's rules and write the evidence a cluster of that era leaves.

The machines keep their own model of every replica's log (the epoch each
record was written in), its HW, the leader's view of its followers' log ends
and the leader-epoch caches; they never call the replay to decide what is
legal. Rules (seeds 004 and 001 for zk-hw, 000 and KIP-101/279/320 for the
leader-epoch eras, 003 for KRaft, 002 for KIP-966):

- produce (acks=1, and acks=all answered once the HW passed the batch; under
  KIP-966 only with the ISR at min ISR);
- follower fetch at the follower's log end: the leader stores it, raises its
  HW to the ISR's least log end (kraft-elr: only with ISR >= min ISR),
  answers with the HW from before (the second round propagates it), and in
  the leader-epoch eras with a diverging epoch when the follower's last
  fetched epoch ends earlier on the leader (the follower truncates to the
  lesser of that end and its own end of that epoch, and fetches again);
  a caught-up follower rejoins the ISR (and leaves the ELR);
- ISR shrink by the era's records (LeaderAndIsr with a new zkVersion, or a
  PartitionChangeRecord); under KIP-966 a replica removed below min ISR joins
  the ELR;
- clean election on a crash or a controlled shutdown: from the ISR, else
  (kraft-elr) from the ELR; in zk-hw every follower truncates to its own HW
  as it starts following, so the machine first lets the leader's HW reach
  every live follower, as the era's safe operation needs (their records
  above it are uncommitted and truncated by design);
- a follower crash and restart (zk-hw: the restart truncates to the HW).

Invariant at teardown: replaying the written history finds nothing and the
verdict is ``valid``. Mutated machines end the same random histories with
one protocol-illegal step and expect exactly the findings it implies.

Every line of one broker shares its clock; lines of different clocks are
written more than the skew allowance apart, so that no judgement depends on
an order the clocks leave open (``test_replay_ordering.py`` covers that).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from replay import ReplayContext, replay_partition
from replay.types import (
    RECOVERING,
    BecomeLeader,
    BrokerFencing,
    Confidence,
    Event,
    FetchAnswer,
    FindingKind,
    FollowerFetch,
    LeaderAndIsr,
    LogTruncated,
    Origin,
    PartitionChangeRecord,
    PartitionRecord,
    ProduceAck,
    Profile,
    Scope,
    Source,
    Verdict,
)
from tests.replay_fixtures import KEY, T0

REPLICAS = (1, 2, 3)
MIN_ISR = 2  # kraft-elr
SKEW = 2.0
CROSS_CLOCK_GAP = 3.0  # > SKEW
METADATA = "controller/metadata.txt"
ZK_CONTROLLER = "controller/state-change.log"


@dataclass
class Replica:
    #: the leader epoch each record was written in
    log: list[int] = field(default_factory=list)
    hw: int = 0
    alive: bool = True
    #: epochs this replica led, with their start offsets (its epoch cache
    #: entries that may hold no record)
    led: dict[int, int] = field(default_factory=dict)

    @property
    def leo(self) -> int:
        return len(self.log)

    def cache(self) -> list[tuple[int, int]]:
        """The leader-epoch cache: (epoch, start offset), by epoch."""
        entries: dict[int, int] = {}
        for offset, epoch in enumerate(self.log):
            entries.setdefault(epoch, offset)
        for epoch, start in self.led.items():
            entries.setdefault(epoch, start)
        out: list[tuple[int, int]] = []
        for epoch in sorted(entries):
            start = entries[epoch]
            if out and start < out[-1][1]:
                start = out[-1][1]
            out.append((epoch, start))
        return out

    def end_of(self, epoch: int) -> tuple[int, int]:
        """OffsetsForLeaderEpoch (KIP-101): the largest cached epoch not above
        ``epoch`` and where it ends ((-1, -1) when there is none)."""
        cache = self.cache()
        below = [i for i, (e, _) in enumerate(cache) if e <= epoch]
        if not below:
            return -1, -1
        i = below[-1]
        end = cache[i + 1][1] if i + 1 < len(cache) else self.leo
        return cache[i][0], end

    def truncate(self, offset: int) -> None:
        del self.log[offset:]
        self.hw = min(self.hw, offset)
        self.led = {e: s for e, s in self.led.items() if s < offset}


@dataclass
class Expected:
    kind: FindingKind
    leader_epoch: int
    replica: int | None
    offset_start: int | None
    offset_end: int | None
    records_lost: int | None
    qualifier: Scope | None = None

    def key(self) -> tuple[object, ...]:
        return (
            self.kind.value,
            KEY.partition,
            self.replica,
            self.leader_epoch,
            self.offset_start,
            self.offset_end,
            self.records_lost,
            self.qualifier,
        )


class Partition:
    """One partition run by an era's rules, writing that era's evidence."""

    def __init__(self, era: Profile) -> None:
        self.era = era
        self.epochs_in_fetch = era != Profile.ZK_HW
        self.answers = era != Profile.ZK_HW  # zk-hw request logs show no response HWM
        self.kraft = era in (Profile.KRAFT, Profile.KRAFT_ELR)
        self.events: list[Event] = []
        self.clock = 0.0
        self.last_clock: object = None
        self.lines: dict[str, int] = {}
        self.metadata_offset = 0
        self.zk_version = 0
        self.replicas = {r: Replica() for r in REPLICAS}
        self.leader = 1
        self.epoch = 0
        self.isr = list(REPLICAS)
        self.elr: list[int] = []
        #: the leader's view of each follower's log end (its latest fetch
        #: offset) in the current epoch
        self.view: dict[int, int] = {}
        #: the highest HWM the evidence shows (answers, acks=all, or in zk-hw
        #: the ISR followers' least fetch offset in the epoch)
        self.exposed = 0
        #: each replica's log end as its own latest fetch (or truncation
        #: line) shows it: what the evidence says it held
        self.shown: dict[int, int] = {r: 0 for r in REPLICAS}
        #: findings the era's own rules make along the way (zk-hw: a
        #: restarting follower truncates to its HW, which can be below a HWM
        #: the leader reached while it was down)
        self.incidental: list[Expected] = []
        self.replicas[1].led[0] = 0
        if self.kraft:
            self._add(
                PartitionRecord(
                    self._origin(METADATA, None, metadata=True),
                    replicas=REPLICAS,
                    isr=REPLICAS,
                    leader=1,
                    leader_epoch=0,
                    partition_epoch=0,
                    elr=() if era == Profile.KRAFT_ELR else None,
                    last_known_elr=() if era == Profile.KRAFT_ELR else None,
                )
            )
        else:
            self._zk_decision()

    # --- evidence -------------------------------------------------------------

    def _origin(self, file: str, observer: int | None, metadata: bool = False) -> Origin:
        clock_id = observer if observer is not None else "controller"
        self.clock += CROSS_CLOCK_GAP if clock_id != self.last_clock else 0.01
        self.last_clock = clock_id
        line = self.lines.get(file, 0) + 1
        self.lines[file] = line
        offset = None
        if metadata:
            offset = self.metadata_offset
            self.metadata_offset += 1
        at = T0 + timedelta(seconds=self.clock)
        return Origin(Source(file, line), at, observer, offset, line)

    def _add(self, event: Event) -> None:
        self.events.append(event)

    def _zk_decision(self) -> None:
        self._add(
            LeaderAndIsr(
                self._origin(ZK_CONTROLLER, None),
                leader=self.leader,
                leader_epoch=self.epoch,
                isr=tuple(self.isr),
                partition_epoch=self.zk_version,
                controller_epoch=1,
            )
        )
        self.zk_version += 1

    def _change(
        self,
        *,
        leader: int | None = None,
        isr: list[int] | None = None,
        elr: list[int] | None = None,
        recovering: bool = False,
    ) -> None:
        """Record the partition's new state by the era's means."""
        if isr is not None:
            self.isr = list(isr)
        if elr is not None:
            self.elr = list(elr)
        if leader is not None:
            self.leader = leader
            self.epoch += 1
        if not self.kraft:
            self._zk_decision()
            return
        elr_field = tuple(self.elr) if self.era == Profile.KRAFT_ELR and elr is not None else None
        self._add(
            PartitionChangeRecord(
                self._origin(METADATA, None, metadata=True),
                leader=leader if leader is not None else -2,
                isr=tuple(isr) if isr is not None else None,
                leader_recovery_state=RECOVERING if recovering else -1,
                elr=elr_field,
            )
        )

    def _fence(self, broker: int, fenced: int) -> None:
        if self.kraft:
            self._add(
                BrokerFencing(
                    self._origin(METADATA, None, metadata=True),
                    broker=broker,
                    broker_epoch=None,
                    fenced=fenced,
                )
            )

    def _request_log(self, broker: int) -> str:
        return f"broker-{broker}/kafka-request.log"

    # --- the era's rules ------------------------------------------------------

    def lfe(self, replica: int) -> int:
        log = self.replicas[replica].log
        return log[-1] if log else -1

    def produce(self, records: int, acks_all: bool) -> None:
        leader = self.replicas[self.leader]
        base = leader.leo
        leader.log.extend([self.epoch] * records)
        if self.era == Profile.ZK_HW:
            return  # its request log shows no produce offsets
        if not acks_all:
            self._add(
                ProduceAck(self._origin(self._request_log(self.leader), self.leader), 1, base, 0)
            )
            return
        self.replicate()
        enough = self.era != Profile.KRAFT_ELR or len(self.isr) >= MIN_ISR
        if enough and leader.hw >= base + records:
            self._add(
                ProduceAck(
                    self._origin(self._request_log(self.leader), self.leader), -1, base, 0, "app"
                )
            )
            self.exposed = max(self.exposed, base + 1)

    def advance_hw(self) -> None:
        """Seed 000 (leader side, on a follower's fetch) and seeds 004/001:
        the HW is the ISR's least log end; KIP-966: only with ISR >= min."""
        leader = self.replicas[self.leader]
        if self.era == Profile.KRAFT_ELR and len(self.isr) < MIN_ISR:
            return
        followers = [r for r in self.isr if r != self.leader]
        if any(f not in self.view for f in followers):
            return
        low = min((self.view[f] for f in followers), default=leader.leo)
        leader.hw = max(leader.hw, min(low, leader.leo))
        if self.era == Profile.ZK_HW and followers:
            # what the fetch offsets show: the ISR followers' least log end
            self.exposed = max(self.exposed, low)

    def fetch(self, follower: int) -> None:
        leader_id = self.leader
        leader, f = self.replicas[leader_id], self.replicas[follower]
        if follower == leader_id or not f.alive:
            return
        log_file = self._request_log(leader_id)
        while self.epochs_in_fetch and f.log:
            lfe = self.lfe(follower)
            epoch, end = leader.end_of(lfe)
            if epoch == lfe and end >= f.leo:
                break
            # KIP-320: the leader names where the follower's epoch ends on it
            origin = self._origin(log_file, leader_id)
            self._add(FollowerFetch(origin, follower, f.leo, lfe, self.epoch))
            self._add(
                FetchAnswer(
                    Origin(origin.source, origin.time, leader_id, None, origin.seq),
                    follower,
                    leader.hw,
                    0,
                    epoch,
                    end,
                )
            )
            self.exposed = max(self.exposed, leader.hw)
            before = f.leo
            f.truncate(max(0, min(end, f.end_of(epoch)[1])) if epoch >= 0 else 0)
            if f.leo >= before:
                break
        offset = f.leo
        origin = self._origin(log_file, leader_id)
        if self.epochs_in_fetch:
            self._add(FollowerFetch(origin, follower, offset, self.lfe(follower), self.epoch))
        else:
            self._add(FollowerFetch(origin, follower, offset, None, None))
        answered_hw = leader.hw  # read before this fetch is stored
        self.view[follower] = offset
        self.shown[follower] = offset
        self.advance_hw()
        if self.answers:
            self._add(
                FetchAnswer(
                    Origin(origin.source, origin.time, leader_id, None, origin.seq),
                    follower,
                    answered_hw,
                    0,
                )
            )
            self.exposed = max(self.exposed, answered_hw)
        f.log.extend(leader.log[offset:])
        f.hw = min(f.leo, answered_hw)
        start = leader.led.get(self.epoch, 0)
        if follower not in self.isr and offset >= leader.hw and offset >= start:
            elr = [r for r in self.elr if r != follower]
            self._change(isr=self.isr + [follower], elr=elr if self.elr else None)

    def replicate(self, rounds: int = 2) -> None:
        for _ in range(rounds):
            for r in REPLICAS:
                self.fetch(r)

    def settle(self, *brokers: int) -> None:
        """zk-hw: let the HW of live followers (``brokers``, else all) reach
        the leader's, as the era's safe operation needs before a leader
        change or a restart: each fetches until an answer carries it. Their
        records above it stay uncommitted and are truncated by design."""
        leader = self.replicas[self.leader]
        for r in brokers or REPLICAS:
            replica = self.replicas[r]
            for _ in range(4):
                if r == self.leader or not replica.alive or replica.hw >= leader.hw:
                    break
                self.fetch(r)

    def shrink(self, follower: int) -> None:
        if follower not in self.isr or follower == self.leader:
            return
        isr = [r for r in self.isr if r != follower]
        if self.era == Profile.KRAFT_ELR and len(isr) < MIN_ISR:
            self._change(isr=isr, elr=self.elr + [follower])  # KIP-966
        else:
            self._change(isr=isr)

    def crash_follower(self, broker: int) -> None:
        if broker == self.leader or not self.replicas[broker].alive:
            return
        if self.era == Profile.ZK_HW:
            self.settle(broker)
        self.replicas[broker].alive = False
        self._fence(broker, 1)
        if broker in self.isr or broker in self.elr:
            elr = [r for r in self.elr if r != broker]
            self._change(
                isr=[r for r in self.isr if r != broker], elr=elr if broker in self.elr else None
            )

    def restart(self, broker: int) -> None:
        replica = self.replicas[broker]
        if replica.alive:
            return
        replica.alive = True
        self._fence(broker, -1)
        if self.era == Profile.ZK_HW and replica.hw < replica.leo:
            # 0.8-0.10: a starting follower truncates to its HW (seed 004);
            # settled before it crashed, its HW was the leader's, but the
            # leader's may have passed it since: then the records it drops
            # were committed (a local truncation: the ISR holds them)
            end = min(self.shown[broker], self.exposed)
            if replica.hw < end:
                self.incidental.append(
                    Expected(
                        FindingKind.TRUNCATION_BELOW_HWM,
                        self.epoch,
                        broker,
                        replica.hw,
                        end,
                        None,
                        Scope.LOCAL,
                    )
                )
            self._truncate_line(broker, replica.hw)

    def _truncate_line(self, broker: int, to: int) -> None:
        self.replicas[broker].truncate(to)
        self.shown[broker] = to
        self._add(
            LogTruncated(self._origin(f"broker-{broker}/server.log", broker), broker, to_offset=to)
        )

    def candidates(self) -> list[int]:
        live = [r for r in self.isr if r != self.leader and self.replicas[r].alive]
        if not live and self.era == Profile.KRAFT_ELR:
            live = [r for r in self.elr if self.replicas[r].alive]
        return live

    def failover(self, controlled: bool) -> None:
        old = self.leader
        if not self.candidates():
            return
        if self.era == Profile.ZK_HW:
            self.settle()
        new = min(self.candidates())
        from_elr = new not in self.isr
        if self.kraft and not controlled:
            self._fence(old, 1)
        isr = [new] if from_elr else [r for r in self.isr if r != old]
        elr = [r for r in self.elr if r != new and r != old]
        self._change(leader=new, isr=isr, elr=elr if self.era == Profile.KRAFT_ELR else None)
        if self.kraft and controlled:
            self._fence(old, 1)
        self.replicas[old].alive = False
        self.begin_epoch(new)
        if self.era == Profile.ZK_HW:
            for r in REPLICAS:
                replica = self.replicas[r]
                if r != new and replica.alive and replica.hw < replica.leo:
                    self._truncate_line(r, replica.hw)

    def begin_epoch(self, new: int) -> None:
        replica = self.replicas[new]
        replica.led[self.epoch] = replica.leo
        self.view = {}
        self._add(
            BecomeLeader(
                self._origin(f"broker-{new}/state-change.log", new),
                broker=new,
                leader_epoch=self.epoch,
                start_offset=replica.leo,
                hwm=replica.hw,
            )
        )

    # --- mutations: one protocol-illegal step ----------------------------------

    def _prepare(self) -> tuple[int, int]:
        """Every broker up; a follower ``other`` in the ISR holding records of
        the current epoch, committed and shown; ``lagging`` the third."""
        for r in REPLICAS:
            self.restart(r)
        lagging, other = [r for r in REPLICAS if r != self.leader][:2]
        self.fetch(lagging)  # drops any stale suffix and catches up
        for _ in range(3):
            self.fetch(other)
        if self.era == Profile.KRAFT_ELR and lagging in self.elr:
            self._change(elr=[r for r in self.elr if r != lagging])
        return lagging, other

    def _commit_more(self, other: int, records: int) -> None:
        self.produce(records, acks_all=False)
        for _ in range(3):
            self.fetch(other)

    def elect_out_of_sync(self, records: int) -> list[Expected]:
        """The controller elects a replica outside the ISR (and ELR) that
        lacks committed records: forbidden in every era here."""
        lagging, other = self._prepare()
        if lagging in self.isr:
            self.shrink(lagging)
        self._commit_more(other, records)
        start, committed = self.replicas[lagging].leo, self.exposed
        assert start < committed
        self._change(
            leader=lagging,
            isr=[lagging],
            elr=[] if self.era == Profile.KRAFT_ELR else None,
            recovering=self.kraft,
        )
        self.begin_epoch(lagging)
        lost = committed - start
        expected = [
            Expected(FindingKind.UNCLEAN_ELECTION, self.epoch, lagging, start, committed, lost),
            Expected(FindingKind.COMMITTED_DATA_LOSS, self.epoch, None, start, committed, lost),
        ]
        if self.era == Profile.ZK_HW:
            # no fetch answer is logged in that era: the new leader's own line
            # shows the HWM it starts serving, below the committed mark
            hw = self.replicas[lagging].hw
            expected.append(
                Expected(FindingKind.HWM_REGRESSION, self.epoch, lagging, hw, committed, None)
            )
        return expected

    def truncate_below_hwm(self, records: int) -> list[Expected]:
        """A follower's log end goes below the HWM: forbidden (seed 003 2.3)."""
        lagging, other = self._prepare()
        if lagging in self.isr:
            self.shrink(lagging)
        self._commit_more(other, records)
        committed, held = self.exposed, self.view[other]
        assert committed > 0
        to = committed // 2
        self._truncate_line(other, to)
        return [
            Expected(
                FindingKind.TRUNCATION_BELOW_HWM,
                self.epoch,
                other,
                to,
                min(held, committed),
                None,
                Scope.LOCAL,
            )
        ]

    def hw_restart_then_elected(self, records: int) -> list[Expected]:
        """zk-hw, seed 000 "High watermark truncation followed by immediate
        leader election": the follower got the records and the leader's HW
        passed them on its next fetch, but the follower's own HW did not (the
        second round had not come back); it restarts, truncates to its HW,
        the leader fails and the follower is elected."""
        lagging, other = self._prepare()
        if lagging in self.isr:
            self.shrink(lagging)
        self.fetch(other)
        self.fetch(other)  # its HW now equals the leader's
        self.produce(records, acks_all=False)
        self.fetch(other)  # gets the records; the leader stores its old end
        self.fetch(other)  # the leader's HW passes them; the answer does not
        victim = self.replicas[other]
        own_hw, committed = victim.hw, self.exposed
        assert own_hw < committed == victim.leo
        self._truncate_line(other, own_hw)
        self._change(leader=other, isr=[other])
        self.begin_epoch(other)
        return [
            Expected(
                FindingKind.TRUNCATION_BELOW_HWM,
                self.epoch - 1,
                other,
                own_hw,
                committed,
                None,
                Scope.LOCAL,
            ),
            Expected(
                FindingKind.COMMITTED_DATA_LOSS,
                self.epoch,
                None,
                own_hw,
                committed,
                committed - own_hw,
            ),
            # its line on taking the epoch shows the HWM it starts serving
            Expected(FindingKind.HWM_REGRESSION, self.epoch, other, own_hw, committed, None),
        ]


def replay(partition: Partition):  # type: ignore[no-untyped-def]
    ctx = ReplayContext(
        key=KEY,
        profile=partition.era,
        max_clock_skew_s=SKEW,
        request_log_observers=frozenset(REPLICAS),
    )
    return replay_partition(partition.events, ctx)


def found(result) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    return sorted(
        (
            f.kind.value,
            f.key.partition,
            f.replica,
            f.leader_epoch,
            f.offset_start,
            f.offset_end,
            f.records_lost,
            f.qualifier
            if f.kind in (FindingKind.TRUNCATION_BELOW_HWM, FindingKind.LOG_DIVERGENCE)
            else None,
        )
        for f in result.findings
    )


class EraMachine(RuleBasedStateMachine):
    ERA: Profile = Profile.KRAFT
    #: None for the protocol-legal machine, else the illegal last step
    MUTATION: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.partition = Partition(self.ERA)

    @rule(records=st.integers(1, 8), acks_all=st.booleans())
    def produce(self, records: int, acks_all: bool) -> None:
        self.partition.produce(records, acks_all)

    @rule(follower=st.sampled_from(REPLICAS))
    def fetch(self, follower: int) -> None:
        self.partition.fetch(follower)

    @rule()
    def replicate(self) -> None:
        self.partition.replicate()

    @rule(follower=st.sampled_from(REPLICAS))
    def shrink(self, follower: int) -> None:
        self.partition.shrink(follower)

    @rule(broker=st.sampled_from(REPLICAS))
    def crash_follower(self, broker: int) -> None:
        self.partition.crash_follower(broker)

    @rule(broker=st.sampled_from(REPLICAS))
    def restart(self, broker: int) -> None:
        self.partition.restart(broker)

    @rule(controlled=st.booleans())
    def failover(self, controlled: bool) -> None:
        self.partition.failover(controlled)

    @invariant()
    def model_is_consistent(self) -> None:
        p = self.partition
        leader = p.replicas[p.leader]
        assert p.leader in p.isr
        assert leader.hw <= leader.leo
        # Leader Completeness in the model: the leader holds what the
        # evidence shows committed, and every ISR member its HW
        assert leader.leo >= p.exposed
        assert all(p.replicas[r].leo >= leader.hw for r in p.isr)

    def teardown(self) -> None:
        p = self.partition
        if self.MUTATION is None:
            result = replay(p)
            assert found(result) == sorted(e.key() for e in p.incidental)
            assert result.coverage.gaps == ()
            assert result.verdict == (Verdict.INVALID if p.incidental else Verdict.VALID)
            return
        records = 1 + len(p.events) % 5
        if self.MUTATION == "elect_out_of_sync":
            expected = p.elect_out_of_sync(records)
        elif self.MUTATION == "truncate_below_hwm":
            expected = p.truncate_below_hwm(records)
        else:
            expected = p.hw_restart_then_elected(records)
        result = replay(p)
        assert found(result) == sorted(e.key() for e in expected + p.incidental)
        assert result.verdict == Verdict.INVALID
        if p.era == Profile.ZK_HW:
            # resting only on a HW derived from fetch offsets (seed 000)
            assert {f.confidence for f in result.findings} == {Confidence.PROBABLE}
            assert all(f.derived_mark for f in result.findings)


CI = settings(
    max_examples=50,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
MUTATED = settings(CI, max_examples=25)
SLOW = settings(CI, max_examples=400, stateful_step_count=60)


def _machine(era: Profile, mutation: str | None) -> type[EraMachine]:
    name = f"{era.name.title().replace('_', '')}{'' if mutation is None else mutation.title()}"
    return type(f"{name}Machine", (EraMachine,), {"ERA": era, "MUTATION": mutation})


ERAS = (Profile.ZK_HW, Profile.ZK_EPOCH, Profile.KRAFT, Profile.KRAFT_ELR)

ZkHwLegal = _machine(Profile.ZK_HW, None)
ZkEpochLegal = _machine(Profile.ZK_EPOCH, None)
KraftLegal = _machine(Profile.KRAFT, None)
KraftElrLegal = _machine(Profile.KRAFT_ELR, None)

TestZkHwLegal = ZkHwLegal.TestCase
TestZkHwLegal.settings = CI
TestZkEpochLegal = ZkEpochLegal.TestCase
TestZkEpochLegal.settings = CI
TestKraftLegal = KraftLegal.TestCase
TestKraftLegal.settings = CI
TestKraftElrLegal = KraftElrLegal.TestCase
TestKraftElrLegal.settings = CI

TestZkHwElectOutOfSync = _machine(Profile.ZK_HW, "elect_out_of_sync").TestCase
TestZkHwElectOutOfSync.settings = MUTATED
TestZkEpochElectOutOfSync = _machine(Profile.ZK_EPOCH, "elect_out_of_sync").TestCase
TestZkEpochElectOutOfSync.settings = MUTATED
TestKraftElectOutOfSync = _machine(Profile.KRAFT, "elect_out_of_sync").TestCase
TestKraftElectOutOfSync.settings = MUTATED
TestKraftElrElectOutOfSync = _machine(Profile.KRAFT_ELR, "elect_out_of_sync").TestCase
TestKraftElrElectOutOfSync.settings = MUTATED

TestZkHwTruncateBelowHwm = _machine(Profile.ZK_HW, "truncate_below_hwm").TestCase
TestZkHwTruncateBelowHwm.settings = MUTATED
TestZkEpochTruncateBelowHwm = _machine(Profile.ZK_EPOCH, "truncate_below_hwm").TestCase
TestZkEpochTruncateBelowHwm.settings = MUTATED
TestKraftTruncateBelowHwm = _machine(Profile.KRAFT, "truncate_below_hwm").TestCase
TestKraftTruncateBelowHwm.settings = MUTATED
TestKraftElrTruncateBelowHwm = _machine(Profile.KRAFT_ELR, "truncate_below_hwm").TestCase
TestKraftElrTruncateBelowHwm.settings = MUTATED

TestZkHwRestartThenElected = _machine(Profile.ZK_HW, "hw_restart_then_elected").TestCase
TestZkHwRestartThenElected.settings = MUTATED


def test_a_zk_hw_follower_back_below_a_hwm_reached_while_it_was_down() -> None:
    """Found by Hypothesis (kept as a fixed case): broker 2 fetches record 0
    while the leader's HW is 0 (broker 3 has not fetched), crashes (settled:
    its HW is the leader's, 0), broker 3 fetches twice and the HW reaches 1.
    Back, broker 2 truncates to its HW 0, below the HWM 1 its fetch from 1
    showed it held: a local truncation, in the model as in the replay."""
    p = Partition(Profile.ZK_HW)
    p.produce(1, acks_all=False)
    p.fetch(2)
    p.fetch(2)
    p.crash_follower(2)
    p.replicate()
    expected = p.elect_out_of_sync(1 + len(p.events) % 5)
    assert [e.key() for e in p.incidental] == [
        ("truncation_below_hwm", KEY.partition, 2, 0, 0, 1, None, Scope.LOCAL)
    ]
    result = replay(p)
    assert found(result) == sorted(e.key() for e in expected + p.incidental)
    assert result.verdict == Verdict.INVALID


@pytest.mark.slow
class TestLegalHistoriesLonger:
    """The legal machines with more and longer histories (``-m slow``)."""

    @pytest.mark.parametrize("era", ERAS, ids=[e.value for e in ERAS])
    def test_legal(self, era: Profile) -> None:
        from hypothesis.stateful import run_state_machine_as_test

        run_state_machine_as_test(_machine(era, None), settings=SLOW)


# --- the seed 000 story, told by its events -------------------------------------------


def test_seed_000_hw_truncation_then_election_is_judged_from_fetch_offsets() -> None:
    """Seed 000 "High watermark truncation followed by immediate leader
    election", in zk-hw evidence: the leader B's request log shows A's fetch
    offsets (A's log end) and no HWM; B's HW is derived from them. A fetches
    m2 (offset 1), its next fetch at 2 lets B's HW pass m2, A restarts and
    truncates to its own HW 1, B fails and A is elected: m2 is lost."""
    a, b = 1, 2
    events: list[Event] = []
    clock = [0.0]
    lines: dict[str, int] = {}

    def origin(file: str, observer: int | None, seconds: float) -> Origin:
        clock[0] += seconds
        lines[file] = lines.get(file, 0) + 1
        n = lines[file]
        return Origin(Source(file, n), T0 + timedelta(seconds=clock[0]), observer, None, n)

    request_log = f"broker-{b}/kafka-request.log"
    events.append(LeaderAndIsr(origin(ZK_CONTROLLER, None, 0), b, 0, (b, a), 0, None, 1))
    events.append(FollowerFetch(origin(request_log, b, 3), a, 0, None, None))
    events.append(FollowerFetch(origin(request_log, b, 0.5), a, 1, None, None))  # m1 held
    events.append(FollowerFetch(origin(request_log, b, 0.5), a, 2, None, None))  # m2 held
    events.append(LogTruncated(origin(f"broker-{a}/server.log", a, 5), a, 1))  # restart: HW 1
    events.append(LeaderAndIsr(origin(ZK_CONTROLLER, None, 5), a, 1, (a,), 1, None, 1))
    events.append(BecomeLeader(origin(f"broker-{a}/state-change.log", a, 3), a, 1, 1, 1))

    result = replay_partition(
        events,
        ReplayContext(KEY, profile=Profile.ZK_HW, request_log_observers=frozenset({a, b})),
    )

    assert found(result) == [
        ("committed_data_loss", 0, None, 1, 1, 2, 1, None),
        # A's "starts at leader epoch 1 ... with high watermark 1" line
        ("hwm_regression", 0, a, 1, 1, 2, None, None),
        ("truncation_below_hwm", 0, a, 0, 1, 2, None, Scope.LOCAL),
    ]
    truncation = next(f for f in result.findings if f.kind == FindingKind.TRUNCATION_BELOW_HWM)
    loss = next(f for f in result.findings if f.kind == FindingKind.COMMITTED_DATA_LOSS)
    assert truncation.confidence == loss.confidence == Confidence.PROBABLE
    assert truncation.derived_mark and loss.derived_mark
    # the derived mark's evidence is A's fetch at 2 in B's request log
    assert (request_log, 3) in [(e.source_file, e.line_no) for e in truncation.evidence]
    assert (request_log, 3) in [(e.source_file, e.line_no) for e in loss.evidence]
    text = truncation.explain()
    assert "KIP-101" in text and "derived" in text
    assert "derived" in loss.explain()
    assert result.verdict == Verdict.INVALID


def test_the_derived_mark_counts_in_zk_epoch_only_without_answers() -> None:
    """zk-epoch: the same fetch offsets derive the mark when no answer shows
    a HWM; once an answer does, the answers alone are the evidence."""
    a, b = 1, 2
    request_log = f"broker-{b}/kafka-request.log"

    def story(with_answer: bool) -> list[Event]:
        t = [0.0]

        def o(file: str, observer: int | None, n: int) -> Origin:
            t[0] += 3
            return Origin(Source(file, n), T0 + timedelta(seconds=t[0]), observer, None, n)

        events: list[Event] = [LeaderAndIsr(o(ZK_CONTROLLER, None, 1), b, 0, (b, a), 0, None, 1)]
        events.append(FollowerFetch(o(request_log, b, 1), a, 0, -1, 0))
        events.append(FollowerFetch(o(request_log, b, 2), a, 5, 0, 0))
        if with_answer:
            events.append(FetchAnswer(o(request_log, b, 3), a, 3, 0))
        events.append(LogTruncated(o(f"broker-{a}/server.log", a, 1), a, 2))
        return events

    ctx = ReplayContext(KEY, profile=Profile.ZK_EPOCH, request_log_observers=frozenset({a, b}))
    derived = replay_partition(story(False), ctx)
    answered = replay_partition(story(True), ctx)

    assert found(derived) == [("truncation_below_hwm", 0, a, 0, 2, 5, None, Scope.LOCAL)]
    assert derived.findings[0].confidence == Confidence.PROBABLE
    assert derived.findings[0].derived_mark
    assert found(answered) == [("truncation_below_hwm", 0, a, 0, 2, 3, None, Scope.LOCAL)]
    assert not answered.findings[0].derived_mark
    # kraft judges by answers only: the same fetches without one show nothing committed
    kraft = replay_partition(
        story(False),
        ReplayContext(KEY, profile=Profile.KRAFT, request_log_observers=frozenset({a, b})),
    )
    assert found(kraft) == []


@pytest.mark.xfail(
    strict=True,
    reason="known: replica 2's record at offset 0 from epoch 0, which epoch 2 (leader 3, "
    "from offset 0) rewrote, is judged on epoch 3's mark as a truncation with qualifier "
    "unknown. Replica 2 led epoch 1 from offset 1, so its newest record is of epoch 1 or "
    "earlier, but 0.10 data names no epoch and the replay keeps its top epoch unknown",
)
def test_zk_hw_a_restart_then_elected_history_hypothesis_found() -> None:
    """A history the ZooKeeper-HW machine drew in CI (hw_restart_then_elected,
    kept as found): only replica 3's truncation of [1, 6) in epoch 3 is below
    the HWM, with the election that lost it."""
    machine = _machine(Profile.ZK_HW, "hw_restart_then_elected")()
    machine.produce(records=1, acks_all=False)
    machine.fetch(follower=2)
    machine.failover(controlled=False)
    machine.failover(controlled=False)
    machine.restart(broker=1)
    machine.produce(records=1, acks_all=False)
    machine.replicate()
    machine.replicate()
    machine.failover(controlled=False)
    p = machine.partition
    expected = p.hw_restart_then_elected(1 + len(p.events) % 5)

    result = replay(p)

    assert sorted(e.key() for e in expected) == [
        ("committed_data_loss", 0, None, 4, 1, 6, 5, None),
        ("hwm_regression", 0, 3, 4, 1, 6, None, None),
        ("truncation_below_hwm", 0, 3, 3, 1, 6, None, Scope.LOCAL),
    ]
    assert found(result) == sorted(e.key() for e in expected)
