"""Broker logs as people really have them: log4j2 JSON layouts, lines pasted
without their layout, lines re-flowed over two physical lines, and the
quirks of real files (CRLF, invalid UTF-8, a 2 MB line, a truncated last
line). kafka-formats.md section 5; the layouts' keys from apache/logging-log4j2
(see pipeline/ingest/broker_log.py).

One folder tree, one ingest, shared by every test.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

pytestmark = pytest.mark.spark

FETCHER = "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0]"
P0 = "[Partition orders-0 broker=1]"


def j(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


#: One line per layout, each carrying a message we read.
JSON_LOG = [
    # 1: log4j-core JsonLayout (compact, eventEol), 2.11+ instant
    j({"instant": {"epochSecond": 1714557601, "nanoOfSecond": 500000000},
       "thread": "ReplicaFetcherThread-0-3", "level": "INFO",
       "loggerName": "kafka.server.ReplicaFetcherThread",
       "message": f"{FETCHER} Truncating partition orders-0 with TruncationState(offset=3100, "
       "completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, "
       "partition=0, leaderEpoch=7, endOffset=3100)",
       "endOfBatch": False, "loggerFqcn": "org.apache.logging.slf4j.Log4jLogger",
       "threadId": 42, "threadPriority": 5}),
    # 2: JsonLayout with timeMillis
    j({"timeMillis": 1714557602250, "thread": "data-plane-kafka-request-handler-1",
       "level": "INFO", "loggerName": "kafka.cluster.Partition",
       "message": f"{P0} ISR updated to 1,3 and version updated to 19", "endOfBatch": False}),
    # 3: JsonTemplateLayout EcsLayout.json (dotted keys)
    j({"@timestamp": "2024-05-01T10:00:03.000Z", "ecs.version": "1.2.0", "log.level": "INFO",
       "message": "[Broker id=1] Follower orders-1 starts at leader epoch 6 from offset 2987 "
       "with high watermark 2900. Previous leader epoch was 5.",
       "process.thread.name": "kafka-scheduler-1", "log.logger": "state.change.logger"}),
    # 4: GelfLayout.json: short_message, epoch seconds, syslog level code
    '{"version":"1.1","host":"kafka-1","short_message":"[Partition orders-0 broker=1] '
    "Shrinking ISR from 1,2,3 to 1,3. Leader: (highWatermark: 3100, endOffset: 3250). Out "
    'of sync replicas: (brokerId: 2, endOffset: 3000, lastCaughtUpTimeMs: 1714557000000).",'
    '"timestamp":1714557604.125000000,"level":6,"_logger":"kafka.cluster.Partition",'
    '"_thread":"isr-expiration"}',
    # 5: LogstashJsonEventLayoutV1.json: the resolver's default time pattern, zone +0200
    j({"mdc": {}, "@version": 1, "source_host": "kafka-1",
       "message": "[UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to "
       "offset 3100", "thread_name": "ReplicaFetcherThread-0-3",
       "@timestamp": "2024-05-01T12:00:05.000+0200", "level": "INFO",
       "logger_name": "kafka.log.UnifiedLog"}),
    # 6: a CRI container prefix in front of an ECS line
    "2024-05-01T10:00:06.100000000Z stdout F "
    + j({"@timestamp": "2024-05-01T10:00:06.000Z", "log.level": "WARN",
         "message": f"{FETCHER} Truncating orders-0 to offset 3000 below high watermark 3100",
         "log.logger": "kafka.server.ReplicaFetcherThread"}),
    # 7: a message we do not read (it carries a marker): ignored by rule
    j({"@timestamp": "2024-05-01T10:00:07.000Z", "log.level": "INFO",
       "message": "[UnifiedLog partition=orders-0, dir=/d] Truncating to 3300 has no effect as "
       "the largest offset in the log is 3299", "log.logger": "kafka.log.UnifiedLog"}),
    # 8: a JSON line cut short: quarantined
    '{"@timestamp":"2024-05-01T10:00:08.000Z","log.level":"INFO","message":"[Partition '
    'orders-0 broker=1] ISR updated to 1,3 and ver',
    # 9: whole JSON, but the message does not match its template: quarantined
    j({"@timestamp": "2024-05-01T10:00:09.000Z", "log.level": "INFO",
       "message": f"{P0} Shrinking ISR from 1,2 to 1. Leader: (highWatermark: x, endOffset: 3).",
       "log.logger": "kafka.cluster.Partition"}),
]  # fmt: skip

TWO_MB = "x" * (2 * 1024 * 1024)

#: A ticket: lines pasted without layout, re-flowed lines, and broken bytes.
#: Written with CRLF endings and no line break after the last line.
TICKET: list[bytes] = [
    # 1: the message and the logger, no [time] LEVEL: read as it is
    b"Leader orders-0 starts at leader epoch 5 from offset 3200 with high watermark 3100 "
    b"ISR [1,2] addingReplicas [] removingReplicas []. Previous leader epoch was 4. "
    b"(state.change.logger)",
    # 2: logIdent but no layout, no logger
    b"[Partition orders-0 broker=2] Shrinking ISR from 2,3 to 2. Leader: (highWatermark: 50, "
    b"endOffset: 60). Out of sync replicas: (brokerId: 3, endOffset: 40, lastCaughtUpTimeMs: 1).",
    # 3-4: a template split by a person: the second line indented
    b"[2024-05-01 10:00:05,000] INFO [Broker id=2] Follower orders-1 starts at leader epoch 6 "
    b"from offset 2987 with",
    b"    high watermark 2900. Previous leader epoch was 5. (state.change.logger)",
    # 5-6: a terminal's wrap: no character lost, no indent
    b"[2024-05-01 10:00:06,000] INFO [Partition orders-0 broker=2] ISR updated to 2,3 and "
    b"version upd",
    b"ated to 19 (kafka.cluster.Partition)",
    # 7-9: a line cut short, then a stack trace: no pair; 7 quarantined, 8-9 ignored
    b"[2024-05-01 10:00:07,000] ERROR [Partition orders-0 broker=2] Shrinking ISR from 2,3 "
    b"to 2. Leader: (highWatermark: 50,",
    b"java.lang.IllegalStateException: boom",
    b"\tat kafka.cluster.Partition.maybeShrinkIsr(Partition.scala:1)",
    # 10: invalid UTF-8: quarantined
    b"[2024-05-01 10:00:08,000] INFO [Partition orders-0 broker=2] ISR updated to 2 and "
    b"version updated to 20 \xff\xfe (kafka.cluster.Partition)",
    # 11: over-long: quarantined
    b"[2024-05-01 10:00:08,500] INFO [Partition orders-0 broker=2] ISR updated to 2 and "
    b"version updated to 21 " + TWO_MB.encode(),
    # 12: blank
    b"",
    # 13: the last line, cut (no line break follows): quarantined
    b"[2024-05-01 10:00:09,000] INFO [Broker id=2] Leader orders-1 starts at leader epoch 9 "
    b"from off",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("layouts")
    for d in ("broker-1", "broker-2"):
        (root / d).mkdir()
    (root / "broker-1" / "server.json.log").write_text("\n".join(JSON_LOG) + "\n")
    (root / "broker-2" / "ticket.txt").write_bytes(b"\r\n".join(TICKET))
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod")
    return {
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.asDict() for q in r.quarantine.collect()), key=lambda q: q["line_no"]
        ),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


def test_accounting_per_file(result: dict[str, Any]) -> None:
    assert accounting(result["file_stats"]) == {
        # (kind, observer, read, parsed, ignored, quarantined)
        "server.json.log": ("broker_log", 1, 9, 6, 1, 2),
        # parsed: 1, 2, 3 + its continuation 4, 5 + its continuation 6
        "ticket.txt": ("broker_log", 2, 13, 6, 3, 4),
    }


def test_json_layouts(result: dict[str, Any]) -> None:
    rows = events_of(result, "server.json.log")
    assert [(r["line_no"], r["event_time"]) for r in rows] == [
        (1, dt.datetime(2024, 5, 1, 10, 0, 1, 500000)),  # instant
        (2, dt.datetime(2024, 5, 1, 10, 0, 2, 250000)),  # timeMillis
        (3, dt.datetime(2024, 5, 1, 10, 0, 3)),  # ECS @timestamp
        (4, dt.datetime(2024, 5, 1, 10, 0, 4, 125000)),  # GELF epoch seconds
        (5, dt.datetime(2024, 5, 1, 10, 0, 5)),  # Logstash, +0200
        (6, dt.datetime(2024, 5, 1, 10, 0, 6)),  # the JSON's time, not the runtime's
    ]
    assert [non_null(r) for r in rows] == [
        {"line_no": 1, "kind": "truncation", "topic": "orders", "partition": 0, "replica": 1,
         "truncate_to": 3100, "diverging_epoch": 7, "diverging_end_offset": 3100,
         "leader": 3},  # the fetcher's leaderId
        {"line_no": 2, "kind": "isr_updated", "topic": "orders", "partition": 0, "replica": 1,
         "isr": [1, 3], "partition_epoch": 19},
        {"line_no": 3, "kind": "become_follower", "topic": "orders", "partition": 1,
         "replica": 1, "leader_epoch": 6, "leo": 2987, "hwm": 2900},
        {"line_no": 4, "kind": "isr_shrink", "topic": "orders", "partition": 0, "replica": 1,
         "isr": [1, 3], "hwm": 3100, "leo": 3250},
        {"line_no": 5, "kind": "truncation", "topic": "orders", "partition": 0, "replica": 1,
         "truncate_to": 3100},
        {"line_no": 6, "kind": "truncation", "topic": "orders", "partition": 0, "replica": 1,
         "truncate_to": 3000, "hwm": 3100, "leader": 3},
    ]  # fmt: skip


def test_pasted_and_reflowed_lines(result: dict[str, Any]) -> None:
    rows = events_of(result, "ticket.txt")
    assert [(r["line_no"], r["event_time"]) for r in rows] == [
        (1, None),
        (2, None),
        (3, dt.datetime(2024, 5, 1, 10, 0, 5)),
        (5, dt.datetime(2024, 5, 1, 10, 0, 6)),
    ]
    assert [non_null(r) for r in rows] == [
        {"line_no": 1, "kind": "become_leader", "topic": "orders", "partition": 0, "replica": 2,
         "leader": 2, "leader_epoch": 5, "leo": 3200, "hwm": 3100, "isr": [1, 2]},
        {"line_no": 2, "kind": "isr_shrink", "topic": "orders", "partition": 0, "replica": 2,
         "isr": [2], "hwm": 50, "leo": 60},
        # evidence: the pair's first line
        {"line_no": 3, "kind": "become_follower", "topic": "orders", "partition": 1,
         "replica": 2, "leader_epoch": 6, "leo": 2987, "hwm": 2900},
        {"line_no": 5, "kind": "isr_updated", "topic": "orders", "partition": 0, "replica": 2,
         "isr": [2, 3], "partition_epoch": 19},
    ]  # fmt: skip


def test_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest.outcome import INVALID_UTF8_REASON, TOO_LONG_REASON

    got = [(Path(q["source_file"]).name, q["line_no"], q["reason"]) for q in result["quarantine"]]
    assert sorted(got) == [
        ("server.json.log", 8, "unreadable JSON log line"),
        ("server.json.log", 9, "unrecognised isr_shrink message"),
        ("ticket.txt", 7, "unrecognised isr_shrink message"),
        ("ticket.txt", 10, INVALID_UTF8_REASON),
        ("ticket.txt", 11, TOO_LONG_REASON),
        ("ticket.txt", 13, "unrecognised become_leader message"),
    ]
    by_line = {(Path(q["source_file"]).name, q["line_no"]): q for q in result["quarantine"]}
    # dated by the JSON's own time
    assert by_line[("server.json.log", 9)]["date"] == "2024-05-01"
    # the over-long line keeps its first 8 KiB, marked truncated
    assert by_line[("ticket.txt", 11)]["text_truncated"] is True
    assert len(by_line[("ticket.txt", 11)]["text"]) == 8192
    # CRLF: the CR is not part of the line; the cut last line is kept whole
    assert by_line[("ticket.txt", 13)]["text"] == TICKET[12].decode()
    assert by_line[("ticket.txt", 7)]["text"] == TICKET[6].decode()


def test_reflow_rule_on_pairs_alone(spark: Any, tmp_path: Path) -> None:
    """A pair is kept only when the joined text is a whole template: a line
    followed by another template line, a headed line or nothing stays
    quarantined, and the follower is read on its own."""
    from pipeline.ingest import ingest

    (tmp_path / "broker-4").mkdir()
    lines = [
        # 1: open start followed by a headed line: no pair
        "[2024-05-01 10:00:01,000] INFO [Partition orders-0 broker=4] ISR updated to 4 and",
        "[2024-05-01 10:00:02,000] INFO [Partition orders-0 broker=4] ISR updated to 4 and "
        "version updated to 3 (kafka.cluster.Partition)",
        # 3: open start followed by another open start (needs a look): no pair
        "[2024-05-01 10:00:03,000] INFO [Partition orders-0 broker=4] ISR updated to 4 and",
        "ISR updated to 4,5 and",
        # 5-6: indented continuation that does not complete it: no pair
        "[2024-05-01 10:00:05,000] INFO [Partition orders-0 broker=4] ISR updated to 4 and",
        "\tsomething else entirely",
    ]
    (tmp_path / "broker-4" / "server.log").write_text("\n".join(lines) + "\n")
    r = ingest(spark, [str(tmp_path)], cluster="prod")
    stats = accounting({Path(s.path).name: s.asDict() for s in r.file_stats.collect()})
    assert stats == {"server.log": ("broker_log", 4, 6, 1, 1, 4)}
    quarantined = sorted(q.line_no for q in r.quarantine.collect())
    assert quarantined == [1, 3, 4, 5]
    assert [(e.line_no, e.partition_epoch) for e in r.events.collect()] == [(2, 3)]
