"""Ingest of data-log segment dumps, ``kafka-dump-log --files`` (kafka-formats.md section 3)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

pytestmark = pytest.mark.spark


def batch(base: int, last: int, epoch: int, valid: str = "true", horizon: bool = True) -> str:
    """A batch line: 3.x+ (``deleteHorizonMs``) or 2.x (without it)."""
    mid = "deleteHorizonMs: OptionalLong.empty " if horizon else ""
    return (
        f"baseOffset: {base} lastOffset: {last} count: {last - base + 1} baseSequence: -1 "
        f"lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: {epoch} "
        f"isTransactional: false isControl: false {mid}position: 0 CreateTime: 1714550000000 "
        f"size: 131 magic: 2 compresscodec: none crc: 90285099 isvalid: {valid}"
    )


DUMP = [
    "Dumping /var/lib/kafka/data/my-app.events-3/00000000000000000000.log",  # 1
    "Log starting offset: 0",  # 2
    batch(0, 4, 5),  # 3
    "| offset: 0 CreateTime: 1714550000000 keySize: -1 valueSize: 14 sequence: -1 "
    'headerKeys: [] payload: {"type":"PARTITION_RECORD"}',  # 4: a JSON value: ignored
    batch(5, 9, 7, valid="false"),  # 5: CRC mismatch: quarantined
    "baseOffset: 10 lastOffset: x",  # 6: unreadable: quarantined
    "Dumping /var/lib/kafka/data/orders-0/00000000000000000100.log",  # 7
    "Starting offset: 100",  # 8
    batch(100, 100, 2, horizon=False),  # 9: 2.x batch line
]
NO_FOLDER = ["Dumping 2.log", "Log starting offset: 2", batch(0, 0, 0)]


@pytest.fixture(scope="module")
def result(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from pipeline.ingest import ingest

    root = tmp_path_factory.mktemp("segment_dumps")
    (root / "broker-2").mkdir()
    (root / "broker-2" / "dump.txt").write_text("\n".join(DUMP) + "\n")
    (root / "broker-2" / "dump-2.txt").write_text("\r\n".join(NO_FOLDER) + "\r\n")
    r = ingest(spark, [str(root)], cluster="prod", persist=True)
    try:
        return {
            "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
            "events": sorted((e.asDict() for e in r.events.collect()), key=lambda e: e["seq"]),
            "quarantine": sorted(
                (Path(q.source_file).name, q.line_no, q.reason) for q in r.quarantine.collect()
            ),
            "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
        }
    finally:
        r.unpersist()


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        "dump.txt": ("segment_dump", 2, 9, 2, 5, 2),
        "dump-2.txt": ("segment_dump", 2, 3, 0, 2, 1),
    }


def test_batches(result: dict[str, Any]) -> None:
    got = [
        (e["line_no"], e["kind"], e["topic"], e["partition"], e["replica"], e["observer"],
         e["base_offset"], e["last_offset"], e["leader_epoch"], e["event_time"])
        for e in result["events"]
    ]  # fmt: skip
    when = dt.datetime(2024, 5, 1, 7, 53, 20)
    assert got == [
        (3, "segment_batch", "my-app.events", 3, 2, 2, 0, 4, 5, when),
        (9, "segment_batch", "orders", 0, 2, 2, 100, 100, 2, when),
    ]


def test_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest import segment_dump

    assert result["quarantine"] == [
        ("dump-2.txt", 3, segment_dump.NO_PARTITION_REASON),
        ("dump.txt", 5, segment_dump.INVALID_BATCH_REASON),
        ("dump.txt", 6, segment_dump.UNRECOGNISED_REASON),
    ]
