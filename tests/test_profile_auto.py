"""``--profile auto`` from what the files say (formats-addendum.md 13, 12): the
choice is pure Python over markers; the markers come from event rows as the
readers emit them (``broker_config`` per addendum 13, request versions,
templates, views); one run over a simulated 0.10 folder with no controller
decision shows the manifest naming its evidence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.era import EraEvidence, Marker, choose, protocol, release
from replay.types import Profile

AUTO = Profile.AUTO


def era(*markers: tuple[str, str], elr: bool = False) -> EraEvidence:
    return EraEvidence(
        tuple(Marker(w, v, f"file:/b/server.log:{i + 1}") for i, (w, v) in enumerate(markers)), elr
    )


def pick(evidence: EraEvidence, zk: bool = False, epochs: bool = False) -> tuple[Any, ...]:
    return choose(AUTO, False, False, zk, epochs, evidence)


def test_release_and_protocol_texts() -> None:
    assert release("0.10.1.1") == (0, 10, 1)
    assert release("2.7.2") == (2, 7, 2)
    assert release("3.9.0-rc3") == (3, 9, 0)
    assert release("7.4.0-ccs") == (3, 4, 0)  # Confluent Platform 7.4 is Kafka 3.4
    assert release("6.1.2-ce") == (2, 7, 0)
    assert release("unknown") is None
    assert protocol("0.10.1-IV2") == (0, 10, 1, 2)
    assert protocol("0.11.0-IV1") == (0, 11, 0, 1)
    assert protocol("2.7-IV2") == (2, 7, 0, 2)
    assert protocol("1.0") == (1, 0, 0, 99)


def test_a_010_broker_with_no_controller_decision_is_zk_hw() -> None:
    """The lines of addendum 13 a 0.10.1 broker prints (``Kafka version :``
    in kafkaServer.out, ``KafkaConfig values:`` with zookeeper.connect and
    its IBP), as broker_config rows give them."""
    evidence = era(("version", "0.10.1.1"), ("mode", "zk"), ("ibp", "0.10.1-IV2"))
    profile, why, named, default = pick(evidence)
    assert (profile, default) == (Profile.ZK_HW, False)
    assert named == [
        "mode zk (file:/b/server.log:2)",
        "Kafka version 0.10.1.1 (file:/b/server.log:1)",
        "inter.broker.protocol.version 0.10.1-IV2 (file:/b/server.log:3)",
    ]
    assert why.startswith("ZooKeeper, before leader-epoch truncation")
    assert all(n in why for n in named)
    # the version line alone says as much (0.8.2-0.10: ZooKeeper only)
    assert pick(era(("version", "0.10.1.1")))[0] == Profile.ZK_HW


def test_the_protocol_level_wins_over_the_release() -> None:
    # a 1.1 broker still on IBP 0.10.2 (mid-upgrade) truncates to its HW
    assert pick(era(("version", "1.1.1"), ("ibp", "0.10.2-IV0")))[0] == Profile.ZK_HW
    # IBP 0.11.0-IV1 predates OffsetsForLeaderEpoch; IV2 has it
    assert pick(era(("mode", "zk"), ("ibp", "0.11.0-IV1")))[0] == Profile.ZK_HW
    assert pick(era(("mode", "zk"), ("ibp", "0.11.0-IV2")))[0] == Profile.ZK_EPOCH
    assert pick(era(("mode", "zk"), ("ibp", "2.7-IV2")))[0] == Profile.ZK_EPOCH
    # the oldest broker's level decides
    assert pick(era(("ibp", "2.4-IV1"), ("ibp", "0.10.1-IV2")))[0] == Profile.ZK_HW


def test_follower_fetch_versions() -> None:
    p, why, named, default = pick(era(("fetch", "v3")))
    assert (p, default) == (Profile.ZK_HW, False)
    assert named == ["follower Fetch v3 (file:/b/server.log:1)"]
    # v7+: IBP 1.1+, epochs; the mode stays unknown without a release below 2.8
    p, why, named, default = pick(era(("fetch", "v7")))
    assert (p, default) == (Profile.KRAFT, True)
    assert "the mode is in no file" in why
    assert pick(era(("fetch", "v7"), ("version", "2.4.1")))[0] == Profile.ZK_EPOCH
    # v5 and v6 do not decide: the release does
    assert pick(era(("fetch", "v5"), ("version", "0.10.2.2")))[0] == Profile.ZK_HW


def test_kraft_markers() -> None:
    assert pick(era(("mode", "kraft"), ("version", "3.6.2")))[:2] == (
        Profile.KRAFT,
        "KRaft: mode kraft (file:/b/server.log:1); Kafka version 3.6.2 (file:/b/server.log:2)",
    )
    assert pick(era(("version", "4.0.0")))[0] == Profile.KRAFT_ELR
    shell = ("view", "kraft: metadata-shell output")
    assert pick(era(shell))[0] == Profile.KRAFT
    assert pick(era(shell, elr=True))[0] == Profile.KRAFT_ELR
    assert pick(era(("template", "zk: ZooKeeper controller 'No broker in ISR is alive'"),
                    ("version", "0.11.0.2")))[0] == Profile.ZK_EPOCH  # fmt: skip


def test_defaults_say_so() -> None:
    p, why, named, default = pick(EraEvidence())
    assert (p, named, default) == (Profile.KRAFT, [], True)
    assert why.endswith("(a default: no version, configuration or mode marker either)")
    # ZooKeeper without a level: zk-epoch, said to be a default
    p, why, named, default = pick(era(("mode", "zk")))
    assert (p, default) == (Profile.ZK_EPOCH, True)
    assert "a default" in why
    # both modes and nothing else: undecided
    p, why, named, default = pick(era(("mode", "zk"), ("mode", "kraft")))
    assert (p, default) == (Profile.KRAFT, True)
    assert "both modes" in why


def test_a_controller_decides_first() -> None:
    evidence = era(("version", "0.10.1.1"))
    assert choose(AUTO, True, False, False, False, evidence)[:2] == (
        Profile.KRAFT,
        "a KRaft metadata log is in the evidence",
    )
    # a ZK controller without epochs anywhere: zk-hw, unless a marker says 0.11+
    assert pick(evidence, zk=True)[0] == Profile.ZK_HW
    p, why, named, default = pick(era(("ibp", "2.4-IV1")), zk=True)
    assert (p, default) == (Profile.ZK_EPOCH, False)
    assert why.startswith("a ZooKeeper controller's LeaderAndIsr decisions, and a protocol")
    assert choose(Profile.ZK_HW, True, False, False, False, EraEvidence())[:2] == (
        Profile.ZK_HW,
        "requested with --profile zk-hw",
    )


@pytest.mark.spark
def test_markers_from_event_rows(spark: Any) -> None:
    """broker_config rows (addendum 13), follower fetches, a metadata-shell view
    and a describe with an ELR, per cluster, the first line of each value."""
    from pipeline.era import evidence_by_cluster
    from schemas.tables import PARTITION_EVENTS

    names = [f.name for f in PARTITION_EVENTS.fields]

    def row(cluster: str, kind: str, line: int, **values: Any) -> tuple[Any, ...]:
        base = {"cluster": cluster, "source_file": f"file:/{cluster}/server.log",
                "line_no": line, "seq": line * 100_000, "kind": kind}  # fmt: skip
        return tuple({**base, **values}.get(n) for n in names)

    rows = [
        row("old", "broker_config", 7, kafka_version="0.10.1.1"),
        row("old", "broker_config", 3, kafka_version="0.10.1.1"),
        row("old", "broker_config", 9, inter_broker_protocol="0.10.1-IV2", mode="zk"),
        row("old", "fetch_request", 20, replica=2, api_version=3),
        # the lowest version wins, and of its lines the first
        row("old", "fetch_request", 25, replica=1, api_version=3),
        row("old", "fetch_request", 15, replica=2, api_version=5),
        row("old", "fetch_request", 4, replica=1, api_version=4),
        row("old", "fetch_request", 21, replica=-1, api_version=2),  # a consumer: no vote
        row("new", "partition_view", 2, leader_epoch=7, elr=[], last_known_elr=[]),
        row("new", "partition_view", 5, elr=[1], last_known_elr=[]),
        row("none", "produce", 1, api_version=9),
    ]
    got = evidence_by_cluster(spark.createDataFrame(rows, PARTITION_EVENTS))
    assert got == {
        "old": EraEvidence((
            Marker("fetch", "v3", "file:/old/server.log:20"),
            Marker("ibp", "0.10.1-IV2", "file:/old/server.log:9"),
            Marker("mode", "zk", "file:/old/server.log:9"),
            Marker("version", "0.10.1.1", "file:/old/server.log:3"),
        )),
        "new": EraEvidence((
            Marker("view", "kraft: kafka-topics --describe with Elr lists "
                   "(DescribeTopicPartitions)", "file:/new/server.log:5"),
            Marker("view", "kraft: metadata-shell output", "file:/new/server.log:2"),
        ), elr_in_use=True),
    }  # fmt: skip
    assert pick(got["old"])[0] == Profile.ZK_HW
    assert pick(got["new"])[0] == Profile.KRAFT_ELR


@pytest.mark.spark
def test_a_010_folder_without_controller_decisions_is_judged_zk_hw(
    spark: Any, tmp_path: Path
) -> None:
    """seed000-hw-truncation on 0.10.1, with its request logs and checkpoints
    only (no state-change or controller log: no controller decision): the
    followers' Fetch v3 (IBP before 0.11.0-IV1) decide zk-hw, and the manifest
    names that line."""
    import simulator
    from pipeline.run import RunOptions, run_job

    sim = tmp_path / "sim"
    simulator.simulate("seed000-hw-truncation-0.10", sim)
    folder = tmp_path / "incident"
    for broker in (1, 2):
        src, dst = sim / f"broker-{broker}", folder / f"broker-{broker}"
        shutil.copytree(src / "data", dst / "data")
        shutil.copy(src / "kafka-request.log", dst / "kafka-request.log")
    summary = run_job(RunOptions([str(folder)], str(tmp_path / "out"), validate=False))
    manifest = json.loads(Path(summary.manifest_path).read_text())
    chosen = manifest["profiles"]["default"]
    assert chosen["chosen"] == "zk-hw"
    assert chosen["default"] is False
    [named] = chosen["evidence"]
    assert named.startswith("follower Fetch v3 (file:")
    assert "/broker-" in named and "/kafka-request.log:" in named
    assert chosen["why"].startswith("ZooKeeper, before leader-epoch truncation")
    assert manifest["profile"]["chosen"] == "zk-hw"
