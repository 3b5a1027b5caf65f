"""Point-in-time views (formats-addendum.md 12): ``kafka-topics --describe`` in
every version's layout, ``kafka-metadata-shell`` (3.5+ one line, 2.8-3.4 pretty
JSON), ``kafka-log-dirs --describe`` JSON and GetOffsetShell lines, as the
templates of 12.1-12.4 print them; cut and garbled lines of each form.

One folder, one ingest, shared by the Spark tests; the vote is pure Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

ID = "5LHkG7R4S0aKxLbBzyP8wA"
T = "\t"

#: 0.8.2-2.3 (ZooKeeper path): no space after the header's colons, ``Leader:
#: -1`` from the znode; 1.0+ MarkedForDeletion; two runs of the tool.
DESCRIBE_OLD = [
    "Topic:orders\tPartitionCount:2\tReplicationFactor:3\t"
    "Configs:min.insync.replicas=2,unclean.leader.election.enable=true",  # 1
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",  # 2
    "\tTopic: orders\tPartition: 1\tLeader: -1\tReplicas: 2,3,1\tIsr: 2",  # 3
    "",  # 4
    "Topic:orders\tPartitionCount:2\tReplicationFactor:3\tConfigs:\tMarkedForDeletion:true",  # 5
    "\tTopic: orders\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3\tMarkedForDeletion: true",
]

#: 2.4-2.7: spaces after the colons; ``none``; a reassignment in progress
#: (2.6+); a list-valued config whose commas are not separators.
DESCRIBE_27 = [
    "Topic: orders\tPartitionCount: 1\tReplicationFactor: 3\t"
    "Configs: cleanup.policy=compact,delete,unclean.leader.election.enable=false",  # 1
    "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 1,2,3,4\tIsr: 2"
    "\tAdding Replicas: 4\tRemoving Replicas: 1",  # 2
]

#: 3.8 KRaft (the addendum's example: ``LastKnownElr: `` with its trailing
#: space), ``N/A`` against brokers without DescribeTopicPartitions, a run
#: pasted into a ticket (``> ``-quoted, TABs turned to spaces), and cut and
#: garbled lines.
DESCRIBE_38 = [
    f"Topic: orders\tTopicId: {ID}\tPartitionCount: 1\tReplicationFactor: 3\t"
    "Configs: min.insync.replicas=2",  # 1
    "\tTopic: orders\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3\tElr: 1,2\tLastKnownElr: ",
    "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 1,2,3\tIsr: \tElr: N/A"
    "\tLastKnownElr: N/A",  # 3
    "$ kafka-topics.sh --bootstrap-server k1:9092 --describe --topic orders",  # 4: chatter
    f"> Topic: orders    TopicId: {ID}    PartitionCount: 1    ReplicationFactor: 3    "
    "Configs: ",  # 5
    ">     Topic: orders    Partition: 0    Leader: 2    Replicas: 1,2,3    Isr: 2,3"
    "    Elr:     LastKnownElr: 1",  # 6
    "\tTopic: orders\tPartition: 0\tLeader: 3\tRepli",  # 7: cut
    f"Topic: orders\tTopicId: {ID}\tPartitionCou",  # 8: cut header
    "\tTopic: orders\tPartition: 0\tLeader: x\tReplicas: 1,2,3\tIsr: 3",  # 9: garbled
]

#: 3.5+ shell: one line per ``cat``, the partition from the path.
SHELL_IMAGE = [
    "[ Kafka Metadata Shell ]",  # 1
    ">> cat /image/topics/byName/orders/0",  # 2
    # 3: 3.7+ form
    "PartitionRegistration(replicas=[1, 2, 3], directories=[AAAAAAAAAAAAAAAAAAAAAA, "
    "AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2], removingReplicas=[], "
    "addingReplicas=[], elr=[3], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, "
    "leaderEpoch=7, partitionEpoch=21)",
    f">> cat /image/topics/byId/{ID}/1",  # 4
    # 5: 3.5-3.6 form, a RECOVERING leader
    "PartitionRegistration(replicas=[1, 2, 3], isr=[3], removingReplicas=[], addingReplicas=[], "
    "leader=3, leaderRecoveryState=RECOVERING, leaderEpoch=8, partitionEpoch=30)",
    ">> cat /image/topics/byName/orders/2",  # 6
    "PartitionRegistration(replicas=[1, 2, 3], isr=[1, 2], removingReplicas=[], addingR",  # 7 cut
]

#: ``kafka-metadata-shell ... cat /image/topics/byName/orders/0 > file``: no path.
SHELL_NO_PATH = [
    "PartitionRegistration(replicas=[1, 2], isr=[1], removingReplicas=[], addingReplicas=[], "
    "leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=2, partitionEpoch=4)",
]

#: 2.8-3.4 shell: PartitionRecord as Jackson's pretty JSON.
SHELL_PRETTY = [
    ">> cat /topics/orders/0/data",  # 1
    "{",  # 2
    '  "partitionId" : 0,',
    f'  "topicId" : "{ID}",',
    '  "replicas" : [ 1, 2, 3 ],',
    '  "isr" : [ 1, 2 ],',
    '  "removingReplicas" : [ ],',
    '  "addingReplicas" : [ ],',
    '  "leader" : 1,',
    '  "leaderRecoveryState" : 1,',
    '  "leaderEpoch" : 7,',
    '  "partitionEpoch" : 21',
    "}",  # 13
    ">> cat /brokers/1/registration",  # 14: another record: ignored by rule
    "{",  # 15
    '  "brokerId" : 1,',
    '  "brokerEpoch" : 10',
    "}",  # 18
    ">> cat /topics/orders/1/data",  # 19: a garbled value
    "{",  # 20
    '  "partitionId" : 1,',
    '  "leader" : two,',
    '  "leaderEpoch" : 3,',
    '  "isr" : [ 2 ]',
    "}",  # 25
    ">> cat /topicIds/" + ID + "/2/data",  # 26: 2.8 without RECOVERING, then cut
    "{",  # 27
    '  "partitionId" : 2,',
    '  "replicas" : [ 2, 3, 1 ],',
    '  "isr" : [ 2 ],',
    '  "leader" : 2,',
    '  "leaderEpoch" : 5,',
    '  "partitionEpoch" : 9',
    "}",  # 34
    ">> cat /topics/orders/3/data",  # 35
    "{",  # 36: cut before its end
    '  "partitionId" : 3,',
    '  "leader" : 2,',
]

LOG_DIRS = [
    "Querying brokers for log directories information",  # 1
    "Received log directory information from brokers 1,2,3",  # 2
    # 3: two brokers, a future replica of a topic with a dash, a failed dir
    '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/var/kafka-logs","error":null,'
    '"partitions":[{"partition":"orders-0","size":41472,"offsetLag":0,"isFuture":false},'
    '{"partition":"my-topic-10","size":0,"offsetLag":-1,"isFuture":true}]}]},'
    '{"broker":2,"logDirs":[{"logDir":"/d2","error":"KafkaStorageException","partitions":[]}]}]}',
    # 4: 3.6+ HashMap key order
    '{"brokers":[{"logDirs":[{"partitions":[{"isFuture":false,"offsetLag":3,"size":7,'
    '"partition":"orders-1"}],"error":null,"logDir":"/d"}],"broker":3}],"version":1}',
    # 5: cut
    '{"version":1,"brokers":[{"broker":3,"logDirs":[{"logDir":"/d","error":null,"partitions":[{"pa',
    # 6: a partition entry that names no partition
    '{"version":1,"brokers":[{"broker":4,"logDirs":[{"logDir":"/d","error":null,"partitions":'
    '[{"partition":"orders","size":7,"offsetLag":0,"isFuture":false}]}]}]}',
]

OFFSETS = [
    "orders:0:1200",  # 1: 2.0+
    "orders:1:",  # 2: no offset for that timestamp: read, nothing to say
    "orders:2:1500,1000,0",  # 3: <= 1.1 with --offsets 3: the first is the HW
    "orders:3:12a",  # 4: garbled
    "my.topic_x-1:10:77",  # 5
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("views")
    # two clusters: a topic name has one id per cluster only
    files = {
        "cluster=zk/describe-old.txt": DESCRIBE_OLD,
        "cluster=zk/describe-2.7.txt": DESCRIBE_27,
        "cluster=zk/log-dirs.txt": LOG_DIRS,
        "cluster=zk/offsets.txt": OFFSETS,
        "cluster=kraft/describe-3.8.txt": DESCRIBE_38,
        "cluster=kraft/shell-image.txt": SHELL_IMAGE,
        "cluster=kraft/shell-no-path.txt": SHELL_NO_PATH,
        "cluster=kraft/shell-pretty.txt": SHELL_PRETTY,
    }
    for name, lines in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("\n".join(lines) + "\n")
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


def _view(line: int, topic: str, partition: int, leader: int, replicas: list[int],
          isr: list[int], **more: Any) -> dict[str, Any]:  # fmt: skip
    return {"line_no": line, "kind": "partition_view", "topic": topic, "partition": partition,
            "leader": leader, "replicas": replicas, "isr": isr, **more}  # fmt: skip


def test_the_vote_names_every_form() -> None:
    from pipeline.ingest.sniff import classify

    for lines in (DESCRIBE_OLD, DESCRIBE_27, DESCRIBE_38, SHELL_IMAGE, SHELL_NO_PATH,
                  SHELL_PRETTY, LOG_DIRS, OFFSETS):  # fmt: skip
        assert classify("file:/x/out.txt", lines) == "point_in_time_view", lines[0]
    # a broker log quoting a describe line stays a broker log
    log = [
        "[2024-05-01 10:00:00,000] INFO [Partition orders-0 broker=1] Shrinking ISR from "
        "1,2,3 to 1. Leader: (highWatermark: 100, endOffset: 120). Out of sync replicas: "
        "(brokerId: 2, endOffset: 100) (brokerId: 3, endOffset: 100). (kafka.cluster.Partition)"
    ]
    assert classify("file:/x/server.log", log * 2 + DESCRIBE_OLD[:1]) == "broker_log"
    # plain ``a:1:2`` lines decide only a file that is mostly them
    assert classify("file:/x/notes.txt", ["see below", "", "orders:0:5", "x", "y"]) == (
        "unrecognised"
    )


@pytest.mark.spark
def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


@pytest.mark.spark
def test_accounting_per_file(result: dict[str, Any]) -> None:
    assert accounting(result["file_stats"]) == {
        # (kind, observer, read, parsed, ignored, quarantined)
        "describe-old.txt": ("point_in_time_view", None, 6, 5, 1, 0),
        "describe-2.7.txt": ("point_in_time_view", None, 2, 2, 0, 0),
        "describe-3.8.txt": ("point_in_time_view", None, 9, 5, 1, 3),
        "shell-image.txt": ("point_in_time_view", None, 7, 2, 4, 1),
        "shell-no-path.txt": ("point_in_time_view", None, 1, 0, 0, 1),
        "shell-pretty.txt": ("point_in_time_view", None, 38, 2, 34, 2),
        "log-dirs.txt": ("point_in_time_view", None, 6, 2, 2, 2),
        "offsets.txt": ("point_in_time_view", None, 5, 3, 1, 1),
    }
    for s in result["file_stats"].values():
        assert s["lines_read"] == s["lines_parsed"] + s["lines_ignored"] + s["lines_quarantined"]


@pytest.mark.spark
def test_describe_every_layout(result: dict[str, Any]) -> None:
    rows = [non_null(r) for r in events_of(result, "describe-old.txt")]
    assert rows == [
        {"line_no": 1, "kind": "topic_config", "topic": "orders", "min_isr": 2,
         "unclean_election_enabled": True},
        _view(2, "orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        _view(3, "orders", 1, -1, [2, 3, 1], [2]),  # the znode's -1
        {"line_no": 5, "kind": "topic_config", "topic": "orders"},  # nothing listed: unknown
        _view(6, "orders", 0, 3, [1, 2, 3], [3]),
    ]  # fmt: skip
    rows = [non_null(r) for r in events_of(result, "describe-2.7.txt")]
    assert rows == [
        {"line_no": 1, "kind": "topic_config", "topic": "orders",
         "unclean_election_enabled": False},
        _view(2, "orders", 0, -1, [1, 2, 3, 4], [2], adding_replicas=[4], removing_replicas=[1]),
    ]  # fmt: skip
    events = events_of(result, "describe-3.8.txt")
    # a sampled timeline: no time, file order only; the header's id fills the lines'
    assert all(r["event_time"] is None for r in events)
    assert [r["seq"] for r in events] == [n * 100_000 for n in (1, 2, 3, 5, 6)]
    assert [non_null(r) for r in events] == [
        {"line_no": 1, "kind": "topic_config", "topic": "orders", "topic_id": ID, "min_isr": 2},
        _view(2, "orders", 0, 3, [1, 2, 3], [3], topic_id=ID, elr=[1, 2], last_known_elr=[]),
        _view(3, "orders", 0, -1, [1, 2, 3], [], topic_id=ID),  # N/A: not known
        {"line_no": 5, "kind": "topic_config", "topic": "orders", "topic_id": ID},
        _view(6, "orders", 0, 2, [1, 2, 3], [2, 3], topic_id=ID, elr=[], last_known_elr=[1]),
    ]  # fmt: skip


@pytest.mark.spark
def test_metadata_shell(result: dict[str, Any]) -> None:
    rows = [non_null(r) for r in events_of(result, "shell-image.txt")]
    assert rows == [
        _view(3, "orders", 0, 1, [1, 2, 3], [1, 2], topic_id=ID, removing_replicas=[],
              adding_replicas=[], elr=[3], last_known_elr=[], leader_epoch=7,
              partition_epoch=21, leader_recovery_state=0),
        # by id: the name comes from the other paths' topic id (a topic id
        # has one name), read from this run's describe header
        _view(5, "orders", 1, 3, [1, 2, 3], [3], topic_id=ID, removing_replicas=[],
              adding_replicas=[], leader_epoch=8, partition_epoch=30, leader_recovery_state=1),
    ]  # fmt: skip
    rows = [non_null(r) for r in events_of(result, "shell-pretty.txt")]
    assert rows == [
        _view(2, "orders", 0, 1, [1, 2, 3], [1, 2], topic_id=ID, removing_replicas=[],
              adding_replicas=[], leader_epoch=7, partition_epoch=21, leader_recovery_state=1),
        _view(27, "orders", 2, 2, [2, 3, 1], [2], topic_id=ID, leader_epoch=5,
              partition_epoch=9, leader_recovery_state=0),
    ]  # fmt: skip


@pytest.mark.spark
def test_log_dirs_and_offsets(result: dict[str, Any]) -> None:
    rows = [non_null(r) for r in events_of(result, "log-dirs.txt")]
    assert rows == [
        {"line_no": 3, "kind": "log_dir_view", "replica": 1, "topic": "orders", "partition": 0,
         "records_size": 41472, "offset_lag": 0, "is_future": False},
        {"line_no": 3, "kind": "log_dir_view", "replica": 1, "topic": "my-topic", "partition": 10,
         "records_size": 0, "offset_lag": -1, "is_future": True},
        {"line_no": 4, "kind": "log_dir_view", "replica": 3, "topic": "orders", "partition": 1,
         "records_size": 7, "offset_lag": 3, "is_future": False},
    ]  # fmt: skip
    assert [r["seq"] for r in events_of(result, "log-dirs.txt")] == [300_000, 300_001, 400_000]
    rows = [non_null(r) for r in events_of(result, "offsets.txt")]
    assert rows == [
        {"line_no": 1, "kind": "offset_view", "topic": "orders", "partition": 0,
         "end_offset": 1200},
        {"line_no": 3, "kind": "offset_view", "topic": "orders", "partition": 2,
         "end_offset": 1500},
        {"line_no": 5, "kind": "offset_view", "topic": "my.topic_x-1", "partition": 10,
         "end_offset": 77},
    ]  # fmt: skip


@pytest.mark.spark
def test_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest import views

    got = [(Path(q["source_file"]).name, q["line_no"], q["reason"]) for q in result["quarantine"]]
    assert sorted(got) == [
        ("describe-3.8.txt", 7, views.DESCRIBE_REASON),
        ("describe-3.8.txt", 8, views.DESCRIBE_REASON),
        ("describe-3.8.txt", 9, views.DESCRIBE_REASON),
        ("log-dirs.txt", 5, views.LOG_DIRS_REASON),
        ("log-dirs.txt", 6, views.LOG_DIRS_REASON),
        ("offsets.txt", 4, views.OFFSETS_REASON),
        ("shell-image.txt", 7, views.REGISTRATION_REASON),
        ("shell-no-path.txt", 1, views.NO_PATH_REASON),
        ("shell-pretty.txt", 20, views.PRETTY_REASON),
        ("shell-pretty.txt", 36, views.PRETTY_REASON),
    ]
    texts = {(Path(q["source_file"]).name, q["line_no"]): q["text"] for q in result["quarantine"]}
    assert texts[("describe-3.8.txt", 7)] == DESCRIBE_38[6]


@pytest.mark.spark
def test_simulated_describe_snapshots(spark: Any, tmp_path: Path) -> None:
    """zk-unclean-describe-only: 2.4's ``kafka-topics --describe`` every 5 s,
    nothing else. Every line is read, in file order, with the values the
    tool printed; the first leader outside the ISR of the view before it is
    the truth's unclean leader."""
    import simulator
    from pipeline.ingest import ingest

    truth = simulator.simulate("zk-unclean-describe-only", tmp_path)
    describe = tmp_path / "describe" / "kafka-topics-describe.txt"
    text = describe.read_text().splitlines()
    r = ingest(spark, [str(tmp_path / "describe")], cluster="c")
    [stats] = [s.asDict() for s in r.file_stats.collect()]
    assert (stats["kind"], stats["lines_read"], stats["lines_parsed"]) == (
        "point_in_time_view",
        len(text),
        len(text),
    )
    assert r.quarantine.count() == 0
    events = sorted((e.asDict() for e in r.events.collect()), key=lambda e: e["seq"])
    assert [e["line_no"] for e in events] == list(range(1, len(text) + 1))
    assert all(e["event_time"] is None for e in events)
    # the values as printed (split by hand, the oracle)
    printed = []
    for line in text:
        fields = dict(f.split(": ", 1) for f in line.strip("\t").split("\t"))
        if "Partition" in fields:
            printed.append(
                ("partition_view", fields["Topic"], int(fields["Partition"]),
                 -1 if fields["Leader"] == "none" else int(fields["Leader"]),
                 [int(x) for x in fields["Replicas"].split(",")],
                 [int(x) for x in fields["Isr"].split(",") if x], None)
            )  # fmt: skip
        else:
            unclean = fields["Configs"] == "unclean.leader.election.enable=true"
            printed.append(("topic_config", fields["Topic"], None, None, None, None, unclean))
    got = [
        (e["kind"], e["topic"], e["partition"], e["leader"], e["replicas"], e["isr"],
         e["unclean_election_enabled"])
        for e in events
    ]  # fmt: skip
    assert got == printed
    views = [e for e in events if e["kind"] == "partition_view"]
    outside = [b for a, b in zip(views, views[1:], strict=False) if b["leader"] not in a["isr"]]
    [unclean] = [f for f in truth["findings"] if f["kind"] == "unclean_election"]
    assert [(v["topic"], v["partition"], v["leader"]) for v in outside[:1]] == [
        (unclean["topic"], unclean["partition"], unclean["replica"])
    ]


def test_the_simulators_describe_layouts_all_read(tmp_path: Path) -> None:
    """Every version's describe layout the simulator writes (0.10 to 4.0):
    every line is one of the reader's forms (the same patterns Spark runs),
    with the values written, and the file votes as a view."""
    import re

    from pipeline.ingest import views
    from pipeline.ingest.sniff import classify
    from simulator.describe import Describe
    from simulator.model import Registration
    from simulator.versions import VERSIONS

    regs = [(0, Registration([1, 2, 3], [2], 2, elr=[3], lkelr=[])),
            (1, Registration([2, 3, 1], [], -1, elr=[], lkelr=[1]))]  # fmt: skip
    for name, version in VERSIONS.items():
        path = tmp_path / name / "describe.txt"
        d = Describe(path, version)
        d.snapshot([("orders", ID, {"min.insync.replicas": "2"}, regs)])
        d.close()
        lines = path.read_text().splitlines()
        assert classify(str(path), lines) == "point_in_time_view", name
        header = re.search(views._HEADER, lines[0])
        assert header is not None, (name, lines[0])
        assert (header.group(1), header.group(2), header.group(5)) == (
            "orders", ID if version.at_least("2.8") else None, "min.insync.replicas=2"
        ), name  # fmt: skip
        got = []
        for line in lines[1:]:
            m = re.search(views._PARTITION, line)
            assert m is not None, (name, line)
            got.append(m.group(2, 3, 4, 5, 8, 9))
        none = "-1" if version.before("2.4") else "none"
        elr = version.at_least("3.8")
        assert got == [
            ("0", "2", "1,2,3", "2", "3" if elr else None, "" if elr else None),
            ("1", none, "2,3,1", "", "" if elr else None, "1" if elr else None),
        ], name
