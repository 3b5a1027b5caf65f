"""Incremental runs: day two continues from day one's saved state and ends
where one run over both days ends (issue: --state)."""

from __future__ import annotations

import pytest

from replay import ReplayContext, replay_partition
from replay.codec import StateError, dumps, loads
from tests.replay_fixtures import KEY
from tests.test_replay_stories import unclean_story

CTX = ReplayContext(key=KEY, request_log_observers=frozenset({1, 2, 3}))


def summary(result):  # type: ignore[no-untyped-def]
    return (
        result.verdict,
        sorted((f.anomaly_id, f.explain(), f.caused_by) for f in result.findings),
        [(v.leader_epoch, v.leader, v.election, v.start_offset.exact) for v in result.lineage],
    )


@pytest.mark.parametrize("cut", [3, 8, 12, 16])
def test_two_days_from_saved_state_equal_one_run(cut: int) -> None:
    events = unclean_story().events
    once = replay_partition(events, CTX)

    day_one = replay_partition(events[:cut], CTX)
    saved = dumps(day_one.history)
    # the metadata log is dumped again on day two: its old records must not apply twice
    replayed_metadata = [e for e in events[:cut] if e.origin.metadata_offset is not None]
    day_two = replay_partition(replayed_metadata + events[cut:], CTX, initial=loads(saved))

    assert summary(day_two) == summary(once)
    assert len(once.findings) == 4


def test_a_damaged_state_is_refused_not_misread() -> None:
    with pytest.raises(StateError):
        loads('{"version": 99, "history": {}}')
    with pytest.raises(StateError):
        loads('{"version": 2, "history": {"__dc__": "Popen"}}')
    with pytest.raises(StateError):
        loads("not json")


def test_the_same_files_given_again_change_nothing() -> None:
    events = unclean_story().events
    once = replay_partition(events, CTX)
    again = replay_partition(events, CTX, initial=loads(dumps(once.history)))
    assert summary(again) == summary(once)
    assert again.coverage.events == once.coverage.events
