"""Ingest of ``kafka-dump-log --cluster-metadata-decoder`` output (kafka-formats.md 2.1-2.5).

One folder tree, one ingest, shared by every test: a 3.x log-segment dump, a
snapshot dump followed by a second dumped file in the same output, a 2.8 /
--skip-record-metadata dump, and a data-log dump (not a metadata dump).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

pytestmark = pytest.mark.spark

ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"
PAYMENTS = "QkX1y9bHSWC2ZCd3mFhV7g"
TS = 1714550000000
T = dt.datetime(2024, 5, 1, 7, 53, 20)

BATCH = (
    "baseOffset: {o} lastOffset: {o} count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
    "producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: {c} "
    "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1714550000000 size: 100 "
    "magic: 2 compresscodec: none crc: 123456 isvalid: true"
)


def record(offset: int, record_type: str, version: int, data: dict[str, Any]) -> str:
    """A 3.0+ record line with a decoded payload (2.1 item 4, 2.2 envelope)."""
    payload = json.dumps(
        {"type": record_type, "version": version, "data": data}, separators=(",", ":")
    )
    return (
        f"| offset: {offset} CreateTime: {TS} keySize: -1 valueSize: {len(payload)} "
        f"sequence: -1 headerKeys: [] payload: {payload}"
    )


def change(**data: Any) -> dict[str, Any]:
    return {"partitionId": 0, "topicId": ORDERS, **data}


SEGMENT = [
    "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log",  # 1
    "Log starting offset: 0",  # 2
    BATCH.format(o=0, c="true"),  # 3
    f"| offset: 0 CreateTime: {TS} keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] "
    "controlType: LEADER_CHANGE(2)",  # 4 control record
    BATCH.format(o=1, c="false"),  # 5
    record(1, "REGISTER_BROKER_RECORD", 3, {
        "brokerId": 1, "isMigratingZkBroker": False, "incarnationId": "x0JAjRv1TqmkXAyXfqAbpA",
        "brokerEpoch": 10, "endPoints": [{"name": "PLAINTEXT", "host": "b1", "port": 9092,
        "securityProtocol": 0}], "features": [], "rack": None, "fenced": True,
        "inControlledShutdown": False}),  # 6
    record(2, "REGISTER_BROKER_RECORD", 0, {
        "brokerId": 2, "incarnationId": "y0JAjRv1TqmkXAyXfqAbpA", "brokerEpoch": 11,
        "endPoints": [], "features": [], "rack": None, "fenced": False}),  # 7
    record(3, "FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),  # 8
    record(4, "TOPIC_RECORD", 0, {"name": "orders", "topicId": ORDERS}),  # 9
    record(5, "PARTITION_RECORD", 0, {
        "partitionId": 0, "topicId": ORDERS, "replicas": [1, 2, 3], "isr": [1, 2, 3],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0,
        "partitionEpoch": 0}),  # 10
    record(6, "PARTITION_CHANGE_RECORD", 0, change(isr=[1, 2])),  # 11 no leader key
    record(7, "PARTITION_CHANGE_RECORD", 2, change(
        isr=[], leader=-1, eligibleLeaderReplicas=[1, 2], lastKnownElr=[])),  # 12
    record(8, "PARTITION_CHANGE_RECORD", 0, change(
        isr=[3], leader=3, leaderRecoveryState=1)),  # 13 unclean
    record(9, "PARTITION_CHANGE_RECORD", 1, change(lastKnownELR=[3])),  # 14 3.7 spelling
    record(10, "BROKER_REGISTRATION_CHANGE_RECORD", 0, {
        "brokerId": 1, "brokerEpoch": 10, "fenced": 1}),  # 15
    record(11, "BROKER_REGISTRATION_CHANGE_RECORD", 1, {
        "brokerId": 2, "brokerEpoch": 11, "inControlledShutdown": 1}),  # 16
    record(12, "FENCE_BROKER_RECORD", 0, {"id": 3, "epoch": 12}),  # 17
    record(13, "UNFENCE_BROKER_RECORD", 0, {"id": 3, "epoch": 12}),  # 18
    f"| offset: 14 CreateTime: {TS} keySize: -1 valueSize: 31 sequence: -1 headerKeys: [] "
    "payload: Error at 14, skipping. Could not deserialize metadata record due to unknown "
    "version 9 of PARTITION_CHANGE_RECORD",  # 19
    record(15, "PARTITION_CHANGE_RECORD", 3, change(leader=2)),  # 20 version we do not know
    record(16, "PARTITION_CHANGE_RECORD", 0, {"topicId": ORDERS, "leader": 2}),  # 21 no partition
    record(17, "PARTITION_CHANGE_RECORD", 0, change(leader=2))[:-20],  # 22 cut JSON
    "Found 12 invalid bytes at the end of 00000000000000000000.log",  # 23
    "hello world",  # 24
    "\tat kafka.tools.DumpLogSegments$.main(DumpLogSegments.scala:100)",  # 25
    record(18, "CONFIG_RECORD", 0, {
        "resourceType": 2, "resourceName": "orders", "name": "min.insync.replicas",
        "value": "2"}),  # 26
    "",  # 27
    f"| offset: 19 CreateTime: {TS} keySize: -1 valueSize: 10 sequence: -1 headerKeys: []",  # 28
]  # fmt: skip

# A snapshot (records at snapshot-internal offsets), then a log segment dumped
# by the same command (kafka-dump-log --files a.checkpoint,b.log).
SNAPSHOT = [
    "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000500-0000000003.checkpoint",
    "Snapshot end offset: 500, epoch: 3",  # 2
    BATCH.format(o=0, c="true"),  # 3
    f"| offset: 0 CreateTime: {TS} keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] "
    'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1714550000000}',  # 4
    BATCH.format(o=1, c="false"),  # 5
    record(1, "TOPIC_RECORD", 0, {"name": "payments", "topicId": PAYMENTS}),  # 6
    record(2, "PARTITION_RECORD", 2, {
        "partitionId": 0, "topicId": PAYMENTS, "replicas": [1, 2], "isr": [1],
        "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderRecoveryState": 1,
        "leaderEpoch": 7, "partitionEpoch": 9, "directories": [], "eligibleLeaderReplicas": [2],
        "lastKnownElr": [2]}),  # 7
    record(3, "PARTITION_RECORD", 2, {
        "partitionId": 1, "topicId": PAYMENTS, "replicas": [2, 1], "isr": [2, 1],
        "removingReplicas": [], "addingReplicas": [], "leader": 2, "leaderEpoch": 4,
        "partitionEpoch": 4, "directories": []}),  # 8
    f"| offset: 4 CreateTime: {TS} keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] "
    'SnapshotFooter {"version":0}',  # 9
    "Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000500.log",  # 10
    "Log starting offset: 500",  # 11
    BATCH.format(o=500, c="false"),  # 12
    record(500, "PARTITION_CHANGE_RECORD", 0, {
        "partitionId": 1, "topicId": PAYMENTS, "leader": 1}),  # 13
]  # fmt: skip

OLD_AND_SKIPPED = [
    "Dumping __cluster_metadata-0/00000000000000000000.log",
    "Starting offset: 0",
    # 2.8: record lines repeated the batch fields (2.1 item 4).
    "| offset: 7 isValid: true crc: null keySize: -1 valueSize: 38 CreateTime: 1618000000000 "
    "baseOffset: 7 lastOffset: 7 baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 1 batchSize: 110 magic: 2 compressType: NONE position: 0 "
    "sequence: -1 headerKeys: [] payload: "
    '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":1,"topicId":"'
    + ORDERS
    + '","leader":2}}',
    # --skip-record-metadata: Scala (no '|') and Java ('| ') spellings.
    ' payload: {"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":2,"epoch":5}}',
    '| payload: {"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":2,"epoch":6}}',
]

# kafka-dump-log --files of a data partition: batch and record lines, no
# metadata envelope. Not a metadata dump: a segment dump (test_ingest_segment_dump.py).
DATA_DUMP = [
    "Dumping /var/lib/kafka/orders-0/00000000000000000000.log",
    "Log starting offset: 0",
    BATCH.format(o=0, c="false"),
    f"| offset: 0 CreateTime: {TS} keySize: 3 valueSize: 5 sequence: 0 headerKeys: [] "
    "key: k-1 payload: hello",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dumps")
    (root / "controller").mkdir()
    (root / "controller" / "metadata.txt").write_text("\n".join(SEGMENT) + "\n")
    (root / "controller" / "snapshot.txt").write_text("\n".join(SNAPSHOT) + "\n")
    (root / "controller" / "dump-2.8.txt").write_text("\n".join(OLD_AND_SKIPPED) + "\n")
    (root / "kafka-1").mkdir()
    (root / "kafka-1" / "data-dump.txt").write_text("\n".join(DATA_DUMP) + "\n")
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="kraft-1")
    events: dict[str, list[dict[str, Any]]] = {}
    for row in r.events.collect():
        events.setdefault(Path(row.source_file).name, []).append(row.asDict())
    return {
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": {k: sorted(v, key=lambda e: e["seq"]) for k, v in events.items()},
        "quarantine": sorted(
            (q.asDict() for q in r.quarantine.collect()), key=lambda q: q["line_no"]
        ),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


def _set(row: dict[str, Any]) -> dict[str, Any]:
    """The non-null typed columns of an event."""
    common = {"cluster", "source_file", "seq", "observer", "event_time", "kind", "line_no"}
    return {k: v for k, v in row.items() if v is not None and k not in common}


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        "metadata.txt": ("metadata_dump", None, 28, 13, 10, 5),
        "snapshot.txt": ("metadata_dump", None, 13, 4, 9, 0),
        "dump-2.8.txt": ("metadata_dump", None, 5, 3, 2, 0),
        "data-dump.txt": ("segment_dump", 1, 4, 1, 3, 0),
    }


def test_log_segment_records(result: dict[str, Any]) -> None:
    events = result["events"]["metadata.txt"]
    got = [(e["line_no"], e["kind"], e["metadata_offset"], _set(e)) for e in events]
    named = {"topic": "orders", "topic_id": ORDERS, "partition": 0}
    assert got == [
        (6, "register_broker", 1, {"metadata_offset": 1, "replica": 1, "broker_epoch": 10,
                                   "fenced": 1}),
        (7, "register_broker", 2, {"metadata_offset": 2, "replica": 2, "broker_epoch": 11,
                                   "fenced": 0}),
        (9, "topic_record", 4, {"metadata_offset": 4, "topic": "orders", "topic_id": ORDERS}),
        (10, "partition_record", 5, {**named, "metadata_offset": 5, "replicas": [1, 2, 3],
                                     "isr": [1, 2, 3], "removing_replicas": [],
                                     "adding_replicas": [], "leader": 1, "leader_epoch": 0,
                                     "partition_epoch": 0, "leader_recovery_state": 0}),
        # No leader key: NO_LEADER_CHANGE (-2); absent arrays stay null.
        (11, "partition_change", 6, {**named, "metadata_offset": 6, "leader": -2,
                                     "isr": [1, 2], "leader_recovery_state": -1}),
        # leader -1 stays -1; "isr":[] and "lastKnownElr":[] stay empty, not null.
        (12, "partition_change", 7, {**named, "metadata_offset": 7, "leader": -1, "isr": [],
                                     "elr": [1, 2], "last_known_elr": [],
                                     "leader_recovery_state": -1}),
        (13, "partition_change", 8, {**named, "metadata_offset": 8, "leader": 3, "isr": [3],
                                     "leader_recovery_state": 1}),
        (14, "partition_change", 9, {**named, "metadata_offset": 9, "leader": -2,
                                     "last_known_elr": [3], "leader_recovery_state": -1}),
        (15, "broker_registration_change", 10, {"metadata_offset": 10, "replica": 1,
                                                "broker_epoch": 10, "fenced": 1,
                                                "in_controlled_shutdown": 0}),
        (16, "broker_registration_change", 11, {"metadata_offset": 11, "replica": 2,
                                                "broker_epoch": 11, "fenced": 0,
                                                "in_controlled_shutdown": 1}),
        (17, "fence_broker", 12, {"metadata_offset": 12, "replica": 3, "broker_epoch": 12,
                                  "fenced": 1}),
        (18, "unfence_broker", 13, {"metadata_offset": 13, "replica": 3, "broker_epoch": 12,
                                    "fenced": -1}),
        # a topic's min.insync.replicas (the topic id filled from its TOPIC_RECORD)
        (26, "min_isr_config", 18, {"topic": "orders", "topic_id": ORDERS, "metadata_offset": 18,
                                    "min_isr": 2}),
    ]  # fmt: skip
    assert {(e["event_time"], e["cluster"], e["observer"]) for e in events} == {
        (T, "kraft-1", None)
    }
    assert [e["seq"] for e in events] == [e["line_no"] * 100_000 for e in events]
    # null vs [] survives exactly: the ISR of line 11 is set, its replicas are not.
    line_11 = next(e for e in events if e["line_no"] == 11)
    assert line_11["replicas"] is None and line_11["elr"] is None


def test_snapshot_records_sit_at_the_snapshot_end_offset(result: dict[str, Any]) -> None:
    events = result["events"]["snapshot.txt"]
    got = [(e["line_no"], e["kind"], e["metadata_offset"], e["seq"], e["topic"]) for e in events]
    assert got == [
        (6, "topic_record", 499, 600_000, "payments"),
        (7, "partition_record", 499, 700_000, "payments"),
        (8, "partition_record", 499, 800_000, "payments"),
        # The second dumped file of the same output is a log segment: real offsets.
        (13, "partition_change", 500, 1_300_000, "payments"),
    ]
    p0 = events[1]
    assert _set(p0) == {
        "topic": "payments", "topic_id": PAYMENTS, "partition": 0, "metadata_offset": 499,
        "replicas": [1, 2], "isr": [1], "removing_replicas": [], "adding_replicas": [],
        "leader": 1, "leader_epoch": 7, "partition_epoch": 9, "leader_recovery_state": 1,
        "elr": [2], "last_known_elr": [2],
    }  # fmt: skip
    assert events[2]["elr"] is None and events[2]["leader_recovery_state"] == 0


def test_2_8_record_line_and_skip_record_metadata(result: dict[str, Any]) -> None:
    events = result["events"]["dump-2.8.txt"]
    got = [(e["line_no"], e["kind"], e["metadata_offset"], e["event_time"]) for e in events]
    assert got == [
        (3, "partition_change", 7, dt.datetime(2021, 4, 9, 20, 26, 40)),
        (4, "fence_broker", None, None),
        (5, "unfence_broker", None, None),
    ]
    assert events[0]["topic"] == "orders" and events[0]["leader"] == 2
    assert [(e["replica"], e["broker_epoch"]) for e in events[1:]] == [(2, 5), (2, 6)]


def test_quarantine(result: dict[str, Any]) -> None:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    got = [(q["line_no"], q["reason"], q["date"], q["text"]) for q in result["quarantine"]]
    assert got == [
        (19, "metadata payload decode error: Could not deserialize metadata record due to "
             "unknown version 9 of PARTITION_CHANGE_RECORD", "2024-05-01", SEGMENT[18]),
        (20, "unknown PARTITION_CHANGE_RECORD shape", "2024-05-01", SEGMENT[19]),
        (21, "unknown PARTITION_CHANGE_RECORD shape", "2024-05-01", SEGMENT[20]),
        (22, "bad JSON in metadata payload", "2024-05-01", SEGMENT[21]),
        (24, "unrecognised line in a metadata dump", today, "hello world"),
    ]  # fmt: skip
    assert {(q["cluster"], q["text_truncated"]) for q in result["quarantine"]} == {
        ("kraft-1", False)
    }
