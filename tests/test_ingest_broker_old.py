"""Ingest of pre-2.8 broker and controller logs (formats-addendum.md 9): the
ZooKeeper controller's and the brokers' LeaderAndIsr lines, ISR changes,
makeLeader, Log truncation, the fetcher's halt and offset reset, and the
controller's "potential data loss", with each version's value printing (9.0.2).

One ingest reads a hand-made tree (every form, from the addendum's templates,
with cut and garbled lines) and simulator runs on 0.10.1, 1.1.1 and 2.4.1,
whose lines are checked against the events.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

pytestmark = pytest.mark.spark

SC = "(state.change.logger)"
PART = "(kafka.cluster.Partition)"
RFT = "(kafka.server.ReplicaFetcherThread)"
OLD_P = "Partition [orders,0] on broker 2:"
NEW_P = "[Partition orders-0 broker=2]"
F010 = "[ReplicaFetcherThread-0-3],"
F11 = "[ReplicaFetcher replicaId=2, leaderId=3, fetcherId=0]"
LAIPS = (
    "LeaderAndIsrPartitionState(topicName='orders', partitionIndex=0, controllerEpoch=12, "
    "leader=2, leaderEpoch=8, isr=[2, 3], zkVersion=30, replicas=[1, 2, 3], addingReplicas=[], "
    "removingReplicas=[], isNew=false)"
)


def at(second: int, level: str, message: str) -> str:
    return f"[2016-08-20 14:01:{second:02d},512] {level} {message}"


#: broker 3's state-change.log, 0.8.2-0.11 (no prefix; ``Controller N epoch E``
#: and ``Broker N`` open the texts).
STATE_CHANGE_OLD = [
    # 1: 9.2 0.8.2 (with correlationId)
    at(1, "TRACE", "Controller 1 epoch 7 sending become-leader LeaderAndIsr request "
       "(Leader:2,ISR:2,LeaderEpoch:6,ControllerEpoch:7) with correlationId 41 to broker 2 for "
       f"partition [orders,0] {SC}"),
    # 2: a become-follower: the same decision, sent to a follower: ignored by rule
    at(1, "TRACE", "Controller 1 epoch 7 sending become-follower LeaderAndIsr request (Leader:2,"
       f"ISR:2,LeaderEpoch:6,ControllerEpoch:7) to broker 3 for partition [orders,0] {SC}"),
    # 3: 9.2 0.9-0.11
    at(2, "TRACE", "Controller 1 epoch 8 sending become-leader LeaderAndIsr request "
       "(Leader:3,ISR:3,1,LeaderEpoch:7,ControllerEpoch:8) to broker 3 for partition "
       f"[orders,1] {SC}"),
    # 4: 9.3 0.10 (PartitionState, Java lists)
    at(3, "TRACE", "Broker 3 received LeaderAndIsr request PartitionState(controllerEpoch=12, "
       "leader=2, leaderEpoch=8, isr=[2, 3], zkVersion=30, replicas=[1, 2, 3]) correlation id 5 "
       f"from controller 1 epoch 12 for partition [orders,0] {SC}"),
    # 5: 9.3 0.8.2-0.9 (PartitionStateInfo, unbalanced parentheses)
    at(4, "TRACE", "Broker 3 received LeaderAndIsr request (LeaderAndIsrInfo:(Leader:2,ISR:2,1,"
       "LeaderEpoch:6,ControllerEpoch:3),ReplicationFactor:2),AllReplicas:1,2) correlation id 5 "
       f"from controller 1 epoch 3 for partition [orders,0] {SC}"),
    # 6: 9.3 0.11 (Utils.join lists)
    at(5, "TRACE", "Broker 3 received LeaderAndIsr request PartitionState(controllerEpoch=3, "
       "leader=2, leaderEpoch=6, isr=2,1, zkVersion=11, replicas=1,2) correlation id 5 from "
       f"controller 1 epoch 3 for partition [orders,1] {SC}"),
    # 7: no offset, no decision: ignored by rule
    at(6, "TRACE", "Broker 3 truncated logs and checkpointed recovery boundaries for partition "
       "[orders,0] as part of become-follower request with correlation id 5 from controller 1 "
       f"epoch 12 {SC}"),
    # 8: a value that is no number: quarantined
    at(7, "TRACE", "Broker 3 received LeaderAndIsr request PartitionState(controllerEpoch=12, "
       "leader=two, leaderEpoch=8, isr=[2, 3], zkVersion=30, replicas=[1, 2, 3]) correlation id 5 "
       f"from controller 1 epoch 12 for partition [orders,0] {SC}"),
    # 9: cut: quarantined
    at(8, "TRACE", "Controller 1 epoch 7 sending become-leader LeaderAndIsr request "
       "(Leader:2,ISR:2,LeaderEp"),
    # 10: 9.2 0.8.2-0.11 the partition taken offline: read
    at(9, "TRACE", "Controller 1 epoch 7 changed partition [orders,0] state from OnlinePartition "
       f"to OfflinePartition {SC}"),
    # 11: a new partition's move, naming no leader: ignored by rule
    at(9, "TRACE", "Controller 1 epoch 7 changed partition [orders,2] state from "
       f"NonExistentPartition to NewPartition with assigned replicas ArrayBuffer(1, 2) {SC}"),
]  # fmt: skip

#: broker 2's state-change.log, 1.0-2.7 (prefixes).
STATE_CHANGE_NEW = [
    # 1: 9.2 1.0-2.3
    at(10, "TRACE", "[Controller id=1 epoch=9] Sending become-leader LeaderAndIsr request "
       "PartitionState(controllerEpoch=9, leader=2, leaderEpoch=6, isr=2, zkVersion=11, "
       f"replicas=1,2,3, isNew=false) to broker 2 for partition orders-0 {SC}"),
    # 2: 9.2 2.4-2.7
    at(11, "TRACE", "[Controller id=1 epoch=12] Sending become-leader LeaderAndIsr request "
       f"{LAIPS} to broker 2 for partition orders-0 {SC}"),
    # 3: 9.3 2.4-2.7 (the partition inside the state)
    at(12, "TRACE", f"[Broker id=3] Received LeaderAndIsr request {LAIPS} correlation id 5 from "
       f"controller 1 epoch 12 {SC}"),
    # 4: 9.3 1.0-2.3
    at(13, "TRACE", "[Broker id=3] Received LeaderAndIsr request PartitionState(controllerEpoch=3, "
       "leader=2, leaderEpoch=6, isr=2,1, zkVersion=11, replicas=1,2, isNew=false) correlation id "
       f"5 from controller 1 epoch 3 for partition orders-1 {SC}"),
    # 5: ignored by rule
    at(14, "TRACE", "[Broker id=2] Handling LeaderAndIsr request correlationId 5 from controller 1 "
       f"epoch 12 starting the become-leader transition for partition orders-0 {SC}"),
]  # fmt: skip

#: broker 2's server.log, 0.10 to 2.7.
SERVER_LOG = [
    # 1: 9.4 0.8.2-0.10.2 shrink
    at(20, "INFO", f"{OLD_P} Shrinking ISR for partition [orders,0] from 2,3,1 to 2,3 {PART}"),
    # 2: 9.4 0.11 (old prefix, new text)
    at(20, "INFO", f"{OLD_P} Shrinking ISR from 2,3 to 2 {PART}"),
    # 3: 9.4 1.0-2.1
    at(21, "INFO", f"{NEW_P} Shrinking ISR from 2,3 to 2 {PART}"),
    # 4: 9.4 2.2-2.7, the addendum's CONSTRUCTED example
    at(21, "INFO", f"{NEW_P} Shrinking ISR from 2,3,1 to 2,3. Leader: (highWatermark: 1180, "
       f"endOffset: 1200). Out of sync replicas: (brokerId: 1, endOffset: 1150). {PART}"),
    # 5-7: 9.4 expand, 0.8.2-0.10.1, 0.10.2, 0.11-2.7
    at(22, "INFO", f"{OLD_P} Expanding ISR for partition [orders,0] from 2 to 2,1 {PART}"),
    at(22, "INFO", f"{OLD_P} Expanding ISR for partition orders-0 from 2 to 2,3 {PART}"),
    at(22, "INFO", f"{NEW_P} Expanding ISR from 2 to 2,1 {PART}"),
    # 8: 9.4 makeLeader 0.11 (old prefix)
    at(23, "INFO", f"{OLD_P} orders-0 starts at Leader Epoch 6 from offset 1200. Previous Leader "
       f"Epoch was: 5 {PART}"),
    # 9: 9.4 makeLeader 2.4-2.5
    at(23, "INFO", f"{NEW_P} orders-0 starts at leader epoch 7 from offset 1250 with high "
       f"watermark 1240. Previous leader epoch was 6. {PART}"),
    # 10-11: 9.5 <= 0.11
    at(24, "INFO", "Truncating log orders-0 to offset 1180. (kafka.log.Log)"),
    at(24, "INFO", "Truncating orders-0 to 1200 has no effect as the largest offset in the log is "
       "1199. (kafka.log.Log)"),  # ignored by rule
    # 12: 9.6 0.8.2-0.9: the topic only
    at(25, "FATAL", f"{F010} Halting because log truncation is not allowed for topic orders, "
       f"Current leader 3's latest offset 1180 is less than replica 2's latest offset 1200 {RFT}"),
    # 13: 9.6 0.10.1-0.10.2
    at(25, "FATAL", f"{F010} Exiting because log truncation is not allowed for partition orders-0, "
       f"Current leader 3's latest offset 1180 is less than replica 2's latest offset 1200 {RFT}"),
    # 14: 9.6 1.1 (ERROR with the FATAL marker; ids from the prefix)
    at(26, "ERROR", f"{F11} Exiting because log truncation is not allowed for partition orders-1, "
       f"current leader's latest offset 900 is less than replica's latest offset 950 {RFT}"),
    # 15: 9.6 WARN <= 0.11
    at(27, "WARN", f"{F010} Replica 2 for partition [orders,0] reset its fetch offset from 1200 to "
       f"current leader 3's latest offset 1180 {RFT}"),
    # 16: 9.6 WARN 1.0-2.7
    at(27, "WARN", f"{F11} Reset fetch offset for partition orders-1 from 950 to current leader's "
       f"latest offset 900 {RFT}"),
    # 17: behind the leader's start: no truncation, ignored by rule
    at(28, "WARN", f"{F11} Reset fetch offset for partition orders-1 from 5 to current leader's "
       f"start offset 100 {RFT}"),
    # 18: garbled list: quarantined
    at(29, "INFO", f"{OLD_P} Shrinking ISR for partition [orders,0] from 2,x to 2 {PART}"),
    # 19-21: cut: quarantined
    at(29, "INFO", "Truncating log orders-0 to off"),
    at(29, "FATAL", f"{F010} Halting because log truncation is not allowed for topic orders, "
       "Current leader 3's lat"),
    at(29, "WARN", f"{F11} Reset fetch offset for partition orders-1 from ? to current leader's "
       f"latest offset 900 {RFT}"),
]  # fmt: skip

SELECTOR = "(kafka.controller.OfflinePartitionLeaderSelector)"
CONTROLLER = [
    # 1: 9.7 0.10, the addendum's CONSTRUCTED example
    at(40, "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,0]. "
       f"Elect leader 3 from live brokers 3. There's potential data loss. {SELECTOR}"),
    # 2: 1.0 (``t-p``)
    at(41, "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for orders-1. "
       f"Elect leader 2 from live brokers 2,3. There's potential data loss. {SELECTOR}"),
    # 3: cut: quarantined
    at(42, "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [orders,0]. "
       "Elect lea"),
]  # fmt: skip

#: the simulator runs: (folder, scenario, knobs)
SIMULATED = (
    ("zk010", "seed000-hw-truncation-0.10", {}),
    ("div010", "seed000-divergence-0.10", {}),
    ("zk11", "zk-epoch-unclean", {"version": "1.1"}),
    ("zk24", "zk-epoch-unclean", {"version": "2.4"}),
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import simulator

    root = tmp_path_factory.mktemp("old_logs")
    files = {
        "hand/broker-3/state-change.log": STATE_CHANGE_OLD,
        "hand/broker-2/state-change.log": STATE_CHANGE_NEW,
        "hand/broker-2/server.log": SERVER_LOG,
        "hand/controller/controller.log": CONTROLLER,
    }
    for rel, lines in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("\n".join(lines) + "\n")
    for folder, scenario, knobs in SIMULATED:
        simulator.simulate(scenario, root / "sim" / folder, **knobs)
        for p in list((root / "sim" / folder).rglob("*")):
            # the broker and controller logs only (other families' files are
            # read elsewhere; partition.metadata would add topic ids)
            if p.is_file() and (p.suffix != ".log" or p.name == "kafka-request.log"):
                p.unlink()
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="old")
    root = str(tree) + "/"
    return {
        "root": tree,
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.source_file.split(root, 1)[1], q.line_no, q.reason) for q in r.quarantine.collect()
        ),
        "file_stats": {s.path.split(root, 1)[1]: s.asDict() for s in r.file_stats.collect()},
    }


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = {k: v for k, v in accounting(result["file_stats"]).items() if k.startswith("hand/")}
    assert got == {
        "hand/broker-3/state-change.log": ("broker_log", 3, 11, 6, 3, 2),
        "hand/broker-2/state-change.log": ("broker_log", 2, 5, 4, 1, 0),
        "hand/broker-2/server.log": ("broker_log", 2, 21, 15, 2, 4),
        "hand/controller/controller.log": ("broker_log", None, 3, 2, 0, 1),
    }


def test_leader_and_isr_sent_and_received(result: dict[str, Any]) -> None:
    old = [non_null(r) for r in events_of(result, "hand/broker-3/state-change.log")]
    assert old == [
        {"line_no": 1, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 6, "isr": [2], "controller_epoch": 7},
        {"line_no": 3, "kind": "leader_and_isr", "topic": "orders", "partition": 1, "leader": 3,
         "leader_epoch": 7, "isr": [3, 1], "controller_epoch": 8},
        {"line_no": 4, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 8, "isr": [2, 3], "replicas": [1, 2, 3], "partition_epoch": 30,
         "controller_epoch": 12},
        {"line_no": 5, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 6, "isr": [2, 1], "replicas": [1, 2], "controller_epoch": 3},
        {"line_no": 6, "kind": "leader_and_isr", "topic": "orders", "partition": 1, "leader": 2,
         "leader_epoch": 6, "isr": [2, 1], "replicas": [1, 2], "partition_epoch": 11,
         "controller_epoch": 3},
        {"line_no": 10, "kind": "zk_partition_offline", "topic": "orders", "partition": 0,
         "controller_epoch": 7},
    ]  # fmt: skip
    new = [non_null(r) for r in events_of(result, "hand/broker-2/state-change.log")]
    assert new == [
        {"line_no": 1, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 6, "isr": [2], "replicas": [1, 2, 3], "partition_epoch": 11,
         "controller_epoch": 9},
        {"line_no": 2, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 8, "isr": [2, 3], "replicas": [1, 2, 3], "partition_epoch": 30,
         "controller_epoch": 12},
        {"line_no": 3, "kind": "leader_and_isr", "topic": "orders", "partition": 0, "leader": 2,
         "leader_epoch": 8, "isr": [2, 3], "replicas": [1, 2, 3], "partition_epoch": 30,
         "controller_epoch": 12},
        {"line_no": 4, "kind": "leader_and_isr", "topic": "orders", "partition": 1, "leader": 2,
         "leader_epoch": 6, "isr": [2, 1], "replicas": [1, 2], "partition_epoch": 11,
         "controller_epoch": 3},
    ]  # fmt: skip


def test_server_log_lines_every_version(result: dict[str, Any]) -> None:
    rows = [non_null(r) for r in events_of(result, "hand/broker-2/server.log")]
    tp0 = {"topic": "orders", "partition": 0, "replica": 2}
    tp1 = {"topic": "orders", "partition": 1, "replica": 2}
    assert rows == [
        {"line_no": 1, "kind": "isr_shrink", **tp0, "isr": [2, 3]},
        {"line_no": 2, "kind": "isr_shrink", **tp0, "isr": [2]},
        {"line_no": 3, "kind": "isr_shrink", **tp0, "isr": [2]},
        {"line_no": 4, "kind": "isr_shrink", **tp0, "isr": [2, 3], "hwm": 1180, "leo": 1200},
        {"line_no": 5, "kind": "isr_expand", **tp0, "isr": [2, 1]},
        {"line_no": 6, "kind": "isr_expand", **tp0, "isr": [2, 3]},
        {"line_no": 7, "kind": "isr_expand", **tp0, "isr": [2, 1]},
        {"line_no": 8, "kind": "become_leader", **tp0, "leader": 2, "leader_epoch": 6,
         "leo": 1200},
        {"line_no": 9, "kind": "become_leader", **tp0, "leader": 2, "leader_epoch": 7,
         "leo": 1250, "hwm": 1240},
        {"line_no": 10, "kind": "truncation", **tp0, "truncate_to": 1180},
        # 0.8.2-0.9 name the topic only: the partition is unknown
        {"line_no": 12, "kind": "fetcher_halt", "topic": "orders", "replica": 2, "leader": 3,
         "leo": 1200, "truncate_to": 1180},
        {"line_no": 13, "kind": "fetcher_halt", **tp0, "leader": 3, "leo": 1200,
         "truncate_to": 1180},
        {"line_no": 14, "kind": "fetcher_halt", **tp1, "leader": 3, "leo": 950,
         "truncate_to": 900},
        {"line_no": 15, "kind": "offset_reset", **tp0, "leader": 3, "leo": 1200,
         "truncate_to": 1180},
        {"line_no": 16, "kind": "offset_reset", **tp1, "leader": 3, "leo": 950,
         "truncate_to": 900},
    ]  # fmt: skip


def test_potential_data_loss(result: dict[str, Any]) -> None:
    rows = [non_null(r) for r in events_of(result, "hand/controller/controller.log")]
    assert rows == [
        {"line_no": 1, "kind": "zk_unclean_election", "topic": "orders", "partition": 0,
         "leader": 3},
        {"line_no": 2, "kind": "zk_unclean_election", "topic": "orders", "partition": 1,
         "leader": 2},
    ]  # fmt: skip


def test_quarantine(result: dict[str, Any]) -> None:
    got = [q for q in result["quarantine"] if q[0].startswith("hand/")]
    assert got == [
        ("hand/broker-2/server.log", 18, "unrecognised isr_shrink message"),
        ("hand/broker-2/server.log", 19, "unrecognised truncation message"),
        ("hand/broker-2/server.log", 20, "unrecognised fetcher_halt message"),
        ("hand/broker-2/server.log", 21, "unrecognised offset_reset message"),
        ("hand/broker-3/state-change.log", 8, "unrecognised leader_and_isr message"),
        ("hand/broker-3/state-change.log", 9, "unrecognised leader_and_isr message"),
        ("hand/controller/controller.log", 3, "unrecognised zk_unclean_election message"),
    ]


# --- the simulator's pre-2.8 lines, read back ----------------------------------------------

_ISR = r"\[?([\d, ]*?)\]?"
#: An independent reading of the lines simulator/oldlogs.py writes: per line,
#: (kind, the values the event must carry).
_EXPECT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"ending become-leader LeaderAndIsr request \(Leader:(\d+),ISR:([\d,]+),"
                r"LeaderEpoch:(\d+)"), "leader_and_isr"),
    (re.compile(rf"ending become-leader LeaderAndIsr request .*?leader=(\d+), leaderEpoch=(\d+), "
                rf"isr={_ISR}, zkVersion"), "leader_and_isr"),
    (re.compile(rf"eceived LeaderAndIsr request .*?leader=(\d+), leaderEpoch=(\d+), isr={_ISR}, "
                r"zkVersion"), "leader_and_isr"),
    (re.compile(r"Changed partition \S+ from \w+ to \w+ with state LeaderAndIsr\(leader=(\d+), "
                r"leaderEpoch=(\d+), isr=List\(([\d, ]*)\)"), "leader_and_isr"),
    (re.compile(r"Shrinking ISR .*?from [\d,]+ to ([\d,]+)"), "isr_shrink"),
    (re.compile(r"Expanding ISR .*?from [\d,]+ to ([\d,]+)"), "isr_expand"),
    (re.compile(r" starts at [Ll]eader [Ee]poch (\d+) from offset (\d+)"), "become_leader"),
    (re.compile(r"(?:Truncating log \S+ to offset |Truncating to offset "
                r"|Truncating partition \S+ to local high watermark )(\d+)"), "truncation"),
]  # fmt: skip


def _values(kind: str, m: re.Match[str]) -> tuple[Any, ...]:
    ints = lambda s: [int(x) for x in re.split(r"[, ]+", s) if x]  # noqa: E731
    if kind == "leader_and_isr":
        if m.re.pattern.startswith(r"ending become-leader LeaderAndIsr request \("):
            return (int(m.group(1)), int(m.group(3)), ints(m.group(2)))
        return (int(m.group(1)), int(m.group(2)), ints(m.group(3)))
    if kind in ("isr_shrink", "isr_expand"):
        return (ints(m.group(1)),)
    if kind == "become_leader":
        return (int(m.group(1)), int(m.group(2)))
    return (int(m.group(1)),)


def _event_values(r: dict[str, Any]) -> tuple[Any, ...]:
    kind = r["kind"]
    if kind == "leader_and_isr":
        return (r["leader"], r["leader_epoch"], r["isr"])
    if kind in ("isr_shrink", "isr_expand"):
        return (r["isr"],)
    if kind == "become_leader":
        return (r["leader_epoch"], r["leo"])
    return (r["truncate_to"],)


def test_simulated_old_templates(result: dict[str, Any]) -> None:
    root: Path = result["root"]
    kinds = {kind for _, kind in _EXPECT}
    total = 0
    for log in sorted((root / "sim").rglob("*.log")):
        rel = str(log.relative_to(root))
        expected = []
        for n, line in enumerate(log.read_text().splitlines(), start=1):
            if "has no effect" in line or "become-follower LeaderAndIsr request" in line:
                continue
            for regex, kind in _EXPECT:
                m = regex.search(line)
                if m:
                    expected.append((n, kind, _values(kind, m)))
                    break
        got = [
            (r["line_no"], r["kind"], _event_values(r))
            for r in events_of(result, rel)
            if r["kind"] in kinds
        ]
        assert got == expected, rel
        total += len(got)
    # every family of lines the four runs print, 0.10.1, 1.1.1 and 2.4.1
    assert total == 52
    assert not [q for q in result["quarantine"] if q[0].startswith("sim/")]
