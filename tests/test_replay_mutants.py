"""Stories written to kill the mutants of replay/transitions.py and
replay/properties.py that the other fast replay tests let live (docs/testing.md
lists them): each asserts the exact finding, or none, that docs/findings.md
gives for the story.
"""

from __future__ import annotations

from dataclasses import replace

from replay import ReplayContext, replay_partition
from replay.types import FindingKind, MinIsrConfig
from tests.replay_fixtures import KEY, METADATA_FILE, Story

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
