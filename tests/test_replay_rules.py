"""fencing_violation and isr_rule_violation: per variant one story with exactly
the finding, and near misses that yield none (seed 003 1.2.2, 2.6, 2.8, 2.9).

Clocks: the controller's records and each broker's lines carry their own
clock; the skew allowance is 2 s (ReplayContext's default)."""

from __future__ import annotations

from replay import ReplayContext, replay_partition
from replay.codec import dumps, loads
from replay.types import (
    AlterPartition,
    BecomeLeader,
    BrokerFencing,
    Confidence,
    FindingKind,
    IsrUpdated,
    MinIsrConfig,
    Severity,
    Verdict,
)
from tests.replay_fixtures import KEY, METADATA_FILE, Story

CTX = ReplayContext(key=KEY, request_log_observers=frozenset({1, 2, 3}))


def min_isr(s: Story, value: int | None, *, topic: str | None = "orders") -> None:
    s._add(MinIsrConfig(s._origin(METADATA_FILE, None, True), topic, None, value))


def isr_updated(s: Story, leader: int, isr: tuple[int, ...], under: bool | None) -> None:
    origin = s._origin(f"broker-{leader}/server.log", leader, False)
    s._add(IsrUpdated(origin, leader, isr, None, under))


def become_leader(s: Story, broker: int, epoch: int, start: int) -> None:
    origin = s._origin(f"broker-{broker}/state-change.log", broker, False)
    s._add(BecomeLeader(origin, broker, epoch, start))


def only(result, kind: FindingKind):  # type: ignore[no-untyped-def]
    assert [f.kind for f in result.findings] == [kind], result.findings
    return result.findings[0]


def gaps_with(result, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [g for g in result.coverage.gaps if text in g]


# --- fencing_violation ------------------------------------------------------------------


def failover_story() -> Story:
    """Leader 1 commits [0, 10); at t=3 s the controller elects 2 (epoch 1),
    which starts at offset 10 and writes on."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    for offset in range(10):
        s.produce(1, offset, acks=-1)
    s.fetch(1, 2, 10, epoch=0, last_fetched=0, hwm=10)
    s.fetch(1, 3, 10, epoch=0, last_fetched=0, hwm=10)
    s.tick(3)
    s.change(leader=2, isr=(2, 3))
    s.tick(0.1)
    become_leader(s, 2, 1, 10)
    s.produce(2, 10, acks=-1)
    s.fetch(2, 3, 11, epoch=1, last_fetched=1, hwm=11)
    return s


def test_a_deposed_leader_acknowledging_acks_all_beyond_the_skew_is_critical() -> None:
    s = failover_story()
    s.tick(5)  # 5 s after epoch 1 began: beyond the 2 s allowance
    s.produce(1, 10, acks=-1)
    s.produce(1, 12, acks=1)

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.FENCING_VIOLATION)
    assert (f.key.partition, f.replica, f.leader_epoch) == (0, 1, 0)
    assert (f.offset_start, f.offset_end, f.records_lost) == (10, 13, None)
    # the acks=all write at 10 sits where leader 2 wrote its own record 10
    assert (f.severity, f.confidence) == (Severity.CRITICAL, Confidence.CONFIRMED)
    assert [e.source_file for e in f.evidence] == [
        "broker-1/kafka-request.log",
        "broker-1/kafka-request.log",
        "controller/metadata.txt",
    ]
    assert result.verdict == Verdict.INVALID
    assert "after the next leader epoch began" in f.explain()


def test_a_deposed_leader_serving_fetches_only_is_a_warning_without_offsets() -> None:
    s = failover_story()
    s.tick(5)
    s.fetch(1, 3, 10, epoch=0, last_fetched=0, hwm=10)  # follower 3 still fetches in epoch 0

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.FENCING_VIOLATION)
    assert (f.replica, f.leader_epoch, f.offset_start, f.offset_end) == (1, 0, None, None)
    assert f.severity == Severity.WARNING
    assert "answered 1 follower fetch" in f.explain()


def test_a_fenced_leader_acting_after_the_fence_is_the_same_finding() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.produce(1, 0, acks=1)
    s.tick(1)
    s.fence(1)  # no partition change in evidence: the fence alone ends it
    s.tick(4)
    s.produce(1, 1, acks=1)

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.FENCING_VIOLATION)
    assert (f.replica, f.leader_epoch, f.offset_start, f.offset_end) == (1, 0, 1, 2)
    assert f.severity == Severity.WARNING
    assert "after it was fenced" in f.explain()


def test_an_act_within_the_skew_allowance_is_no_finding_and_unknown() -> None:
    s = failover_story()
    s.tick(1)  # 1.1 s after epoch 1 began by the controller's clock: order not fixed
    s.produce(1, 10, acks=1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert len(gaps_with(result, "broker 1 acted as leader of epoch 0")) == 1


def test_a_leader_re_elected_acts_in_its_new_epoch_without_finding() -> None:
    s = failover_story()
    s.tick(5)
    s.fetch(2, 1, 11, epoch=1, last_fetched=1, hwm=11)
    s.tick(0.5)
    s.change(isr=(2, 3, 1))
    s.tick(5)
    s.change(leader=1, isr=(1, 3))  # epoch 2: broker 1 leads again
    s.tick(0.1)
    become_leader(s, 1, 2, 11)
    s.produce(1, 11, acks=1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID


# --- isr_rule_violation: expansion -------------------------------------------------------


def lagging_follower_story() -> Story:
    """Leader 1 alone in the ISR exposes HWM 20; follower 2 catches up slowly."""
    s = Story()
    s.create((1, 2), leader=1)
    s.change(isr=(1,))
    for offset in range(0, 20, 2):
        s.produce(1, offset, acks=-1)
    s.fetch(1, 2, 2, epoch=0, last_fetched=0, hwm=20)
    s.tick(5)
    return s


def joined_after_fetch_at(offset: int) -> Story:
    """The lagging follower fetches at ``offset`` and joins the ISR 0.5 s later."""
    s = lagging_follower_story()
    s.fetch(1, 2, offset, epoch=0, last_fetched=0, hwm=20)
    s.tick(0.5)
    s.change(isr=(1, 2))
    return s


def test_an_isr_expanded_with_a_replica_below_the_hwm_is_a_violation() -> None:
    s = joined_after_fetch_at(5)  # far below 20
    s.tick(3)
    s.fetch(1, 2, 12, epoch=0, last_fetched=0, hwm=20)

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.ISR_RULE_VIOLATION)
    assert (f.key.partition, f.replica, f.leader_epoch) == (0, 2, 0)
    assert (f.offset_start, f.offset_end, f.records_lost) == (5, 20, None)
    assert (f.severity, f.confidence) == (Severity.WARNING, Confidence.CONFIRMED)
    assert result.verdict == Verdict.INVALID
    assert "joined the ISR" in f.explain()


def test_one_expansion_told_by_the_controller_the_leader_and_alter_partition_is_one_finding() -> (
    None
):
    s = lagging_follower_story()
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
    s.tick(0.3)
    answer = s._origin("controller/kafka-request.log", 9, False)
    s._add(AlterPartition(answer, 1, 0, (1, 2), 2, 0, 1))  # confirmed, partition epoch 2
    s.tick(0.2)
    s.change(isr=(1, 2))  # partition epoch 2
    s._add(IsrUpdated(s._origin("broker-1/server.log", 1, False), 1, (1, 2), 2, False))
    s.tick(0.3)
    s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)  # answered after: still at 5

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.ISR_RULE_VIOLATION)
    assert (f.replica, f.leader_epoch, f.offset_start, f.offset_end) == (2, 0, 5, 20)
    # the leader's line came after the record: nothing new, not a second expansion
    assert [e.source_file for e in f.evidence] == [
        "broker-1/kafka-request.log",  # the fetch at 5
        "controller/kafka-request.log",  # the confirmed AlterPartition
        "controller/metadata.txt",  # the same expansion recorded
        "broker-1/kafka-request.log",  # the ack that put the HWM at 20
    ]


def test_an_expansion_after_a_fetch_older_than_the_skew_is_unknown() -> None:
    s = lagging_follower_story()  # its last fetch (at 2) is 5 s old
    s.change(isr=(1, 2))

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert len(gaps_with(result, "may have caught up unseen")) == 1


def test_an_expansion_with_no_later_fetch_of_the_replica_is_unknown() -> None:
    """Follower 2 fetched at 5 half a second before it joined, and its leader
    logged nothing of it after: the fetch that let it join is answered (so
    logged) only after the expansion, and may be missing (the leader stopped
    first). Nothing decides that it joined below the HWM."""
    s = joined_after_fetch_at(5)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    [gap] = gaps_with(result, "no later fetch of it")
    assert gap.startswith("replica 2 joined the ISR of epoch 0 ")
    assert "with its last fetch at 5 " in gap and ", below 20, and no later fetch" in gap


def test_an_expansion_with_a_catching_up_fetch_within_the_skew_is_unknown() -> None:
    s = joined_after_fetch_at(5)
    s.tick(0.5)
    s.fetch(1, 2, 20, epoch=0, last_fetched=0, hwm=20)  # may have come first

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert len(gaps_with(result, "may have preceded it")) == 1


def test_an_expansion_the_leader_tells_is_judged_on_its_own_clock() -> None:
    """The leader's own line tells the expansion and its request log dates
    the fetches by the same clock: the first fetch of replica 2 it logged
    after the line (answered after it, so the one in flight when the leader
    added it) is at the HWM. It joined caught up: valid, nothing left open.
    The same fetch after the controller's record alone stays open (the
    clocks differ), and a first fetch still below the HWM is not enough."""

    def story(*, own_line: bool, first: int) -> Story:
        s = lagging_follower_story()
        s.fetch(1, 2, 5, epoch=0, last_fetched=0, hwm=20)
        s.tick(0.5)
        if own_line:  # the leader's "Expanding ISR" line, before the controller's record
            s._add(IsrUpdated(s._origin("broker-1/server.log", 1, False), 1, (1, 2), 2, False))
        else:
            s.change(isr=(1, 2))
        s.tick(0.3)
        s.fetch(1, 2, first, epoch=0, last_fetched=0, hwm=20)
        s.tick(0.3)
        s.fetch(1, 2, 20, epoch=0, last_fetched=0, hwm=20)
        return s

    result = replay_partition(story(own_line=True, first=20).events, CTX)
    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert gaps_with(result, "replica 2 joined") == []

    for own_line, first in ((False, 20), (True, 12)):
        result = replay_partition(story(own_line=own_line, first=first).events, CTX)
        assert result.findings == ()
        assert result.verdict == Verdict.UNKNOWN
        assert len(gaps_with(result, "may have preceded it")) == 1


def test_an_expansion_of_a_caught_up_replica_is_no_finding() -> None:
    s = joined_after_fetch_at(20)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID


# --- isr_rule_violation: acks=all under min ISR ---------------------------------------------


def shrunk_story(min_isr_value: int | None) -> Story:
    s = Story()
    s.create((1, 2, 3), leader=1)
    if min_isr_value is not None:
        min_isr(s, min_isr_value)
    s.produce(1, 0, acks=-1)
    s.fetch(1, 2, 1, epoch=0, last_fetched=0, hwm=1)
    s.fetch(1, 3, 1, epoch=0, last_fetched=0, hwm=1)
    s.tick(1)
    s.change(isr=(1,))  # 2 and 3 drop out: ISR 1 < min ISR 2
    return s


def test_acks_all_acknowledged_below_min_isr_is_a_violation() -> None:
    s = shrunk_story(2)
    s.tick(5)
    s.produce(1, 30, acks=-1)
    s.produce(1, 31, acks=-1)
    s.produce(1, 32, acks=1)  # acks=1 is allowed below min ISR
    s.tick(5)
    s.change(isr=(1, 2))
    s.tick(5)
    s.produce(1, 40, acks=-1)  # the ISR grew back: allowed

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.ISR_RULE_VIOLATION)
    assert (f.key.partition, f.replica, f.leader_epoch) == (0, 1, 0)
    assert (f.offset_start, f.offset_end, f.records_lost) == (30, 32, None)
    assert (f.severity, f.confidence) == (Severity.WARNING, Confidence.CONFIRMED)
    assert "below min.insync.replicas 2" in f.explain()
    assert result.verdict == Verdict.INVALID


def test_acks_all_within_the_skew_of_the_shrink_is_no_finding_and_unknown() -> None:
    s = shrunk_story(2)
    s.tick(1)
    s.produce(1, 30, acks=-1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert len(gaps_with(result, "below min ISR 2")) == 1


def test_acks_all_below_an_unstated_min_isr_is_no_finding() -> None:
    s = shrunk_story(None)  # Kafka's default of 1 is not evidence
    s.tick(5)
    s.produce(1, 30, acks=-1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()


def test_acks_1_below_min_isr_is_no_finding() -> None:
    s = shrunk_story(2)
    s.tick(5)
    s.produce(1, 30, acks=1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.VALID


def test_a_deleted_topic_override_leaves_min_isr_unknown() -> None:
    s = shrunk_story(2)
    min_isr(s, None)
    s.tick(5)
    s.produce(1, 30, acks=-1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()


def test_the_leaders_under_min_isr_marker_then_acks_all_is_a_violation() -> None:
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.tick(1)
    s.change(isr=(1,))
    isr_updated(s, 1, (1,), True)  # 3.6+: "ISR updated to 1 (under-min-isr) and ..."
    s.produce(1, 7, acks=-1)
    s.produce(1, 8, acks=-1)
    isr_updated(s, 1, (1, 2), False)
    s.produce(1, 9, acks=-1)

    result = replay_partition(s.events, CTX)

    f = only(result, FindingKind.ISR_RULE_VIOLATION)
    assert (f.replica, f.leader_epoch, f.offset_start, f.offset_end) == (1, 0, 7, 9)
    assert f.severity == Severity.WARNING
    assert "(under-min-isr)" in f.explain()


def test_acks_in_the_same_millisecond_as_the_marker_lines_are_no_finding() -> None:
    """One broker, two files: within one millisecond their order is in no
    artefact. The acks completed by the ISR growing back are logged in the
    millisecond of its "ISR updated" line (kraft-elr: the HWM waits for the
    ISR); an ack in the millisecond of the marker may have preceded it."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    min_isr(s, 2)
    s.tick(1)
    s.change(isr=(1,))
    isr_updated(s, 1, (1,), True)
    s.clock -= 0.001  # the next line in the same millisecond
    s.produce(1, 5, acks=-1)
    s.tick(1)
    s.change(isr=(1, 2))
    isr_updated(s, 1, (1, 2), False)
    s.clock -= 0.001
    s.produce(1, 7, acks=-1)
    s.clock -= 0.001
    s.produce(1, 8, acks=-1)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()


# --- saved state ----------------------------------------------------------------------------


def test_the_new_state_round_trips_and_two_days_equal_one_run() -> None:
    s = shrunk_story(2)
    s.tick(5)
    s.produce(1, 30, acks=-1)
    s.tick(5)
    s.change(isr=(1, 2))
    s.tick(1)
    s.change(leader=2, isr=(2,))
    s.tick(5)
    s.produce(1, 31, acks=1)
    s._add(BrokerFencing(s._origin(METADATA_FILE, None, True), broker=3, broker_epoch=7, fenced=1))
    events = s.events
    once = replay_partition(events, CTX)
    assert sorted(f.kind.value for f in once.findings) == [
        "fencing_violation",
        "isr_rule_violation",
    ]
    assert loads(dumps(once.history)) == once.history

    cut = 9
    day_one = replay_partition(events[:cut], CTX)
    replayed = [e for e in events[:cut] if e.origin.metadata_offset is not None]
    day_two = replay_partition(replayed + events[cut:], CTX, initial=loads(dumps(day_one.history)))
    assert sorted(f.anomaly_id for f in day_two.findings) == sorted(
        f.anomaly_id for f in once.findings
    )
    assert day_two.verdict == once.verdict
