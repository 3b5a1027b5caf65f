"""The protocol's stories in KRaft terms, replayed by the pure core."""

from __future__ import annotations

from dataclasses import replace

import pytest

from replay import ReplayContext, replay_partition
from replay.findings import (
    CommittedDataLoss,
    HwmRegression,
    LogDivergence,
    TruncationBelowHwm,
    UncleanElection,
)
from replay.types import (
    NO_LEADER,
    RECOVERING,
    Confidence,
    ElectionKind,
    FindingKind,
    Scope,
    Severity,
    Verdict,
)
from tests.replay_fixtures import KEY, Story

ALL_LOGS = ReplayContext(key=KEY, request_log_observers=frozenset({1, 2, 3}))


def by_kind(result, kind):  # type: ignore[no-untyped-def]
    return [f for f in result.findings if f.kind == kind]


def test_clean_failover_has_no_finding() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.produce(1, 99, acks=-1)
    s.tick()
    s.fence(1)
    s.change(leader=2, isr=(2, 3))
    s.tick()
    s.fetch(2, 3, 100, epoch=1, last_fetched=0, hwm=100)
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=100)
    s.change(isr=(2, 3, 1))

    result = replay_partition(s.events, ALL_LOGS)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert [(v.leader_epoch, v.leader, v.election) for v in result.lineage] == [
        (0, 1, ElectionKind.INITIAL),
        (1, 2, ElectionKind.CLEAN),
    ]


def unclean_story() -> Story:
    """Seed 003 2.8 and kafka-formats.md 2.6: the ISR shrinks to the leader,
    the leader is fenced, an out-of-sync replica is elected uncleanly, and the
    old leader returns and truncates below the HWM."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))  # 2 and 3 fall behind; no leader change, no new epoch
    s.fetch(1, 2, 120, epoch=0, last_fetched=0, hwm=150)  # leader alone: HWM = its LEO
    s.produce(1, 140, acks=-1, client="billing")
    s.tick(10)
    s.fence(1)
    s.change(leader=NO_LEADER)  # last ISR member fenced: offline, epoch 1
    s.change(leader=2, isr=(2,), recovery=RECOVERING)  # ElectLeaders(UNCLEAN): epoch 2
    s.tick()
    s.fetch(2, 3, 100, epoch=2, last_fetched=0, hwm=120)
    s.produce(2, 120, acks=-1, client="billing")
    s.tick(10)
    s.fetch(2, 1, 150, epoch=2, last_fetched=0, hwm=121, diverging=(0, 120))
    s.fetch(2, 1, 120, epoch=2, last_fetched=0, hwm=121)
    s.fetch(2, 1, 121, epoch=2, last_fetched=2, hwm=121)
    return s


def test_unclean_election_then_truncation_below_hwm_loses_committed_data() -> None:
    result = replay_partition(unclean_story().events, ALL_LOGS)

    assert result.verdict == Verdict.INVALID
    assert sorted(f.kind.value for f in result.findings) == [
        "committed_data_loss",
        "hwm_regression",
        "truncation_below_hwm",
        "unclean_election",
    ]

    [election] = by_kind(result, FindingKind.UNCLEAN_ELECTION)
    assert isinstance(election, UncleanElection)
    assert (election.key.topic, election.key.partition) == ("orders", 0)
    assert (election.leader_epoch, election.replica) == (2, 2)
    assert (election.offset_start, election.offset_end, election.records_lost) == (120, 150, 30)
    assert election.severity == Severity.CRITICAL
    assert election.confidence == Confidence.CONFIRMED

    [truncation] = by_kind(result, FindingKind.TRUNCATION_BELOW_HWM)
    assert isinstance(truncation, TruncationBelowHwm)
    assert (truncation.leader_epoch, truncation.replica) == (2, 1)
    assert (truncation.offset_start, truncation.offset_end) == (120, 150)
    assert truncation.records_lost == 30
    assert truncation.qualifier == Scope.GLOBAL
    assert truncation.caused_by == (election.anomaly_id,)
    assert [(e.source_file, e.line_no) for e in truncation.evidence] == [
        ("broker-1/kafka-request.log", 3),  # HWM 150 exposed by the old leader
        ("broker-2/kafka-request.log", 3),  # old leader still at 150 in epoch 2
        ("broker-2/kafka-request.log", 4),  # ... and then at 120
    ]

    [regression] = by_kind(result, FindingKind.HWM_REGRESSION)
    assert isinstance(regression, HwmRegression)
    assert (regression.leader_epoch, regression.replica) == (2, 2)
    assert (regression.offset_start, regression.offset_end) == (120, 150)
    assert regression.caused_by == (election.anomaly_id,)

    [loss] = by_kind(result, FindingKind.COMMITTED_DATA_LOSS)
    assert isinstance(loss, CommittedDataLoss)
    assert (loss.leader_epoch, loss.replica) == (2, None)
    assert (loss.offset_start, loss.offset_end, loss.records_lost) == (120, 150, 30)
    assert loss.caused_by == (election.anomaly_id, truncation.anomaly_id)
    assert [(a.client_id, a.base_offset) for a in loss.acked_produces] == [("billing", 140)]

    assert [(v.leader_epoch, v.leader, v.election) for v in result.lineage] == [
        (0, 1, ElectionKind.INITIAL),
        (1, -1, ElectionKind.OFFLINE),
        (2, 2, ElectionKind.UNCLEAN),
    ]
    assert result.lineage[2].start_offset.exact == 120


def test_acks_1_records_above_hwm_truncated_after_clean_failover_is_no_finding() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.produce(1, 100, acks=1)  # on the leader only; the HWM stays at 100
    s.tick()
    s.fence(1)
    s.change(leader=2, isr=(2, 3))
    s.tick()
    s.fetch(2, 3, 100, epoch=1, last_fetched=0, hwm=100)
    s.fetch(2, 1, 110, epoch=1, last_fetched=0, hwm=100, diverging=(0, 100))
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=100)

    result = replay_partition(s.events, ALL_LOGS)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert result.lineage[1].start_offset.exact == 100


def test_local_truncation_below_hwm_when_the_leader_still_holds_the_data() -> None:
    """A follower restarts after losing unflushed data below the HWM; the
    leader still has it (seed 002 5.1.1): committed data removed locally."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 200, epoch=0, last_fetched=0, hwm=200)
    s.fetch(1, 3, 200, epoch=0, last_fetched=0, hwm=200)
    s.tick(5)
    s.fetch(1, 3, 170, epoch=0, last_fetched=0, hwm=200)

    result = replay_partition(s.events, ALL_LOGS)

    [truncation] = result.findings
    assert isinstance(truncation, TruncationBelowHwm)
    assert (truncation.leader_epoch, truncation.replica) == (0, 3)
    assert (truncation.offset_start, truncation.offset_end) == (170, 200)
    assert truncation.qualifier == Scope.LOCAL
    assert truncation.records_lost is None
    assert truncation.severity == Severity.WARNING


def test_unresolved_divergence_below_hwm_is_a_log_divergence() -> None:
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=50)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    s.fetch(2, 1, 60, epoch=1, last_fetched=0, hwm=80, diverging=(0, 50))
    s.fetch(2, 1, 60, epoch=1, last_fetched=0, hwm=80)  # keeps its suffix

    result = replay_partition(s.events, ReplayContext(KEY, request_log_observers=frozenset({1, 2})))

    [divergence] = by_kind(result, FindingKind.LOG_DIVERGENCE)
    assert isinstance(divergence, LogDivergence)
    assert (divergence.leader_epoch, divergence.replica, divergence.leader) == (1, 1, 2)
    assert (divergence.offset_start, divergence.offset_end) == (50, 60)
    assert divergence.records_lost == 10
    assert divergence.qualifier == Scope.UNRESOLVED


def test_a_leader_without_request_log_leaves_the_verdict_unknown() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fence(1)
    s.change(leader=2, isr=(2, 3))

    result = replay_partition(s.events, ReplayContext(KEY, request_log_observers=frozenset({1})))

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.gaps == (
        "no request log from broker 2, leader in epoch(s) 1: the HWM it exposed is not in evidence",
    )


def test_observations_without_metadata_are_unknown_not_valid() -> None:
    s = Story()
    s.fetch(1, 2, 100, epoch=3, last_fetched=3, hwm=100)

    result = replay_partition(s.events, ALL_LOGS)

    assert result.verdict == Verdict.UNKNOWN
    assert any("no PartitionRecord" in gap for gap in result.coverage.gaps)


def test_unclean_election_with_unknown_start_offset_says_so() -> None:
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=130)
    s.fence(1)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)

    result = replay_partition(s.events, ReplayContext(KEY, request_log_observers=frozenset({1, 2})))

    [election] = result.findings
    assert isinstance(election, UncleanElection)
    assert (election.leader_epoch, election.replica) == (1, 2)
    assert (election.offset_start, election.offset_end, election.records_lost) == (None, 130, None)
    assert election.severity == Severity.WARNING
    assert "not in the evidence" in election.explain()


def test_an_uncommitted_tail_rewritten_and_committed_by_the_new_leader_is_no_finding() -> None:
    """Seed 000, divergence scenario: the old leader's uncommitted suffix is
    orphaned; the new leader writes and commits other records at the same
    offsets. Truncating the orphan removes nothing that was ever committed."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 200, epoch=0, last_fetched=0, hwm=200)
    s.produce(1, 200, acks=1)  # [200, 210) on the leader only
    s.fence(1)
    s.change(leader=2, isr=(2,))
    s.produce(2, 200, acks=-1)
    s.fetch(2, 1, 210, epoch=1, last_fetched=0, hwm=220, diverging=(0, 200))
    s.fetch(2, 1, 200, epoch=1, last_fetched=0, hwm=220)

    result = replay_partition(s.events, ReplayContext(KEY, request_log_observers=frozenset({1, 2})))

    assert result.findings == ()
    assert result.verdict == Verdict.VALID


def test_last_replica_standing_loses_what_its_disk_lost() -> None:
    """Seed 003 2.4 note and seed 002 5.3: the only ISR member loses unflushed
    data in an unclean shutdown and, still in the ISR, is re-elected cleanly."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=300)  # 2 stalls; 1 alone commits to 300
    s.fence(1)
    s.change(leader=NO_LEADER)
    s.change(leader=1)  # back, with a log that ends at 250: a clean election
    s.fetch(1, 2, 100, epoch=2, last_fetched=0, hwm=250)  # its HWM is its log end
    s.produce(1, 250, acks=-1)

    result = replay_partition(s.events, ReplayContext(KEY, request_log_observers=frozenset({1, 2})))

    assert sorted(f.kind.value for f in result.findings) == [
        "committed_data_loss",
        "hwm_regression",
    ]
    [loss] = by_kind(result, FindingKind.COMMITTED_DATA_LOSS)
    assert (loss.leader_epoch, loss.offset_start, loss.offset_end, loss.records_lost) == (
        2,
        250,
        300,
        50,
    )
    assert loss.caused_by == ()
    [regression] = by_kind(result, FindingKind.HWM_REGRESSION)
    assert (regression.leader_epoch, regression.replica) == (2, 1)
    assert (regression.offset_start, regression.offset_end) == (250, 300)
    assert result.lineage[2].election == ElectionKind.CLEAN


def test_a_loss_is_counted_once_where_it_happened() -> None:
    """After an unclean election lost [120, 150), a later clean failover inside
    that range is judged against the surviving lineage, not the lost HWM."""
    s = unclean_story()
    s.change(isr=(2, 1))
    s.fence(2)
    s.change(leader=1, isr=(1,))
    s.fetch(1, 3, 121, epoch=3, last_fetched=2, hwm=121)

    result = replay_partition(s.events, ALL_LOGS)

    assert [
        (f.kind.value, f.leader_epoch) for f in by_kind(result, FindingKind.COMMITTED_DATA_LOSS)
    ] == [("committed_data_loss", 2)]
    assert result.lineage[3].election == ElectionKind.CLEAN


def test_broker_log_lines_pin_the_start_offset_and_show_the_truncation() -> None:
    """Without request-log evidence of the divergence, the new leader's
    "starts at leader epoch 2 from offset 120" line and the old leader's
    "Truncating to offset 120" line tell the same story (kafka-formats.md 5.2,
    5.5)."""
    from replay.types import BecomeLeader, LogTruncated, Origin, Source

    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=150)
    s.fence(1)
    s.change(leader=NO_LEADER)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    t = s.events[-1].origin.time
    s.events.append(
        BecomeLeader(
            Origin(Source("broker-2/state-change.log", 7), t, 2, None, 70),
            broker=2,
            leader_epoch=2,
            start_offset=120,
        )
    )
    s.events.append(
        LogTruncated(
            Origin(Source("broker-1/server.log", 40), t, 1, None, 400), broker=1, to_offset=120
        )
    )

    result = replay_partition(s.events, ALL_LOGS)

    [election] = by_kind(result, FindingKind.UNCLEAN_ELECTION)
    assert (election.offset_start, election.offset_end, election.records_lost) == (120, 150, 30)
    [truncation] = by_kind(result, FindingKind.TRUNCATION_BELOW_HWM)
    assert (truncation.replica, truncation.leader_epoch) == (1, 2)
    assert (truncation.offset_start, truncation.offset_end) == (120, 150)
    assert truncation.qualifier == Scope.GLOBAL
    assert ("broker-1/server.log", 40) in [(e.source_file, e.line_no) for e in truncation.evidence]


def elr_change(s: Story, **fields: object) -> None:
    from replay.types import PartitionChangeRecord

    origin = s._origin("controller/metadata.txt", None, True)
    s._add(PartitionChangeRecord(origin=origin, **fields))  # type: ignore[arg-type]


def test_seed_002_5_2_2_clean_elr_recovery_has_no_finding() -> None:
    """Seed 002 5.2.2: the ISR shrinks to the leader with 3 moved to the ELR;
    the leader is lost and 3 is elected from the ELR: complete, so clean."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    elr_change(s, isr=(1, 3), elr=())
    elr_change(s, isr=(1,), elr=(3,))
    s.fence(1)
    elr_change(s, leader=3, isr=(3,), elr=())
    s.fetch(3, 2, 100, epoch=1, last_fetched=0, hwm=100)

    result = replay_partition(s.events, ALL_LOGS)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert result.lineage[1].election == ElectionKind.ELR


def test_seed_002_5_3_3_balanced_recovery_of_a_complete_replica_loses_nothing() -> None:
    """Seed 002 5.3.3: every broker shuts down uncleanly; balanced recovery
    elects replica 2 from LastKnownELR, whose log (LEO 12) holds everything
    committed (HWM 10): an unclean recovery, reported, with no loss."""
    from replay.types import BecomeLeader, Origin, Source

    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 12, epoch=0, last_fetched=0, hwm=10)
    s.fetch(1, 3, 10, epoch=0, last_fetched=0, hwm=10)
    s.fence(1)
    elr_change(s, leader=2, isr=(2, 3))
    s.fence(2)
    elr_change(s, leader=3, isr=(3,), elr=(2,))
    s.fence(3)
    elr_change(s, leader=NO_LEADER, isr=(), elr=(2, 3))
    elr_change(s, elr=(3,), last_known_elr=(2,))
    elr_change(s, elr=(), last_known_elr=(2, 3))
    elr_change(s, leader=2, isr=(2,), last_known_elr=(), leader_recovery_state=RECOVERING)
    t = s.events[-1].origin.time
    s.events.append(
        BecomeLeader(
            Origin(Source("broker-2/state-change.log", 3), t, 2, None, 30),
            broker=2,
            leader_epoch=4,
            start_offset=12,
        )
    )

    result = replay_partition(s.events, ALL_LOGS)

    [election] = result.findings
    assert isinstance(election, UncleanElection)
    assert (election.leader_epoch, election.replica, election.records_lost) == (4, 2, 0)
    assert (election.offset_start, election.offset_end) == (None, None)
    assert election.severity == Severity.WARNING
    assert "unclean recovery" in election.explain()
    assert [v.election for v in result.lineage] == [
        ElectionKind.INITIAL,
        ElectionKind.CLEAN,
        ElectionKind.CLEAN,
        ElectionKind.OFFLINE,
        ElectionKind.UNCLEAN_RECOVERY,
    ]


def test_zookeeper_era_lineage_from_leader_and_isr_decisions() -> None:
    """zk-epoch: no metadata log; the controller's LeaderAndIsr decisions
    (state-change.log, kafka-formats.md 5.6) give the lineage, the same
    story as the KRaft one, and the same findings."""
    from replay.types import LeaderAndIsr, Origin, Profile, Source

    s = Story()
    seq = iter(range(1, 100))

    def decide(leader: int, epoch: int, isr: tuple[int, ...], version: int) -> None:
        n = next(seq)
        origin = Origin(
            Source("controller/state-change.log", n),
            s.events[-1].origin.time if s.events else None,
            None,
            None,
            n * 10,
        )
        s._add(LeaderAndIsr(origin, leader, epoch, isr, version, None, 1))

    decide(1, 0, (1, 2, 3), 0)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    decide(1, 0, (1,), 1)
    s.fetch(1, 2, 120, epoch=0, last_fetched=0, hwm=150)
    s.tick(10)
    decide(2, 1, (2,), 2)  # unclean.leader.election.enable: 2 was not in the ISR
    s.tick()
    s.fetch(2, 1, 150, epoch=1, last_fetched=0, hwm=121, diverging=(0, 120))
    s.fetch(2, 1, 120, epoch=1, last_fetched=0, hwm=121)
    # the same decision, as the LeaderAndIsr request broker 2 received
    decide(2, 1, (2,), 2)

    result = replay_partition(
        s.events,
        ReplayContext(KEY, profile=Profile.ZK_EPOCH, request_log_observers=frozenset({1, 2, 3})),
    )

    assert [(v.leader_epoch, v.leader, v.election) for v in result.lineage] == [
        (0, 1, ElectionKind.INITIAL),
        (1, 2, ElectionKind.UNCLEAN),
    ]
    found = sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.records_lost)
        for f in result.findings
    )
    assert found == [
        ("committed_data_loss", 1, None, 120, 150, 30),
        ("hwm_regression", 1, 2, 121, 150, None),
        ("truncation_below_hwm", 1, 1, 120, 150, 30),
        ("unclean_election", 1, 2, 120, 150, 30),
    ]


def _zk_isr_story(expansion_line: bool) -> Story:
    """zk-hw (0.10.1): leader 1 of epoch 0 with ISR [1] by the controller's
    decision; follower 2 catches up and leader 1 writes ISR [1, 2] to
    ZooKeeper itself (its ``Expanding ISR`` line, the only INFO trace before
    2.4, formats-addendum.md 9.4), which lands: the znode's version goes
    from 0 to 1; 1 dies and the controller elects 2 from the live ISR
    members, ISR [2], version 2."""
    from replay.types import IsrUpdated, LeaderAndIsr

    s = Story()

    def decide(leader: int, epoch: int, isr: tuple[int, ...], version: int) -> None:
        origin = s._origin("controller/state-change.log", None, False)
        s._add(LeaderAndIsr(origin, leader, epoch, isr, version, None, 1))

    decide(1, 0, (1,), 0)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0)
    s.tick()
    s.fetch(1, 2, 150, epoch=0, last_fetched=0)
    if expansion_line:
        s._add(IsrUpdated(s._origin("broker-1/server.log", 1, False), 1, (1, 2)))
    s.tick(10)
    decide(2, 1, (2,), 2)
    s.tick()
    s.fetch(2, 1, 150, epoch=1, last_fetched=0)
    return s


def test_a_zookeeper_leaders_own_isr_write_is_the_next_elections_previous_isr() -> None:
    """Before 2.7 a ZooKeeper-era leader writes its ISR changes itself: the
    controller's next decision starts from the ISR the leader wrote, not from
    its own last decision. 2 joined the ISR before 1 died: a clean election,
    no finding. Without the leader's line the evidence shows 2 outside the
    last ISR seen: unclean, as before."""
    from replay.types import Profile

    ctx = ReplayContext(KEY, profile=Profile.ZK_HW, request_log_observers=frozenset({1, 2}))
    clean = replay_partition(_zk_isr_story(expansion_line=True).events, ctx)
    assert [(v.leader_epoch, v.leader, v.election, v.isr) for v in clean.lineage] == [
        (0, 1, ElectionKind.INITIAL, (1, 2)),
        (1, 2, ElectionKind.CLEAN, (2,)),
    ]
    assert clean.findings == ()
    unseen = replay_partition(_zk_isr_story(expansion_line=False).events, ctx)
    assert [(v.leader_epoch, v.election) for v in unseen.lineage] == [
        (0, ElectionKind.INITIAL),
        (1, ElectionKind.UNCLEAN),
    ]
    assert sorted(
        (f.kind.value, f.key, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in unseen.findings
    ) == [("unclean_election", KEY, 1, 2, None, None)]


def _zk_failed_write_story(received_copy_first: bool) -> Story:
    """zk-hw (0.10.1): leader 2 of epoch 0, ISR [2, 1], zkVersion 0 (the
    LeaderAndIsr request its follower received). Leader 2 prints ``Shrinking
    ISR ... from 2,1 to 2`` three times: the line is printed before the
    conditional ZooKeeper write, and a write that lands is not repeated. The
    controller then elects 1 with zkVersion 1: one write since version 0,
    its own, so it read ISR [2, 1] and 1 was in it. Its decision is in the
    controller's state-change.log (no zkVersion) and in the request broker 1
    received (with it), in either order."""
    from replay.types import IsrUpdated, LeaderAndIsr

    s = Story()

    def decide(leader: int, epoch: int, isr: tuple[int, ...], version: int | None) -> None:
        where = "controller/state-change.log" if version is None else "broker-1/state-change.log"
        origin = s._origin(where, None if version is None else 1, False)
        s._add(LeaderAndIsr(origin, leader, epoch, isr, version, None, 1))

    decide(2, 0, (2, 1), None)
    decide(2, 0, (2, 1), 0)
    s.fetch(2, 1, 100, epoch=0, last_fetched=0)
    for _ in range(3):
        s.tick(5)
        s._add(IsrUpdated(s._origin("broker-2/server.log", 2, False), 2, (2,)))
    s.tick(2)
    for version in (1, None) if received_copy_first else (None, 1):
        decide(1, 1, (1,), version)
    s.tick()
    s.fetch(1, 2, 100, epoch=1, last_fetched=0)
    return s


@pytest.mark.parametrize("received_copy_first", [True, False])
def test_a_zookeeper_leaders_isr_write_that_the_next_version_shows_failed_is_not_the_isr(
    received_copy_first: bool,
) -> None:
    """A ZooKeeper decision one zkVersion above the last state whose version
    is in evidence was made from that state: the leader's ``Shrinking ISR``
    lines since did not land, so 1 was in the ISR the controller read and its
    election is clean (no unclean_election). With the decision a version
    higher (the write landed), 1 was outside it: unclean."""
    from replay.types import LeaderAndIsr, Profile

    ctx = ReplayContext(KEY, profile=Profile.ZK_HW, request_log_observers=frozenset({1, 2}))
    story = _zk_failed_write_story(received_copy_first)
    result = replay_partition(story.events, ctx)
    assert [(v.leader_epoch, v.leader, v.election, v.isr_before) for v in result.lineage] == [
        (0, 2, ElectionKind.INITIAL, ()),
        (1, 1, ElectionKind.CLEAN, (2, 1)),
    ]
    assert [f for f in result.findings if f.kind.value == "unclean_election"] == []

    landed = [
        replace(e, partition_epoch=2)
        if isinstance(e, LeaderAndIsr) and e.partition_epoch == 1
        else e
        for e in story.events
    ]
    result = replay_partition(landed, ctx)
    assert [(v.leader_epoch, v.election, v.isr_before) for v in result.lineage] == [
        (0, ElectionKind.INITIAL, ()),
        (1, ElectionKind.UNCLEAN, (2,)),
    ]
    assert sorted(
        (f.kind.value, f.key, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in result.findings
        if f.kind.value == "unclean_election"
    ) == [("unclean_election", KEY, 1, 1, None, 100)]


def _zk_hw_sole_leader_story(second_leader: int, leader_restarts: bool = False) -> Story:
    """zk-hw (0.10.1): leader 1 of epoch 0, ISR [1, 2, 3]; followers 2 and 3
    fetch to 80 (the derived HW: 80). Replica 3 stops and the controller
    takes it out of the ISR, bumping the epoch (leader ``second_leader``);
    3 comes back and truncates to its checkpointed HW, 60."""
    from replay.types import FollowerFetch, LeaderAndIsr, LogLoaded, LogTruncated

    s = Story()

    def decide(leader: int, epoch: int, isr: tuple[int, ...], version: int) -> None:
        origin = s._origin("controller/state-change.log", None, False)
        s._add(LeaderAndIsr(origin, leader, epoch, isr, version, None, 1))

    decide(1, 0, (1, 2, 3), 0)
    for offset in (40, 80):
        for follower in (2, 3):
            origin = s._origin("broker-1/kafka-request.log", 1, False)
            s._add(FollowerFetch(origin, follower, offset, None, None))
        s.tick()
    s.tick(10)
    if leader_restarts:  # back from a crash as the sole live replica: re-elected
        s._add(LogLoaded(s._origin("broker-1/server.log", 1, False), 1, 70, 0))
    decide(second_leader, 1, (second_leader, 2) if second_leader != 2 else (2,), 1)
    s.tick(5)
    s._add(LogTruncated(s._origin("broker-3/server.log", 3, False), 3, 60))
    return s


def test_a_leader_holds_the_hw_it_derived_when_it_leads_the_next_epoch() -> None:
    """zk-hw: leader 1 of epoch 0 hands a consumer records up to 18 (its
    position moves from 10 to 18: the leader held 18), and its followers
    fetch to 29, the HW it derives: the least log end of the ISR, its own
    included, so its own log held 29 (transitions._derive_leader_hw). The
    controller re-elects it for epoch 1, whose start no line states: it was
    last seen holding 29, nothing is open (not "last seen holding up to
    offset 18, below the committed 29")."""
    from replay.types import ClientPosition, FollowerFetch, LeaderAndIsr, Profile

    s = Story()

    def decide(epoch: int, isr: tuple[int, ...]) -> None:
        origin = s._origin("controller/state-change.log", None, False)
        s._add(LeaderAndIsr(origin, 1, epoch, isr, epoch, None, 1))

    decide(0, (1, 2, 3))
    for offset in (10, 18):
        origin = s._origin("broker-1/kafka-request.log", 1, False)
        s._add(ClientPosition(origin, offset, "consumer-1"))
        s.tick()
    for follower in (2, 3):
        s._add(
            FollowerFetch(
                s._origin("broker-1/kafka-request.log", 1, False), follower, 29, None, None
            )
        )
    s.tick(10)
    decide(1, (1, 2))
    s.tick()

    ctx = ReplayContext(KEY, profile=Profile.ZK_HW, request_log_observers=frozenset({1, 2}))
    result = replay_partition(s.events, ctx)

    assert [
        (v.leader_epoch, v.committed, v.derived, v.leader_log_end) for v in result.history.epochs
    ] == [
        (0, 18, 29, None),
        (1, None, None, 29),
    ]
    assert result.coverage.gaps == ()
    assert result.findings == ()
    assert result.verdict == Verdict.VALID


def test_a_replica_truncating_under_the_partitions_only_leader_truncates_locally() -> None:
    """zk-hw data carries no epoch, so which leader wrote a replica's records
    is not in them; but leader 1 has led the partition since its creation
    (epochs 0 and 1, none missing): every replica's records are copies of
    its log, which it still holds (a leader truncates only when it follows).
    3's cut below the HW is local, [60, 80). With epoch 1 led by 2, whose
    start is in no line, it is not decided; nor when 1 restarted (a crash may
    have cut its log, and the controller re-elects it with the next epoch)."""
    from replay.types import Profile

    ctx = ReplayContext(KEY, profile=Profile.ZK_HW, request_log_observers=frozenset({1, 2}))
    result = replay_partition(_zk_hw_sole_leader_story(1).events, ctx)
    assert sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.qualifier)
        for f in result.findings
    ) == [("truncation_below_hwm", 1, 3, 60, 80, Scope.LOCAL)]
    for story in (_zk_hw_sole_leader_story(2), _zk_hw_sole_leader_story(1, leader_restarts=True)):
        result = replay_partition(story.events, ctx)
        assert [
            (f.kind.value, f.leader_epoch, f.replica, f.qualifier)
            for f in result.findings
            if f.kind.value == "truncation_below_hwm"
        ] == [("truncation_below_hwm", 1, 3, Scope.UNKNOWN)]


def _many_acks_story(acks: int) -> Story:
    """The unclean story with the HWM at 1000 and ``acks`` acks=all answers
    (offsets 300 on, one record each) before the loss of [120, 1000)."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))
    s.fetch(1, 2, 120, epoch=0, last_fetched=0, hwm=1000)
    for i in range(acks):
        s.produce(1, 300 + i, acks=-1, client="billing")
    s.tick(10)
    s.fence(1)
    s.change(leader=NO_LEADER)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    s.tick()
    s.fetch(2, 3, 100, epoch=2, last_fetched=0, hwm=120)
    s.tick(10)
    s.fetch(2, 1, 1000, epoch=2, last_fetched=0, hwm=121, diverging=(0, 120))
    s.fetch(2, 1, 120, epoch=2, last_fetched=0, hwm=121)
    return s


def test_a_loss_counts_the_acks_it_swallowed_and_says_when_more_were_not_kept() -> None:
    """A loss states how many acknowledged acks=all requests it swallowed.
    An epoch keeps its latest ACKED_KEPT to 2 * ACKED_KEPT of them: with
    600, the 343 kept are all in the range and the oldest dropped are too,
    so the count is a lower bound and says so; with 100, all are kept."""
    from replay.state import ACKED_KEPT

    counts = {}
    for acks in (100, 600):
        [loss] = by_kind(replay_partition(_many_acks_story(acks).events, ALL_LOGS),
                         FindingKind.COMMITTED_DATA_LOSS)  # fmt: skip
        assert isinstance(loss, CommittedDataLoss)
        assert (loss.offset_start, loss.offset_end) == (120, 1000)
        counts[acks] = (len(loss.acked_produces), loss.acked_at_least)
        assert ("at least" in loss.explain()) == loss.acked_at_least
    kept_of_600 = 600 - (2 * ACKED_KEPT + 1) + ACKED_KEPT
    assert counts == {100: (100, False), 600: (kept_of_600, True)}
    assert kept_of_600 == 343
