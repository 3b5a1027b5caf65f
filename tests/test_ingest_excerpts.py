"""Broker log lines as people paste them into a ticket (issue 13.2): no
timestamp, no level, the message with its logIdent, indented, ``> ``-quoted
or with the logger first, in a file of any name; read in file order, with no
event time. And (13.5) a file carrying a Kafka artefact's own name and a line
is never ``unrecognised``.

One ingest reads a hand-made ticket and three simulator runs that write each
log both as itself and as a pasted excerpt (one style each): the excerpt's
events are the log's, line for line, without their time.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import EVERY_EVENT, accounting, events_of, non_null

FETCHER = "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0]"
ULOG = "[UnifiedLog partition=orders-0, dir=/var/lib/kafka/data]"
ORDERS = "5LHkG7R4S0aKxLbBzyP8wA"

TICKET = [
    # 1: indented, with its logIdent
    "    [Broker id=2] Leader orders-0 starts at leader epoch 5 from offset 3200 with high "
    "watermark 3100 ISR [1,2] addingReplicas [] removingReplicas []. Previous leader epoch was 4.",
    # 2: quoted
    f"> {FETCHER} Truncating partition orders-0 to local high watermark 2900",
    # 3: the logger first
    f"kafka.log.UnifiedLog: {ULOG} Truncating to offset 2900",
    # 4: the message alone, with its prefix
    f"{FETCHER} Truncating orders-0 to offset 2800 below high watermark 2900",
    # 5: quoted twice (a reply)
    "> > [Partition orders-0 broker=2] Shrinking ISR from 2,1 to 2. Leader: (highWatermark: "
    "3100, endOffset: 3200). Out of sync replicas: (brokerId: 1, endOffset: 2900).",
    # 6: a tab
    "\t[Broker id=1] Follower orders-0 starts at leader epoch 6 from offset 2900 with high "
    "watermark 2900.",
    # 7: the logger first, 2.8+ ISR confirmation
    "kafka.cluster.Partition: [Partition orders-0 broker=2] ISR updated to 2 and version updated "
    "to 14",
    # 8: a startup line, quoted
    "> Recovering 2 logs from /var/lib/kafka/data since no clean shutdown file was found",
    # 9: blank: ignored
    "",
    # 10: a person's words, indented: ignored by rule
    "    this is where it went wrong",
    # 11: cut inside its template: quarantined
    "> [Partition orders-0 broker=2] Shrinking ISR from 2,1 to 2. Leader: (highWatermark: x",
    # 12: not a log line: quarantined
    "@@@ garbage @@@",
    # 13: quoted, then cut: quarantined
    "> [Broker id=1] Follower orders-1 starts at leader epoch 6 from offset 29",
]

#: the simulator runs: (folder, scenario, knobs)
SIMULATED = (
    ("quote", "kraft-unclean-election", {"excerpts": "quote"}),
    ("logger", "seed000-hw-truncation-0.10", {"excerpts": "logger", "startup_lines": True}),
    ("indent", "kraft-recovery-cut", {"excerpts": "indent"}),
)
LOGS = ("server", "state-change", "controller")
#: events of the three runs' logs (each also read from its excerpt)
COMPARED = 42


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import simulator

    root = tmp_path_factory.mktemp("excerpts")
    (root / "hand" / "ticket").mkdir(parents=True)
    (root / "hand" / "ticket" / "notes.txt").write_text("\n".join(TICKET) + "\n")
    for folder, scenario, knobs in SIMULATED:
        out = root / "sim" / folder
        simulator.simulate(scenario, out, **knobs)
        for p in list(out.rglob("*")):
            # keep the broker and controller logs and their excerpts only
            if p.is_file() and not p.name.startswith(LOGS):
                p.unlink()
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="ticket")
    root = str(tree) + "/"
    return {
        "root": tree,
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.source_file.split(root, 1)[1], q.line_no, q.reason) for q in r.quarantine.collect()
        ),
        "file_stats": {s.path.split(root, 1)[1]: s.asDict() for s in r.file_stats.collect()},
    }


@pytest.mark.spark
def test_ticket_read_as_what_it_is(result: dict[str, Any]) -> None:
    assert accounting(result["file_stats"])["hand/ticket/notes.txt"] == (
        "broker_log",
        None,
        13,
        8,
        2,
        3,
    )
    rows = events_of(result, "hand/ticket/notes.txt")
    assert all(r["event_time"] is None for r in rows)
    # the topic id is the one the simulated folders' leader lines print for
    # "orders" (one cluster: the topic-name join fills it)
    assert {r["topic_id"] for r in rows if r["topic"] == "orders"} == {ORDERS}
    assert [non_null(r, EVERY_EVENT | {"topic_id"}) for r in rows] == [
        {"line_no": 1, "kind": "become_leader", "topic": "orders", "partition": 0, "replica": 2,
         "leader": 2, "leader_epoch": 5, "leo": 3200, "hwm": 3100, "isr": [1, 2]},
        {"line_no": 2, "kind": "truncation", "topic": "orders", "partition": 0, "replica": 1,
         "truncate_to": 2900, "hwm": 2900, "leader": 2},  # the fetcher's leaderId
        # no broker in the prefix, none in the path: the replica is unknown
        {"line_no": 3, "kind": "truncation", "topic": "orders", "partition": 0,
         "truncate_to": 2900},
        {"line_no": 4, "kind": "truncation", "topic": "orders", "partition": 0, "replica": 1,
         "truncate_to": 2800, "hwm": 2900, "leader": 2},
        {"line_no": 5, "kind": "isr_shrink", "topic": "orders", "partition": 0, "replica": 2,
         "isr": [2], "hwm": 3100, "leo": 3200},
        {"line_no": 6, "kind": "become_follower", "topic": "orders", "partition": 0,
         "replica": 1, "leader_epoch": 6, "leo": 2900, "hwm": 2900},
        {"line_no": 7, "kind": "isr_updated", "topic": "orders", "partition": 0, "replica": 2,
         "isr": [2], "partition_epoch": 14},
        {"line_no": 8, "kind": "broker_restart", "clean_shutdown": False},
    ]  # fmt: skip


@pytest.mark.spark
def test_ticket_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest.broker_log import NOT_A_LOG_LINE_REASON

    got = [q for q in result["quarantine"] if q[0].startswith("hand/")]
    assert got == [
        ("hand/ticket/notes.txt", 11, "unrecognised isr_shrink message"),
        ("hand/ticket/notes.txt", 12, NOT_A_LOG_LINE_REASON),
        ("hand/ticket/notes.txt", 13, "unrecognised become_follower message"),
    ]


@pytest.mark.spark
def test_simulated_excerpts_give_the_logs_events(result: dict[str, Any]) -> None:
    root: Path = result["root"]
    compared = 0
    for folder, _, _ in SIMULATED:
        for log in sorted((root / "sim" / folder).rglob("*.log")):
            excerpt = log.with_name(f"{log.stem}-excerpt.txt")
            assert excerpt.is_file(), excerpt
            full = events_of(result, str(log.relative_to(root)))
            pasted = events_of(result, str(excerpt.relative_to(root)))
            assert all(r["event_time"] is None for r in pasted)
            assert all(r["event_time"] is not None for r in full)

            def same(r: dict[str, Any]) -> dict[str, Any]:
                return {k: v for k, v in r.items() if k not in ("source_file", "event_time")}

            assert [same(r) for r in pasted] == [same(r) for r in full], excerpt
            compared += len(full)
    assert compared == COMPARED
    assert not [q for q in result["quarantine"] if q[0].startswith("sim/")]


# --- Kafka's own file names (13.5) -------------------------------------------------------

NAMED = {
    "server.log": "broker_log",
    "server.log.1": "broker_log",
    "server.log.2024-05-01-10": "broker_log",
    "state-change.log": "broker_log",
    "state-change.log.2024-05-01-10": "broker_log",
    "controller.log": "broker_log",
    "controller.log.3": "broker_log",
    "kafka-request.log": "request_log",
    "kafka-request.log.2024-05-01-10": "request_log",
    "leader-epoch-checkpoint": "checkpoint",
    "replication-offset-checkpoint": "checkpoint",
    "recovery-point-offset-checkpoint": "checkpoint",
    "log-start-offset-checkpoint": "checkpoint",
    "cleaner-offset-checkpoint": "checkpoint",
    "partition.metadata": "checkpoint",
}


def test_kafka_names_are_never_unrecognised(tmp_path: Path) -> None:
    from pipeline.ingest import sniff

    folder = tmp_path / "broker-1" / "orders-0"
    folder.mkdir(parents=True)
    # one line no reader votes for, in every named form; the logs gzipped too
    # (a rotated log often is; Kafka never compresses a checkpoint)
    logs = {n: k for n, k in NAMED.items() if k != "checkpoint"}
    for name in NAMED:
        (folder / name).write_text("nothing a reader knows\n")
    for name in logs:
        with gzip.open(folder / f"{name}.gz", "wb") as f:
            f.write(b"nothing a reader knows\n")
    (folder / "notes.txt").write_text("nothing a reader knows\n")
    (folder / "server.log.empty").write_text("")
    got = {p.name: sniff.sniff_one(None, str(p)).kind for p in sorted(folder.iterdir())}
    expected = {**NAMED, **{f"{n}.gz": k for n, k in logs.items()}}
    expected |= {"notes.txt": "unrecognised", "server.log.empty": "unrecognised"}
    assert got == expected
    # a file in the log4j layout is a broker log whatever its name, even when
    # no line of it is one the replay uses
    layout = tmp_path / "app.txt"
    layout.write_text(
        "[2024-05-01 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
    )
    assert sniff.sniff_one(None, str(layout)).kind == "broker_log"
