"""The simulator's ZooKeeper eras: zk-epoch (Kafka 2.8) and zk-hw (0.8-0.10).

Exact log templates (kafka-formats.md 1.6, 4, 5.2-5.6), the ZK controller's
LeaderAndIsr writes, determinism, and the exact truth of each ZK scenario.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import simulator
from simulator.api import run
from simulator.cluster import Cluster
from simulator.scenarios import ZK_NAMED, build
from simulator.truth import Truth

ZK = list(ZK_NAMED)
LAYOUT = re.compile(
    r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] (INFO|WARN) (.*) \(([\w.$]+)\)$"
)
TP = r"[\w.-]+-\d+"
LIST = r"List\((?P<isr>\d+(?:, \d+)*)?\)"
FETCHER = r"\[ReplicaFetcher replicaId=\d+, leaderId=\d+, fetcherId=0\] "
LOG = r"\[Log partition=[\w.-]+-\d+, dir=/var/lib/kafka/data\] "
CONTROLLER_STATE = re.compile(
    rf"^\[Controller id=(?P<id>\d+) epoch=(?P<epoch>\d+)\] Changed partition (?P<tp>{TP}) "
    r"from (?P<frm>NewPartition|OnlinePartition|OfflinePartition) to "
    r"(?P<to>OnlinePartition|OfflinePartition) with state LeaderAndIsr\(leader=(?P<leader>-?\d+), "
    rf"leaderEpoch=(?P<le>\d+), isr={LIST}, zkVersion=(?P<zk>\d+)\)$"
)
CONTROLLER_LOG = [
    re.compile(
        r"^\[Controller id=(\d+)\] (\d+) successfully elected as the controller\. Epoch "
        r"incremented to (\d+) and epoch zk version is now (\d+)$"
    ),
    re.compile(r"^\[Controller id=\d+\] Broker failure callback for \d+(,\d+)*$"),
    re.compile(
        r"^\[Controller id=\d+\] Newly added brokers: \d+, deleted brokers: , bounced "
        r"brokers: , all live brokers: \d+(,\d+)*$"
    ),
]
# 2.8-3.2 (kafka-formats.md 5.5): no topic id, no partition epoch
LEADER_28 = re.compile(
    rf"^\[Broker id=\d+\] Leader ({TP}) starts at leader epoch (\d+) from offset (\d+) with "
    r"high watermark (\d+) ISR \[([\d,]*)\] addingReplicas \[\] removingReplicas \[\]\. "
    r"Previous leader epoch was (-?\d+)\.$"
)
FOLLOWER_28 = re.compile(
    rf"^\[Broker id=\d+\] Follower ({TP}) starts at leader epoch (\d+) from offset (\d+) with "
    r"high watermark (\d+)\. Previous leader epoch was (-?\d+)\.$"
)
SERVER = {
    ("INFO", "kafka.log.Log"): re.compile(
        rf"^{LOG}(Truncating to offset \d+|Truncating to \d+ has no effect as the largest "
        r"offset in the log is -?\d+)$"
    ),
    ("WARN", "kafka.server.ReplicaFetcherThread"): re.compile(
        rf"^{FETCHER}(Truncating {TP} to offset \d+ below high watermark \d+|Reset fetch "
        rf"offset for partition {TP} from \d+ to current leader's latest offset \d+)$"
    ),
    ("INFO", "kafka.server.ReplicaFetcherThread"): re.compile(
        rf"^{FETCHER}Truncating partition {TP} to local high watermark \d+$"
    ),
    ("INFO", "kafka.cluster.Partition"): re.compile(
        rf"^\[Partition {TP} broker=\d+\] (Shrinking ISR from [\d,]+ to [\d,]+\. Leader: "
        r"\(highWatermark: \d+, endOffset: \d+\)\. Out of sync replicas: .*\.|"
        r"ISR updated to [\d,]+ and version updated to \[\d+\]|"  # 2.8-3.0
        r"ISR updated to \[[\d,]+\] and zkVersion updated to \[\d+\]|"  # <= 2.6 (zk-hw)
        r"Expanding ISR from [\d,]+ to [\d,]+)$"  # <= 2.7 (zk-hw)
    ),
}


def lines(path: Path) -> list[tuple[str, str, str, str]]:
    out, last = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = LAYOUT.match(line)
        assert m, line
        assert m.group(1) >= last, line
        last = m.group(1)
        out.append((m.group(1), m.group(2), m.group(3), m.group(4)))
    return out


def controller_changes(out: Path) -> list[re.Match[str]]:
    found = []
    for _, level, message, logger in lines(out / "controller" / "state-change.log"):
        assert (level, logger) == ("INFO", "state.change.logger")
        m = CONTROLLER_STATE.match(message)
        assert m, message
        found.append(m)
    return found


def check_zk_logs(out: Path, brokers: list[int], era: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for b in brokers:
        for _, level, message, logger in lines(out / f"broker-{b}" / "state-change.log"):
            assert (level, logger) == ("INFO", "state.change.logger")
            assert message.startswith(f"[Broker id={b}] ")
            kind = "leader" if LEADER_28.match(message) else "follower"
            assert kind == "leader" or FOLLOWER_28.match(message), message
            counts[kind] = counts.get(kind, 0) + 1
        for _, level, message, logger in lines(out / f"broker-{b}" / "server.log"):
            assert SERVER[(level, logger)].match(message), message
            if era == "zk-epoch":
                assert "zkVersion" not in message and "Expanding" not in message
                assert "local high watermark" not in message, message
            else:
                assert "version updated to [" not in message or "zkVersion" in message
            counts[logger] = counts.get(logger, 0) + 1
    for _, level, message, logger in lines(out / "controller" / "controller.log"):
        assert (level, logger) == ("INFO", "kafka.controller.KafkaController")
        assert any(r.match(message) for r in CONTROLLER_LOG), message
    counts["controller"] = len(controller_changes(out))
    return counts


# -- formats ---------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ZK)
def test_every_zk_scenario_writes_its_eras_artefacts(tmp_path: Path, scenario: str) -> None:
    truth, cluster = run(scenario, tmp_path, check=True)
    era = truth["era"]
    assert era == ("zk-epoch" if scenario.startswith("zk-epoch") else "zk-hw")
    assert cluster.violations == []
    assert truth == json.loads((tmp_path / "truth.json").read_text())
    assert not (tmp_path / "controller" / "metadata.log.txt").exists()  # no KRaft dump
    counts = check_zk_logs(tmp_path, sorted(cluster.brokers), era)
    assert counts["leader"] >= 1 and counts["controller"] >= 1
    params = truth["params"]
    assert "metadata.version" not in params and "broker.session.timeout.ms" not in params
    assert params["inter.broker.protocol.version"] == (
        "2.8-IV1" if era == "zk-epoch" else "0.10.1-IV2"
    )
    for b, broker in cluster.brokers.items():
        folder = tmp_path / f"broker-{b}"
        data = folder / "data"
        assert (data / "replication-offset-checkpoint").is_file()
        assert (data / "recovery-point-offset-checkpoint").is_file()
        for topic, p in broker.replicas:
            epochs = data / f"{topic}-{p}" / "leader-epoch-checkpoint"
            assert epochs.is_file() == (era == "zk-epoch")
        # zk-epoch: KIP-673 JSON; zk-hw: 0.10.1 TRACE text (fetch offsets)
        assert (folder / "kafka-request.log").is_file()


def test_controller_lines_follow_the_zk_rules(tmp_path: Path) -> None:
    """zkVersion + 1 on every write; leader epoch + 1 on every leader change and
    controller ISR removal, never on the leader's own ISR change; unclean only
    from OfflinePartition with ISR = [new leader]."""
    run("zk-epoch-unclean", tmp_path)
    found = controller_changes(tmp_path)
    assert found[0]["frm"] == "NewPartition"
    assert (found[0]["leader"], found[0]["le"], found[0]["zk"]) == ("1", "0", "0")
    prev = found[0]
    for m in found[1:]:
        assert int(m["zk"]) == int(prev["zk"]) + 1  # zkVersion
        if m["leader"] != prev["leader"]:
            assert int(m["le"]) == int(prev["le"]) + 1
        prev = m
    states = [(m["frm"], m["to"], m["leader"], m["le"], m["isr"]) for m in found]
    assert states == [
        ("NewPartition", "OnlinePartition", "1", "0", "1, 2, 3"),
        ("OnlinePartition", "OnlinePartition", "1", "0", "1"),  # leader 1 shrinks: same epoch
        ("OfflinePartition", "OnlinePartition", "2", "1", "2"),  # unclean: ISR [2]
        ("OnlinePartition", "OnlinePartition", "2", "1", "2, 3"),
        ("OnlinePartition", "OnlinePartition", "2", "1", "2, 3, 1"),
    ]
    # broker 1 was the controller; its ZK session expired: broker 2 took over
    assert {(m["id"], m["epoch"]) for m in found[:2]} == {("1", "1")}
    assert {(m["id"], m["epoch"]) for m in found[2:]} == {("2", "2")}
    log = [m for _, _, m, _ in lines(tmp_path / "controller" / "controller.log")]
    assert log[:3] == [
        "[Controller id=1] 1 successfully elected as the controller. Epoch incremented to 1 "
        "and epoch zk version is now 1",
        "[Controller id=2] 2 successfully elected as the controller. Epoch incremented to 2 "
        "and epoch zk version is now 2",
        "[Controller id=2] Broker failure callback for 1",
    ]


def test_exact_lines_of_the_unclean_story(tmp_path: Path) -> None:
    run("zk-epoch-unclean", tmp_path)
    sc = [m for _, _, m, _ in lines(tmp_path / "controller" / "state-change.log")]
    assert sc[2] == (
        "[Controller id=2 epoch=2] Changed partition orders-0 from OfflinePartition to "
        "OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=1, isr=List(2), "
        "zkVersion=2)"
    )
    b2 = [m for _, _, m, _ in lines(tmp_path / "broker-2" / "state-change.log")]
    assert b2[1] == (
        "[Broker id=2] Leader orders-0 starts at leader epoch 1 from offset 100 with high "
        "watermark 90 ISR [2] addingReplicas [] removingReplicas []. Previous leader epoch was 0."
    )
    b1 = lines(tmp_path / "broker-1" / "server.log")
    assert [(lv, m) for _, lv, m, _ in b1][1:] == [
        ("INFO", "[Partition orders-0 broker=1] ISR updated to 1 and version updated to [1]"),
        (
            "WARN",
            "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating orders-0 to "
            "offset 100 below high watermark 301",
        ),
        ("INFO", "[Log partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 100"),
    ]
    b1sc = [m for _, _, m, _ in lines(tmp_path / "broker-1" / "state-change.log")]
    assert b1sc[-1] == (
        "[Broker id=1] Follower orders-0 starts at leader epoch 1 from offset 301 with high "
        "watermark 301. Previous leader epoch was 0."
    )


def test_fetch_v12_in_the_2_8_json_shape(tmp_path: Path) -> None:
    run("zk-epoch-unclean", tmp_path)
    diverging = []
    for b in (1, 2, 3):
        for line in (tmp_path / f"broker-{b}" / "kafka-request.log").read_text().splitlines():
            body = json.loads(line.split("Completed request:", 1)[1].rsplit(" (", 1)[0])
            header = body["requestHeader"]
            if header["requestApiKey"] != 1:
                assert header["requestApiKeyName"] == "PRODUCE"
                continue
            assert header["requestApiVersion"] == 12
            topic = body["request"]["topics"][0]
            assert list(topic) == ["topic", "partitions"] and topic["topic"] == "orders"
            assert list(topic["partitions"][0]) == [
                "partition",
                "currentLeaderEpoch",
                "fetchOffset",
                "lastFetchedEpoch",
                "logStartOffset",
                "partitionMaxBytes",
            ]
            answer = body["response"]["responses"][0]
            assert list(answer) == ["topic", "partitionResponses"]
            for part in answer["partitionResponses"]:
                keys = [k for k in part if k != "divergingEpoch"]
                assert keys == [
                    "partition",
                    "errorCode",
                    "highWatermark",
                    "lastStableOffset",
                    "logStartOffset",
                    "abortedTransactions",
                    "preferredReadReplica",
                    "recordSetSizeInBytes",
                ]
                if "divergingEpoch" in part:
                    diverging.append((b, part["divergingEpoch"]))
            assert "topicId" not in line and "recordsSizeInBytes" not in line
    assert diverging == [(2, {"epoch": 0, "endOffset": 100})]


def test_hw_truncation_lines_and_checkpoints(tmp_path: Path) -> None:
    run("seed000-hw-truncation", tmp_path)
    a = [(lv, m) for _, lv, m, _ in lines(tmp_path / "broker-1" / "server.log")]
    assert (
        "INFO",
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition seed-0 "
        "to local high watermark 10",
    ) in a
    assert ("INFO", "[Log partition=seed-0, dir=/var/lib/kafka/data] Truncating to offset 10") in a
    assert ("INFO", "[Partition seed-0 broker=1] Expanding ISR from 1 to 1,2") in a
    assert (
        "INFO",
        "[Partition seed-0 broker=1] ISR updated to [1,2] and zkVersion updated to [2]",
    ) in a
    sc = [m for _, _, m, _ in lines(tmp_path / "broker-1" / "state-change.log")]
    assert sc[1:] == [
        # m2 (10) and the acks=1 record (11) fetched, HW 10 from the checkpoint
        "[Broker id=1] Follower seed-0 starts at leader epoch 0 from offset 12 with high "
        "watermark 10. Previous leader epoch was -1.",
        "[Broker id=1] Leader seed-0 starts at leader epoch 1 from offset 10 with high "
        "watermark 10 ISR [1] addingReplicas [] removingReplicas []. Previous leader epoch was 0.",
    ]
    for b in (1, 2):
        data = tmp_path / f"broker-{b}" / "data"
        assert (data / "replication-offset-checkpoint").read_text() == "0\n1\nseed 0 10\n"
        assert sorted(p.name for p in data.iterdir()) == [
            "recovery-point-offset-checkpoint",
            "replication-offset-checkpoint",
        ]


# -- truth -------------------------------------------------------------------------------


def F(
    kind: str,
    topic: str,
    epoch: int,
    replica: int | None,
    start: int | None,
    end: int | None,
    lost: int | None,
    qualifier: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "topic": topic,
        "partition": 0,
        "leader_epoch": epoch,
        "replica": replica,
        "offset_start": start,
        "offset_end": end,
        "records_lost": lost,
        "qualifier": qualifier,
    }


EXPECTED: dict[str, list[dict[str, Any]]] = {
    "zk-epoch-clean": [],
    "zk-epoch-unclean": [
        F("unclean_election", "orders", 1, 2, 100, 301, 201),
        F("committed_data_loss", "orders", 1, None, 100, 301, 201),
        F("hwm_regression", "orders", 1, 2, 100, 301, None),
        F("truncation_below_hwm", "orders", 1, 1, 100, 301, 201, "global"),
    ],
    # A truncates m2 to its HW while B holds it (local); A leads epoch 1 from 10
    # (m2 lost); B returns and truncates the last copy (global); A exposes 10.
    "seed000-hw-truncation": [
        F("truncation_below_hwm", "seed", 0, 1, 10, 11, None, "local"),
        F("committed_data_loss", "seed", 1, None, 10, 11, 1),
        F("truncation_below_hwm", "seed", 1, 2, 10, 11, 1, "global"),
        F("hwm_regression", "seed", 1, 1, 10, 11, None),
    ],
    # A's m2 (acks=1) is above its HW: truncated as A starts following; nothing committed lost
    "seed000-divergence-hw": [],
}


@pytest.mark.parametrize("scenario", ZK)
def test_zk_scenario_truth(tmp_path: Path, scenario: str) -> None:
    truth = simulator.simulate(scenario, tmp_path)
    assert truth["findings"] == EXPECTED[scenario]
    assert "undecidable" not in truth and "disputed" not in truth
    bad = {f"{f['topic']}-{f['partition']}" for f in EXPECTED[scenario]}
    assert truth["verdicts"] == {k: "invalid" if k in bad else "valid" for k in truth["verdicts"]}


def test_no_unclean_election_without_the_flag(tmp_path: Path) -> None:
    """Mutation: the same story with unclean.leader.election.enable=false keeps
    the partition offline (leader -1, ISR [1]) until 1 returns: nothing lost."""
    spec = build("zk-epoch-unclean")
    spec.unclean_election = False
    truth = Truth(spec.name, 0, spec.era, spec.params())
    cluster = Cluster(spec, tmp_path, 0, truth, check=True)
    cluster.run()
    assert truth.result()["findings"] == [] and cluster.violations == []
    assert truth.params["unclean.leader.election.enable"] is False
    states = [(m["leader"], m["isr"]) for m in controller_changes(tmp_path)]
    assert ("-1", "1") in states and ("2", "2") not in states


def test_hw_truncation_without_epochs_loses_what_epochs_keep(tmp_path: Path) -> None:
    """The same story as seed000-hw-truncation-epoch: with leader epochs A keeps m2."""
    hw = simulator.simulate("seed000-hw-truncation", tmp_path / "hw")
    ep = simulator.simulate("seed000-hw-truncation-epoch", tmp_path / "epoch")
    assert ep["findings"] == [] and hw["findings"] != []


# -- determinism, listing, random ---------------------------------------------------------


def digest(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    for scenario, knobs in [
        ("zk-epoch-unclean", {}),
        ("seed000-hw-truncation", {}),
        ("random", {"era": "zk-epoch", "fault_rate": 6}),
    ]:
        a, b = tmp_path / f"{scenario}-a", tmp_path / f"{scenario}-b"
        simulator.simulate(scenario, a, seed=5, **knobs)
        simulator.simulate(scenario, b, seed=5, **knobs)
        assert digest(a) == digest(b)
    c = tmp_path / "random-c"
    simulator.simulate("random", c, seed=6, era="zk-epoch", fault_rate=6)
    assert digest(c) != digest(tmp_path / "random-a")


@pytest.mark.parametrize("seed", range(8))
def test_random_zk_epoch_seeds_keep_the_invariants(tmp_path: Path, seed: int) -> None:
    truth, cluster = run("random", tmp_path, seed=seed, era="zk-epoch", fault_rate=8, check=True)
    assert cluster.violations == [] and truth["era"] == "zk-epoch"
    assert truth["params"]["knobs"]["era"] == "zk-epoch"
    check_zk_logs(tmp_path, sorted(cluster.brokers), "zk-epoch")


def test_listing_and_random_eras(tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from simulator.cli import simulate_command

    default = dict(simulator.list_scenarios())
    every = dict(simulator.list_scenarios(all_eras=True))
    assert not set(ZK) & set(default) and set(ZK) <= set(every)
    assert set(default) <= set(every)
    with pytest.raises(ValueError):
        simulator.simulate("random", tmp_path / "x", era="zk-hw")
    with pytest.raises(ValueError):
        simulator.simulate("zk-epoch-clean", tmp_path / "y", era="zk-hw")
    app = typer.Typer()
    app.command()(simulate_command)
    listed = CliRunner().invoke(app, ["--list"])
    assert listed.exit_code == 0 and "seed000-hw-truncation\t" in listed.output


# -- zk-hw request log: 0.10.1 at TRACE (artefacts.TextRequestLog) ------------------------

TEXT_TAIL = (
    r" from connection 10\.0\.0\.(?P<leader>\d+):9092-10\.0\.(?:0|1)\.\d+:\d+;"
    r"totalTime:(?P<total>\d+),requestQueueTime:0,localTime:\d+,remoteTime:\d+,"
    r"responseQueueTime:0,sendTime:0,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS$"
)
TEXT_FETCH = re.compile(
    r"^Completed request:Name: FetchRequest; Version: 3; CorrelationId: \d+; "
    r"ClientId: ReplicaFetcherThread-0-(?P<to>\d+); ReplicaId: (?P<replica>\d+); "
    r"MaxWait: 500 ms; MinBytes: 1 bytes; MaxBytes:10485760 bytes; RequestInfo: "
    r"\(\[(?P<topic>[\w.-]+),(?P<p>\d+)\],PartitionFetchInfo\((?P<offset>\d+),1048576\)\)"
    + TEXT_TAIL
)
TEXT_PRODUCE = re.compile(
    r"^Completed request:\{api_key=0,api_version=2,correlation_id=\d+,"
    r"client_id=producer-\d+\} -- \{acks=(?P<acks>-1|0|1),timeout=30000,"
    r"topic_data=\[\{topic=[\w.-]+,data=\[\{partition=\d+,"
    r"record_set=java\.nio\.HeapByteBuffer\[pos=0 lim=(?P<lim>\d+) cap=(?P=lim)\]\}\]\}\]\}"
    + TEXT_TAIL
)
TRACE = re.compile(
    r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] TRACE (.*) \(kafka\.request\.logger\)$"
)


def text_requests(path: Path) -> list[tuple[str, str, re.Match[str]]]:
    out, last = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = TRACE.match(line)
        assert m, line
        assert m.group(1) >= last, line
        last = m.group(1)
        shape = TEXT_FETCH.match(m.group(2)) or TEXT_PRODUCE.match(m.group(2))
        assert shape, line
        out.append((m.group(1), "FETCH" if "FetchRequest" in line else "PRODUCE", shape))
    return out


@pytest.mark.parametrize("scenario", ["seed000-hw-truncation", "seed000-divergence-hw"])
def test_zk_hw_request_log_in_the_0_10_1_text_shape(tmp_path: Path, scenario: str) -> None:
    _, cluster = run(scenario, tmp_path)
    kinds: set[str] = set()
    for b in cluster.brokers:
        found = text_requests(tmp_path / f"broker-{b}" / "kafka-request.log")
        kinds |= {kind for _, kind, _ in found}
        for _, kind, m in found:
            assert m.group("leader") == str(b)  # only requests the broker received
            if kind == "FETCH":
                assert m.group("to") == str(b) and m.group("replica") != str(b)
            else:
                assert int(m.group("lim")) % 100 == 0  # 100 bytes a message (magic 1)
    assert kinds == {"FETCH", "PRODUCE"}


def test_zk_hw_request_log_exact_lines(tmp_path: Path) -> None:
    """RequestChannel.scala / FetchRequest.scala (describe) / Struct.java at 0.10.1.1."""
    run("seed000-hw-truncation", tmp_path)
    text = (tmp_path / "broker-2" / "kafka-request.log").read_text().splitlines()
    tail = "securityProtocol:PLAINTEXT,principal:User:ANONYMOUS (kafka.request.logger)"
    # A's fetch of m2 answered at once; then the fetch at 11 that lets B commit m2,
    # logged with m2's acks=all answer (no offsets, no error code in 0.10)
    assert (
        "[2024-05-01 10:00:10,300] TRACE Completed request:Name: FetchRequest; Version: 3; "
        "CorrelationId: 20; ClientId: ReplicaFetcherThread-0-2; ReplicaId: 1; MaxWait: 500 ms; "
        "MinBytes: 1 bytes; MaxBytes:10485760 bytes; RequestInfo: ([seed,0],"
        "PartitionFetchInfo(10,1048576)) from connection 10.0.0.2:9092-10.0.0.1:51001;"
        "totalTime:0,requestQueueTime:0,localTime:0,remoteTime:0,responseQueueTime:0,sendTime:0,"
        + tail
    ) in text
    assert (
        "[2024-05-01 10:00:10,800] TRACE Completed request:{api_key=0,api_version=2,"
        "correlation_id=1,client_id=producer-9} -- {acks=-1,timeout=30000,topic_data=[{"
        "topic=seed,data=[{partition=0,record_set=java.nio.HeapByteBuffer[pos=0 lim=100 "
        "cap=100]}]}]} from connection 10.0.0.2:9092-10.0.1.9:40009;totalTime:601,"
        "requestQueueTime:0,localTime:1,remoteTime:600,responseQueueTime:0,sendTime:0," + tail
    ) in text
    assert (
        "[2024-05-01 10:00:10,800] TRACE Completed request:Name: FetchRequest; Version: 3; "
        "CorrelationId: 21; ClientId: ReplicaFetcherThread-0-2; ReplicaId: 1; MaxWait: 500 ms; "
        "MinBytes: 1 bytes; MaxBytes:10485760 bytes; RequestInfo: ([seed,0],"
        "PartitionFetchInfo(11,1048576)) from connection 10.0.0.2:9092-10.0.0.1:51001;"
        "totalTime:0,requestQueueTime:0,localTime:0,remoteTime:0,responseQueueTime:0,sendTime:0,"
        + tail
    ) in text
    # a long poll (nothing to return at 9800) is logged when it expires, ~maxWait later
    assert (
        "[2024-05-01 10:00:10,299] TRACE Completed request:Name: FetchRequest; Version: 3; "
        "CorrelationId: 19; ClientId: ReplicaFetcherThread-0-2; ReplicaId: 1; MaxWait: 500 ms; "
        "MinBytes: 1 bytes; MaxBytes:10485760 bytes; RequestInfo: ([seed,0],"
        "PartitionFetchInfo(10,1048576)) from connection 10.0.0.2:9092-10.0.0.1:51001;"
        "totalTime:499,requestQueueTime:0,localTime:0,remoteTime:499,responseQueueTime:0,"
        "sendTime:0," + tail
    ) in text


def test_zk_hw_fetch_offsets_show_the_committed_mark(tmp_path: Path) -> None:
    """B's HW is the minimum LEO of its ISR [2, 1]: A's logged fetch offset 11 shows
    that m2 (offset 10) was committed, which is what the truth's loss rests on."""
    truth = simulator.simulate("seed000-hw-truncation", tmp_path)
    found = text_requests(tmp_path / "broker-2" / "kafka-request.log")
    before_crash = [
        int(m.group("offset"))
        for ts, kind, m in found
        if kind == "FETCH" and m.group("replica") == "1" and ts < "2024-05-01 10:00:10,900"
    ]
    loss = next(f for f in truth["findings"] if f["kind"] == "committed_data_loss")
    assert max(before_crash) == loss["offset_end"] == 11
    assert "undecidable" not in truth
    # B fails at 10900: nothing more is logged by it until it returns at 30000
    stamps = [ts for ts, _, _ in found]
    assert not [ts for ts in stamps if "2024-05-01 10:00:10,800" < ts < "2024-05-01 10:00:30"]


def test_zk_hw_mark_in_a_lost_long_poll_stays_undecidable(tmp_path: Path) -> None:
    """Without the acks=1 record A's fetch at 11 long-polls, and B fails before
    answering it: 0.10.1 never logs it, no artefact shows m2 committed. The truth
    keeps its findings but says the artefacts show none of them."""
    spec = build("seed000-hw-truncation")
    spec.schedule = [a for a in spec.schedule if a.at_ms != 10700]
    truth = Truth(spec.name, 0, spec.era, spec.params())
    Cluster(spec, tmp_path, 0, truth, check=True).run()
    result = truth.result()
    assert [f for f in result["findings"] if f["kind"] != "hwm_regression"] == [
        {**f, "visible_absent": True}
        for f in EXPECTED["seed000-hw-truncation"]
        if f["kind"] != "hwm_regression"
    ]
    assert [n["finding"] for n in result["undecidable"]] == [0, 1, 2, 3]
    text = (tmp_path / "broker-2" / "kafka-request.log").read_text()
    assert "PartitionFetchInfo(11,1048576)" not in text


def test_a_0_10_leaders_log_end_is_in_its_followers_growing_fetches(tmp_path: Path) -> None:
    """A random 0.10 cluster (the slow sweep's 3107): broker 3 leads topic-1-0
    in epoch 1, its followers 2 and 4 fetch from it at 75 and then at 95, it
    crashes and comes back with log end 75. Its produce lines print no
    offsets, but its followers' logged fetches grew from 75 to 95 by records
    only it sent: a reader sees that it held 95, so the crash loss [75, 95)
    below the HWM 95 is visible, not ``visible_absent``. Broker 2, which
    leads epoch 2 from 95, prints no start offset (0.10 has no such line)
    and no startup line after it began: that it rewrote none of [75, 95) is
    in no artefact, so the reader's qualifier is unknown."""
    knobs: dict[str, Any] = {
        "era": "zk-hw",
        "version": "0.10",
        "brokers": 5,
        "topics": 2,
        "partitions": 1,
        "duration": 60,
        "produce_rate": 0.5,
        "fault_rate": 1.0,
        "restart_rate": 1.0,
        "consumers": True,
        "startup_lines": True,
        "list_offsets_ms": 5000,
        "describe_every_ms": 10000,
        "excerpts": "quote",
    }
    truth = simulator.simulate("random", tmp_path, seed=3107, **knobs)
    loss = [
        f
        for f in truth["findings"]
        if f["kind"] == "truncation_below_hwm" and f["topic"] == "topic-1" and f["replica"] == 3
    ]
    assert loss == [
        {
            "kind": "truncation_below_hwm",
            "topic": "topic-1",
            "partition": 0,
            "leader_epoch": 2,
            "replica": 3,
            "offset_start": 75,
            "offset_end": 95,
            "records_lost": None,
            "qualifier": "local",
            "visible_offset_start": 75,
            "visible_offset_end": 95,
            "visible_records_lost": None,
            "visible_qualifier": "unknown",
        }
    ]
    (i,) = [i for i, f in enumerate(truth["findings"]) if f == loss[0]]
    assert [n["reasons"] for n in truth["undecidable"] if n["finding"] == i] == [
        [
            "replica 3 lost [75, 115) when the true HWM was 95; when the loss shows (its "
            "restart) the true HWM is 134",
            "truncation of replica 3 [75, 115): the start offset of epoch 2 (written after the "
            "replica's records) is in no artefact, so whether that epoch rewrote them is not in "
            "evidence",
        ]
    ]


def test_a_0_10_followers_log_end_before_its_hw_truncation_is_its_last_logged_fetch(
    tmp_path: Path,
) -> None:
    """The slow sweep's 3063: broker 3, outside the ISR, last logged a fetch
    from 3590; the answers that brought it up to 4021 print no offsets
    (0.10), and its "Truncating log topic-1-0 to offset 3987." on following
    the new leader prints no log end. The truth has the real loss [3987,
    4004) below the HWM 4004, and says a reader cannot see it: what the
    artefacts show of broker 3's log end (3590) is below the cut."""
    knobs: dict[str, Any] = {
        "era": "zk-hw",
        "version": "0.10",
        "brokers": 3,
        "topics": 2,
        "partitions": 1,
        "duration": 120,
        "produce_rate": 4.0,
        "fault_rate": 1.0,
        "restart_rate": 1.0,
        "consumers": True,
        "startup_lines": True,
        "list_offsets_ms": 5000,
    }
    truth = simulator.simulate("random", tmp_path, seed=3063, **knobs)
    [(i, loss)] = [
        (i, f)
        for i, f in enumerate(truth["findings"])
        if f["kind"] == "truncation_below_hwm"
        and f["topic"] == "topic-1"
        and f["replica"] == 3
        and f["leader_epoch"] == 2
    ]
    assert (loss["offset_start"], loss["offset_end"], loss["qualifier"]) == (3987, 4004, "local")
    assert loss["visible_absent"] is True
    [note] = [u for u in truth["undecidable"] if u["finding"] == i]
    assert note["reasons"] == [
        "replica 3 truncated [3987, 4021) to its HW; its log end before that is in evidence "
        "only up to 3590 (the fetch answers that brought the rest print no offsets, and its "
        "truncation line no log end)"
    ]


def test_a_0_10_fetch_is_in_evidence_only_once_its_late_line_is_written(tmp_path: Path) -> None:
    """0.10.1 logs a long-polling fetch once answered, and never when either
    end drops the connection first. In the slow sweep's 3147, broker 4's last
    logged fetch was from 246; a later one, from 262 or above, was never
    logged (it crashed) and it came back with log end 154. The truth's loss is [154,
    262) and a reader sees [154, 246): before, the truth counted the unlogged
    fetch as evidence and gave no visible values."""
    knobs: dict[str, Any] = {
        "era": "zk-hw",
        "version": "0.10",
        "brokers": 5,
        "topics": 1,
        "partitions": 2,
        "duration": 120,
        "produce_rate": 0.5,
        "fault_rate": 4.0,
        "restart_rate": 0.5,
        "consumers": True,
        "startup_lines": True,
        "describe_every_ms": 10000,
        "excerpts": "indent",
    }
    truth = simulator.simulate("random", tmp_path, seed=3147, **knobs)
    [loss] = [
        f
        for f in truth["findings"]
        if f["kind"] == "truncation_below_hwm" and f["partition"] == 1 and f["leader_epoch"] == 2
    ]
    assert loss == {
        "kind": "truncation_below_hwm",
        "topic": "topic-0",
        "partition": 1,
        "leader_epoch": 2,
        "replica": 4,
        "offset_start": 154,
        "offset_end": 262,
        "records_lost": None,
        "qualifier": "local",
        "visible_offset_start": 154,
        "visible_offset_end": 246,
        "visible_records_lost": None,
        "visible_qualifier": "local",
    }
