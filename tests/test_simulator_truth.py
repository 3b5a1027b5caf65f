"""The truth's reader of a later epoch's start offset, hook by hook.

Whether a truncated replica's records were rewritten by a later epoch rests
on that epoch's start offset X. The simulator knows X; a reader of the
artefacts knows it only where a line prints it, or bounds it from below
(simulator/README.md, "How the truth is made"). These stories call the
truth's hooks in the order the model would and check what it says a reader
must report.
"""

from __future__ import annotations

from typing import Any

from simulator.truth import Truth

KEY = ("t", 0)

REASON = (
    "truncation of replica 1 [95, 105): the start offset of epoch 1 (written after the "
    "replica's records) is in no artefact, so whether that epoch rewrote them is not in "
    "evidence"
)


def truncation(**more: Any) -> dict[str, Any]:
    return {
        "kind": "truncation_below_hwm",
        "topic": "t",
        "partition": 0,
        "leader_epoch": 1,
        "replica": 1,
        "offset_start": 95,
        "offset_end": 100,
        "records_lost": None,
        "qualifier": "local",
        **more,
    }


UNKNOWN = {
    "visible_offset_start": 95,
    "visible_offset_end": 100,
    "visible_records_lost": None,
    "visible_qualifier": "unknown",
}


def story(new_leader: int, shown: bool = False, restart: int | None = None) -> dict[str, Any]:
    """Broker 1 leads epoch 0 and answers a HWM of 100; broker 2 fetches up to
    100. ``new_leader`` is elected for epoch 1 from 100 (printing its start
    when ``shown``); broker 1, back at 105 after a crash, truncates to 95
    in epoch 1: [95, 100) was committed and the new leader still holds it
    (local). ``restart``: the new leader's startup lines print that log end
    afterwards."""
    truth = Truth("story", 0, "kraft", {})
    truth.add_partition(KEY, leader=1)
    truth.exposure(KEY, 1, 0, 100)
    truth.position_seen(KEY, 2, 100)
    truth.epoch_began(KEY, 1, new_leader, 100, [1, 2], False, now=1000)
    if shown:
        truth.start_shown(KEY, 1, 100)
    truth.truncated(KEY, 1, 105, 95, 1, 0)
    if restart is not None:
        truth.restart_shown(KEY, new_leader, restart, True)
    return truth.result()


def test_a_start_no_line_prints_leaves_the_readers_qualifier_unknown() -> None:
    result = story(new_leader=2)
    assert result["findings"] == [truncation(**UNKNOWN)]
    assert result["undecidable"] == [
        {
            "finding": 0,
            "kind": "truncation_below_hwm",
            "topic": "t",
            "partition": 0,
            "leader_epoch": 1,
            "reasons": [REASON],
        }
    ]


def test_a_printed_start_decides_it() -> None:
    result = story(new_leader=2, shown=True)
    assert result["findings"] == [truncation()]
    assert "undecidable" not in result


def test_a_start_printed_with_another_value_does_not() -> None:
    """A leader elected while down prints the log end it came back with,
    which recovery may have cut below X: that line is not X."""
    truth = Truth("story", 0, "kraft", {})
    truth.add_partition(KEY, leader=1)
    truth.exposure(KEY, 1, 0, 100)
    truth.position_seen(KEY, 2, 100)
    truth.epoch_began(KEY, 1, 2, 100, [1, 2], False, now=1000)
    truth.start_shown(KEY, 1, 97)
    truth.truncated(KEY, 1, 105, 95, 1, 0)
    assert truth.result()["findings"] == [truncation(**UNKNOWN)]


def test_the_leaders_next_startup_lines_bound_its_start_from_below() -> None:
    """X is at least the lower of the log end the new leader was last seen
    holding when elected (100, its fetch) and the one its next startup lines
    print: at or above the range's end, nothing of it was rewritten. The
    line may come after the truncation; the truth settles at the end."""
    result = story(new_leader=2, restart=130)
    assert result["findings"] == [truncation()]
    assert "undecidable" not in result
    # a startup line below the range's end bounds nothing useful
    low = story(new_leader=2, restart=99)
    assert low["findings"] == [truncation(**UNKNOWN)]
    assert [n["reasons"] for n in low["undecidable"]] == [[REASON]]


def test_one_leader_since_the_partition_began_rewrote_nothing() -> None:
    """Broker 1 leads epoch 0 and is elected again for epoch 1 (say, after an
    ISR change in ZooKeeper): no startup line of it since, so it holds every
    record the partition had. Broker 2's truncation is local to a reader."""
    truth = Truth("story", 0, "kraft", {})
    truth.add_partition(KEY, leader=1)
    truth.exposure(KEY, 1, 0, 100)
    truth.epoch_began(KEY, 1, 1, 110, [1, 2], False, now=1000)
    truth.truncated(KEY, 2, 105, 95, 1, 0)
    assert truth.result()["findings"] == [truncation(replica=2)]
    # with a startup line of it since, its records may have been cut
    truth = Truth("story", 0, "kraft", {})
    truth.add_partition(KEY, leader=1)
    truth.exposure(KEY, 1, 0, 100)
    truth.epoch_began(KEY, 1, 1, 110, [1, 2], False, now=1000)
    truth.restart_shown(KEY, 1, 90, False)
    truth.truncated(KEY, 2, 105, 95, 1, 0)
    assert truth.result()["findings"] == [truncation(replica=2, **UNKNOWN)]


# --- zk-hw: a derived mark raised within the clock-skew allowance of a cut ------


def hw_story(*, line_shows_end: bool, follower_fetch: bool = True) -> dict[str, Any]:
    """zk-hw, leader 2 in epoch 0: its log of replica 1's fetches derives the
    mark (the ISR's least fetch offset): 8 at 7000 ms, 11 at 10800 ms. Replica
    1, holding 12, cuts to its own HW 10 at 10850 ms on its own clock: the
    real finding is [10, 11). ``line_shows_end``: its lines print the log end
    it cut from (1.x+: "Follower ... starts ... from offset 12"); 0.10's
    print only the offset it cut to. ``follower_fetch``: the fetch at 11 is
    replica 1's own (else another follower's)."""
    truth = Truth("story", 0, "zk-hw", {})
    truth.add_partition(KEY, leader=2)
    truth.exposure(KEY, 2, 0, 8)  # the leader's HW (0.10 prints no answer)
    truth.position_seen(KEY, 1, 8)  # its fetch offsets, in the leader's log
    truth.fetch_mark(KEY, 8, now=7000, fetched=(1, 8))
    truth.exposure(KEY, 2, 0, 11)
    truth.position_seen(KEY, 1, 11)
    truth.fetch_mark(KEY, 11, now=10800, fetched=(1 if follower_fetch else 3, 11))
    truth.truncated(KEY, 1, 12, 10, 0, 0, line_shows_end=line_shows_end, now=10850)
    return truth.result()


def hw_truncation(**more: Any) -> dict[str, Any]:
    return truncation(leader_epoch=0, offset_start=10, offset_end=11, **more)


def test_a_mark_from_a_fetch_logged_within_the_skew_of_the_cut_is_not_ordered_before_it() -> None:
    """0.10: the fetch at 11 was logged 50 ms before the cut on the leader's
    clock and no line orders them: by the clocks it may have followed the
    cut, when the mark was 8 and nothing was cut below it."""
    result = hw_story(line_shows_end=False)
    assert result["findings"] == [hw_truncation(visible_absent=True)]
    assert result["undecidable"][0]["reasons"] == [
        "truncation of replica 1 [10, 12): the fetch lines that derive the mark 11 were logged "
        "within the clock-skew allowance (2000 ms) before it, on the leader's clock, and may, "
        "by the clocks, have followed it; before them the mark is 8"
    ]


def test_the_followers_own_fetch_below_the_end_its_line_shows_is_ordered_before_the_cut() -> None:
    """1.x+: its line shows it held 12, which it had only once the fetch at
    11 was answered, and the leader logs a fetch as it answers it: the mark
    11 precedes the cut, and the finding is in the artefacts. Another
    follower's fetch has no such tie to the cut."""
    assert hw_story(line_shows_end=True)["findings"] == [hw_truncation()]
    assert hw_story(line_shows_end=True, follower_fetch=False)["findings"] == [
        hw_truncation(visible_absent=True)
    ]
