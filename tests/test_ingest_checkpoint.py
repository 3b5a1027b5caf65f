"""Ingest of broker checkpoint files (kafka-formats.md section 4), validated
as strictly as Kafka's ``CheckpointReadBuffer`` / ``PartitionMetadataReadBuffer``.

One folder tree (two brokers' data dirs and a controller log), one ingest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

pytestmark = pytest.mark.spark

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
ZERO = "AAAAAAAAAAAAAAAAAAAAAA"

#: path under the root -> content (exact bytes).
FILES = {
    # section 4's CONSTRUCTED examples
    "broker-1/data/orders-0/leader-epoch-checkpoint": "0\n3\n0 0\n2 1500\n5 3200\n",
    "broker-1/data/orders-0/partition.metadata": f"version: 0\ntopic_id: {ORDERS}",  # no final \n
    # count says 3, two entries: Kafka rejects the file
    "broker-1/data/replication-offset-checkpoint": "0\n3\norders 0 3200\norders 1 2987\n",
    # validated, then ignored by rule (the replay uses none of these offsets)
    "broker-1/data/recovery-point-offset-checkpoint": "0\n2\norders 0 3200\norders 1 2987\n",
    # a partition that is not an int: Kafka rejects the whole file
    "broker-1/data/log-start-offset-checkpoint": "0\n1\norders x 0\n",
    # a version Kafka does not know
    "broker-2/data/cleaner-offset-checkpoint": "1\n0\n",
    "broker-2/data/replication-offset-checkpoint": "0\n2\norders 0 3100\nmy-app-events 2 90\n",
    "broker-2/data/orders-0/partition.metadata": f"version: 0\ntopic_id: {ZERO}",
    "broker-2/data/orders-1/leader-epoch-checkpoint": "1\n1\n0 0\n",
    "broker-2/data/orders-2/leader-epoch-checkpoint": "0\n2\n0 0\n3\n",
    # only the version line: no entry, no error (Kafka: an empty list)
    "broker-3/data/orders-0/leader-epoch-checkpoint": "0\n",
    # Kafka's own name, not its content: read as a checkpoint, and rejected
    # with Kafka's reason (a file carrying an artefact's name is never
    # unrecognised)
    "misc/leader-epoch-checkpoint": "hello\nworld\n",
    # well formed, but no path names its partition: read, ignored by rule
    "misc/partition.metadata": f"version: 0\ntopic_id: {ORDERS}\n",
    "loose/leader-epoch-checkpoint": "0\n1\n4 900\n",
    # pasted with trailing blanks: read
    "broker-3/data/replication-offset-checkpoint": "0 \n1\t\norders 1 77  \n",
    # topic id only: the name comes from partition.metadata
    "controller-3000/controller.log": (
        f"[2024-05-01 10:00:00,455] INFO Setting new leader for topicId {ORDERS}, partition 0 "
        "to 3 using an unclean election (org.apache.kafka.controller.PartitionChangeBuilder)\n"
    ),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkpoints")
    for rel, content in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(content.encode())
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)])
    root = str(tree)

    def rel(path: str) -> str:
        return path.split(root, 1)[1].lstrip("/")

    return {
        "root": root,
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": sorted(
            ({**e.asDict(), "rel": rel(e.source_file)} for e in r.events.collect()),
            key=lambda e: (e["rel"], e["seq"]),
        ),
        "quarantine": sorted(
            ({**q.asDict(), "rel": rel(q.source_file)} for q in r.quarantine.collect()),
            key=lambda q: (q["rel"], q["line_no"]),
        ),
        "file_stats": {rel(s.path): s.asDict() for s in r.file_stats.collect()},
    }


def _set(row: dict[str, Any]) -> dict[str, Any]:
    common = {"cluster", "source_file", "seq", "event_time", "rel"}
    return {k: v for k, v in row.items() if v is not None and k not in common}


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        "broker-1/data/orders-0/leader-epoch-checkpoint": ("checkpoint", 1, 5, 3, 2, 0),
        "broker-1/data/orders-0/partition.metadata": ("checkpoint", 1, 2, 1, 1, 0),
        "broker-1/data/replication-offset-checkpoint": ("checkpoint", 1, 4, 0, 0, 4),
        "broker-1/data/recovery-point-offset-checkpoint": ("checkpoint", 1, 4, 0, 4, 0),
        "broker-1/data/log-start-offset-checkpoint": ("checkpoint", 1, 3, 0, 0, 3),
        "broker-2/data/cleaner-offset-checkpoint": ("checkpoint", 2, 2, 0, 0, 2),
        "broker-2/data/replication-offset-checkpoint": ("checkpoint", 2, 4, 2, 2, 0),
        "broker-2/data/orders-0/partition.metadata": ("checkpoint", 2, 2, 0, 0, 2),
        "broker-2/data/orders-1/leader-epoch-checkpoint": ("checkpoint", 2, 3, 0, 0, 3),
        "broker-2/data/orders-2/leader-epoch-checkpoint": ("checkpoint", 2, 4, 0, 0, 4),
        "broker-3/data/orders-0/leader-epoch-checkpoint": ("checkpoint", 3, 1, 0, 1, 0),
        "misc/leader-epoch-checkpoint": ("checkpoint", None, 2, 0, 0, 2),
        "misc/partition.metadata": ("checkpoint", None, 2, 0, 2, 0),
        "loose/leader-epoch-checkpoint": ("checkpoint", None, 3, 0, 3, 0),
        "broker-3/data/replication-offset-checkpoint": ("checkpoint", 3, 3, 1, 2, 0),
        "controller-3000/controller.log": ("broker_log", None, 1, 1, 0, 0),
    }


def test_events(result: dict[str, Any]) -> None:
    got = [(e["rel"], _set(e)) for e in result["events"]]
    lec = "broker-1/data/orders-0/leader-epoch-checkpoint"
    roc = "broker-2/data/replication-offset-checkpoint"
    assert got == [
        ("broker-1/data/orders-0/leader-epoch-checkpoint", _set_of(
            3, "epoch_checkpoint", 1, topic="orders", topic_id=ORDERS, partition=0, replica=1,
            leader_epoch=0, base_offset=0)),
        (lec, _set_of(4, "epoch_checkpoint", 1, topic="orders", topic_id=ORDERS, partition=0,
                      replica=1, leader_epoch=2, base_offset=1500)),
        (lec, _set_of(5, "epoch_checkpoint", 1, topic="orders", topic_id=ORDERS, partition=0,
                      replica=1, leader_epoch=5, base_offset=3200)),
        # partition.metadata -> topic_record (topic from the folder name)
        ("broker-1/data/orders-0/partition.metadata",
         _set_of(2, "topic_record", 1, topic="orders", topic_id=ORDERS)),
        (roc, _set_of(3, "hwm_checkpoint", 2, topic="orders", topic_id=ORDERS, partition=0,
                      replica=2, hwm=3100)),
        (roc, _set_of(4, "hwm_checkpoint", 2, topic="my-app-events", partition=2, replica=2,
                      hwm=90)),
        # trailing blanks on every line
        ("broker-3/data/replication-offset-checkpoint", _set_of(
            3, "hwm_checkpoint", 3, topic="orders", topic_id=ORDERS, partition=1, replica=3,
            hwm=77)),
        # the topic-name join used partition.metadata
        ("controller-3000/controller.log", _set_of(
            1, "unclean_partition_change", None, topic="orders", topic_id=ORDERS, partition=0,
            leader=3)),
    ]  # fmt: skip
    assert all(e["event_time"] is None for e in result["events"] if "checkpoint" in e["rel"])


def _set_of(line_no: int, kind: str, observer: int | None, **values: Any) -> dict[str, Any]:
    out = {"line_no": line_no, "kind": kind, **values}
    if observer is not None:
        out["observer"] = observer
    return out


def test_quarantine_with_kafka_reasons(result: dict[str, Any]) -> None:
    root = result["root"]

    def loc(rel: str) -> str:
        return f"{root}/{rel}"

    roc = "broker-1/data/replication-offset-checkpoint"
    pm = "broker-2/data/orders-0/partition.metadata"
    v1 = "broker-2/data/orders-1/leader-epoch-checkpoint"
    bad = "broker-2/data/orders-2/leader-epoch-checkpoint"
    got = [(q["rel"], q["line_no"], q["reason"], q["text"]) for q in result["quarantine"]]
    count = f"Expected [3] entries in checkpoint file [{loc(roc)}], but found only [2]"
    version = f"Unrecognised version:1, expected version: 0 in checkpoint file at: {loc(v1)}"
    malformed = f"Malformed line in checkpoint file [{loc(bad)}]: 3"
    zero = f"Invalid topic ID in partition metadata file ({loc(pm)})"
    lso = "broker-1/data/log-start-offset-checkpoint"
    cleaner = "broker-2/data/cleaner-offset-checkpoint"
    lso_bad = f"Malformed line in checkpoint file [{loc(lso)}]: orders x 0"
    cleaner_v1 = (
        f"Unrecognised version:1, expected version: 0 in checkpoint file at: {loc(cleaner)}"
    )
    misc = "misc/leader-epoch-checkpoint"
    hello = f"Malformed line in checkpoint file [{loc(misc)}]: hello"
    assert got == [
        (lso, 1, lso_bad, "0"), (lso, 2, lso_bad, "1"), (lso, 3, lso_bad, "orders x 0"),
        (roc, 1, count, "0"), (roc, 2, count, "3"), (roc, 3, count, "orders 0 3200"),
        (roc, 4, count, "orders 1 2987"),
        (cleaner, 1, cleaner_v1, "1"), (cleaner, 2, cleaner_v1, "0"),
        (pm, 1, zero, "version: 0"), (pm, 2, zero, f"topic_id: {ZERO}"),
        (v1, 1, version, "1"), (v1, 2, version, "1"), (v1, 3, version, "0 0"),
        (bad, 1, malformed, "0"), (bad, 2, malformed, "2"), (bad, 3, malformed, "0 0"),
        (bad, 4, malformed, "3"),
        (misc, 1, hello, "hello"), (misc, 2, hello, "world"),
    ]  # fmt: skip
