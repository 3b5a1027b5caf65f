"""Judgements that rest on an order only skewed clocks give (DESIGN.md
"Ordering"): the verdict says so and names the two lines; nothing is stated
as fact. The same story with the two lines further apart than the skew
allowance is judged exactly."""

from __future__ import annotations

from datetime import timedelta

from replay import ReplayContext, order, replay_partition
from replay.order import FOLD_BUDGET, HORIZON, MAX_JUMP, alternative_places, order_events
from replay.types import (
    BecomeFollower,
    ClientHwm,
    Confidence,
    Event,
    FetchAnswer,
    FindingKind,
    FollowerFetch,
    LogLoaded,
    LogTruncated,
    Origin,
    Scope,
    Source,
    Verdict,
)
from tests.replay_fixtures import KEY, T0, Story

CTX = ReplayContext(key=KEY, max_clock_skew_s=2.0, request_log_observers=frozenset({1, 2, 3}))
FOLLOWER_LOG = "broker-2/server.log"


def truncation_after_exposure(seconds: float) -> tuple[Story, Source]:
    """Follower 2 holds [0, 110); leader 1 exposes HWM 110 (to follower 3),
    and ``seconds`` later by broker 2's own clock, 2 truncates to 100."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 110, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 110, epoch=0, last_fetched=0, hwm=100)
    s.tick(3)
    s.fetch(1, 3, 110, epoch=0, last_fetched=0, hwm=110)  # broker-1 request log line 3
    exposed_at = s.events[-1].origin.time
    assert exposed_at is not None
    s.events.append(
        LogTruncated(
            Origin(Source(FOLLOWER_LOG, 12), exposed_at + timedelta(seconds=seconds), 2, None, 120),
            broker=2,
            to_offset=100,
        )
    )
    return s, Source("broker-1/kafka-request.log", 3)


def test_truncation_and_exposure_within_the_skew_allowance_is_unknown() -> None:
    s, exposure = truncation_after_exposure(0.5)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.order_dependent == 1
    assert result.coverage.gaps == (
        f"whether {exposure.source_file}:{exposure.line_no} happened before {FOLLOWER_LOG}:12 "
        "(different clocks, within the 2 s skew allowance of each other) decides "
        "truncation_below_hwm (replica 2, epoch 0, [100, 110)) (found in the order the clocks "
        "give, not in the other): not stated as fact",
    )


def test_the_same_lines_beyond_the_skew_allowance_are_judged_exactly() -> None:
    s, exposure = truncation_after_exposure(5.0)

    result = replay_partition(s.events, CTX)

    [truncation] = result.findings
    assert truncation.kind == FindingKind.TRUNCATION_BELOW_HWM
    assert (truncation.replica, truncation.leader_epoch) == (2, 0)
    assert (truncation.offset_start, truncation.offset_end) == (100, 110)
    assert (truncation.qualifier, truncation.records_lost) == (Scope.LOCAL, None)
    # no diverging answer explains it: the moment of the loss is not in evidence
    assert truncation.confidence == Confidence.PROBABLE
    assert [(e.source_file, e.line_no) for e in truncation.evidence] == [
        (exposure.source_file, exposure.line_no),
        ("broker-1/kafka-request.log", 1),
        (FOLLOWER_LOG, 12),
    ]
    assert result.verdict == Verdict.INVALID
    assert result.coverage.gaps == ()
    assert result.coverage.order_dependent == 0


def test_a_wider_allowance_makes_the_same_story_unknown() -> None:
    s, _ = truncation_after_exposure(5.0)

    result = replay_partition(
        s.events,
        ReplayContext(key=KEY, max_clock_skew_s=6.0, request_log_observers=frozenset({1, 2, 3})),
    )

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.order_dependent == 1


def test_an_ambiguous_order_that_changes_nothing_stays_valid() -> None:
    """A clean failover: broker 3's "Follower ... starts" line and the old
    leader's last fetch answers lie within the skew allowance of the
    controller's records, in orders the evidence cannot fix, and none of
    those orders changes a judgement."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.fetch(1, 3, 100, epoch=0, last_fetched=0, hwm=100)
    s.produce(1, 99, acks=-1)
    s.tick(0.5)
    s.fence(1)
    s.change(leader=2, isr=(2, 3))
    at = s.events[-1].origin.time
    assert at is not None
    s.events.append(
        BecomeFollower(
            Origin(Source("broker-3/state-change.log", 4), at + timedelta(seconds=0.3), 3, None, 4),
            broker=3,
            leader_epoch=None,
            log_end=100,
            leader=2,
            hwm=100,
        )
    )
    s.tick(0.5)
    s.fetch(2, 3, 100, epoch=1, last_fetched=0, hwm=100)
    s.fetch(2, 1, 100, epoch=1, last_fetched=0, hwm=100)
    s.change(isr=(2, 3, 1))

    ordered = order_events(s.events, CTX.max_clock_skew_s)
    moves = alternative_places(ordered.placements, CTX.max_clock_skew_s)
    result = replay_partition(s.events, CTX)

    # orders the clocks leave open, all tried: the fence before leader 1's
    # last lines; broker 3's line before the election and before leader 1's
    # lines (a follower of 2, never in an epoch 3 led); leader 2's first fetch
    # before broker 3's line; the ISR expansion before leader 2's lines
    assert [(j, len(places)) for j, places in moves] == [(6, 5), (8, 7), (9, 1), (13, 5)]
    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert result.coverage.gaps == ()
    assert result.coverage.order_dependent == 0


def test_a_leader_act_is_not_moved_across_the_record_that_ended_its_leadership() -> None:
    """DESIGN.md counts a leader's act within the skew allowance of its
    epoch's end as in its epoch: the old leader's acks=all acknowledgement
    0.5 s before the election stays in its epoch, and the unclean election
    it makes lossy is stated with its range."""
    from replay.types import NO_LEADER, RECOVERING

    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
    s.change(isr=(1,))
    s.produce(1, 120, acks=-1)
    s.tick(0.5)
    s.fence(1)
    s.change(leader=NO_LEADER)
    s.change(leader=2, isr=(2,), recovery=RECOVERING)
    s.tick()
    s.fetch(2, 3, 100, epoch=2, last_fetched=0, hwm=100, diverging=None)

    result = replay_partition(s.events, CTX)

    found = sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end)
        for f in result.findings
    )
    assert found == [
        ("committed_data_loss", 2, None, 100, 121),
        ("hwm_regression", 2, 2, 100, 121),
        ("unclean_election", 2, 2, 100, 121),
    ]
    assert result.coverage.order_dependent == 0


def test_moves_stop_at_an_event_certainly_earlier_and_at_the_cap() -> None:
    """Cost: an event is tried only at places its clock leaves open, at most
    MAX_JUMP of them; a burst wider than that is said, not silently cut."""
    s = Story()
    s.create((1, 2), leader=1)
    for offset in range(1, MAX_JUMP + 10):
        s.fetch(1, 2, offset, epoch=0, last_fetched=0, hwm=offset)
    s.change(isr=(1, 2))  # same ISR: changes nothing, within 2 s of every fetch

    ordered = order_events(s.events, 2.0)
    moves = dict(alternative_places(ordered.placements, 2.0))
    result = replay_partition(s.events, CTX)

    last = len(ordered.events) - 1
    assert len(moves[last]) == MAX_JUMP + 1  # one past the cap shows it was reached
    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.gaps == (
        "not every order the 2 s skew allowance leaves open was tried (more than "
        f"{MAX_JUMP} places for one event, or more alternatives than {FOLD_BUDGET} extra "
        "folds per event pay for): a judgement may rest on one",
    )
    assert (ordered.events[last].origin.time or T0) >= T0


def _long_tail(s: Story, fetches: int) -> Story:
    """Follower 3 keeps fetching at the log end, 1 s apart, well after the
    two lines whose order is open: nothing more to judge."""
    s.tick(5)
    for _ in range(fetches):
        s.fetch(1, 3, 110, epoch=0, last_fetched=0, hwm=110)
        s.tick(1)
    return s


def test_an_order_still_different_long_after_is_judged_where_it_has_played_out() -> None:
    """The alternative order never catches up with the given one (one
    records a truncation below the HWM, the other not), so it is judged
    HORIZON events after it rejoined the given order, not carried to the end:
    the same dependence, the same unknown verdict."""
    s = _long_tail(truncation_after_exposure(0.5)[0], HORIZON + 50)

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.order_dependent == 1
    assert result.coverage.events == len(s.events)


def test_past_the_fold_budget_the_given_order_is_still_folded_to_its_end(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """When the alternatives have used their budget, the ones alive are
    judged where they stand and no new one starts; the given order goes on
    to the last event (every later line still counts), and the verdict says
    not every order was tried."""
    monkeypatch.setattr(order, "HORIZON", 10**9)  # keep the alternative alive
    monkeypatch.setattr(order, "FOLD_BUDGET", 0)  # 1000 extra folds in all
    s = _long_tail(truncation_after_exposure(0.5)[0], 1200)
    last = s.events[-1].origin.time

    result = replay_partition(s.events, CTX)

    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.order_dependent == 1
    assert result.coverage.events == len(s.events)
    assert result.coverage.last_time == last
    assert result.coverage.gaps[-1].startswith("not every order the 2 s skew allowance")


def test_a_move_past_events_it_commutes_with_costs_two_folds_per_place() -> None:
    """Cost, counted in folds (no clock): a controller record that changes
    nothing the leader's lines read may move before each of the 50 lines of
    25 fetches within the skew allowance before it. The alternative one
    place farther is alike the nearer one once both folded the same events
    and is dropped, so each place costs about two folds, not one per event
    it passes (50 places would otherwise take 50 * 51 / 2 = 1275); every
    order is still tried and the verdict stays valid."""
    from replay.properties import judge
    from replay.result import alike_for_order, judgements
    from replay.state import History
    from replay.transitions import step

    s = Story()
    s.create((1, 2), leader=1)
    for offset in range(1, 26):
        s.fetch(1, 2, offset, epoch=0, last_fetched=0, hwm=offset)
    s.change(isr=(1, 2))  # same ISR: changes nothing, within 2 s of every fetch
    ordered = order_events(s.events, 2.0)
    moves = dict(alternative_places(ordered.placements, 2.0))
    folds = 0

    def counted(history: History, event: object) -> History:
        nonlocal folds
        folds += 1
        return step(history, event)  # type: ignore[arg-type]

    _, dependences, truncated = order.order_dependences(
        ordered.events,
        ordered.placements,
        History(),
        counted,
        lambda h: judgements(judge(h, CTX)),
        2.0,
        alike_for_order,
    )

    last = len(ordered.events) - 1
    assert len(moves[last]) == 50  # before each fetch and each answer
    assert (dependences, truncated) == ((), False)
    assert len(ordered.events) + 50 < folds <= len(ordered.events) + 2 * 50 + 2
    assert replay_partition(s.events, CTX).verdict == Verdict.VALID


def _early_truncation(pasted: bool, paste_differs: bool = False) -> Story:
    """Follower 2 truncates to 44 while the HWM is 40 (nothing committed
    lost), then the HWM reaches 300. ``pasted``: the same line also pasted
    without its timestamp (an excerpt of broker 2's server.log beside it);
    ``paste_differs``: the pasted line says 30, a line the timed log lacks."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    s.fetch(1, 2, 50, epoch=0, last_fetched=0, hwm=40)
    s._add(LogTruncated(s._origin(FOLLOWER_LOG, 2, False), 2, 44))
    s.tick(5)
    s.fetch(1, 2, 300, epoch=0, last_fetched=0, hwm=300)
    s.fetch(1, 3, 300, epoch=0, last_fetched=0, hwm=300)
    if pasted:
        origin = Origin(Source("broker-2/server-excerpt.txt", 1), None, 2, None, 10)
        s._add(LogTruncated(origin, 2, 30 if paste_differs else 44))
    return s


def test_a_pasted_copy_of_a_timed_line_is_that_line_not_a_late_truncation() -> None:
    """An excerpt beside the log it came from: its untimed copy of broker 2's
    truncation is the timed line, not a truncation at the end (below the HWM
    300). A pasted line no timed line matches is still judged where its lack
    of a clock puts it."""
    assert replay_partition(_early_truncation(pasted=False).events, CTX).findings == ()
    copied = order_events(_early_truncation(pasted=True).events)
    assert copied.duplicates == 1
    assert replay_partition(_early_truncation(pasted=True).events, CTX).findings == ()
    other = replay_partition(_early_truncation(pasted=True, paste_differs=True).events, CTX)
    assert [
        (f.kind, f.key, f.leader_epoch, f.replica, f.offset_start, f.offset_end, f.qualifier)
        for f in other.findings
    ] == [(FindingKind.TRUNCATION_BELOW_HWM, KEY, 0, 2, 30, 300, Scope.LOCAL)]


def test_of_a_zookeeper_decision_and_its_pasted_copy_the_timed_one_is_kept() -> None:
    """The controller's decision twice: pasted without its timestamp (listed
    first) and in its timed log. The copy kept is the timed one, so the
    decision keeps its clock."""
    from replay.types import LeaderAndIsr

    pasted = Origin(Source("controller/state-change-excerpt.txt", 1), None, None, None, 10)
    timed = Origin(Source("controller/state-change.log", 1), T0, None, None, 10)
    ordered = order_events(
        [
            LeaderAndIsr(pasted, 1, 0, (1, 2), 0, None, 1),
            LeaderAndIsr(timed, 1, 0, (1, 2), 0, None, 1),
        ]
    )
    assert ordered.duplicates == 1
    assert [e.origin for e in ordered.events] == [timed]


def follower_read(first_answer_at: float) -> tuple[Story, int]:
    """A consumer reads from follower 3 (KIP-392), which shows it HW 612.
    Leader 1 answered 3's fetches every 0.5 s with a rising HWM, the first
    of them ``first_answer_at`` s before the answer that first reached 612;
    the follower's fetch from 599 (answered 550) is 1.5 s before the
    showing by the clocks, within the skew allowance. Returns the story and
    the index of the showing in its events."""
    s = Story()
    s.create((1, 2, 3), leader=1)
    answers = [(510, 499), (532, 510), (550, 532), (599, 550), (631, 581), (663, 612)]
    s.tick(0.5)
    for offset, hwm in answers[-1 - int(first_answer_at / 0.5) :]:
        s.fetch(1, 3, offset, epoch=0, last_fetched=0, hwm=hwm)
        s.fetch(1, 2, offset, epoch=0, last_fetched=0, hwm=hwm)
        s.tick(0.5)
    s.tick(-0.02)
    origin = s._origin("broker-3/kafka-request.log", 3, False)
    s._add(ClientHwm(origin, 612, 0, 0))
    showing = len(s.events) - 1
    s.tick(0.05)
    s.fetch(1, 3, 672, epoch=0, last_fetched=0, hwm=663)
    s.fetch(1, 2, 672, epoch=0, last_fetched=0, hwm=663)
    return s, showing


def test_a_follower_shows_a_hwm_only_after_the_answer_that_brought_it() -> None:
    """Follower 3's HW is the last answer it applied: after the answers of
    499 to 581 it shows 612 only once the answer of 612 reached it, whatever
    the clocks allow. So the showing is never tried before the fetch from
    599, where it would read as 3 truncating [599, 612) below the HWM, and
    the partition is valid."""
    s, showing = follower_read(2.5)

    ordered = order_events(s.events, CTX.max_clock_skew_s)
    reached = next(
        i
        for i, e in enumerate(ordered.events)
        if isinstance(e, FetchAnswer) and e.replica == 3 and e.hwm == 612
    )
    moves = dict(alternative_places(ordered.placements, CTX.max_clock_skew_s))
    result = replay_partition(s.events, CTX)

    assert ordered.events[showing] == s.events[showing]
    assert ordered.placements[showing].after == reached
    assert moves[showing] == tuple(range(showing - 1, reached, -1))
    assert result.findings == ()
    assert result.verdict == Verdict.VALID
    assert result.coverage.gaps == ()


def test_without_an_answer_below_it_beyond_the_allowance_the_showing_may_move() -> None:
    """The same showing when 3's first answer in evidence (532, to its fetch
    from 550) is within the skew allowance of it: 3 may have held 612 before
    that answer (from answers no log kept), so the order the clocks leave
    open stays open and the truncation it would read is not stated as
    fact."""
    s, showing = follower_read(1.5)

    ordered = order_events(s.events, CTX.max_clock_skew_s)
    result = replay_partition(s.events, CTX)

    assert ordered.placements[showing].after is None
    assert result.findings == ()
    assert result.verdict == Verdict.UNKNOWN
    assert result.coverage.gaps == (
        "whether broker-1/kafka-request.log:3 happened before broker-3/kafka-request.log:1 "
        "(different clocks, within the 2 s skew allowance of each other) decides "
        "truncation_below_hwm (replica 3, epoch 0, [599, 612)) (found only in the other "
        "order): not stated as fact",
    )


def test_a_brokers_own_copy_of_a_decision_orders_what_it_did_after_on_its_clock() -> None:
    """0.10: the controller sends epoch 1 (leader 3) at 10 s; broker 2's
    state-change log says it received it at 10 s by its own clock, and its
    server log that it truncated (become-follower) in the same millisecond.
    The truncation came after the record that created epoch 1: no order of
    the skew allowance may move it before, as it may without that copy."""
    from replay.types import LeaderAndIsr

    def story(received: bool) -> list[Event]:
        at = T0 + timedelta(seconds=10)
        controller = "controller/state-change.log"
        events: list[Event] = [
            LeaderAndIsr(Origin(Source(controller, 1), T0, None, None, 10), 1, 0, (1, 2, 3), 0,
                         None, 1),
            LeaderAndIsr(Origin(Source(controller, 2), at, None, None, 20), 3, 1, (3, 2), 1,
                         None, 1),
            LogTruncated(Origin(Source(FOLLOWER_LOG, 5), at, 2, None, 50), broker=2,
                         to_offset=100),
        ]  # fmt: skip
        if received:
            own = Origin(Source("broker-2/state-change.log", 7), at, 2, None, 70)
            events.append(LeaderAndIsr(own, 3, 1, (3, 2), 1, None, 1))
        return events

    for received, floor, moves in ((False, 1, [(2, (1,))]), (True, 2, [])):
        ordered = order_events(story(received))
        assert [type(e).__name__ for e in ordered.events] == [
            "LeaderAndIsr",
            "LeaderAndIsr",
            "LogTruncated",
        ]
        assert ordered.placements[2].floor == floor
        assert alternative_places(ordered.placements, 2.0) == moves
        # placed among records by its clock alone only without the copy
        assert ordered.clock_placed == (0 if received else 1)


def test_a_truncation_handling_its_brokers_copy_stays_in_the_epoch_it_names() -> None:
    """0.10 (sweep-3151): broker 2's state-change log says it received epoch
    1's request (leader 1) at 10 s by its own clock, and its server log that
    it truncated, handling it, in the same millisecond; the controller
    created epoch 2 at 10.05 s by its clock. The truncation is the act of
    epoch 1: no order of the skew allowance moves epoch 2's record before
    it, as one may when its clock is not that of a copy, and a clock that
    puts it after that record still places it in epoch 1."""
    from replay.types import LeaderAndIsr

    def story(lag: float, received: bool) -> list[Event]:
        at = T0 + timedelta(seconds=10)
        controller = "controller/state-change.log"
        events: list[Event] = [
            LeaderAndIsr(Origin(Source(controller, 1), T0, None, None, 10), 3, 0, (3, 1, 2), 0,
                         None, 1),
            LeaderAndIsr(Origin(Source(controller, 2), at - timedelta(seconds=5), None, None, 20),
                         1, 1, (1, 2), 1, None, 1),
            LeaderAndIsr(Origin(Source(controller, 3), at + timedelta(seconds=0.05), None, None,
                                30), 1, 2, (1,), 2, None, 1),
            LogTruncated(Origin(Source(FOLLOWER_LOG, 5), at + timedelta(seconds=lag), 2, None,
                                50), broker=2, to_offset=100),
        ]  # fmt: skip
        if received:
            own = Origin(Source("broker-2/state-change.log", 7), at + timedelta(seconds=lag), 2,
                         None, 40)  # fmt: skip
            events.append(LeaderAndIsr(own, 1, 1, (1, 2), 1, None, 1))
        return events

    def truncation(ordered: order.Ordered) -> int:
        return next(i for i, e in enumerate(ordered.events) if isinstance(e, LogTruncated))

    without = order_events(story(0.0, received=False))
    i = truncation(without)
    assert i == 2 and without.placements[i].ceiling is None
    assert (3, (2,)) in alternative_places(without.placements, 2.0)
    for lag in (0.0, 0.1):
        ordered = order_events(story(lag, received=True))
        i = truncation(ordered)
        assert i == 2, lag  # before epoch 2's record, whatever its clock says
        assert ordered.placements[i].ceiling == 2
        assert all(j != 3 or i not in places for j, places in alternative_places(
            ordered.placements, 2.0))  # fmt: skip


def restart_then_fetch(lines: bool) -> Story:
    """Follower 2 fetches [0, 110) from leader 1, which shows it HWM 110;
    2 restarts: its log loads with end 105 (recovery lost [105, 110)) and it
    truncates to 100 (its HW checkpoint), then fetches from 100, 0.2 s later
    by the leader's clock, within the skew allowance of its own lines. With
    ``lines`` False its server.log is not given."""
    s = Story()
    s.create((1, 2), leader=1)
    s.fetch(1, 2, 110, epoch=0, last_fetched=0, hwm=100)
    s.tick(0.5)
    s.fetch(1, 2, 110, epoch=0, last_fetched=0, hwm=110)
    s.tick(3)
    if lines:
        log = "broker-2/server.log"
        s._add(LogLoaded(s._origin(log, 2, False), broker=2, log_end=105))
        s._add(LogTruncated(s._origin(log, 2, False), broker=2, to_offset=100))
    s.tick(0.2)
    s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=110)
    return s


def test_a_fetch_from_below_the_last_one_follows_the_line_that_cut_the_log() -> None:
    """A replica's log end falls only by a truncation or a recovery its own
    log prints; its fetch offset is its log end. Its fetch from 100 after
    one from 110 came after its line truncating to 100 (and so after the
    load line before it), whatever the clocks allow: the restart's loss
    and the truncation are two findings, exactly, not an order left open."""
    s = restart_then_fetch(lines=True)

    ordered = order_events(s.events, CTX.max_clock_skew_s)
    fetch = len(ordered.events) - 2  # the fetch from 100, then its answer
    truncated = next(i for i, e in enumerate(ordered.events) if isinstance(e, LogTruncated))
    result = replay_partition(s.events, CTX)

    assert isinstance(ordered.events[fetch], FollowerFetch)
    assert ordered.placements[fetch].after == truncated
    assert sorted(
        (f.kind.value, f.leader_epoch, f.replica, f.offset_start, f.offset_end, str(f.qualifier))
        for f in result.findings
    ) == [
        ("truncation_below_hwm", 0, 2, 100, 105, "local"),
        ("truncation_below_hwm", 0, 2, 105, 110, "local"),
    ]
    assert result.coverage.gaps == ()
    assert result.verdict == Verdict.INVALID


def test_without_its_own_lines_a_fetch_from_below_has_no_cause_to_follow() -> None:
    s = restart_then_fetch(lines=False)

    ordered = order_events(s.events, CTX.max_clock_skew_s)

    assert all(p.after is None for p in ordered.placements)


def test_fetches_after_the_one_from_an_epoch_answers_offset_follow_its_truncation() -> None:
    """2.4 (sweep-3098): leader 1's log shows its OffsetsForLeaderEpoch answer
    to 2 (end offset 100), then 2's fetch from 100; 2's own log says it
    truncated to 100, 0.3 s later by its clock; leader 1's log then shows
    2's fetch from 130. The follower truncates to the answer before it
    fetches from its log end, so the fetch from 100 and every later one came
    after the truncation: the fetch from 130 never moves before it, as it may
    when no answer ties the truncation to the fetch from 100."""
    from replay.types import EpochAnswer

    def story(answer: bool) -> list[Event]:
        s = Story()
        s.create((1, 2, 3), leader=1)
        s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
        s.tick(1)
        if answer:
            s._add(EpochAnswer(s._origin("broker-1/kafka-request.log", 1, False), 2, 0, 100, 0))
        s.fetch(1, 2, 100, epoch=0, last_fetched=0, hwm=100)
        s.tick(0.3)
        s._add(LogTruncated(s._origin(FOLLOWER_LOG, 2, False), broker=2, to_offset=100))
        s.tick(0.2)
        s.fetch(1, 2, 130, epoch=0, last_fetched=0, hwm=100)
        return s.events

    for answer in (False, True):
        ordered = order_events(story(answer), CTX.max_clock_skew_s)
        truncated = next(i for i, e in enumerate(ordered.events) if isinstance(e, LogTruncated))
        fetch = truncated + 1
        assert isinstance(ordered.events[fetch], FollowerFetch)
        assert ordered.events[fetch].fetch_offset == 130
        moves = dict(alternative_places(ordered.placements, CTX.max_clock_skew_s))
        if answer:
            assert ordered.placements[fetch].after == truncated
            assert fetch not in moves
        else:
            assert ordered.placements[fetch].after is None
            assert truncated in moves[fetch]
