"""The evidence of issues 12 and 13 in the replay: the HWM clients saw, a
broker's restart and recovery, Unclean Exclusion, point-in-time views and
configs. Each story asserts the exact findings (kind, partition, epoch,
replica, offsets, records lost), with a near miss beside it that yields none.

Clocks: the controller's records and each broker's lines carry their own
clock; the skew allowance is 2 s (ReplayContext's default)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pipeline.bridge import CONVERTERS, NOT_REPLAYED, to_events
from replay import ReplayContext, replay_partition
from replay.codec import dumps, loads
from replay.types import (
    NO_LEADER_CHANGE,
    RECOVERY_NO_CHANGE,
    BecomeFollower,
    BecomeLeader,
    BrokerConfig,
    BrokerRegistration,
    BrokerRestart,
    ClientEpochAnswer,
    ClientHwm,
    ClientPosition,
    Confidence,
    ControllerChange,
    FetcherHalt,
    FindingKind,
    IsrUpdated,
    LogLoaded,
    LogRecovered,
    LogTruncated,
    OffsetReset,
    Origin,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionView,
    Profile,
    RecoveryTruncation,
    Scope,
    Source,
    TopicConfig,
    Verdict,
)
from tests.replay_fixtures import KEY, METADATA_FILE, Story

CTX = ReplayContext(key=KEY, request_log_observers=frozenset({1, 2, 3}))
ELR = ReplayContext(key=KEY, profile=Profile.KRAFT_ELR, request_log_observers=frozenset({1, 2, 3}))


def table(result) -> list[tuple[Any, ...]]:  # type: ignore[no-untyped-def]
    """Every finding as (kind, partition, epoch, replica, start, end, lost)."""
    return sorted(
        (
            f.kind.value,
            f.key.partition,
            f.leader_epoch,
            f.replica,
            f.offset_start,
            f.offset_end,
            f.records_lost,
        )
        for f in result.findings
    )


def of_kind(result, kind: FindingKind) -> list[Any]:  # type: ignore[no-untyped-def]
    return [f for f in result.findings if f.kind == kind]


# --- small builders ------------------------------------------------------------


def consumer_fetch(s: Story, broker: int, hwm: int, *, epoch: int | None = None) -> None:
    origin = s._origin(f"broker-{broker}/kafka-request.log", broker, False)
    s._add(ClientHwm(origin, hwm, 0, epoch))


def list_offsets(s: Story, broker: int, hwm: int, epoch: int | None) -> None:
    origin = s._origin(f"broker-{broker}/kafka-request.log", broker, False)
    s._add(ClientHwm(origin, hwm, 0, epoch, None, True))


def server_log(s: Story, broker: int):  # type: ignore[no-untyped-def]
    return s._origin(f"broker-{broker}/server.log", broker, False)


def become_leader(s: Story, broker: int, epoch: int, start: int, hwm: int | None = None) -> None:
    origin = s._origin(f"broker-{broker}/state-change.log", broker, False)
    s._add(BecomeLeader(origin, broker, epoch, start, hwm))


def become_follower(s: Story, broker: int, epoch: int, log_end: int, hwm: int) -> None:
    origin = s._origin(f"broker-{broker}/state-change.log", broker, False)
    s._add(BecomeFollower(origin, broker, epoch, log_end, None, hwm))


def restart(s: Story, broker: int, clean: bool | None, log_end: int | None) -> None:
    s._add(BrokerRestart(server_log(s, broker), broker, clean))
    if clean is False:
        s._add(LogRecovered(server_log(s, broker), broker, 0))
    if log_end is not None:
        s._add(LogLoaded(server_log(s, broker), broker, log_end, 0))


def record(s: Story, **fields: Any) -> None:
    defaults: dict[str, Any] = {
        "leader": NO_LEADER_CHANGE,
        "leader_recovery_state": RECOVERY_NO_CHANGE,
    }
    s._add(
        PartitionChangeRecord(origin=s._origin(METADATA_FILE, None, True), **(defaults | fields))
    )


def register(s: Story, broker: int, broker_epoch: int) -> None:
    s._add(BrokerRegistration(s._origin(METADATA_FILE, None, True), broker, broker_epoch, True))


def unfence(s: Story, broker: int) -> None:
    from replay.types import BrokerFencing

    s._add(BrokerFencing(s._origin(METADATA_FILE, None, True), broker, None, -1))


# --- 1. the HWM clients saw -----------------------------------------------------


def _leader_1_alone_writes_to_310() -> Story:
    """Followers 2 and 3 stop at 100 (the last HWM any follower answer
    shows); the ISR shrinks to leader 1, which alone writes acks=1 records
    up to 310."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.tick(12)
    s.change(isr=(1,))
    s.tick(1)
    for offset in range(100, 310, 10):
        s.produce(1, offset, acks=1)
    return s


def _2_elected_uncleanly_at_100(s: Story) -> None:
    """1 is fenced; 2 is elected uncleanly and starts epoch 1 at 100."""
    s.tick(5)
    s.fence(1)
    s.tick(1)
    s.change(leader=2, isr=(2,))
    s.tick(0.5)
    become_leader(s, 2, 1, 100, 90)


def consumer_hwm_story(consumer_saw: int | None) -> Story:
    """Leader 1 alone commits acks=1 writes up to 310: only a consumer's
    fetch answer shows it. 1 is fenced, 2 is elected uncleanly and starts at
    100; 1 comes back and truncates to 100."""
    s = _leader_1_alone_writes_to_310()
    s.tick(1)
    if consumer_saw is not None:
        consumer_fetch(s, 1, consumer_saw, epoch=0)
    _2_elected_uncleanly_at_100(s)
    for offset in range(100, 110):
        s.produce(2, offset, acks=1)
    s.tick(1)
    consumer_fetch(s, 2, 110, epoch=1)
    s.tick(10)
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=110)
    return s


def test_a_loss_is_measured_from_the_hwm_only_a_consumer_was_shown() -> None:
    result = replay_partition(consumer_hwm_story(310).events, CTX)

    assert table(result) == [
        ("committed_data_loss", 0, 1, None, 100, 310, 210),
        ("hwm_regression", 0, 1, 2, 110, 310, None),
        ("truncation_below_hwm", 0, 1, 1, 100, 310, 210),
        ("unclean_election", 0, 1, 2, 100, 310, 210),
    ]
    election = of_kind(result, FindingKind.UNCLEAN_ELECTION)[0]
    assert election.confidence == Confidence.CONFIRMED
    # the consumer's answer is the evidence of the mark
    assert any(s.source_file == "broker-1/kafka-request.log" for s in election.evidence)
    truncation = of_kind(result, FindingKind.TRUNCATION_BELOW_HWM)[0]
    assert truncation.qualifier == Scope.GLOBAL


def test_without_the_consumer_answer_no_follower_showed_more_than_100() -> None:
    result = replay_partition(consumer_hwm_story(None).events, CTX)

    # the election is still unclean, but nothing above 100 was shown committed
    assert table(result) == [("unclean_election", 0, 1, 2, None, None, 0)]


def position(s: Story, broker: int, offset: int, client: str = "consumer-1") -> None:
    """A consumer's Fetch before 1.0: its position, no answer printed."""
    origin = s._origin(f"broker-{broker}/kafka-request.log", broker, False)
    s._add(ClientPosition(origin, offset, client))


def consumer_position_story(
    positions: list[tuple[int, str]], *, change_between: bool = False
) -> Story:
    """consumer_hwm_story with, in place of the answer showing 310, the
    positions a pre-1.0 request log prints: (offset, client) on leader 1;
    ``change_between``: the controller re-elects 1 (epoch 1) between the
    first position and the rest."""
    s = _leader_1_alone_writes_to_310()
    for n, (offset, client) in enumerate(positions):
        s.tick(1)
        if change_between and n == 1:
            s.change(leader=1, isr=(1,))
            s.tick(1)
        position(s, 1, offset, client)
    _2_elected_uncleanly_at_100(s)
    s.tick(10)
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=110)
    return s


def test_a_consumers_advance_on_one_leader_shows_the_hwm_it_was_shown() -> None:
    # 0.10: the consumer fetched at 100, then at 310: leader 1's answer to
    # the first fetch handed it [100, 310), all below the HWM it exposed
    story = consumer_position_story([(100, "consumer-1"), (310, "consumer-1")])
    result = replay_partition(story.events, CTX)

    assert table(result) == [
        ("committed_data_loss", 0, 1, None, 100, 310, 210),
        ("hwm_regression", 0, 1, 2, 110, 310, None),
        ("truncation_below_hwm", 0, 1, 1, 100, 310, 210),
        ("unclean_election", 0, 1, 2, 100, 310, 210),
    ]
    election = of_kind(result, FindingKind.UNCLEAN_ELECTION)[0]
    # the later position's line is the evidence of the mark
    later = [e for e in story.events if isinstance(e, ClientPosition)][-1]
    assert later.origin.source in election.evidence
    # leader 1's log held what it handed the consumer: 1 truncated [100, 310)
    assert [(t.replica, t.from_offset, t.to_offset) for t in result.history.truncations] == [
        (1, 310, 100)
    ]


@pytest.mark.parametrize(
    ("positions", "change_between"),
    [
        # one position alone: a consumer may seek, or be answered empty
        ([(310, "consumer-1")], False),
        # two clients: neither advanced
        ([(100, "consumer-1"), (310, "consumer-2")], False),
        # back, not forward
        ([(310, "consumer-1"), (100, "consumer-1")], False),
        # across a change of epoch the records may have come from elsewhere
        ([(100, "consumer-1"), (310, "consumer-1")], True),
    ],
)
def test_a_position_that_did_not_advance_on_one_leader_shows_no_hwm(
    positions: list[tuple[int, str]], change_between: bool
) -> None:
    story = consumer_position_story(positions, change_between=change_between)
    result = replay_partition(story.events, CTX)
    # nothing above what the answers to followers showed (100, then 110)
    assert max(v.committed or 0 for v in result.history.epochs) == 110
    assert all(f.offset_end is None for f in result.findings)
    assert result.history.replica(1).held == 100


def test_a_list_offsets_answer_naming_its_epoch_is_that_leaders_exposure() -> None:
    s = consumer_hwm_story(None)
    # the same story with a lag monitor's ListOffsets (v4+, names epoch 0)
    events = list(s.events)
    index = next(
        i for i, e in enumerate(events) if isinstance(e, PartitionChangeRecord) and e.leader == 2
    )
    probe = Story(clock=18.5, metadata_offset=100)
    list_offsets(probe, 1, 250, 0)
    result = replay_partition(events[: index - 1] + probe.events + events[index - 1 :], CTX)

    assert ("unclean_election", 0, 1, 2, 100, 250, 150) in table(result)
    assert ("hwm_regression", 0, 1, 2, 110, 250, None) in table(result)


def test_a_follower_serving_a_consumer_raises_the_mark_but_is_no_leader_exposure() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=40)
    s.fetch(1, 3, 50, epoch=0, last_fetched=0, hwm=40)
    s.tick(1)
    consumer_fetch(s, 2, 50, epoch=0)  # KIP-392: follower 2 answers with its own HW
    s.tick(5)
    s.fence(1)
    s.change(leader=3, isr=(3,))
    become_leader(s, 3, 1, 45)

    result = replay_partition(s.events, CTX)

    # the mark 50 came from follower 2's answer: 3 started below it
    assert ("committed_data_loss", 0, 1, None, 45, 50, 5) in table(result)
    assert of_kind(result, FindingKind.HWM_REGRESSION) == []


def elected_uncleanly_2() -> Story:
    """Leader 1 of epoch 0 shows HWM 100 to follower 2, whose fetch shows its
    log at 100; the ISR shrinks to [1], 1 is fenced, and 2 is elected
    uncleanly in epoch 1."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.tick(1)
    s.change(isr=(1,))
    s.tick(1)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    return s


def follower_after_unclean_story(refetched_from_zero: bool) -> Story:
    """Leader 1 of epoch 0 shows HWM 100; the ISR shrinks to [1]; 2 is
    elected uncleanly in epoch 1 from offset 100 (nothing committed lost).
    Follower 1 fetches from 2 in epoch 1 (from offset 0 when
    ``refetched_from_zero``, its log cut, else from 120 only), 2 takes
    writes 100-119, and 1, serving a consumer (KIP-392), answers with HW
    120 before any answer of 2's shows it."""
    s = elected_uncleanly_2()
    become_leader(s, 2, 1, 100)
    s.tick(1)
    if refetched_from_zero:
        s.fetch(2, 1, 0, epoch=1, last_fetched=0)
    s.tick(3)  # beyond the skew allowance: the order of the two is fixed
    for offset in range(100, 120):
        s.produce(2, offset, acks=1)
    s.fetch(2, 1, 120, epoch=1, last_fetched=1)
    consumer_fetch(s, 1, 120, epoch=1)
    return s


def test_a_followers_hw_above_its_log_end_in_the_new_epoch_is_the_new_leaders() -> None:
    """After an unclean election a follower's HW may be the one it carried
    over from the previous leader; but follower 1 fetched from offset 0 in
    epoch 1, so its HW was then at most 0: the HW 120 it shows later came
    from epoch 1's leader, and no committed offset was lost. Fetching only
    from 120, its log may have held 120 all along: the HW counts for epoch
    0, and the election lost [100, 120)."""
    result = replay_partition(follower_after_unclean_story(True).events, CTX)
    assert table(result) == [
        ("truncation_below_hwm", 0, 1, 1, 0, 100, None),
        ("unclean_election", 0, 1, 2, None, None, 0),
    ]
    result = replay_partition(follower_after_unclean_story(False).events, CTX)
    assert ("unclean_election", 0, 1, 2, 100, 120, 20) in table(result)


def unclean_leader_reloaded_story(reloaded: int | None) -> Story:
    """``elected_uncleanly_2``, where 2 prints no ``starts at leader epoch``
    line (down when elected); it comes back later with log end ``reloaded``."""
    s = elected_uncleanly_2()
    s.tick(10)
    if reloaded is not None:
        s._add(LogLoaded(s._origin("broker-2/server.log", 2, False), 2, reloaded, 0))
    return s


def test_an_unclean_leader_with_no_start_line_held_the_mark_both_before_and_after() -> None:
    """No line states where epoch 1 began; but 2's log was at 100 when last
    seen before the election (up then, nothing could cut it unseen in
    KRaft), and it came back with 100 (down then, that is its on-disk end):
    either way X >= 100, the mark, and nothing committed was lost. Coming
    back with 90, or not at all, X is not in evidence."""
    result = replay_partition(unclean_leader_reloaded_story(100).events, CTX)
    assert table(result) == [("unclean_election", 0, 1, 2, None, None, 0)]
    election = of_kind(result, FindingKind.UNCLEAN_ELECTION)[0]
    assert any(s.source_file == "broker-2/server.log" for s in election.evidence)
    for reloaded in (90, None):
        result = replay_partition(unclean_leader_reloaded_story(reloaded).events, CTX)
        assert of_kind(result, FindingKind.UNCLEAN_ELECTION)[0].records_lost is None
        assert ("unclean_election", 0, 1, 2, None, 100, None) in table(result)


def later_start_floor_story(reloaded: int | None, excerpt: bool = False) -> Story:
    """Leader 1 of epoch 0 shows HWM 100 to followers 2 and 3, whose fetches
    show their logs at 100. 2 is elected (cleanly) in epoch 1 and prints no
    ``starts at leader epoch`` line; it comes back later with ``reloaded``.
    Then 1, fetching from 2 in epoch 1 with its epoch-0 data, is at 60."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2, 3))
    s.tick(10)
    if reloaded is not None:
        origin = s._origin("broker-2/server.log", 2, False)
        if excerpt:  # pasted into a ticket: no timestamp
            origin = replace(origin, source=Source("broker-2/server-excerpt.txt", 1), time=None)
        s._add(LogLoaded(origin, 2, reloaded, 0))
    s.tick(10)
    s.fetch(2, 1, 60, epoch=1, last_fetched=0)
    return s


def test_a_later_epoch_with_no_start_line_rewrote_nothing_below_its_floor() -> None:
    """1 cut its epoch-0 records [60, 100), committed. Epoch 1 began where
    2's log ended, in no line; but 2 held 100 before it and came back with
    100 after it, so epoch 1 began at 100 or above: it rewrote none of them,
    and the leader holds them (local). Coming back with 70, epoch 1 may
    have rewritten [70, 100): not decided; nor when the load line is a
    pasted excerpt, which may have left a truncation line out."""
    result = replay_partition(later_start_floor_story(100).events, CTX)
    truncations = of_kind(result, FindingKind.TRUNCATION_BELOW_HWM)
    assert [
        (t.leader_epoch, t.replica, t.offset_start, t.offset_end, t.records_lost, t.qualifier)
        for t in truncations
    ] == [(1, 1, 60, 100, None, Scope.LOCAL)]
    for story in (later_start_floor_story(70), later_start_floor_story(100, excerpt=True)):
        truncations = of_kind(replay_partition(story.events, CTX), FindingKind.TRUNCATION_BELOW_HWM)
        assert [(t.leader_epoch, t.replica, t.qualifier) for t in truncations] == [
            (1, 1, Scope.UNKNOWN)
        ]


def test_a_refused_client_answer_shows_nothing() -> None:
    s = consumer_hwm_story(None)
    origin = s._origin("broker-1/kafka-request.log", 1, False)
    s.events.insert(8, ClientHwm(origin, 310, 74, 0))  # FENCED_LEADER_EPOCH
    assert table(replay_partition(s.events, CTX)) == [("unclean_election", 0, 1, 2, None, None, 0)]


def test_a_consumer_epoch_answer_shows_what_the_leader_holds() -> None:
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 10, epoch=0, last_fetched=0, hwm=10)
    s._add(ClientEpochAnswer(s._origin("broker-1/kafka-request.log", 1, False), 0, 40, 0))
    result = replay_partition(s.events, CTX)
    assert result.history.replica(1).held == 40
    assert result.findings == ()


# --- 2. the new leader's own exposure ---------------------------------------------


def test_a_new_leaders_line_raises_the_mark_in_every_era() -> None:
    """Only the leader's ``starts at leader epoch ... high watermark 60`` line
    shows the mark 60 (no answer does); the next leader starts at 55."""
    for profile in (Profile.KRAFT, Profile.ZK_EPOCH, Profile.KRAFT_ELR):
        s = Story()
        s.create((1, 2, 3), leader=1)
        s.tick(1)
        s.fence(1)
        s.change(leader=2, isr=(2, 3))
        become_leader(s, 2, 1, 60, 60)
        s.tick(5)
        s.fence(2)
        s.change(leader=3, isr=(3,))
        become_leader(s, 3, 2, 55, 55)
        s.tick(1)
        consumer_fetch(s, 3, 55, epoch=2)
        ctx = ReplayContext(key=KEY, profile=profile, request_log_observers=frozenset({1, 2, 3}))

        result = replay_partition(s.events, ctx)

        assert table(result) == [
            ("committed_data_loss", 0, 2, None, 55, 60, 5),
            ("hwm_regression", 0, 2, 3, 55, 60, None),
        ], profile


# --- 3. restarts and recovery -------------------------------------------------------


def recovery_story(clean: bool | None, log_end: int) -> Story:
    """Follower 3 (in the ISR) fetched up to 300, the HWM; it loses power and
    comes back with ``log_end``; the leader writes on (HWM 320) before 3
    fetches again from where it came back."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 299, acks=-1)
    s.fetch(1, 2, 300, epoch=0, last_fetched=0, hwm=300)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    s.tick(15)
    restart(s, 3, clean, log_end)
    s.tick(1)
    s.produce(1, 319, acks=-1)
    s.fetch(1, 2, 320, epoch=0, last_fetched=0, hwm=320)
    if log_end is not None:
        s.tick(1)
        s.fetch(1, 3, log_end, epoch=0, last_fetched=0, hwm=320)
    return s


def test_a_restart_that_comes_back_below_the_hwm_is_a_truncation_below_it() -> None:
    result = replay_partition(recovery_story(False, 200).events, CTX)

    # measured against the mark at the restart (300), not at the fetch (320)
    assert table(result) == [("truncation_below_hwm", 0, 0, 3, 200, 300, None)]
    f = result.findings[0]
    assert f.qualifier == Scope.LOCAL  # the leader still holds them
    assert f.confidence == Confidence.CONFIRMED  # the load line fixes the moment
    # the finding cites the recovery line
    assert ("broker-3/server.log", 3) in {(e.source_file, e.line_no) for e in f.evidence}
    assert result.history.replica(3).leo == 200


def test_a_restart_loss_is_judged_when_the_replica_fetches_again() -> None:
    s = recovery_story(False, 200)
    s.events.pop()  # 3 has not fetched again: nothing shows it lost data yet
    s.events.pop()
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert [(x.replica, x.from_offset, x.to_offset) for x in result.history.restart_losses] == [
        (3, 300, 200)
    ]


def test_a_replica_elected_after_a_restart_loss_is_judged_by_the_election() -> None:
    s = recovery_story(False, 200)
    s.events = s.events[:-2]  # no fetch from 3: it is elected (from the ISR) instead
    s.tick(5)
    s.fence(1)
    s.change(leader=3, isr=(3,))
    become_leader(s, 3, 1, 200)
    result = replay_partition(s.events, CTX)
    assert table(result) == [("committed_data_loss", 0, 1, None, 200, 320, 120)]


def test_a_restart_that_kept_the_committed_log_is_no_finding() -> None:
    result = replay_partition(recovery_story(False, 300).events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.VALID


def test_recovery_cutting_a_log_below_the_hwm_is_a_truncation_below_it() -> None:
    s = recovery_story(False, None)  # type: ignore[arg-type]
    s._add(RecoveryTruncation(server_log(s, 3), 3, 250))
    s._add(LogLoaded(server_log(s, 3), 3, 250, 0))
    s.tick(1)
    s.fetch(1, 3, 250, epoch=0, last_fetched=0, hwm=320)

    result = replay_partition(s.events, CTX)

    assert table(result) == [("truncation_below_hwm", 0, 0, 3, 250, 300, None)]


# --- 4. Unclean Exclusion (kraft-elr) ---------------------------------------------------


def leaderless_with_3_in_elr() -> Story:
    """Leader 1 commits up to 300 with 3 in the ISR; 3 is fenced and kept in
    the ELR; then leader 1 goes too: no leader, ELR [1, 3], epoch 1."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 299, acks=-1)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    s.tick(1)
    record(s, isr=(1, 3))
    s.tick(10)
    s.fence(3)
    record(s, isr=(1,), elr=(3,))
    s.tick(1)
    record(s, leader=-1, isr=(), elr=(1, 3))
    return s


def exclusion_story(clean: bool | None, *, controller_removes: bool) -> Story:
    """seed 002 5.1.2: 3 (ELR) loses power with committed records unflushed;
    leader 1 shuts down (no leader, ELR [1, 3], epoch 1); 3 comes back at 220,
    below the committed 300, registers, and is unfenced and elected from
    the ELR unless the controller took it out of the ELR."""
    s = leaderless_with_3_in_elr()
    s.tick(5)
    restart(s, 3, clean, 220)
    s.tick(0.5)
    register(s, 3, 15)
    if controller_removes:
        record(s, elr=(1,), last_known_elr=(3,))
    s.tick(1)
    unfence(s, 3)
    if not controller_removes:
        record(s, leader=3, isr=(3,), elr=(1,))
    return s


def test_an_unclean_replica_kept_in_the_elr_breaks_unclean_exclusion() -> None:
    result = replay_partition(exclusion_story(False, controller_removes=False).events, ELR)

    rules = of_kind(result, FindingKind.ISR_RULE_VIOLATION)
    assert [(f.key.partition, f.leader_epoch, f.replica) for f in rules] == [(0, 1, 3)]
    f = rules[0]
    assert (f.offset_start, f.offset_end, f.records_lost) == (220, 300, None)
    assert f.variant == "unclean_exclusion" and f.severity.value == "warning"
    assert ("broker-3/server.log", 1) in {(e.source_file, e.line_no) for e in f.evidence}
    assert "unclean shutdown" in f.explain()


def test_a_registration_before_the_startup_lines_it_belongs_to() -> None:
    """A KRaft broker registers before it loads its logs (the clean-shutdown
    file it reads first is what the controller acts on) and is unfenced only
    once they are loaded. So the registration that kept 3 in the ELR is this
    restart's, and the log end it loaded is the one judged at the unfence,
    however the clocks place its lines among those records."""
    s = leaderless_with_3_in_elr()
    s.tick(5)
    register(s, 3, 15)
    restart(s, 3, False, 220)
    s.tick(0.5)
    unfence(s, 3)
    record(s, leader=3, isr=(3,), elr=(1,))

    result = replay_partition(s.events, ELR)

    rules = of_kind(result, FindingKind.ISR_RULE_VIOLATION)
    assert [
        (f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in rules
    ] == [(0, 1, 3, 220, 300)]
    assert [g for g in result.coverage.gaps if "skew allowance" in g] == []


def test_the_controller_taking_it_out_of_the_elr_is_no_violation() -> None:
    result = replay_partition(exclusion_story(False, controller_removes=True).events, ELR)
    assert of_kind(result, FindingKind.ISR_RULE_VIOLATION) == []


def test_a_clean_restart_is_no_concern_of_unclean_exclusion() -> None:
    result = replay_partition(exclusion_story(True, controller_removes=False).events, ELR)
    assert of_kind(result, FindingKind.ISR_RULE_VIOLATION) == []


def test_a_restart_of_unknown_kind_is_a_gap_never_assumed_clean() -> None:
    s = exclusion_story(None, controller_removes=False)
    s.events = [e for e in s.events if not isinstance(e, LogRecovered)]
    result = replay_partition(s.events, ELR)
    assert of_kind(result, FindingKind.ISR_RULE_VIOLATION) == []
    assert [g for g in result.coverage.gaps if "prints nothing about its shutdown" in g]
    assert result.verdict != Verdict.VALID


def test_unclean_exclusion_is_kraft_elr_only() -> None:
    result = replay_partition(exclusion_story(False, controller_removes=False).events, CTX)
    assert of_kind(result, FindingKind.ISR_RULE_VIOLATION) == []


def test_an_unclean_replica_elected_from_the_isr_before_catching_up() -> None:
    """3 restarts uncleanly at 250 while still in the ISR (its session had
    not expired) and is elected cleanly from it before fetching again."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 299, acks=-1)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    s.tick(2)
    restart(s, 3, False, 250)
    s.tick(1)
    s.fence(1)
    s.change(leader=3, isr=(2, 3))

    result = replay_partition(s.events, ELR)

    rules = of_kind(result, FindingKind.ISR_RULE_VIOLATION)
    assert [
        (f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in rules
    ] == [(0, 1, 3, 250, 300)]


def test_the_state_of_an_unclean_restart_survives_a_saved_history() -> None:
    s = exclusion_story(False, controller_removes=False)
    cut = next(i for i, e in enumerate(s.events) if isinstance(e, BrokerRegistration))
    first = replay_partition(s.events[:cut], ELR)
    saved = loads(dumps(first.history))
    assert saved.unclean_restarts == first.history.unclean_restarts
    result = replay_partition(s.events[cut:], ELR, saved)
    rules = of_kind(result, FindingKind.ISR_RULE_VIOLATION)
    assert [(f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in rules] == [
        (1, 3, 220, 300)
    ]


# --- 5. the ISR rule after an unclean election ------------------------------------------


def rejoin_after_unclean_story(caught_up: int = 120) -> Story:
    """Leader 1 alone commits up to 300; 2 (at 100) is elected uncleanly and
    starts at 100. 1 comes back: its follower line still carries its old HW
    300; it truncates to 100, catches up to the new leader's HWM 120 and
    rejoins the ISR of epoch 1."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.tick(12)
    s.change(isr=(1,))
    for offset in range(100, 300, 50):
        s.produce(1, offset, acks=-1)
    consumer_fetch(s, 1, 300, epoch=0)
    s.tick(5)
    s.fence(1)
    s.change(leader=2, isr=(2,))
    become_leader(s, 2, 1, 100, 100)
    for offset in range(100, 120):
        s.produce(2, offset, acks=1)
    consumer_fetch(s, 2, 120, epoch=1)
    s.tick(10)
    become_follower(s, 1, 1, 300, 300)
    s._add(LogTruncated(s._origin("broker-1/server.log", 1, False), 1, 100))
    s.tick(5)
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=120)
    s.tick(1)
    s.fetch(2, 1, caught_up, epoch=1, last_fetched=1, hwm=120)
    s.tick(0.5)
    s.change(isr=(2, 1))
    s.tick(3)
    s.fetch(2, 1, caught_up, epoch=1, last_fetched=1, hwm=120)
    return s


def test_no_isr_rule_violation_against_the_hwm_from_before_an_unclean_election() -> None:
    result = replay_partition(rejoin_after_unclean_story().events, CTX)

    # the loss is reported once, by the election and the truncation
    assert table(result) == [
        ("committed_data_loss", 0, 1, None, 100, 300, 200),
        ("hwm_regression", 0, 1, 2, 120, 300, None),
        ("truncation_below_hwm", 0, 1, 1, 100, 300, 200),
        ("unclean_election", 0, 1, 2, 100, 300, 200),
    ]


def test_a_follower_rejoining_below_the_new_leaders_own_hwm_is_still_a_violation() -> None:
    # it joins while its fetches (110) are below the new leader's HWM 120
    result = replay_partition(rejoin_after_unclean_story(110).events, CTX)
    rules = of_kind(result, FindingKind.ISR_RULE_VIOLATION)
    assert [
        (f.key.partition, f.leader_epoch, f.replica, f.offset_start, f.offset_end) for f in rules
    ] == [(0, 1, 1, 110, 120)]


# --- 6. point-in-time views and configs --------------------------------------------------


def view(s: Story, leader: int, isr: tuple[int, ...], elr: tuple[int, ...] | None = None) -> None:
    origin = s._origin("describe/kafka-topics-describe.txt", None, False)
    origin = type(origin)(origin.source, None, None, None, origin.seq)
    s._add(PartitionView(origin, leader, (1, 2, 3), isr, elr))


def test_a_leader_outside_the_last_isr_seen_is_a_probable_unclean_election() -> None:
    s = Story()
    view(s, 1, (1, 2, 3))
    view(s, 1, (1,))
    view(s, -1, (1,))
    view(s, 2, (2,))
    view(s, 2, (2, 3))

    result = replay_partition(s.events, CTX)

    assert table(result) == [("unclean_election", 0, None, 2, None, None, None)]
    f = result.findings[0]
    assert f.confidence == Confidence.PROBABLE
    assert getattr(f, "isr_before", None) == (1,)
    assert [(e.source_file, e.line_no) for e in f.evidence] == [
        ("describe/kafka-topics-describe.txt", 3),
        ("describe/kafka-topics-describe.txt", 4),
    ]
    assert result.verdict == Verdict.INVALID


def test_an_unclean_election_against_the_topics_config_says_so() -> None:
    s = Story()
    origin = s._origin("describe/kafka-topics-describe.txt", None, False)
    s._add(TopicConfig(origin, "orders", None, False))
    view(s, 1, (1,))
    view(s, 2, (2,))
    result = replay_partition(s.events, CTX)
    assert table(result) == [("unclean_election", 0, None, 2, None, None, None)]
    assert "unclean.leader.election.enable=false" in result.findings[0].explain()
    s = Story()
    view(s, 1, (1,))
    view(s, 2, (2,))
    assert (
        "unclean.leader.election.enable"
        not in replay_partition(s.events, CTX).findings[0].explain()
    )


def test_a_leader_from_the_last_isr_or_elr_seen_is_no_finding() -> None:
    s = Story()
    view(s, 1, (1, 2))
    view(s, 2, (2,))
    view(s, 2, (2,), elr=(3,))
    view(s, -1, (), elr=(3,))
    view(s, 3, (3,))
    assert replay_partition(s.events, CTX).findings == ()


def test_views_do_not_judge_a_partition_whose_epochs_the_metadata_gives() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    view(s, 1, (1,))
    view(s, 2, (2,))
    assert of_kind(replay_partition(s.events, CTX), FindingKind.UNCLEAN_ELECTION) == []


def under_min_isr_story() -> Story:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    s.tick(5)
    s.produce(1, 10, acks=-1)
    s.produce(1, 11, acks=-1)
    return s


def test_a_brokers_kafkaconfig_min_isr_feeds_the_acks_all_rule() -> None:
    s = Story()
    s._add(BrokerConfig(server_log(s, 1), 1, False, 2, "3.6.1", "kraft"))
    s.events += under_min_isr_story().events

    result = replay_partition(s.events, CTX)

    assert table(result) == [("isr_rule_violation", 0, 0, 1, 10, 12, None)]
    assert getattr(result.findings[0], "min_isr", None) == 2


def test_a_topic_config_overrides_the_brokers_and_without_either_no_rule() -> None:
    assert replay_partition(under_min_isr_story().events, CTX).findings == ()
    s = Story()
    s._add(BrokerConfig(server_log(s, 1), 1, None, 2, None, None))
    origin = s._origin("describe/kafka-topics-describe.txt", None, False)
    s._add(TopicConfig(origin, "orders", 1, False))
    s.events += under_min_isr_story().events
    result = replay_partition(s.events, CTX)
    assert result.findings == ()
    assert [(c.scope, c.value) for c in result.history.unclean_config] == [("topic", False)]


def test_pre_28_fetcher_lines_show_log_ends() -> None:
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=50)
    s._add(FetcherHalt(server_log(s, 2), 2, 1, 60, 40))
    s._add(OffsetReset(server_log(s, 2), 2, 1, 60, 40))
    result = replay_partition(s.events, CTX)
    assert result.history.replica(1).held == 50
    assert result.history.replica(2).leo == 40
    assert table(result) == [("truncation_below_hwm", 0, 0, 2, 40, 50, None)]


# --- the bridge ----------------------------------------------------------------------


def row(kind: str, **values: Any) -> dict[str, Any]:
    base = dict.fromkeys(
        (
            "topic",
            "topic_id",
            "event_time",
            "metadata_offset",
            "leader",
            "leader_epoch",
            "partition_epoch",
            "replicas",
            "isr",
            "elr",
            "last_known_elr",
            "leader_recovery_state",
            "replica",
            "hwm",
            "error_code",
            "end_offset",
            "base_offset",
            "leo",
            "truncate_to",
            "min_isr",
            "clean_shutdown",
            "unclean_election_enabled",
            "log_start_offset",
            "current_leader_epoch",
        )
    )
    return base | {
        "kind": kind,
        "source_file": "f",
        "line_no": 1,
        "seq": 10,
        "observer": 2,
        "partition": 0,
        **values,
    }


@pytest.mark.parametrize(
    ("kind", "values", "expected"),
    [
        ("consumer_fetch", {"hwm": 310, "current_leader_epoch": 0}, ClientHwm),
        ("list_offsets", {"hwm": 300, "leader_epoch": 4}, ClientHwm),
        ("consumer_epoch_answer", {"leader_epoch": 3, "end_offset": 90}, ClientEpochAnswer),
        ("consumer_position", {"fetch_offset": 90, "client_id": "consumer-1"}, ClientPosition),
        ("broker_restart", {"replica": 2, "clean_shutdown": False}, BrokerRestart),
        ("log_recovered", {"replica": 2, "base_offset": 0}, LogRecovered),
        ("recovery_truncation", {"replica": 2, "truncate_to": 120}, RecoveryTruncation),
        ("log_end_at_load", {"leo": 220}, LogLoaded),
        ("broker_config", {"min_isr": 2, "unclean_election_enabled": True}, BrokerConfig),
        ("fetcher_halt", {"replica": 2, "leader": 1, "leo": 60, "truncate_to": 40}, FetcherHalt),
        ("offset_reset", {"replica": 2, "leader": 1, "leo": 60, "truncate_to": 40}, OffsetReset),
        ("partition_view", {"leader": 2, "replicas": [1, 2], "isr": [2]}, PartitionView),
        ("topic_config", {"topic": "orders", "min_isr": 2}, TopicConfig),
    ],
)
def test_every_evidence_kind_becomes_its_event(
    kind: str, values: dict[str, Any], expected: type
) -> None:
    assert kind in CONVERTERS and kind not in NOT_REPLAYED
    events, problems = to_events([row(kind, **values)])
    assert problems == []
    assert [type(e) for e in events] == [expected]


def test_the_bridge_fills_each_events_values() -> None:
    events, _ = to_events(
        [
            row("list_offsets", hwm=300, leader_epoch=4, error_code=0),
            row("consumer_fetch", hwm=310, current_leader_epoch=0, log_start_offset=7),
            row("log_end_at_load", leo=220, log_start_offset=5),
            row("broker_restart", replica=None, clean_shutdown=None),
            row("partition_view", leader=None, replicas=[1, 2], isr=[], elr=[2]),
            row("consumer_position", fetch_offset=90, client_id="consumer-1"),
        ]
    )
    assert events[0] == ClientHwm(events[0].origin, 300, 0, 4, None, True)
    assert events[1] == ClientHwm(events[1].origin, 310, 0, 0, 7, False)
    assert events[2] == LogLoaded(events[2].origin, 2, 220, 5)  # the file's broker
    assert events[3] == BrokerRestart(events[3].origin, 2, None)  # unknown, not clean
    assert events[4] == PartitionView(events[4].origin, -1, (1, 2), (), (2,), None)
    assert events[5] == ClientPosition(events[5].origin, 90, "consumer-1")


def test_a_startup_line_of_no_broker_is_a_gap_not_a_guess() -> None:
    events, problems = to_events([row("broker_restart", observer=None, clean_shutdown=False)])
    assert events == [] and len(problems) == 1 and "names no broker" in problems[0]


def test_the_views_partition_record_type_is_unchanged() -> None:
    # a view is not a registration: the metadata's record types stay apart
    assert not issubclass(PartitionView, PartitionRecord)


def test_every_declared_event_kind_is_replayed_or_kept_out_by_name() -> None:
    from schemas.domains import EVENT_KINDS

    assert set(EVENT_KINDS) <= set(CONVERTERS) | NOT_REPLAYED
    assert not set(CONVERTERS) & NOT_REPLAYED


def test_a_zookeeper_leaders_isr_write_is_bridged_and_a_proposal_is_not() -> None:
    """``Expanding ISR`` (0.8.2-2.7, ZooKeeper path only) and ``Shrinking
    ISR`` without the leader's HWM (0.8.2-2.1) are the leader's own ISR
    write; a ``Shrinking`` line with its HWM (2.2+) is, from 2.7 and in KRaft,
    a proposal: not bridged, and no gap either."""
    events, problems = to_events(
        [
            row("isr_expand", replica=3, isr=[3, 2]),
            row("isr_shrink", replica=3, isr=[3]),
            row("isr_shrink", replica=3, isr=[3], hwm=120, leo=130),
        ]
    )
    assert problems == []
    assert events == [
        IsrUpdated(events[0].origin, 3, (3, 2)),
        IsrUpdated(events[1].origin, 3, (3,)),
    ]


def test_a_later_start_at_or_below_the_cut_decides_the_loss_whatever_an_unstated_one_did() -> None:
    """1 held epoch-0 records up to 100, all committed. Epoch 1 began where
    2's log ended, in no line; epoch 2's leader 3 states it began at 50.
    1 comes back at 60 in epoch 2: whatever epoch 1 rewrote, epoch 2
    rewrote everything from 50, so [60, 100) exists nowhere else (global,
    40 lost). Cut to 40 instead, below 50, how much epoch 1 rewrote of
    [40, 50) is not in evidence: unknown."""

    def story(cut: int) -> Story:
        s = Story()
        s.create((1, 2, 3), leader=1)
        s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
        s.fetch(1, 3, 50, epoch=0, last_fetched=0, hwm=100)
        s.tick(5)
        s.fence(1)
        s.change(leader=2, isr=(2, 3))
        s.tick(5)
        s.fence(2)
        s.change(leader=3, isr=(3,))
        become_leader(s, 3, 2, 50)
        s.tick(10)
        s.fetch(3, 1, cut, epoch=2, last_fetched=0)
        return s

    def found(cut: int) -> list[tuple[Any, ...]]:
        result = replay_partition(story(cut).events, CTX)
        return [
            (t.leader_epoch, t.replica, t.offset_start, t.offset_end, t.records_lost, t.qualifier)
            for t in of_kind(result, FindingKind.TRUNCATION_BELOW_HWM)
        ]

    assert found(60) == [(2, 1, 60, 100, 40, Scope.GLOBAL)]
    assert found(40) == [(2, 1, 40, 100, None, Scope.UNKNOWN)]


# --- a ticket of pasted excerpts: a lineage from the controller's own line ------


def _pasted(file: str, line: int, observer: int | None) -> Origin:
    return Origin(Source(file, line), None, observer, None, seq=line)


def ticket_events(*, with_records: bool = False) -> list[Any]:
    """kraft-unclean-ticket's evidence (simulator/scenarios.py), no line
    timed: the controller's UNCLEAN line (epoch 1 -> 2, leader -1 -> 2, ISR
    [1] -> [2]), leader 2's line (epoch 2 from 100), and broker 1, which led
    epoch 0, saying it follows epoch 2 from 301 with HW 301 and then, in
    another file that sorts first by name, truncating to 100 under leader 2."""
    controller = "controller/controller-excerpt.txt"
    change = ControllerChange(
        _pasted(controller, 1, None), -1, 2, 1, 2, (1,), (2,), 2, 3, 1
    )  # fmt: skip
    events: list[Any] = [
        change,
        BecomeLeader(_pasted("broker-2/state-change-excerpt.txt", 1, 2), 2, 2, 100, 90),
        BecomeLeader(_pasted("broker-1/state-change-excerpt.txt", 1, 1), 1, 0, 0, 0),
        BecomeFollower(_pasted("broker-1/state-change-excerpt.txt", 2, 1), 1, 2, 301, 2, 301),
        IsrUpdated(_pasted("broker-1/server-excerpt.txt", 1, 1), 1, (1,), 1),
        LogTruncated(_pasted("broker-1/server-excerpt.txt", 2, 1), 1, 100, 0, 100, leader=2),
        LogTruncated(_pasted("broker-1/server-excerpt.txt", 3, 1), 1, 100, leader=2),
    ]
    if with_records:
        s = Story()
        s.create((1, 2, 3), leader=1)
        events = s.events + events
    return events


def test_a_ticket_of_excerpts_alone_is_judged_from_the_controllers_own_line() -> None:
    """The controller's line gives the epochs it changed (1: no leader, ISR
    [1]; 2: leader 2, RECOVERING), so epoch 2 is unclean; 1's HW 301,
    carried into epoch 2, is epoch 1's mark; 2 began at 100: [100, 301)
    lost. 1's truncation to 100 comes after its "starts at leader epoch 2"
    line (the files merged by the epoch their lines name: a truncation on
    leader 2's answer is in epoch 2, the only one 2 led), and its data was
    epoch 0's, which 2 rewrote from 100: global."""
    result = replay_partition(ticket_events(), CTX)
    assert table(result) == [
        ("committed_data_loss", 0, 2, None, 100, 301, 201),
        ("truncation_below_hwm", 0, 2, 1, 100, 301, 201),
        ("unclean_election", 0, 2, 2, 100, 301, 201),
    ]
    (truncation,) = of_kind(result, FindingKind.TRUNCATION_BELOW_HWM)
    assert truncation.qualifier == Scope.GLOBAL
    assert [(v.leader_epoch, v.leader) for v in result.lineage] == [(1, -1), (2, 2)]
    assert "controller_log" in result.coverage.evidence_kinds
    # the near miss: the same ticket without the controller's line has no
    # lineage, and says so
    bare = replay_partition(ticket_events()[1:], CTX)
    assert bare.findings == () and bare.verdict == Verdict.UNKNOWN


def test_a_controllers_printed_change_adds_nothing_where_the_metadata_log_has_records() -> None:
    """With the partition's records in evidence the controller's line is a
    copy of one of them: dropped, and the lineage is the records'."""
    result = replay_partition(ticket_events(with_records=True), CTX)
    assert [(v.leader_epoch, v.leader) for v in result.lineage] == [(0, 1)]
    assert "controller_log" not in result.coverage.evidence_kinds


def test_a_controllers_printed_change_is_bridged_with_the_state_it_replaced() -> None:
    """The diff's old values are the state before; a field it leaves out is
    unchanged, so a diff without the leader (kafka-formats.md 2.6: UNCLEAN
    even when the leader stayed) names no leader on either side and is no
    lineage step, nor is the ``Setting new leader`` line (no epoch)."""
    full = row(
        "unclean_partition_change", leader=2, leader_epoch=2, partition_epoch=3, isr="2",
        leader_recovery_state=1, previous_leader=-1, previous_leader_epoch=1,
        previous_partition_epoch=2, previous_isr="1",
    )  # fmt: skip
    no_leader_change = row(
        "unclean_partition_change", leader_epoch=4, partition_epoch=10, isr="3,4",
        previous_leader_epoch=3, previous_partition_epoch=9, previous_isr="1,2",
    )  # fmt: skip
    unchanged_isr = row(
        "unclean_partition_change", leader=3, leader_epoch=5, previous_leader=-1,
        previous_leader_epoch=4, leader_recovery_state=1,
    )  # fmt: skip
    setting = row("unclean_partition_change", leader=2)
    events, problems = to_events([full, no_leader_change, unchanged_isr, setting])
    assert problems == []
    assert events == [ControllerChange(events[0].origin, -1, 2, 1, 2, (1,), (2,), 2, 3, 1)]


def test_epochs_between_two_printed_changes_are_a_gap() -> None:
    """A KRaft controller prints a clean change at DEBUG only: between two
    UNCLEAN lines (epochs 1 -> 2, then 4 -> 5) epoch 3 is in no line, and
    the coverage says so. Each line is an unclean election all the same;
    with no start offset in evidence, neither says how much it lost."""
    controller = "controller/controller-excerpt.txt"
    first = ControllerChange(_pasted(controller, 1, None), -1, 2, 1, 2, (1,), (2,), 2, 3, 1)
    second = ControllerChange(_pasted(controller, 2, None), -1, 3, 4, 5, (2,), (3,), 7, 8, 1)
    result = replay_partition([first, second], CTX)
    lineage = [(v.leader_epoch, v.leader) for v in result.lineage]
    assert lineage == [(1, -1), (2, 2), (4, -1), (5, 3)]
    assert (
        "leader epochs 3..3 are missing from the KRaft controller's printed partition changes"
        in result.coverage.gaps
    )
    assert table(result) == [
        ("unclean_election", 0, 2, 2, None, None, None),
        ("unclean_election", 0, 5, 3, None, None, None),
    ]
