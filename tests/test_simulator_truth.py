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
