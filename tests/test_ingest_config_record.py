"""CONFIG_RECORD -> min_isr_config (kafka-formats.md 2.4), and its routing to
the partitions it governs (reconstruct.shared_rows, bridge.with_shared).

ConfigRecord: ``{resourceType int8, resourceName string, name string, value
string}``; TOPIC = 2, BROKER = 4 (empty name = the cluster default); a null
value deletes the setting. Only ``min.insync.replicas`` is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

pytestmark = pytest.mark.spark

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
PAYMENTS = "QkX1y9bHSWC2ZCd3mFhV7g"
TS = 1714550000000


def record(offset: int, record_type: str, data: dict[str, Any], version: int = 0) -> str:
    payload = json.dumps(
        {"type": record_type, "version": version, "data": data}, separators=(",", ":")
    )
    return (
        f"| offset: {offset} CreateTime: {TS} keySize: -1 valueSize: {len(payload)} "
        f"sequence: -1 headerKeys: [] payload: {payload}"
    )


def config(offset: int, kind: int, name: str, key: str, value: str | None) -> str:
    data = {"resourceType": kind, "resourceName": name, "name": key, "value": value}
    return record(offset, "CONFIG_RECORD", data)


def partition(offset: int, topic_id: str, p: int) -> str:
    return record(offset, "PARTITION_RECORD", {
        "partitionId": p, "topicId": topic_id, "replicas": [1, 2], "isr": [1, 2],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
        "partitionEpoch": 0})  # fmt: skip


DUMP = [
    "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log",  # 1
    "Log starting offset: 0",  # 2
    record(1, "TOPIC_RECORD", {"name": "orders", "topicId": ORDERS}),  # 3
    partition(2, ORDERS, 0),  # 4
    partition(3, ORDERS, 1),  # 5
    record(4, "TOPIC_RECORD", {"name": "payments", "topicId": PAYMENTS}),  # 6
    partition(5, PAYMENTS, 0),  # 7
    config(6, 2, "orders", "min.insync.replicas", "2"),  # 8 topic override
    config(7, 4, "1", "min.insync.replicas", "3"),  # 9 broker 1's own setting
    config(8, 4, "", "min.insync.replicas", "2"),  # 10 cluster default
    config(9, 2, "payments", "min.insync.replicas", None),  # 11 deleted
    config(10, 2, "orders", "retention.ms", "1000"),  # 12 ignored by rule
    config(11, 8, "kafka.server", "min.insync.replicas", "2"),  # 13 BROKER_LOGGER: ignored
    config(12, 2, "orders", "min.insync.replicas", "two"),  # 14 not a number
    config(13, 4, "broker-x", "min.insync.replicas", "2"),  # 15 not a broker id
    record(14, "CONFIG_RECORD", {"resourceType": 2, "resourceName": "orders",
                                 "name": "min.insync.replicas", "value": "2"}, 1),  # 16
]  # fmt: skip


@pytest.fixture(scope="module")
def result(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from pipeline.bridge import replayed_columns, shared_table, with_shared
    from pipeline.ingest import ingest
    from pipeline.reconstruct import compress, partition_rows, shared_rows, with_topic_key

    root = tmp_path_factory.mktemp("config")
    (root / "controller").mkdir()
    (root / "controller" / "metadata.txt").write_text("\n".join(DUMP) + "\n")
    r = ingest(spark, [str(root)], cluster="kraft-1")
    streams = compress(partition_rows(with_topic_key(r.events)))
    table = streams.select(*replayed_columns()).toArrow()
    shared = shared_table(shared_rows(r.events))
    keys = list(zip(table["topic_key"].to_pylist(), table["partition"].to_pylist(), strict=True))
    routed = []
    for key in sorted(set(keys)):
        mine = with_shared(table.filter([k == key for k in keys]), shared).to_pylist()
        routed += [
            (row["topic_key"], row["partition"], row["line_no"])
            for row in mine
            if row["kind"] == "min_isr_config"
        ]
    return {
        "events": sorted(
            (row.asDict() for row in r.events.filter("kind = 'min_isr_config'").collect()),
            key=lambda e: e["line_no"],
        ),
        "quarantine": sorted((q.line_no, q.reason) for q in r.quarantine.collect()),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
        "routed": sorted(routed),
    }


def test_min_isr_config_events(result: dict[str, Any]) -> None:
    got = [
        (e["line_no"], e["metadata_offset"], e["topic"], e["replica"], e["min_isr"])
        for e in result["events"]
    ]
    assert got == [
        (8, 6, "orders", None, 2),
        (9, 7, None, 1, 3),
        (10, 8, None, None, 2),
        (11, 9, "payments", None, None),
    ]
    assert {e["partition"] for e in result["events"]} == {None}


def test_unreadable_min_isr_records_are_quarantined_and_the_rest_ignored(
    result: dict[str, Any],
) -> None:
    assert result["quarantine"] == [
        (14, "unknown CONFIG_RECORD shape"),
        (15, "unknown CONFIG_RECORD shape"),
        (16, "unknown CONFIG_RECORD shape"),
    ]
    # read 16 = parsed 9 (5 topic and partition records, 4 min ISR) + ignored 4 (2 headers,
    # retention.ms, BROKER_LOGGER) + quarantined 3
    assert accounting(result["file_stats"]) == {
        "metadata.txt": ("metadata_dump", None, 16, 9, 4, 3)
    }


def test_min_isr_reaches_the_partitions_it_governs(result: dict[str, Any]) -> None:
    # the orders override goes to both orders partitions, the payments one to
    # payments-0; broker 1's setting and the cluster default to all three
    assert result["routed"] == [
        ("orders", 0, 8), ("orders", 0, 9), ("orders", 0, 10),
        ("orders", 1, 8), ("orders", 1, 9), ("orders", 1, 10),
        ("payments", 0, 9), ("payments", 0, 10), ("payments", 0, 11),
    ]  # fmt: skip
