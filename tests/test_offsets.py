"""``replica_offsets`` as the replay's Arrow function computes it
(pipeline/offsets.py), against its definition as Spark windows over the
compressed fetches (the plan the pipeline ran before, kept here as the
oracle), on incidents of every era and on hand-made edge cases."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from pipeline import bridge
from pipeline.offsets import COLUMNS, offset_changes

SCHEMA = to_arrow_schema(bridge.BRIDGE_SCHEMA, timezone="UTC")
T0 = datetime(2024, 5, 1, 10, 0, 0)


def spark_offsets(compressed: DataFrame) -> DataFrame:
    """The table's definition: LEO change points per (observer, replica) of
    the follower fetches, HWM change points per observer of its successful
    answers, each in the local order (event time nulls first, file, seq)."""
    order = [F.col("event_time").asc_nulls_first(), F.col("source_file"), F.col("seq")]
    fetch = F.col("kind") == "fetch_request"
    answer = (
        (F.col("kind") == "fetch_response")
        & (F.coalesce(F.col("error_code"), F.lit(0)) == 0)
        & (F.col("hwm") >= 0)
        & F.col("observer").isNotNull()
    )
    keys = ("cluster", "topic_key", "partition", "observer")
    per_follower = Window.partitionBy(*keys, "replica", "kind").orderBy(*order)
    per_leader = Window.partitionBy(*keys, "_answer").orderBy(*order)
    position = F.struct("fetch_offset", "current_leader_epoch")
    leo_moved = ~F.coalesce(F.lag(position).over(per_follower).eqNullSafe(position), F.lit(False))
    previous = F.lag("hwm").over(per_leader)
    flagged = (
        compressed.filter(fetch | answer)
        .withColumn("_answer", answer)
        .withColumn("_leo", fetch & leo_moved)
        .withColumn("_hwm", F.col("_answer") & (previous.isNull() | (previous != F.col("hwm"))))
        .filter(F.col("_leo") | F.col("_hwm"))
    )
    leo = F.col("_leo")
    return flagged.select(
        "cluster",
        "topic",
        "topic_id",
        "partition",
        F.when(leo, F.col("replica")).otherwise(F.col("observer")).alias("replica"),
        "observer",
        "event_time",
        F.when(leo, F.col("current_leader_epoch")).cast("int").alias("leader_epoch"),
        F.when(leo, F.col("fetch_offset")).cast("long").alias("leo"),
        F.when(~leo, F.col("hwm")).cast("long").alias("hwm"),
        "source_file",
        "line_no",
    ).filter(F.col("partition").isNotNull() & F.col("replica").isNotNull())


def _sorted(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in COLUMNS) for r in rows)


@pytest.mark.spark
def test_the_replays_table_is_the_windows_table_on_incidents_of_every_era(
    spark: Any, tmp_path: Path
) -> None:
    import simulator
    from pipeline.ingest.plan import ingest
    from pipeline.reconstruct import compress, partition_rows, shared_rows, with_topic_key
    from replay.types import Profile

    stories = [
        ("kraft-unclean-election", "kraft", {}),
        ("elr-5.3.3", "kraft-elr", {}),
        ("zk-epoch-unclean", "zk-epoch", {}),
        ("random", "kraft", {"era": "kraft", "fault_rate": 1.0, "duration": 60}),
        ("random", "zk-hw", {"era": "zk-hw", "version": "0.10", "fault_rate": 1.0, "duration": 60}),
    ]
    profiles = {}
    for i, (name, era, knobs) in enumerate(stories):
        folder = tmp_path / f"cluster=c{i}"
        simulator.simulate(name, folder, seed=31 + i, **knobs)
        (folder / "truth.json").unlink()
        profiles[f"c{i}"] = Profile(era)
    events = ingest(spark, [str(tmp_path)], persist=False).events
    compressed = compress(partition_rows(with_topic_key(events)))
    settings = bridge.BridgeSettings(
        Profile.KRAFT, 2.0, {c: frozenset(range(1, 6)) for c in profiles}, profiles
    )
    bridged = bridge.replay_partitions(
        compressed, settings, shared=bridge.shared_table(shared_rows(events))
    )
    ours = _sorted([r.asDict() for r in bridge.split(bridged, "replica_offsets").collect()])
    oracle = _sorted([r.asDict() for r in spark_offsets(compressed).collect()])
    assert ours == oracle
    # the comparison covers both halves, every cluster, and consumers' reads
    assert len(ours) > 1000
    assert {r[0] for r in ours} == set(profiles)
    assert any(r[COLUMNS.index("leo")] is not None for r in ours)
    assert any(r[COLUMNS.index("hwm")] is not None for r in ours)


def _table(*rows: dict[str, Any]) -> pa.Table:
    base = {
        "cluster": "c",
        "topic_key": "orders",
        "partition": 0,
        "topic": "orders",
        "topic_id": None,
        "source_file": "file:/b1/kafka-request.log",
        "error_code": None,
        "current_leader_epoch": 3,
    }
    full = [{**base, **r} for r in rows]
    for i, r in enumerate(full):
        r.setdefault("line_no", i + 1)
        r.setdefault("seq", (i + 1) * 100_000)
        r.setdefault("event_time", T0 + timedelta(seconds=i))
    fields = [f for f in SCHEMA if f.name != "table"] + [
        pa.field("topic_key", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("seq", pa.int64()),
        pa.field("fetch_offset", pa.int64()),
        pa.field("current_leader_epoch", pa.int32()),
        pa.field("error_code", pa.int32()),
    ]
    names: dict[str, pa.Field] = {}
    for f in fields:
        names.setdefault(f.name, f)
    schema = pa.schema(list(names.values()))
    return pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in full], schema=schema)


def _changes(*rows: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = offset_changes(_table(*rows), SCHEMA).to_pylist()
    assert {r["table"] for r in out} <= {"replica_offsets"}
    return [(r["line_no"], r["replica"], r["leader_epoch"], r["leo"], r["hwm"]) for r in out]


def fetch(replica: int, offset: int, **more: Any) -> dict[str, Any]:
    return {"kind": "fetch_request", "observer": 1, "replica": replica, "fetch_offset": offset,
            **more}  # fmt: skip


def answer(replica: int, hwm: int, **more: Any) -> dict[str, Any]:
    return {"kind": "fetch_response", "observer": 1, "replica": replica, "hwm": hwm, **more}


def test_a_log_end_row_per_change_of_offset_or_epoch_per_follower() -> None:
    assert _changes(
        fetch(2, 100),
        fetch(3, 100),  # another follower: its own first row
        fetch(2, 100),  # no change
        fetch(2, 100, current_leader_epoch=4),  # the epoch named changed
        fetch(2, 120, current_leader_epoch=4),
        fetch(2, 120, current_leader_epoch=None),  # null differs from 4
        fetch(2, 120, current_leader_epoch=None),  # null equals null
    ) == [
        (1, 2, 3, 100, None),
        (4, 2, 4, 100, None),
        (5, 2, 4, 120, None),
        (6, 2, None, 120, None),
        (2, 3, 3, 100, None),
    ]


def test_a_hwm_row_per_change_across_the_leaders_answers_to_every_follower() -> None:
    assert _changes(
        answer(2, 100),
        answer(3, 100),  # the same HWM to another follower: no row
        answer(3, 90, error_code=6),  # an error answer is no HWM
        answer(2, -1),  # nor is -1
        answer(3, 110),
        answer(2, 110, observer=None),  # an answer of no known leader
        answer(2, 100, observer=4),  # another leader: its own first row
    ) == [(1, 1, None, None, 100), (5, 1, None, None, 110), (7, 4, None, None, 100)]


def test_untimed_rows_come_first_then_file_then_sequence() -> None:
    later = T0 + timedelta(seconds=9)
    assert _changes(
        fetch(2, 130, event_time=later),
        fetch(2, 120, event_time=None),
        fetch(2, 125, event_time=later, seq=1),  # before line 1 in the same instant
    ) == [
        (2, 2, 3, 120, None),
        (3, 2, 3, 125, None),
        (1, 2, 3, 130, None),
    ]


def test_a_fetch_of_no_known_replica_is_no_row_and_an_empty_group_none() -> None:
    nobody = {**fetch(2, 100), "replica": None}
    assert _changes(nobody, {"kind": "produce", "replica": None}) == []
    assert offset_changes(_table(), SCHEMA).num_rows == 0
