"""Stories written to kill the mutants of replay/transitions.py and
replay/properties.py that the other fast replay tests let live (docs/testing.md
lists them): each asserts the exact finding, or none, that docs/findings.md
gives for the story.
"""

from __future__ import annotations

from dataclasses import replace

from replay import ReplayContext, replay_partition
from replay.findings import FencingViolation, Finding, IsrRuleViolation, LogDivergence
from replay.types import (
    RECOVERING,
    AlterPartition,
    BecomeFollower,
    BecomeLeader,
    BrokerConfig,
    BrokerFencing,
    BrokerRegistration,
    BrokerRestart,
    ClientHwm,
    Confidence,
    ElectionKind,
    EpochAnswer,
    EpochCheckpoint,
    Event,
    FetchAnswer,
    FetcherHalt,
    FindingKind,
    FollowerFetch,
    IsrUpdated,
    LeaderAndIsr,
    LogLoaded,
    LogTruncated,
    MinIsrConfig,
    OffsetReset,
    PartitionOffline,
    PartitionRecord,
    ProduceAck,
    Profile,
    Scope,
    TopicConfig,
    Verdict,
)
from tests.replay_fixtures import KEY, METADATA_FILE, Story
from tests.test_replay_evidence import (
    ELR,
    consumer_fetch,
    consumer_hwm_story,
    exclusion_story,
    leaderless_with_3_in_elr,
    record,
    recovery_story,
    register,
    restart,
    server_log,
    unfence,
)

CTX = ReplayContext(key=replace(KEY, partition=4), request_log_observers=frozenset({1, 2, 3}))


def config(
    s: Story, value: int | None, *, topic: str | None = None, broker: int | None = None
) -> None:
    s._add(MinIsrConfig(s._origin(METADATA_FILE, None, True), topic, broker, value))


def acks_all_with_isr_of_one(*configs: dict[str, object]) -> list[tuple[object, ...]]:
    """Leader 1 acknowledges acks=all at 30 and 31 with the ISR shrunk to
    itself, well past the skew allowance: the findings, as rows."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    for c in configs:
        config(s, **c)  # type: ignore[arg-type]
    s.produce(1, 0, acks=-1)
    s.fetch(1, 2, 1, epoch=0, last_fetched=0, hwm=1)
    s.fetch(1, 3, 1, epoch=0, last_fetched=0, hwm=1)
    s.tick(1)
    s.change(isr=(1,))
    s.tick(5)
    s.produce(1, 30, acks=-1)
    s.produce(1, 31, acks=-1)
    result = replay_partition(s.events, CTX)
    return [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in result.findings
    ]


UNDER_MIN = [(FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 30, 32)]


# -- the min ISR in force: the topic's override, else the leader's own
# setting, else the cluster default (docs/findings.md)


def test_the_leaders_own_min_isr_setting_is_in_force() -> None:
    assert acks_all_with_isr_of_one({"value": 2, "broker": 1}) == UNDER_MIN


def test_another_brokers_setting_is_not_the_leaders() -> None:
    assert acks_all_with_isr_of_one({"value": 2, "broker": 2}) == []


def test_the_cluster_default_is_in_force_when_nothing_narrower_is_stated() -> None:
    assert acks_all_with_isr_of_one({"value": 2}) == UNDER_MIN


def test_the_leaders_setting_overrides_the_cluster_default() -> None:
    assert acks_all_with_isr_of_one({"value": 2}, {"value": 1, "broker": 1}) == []
    assert acks_all_with_isr_of_one({"value": 1}, {"value": 2, "broker": 1}) == UNDER_MIN


def test_the_topic_override_beats_the_leaders_setting() -> None:
    assert (
        acks_all_with_isr_of_one({"value": 2, "broker": 1}, {"value": 1, "topic": "orders"}) == []
    )
    assert (
        acks_all_with_isr_of_one({"value": 1, "broker": 1}, {"value": 2, "topic": "orders"})
        == UNDER_MIN
    )


def test_a_deleted_leader_setting_falls_back_to_the_cluster_default() -> None:
    assert acks_all_with_isr_of_one({"value": 2}, {"value": 1, "broker": 1},
                                    {"value": None, "broker": 1}) == UNDER_MIN  # fmt: skip


# -- an expansion told only by the controller's confirmed AlterPartition answer


def lagging_follower(leader: int, follower: int, other: int) -> Story:
    """``leader`` alone in the ISR commits [0, 20) with acks=all; ``follower``
    last fetched at 5, half a second before the expansion."""
    s = Story()
    s.create((leader, follower, other), leader=leader)
    s.tick(1)
    s.change(isr=(leader,))
    for offset in range(0, 20, 2):
        s.produce(leader, offset, acks=-1)
    s.fetch(leader, follower, 2, epoch=0, last_fetched=0, hwm=20)
    s.tick(5)
    s.fetch(leader, follower, 5, epoch=0, last_fetched=0, hwm=20)
    s.tick(0.5)
    return s


def confirmed(s: Story, *, broker: int | None, isr: tuple[int, ...], leader: int | None) -> None:
    origin = s._origin("controller/kafka-request.log", 9, False)
    s._add(AlterPartition(origin, broker, 0, isr, 2, 0, leader))


def expansions(s: Story) -> list[tuple[object, ...]]:
    result = replay_partition(s.events, CTX)
    return [
        (f.kind, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.records_lost)
        for f in result.findings
    ]


LAGGING_JOIN = [(FindingKind.ISR_RULE_VIOLATION, 0, 2, 5, 20, None)]


def still_behind(s: Story, leader: int) -> None:
    """Follower 2's next fetch, answered after the expansion, is still at 5:
    the fetch in flight when its leader added it had not caught up (without
    one, the fetch that let it join may simply be missing from the log)."""
    s.tick(0.3)
    s.fetch(leader, 2, 5, epoch=0, last_fetched=0, hwm=20)


def test_a_confirmed_alter_partition_alone_is_an_expansion() -> None:
    s = lagging_follower(1, 2, 3)
    confirmed(s, broker=1, isr=(1, 2), leader=1)
    still_behind(s, 1)
    assert expansions(s) == LAGGING_JOIN


def test_an_answer_naming_no_leader_is_the_requesting_brokers() -> None:
    s = lagging_follower(1, 2, 3)
    confirmed(s, broker=1, isr=(1, 2), leader=None)
    still_behind(s, 1)
    assert expansions(s) == LAGGING_JOIN
    s = lagging_follower(1, 2, 3)
    confirmed(s, broker=1, isr=(1, 2), leader=-1)
    still_behind(s, 1)
    assert expansions(s) == LAGGING_JOIN


def test_broker_0_is_a_leader_like_any_other() -> None:
    s = lagging_follower(0, 2, 3)
    confirmed(s, broker=None, isr=(0, 2), leader=0)
    still_behind(s, 0)
    assert expansions(s) == LAGGING_JOIN


def test_an_answer_for_another_leader_or_a_failed_one_is_no_expansion() -> None:
    s = lagging_follower(1, 2, 3)
    confirmed(s, broker=3, isr=(3, 2), leader=3)  # 3 does not lead epoch 0
    assert expansions(s) == []
    s = lagging_follower(1, 2, 3)
    origin = s._origin("controller/kafka-request.log", 9, False)
    s._add(AlterPartition(origin, 1, 0, (1, 2), 2, 58, 1))  # refused (error 58)
    assert expansions(s) == []


def test_only_the_replicas_new_to_the_isr_joined() -> None:
    s = lagging_follower(1, 2, 3)
    s.fetch(1, 3, 20, epoch=0, last_fetched=0, hwm=20)
    s.change(isr=(1, 3))  # 3 joins caught up
    s.tick(5)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
    s.tick(0.5)
    confirmed(s, broker=1, isr=(1, 3, 2), leader=1)  # 3 is not new: only 2 joins
    still_behind(s, 1)
    assert expansions(s) == LAGGING_JOIN


# -- a broker's own "starts at leader epoch" line prints its high watermark


def test_a_high_watermark_a_follower_prints_is_the_committed_mark() -> None:
    """Leader 1 and follower 3 commit [10, 20) with acks=1, and no fetch answer
    shows it; follower 3, restarting mid-epoch, prints "starts at leader epoch
    0 ... high watermark 20"; replica 2 (at 10, out of the ISR) is elected
    uncleanly and starts epoch 1 from offset 10: the loss is [10, 20)."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    for offset in range(10):
        s.produce(1, offset, acks=1)
    s.fetch(1, 2, 10, epoch=0, last_fetched=0, hwm=10)
    s.fetch(1, 3, 10, epoch=0, last_fetched=0, hwm=10)
    s.tick(1)
    s.change(isr=(1, 3))
    for offset in range(10, 20):
        s.produce(1, offset, acks=1)
    s.fetch(1, 3, 20, epoch=0, last_fetched=0)  # no answer in the log
    s.tick(1)
    origin = s._origin("broker-3/state-change.log", 3, False)
    s._add(BecomeFollower(origin, 3, 0, 20, leader=1, hwm=20))
    s.tick(1)
    s.fence(1)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    s.tick(0.1)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 10))

    result = replay_partition(s.events, CTX)

    assert sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.records_lost)
        for f in result.findings
    ) == [
        ("committed_data_loss", 1, None, 10, 20, 10),
        ("unclean_election", 1, 2, 10, 20, 10),
    ]
    [loss] = [f for f in result.findings if f.kind == FindingKind.COMMITTED_DATA_LOSS]
    assert "broker-3/state-change.log" in [e.source_file for e in loss.evidence]


# -- events no other fast replay test feeds: a registration that starts fenced,
# an OffsetsForLeaderEpoch answer, a leader-epoch-checkpoint entry


def registered(s: Story, broker: int, epoch: int, fenced: bool) -> None:
    s._add(BrokerRegistration(s._origin(METADATA_FILE, None, True), broker, epoch, fenced))


def test_a_leader_registering_again_fenced_and_acting_on_is_a_fencing_violation() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    registered(s, 1, 7, fenced=True)  # a new uptime session, fenced: its leadership is over
    s.tick(4)
    s.produce(1, 1, acks=1)

    result = replay_partition(s.events, CTX)

    assert [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in result.findings
    ] == [(FindingKind.FENCING_VIOLATION, 4, 0, 1, 1, 2)]


def test_a_leader_registering_again_unfenced_acts_without_finding() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    registered(s, 1, 7, fenced=False)
    s.tick(4)
    s.produce(1, 1, acks=1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()


def unclean_story() -> Story:
    """Leader 1 exposes HWM 10, then alone in the ISR acknowledges acks=all up
    to offset 19 (committed mark 20 in evidence); it is fenced and replica 2,
    at 10, is elected uncleanly (epoch 1)."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    for offset in range(10):
        s.produce(1, offset, acks=1)
    s.fetch(1, 2, 10, epoch=0, last_fetched=0, hwm=10)
    s.fetch(1, 3, 10, epoch=0, last_fetched=0, hwm=10)
    s.tick(1)
    s.change(isr=(1,))
    for offset in range(10, 20):
        s.produce(1, offset, acks=-1)
    s.tick(1)
    s.fence(1)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    return s


def rows(s: Story) -> list[tuple[object, ...]]:
    result = replay_partition(s.events, CTX)
    return sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.records_lost,
         f.qualifier.value if f.qualifier is not None else None)
        for f in result.findings
    )  # fmt: skip


def test_the_new_leaders_checkpoint_entry_fixes_the_start_of_its_epoch() -> None:
    s = unclean_story()
    s.tick(3)  # beyond the skew allowance (within it, see docs/testing.md)
    s._add(EpochCheckpoint(s._origin("broker-2/leader-epoch-checkpoint", 2, False), 2, 1, 10))
    assert rows(s) == [
        ("committed_data_loss", 1, None, 10, 20, 10, None),
        ("unclean_election", 1, 2, 10, 20, 10, None),
    ]


def test_an_offsets_for_leader_epoch_answer_tells_the_old_leader_where_to_truncate() -> None:
    s = unclean_story()
    s.tick(0.1)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 10))
    s.tick(1)
    answer = s._origin("broker-2/kafka-request.log", 2, False)
    s._add(EpochAnswer(answer, 1, 0, 10, 0, requested_epoch=0))  # epoch 0 ends at 10 on 2
    s.fetch(2, 1, 10, epoch=1, last_fetched=0, hwm=10)
    assert rows(s) == [
        ("committed_data_loss", 1, None, 10, 20, 10, None),
        ("hwm_regression", 1, 2, 10, 20, None, None),
        ("truncation_below_hwm", 1, 1, 10, 20, 10, "global"),
        ("unclean_election", 1, 2, 10, 20, 10, None),
    ]


# -- more acts than the state keeps one by one (replay/state.py ACTS_KEPT)


def test_a_deposed_leaders_acts_past_those_kept_still_count_in_its_range() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    s.fence(1)
    s.tick(4)
    for offset in range(10, 110):  # 100 acks, more than ACTS_KEPT
        s.produce(1, offset, acks=1)

    result = replay_partition(s.events, CTX)

    assert [
        (f.kind, f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in result.findings
    ] == [(FindingKind.FENCING_VIOLATION, 0, 1, 10, 110)]


def alone_under_min_isr() -> tuple[Story, Event]:
    """Leader 1 of epoch 0 (min ISR 2 for the topic), its followers at its
    HWM 1, then 5 s after the record that takes the ISR to [1]; and that
    record."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    config(s, 2, topic="orders")
    s.produce(1, 0, acks=-1)
    s.fetch(1, 2, 1, epoch=0, last_fetched=0, hwm=1)
    s.fetch(1, 3, 1, epoch=0, last_fetched=0, hwm=1)
    s.tick(1)
    shrink = s.change(isr=(1,))
    s.tick(5)
    return s, shrink


def test_acks_under_min_isr_past_those_kept_still_count_in_its_range() -> None:
    s, _ = alone_under_min_isr()
    for offset in range(30, 130):
        s.produce(1, offset, acks=-1)

    result = replay_partition(s.events, CTX)

    assert [
        (f.kind, f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in result.findings
    ] == [(FindingKind.ISR_RULE_VIOLATION, 0, 1, 30, 130)]


# -- what a rule finding counts and cites, past the acts kept one by one
# (mutants of fencing_violations and _acks_under_min_isr that changed only
# these fields survived the range checks above)


def test_a_deposed_leaders_finding_counts_every_act_and_starts_at_the_first() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    fenced = s.fence(1)
    s.tick(4)
    for offset in range(10, 110):  # 64 kept one by one, 36 summed up
        s.produce(1, offset, acks=1)
    s.fetch(1, 2, 10, epoch=0, last_fetched=0)  # a fetch it answers, past the end too
    first_stale = next(e for e in s.events if isinstance(e, ProduceAck) and e.base_offset == 10)

    [f] = replay_partition(s.events, CTX).findings

    assert isinstance(f, FencingViolation)
    assert (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) == (
        FindingKind.FENCING_VIOLATION, 4, 0, 1, 10, 110,
    )  # fmt: skip
    assert (f.produces, f.fetches, f.ended, f.acks_all_lost) == (100, 0, "fenced", False)
    assert f.detected_at == first_stale.origin.time
    # the first acts shown one by one, then the record that ended the leadership
    assert f.evidence[0] == first_stale.origin.source
    assert f.evidence[-1] == fenced.origin.source


def test_acks_under_min_isr_count_every_ack_past_those_kept() -> None:
    s, shrink = alone_under_min_isr()
    for offset in range(30, 130):
        s.produce(1, offset, acks=-1)
    first = next(e for e in s.events if isinstance(e, ProduceAck) and e.base_offset == 30)

    [f] = replay_partition(s.events, CTX).findings

    assert isinstance(f, IsrRuleViolation)
    assert (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) == (
        FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 30, 130,
    )  # fmt: skip
    assert (f.variant, f.leader, f.isr, f.min_isr, f.marker, f.acks) == (
        "under_min_isr", 1, (1,), 2, False, 100,
    )  # fmt: skip
    assert f.detected_at == first.origin.time
    assert f.evidence[0] == shrink.origin.source


# -- an expansion judged by the clocks (_isr_expansions)


def test_a_fetch_older_than_the_expansion_counts_when_a_later_one_shows_the_same_offset() -> None:
    """Follower 2's last fetch (at 5) is 3 s older than the expansion, beyond
    the skew allowance, but its next fetch, 3 s after, is still at 5: its log
    end at the expansion is fixed, below the HWM 20."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    for offset in range(0, 20, 2):
        s.produce(1, offset, acks=-1)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
    s.tick(3)
    s.change(isr=(1, 2))
    s.tick(3)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
    assert expansions(s) == LAGGING_JOIN


def test_without_a_later_fetch_an_old_fetch_leaves_the_expansion_open() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    for offset in range(0, 20, 2):
        s.produce(1, offset, acks=-1)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
    s.tick(3)
    s.change(isr=(1, 2))
    s.tick(3)
    s.fetch(1, 2, 7, epoch=0, last_fetched=0, hwm=20)  # it moved: it may have caught up
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert any("may have caught up unseen" in g for g in result.coverage.gaps)


def test_one_expansion_told_twice_is_one_finding_citing_both() -> None:
    """The leader's "ISR updated" line (its own version number, 7) and the
    controller's record tell the same expansion: one finding, with both
    lines in its evidence."""
    s = lagging_follower(1, 2, 3)
    line = s._add(IsrUpdated(s._origin("broker-1/server.log", 1, False), 1, (1, 2), 7))
    s.tick(0.1)
    record = s.change(isr=(1, 2))
    still_behind(s, 1)
    [f] = replay_partition(s.events, CTX).findings
    assert (f.kind, f.leader_epoch, f.replica, f.offset_start, f.offset_end) == (
        FindingKind.ISR_RULE_VIOLATION, 0, 2, 5, 20,
    )  # fmt: skip
    assert line.origin.source in f.evidence
    assert record.origin.source in f.evidence


# -- Unclean Exclusion (kraft-elr): the paths the evidence stories leave out


def exclusion_rows(s: Story) -> list[tuple[object, ...]]:
    result = replay_partition(s.events, ELR)
    return [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.how)
        for f in result.findings
    ]


KEPT_IN_ELR = [(FindingKind.ISR_RULE_VIOLATION, 0, 1, 3, 220, 300, "elr")]


def test_elected_from_the_elr_it_was_kept_in_with_no_unfencing_seen() -> None:
    """The unfencing record is missing: the election itself is where the
    replica kept in the ELR is judged (the election record is cited)."""
    s = exclusion_story(False, controller_removes=False)
    s.events = [e for e in s.events if not (isinstance(e, BrokerFencing) and e.fenced == -1)]
    election = s.events[-1]
    assert exclusion_rows(s) == KEPT_IN_ELR
    [f] = replay_partition(s.events, ELR).findings
    assert f.detected_at == election.origin.time
    assert election.origin.source in f.evidence


def kept_in_elr(restarts: tuple[int, ...], *, change_after_registration: bool) -> Story:
    """tests/test_replay_evidence.py's story of replica 3 kept in the ELR
    (unclean restarts at each log end of ``restarts``, in turn), told in
    order: each event's clock and line come after the one before."""
    s = leaderless_with_3_in_elr()
    for log_end in restarts:
        s.tick(5)
        restart(s, 3, False, log_end)
    s.tick(0.5)
    register(s, 3, 15)
    if change_after_registration:
        s.tick(0.5)
        record(s, isr=(), elr=(1, 3))
    s.tick(1)
    unfence(s, 3)
    record(s, leader=3, isr=(3,), elr=(1,))
    return s


def test_a_change_that_leaves_it_in_the_elr_keeps_it_unclean() -> None:
    """A partition change between its registration and its unfencing that
    neither takes it into the ISR nor out of the ELR changes nothing."""
    assert exclusion_rows(kept_in_elr((220,), change_after_registration=False)) == KEPT_IN_ELR
    assert exclusion_rows(kept_in_elr((220,), change_after_registration=True)) == KEPT_IN_ELR


def test_a_recovered_log_makes_a_restart_of_unknown_kind_unclean() -> None:
    s = exclusion_story(False, controller_removes=False)
    s.events = [replace(e, clean=None) if isinstance(e, BrokerRestart) else e for e in s.events]
    assert exclusion_rows(s) == KEPT_IN_ELR


def test_the_latest_unclean_restart_is_the_one_judged() -> None:
    """3 restarts uncleanly twice (back at 250, then at 220): the second
    restart's line and log end are the evidence."""
    s = kept_in_elr((250, 220), change_after_registration=False)
    first, second = [e for e in s.events if isinstance(e, BrokerRestart)]
    assert exclusion_rows(s) == KEPT_IN_ELR
    [f] = replay_partition(s.events, ELR).findings
    assert second.origin.source in f.evidence
    assert first.origin.source not in f.evidence


def test_a_restart_of_unknown_kind_names_how_it_was_let_back() -> None:
    s = exclusion_story(None, controller_removes=False)
    result = replay_partition(s.events, ELR)
    assert result.findings == ()
    assert [g for g in result.coverage.gaps if "kept in the ELR at its registration" in g]


def test_kept_in_the_elr_with_no_committed_mark_in_evidence_has_no_range() -> None:
    s = exclusion_story(False, controller_removes=False)
    s.events = [e for e in s.events if not isinstance(e, ProduceAck | FetchAnswer)]
    assert exclusion_rows(s) == [(FindingKind.ISR_RULE_VIOLATION, 0, 1, 3, None, None, "elr")]


# -- a ZooKeeper controller's decisions (_leader_and_isr)


def test_zookeeper_decisions_that_skip_epochs_name_the_missing_ones() -> None:
    """Epoch 0 (leader 1), then epoch 3 (leader 2, from the ISR): a clean
    election, but epochs 1 and 2 are not in evidence: no finding, unknown.
    Neither decision names a zkVersion: the partition epoch is Kafka's -1."""
    s = Story()
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3)))
    s.tick(1)
    third = s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 3, (2, 3)))

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert "leader epochs 1..2 are missing from the ZooKeeper controller's evidence" in (
        result.coverage.gaps
    )
    assert [(v.leader_epoch, v.leader, v.began) for v in result.lineage] == [
        (0, 1, s.events[0].origin.source),
        (3, 2, third.origin.source),
    ]
    registration = result.history.registration
    assert registration is not None
    assert (registration.replicas, registration.partition_epoch) == ((), -1)


def _offline_story(
    offline: bool = True, next_epoch: int = 5, other_file: bool = False
) -> tuple[Story, list[LeaderAndIsr]]:
    """ZooKeeper (1.1-style lines): epoch 3 led by 1 with the ISR [1, 2]
    then [1]; 1 dies, the controller takes the partition offline; 1 comes
    back and is elected again in ``next_epoch``."""
    s = Story()
    zk = "controller/state-change.log"
    decisions = [s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 3, (1, 2), 7))]
    s.tick(1)
    decisions.append(s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 3, (1,), 8)))
    s.tick(1)
    if offline:
        s._add(PartitionOffline(s._origin("broker-2/state-change.log" if other_file else zk,
                                          None, False), 3))  # fmt: skip
    s.tick(2)
    decisions.append(s._add(LeaderAndIsr(s._origin(zk, None, False), 1, next_epoch, (1,), 10)))
    return s, decisions


def test_the_epoch_a_controller_wrote_while_the_partition_was_offline_had_no_leader() -> None:
    """Formats-addendum 9.2: after ``state from OnlinePartition to
    OfflinePartition`` the controller took the dead leader out of the ISR
    (the last member stays) in a new epoch with no leader; its line is the
    offline one. Epoch 4 is that epoch: no gap, 1's return is clean."""
    s, decisions = _offline_story()
    offline = next(e for e in s.events if isinstance(e, PartitionOffline))
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert not [g for g in result.coverage.gaps if "missing" in g]
    assert [(v.leader_epoch, v.leader, v.election, v.isr_before, v.isr, v.began)
            for v in result.lineage] == [
        (3, 1, ElectionKind.UNKNOWN, (), (1,), decisions[0].origin.source),
        (4, -1, ElectionKind.OFFLINE, (1,), (1,), offline.origin.source),
        (5, 1, ElectionKind.CLEAN, (1,), (1,), decisions[2].origin.source),
    ]  # fmt: skip


def test_an_offline_line_fills_no_epoch_its_own_log_does_not_bracket() -> None:
    """Two epochs missing, the offline line in another file than the
    decisions, or no offline line: the missing epochs stay a gap."""
    for story in (
        _offline_story(next_epoch=6)[0],
        _offline_story(other_file=True)[0],
        _offline_story(offline=False)[0],
    ):
        result = replay_partition(story.events, CTX)
        assert result.verdict == Verdict.UNKNOWN
        missing = "..5" if any(v.leader_epoch == 6 for v in result.lineage) else "..4"
        assert f"leader epochs 4{missing} are missing from the ZooKeeper controller's evidence" in (
            result.coverage.gaps
        )
        assert [v.leader_epoch for v in result.lineage][:1] == [3]
        assert -1 not in [v.leader for v in result.lineage]


# -- the moment and the lines a restart loss is judged by


def test_a_restart_loss_is_dated_and_cited_by_the_load_line_and_the_mark_at_the_restart() -> None:
    """Follower 3 comes back at 200 below the committed 300 and fetches again:
    the truncation is dated by its load line, and cites the acks=all answer
    that committed 300, 3's fetch that held 300, and the load line."""
    s = recovery_story(False, 200)
    ack = next(e for e in s.events if isinstance(e, ProduceAck))
    held = [e for e in s.events if isinstance(e, FollowerFetch) and e.replica == 3][0]
    loaded = next(e for e in s.events if isinstance(e, LogLoaded))

    [f] = replay_partition(s.events, CTX).findings

    assert (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) == (
        FindingKind.TRUNCATION_BELOW_HWM, 4, 0, 3, 200, 300,
    )  # fmt: skip
    assert f.detected_at == loaded.origin.time
    assert f.evidence == (ack.origin.source, held.origin.source, loaded.origin.source)


# -- acks=all below min ISR end when the ISR grows back (_acked_under_min_isr)


def test_acks_after_the_isr_grew_back_are_not_under_min_isr() -> None:
    s, _ = alone_under_min_isr()
    s.produce(1, 30, acks=-1)
    s.produce(1, 31, acks=-1)
    s.fetch(1, 2, 32, epoch=0, last_fetched=0, hwm=32)
    s.tick(3)  # beyond the skew allowance of the acks
    s.change(isr=(1, 2))
    s.tick(5)
    s.produce(1, 40, acks=-1)  # two in the ISR again: allowed
    assert [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in replay_partition(s.events, CTX).findings
    ] == [(FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 30, 32)]


def test_an_unclean_replica_elected_uncleanly_is_the_elections_finding_only() -> None:
    """3, back from an unclean restart and taken out of the ELR, is elected
    with no ISR left: an unclean election (its own finding), and Unclean
    Exclusion no longer concerns it. Its start offset is not in evidence
    here (no line of its own as leader), so the range starts unknown."""
    s = exclusion_story(False, controller_removes=True)
    s.tick(1)
    record(s, leader=3, isr=(3,), elr=())
    result = replay_partition(s.events, ELR)
    assert [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end,
         f.records_lost)
        for f in result.findings
    ] == [(FindingKind.UNCLEAN_ELECTION, 0, 2, 3, None, 300, None)]  # fmt: skip
    assert result.history.unclean_restarts == ()


# -- the second sample's survivors (docs/testing.md): guards at their boundary,
# paths only a later epoch or a second item shows, and the fields the ISR
# timeline and the lineage publish


def finding_row(f: Finding) -> tuple[object, ...]:
    return (
        f.kind,
        f.key.partition,
        f.leader_epoch,
        f.replica,
        f.offset_start,
        f.offset_end,
        f.records_lost,
    )


def test_a_replica_back_with_an_empty_log_lost_all_it_held() -> None:
    """Follower 3 held the committed 300 and comes back from its unclean
    shutdown with nothing (log end 0): the load line dates the loss."""
    s = recovery_story(False, 0)
    loaded = next(e for e in s.events if isinstance(e, LogLoaded))

    [f] = replay_partition(s.events, CTX).findings

    assert finding_row(f) == (FindingKind.TRUNCATION_BELOW_HWM, 4, 0, 3, 0, 300, None)
    assert f.detected_at == loaded.origin.time
    assert f.confidence == Confidence.CONFIRMED  # the load line fixes the moment
    assert loaded.origin.source in f.evidence


def test_broker_lines_before_any_partition_record_are_kept_and_judge_nothing() -> None:
    """The metadata evidence of the partition is missing: follower 3's lines
    show it at 300, back at 250 after an unclean shutdown, then truncated to
    200. Both cuts are kept (no epoch to judge them in), no finding, unknown."""
    s = Story()
    follower = s._origin("broker-3/state-change.log", 3, False)
    s._add(BecomeFollower(follower, 3, 0, 300, leader=1))
    s.tick(5)
    restart(s, 3, False, 250)
    s.tick(5)
    cut = s._add(LogTruncated(server_log(s, 3), 3, 200))

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert [(x.replica, x.from_offset, x.to_offset, x.committed) for x in (
        result.history.restart_losses)] == [(3, 300, 250, None)]  # fmt: skip
    [t] = result.history.truncations
    assert (t.replica, t.from_offset, t.to_offset, t.leader_epoch, t.epoch_derived) == (
        3, 250, 200, None, None,
    )  # fmt: skip
    assert (t.epoch_derived_sources, t.after) == ((), cut.origin.source)


def test_a_follower_fetching_at_the_same_offset_again_truncated_nothing() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 4, acks=-1)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=5)
    s.tick(1)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=5)
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert result.history.truncations == ()
    assert result.history.replica(2).held == 5


def test_a_halted_fetchers_line_without_the_leaders_log_end_still_gives_its_own() -> None:
    """Follower 2's halt line names neither its leader nor the leader's log
    end, only its own 60; it then resets to 40: the truncation starts at 60."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=50)
    halt = s._add(FetcherHalt(server_log(s, 2), 2, None, 60, None))
    s._add(OffsetReset(server_log(s, 2), 2, 1, 60, 40))

    [f] = replay_partition(s.events, CTX).findings

    assert finding_row(f) == (FindingKind.TRUNCATION_BELOW_HWM, 4, 0, 2, 40, 50, None)
    assert f.from_offset == 60  # type: ignore[attr-defined]
    assert halt.origin.source in f.evidence


def test_a_topic_override_stays_when_another_brokers_config_is_read() -> None:
    """The describe header states min.insync.replicas=2 for the topic; then
    broker 2's KafkaConfig says 1 (its own, not leader 1's, and below the
    topic's anyway): leader 1's acks=all at 10 and 11 with the ISR [1]."""
    s = Story()
    describe = s._origin("describe/kafka-topics-describe.txt", None, False)
    s._add(TopicConfig(describe, "orders", 2))
    s._add(BrokerConfig(server_log(s, 2), 2, None, 1, "3.6.1", "kraft"))
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    s.tick(5)
    s.produce(1, 10, acks=-1)
    s.produce(1, 11, acks=-1)

    [f] = replay_partition(s.events, CTX).findings

    assert finding_row(f) == (FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 10, 12, None)
    assert (f.variant, f.min_isr) == ("under_min_isr", 2)  # type: ignore[attr-defined]


def test_kept_in_the_elr_of_an_epoch_whose_leader_commits_on() -> None:
    """3 leaves the ISR of epoch 0 into the ELR while leader 1 goes on; it
    restarts uncleanly at 220, registers still in the ELR and is unfenced in
    the same epoch, whose own mark (300, after 1's acks=all) is the one it
    is behind: no earlier epoch has a mark."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    record(s, isr=(1, 3))
    s.tick(10)
    s.fence(3)
    record(s, isr=(1,), elr=(3,))
    s.tick(1)
    s.produce(1, 299, acks=-1)
    s.tick(5)
    restart(s, 3, False, 220)
    s.tick(0.5)
    register(s, 3, 15)
    s.tick(1)
    unfence(s, 3)
    assert exclusion_rows(s) == [(FindingKind.ISR_RULE_VIOLATION, 0, 0, 3, 220, 300, "elr")]


def test_a_follower_joining_below_the_new_leaders_start_offset() -> None:
    """Leader 1 commits 100 and is fenced; 2 (in the ISR) is elected and
    starts epoch 1 at 100 (its line prints no HWM, no answer shows one).
    3, whose fetch at 50 is half a second old, joins the ISR of epoch 1: the
    bound is the start offset alone."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 99, acks=-1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 50, epoch=0, last_fetched=0, hwm=100)
    s.tick(1)
    s.change(isr=(1, 2))
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    s.tick(3)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 100))
    s.tick(3)
    s.fetch(2, 3, 50, epoch=1, last_fetched=0)
    s.tick(0.5)
    joined = s.change(isr=(2, 3))
    s.tick(0.3)
    s.fetch(2, 3, 50, epoch=1, last_fetched=0)  # answered after: still at 50

    [f] = replay_partition(s.events, CTX).findings

    assert finding_row(f) == (FindingKind.ISR_RULE_VIOLATION, 4, 1, 3, 50, 100, None)
    assert (f.variant, f.leader) == ("expansion", 2)  # type: ignore[attr-defined]
    assert joined.origin.source in f.evidence
    assert ("broker-2/state-change.log", 1) in {(e.source_file, e.line_no) for e in f.evidence}


def test_a_leader_elected_below_what_it_was_last_seen_holding_is_named() -> None:
    """3 (still in the ISR) last fetched 250 while 300 was committed; it is
    elected cleanly and nothing shows where epoch 1 began: no finding, but a
    loss cannot be ruled out."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 299, acks=-1)
    s.fetch(1, 2, 300, epoch=0, last_fetched=0, hwm=300)
    s.fetch(1, 3, 250, epoch=0, last_fetched=0, hwm=300)
    s.tick(5)
    s.fence(1)
    s.change(leader=3, isr=(3, 2))

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.lineage[1].leader_log_end == 250
    assert (
        "leader 3 of epoch 1 was last seen holding up to offset 250, below the committed 300, "
        "and where its epoch started is not in evidence: a loss cannot be ruled out"
    ) in result.coverage.gaps


def test_the_isr_timeline_names_each_changes_leader_and_the_lineage_its_elr() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    record(s, isr=(1, 2), elr=(3,))
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    result = replay_partition(s.events, ELR)
    assert [(c.leader_epoch, c.leader, c.isr) for c in result.history.isr_changes] == [
        (0, 1, (1, 2, 3)),
        (0, 1, (1, 2)),
        (1, 2, (2,)),
    ]
    assert [(v.leader_epoch, v.leader, v.isr, v.elr) for v in result.lineage] == [
        (0, 1, (1, 2), (3,)),
        (1, 2, (2,), (3,)),
    ]


def test_a_snapshot_showing_it_out_of_the_elr_ends_the_concern() -> None:
    """3, back from an unclean restart, registers while in the ELR; a
    snapshot of the partition then shows it out of the ELR (as KIP-966 has
    the controller do) before it is unfenced: no violation."""
    s = exclusion_story(False, controller_removes=False)
    registered = next(i for i, e in enumerate(s.events) if isinstance(e, BrokerRegistration))
    s.events = s.events[: registered + 1]  # the story up to 3's registration, then:
    s._add(
        PartitionRecord(
            origin=s._origin(METADATA_FILE, None, True),
            replicas=(1, 2, 3),
            isr=(),
            leader=-1,
            leader_epoch=1,
            partition_epoch=4,
            elr=(1,),
            last_known_elr=(3,),
        )
    )
    s.tick(1)
    unfence(s, 3)
    result = replay_partition(s.events, ELR)
    assert result.findings == ()
    assert result.history.unclean_restarts[0].kept is None


def test_an_answer_about_an_older_epoch_only_bounds_where_the_new_one_began() -> None:
    """Epochs 0 (leader 1, commits 100), 1 (leader 2, commits 150 with 3 in
    the ISR) and 2 (3, elected cleanly; its own last fetched epoch is 1).
    Old leader 1, holding 110 of epoch 0, fetches from 3 naming epoch 0: "epoch
    0 ends at 100". 3's log has epoch 1 after that, so epoch 2 began at 100
    or later, not at 100: no loss is read into it."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 99, acks=-1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    for offset in range(100, 110):
        s.produce(1, offset, acks=1)
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2, 3))
    s.tick(5)
    for offset in range(100, 150, 10):
        s.produce(2, offset, acks=1)
    s.fetch(2, 3, 150, epoch=1, last_fetched=1, hwm=150)
    s.tick(5)
    s.fence(2)
    s.change(leader=3, isr=(3,))
    s.tick(5)
    s.fetch(3, 1, 110, epoch=2, last_fetched=0, hwm=150, diverging=(0, 100))
    s.tick(1)
    s.fetch(3, 1, 100, epoch=2, last_fetched=0, hwm=150)

    result = replay_partition(s.events, CTX)

    assert [finding_row(f) for f in result.findings] == []
    third = result.lineage[2]
    assert (third.leader_epoch, third.leader, third.leader_last_fetched_epoch) == (2, 3, 1)
    assert (third.start_offset.lo, third.start_offset.hi, third.start_offset.exact) == (
        100, None, None,
    )  # fmt: skip


def test_a_divergence_names_the_epoch_the_answer_gave() -> None:
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=50)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    s.fetch(2, 1, 60, epoch=1, last_fetched=0, hwm=80, diverging=(0, 50))
    s.fetch(2, 1, 60, epoch=1, last_fetched=0, hwm=80)  # keeps its suffix
    [f] = replay_partition(s.events, CTX).findings
    assert isinstance(f, LogDivergence)
    assert finding_row(f) == (FindingKind.LOG_DIVERGENCE, 4, 1, 1, 50, 60, 10)
    assert (f.leader, f.diverging_epoch) == (2, 0)


def test_a_fetch_from_the_new_epoch_past_the_divergence_leaves_it_open() -> None:
    """Told that its epoch 0 ends at 50, replica 1 next fetches at 60 with
    epoch 1 as its last fetched: it truncated and fetched records of epoch 1,
    but nothing shows to where (a cut at 55 would keep part of the old
    suffix). Not a kept divergence, as a fetch still naming epoch 0 would
    be: no finding, and a gap."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=50)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    s.fetch(2, 1, 60, epoch=1, last_fetched=0, hwm=80, diverging=(0, 50))
    s.tick(1)
    s.fetch(2, 1, 60, epoch=1, last_fetched=1, hwm=80)
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert [d.persisted_by for d in result.history.divergences] == [None]
    assert any(g.startswith("replica 1 was told to truncate to 50") for g in result.coverage.gaps)


def test_the_gap_an_unclean_start_leaves_says_how_later_epochs_are_judged() -> None:
    s = unclean_story()
    result = replay_partition(s.events, CTX)
    assert [finding_row(f) for f in result.findings] == [
        (FindingKind.UNCLEAN_ELECTION, 4, 1, 2, None, 20, None)
    ]
    assert (
        "epoch 1 began with an unclean election and its start offset is not in evidence: "
        "later epochs are judged as if it held the committed log"
    ) in result.coverage.gaps


def test_a_second_loss_is_judged_after_a_first_with_no_exposure() -> None:
    """Epoch 1: 2 is elected uncleanly at 100 (300 committed) and commits
    acks=all up to 141 (its last at 140), exposing no HWM; epoch 2: 3 is
    elected uncleanly at 120 and shows HWM 120: its regression below 141 is
    found although epoch 1 showed none."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.tick(1)
    s.change(isr=(1,))
    s.produce(1, 299, acks=-1)
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    s.tick(1)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 100))
    s.tick(1)
    for offset in range(100, 150, 10):
        s.produce(2, offset, acks=-1)
    s.fetch(2, 3, 120, epoch=1, last_fetched=1)
    s.tick(5)
    s.fence(2)
    s.change(leader=3, isr=(3,), recovery=RECOVERING)
    s.tick(1)
    s._add(BecomeLeader(s._origin("broker-3/state-change.log", 3, False), 3, 2, 120))
    s.tick(1)
    s.fetch(3, 2, 120, epoch=2, last_fetched=1, hwm=120)

    result = replay_partition(s.events, CTX)

    assert sorted((f.kind.value, *finding_row(f)[1:]) for f in result.findings) == [
        ("committed_data_loss", 4, 1, None, 100, 300, 200),
        ("committed_data_loss", 4, 2, None, 120, 141, 21),
        ("hwm_regression", 4, 2, 3, 120, 141, None),
        ("truncation_below_hwm", 4, 2, 2, 120, 141, 21),
        ("unclean_election", 4, 1, 2, 100, 300, 200),
        ("unclean_election", 4, 2, 3, 120, 141, 21),
    ]


def test_an_ack_just_before_the_isr_grew_back_is_left_open() -> None:
    """Leader 1 alone in the ISR (min ISR 2) acknowledges acks=all at 30 and
    31 well after the shrink, and at 32 one second before the record that
    takes 2 back in: 32 may have followed it (the skew allowance is 2 s), so
    the finding counts two acks and ends at 32."""
    s, _ = alone_under_min_isr()
    s.produce(1, 30, acks=-1)
    s.produce(1, 31, acks=-1)
    s.fetch(1, 2, 32, epoch=0, last_fetched=0, hwm=32)
    s.tick(4)
    s.produce(1, 32, acks=-1)
    s.tick(1)
    s.change(isr=(1, 2))

    result = replay_partition(s.events, CTX)

    [f] = result.findings
    assert finding_row(f) == (FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 30, 32, None)
    assert (f.variant, f.acks) == ("under_min_isr", 2)  # type: ignore[attr-defined]


def test_a_zookeeper_decision_growing_the_isr_back_ends_acks_under_min_isr() -> None:
    """The ZooKeeper controller shrinks the ISR of epoch 0 to [1] (broker 1's
    own min.insync.replicas is 2) and later grows it back to [1, 2]: the acks
    between the two decisions break the rule, the one after does not."""
    s = Story()
    zk = "controller/controller.log"
    s._add(BrokerConfig(server_log(s, 1), 1, None, 2))
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    s.tick(1)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1,), 1))
    s.tick(5)
    s.produce(1, 30, acks=-1)
    s.produce(1, 31, acks=-1)
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2), 2))
    s.tick(5)
    s.produce(1, 40, acks=-1)

    result = replay_partition(s.events, CTX)

    [f] = result.findings
    assert finding_row(f) == (FindingKind.ISR_RULE_VIOLATION, 4, 0, 1, 30, 32, None)
    assert (f.variant, f.isr, f.min_isr, f.acks) == ("under_min_isr", (1,), 2, 2)  # type: ignore[attr-defined]
    assert [(c.leader_epoch, c.leader, c.isr) for c in result.history.isr_changes] == [
        (0, 1, (1, 2, 3)),
        (0, 1, (1,)),
        (0, 1, (1, 2)),
    ]


def test_a_consumer_answer_with_no_epoch_in_evidence_still_shows_what_the_broker_held() -> None:
    """No record of the partition: a consumer's fetch answer from broker 3
    shows HWM 300 (so 3 held 300), then 3's own line truncates to 200."""
    s = Story()
    consumer = s._origin("broker-3/kafka-request.log", 3, False)
    shown = s._add(ClientHwm(consumer, 300, 0))
    s.tick(5)
    s._add(LogTruncated(server_log(s, 3), 3, 200))
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    [t] = result.history.truncations
    assert (t.replica, t.from_offset, t.to_offset, t.leader_epoch) == (3, 300, 200, None)
    assert t.before == shown.origin.source


def test_a_followers_answer_below_what_the_new_leader_exposed_counts_in_the_new_epoch() -> None:
    """consumer_hwm_story: after 2's unclean election (epoch 1), 2 shows HWM
    110; follower 3, serving a consumer, then shows 105: that counts in epoch
    1, where 110 is already exposed, and changes no finding."""
    s = consumer_hwm_story(310)
    s.tick(1)
    consumer_fetch(s, 3, 105, epoch=1)
    result = replay_partition(s.events, CTX)
    assert sorted((f.kind.value, *finding_row(f)[1:]) for f in result.findings) == [
        ("committed_data_loss", 4, 1, None, 100, 310, 210),
        ("hwm_regression", 4, 1, 2, 110, 310, None),
        ("truncation_below_hwm", 4, 1, 1, 100, 310, 210),
        ("unclean_election", 4, 1, 2, 100, 310, 210),
    ]
    assert result.lineage[1].committed == 110
    assert result.history.replica(3).held == 105


def asked_story(behind: int) -> Story:
    """Leader 1 commits [behind, 20) alone (acks=all) after exposing HWM
    ``behind``; replica 2, at ``behind``, is elected uncleanly (epoch 1). Old
    leader 1 fetches from 2 at 20 (no answer logged), then asks 2 where epoch
    0 ends: at ``behind``; it fetches again from there."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    if behind:
        s.produce(1, behind - 1, acks=-1)
        s.fetch(1, 2, behind, epoch=0, last_fetched=0, hwm=behind)
        s.fetch(1, 3, behind, epoch=0, last_fetched=0, hwm=behind)
    s.tick(1)
    s.change(isr=(1,))
    for offset in range(behind, 20):
        s.produce(1, offset, acks=-1)
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    s.tick(1)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, behind))
    s.tick(5)
    s.fetch(2, 1, 20, epoch=1, last_fetched=0)
    s.tick(1)
    asked = s._origin("broker-2/kafka-request.log", 2, False)
    s._add(EpochAnswer(asked, 1, 0, None, 0, requested_epoch=0))  # names no end: shows nothing
    s._add(EpochAnswer(replace(asked, seq=asked.seq + 1), 1, 0, behind, 0, requested_epoch=0))
    s.tick(1)
    s.fetch(2, 1, behind, epoch=1, last_fetched=0, hwm=behind)
    return s


def test_an_offsets_for_leader_epoch_answer_confirms_the_old_leaders_truncation() -> None:
    for behind in (10, 0):
        result = replay_partition(asked_story(behind).events, CTX)
        assert sorted((f.kind.value, *finding_row(f)[1:]) for f in result.findings) == [
            ("committed_data_loss", 4, 1, None, behind, 20, 20 - behind),
            ("hwm_regression", 4, 1, 2, behind, 20, None),
            ("truncation_below_hwm", 4, 1, 1, behind, 20, 20 - behind),
            ("unclean_election", 4, 1, 2, behind, 20, 20 - behind),
        ], behind
        [t] = [f for f in result.findings if f.kind == FindingKind.TRUNCATION_BELOW_HWM]
        # the answer fixes when it truncated: confirmed (without it, probable)
        assert (t.qualifier, t.confidence) == (Scope.GLOBAL, Confidence.CONFIRMED), behind
        [d] = result.history.divergences
        assert (d.replica, d.leader, d.diverging_epoch, d.end_offset, d.follower_leo) == (
            1, 2, 0, behind, 20,
        )  # fmt: skip


def test_a_new_replica_set_is_a_reassignment_even_without_adding_or_removing_lists() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    record(s, leader=2, replicas=(2, 3, 4), isr=(2, 3))
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert [(v.leader_epoch, v.leader, v.election) for v in result.lineage] == [
        (0, 1, ElectionKind.INITIAL),
        (1, 2, ElectionKind.REASSIGNMENT),
    ]


ZK_HW = ReplayContext(
    key=replace(KEY, partition=4), profile=Profile.ZK_HW, request_log_observers=frozenset({1, 2, 3})
)


def zk_fetch(s: Story, leader: int, follower: int, offset: int) -> None:
    """A pre-0.11 follower fetch: it names no epoch."""
    s._add(FollowerFetch(s._origin(f"broker-{leader}/kafka-request.log", leader, False),
                         follower, offset, None, None))  # fmt: skip


def test_a_zk_hw_leader_line_without_its_hwm_shows_no_regression() -> None:
    """ZooKeeper era before 0.11: leader 1 shows a consumer HWM 300 with the
    ISR shrunk to itself; 2 (at 100) is elected uncleanly and its line gives
    its start offset 100 but no HWM: the loss, and no HWM regression (none is
    in evidence)."""
    s = Story()
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    zk_fetch(s, 1, 2, 100)
    zk_fetch(s, 1, 3, 100)
    s.tick(1)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1,), 1))
    s.tick(1)
    s._add(ClientHwm(s._origin("broker-1/kafka-request.log", 1, False), 300, 0))
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 1, (2,), 2))
    s.tick(1)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 100))
    result = replay_partition(s.events, ZK_HW)
    assert sorted((f.kind.value, *finding_row(f)[1:]) for f in result.findings) == [
        ("committed_data_loss", 4, 1, None, 100, 300, 200),
        ("unclean_election", 4, 1, 2, 100, 300, 200),
    ]
    assert result.lineage[1].start_exposure is None


def test_an_unclean_election_with_no_mark_in_evidence_is_confirmed_and_has_no_range() -> None:
    """No HWM of epoch 0 is in evidence; 2, outside the ISR [1], is elected:
    unclean for certain (the records say so), with no range and no derived
    mark behind it."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    [f] = replay_partition(s.events, CTX).findings
    assert finding_row(f) == (FindingKind.UNCLEAN_ELECTION, 4, 1, 2, None, None, None)
    assert (f.confidence, f.derived_mark) == (Confidence.CONFIRMED, False)


def test_an_act_with_no_clock_after_the_end_of_a_leadership_is_a_gap() -> None:
    """Fenced leader 1's request log has an acknowledged write whose time did
    not survive: it may have come before the fence or after it."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    s.fence(1)
    s.tick(5)
    origin = s._origin("broker-1/kafka-request.log", 1, False)
    s._add(ProduceAck(replace(origin, time=None), 1, 1, 0, "app"))
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert [(x.broker, x.leader_epoch, len(x.acts.kept)) for x in result.history.stale] == [
        (1, 0, 1)
    ]
    assert any(
        g.startswith("broker 1 acted as leader of epoch 0 (broker-1/kafka-request.log:2)")
        and g.endswith("(or with no clock): whether it was two leaders at once is not fixed by "
                       "the evidence")
        for g in result.coverage.gaps
    )  # fmt: skip


def test_a_zk_hw_follower_of_the_first_epoch_holds_that_epochs_data() -> None:
    """Before 0.11 a fetch names no epoch; in the partition's first epoch
    its data can only be that epoch's. Leader 1 commits 100 (its ISR
    followers' least fetch offset); 3 lags at 50 and is elected uncleanly,
    starting epoch 1 at 50; 2, which held 100 of epoch 0, fetches from 3 at
    100 and then at 50: it lost [50, 100) for good (global)."""
    s = Story()
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    s.tick(3)
    zk_fetch(s, 1, 3, 50)
    s.tick(3)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2), 1))
    s.tick(3)
    zk_fetch(s, 1, 2, 100)
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 3, 1, (3,), 2))
    s.tick(3)
    s._add(BecomeLeader(s._origin("broker-3/state-change.log", 3, False), 3, 1, 50))
    s.tick(1)
    zk_fetch(s, 3, 2, 100)
    s.tick(1)
    zk_fetch(s, 3, 2, 50)

    result = replay_partition(s.events, ZK_HW)

    assert sorted((f.kind.value, *finding_row(f)[1:]) for f in result.findings) == [
        ("committed_data_loss", 4, 1, None, 50, 100, 50),
        ("truncation_below_hwm", 4, 1, 2, 50, 100, 50),
        ("unclean_election", 4, 1, 3, 50, 100, 50),
    ]
    [t] = [f for f in result.findings if f.kind == FindingKind.TRUNCATION_BELOW_HWM]
    assert (t.qualifier, t.confidence, t.derived_mark) == (Scope.GLOBAL, Confidence.PROBABLE, True)


def test_a_local_truncation_against_a_derived_mark_says_it_rests_on_it() -> None:
    """zk-hw: epoch 0's mark, 100, is derived from the ISR followers' fetch
    offsets; 2 takes epoch 1 cleanly at 100 and 3 fetches its records up to
    120, then falls back to 90: a local truncation below the mark, probable
    and resting on the derived mark (the fetch lines that give it)."""
    s = Story()
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    s.tick(3)
    zk_fetch(s, 1, 2, 100)
    zk_fetch(s, 1, 3, 100)
    derived_from = [e.origin.source for e in s.events if isinstance(e, FollowerFetch)]
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 1, (2, 3, 1), 1))
    s.tick(3)
    s._add(BecomeLeader(s._origin("broker-2/state-change.log", 2, False), 2, 1, 100))
    s.tick(1)
    zk_fetch(s, 2, 3, 100)
    zk_fetch(s, 2, 3, 120)
    s.tick(1)
    zk_fetch(s, 2, 3, 90)

    [f] = replay_partition(s.events, ZK_HW).findings

    assert finding_row(f) == (FindingKind.TRUNCATION_BELOW_HWM, 4, 1, 3, 90, 100, None)
    assert (f.qualifier, f.confidence, f.derived_mark) == (  # type: ignore[attr-defined]
        Scope.LOCAL, Confidence.PROBABLE, True,
    )  # fmt: skip
    assert all(source in f.evidence for source in derived_from)


def _zk_hw_follower_grows_under_a_second_epoch(s: Story) -> None:
    """zk-hw (0.10: no line names an epoch or its start): leader 1 of epoch
    0 commits 50 (its ISR followers' least fetch offset); 2 takes epoch 1
    cleanly, its start in no line, and both followers fetch from it, 3 from
    60 up to 120 (epoch 1's derived mark, 120); 3 crashes and the controller
    bumps the epoch without it (epoch 2, leader 2 again)."""
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    s.tick(3)
    zk_fetch(s, 1, 2, 50)
    zk_fetch(s, 1, 3, 50)
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 1, (2, 3, 1), 1))
    s.tick(3)
    for offset in (60, 120):
        zk_fetch(s, 2, 3, offset)
        zk_fetch(s, 2, 1, offset)
        s.tick(1)
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 2, (2, 1), 2))


def test_a_zk_hw_followers_data_is_dated_by_the_epoch_it_fetched_it_in() -> None:
    """3 comes back with log end 120 and truncates to its checkpointed HW,
    90: what it cut, [90, 120), it had fetched from epoch 1's leader, so
    epoch 1's mark judges it (not epoch 0's, 50, which the first epoch's
    fetches dated it to). Epoch 2's start is in no line: whether leader 2
    still holds the range is not decided."""
    s = Story()
    _zk_hw_follower_grows_under_a_second_epoch(s)
    s.tick(3)
    s._add(LogLoaded(s._origin("broker-3/server.log", 3, False), 3, 120))
    s._add(LogTruncated(s._origin("broker-3/server.log", 3, False), 3, 90))

    [f] = replay_partition(s.events, ZK_HW).findings

    assert finding_row(f) == (FindingKind.TRUNCATION_BELOW_HWM, 4, 2, 3, 90, 120, None)
    assert (f.qualifier, f.confidence, f.derived_mark) == (  # type: ignore[attr-defined]
        Scope.UNKNOWN, Confidence.PROBABLE, True,
    )  # fmt: skip


def test_one_truncation_told_by_the_follower_and_by_the_leaders_log_is_one_finding() -> None:
    """Follower 3's own line says it truncated to 200 (the committed mark is
    300); leader 1's clock runs ahead, so its log shows 3's last fetch at 300
    half a second after that line, then 3 fetching at 200: the replay sees
    the cut twice, and reports it once, citing both."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 299, acks=-1)
    s.fetch(1, 2, 300, epoch=0, last_fetched=0, hwm=300)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    s.tick(5)
    line = s._add(LogTruncated(server_log(s, 3), 3, 200))
    s.tick(0.5)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    s.tick(1.5)
    s.fetch(1, 3, 200, epoch=0, last_fetched=0, hwm=300)
    fetched = s.events[-2]

    result = replay_partition(s.events, CTX)

    assert [(t.from_offset, t.to_offset) for t in result.history.truncations] == [
        (300, 200),
        (300, 200),
    ]
    [f] = result.findings
    assert finding_row(f) == (FindingKind.TRUNCATION_BELOW_HWM, 4, 0, 3, 200, 300, None)
    assert (f.qualifier, f.confidence) == (Scope.LOCAL, Confidence.PROBABLE)  # type: ignore[attr-defined]
    assert line.origin.source in f.evidence
    assert fetched.origin.source in f.evidence


def _zk_hw_leader_in_between() -> Story:
    """zk-hw (0.10): 2 fetches from 1 in epoch 0 up to 100 (its data dated
    epoch 0; the mark when epoch 1 began, 100), then leads epoch 1, where 3
    fetches from it up to 200 (2 held 200; the mark when epoch 2 began, 200).
    3 leads epoch 2; 2 comes back with its log end 200 and truncates to its
    HW 160: [160, 200) went below the mark."""
    s = Story()
    zk = "controller/controller.log"
    s._add(LeaderAndIsr(s._origin(zk, None, False), 1, 0, (1, 2, 3), 0))
    for offset in (0, 100):
        zk_fetch(s, 1, 2, offset)
        zk_fetch(s, 1, 3, offset)
        s.tick(1)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 2, 1, (2, 3), 1))
    for offset in (100, 200):
        s.tick(1)
        zk_fetch(s, 2, 3, offset)
    s.tick(5)
    s._add(LeaderAndIsr(s._origin(zk, None, False), 3, 2, (3, 1), 2))
    s.tick(5)
    log = "broker-2/server.log"
    s._add(BrokerRestart(s._origin(log, 2, False), 2, None))
    s._add(LogLoaded(s._origin(log, 2, False), 2, 200))
    s._add(LogTruncated(s._origin(log, 2, False), 2, 160))
    return s


def test_a_zk_hw_leaders_data_is_undated_once_it_led_a_later_epoch() -> None:
    """Nothing before 0.11 dates what a leader writes: 2's fetch in epoch 0
    dated its data to epoch 0, but it led epoch 1 since and may have written
    in it. Judged on the epoch in force when it truncated (epoch 2's mark
    200), with the qualifier unknown (whether epoch 2's leader holds [160,
    200) is in no line). Dated to epoch 0 still, it was judged on the mark
    when epoch 1 began, 100, below the cut, and went unreported."""
    result = replay_partition(_zk_hw_leader_in_between().events, ZK_HW)
    assert [
        (f.kind, f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end,
         f.records_lost, f.qualifier)
        for f in result.findings
    ] == [(FindingKind.TRUNCATION_BELOW_HWM, 4, 2, 2, 160, 200, None, Scope.UNKNOWN)]  # fmt: skip
