"""ZooKeeper partition-state znode dumps (``/brokers/topics/<t>/partitions/<p>/state``):
zookeeper-shell transcripts (ZK 3.4 ``get``, 3.5+ ``get -s``, with and without
the echoed command, stat lines before or after the JSON), tree dumps, and the
quirks of real files. The znode's JSON per apache/kafka ZkData.scala
``TopicPartitionStateZNode``; the stat lines per ZooKeeper's StatPrinter.

One folder tree, one ingest, shared by the Spark tests; the bridge test is
pure Python.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

STAT_34 = [
    "cZxid = 0x100000034",
    "ctime = Wed May 01 09:00:00 UTC 2024",
    "mZxid = 0x100000090",
    "mtime = Wed May 01 10:00:01 UTC 2024",
    "pZxid = 0x100000034",
    "cversion = 0",
    "dataVersion = 21",
    "aclVersion = 0",
    "ephemeralOwner = 0x0",
    "dataLength = 97",
    "numChildren = 0",
]

#: An interactive session: the prompt echoes each command.
SHELL = [
    "Connecting to zk-1:2181",  # 1
    "Welcome to ZooKeeper!",
    "JLine support is disabled",
    "",
    "WATCHER::",  # 5
    "",
    "WatchedEvent state:SyncConnected type:None path:null",
    "[zk: zk-1:2181(CONNECTED) 0] get /brokers/topics/orders/partitions/0/state",
    # 9: 3.2+ RECOVERING leader (the key is written only then)
    '{"controller_epoch":12,"leader":3,"version":1,"leader_epoch":8,"isr":[3],'
    '"leader_recovery_state":1}',
    *STAT_34,  # 10-20
    # 21: ZK 3.5+ get -s, a chroot, a topic with a dot
    "[zk: zk-1:2181(CONNECTED) 1] get -s /kafka/brokers/topics/my-app.events/partitions/2/state",
    '{"controller_epoch":12,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}',  # 22
    "cZxid = 0x200000010",
    "mtime = Wed May 01 12:00:02 CEST 2024",  # 24
    "dataVersion = 9",  # 25
    # 26-27: another znode's JSON in the same transcript: ignored by rule
    "[zk: zk-1:2181(CONNECTED) 2] get /brokers/ids/1",
    '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":'
    '["PLAINTEXT://k1:9092"],"jmx_port":-1,"host":"k1","timestamp":"1714550000000",'
    '"port":9092,"version":4}',
    # 28-29: a value of the wrong type: quarantined
    "[zk: zk-1:2181(CONNECTED) 3] get /brokers/topics/orders/partitions/1/state",
    '{"controller_epoch":12,"leader":2,"version":1,"leader_epoch":"x","isr":[2]}',
    # 30-31: a required key missing: quarantined
    "[zk: zk-1:2181(CONNECTED) 4] get /brokers/topics/orders/partitions/2/state",
    '{"controller_epoch":12,"leader":2,"version":1,"isr":[2]}',
]

#: Non-interactive with the shell command kept; ZK 3.4 prints the stat on
#: stderr, which came out first here.
STDERR_FIRST = [
    "$ bin/zookeeper-shell.sh zk-1:2181 get /brokers/topics/orders/partitions/3/state",
    "Connecting to zk-1:2181",
    "cZxid = 0x1",
    "mtime = Wed May 01 10:00:03 UTC 2024",
    "dataVersion = 5",
    '{"controller_epoch":12,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2]}',
]

#: ``zookeeper-shell host get <path> > file``: no path anywhere.
NO_PATH = [
    "Connecting to zk-1:2181",
    "",
    "WATCHER::",
    "",
    "WatchedEvent state:SyncConnected type:None path:null",
    '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":2,"isr":[1,2,3]}',
]

#: One ``<path>: <json>`` line per znode; broken lines; a cut last line.
TREE_LINES: list[bytes] = [
    b'/brokers/topics/orders/partitions/4/state: {"controller_epoch":12,"leader":-1,'
    b'"version":1,"leader_epoch":10,"isr":[]}',
    b'/brokers/topics/orders/partitions/5/state = {"controller_epoch":12,"leader":2,'
    b'"version":1,"leader_epoch":1,"isr":[2,1]}',
    b'{"controller_epoch":12,"leader":2,"version":1,"leader_epoch":1,"isr":[2,\xff]}',
    b'{"controller_epoch":12,"leader":2,"version":1,"leader_epoch":1,"isr":[2],"pad":"'
    + b"x" * (2 * 1024 * 1024)
    + b'"}',
    b'/brokers/topics/orders/partitions/6/state: {"controller_epoch":12,"leader":2,"vers',
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("znodes")
    zk = root / "zk"
    zk.mkdir()
    (zk / "shell.txt").write_text("\n".join(SHELL) + "\n")
    (zk / "stderr-first.txt").write_text("\n".join(STDERR_FIRST) + "\n")
    (zk / "no-path.txt").write_text("\n".join(NO_PATH) + "\n")
    (zk / "tree.txt").write_bytes(b"\r\n".join(TREE_LINES))
    # a tree dump: the file's own path names the znode (CRLF ending)
    state = zk / "dump" / "brokers" / "topics" / "payments" / "partitions" / "0" / "state"
    state.parent.mkdir(parents=True)
    state.write_bytes(
        b'{"controller_epoch":3,"leader":5,"version":1,"leader_epoch":0,"isr":[5,6]}\r\n'
    )
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod")
    return {
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.asDict() for q in r.quarantine.collect()),
            key=lambda q: (q["source_file"], q["line_no"]),
        ),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


@pytest.mark.spark
def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


@pytest.mark.spark
def test_accounting_per_file(result: dict[str, Any]) -> None:
    assert accounting(result["file_stats"]) == {
        # (kind, observer, read, parsed, ignored, quarantined)
        "shell.txt": ("znode_dump", None, 31, 2, 27, 2),
        "stderr-first.txt": ("znode_dump", None, 6, 1, 5, 0),
        "no-path.txt": ("znode_dump", None, 6, 0, 5, 1),
        "tree.txt": ("znode_dump", None, 5, 2, 0, 3),
        "state": ("znode_dump", None, 1, 1, 0, 0),
    }


@pytest.mark.spark
def test_shell_transcripts(result: dict[str, Any]) -> None:
    rows = events_of(result, "shell.txt") + events_of(result, "stderr-first.txt")
    assert [(r["line_no"], r["event_time"]) for r in rows] == [
        (9, dt.datetime(2024, 5, 1, 10, 0, 1)),
        (22, dt.datetime(2024, 5, 1, 10, 0, 2)),  # CEST
        (6, dt.datetime(2024, 5, 1, 10, 0, 3)),
    ]
    assert [non_null(r) for r in rows] == [
        {"line_no": 9, "kind": "zk_partition_state", "topic": "orders", "partition": 0,
         "leader": 3, "leader_epoch": 8, "isr": [3], "controller_epoch": 12,
         "partition_epoch": 21, "leader_recovery_state": 1},
        {"line_no": 22, "kind": "zk_partition_state", "topic": "my-app.events", "partition": 2,
         "leader": 1, "leader_epoch": 4, "isr": [1, 2], "controller_epoch": 12,
         "partition_epoch": 9},
        # the stat came before the JSON (stderr first)
        {"line_no": 6, "kind": "zk_partition_state", "topic": "orders", "partition": 3,
         "leader": 1, "leader_epoch": 3, "isr": [1, 2], "controller_epoch": 12,
         "partition_epoch": 5},
    ]  # fmt: skip
    assert all(r["seq"] == r["line_no"] * 100_000 for r in rows)


@pytest.mark.spark
def test_tree_dumps(result: dict[str, Any]) -> None:
    rows = events_of(result, "tree.txt") + events_of(result, "state")
    assert all(r["event_time"] is None for r in rows)  # no stat: no time, no zkVersion
    assert [non_null(r) for r in rows] == [
        # no leader: -1 kept as Kafka writes it; an empty ISR
        {"line_no": 1, "kind": "zk_partition_state", "topic": "orders", "partition": 4,
         "leader": -1, "leader_epoch": 10, "isr": [], "controller_epoch": 12},
        {"line_no": 2, "kind": "zk_partition_state", "topic": "orders", "partition": 5,
         "leader": 2, "leader_epoch": 1, "isr": [2, 1], "controller_epoch": 12},
        # topic and partition from the file's own path
        {"line_no": 1, "kind": "zk_partition_state", "topic": "payments", "partition": 0,
         "leader": 5, "leader_epoch": 0, "isr": [5, 6], "controller_epoch": 3},
    ]  # fmt: skip


@pytest.mark.spark
def test_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest.outcome import INVALID_UTF8_REASON, TOO_LONG_REASON
    from pipeline.ingest.znode_dump import BAD_JSON_REASON, NO_PATH_REASON, UNRECOGNISED_REASON

    got = [(Path(q["source_file"]).name, q["line_no"], q["reason"]) for q in result["quarantine"]]
    assert sorted(got) == [
        ("no-path.txt", 6, NO_PATH_REASON),
        ("shell.txt", 29, BAD_JSON_REASON),
        ("shell.txt", 31, UNRECOGNISED_REASON),
        ("tree.txt", 3, INVALID_UTF8_REASON),
        ("tree.txt", 4, TOO_LONG_REASON),
        ("tree.txt", 5, BAD_JSON_REASON),
    ]
    assert BAD_JSON_REASON == "unreadable znode JSON"
    assert NO_PATH_REASON == "znode path unknown"


def test_bridge_orders_a_timeless_znode_state_by_epoch() -> None:
    """zk_partition_state becomes the replay's LeaderAndIsr; one without a
    time sits between the controller's decisions by leader epoch and zkVersion."""
    from pipeline.bridge import NOT_REPLAYED, to_events
    from replay.order import order_events
    from replay.types import LeaderAndIsr

    assert "zk_partition_state" not in NOT_REPLAYED

    def row(kind: str, line: int, epoch: int, version: int | None, time: Any) -> dict[str, Any]:
        none = dict.fromkeys(
            ("replicas", "adding_replicas", "removing_replicas", "elr", "last_known_elr"), None
        )
        return {
            **none, "kind": kind, "source_file": f"file:/{kind}.txt", "line_no": line,
            "event_time": time, "observer": None, "metadata_offset": None, "seq": line * 100_000,
            "leader": epoch % 3 + 1, "leader_epoch": epoch, "isr": [1, 2, 3],
            "partition_epoch": version, "leader_recovery_state": None, "controller_epoch": 12,
        }  # fmt: skip

    t = dt.datetime(2024, 5, 1, 10, 0, 0)
    rows = [
        row("leader_and_isr", 1, 7, 20, t),
        row("leader_and_isr", 2, 9, 22, t + dt.timedelta(seconds=2)),
        row("zk_partition_state", 9, 8, 21, None),  # a dump: no mtime
    ]
    events, problems = to_events(rows)
    assert problems == []
    zk = events[2]
    assert zk == LeaderAndIsr(zk.origin, 3, 8, (1, 2, 3), 21, None, 12)
    ordered = order_events(events)
    assert [(e.leader_epoch, e.origin.source.line_no) for e in ordered.events] == [
        (7, 1),
        (8, 9),
        (9, 2),
    ]
