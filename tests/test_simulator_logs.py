"""The simulator's log4j logs, checkpoint files and the kraft-elr era (KIP-966)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import simulator
from simulator.api import run

LAYOUT = re.compile(
    r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] (INFO|WARN|DEBUG|ERROR) (.*) \(([\w.$]+)\)$"
)
TP = r"[\w.-]+-\d+"
ID = r"[A-Za-z0-9_-]{22}"
STATE_CHANGE = [
    re.compile(
        rf"^\[Broker id=\d+\] Leader {TP} with topic id Some\({ID}\) starts at leader epoch \d+ "
        r"from offset \d+ with partition epoch \d+, high watermark \d+, ISR \[[\d,]*\], "
        r"adding replicas \[\] and removing replicas \[\] (\(under-min-isr\))?\. "
        r"Previous leader (None|Some\(-?\d+\)) and previous leader epoch was -?\d+\.$"
    ),
    re.compile(
        rf"^\[Broker id=\d+\] Follower {TP} starts at leader epoch (\d+) from offset \d+ with "
        r"partition epoch \d+ and high watermark \d+\. Current leader is (-?\d+)\. "
        r"Previous leader Some\((-?\d+)\) and previous leader epoch was (\d+)\.$"
    ),
    re.compile(
        rf"^\[Broker id=\d+\] The topic partition {TP} was marked as RECOVERING\. "
        r"Marking the topic partition as RECOVERED\.$"
    ),
]
FETCHER = r"\[ReplicaFetcher replicaId=\d+, leaderId=\d+, fetcherId=0\] "
SERVER = {
    "kafka.server.ReplicaFetcherThread": [
        re.compile(
            rf"^{FETCHER}Truncating partition {TP} with TruncationState\(offset=\d+, "
            r"completed=true\) due to leader epoch and offset EpochEndOffset\(errorCode=0, "
            r"partition=\d+, leaderEpoch=\d+, endOffset=\d+\)$"
        ),
        re.compile(rf"^{FETCHER}Truncating {TP} to offset \d+ below high watermark \d+$"),
    ],
    "kafka.log.UnifiedLog": [
        re.compile(
            rf"^\[UnifiedLog partition={TP}, dir=/var/lib/kafka/data\] "
            r"(Truncating to offset \d+|Truncating to \d+ has no effect as the largest offset "
            r"in the log is -?\d+)$"
        )
    ],
    "kafka.cluster.Partition": [
        re.compile(
            rf"^\[Partition {TP} broker=\d+\] Shrinking ISR from [\d,]+ to [\d,]+\. Leader: "
            r"\(highWatermark: \d+, endOffset: \d+\)\. Out of sync replicas: "
            r"\(brokerId: \d+, endOffset: (\d+|unknown), lastCaughtUpTimeMs: \d+\)"
            r"( \(brokerId: \d+, endOffset: (\d+|unknown), lastCaughtUpTimeMs: \d+\))*\.$"
        ),
        re.compile(
            rf"^\[Partition {TP} broker=\d+\] ISR updated to [\d,]+ (\(under-min-isr\))? and "
            r"version updated to \d+$"
        ),
    ],
}
CONTROLLER = {
    "org.apache.kafka.controller.PartitionChangeBuilder": re.compile(
        rf"^Setting new leader for topicId {ID}, partition \d+ to \d+ using an unclean election$"
    ),
    "org.apache.kafka.controller.ReplicationControlManager": re.compile(
        rf"^\[QuorumController id=3000\] UNCLEAN partition change for {TP} with topic ID {ID}: "
        r"(isr: \[[\d, ]*\] -> \[[\d, ]*\], )?leader: -?\d+ -> \d+, "
        r"(leaderRecoveryState: RECOVER(ED|ING) -> RECOVER(ED|ING), )?leaderEpoch: \d+ -> \d+, "
        r"(elr: \[[\d, ]*\] -> \[[\d, ]*\], )?(lastKnownElr: \[[\d, ]*\] -> \[[\d, ]*\], )?"
        r"partitionEpoch: \d+ -> \d+$"
    ),
}


def log_lines(path: Path) -> list[tuple[str, str, str, str]]:
    """(stamp, level, message, logger) of every line; stamps never go back."""
    out = []
    last = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = LAYOUT.match(line)
        assert m, line
        stamp = line[1:24]
        assert stamp >= last, line
        last = stamp
        out.append((stamp, m.group(1), m.group(2), m.group(3)))
    return out


def check_logs(out: Path, brokers: list[int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for b in brokers:
        for _, level, message, logger in log_lines(out / f"broker-{b}" / "state-change.log"):
            assert (level, logger) == ("INFO", "state.change.logger")
            assert message.startswith(f"[Broker id={b}] ")
            matched = [i for i, r in enumerate(STATE_CHANGE) if r.match(message)]
            assert matched, message
            if matched == [1]:  # the 3.6 caveat: "previous" prints the new values
                f = STATE_CHANGE[1].match(message)
                assert f is not None
                assert (f.group(3), f.group(4)) == (f.group(2), f.group(1))
            counts[f"state-change:{matched[0]}"] = counts.get(f"state-change:{matched[0]}", 0) + 1
        for _, level, message, logger in log_lines(out / f"broker-{b}" / "server.log"):
            assert any(r.match(message) for r in SERVER[logger]), message
            assert level == ("WARN" if "below high watermark" in message else "INFO")
            counts[logger] = counts.get(logger, 0) + 1
    for _, level, message, logger in log_lines(out / "controller" / "controller.log"):
        assert level == "INFO" and CONTROLLER[logger].match(message), message
        counts[logger] = counts.get(logger, 0) + 1
    return counts


def checkpoint(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    lines = text.splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
    return [line.split() for line in lines[2:]]


def metadata_changes(out: Path) -> list[dict[str, Any]]:
    changes = []
    for line in (out / "controller" / "metadata.log.txt").read_text().splitlines():
        if "payload: " in line:
            payload = json.loads(line.split("payload: ", 1)[1])
            if payload["type"] in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
                changes.append(payload)
    return changes


# -- broker and controller logs ---------------------------------------------------------


def test_kraft_unclean_election_logs_tell_the_story(tmp_path: Path) -> None:
    _, cluster = run("kraft-unclean-election", tmp_path)
    counts = check_logs(tmp_path, sorted(cluster.brokers))
    assert counts["org.apache.kafka.controller.PartitionChangeBuilder"] == 1
    controller = (tmp_path / "controller" / "controller.log").read_text()
    assert (
        "UNCLEAN partition change for orders-0 with topic ID 5LHkG7R4S0aKxLbBzyP8wA: "
        "isr: [1] -> [2], leader: -1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, "
        "leaderEpoch: 1 -> 2, partitionEpoch: 2 -> 3 "
        "(org.apache.kafka.controller.ReplicationControlManager)"
    ) in controller
    b1 = (tmp_path / "broker-1" / "server.log").read_text()
    # leader 1 alone: ISR shrinks with min ISR 1 (not under it: two spaces)
    assert "Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 100, endOffset: 200)." in b1
    assert "ISR updated to 1  and version updated to 1 (kafka.cluster.Partition)" in b1
    # 1 returns, is told it diverges at 100 and truncates the committed [100, 301)
    assert (
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-0 "
        "with TruncationState(offset=100, completed=true) due to leader epoch and offset "
        "EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=100)"
    ) in b1
    assert (
        "WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating orders-0 to "
        "offset 100 below high watermark 301 (kafka.server.ReplicaFetcherThread)" in b1
    )
    assert (
        "INFO [UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 100 "
        "(kafka.log.UnifiedLog)"
    ) in b1
    b2 = (tmp_path / "broker-2" / "state-change.log").read_text().splitlines()
    recovering = [i for i, line in enumerate(b2) if "was marked as RECOVERING" in line]
    assert len(recovering) == 1
    assert (
        "Leader orders-0 with topic id Some(5LHkG7R4S0aKxLbBzyP8wA) starts at leader epoch 2 "
        "from offset 100 with partition epoch 3" in b2[recovering[0] + 1]
    )
    assert "Previous leader Some(-1) and previous leader epoch was 1." in b2[recovering[0] + 1]


@pytest.mark.parametrize("scenario", [n for n, _ in simulator.list_scenarios() if n != "random"])
def test_every_named_scenario_writes_exact_log_lines(tmp_path: Path, scenario: str) -> None:
    _, cluster = run(scenario, tmp_path)
    counts = check_logs(tmp_path, sorted(cluster.brokers))
    assert counts["state-change:0"] >= 1  # the first leader at least
    # the very first line of every broker: a fresh Partition (no previous leader)
    for b in cluster.brokers:
        first = (tmp_path / f"broker-{b}" / "state-change.log").read_text().splitlines()[0]
        if " Leader " in first:
            assert "Previous leader None and previous leader epoch was -1." in first


def test_checkpoint_files_at_the_end(tmp_path: Path) -> None:
    truth, cluster = run("kraft-clean", tmp_path)
    for b, broker in cluster.brokers.items():
        data = tmp_path / f"broker-{b}" / "data"
        hwm = checkpoint(data / "replication-offset-checkpoint")
        rp = checkpoint(data / "recovery-point-offset-checkpoint")
        keys = sorted(broker.replicas)
        assert [(t, int(p)) for t, p, _ in hwm] == keys == [(t, int(p)) for t, p, _ in rp]
        for (topic, p), (_, _, h), (_, _, r) in zip(keys, hwm, rp, strict=True):
            log = broker.replicas[(topic, p)].log
            assert int(h) == log.hwm_checkpoint <= log.leo and int(r) == log.flushed <= log.leo
            pdir = data / f"{topic}-{p}"
            cache = checkpoint(pdir / "leader-epoch-checkpoint")
            assert [(int(e), int(s)) for e, s in cache] == log.cache
            meta = (pdir / "partition.metadata").read_bytes()
            assert meta == f"version: 0\ntopic_id: {cluster.topic_ids[topic]}".encode()


def test_epoch_checkpoints_after_an_unclean_election(tmp_path: Path) -> None:
    run("kraft-unclean-election", tmp_path)
    for b in (1, 2, 3):
        cache = checkpoint(
            tmp_path / f"broker-{b}" / "data" / "orders-0" / "leader-epoch-checkpoint"
        )
        assert cache == [["0", "0"], ["2", "100"]]


# -- kraft-elr ---------------------------------------------------------------------------


def elr_states(out: Path) -> list[tuple[int, list[int], list[int], list[int], int]]:
    """(leader, ISR, ELR, LastKnownELR, leaderRecoveryState) after every record."""
    state: dict[str, Any] = {}
    out_states = []
    for payload in metadata_changes(out):
        data = payload["data"]
        assert payload["version"] == 2
        if payload["type"] == "PARTITION_RECORD":
            assert "eligibleLeaderReplicas" not in data and "lastKnownElr" not in data
            assert len(data["directories"]) == len(data["replicas"])
            state = {"leader": data["leader"], "isr": data["isr"], "elr": [], "lke": [], "rs": 0}
        else:
            for src, dst in [
                ("leader", "leader"),
                ("isr", "isr"),
                ("eligibleLeaderReplicas", "elr"),
                ("lastKnownElr", "lke"),
                ("leaderRecoveryState", "rs"),
            ]:
                if src in data:
                    state[dst] = data[src]
        out_states.append((state["leader"], state["isr"], state["elr"], state["lke"], state["rs"]))
    return out_states


def test_elr_5_2_2_clean_recovery_through_the_elr(tmp_path: Path) -> None:
    truth, cluster = run("elr-5.2.2", tmp_path, check=True)
    assert cluster.violations == [] and truth["findings"] == [] and truth["era"] == "kraft-elr"
    assert elr_states(tmp_path) == [
        (1, [1, 2, 3], [], [], 0),
        (1, [1, 3], [], [], 0),  # case F: 2 out, the ISR still has min ISR
        (1, [1], [3], [], 0),  # case A: 3 into the ELR
        (3, [3], [1], [], 0),  # cases C + B: 1 fenced into the ELR, 3 elected from it
        (3, [3], [], [1], 0),  # 1 re-registers after an unclean shutdown
        (3, [3, 1], [], [], 0),  # case E/G: ISR back at min ISR, both cleared
        (3, [3, 1, 2], [], [], 0),
    ]
    # an ELR election is clean: nothing in controller.log
    assert (tmp_path / "controller" / "controller.log").read_text() == ""
    check_logs(tmp_path, [1, 2, 3])


def test_elr_5_3_3_balanced_recovery_elects_the_complete_replica(tmp_path: Path) -> None:
    truth, cluster = run("elr-5.3.3", tmp_path, check=True)
    assert cluster.violations == []
    assert elr_states(tmp_path) == [
        (1, [1, 2, 3], [], [], 0),
        (2, [2, 3], [], [], 0),  # step 3
        (3, [3], [2], [], 0),  # step 4
        (-1, [], [2, 3], [], 0),  # step 5
        (-1, [], [3], [2], 0),  # step 7 (step 6: broker 1 changes nothing)
        (-1, [], [], [2, 3], 0),  # step 8
        (2, [2], [], [], 1),  # steps 9-10: 2 has the highest epoch and offset
        (2, [2, 1], [], [], 0),
        (2, [2, 1, 3], [], [], 0),
    ]
    unclean = [f for f in truth["findings"] if f["kind"] == "unclean_election"]
    assert unclean == [
        {
            "kind": "unclean_election",
            "topic": "orders",
            "partition": 0,
            "leader_epoch": 4,
            "replica": 2,
            "offset_start": None,
            "offset_end": None,
            "records_lost": 0,
            "qualifier": None,
        }
    ]
    assert {f["kind"] for f in truth["findings"]} == {"unclean_election", "truncation_below_hwm"}
    controller = (tmp_path / "controller" / "controller.log").read_text()
    assert "to 2 using an unclean election" in controller
    assert (
        "isr: [] -> [2], leader: -1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, "
        "leaderEpoch: 3 -> 4, lastKnownElr: [2, 3] -> [], partitionEpoch: 5 -> 6"
    ) in controller
    check_logs(tmp_path, [1, 2, 3])
    assert truth["params"]["metadata.version"] == "4.0-IV3"


def test_random_accepts_the_elr_era(tmp_path: Path) -> None:
    truth, cluster = run("random", tmp_path / "a", seed=4, era="kraft-elr", fault_rate=8)
    assert truth["era"] == "kraft-elr" and cluster.violations == []
    assert truth["params"]["knobs"]["era"] == "kraft-elr"
    check_logs(tmp_path / "a", sorted(cluster.brokers))
    plain = simulator.simulate("random", tmp_path / "b", seed=4)
    assert plain["era"] == "kraft" and "era" not in plain["params"]["knobs"]
    with pytest.raises(ValueError):
        simulator.simulate("random", tmp_path / "c", era="zk-nope")


@pytest.mark.parametrize("seed", range(12))
def test_elr_model_invariants_over_random_seeds(tmp_path: Path, seed: int) -> None:
    truth, cluster = run(
        "random",
        tmp_path,
        seed=seed,
        check=True,
        era="kraft-elr",
        brokers=2 + seed % 3,
        partitions=2,
        duration=60,
        fault_rate=8,
    )
    assert cluster.violations == []
    for reg in cluster.regs.values():
        assert reg.elr is not None and reg.lkelr is not None
        # ISR, ELR and LastKnownELR are disjoint; ELR only under min ISR
        assert not set(reg.isr) & set(reg.elr) and not set(reg.elr) & set(reg.lkelr)
    for f in truth["findings"]:
        assert f["kind"] != "log_divergence"
