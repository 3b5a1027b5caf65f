"""The Spark edge: silver rows -> compression -> replay bridge -> gold rows."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from pipeline.bridge import BRIDGE_SCHEMA, BridgeSettings, replay_partitions, shared_table, split
from pipeline.reconstruct import compress, partition_rows, shared_rows, with_topic_key
from replay.types import Profile
from schemas.tables import PARTITION_EVENTS

pytestmark = pytest.mark.spark

T0 = datetime(2024, 5, 1, 10, 0, 0)
ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"


class Rows:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.line: dict[str, int] = {}
        self.offset = 0
        self.t = 0.0

    def _base(self, file: str, observer: int | None, kind: str, **fields: Any) -> dict[str, Any]:
        self.line[file] = self.line.get(file, 0) + 1
        self.t += 1
        row = {f.name: None for f in PARTITION_EVENTS.fields}
        row.update(
            cluster="default",
            source_file=file,
            line_no=self.line[file],
            event_time=T0 + timedelta(seconds=self.t),
            observer=observer,
            seq=self.line[file] * 10,
            kind=kind,
            topic="orders",
            topic_id=ORDERS,
            partition=0,
        )
        row.update(fields)
        self.rows.append(row)
        return row

    def metadata(self, kind: str, **fields: Any) -> None:
        self._base("controller/md.txt", None, kind, metadata_offset=self.offset, **fields)
        self.offset += 1

    def fetch(
        self,
        leader: int,
        follower: int,
        offset: int,
        epoch: int,
        lfe: int,
        hwm: int,
        diverging: tuple[int, int] | None = None,
    ) -> None:
        file = f"broker-{leader}/kafka-request.log"
        row = self._base(
            file,
            leader,
            "fetch_request",
            replica=follower,
            fetch_offset=offset,
            current_leader_epoch=epoch,
            last_fetched_epoch=lfe,
        )
        answer = dict(
            row,
            kind="fetch_response",
            seq=row["seq"] + 1,
            fetch_offset=None,
            current_leader_epoch=None,
            last_fetched_epoch=None,
            hwm=hwm,
            error_code=0,
            diverging_epoch=diverging[0] if diverging else None,
            diverging_end_offset=diverging[1] if diverging else None,
        )
        self.rows.append(answer)


def unclean_rows() -> list[dict[str, Any]]:
    r = Rows()
    r.metadata(
        "partition_record",
        replicas=[1, 2, 3],
        isr=[1, 2, 3],
        leader=1,
        leader_epoch=0,
        partition_epoch=0,
        leader_recovery_state=0,
        adding_replicas=[],
        removing_replicas=[],
    )
    for _ in range(5):  # repeated identical fetches: only the run's ends are kept
        r.fetch(1, 2, 100, 0, 0, 100)
    r.metadata("partition_change", isr=[1], leader=-2, leader_recovery_state=-1)
    r.fetch(1, 2, 120, 0, 0, 150)
    r.metadata(
        "fence_broker",
        topic=None,
        topic_id=None,
        partition=None,
        replica=1,
        broker_epoch=10,
        fenced=1,
    )
    r.metadata("partition_change", leader=-1, leader_recovery_state=-1)
    r.metadata("partition_change", isr=[2], leader=2, leader_recovery_state=1)
    r.fetch(2, 3, 100, 2, 0, 120)
    r.fetch(2, 1, 150, 2, 0, 130, diverging=(0, 120))
    r.fetch(2, 1, 120, 2, 0, 130)
    r.fetch(2, 1, 130, 2, 2, 130)
    return r.rows


def test_unclean_story_through_spark(spark) -> None:  # type: ignore[no-untyped-def]
    events = with_topic_key(spark.createDataFrame(unclean_rows(), PARTITION_EVENTS))
    compressed = compress(events)
    assert (
        compressed.filter("kind = 'fetch_request' and fetch_offset = 100 and replica = 2").count()
        == 2
    )

    settings = BridgeSettings(Profile.KRAFT, 2.0, {"default": frozenset({1, 2, 3})})
    bridged = replay_partitions(
        partition_rows(compressed), settings, shared=shared_table(shared_rows(events))
    )
    assert bridged.schema == BRIDGE_SCHEMA

    found = sorted(
        (r.kind, r.leader_epoch, r.replica, r.offset_start, r.offset_end, r.records_lost)
        for r in split(bridged, "anomalies").collect()
    )
    assert found == [
        ("committed_data_loss", 2, None, 120, 150, 30),
        ("hwm_regression", 2, 2, 120, 150, None),
        ("truncation_below_hwm", 2, 1, 120, 150, 30),
        ("unclean_election", 2, 2, 120, 150, 30),
    ]
    [verdict] = split(bridged, "partition_verdicts").collect()
    assert (verdict.topic, verdict.partition, verdict.verdict, verdict.findings) == (
        "orders",
        0,
        "invalid",
        4,
    )
    lineage = sorted(
        (r.leader_epoch, r.leader, r.election_kind, r.start_offset)
        for r in split(bridged, "epoch_lineage").collect()
    )
    assert lineage == [(0, 1, "initial", 0), (1, -1, "offline", None), (2, 2, "unclean", 120)]

    offsets = split(bridged, "replica_offsets")
    leos = [
        (r.replica, r.leo)
        for r in offsets.filter("leo is not null").orderBy("event_time").collect()
    ]
    assert leos == [(2, 100), (2, 120), (3, 100), (1, 150), (1, 120), (1, 130)]
    hwms = [
        (r.replica, r.hwm)
        for r in offsets.filter("hwm is not null").orderBy("event_time").collect()
    ]
    assert hwms == [(1, 100), (1, 150), (2, 120), (2, 130)]


def test_rows_scattered_over_spark_partitions_are_replayed_whole(spark) -> None:  # type: ignore[no-untyped-def]
    """Uncompressed rows dealt round-robin over three Spark partitions: the
    bridge brings each partition's rows together itself."""
    events = with_topic_key(spark.createDataFrame(unclean_rows(), PARTITION_EVENTS))
    settings = BridgeSettings(Profile.KRAFT, 2.0, {"default": frozenset({1, 2, 3})})
    scattered = partition_rows(events).repartition(3)
    assert scattered.rdd.glom().filter(bool).count() == 3
    bridged = replay_partitions(scattered, settings, shared=shared_table(shared_rows(events)))
    [verdict] = split(bridged, "partition_verdicts").collect()
    assert (verdict.partition, verdict.verdict, verdict.findings) == (0, "invalid", 4)
    found = sorted(
        (r.kind, r.leader_epoch, r.replica, r.offset_start, r.offset_end)
        for r in split(bridged, "anomalies").collect()
    )
    assert found == [
        ("committed_data_loss", 2, None, 120, 150),
        ("hwm_regression", 2, 2, 120, 150),
        ("truncation_below_hwm", 2, 1, 120, 150),
        ("unclean_election", 2, 2, 120, 150),
    ]
