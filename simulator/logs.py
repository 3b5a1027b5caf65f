"""Broker and controller log4j logs, and the checkpoint files left at the end.

Templates are the 3.6+ ones of kafka-formats.md 5.1-5.5 and 2.6 (the same in
4.0, the kraft-elr era). Layout ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message
(logger)``. Every line is written as it happens (streamed).

* ``broker-N/state-change.log``: ``state.change.logger``, ``[Broker id=N] ``;
* ``broker-N/server.log``: UnifiedLog, ReplicaFetcher and Partition lines;
* ``controller/controller.log``: KRaft controller lines for unclean elections;
* ``broker-N/data/``: ``leader-epoch-checkpoint``, ``partition.metadata`` per
  partition directory, ``replication-offset-checkpoint`` and
  ``recovery-point-offset-checkpoint`` per log directory (section 4).
"""

from __future__ import annotations

from pathlib import Path

from simulator.model import Registration
from simulator.sinks import DEFAULT_OUTPUT, EPOCH_MS, Log4j, Output

DATA_DIR = "/var/lib/kafka/data"
CONTROLLER_ID = 3000

STATE_CHANGE = "state.change.logger"
UNIFIED_LOG = "kafka.log.UnifiedLog"
FETCHER = "kafka.server.ReplicaFetcherThread"
PARTITION = "kafka.cluster.Partition"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
PCB = "org.apache.kafka.controller.PartitionChangeBuilder"

RECOVERY_NAMES = {0: "RECOVERED", 1: "RECOVERING"}


def brackets(ids: list[int]) -> str:
    """``[1,2,3]``: state-change.log lists (no spaces)."""
    return "[" + ",".join(str(i) for i in ids) + "]"


def commas(ids: list[int]) -> str:
    """``1,2,3``: server.log ISR (a Scala Set's mkString(","))."""
    return ",".join(str(i) for i in ids)


def java_array(ids: list[int] | None) -> str:
    """``Arrays.toString``: ``[1, 2]``."""
    return "[" + ", ".join(str(i) for i in (ids or [])) + "]"


def option(value: int | str | None) -> str:
    return "None" if value is None else f"Some({value})"


class BrokerLogs:
    """A broker's ``state-change.log`` and ``server.log``."""

    def __init__(self, folder: Path, broker: int, output: Output = DEFAULT_OUTPUT) -> None:
        self.broker = broker
        self.state_change = Log4j(folder / "state-change.log", "state_change", output)
        self.server = Log4j(folder / "server.log", "server", output)

    def close(self) -> None:
        self.state_change.close()
        self.server.close()

    # -- state-change.log (5.5) ------------------------------------------------
    def _sc(self, ms: int, message: str) -> None:
        self.state_change.write(ms, "INFO", f"[Broker id={self.broker}] {message}", STATE_CHANGE)

    def leader(
        self,
        ms: int,
        tp: str,
        topic_id: str,
        epoch: int,
        start: int,
        partition_epoch: int,
        hwm: int,
        isr: list[int],
        under_min_isr: bool,
        prev_leader: int | None,
        prev_epoch: int,
    ) -> None:
        under = "(under-min-isr)" if under_min_isr else ""
        self._sc(
            ms,
            f"Leader {tp} with topic id {option(topic_id)} starts at leader epoch {epoch} from "
            f"offset {start} with partition epoch {partition_epoch}, high watermark {hwm}, "
            f"ISR {brackets(isr)}, adding replicas [] and removing replicas [] {under}. "
            f"Previous leader {option(prev_leader)} and previous leader epoch was {prev_epoch}.",
        )

    def follower(
        self,
        ms: int,
        tp: str,
        epoch: int,
        end: int,
        partition_epoch: int,
        hwm: int,
        leader: int,
    ) -> None:
        # 3.6 -> trunk-2024: makeFollower assigns leaderReplicaIdOpt and
        # leaderEpoch before logging, so "previous" prints the new values.
        self._sc(
            ms,
            f"Follower {tp} starts at leader epoch {epoch} from offset {end} with partition "
            f"epoch {partition_epoch} and high watermark {hwm}. Current leader is {leader}. "
            f"Previous leader {option(leader)} and previous leader epoch was {epoch}.",
        )

    def recovering(self, ms: int, tp: str) -> None:
        self._sc(
            ms,
            f"The topic partition {tp} was marked as RECOVERING. "
            "Marking the topic partition as RECOVERED.",
        )

    # -- server.log (5.2, 5.3) ---------------------------------------------------
    def _fetcher(self, leader: int) -> str:
        return f"[ReplicaFetcher replicaId={self.broker}, leaderId={leader}, fetcherId=0] "

    def epoch_truncation(
        self,
        ms: int,
        tp: str,
        p: int,
        leader: int,
        to: int,
        div_epoch: int,
        div_end: int,
        leo: int,
        hwm: int,
    ) -> None:
        """``truncateOnFetchResponse`` with a divergingEpoch, then ``truncate``."""
        self.server.write(
            ms,
            "INFO",
            f"{self._fetcher(leader)}Truncating partition {tp} with "
            f"TruncationState(offset={to}, completed=true) due to leader epoch and offset "
            f"EpochEndOffset(errorCode=0, partition={p}, leaderEpoch={div_epoch}, "
            f"endOffset={div_end})",
            FETCHER,
        )
        if to < hwm:
            self.server.write(
                ms,
                "WARN",
                f"{self._fetcher(leader)}Truncating {tp} to offset {to} below high watermark {hwm}",
                FETCHER,
            )
        prefix = f"[UnifiedLog partition={tp}, dir={DATA_DIR}] "
        if to >= leo:
            message = (
                f"Truncating to {to} has no effect as the largest offset in the log is {leo - 1}"
            )
        else:
            message = f"Truncating to offset {to}"
        self.server.write(ms, "INFO", prefix + message, UNIFIED_LOG)

    def shrink_isr(
        self,
        ms: int,
        tp: str,
        old: list[int],
        new: list[int],
        hwm: int,
        leo: int,
        out: list[tuple[int, int, int]],
    ) -> None:
        replicas = " ".join(
            f"(brokerId: {b}, endOffset: {end if end >= 0 else 'unknown'}, "
            f"lastCaughtUpTimeMs: {EPOCH_MS + caught})"
            for b, end, caught in out
        )
        self.server.write(
            ms,
            "INFO",
            f"[Partition {tp} broker={self.broker}] Shrinking ISR from {commas(old)} to "
            f"{commas(new)}. Leader: (highWatermark: {hwm}, endOffset: {leo}). "
            f"Out of sync replicas: {replicas}.",
            PARTITION,
        )

    def log_loaded(self, ms: int, tp: str, hwm: int) -> None:
        """The Partition re-created after a restart applies the checkpointed HW
        (formats-addendum.md 10.3; kafka-formats.md 5.4, 2.8 -> trunk)."""
        self.server.write(
            ms,
            "INFO",
            f"[Partition {tp} broker={self.broker}] Log loaded for partition {tp} with initial "
            f"high watermark {hwm}",
            PARTITION,
        )

    def isr_updated(
        self, ms: int, tp: str, isr: list[int], under_min_isr: bool, partition_epoch: int
    ) -> None:
        under = "(under-min-isr)" if under_min_isr else ""
        self.server.write(
            ms,
            "INFO",
            f"[Partition {tp} broker={self.broker}] ISR updated to {commas(isr)} {under} and "
            f"version updated to {partition_epoch}",
            PARTITION,
        )


LOG_28 = "kafka.log.Log"  # <= 3.0 (UnifiedLog from 3.1)
ZK_CONTROLLER = "kafka.controller.KafkaController"


class ZkBrokerLogs(BrokerLogs):
    """A ZK-era broker's logs, 2.8 templates (kafka-formats.md 5.2, 5.3, 5.5).

    ``zk-epoch`` is Kafka 2.8. ``zk-hw`` stands for 0.8-0.10, whose texts
    differ from 2.8 and are not in the reference (kafka-formats.md covers
    2.8+, plus the <= 2.7 ISR lines of 5.3): the 2.8 templates are written
    there too, except for the <= 2.7 ISR lines ("Expanding ISR", "ISR updated
    to [..] and zkVersion updated to [..]"), which the reference gives."""

    def __init__(
        self, folder: Path, broker: int, era: str, output: Output = DEFAULT_OUTPUT
    ) -> None:
        super().__init__(folder, broker, output)
        self.era = era

    def leader(
        self,
        ms: int,
        tp: str,
        topic_id: str,
        epoch: int,
        start: int,
        partition_epoch: int,
        hwm: int,
        isr: list[int],
        under_min_isr: bool,
        prev_leader: int | None,
        prev_epoch: int,
    ) -> None:
        self._sc(
            ms,
            f"Leader {tp} starts at leader epoch {epoch} from offset {start} with high "
            f"watermark {hwm} ISR {brackets(isr)} addingReplicas [] removingReplicas []. "
            f"Previous leader epoch was {prev_epoch}.",
        )

    def follower28(self, ms: int, tp: str, epoch: int, end: int, hwm: int, prev_epoch: int) -> None:
        """2.8-3.2: logged before the partition takes the new epoch."""
        self._sc(
            ms,
            f"Follower {tp} starts at leader epoch {epoch} from offset {end} with high "
            f"watermark {hwm}. Previous leader epoch was {prev_epoch}.",
        )

    def recovering(self, ms: int, tp: str) -> None:
        pass  # leaderRecoveryState is 3.2+

    def _truncate_log(self, ms: int, tp: str, to: int, leo: int) -> None:
        prefix = f"[Log partition={tp}, dir={DATA_DIR}] "
        if to >= leo:
            message = (
                f"Truncating to {to} has no effect as the largest offset in the log is {leo - 1}"
            )
        else:
            message = f"Truncating to offset {to}"
        self.server.write(ms, "INFO", prefix + message, LOG_28)

    def _below_hwm(self, ms: int, tp: str, leader: int, to: int, hwm: int) -> None:
        if to < hwm:
            self.server.write(
                ms,
                "WARN",
                f"{self._fetcher(leader)}Truncating {tp} to offset {to} below high watermark {hwm}",
                FETCHER,
            )

    def epoch_truncation(
        self,
        ms: int,
        tp: str,
        p: int,
        leader: int,
        to: int,
        div_epoch: int,
        div_end: int,
        leo: int,
        hwm: int,
    ) -> None:
        """2.8/3.0: no per-partition INFO for epoch truncation (kafka-formats.md 5.2)."""
        self._below_hwm(ms, tp, leader, to, hwm)
        self._truncate_log(ms, tp, to, leo)

    def hw_truncation(self, ms: int, tp: str, leader: int, hwm: int, leo: int) -> None:
        """zk-hw: a follower truncates to its own HW when it starts following.

        The 2.8 text (kafka-formats.md 5.2); 0.10 printed a different line
        ("Truncating log ... to offset ..."), which is not in the reference."""
        self.server.write(
            ms,
            "INFO",
            f"{self._fetcher(leader)}Truncating partition {tp} to local high watermark {hwm}",
            FETCHER,
        )
        self._truncate_log(ms, tp, hwm, leo)

    def offset_reset(self, ms: int, tp: str, leader: int, leo: int, to: int, hwm: int) -> None:
        """OFFSET_OUT_OF_RANGE with the leader's log end below ours: truncate to it."""
        self._below_hwm(ms, tp, leader, to, hwm)
        self._truncate_log(ms, tp, to, leo)
        self.server.write(
            ms,
            "WARN",
            f"{self._fetcher(leader)}Reset fetch offset for partition {tp} from {leo} to "
            f"current leader's latest offset {to}",
            FETCHER,
        )

    def expand_isr(self, ms: int, tp: str, old: list[int], new: list[int]) -> None:
        """<= 2.7 only (ZK-direct ISR writes): zk-hw."""
        self.server.write(
            ms,
            "INFO",
            f"[Partition {tp} broker={self.broker}] Expanding ISR from {commas(old)} to "
            f"{commas(new)}",
            PARTITION,
        )

    def isr_updated(
        self, ms: int, tp: str, isr: list[int], under_min_isr: bool, partition_epoch: int
    ) -> None:
        if self.era == "zk-hw":  # <= 2.6
            text = f"ISR updated to [{commas(isr)}] and zkVersion updated to [{partition_epoch}]"
        else:  # 2.8-3.0
            text = f"ISR updated to {commas(isr)} and version updated to [{partition_epoch}]"
        self.server.write(ms, "INFO", f"[Partition {tp} broker={self.broker}] {text}", PARTITION)


def scala_list(ids: list[int]) -> str:
    return "List(" + ", ".join(str(i) for i in ids) + ")"


class ZkControllerLogs:
    """The ZK controller's ``state-change.log`` lines (``[Controller id=N
    epoch=E] ``, 2.8-3.1 ``LeaderAndIsr`` form) and ``controller.log`` lines
    (``[Controller id=N] ``), under ``controller/``."""

    def __init__(self, folder: Path, output: Output = DEFAULT_OUTPUT) -> None:
        self.state_change = Log4j(folder / "state-change.log", "state_change", output)
        self.log = Log4j(folder / "controller.log", "controller", output)

    def close(self) -> None:
        self.state_change.close()
        self.log.close()

    def changed(
        self,
        ms: int,
        controller: int,
        controller_epoch: int,
        tp: str,
        from_state: str,
        to_state: str,
        leader: int,
        leader_epoch: int,
        isr: list[int],
        zk_version: int,
    ) -> None:
        self.state_change.write(
            ms,
            "INFO",
            f"[Controller id={controller} epoch={controller_epoch}] Changed partition {tp} "
            f"from {from_state} to {to_state} with state LeaderAndIsr(leader={leader}, "
            f"leaderEpoch={leader_epoch}, isr={scala_list(isr)}, zkVersion={zk_version})",
            STATE_CHANGE,
        )

    def elected(self, ms: int, controller: int, epoch: int) -> None:
        self.log.write(
            ms,
            "INFO",
            f"[Controller id={controller}] {controller} successfully elected as the controller. "
            f"Epoch incremented to {epoch} and epoch zk version is now {epoch}",
            ZK_CONTROLLER,
        )

    def broker_failure(self, ms: int, controller: int, dead: list[int]) -> None:
        self.log.write(
            ms,
            "INFO",
            f"[Controller id={controller}] Broker failure callback for {commas(dead)}",
            ZK_CONTROLLER,
        )

    def brokers_changed(
        self, ms: int, controller: int, added: list[int], deleted: list[int], live: list[int]
    ) -> None:
        self.log.write(
            ms,
            "INFO",
            f"[Controller id={controller}] Newly added brokers: {commas(added)}, deleted "
            f"brokers: {commas(deleted)}, bounced brokers: , all live brokers: {commas(live)}",
            ZK_CONTROLLER,
        )


class ControllerLog:
    """``controller/controller.log`` (KRaft, 3.3+ file; 3.6+ texts)."""

    def __init__(self, path: Path, output: Output = DEFAULT_OUTPUT) -> None:
        self.log = Log4j(path, "controller", output)

    def close(self) -> None:
        self.log.close()

    def unclean_leader(self, ms: int, topic_id: str, p: int, leader: int) -> None:
        self.log.write(
            ms,
            "INFO",
            f"Setting new leader for topicId {topic_id}, partition {p} to {leader} "
            "using an unclean election",
            PCB,
        )

    def unclean_change(
        self, ms: int, topic: str, p: int, topic_id: str, diff: list[tuple[str, str, str]]
    ) -> None:
        body = ", ".join(f"{name}: {old} -> {new}" for name, old, new in diff)
        self.log.write(
            ms,
            "INFO",
            f"[QuorumController id={CONTROLLER_ID}] UNCLEAN partition change for {topic}-{p} "
            f"with topic ID {topic_id}: {body}",
            RCM,
        )


def registration_diff(o: Registration, n: Registration) -> list[tuple[str, str, str]]:
    """``PartitionRegistration.diff`` order: isr, leader, leaderRecoveryState,
    leaderEpoch, elr, lastKnownElr, partitionEpoch (only what changed)."""
    out: list[tuple[str, str, str]] = []
    if o.isr != n.isr:
        out.append(("isr", java_array(o.isr), java_array(n.isr)))
    if o.leader != n.leader:
        out.append(("leader", str(o.leader), str(n.leader)))
    if o.recovery != n.recovery:
        out.append(("leaderRecoveryState", RECOVERY_NAMES[o.recovery], RECOVERY_NAMES[n.recovery]))
    if o.leader_epoch != n.leader_epoch:
        out.append(("leaderEpoch", str(o.leader_epoch), str(n.leader_epoch)))
    if (o.elr or []) != (n.elr or []):
        out.append(("elr", java_array(o.elr), java_array(n.elr)))
    if (o.lkelr or []) != (n.lkelr or []):
        out.append(("lastKnownElr", java_array(o.lkelr), java_array(n.lkelr)))
    out.append(("partitionEpoch", str(o.partition_epoch), str(n.partition_epoch)))
    return out


# -- checkpoint files (section 4) ------------------------------------------------------


def _checkpoint(path: Path, entries: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("0\n" + f"{len(entries)}\n" + "".join(e + "\n" for e in entries), "utf-8")


def write_checkpoints(
    folder: Path,
    partitions: list[tuple[str, int, str, list[tuple[int, int]], int, int]],
    per_partition: bool = True,
) -> None:
    """``partitions``: (topic, partition, topic id, epoch cache, checkpointed HWM,
    recovery point), sorted by the caller. ``per_partition`` False (zk-hw,
    0.10): no leader-epoch-checkpoint (0.11+) nor partition.metadata (2.8+)."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for topic, p, topic_id, cache, _hwm, _rp in partitions:
        if not per_partition:
            continue
        pdir = data / f"{topic}-{p}"
        _checkpoint(pdir / "leader-epoch-checkpoint", [f"{e} {s}" for e, s in cache])
        # exactly two lines, no trailing newline (PartitionMetadata.encode)
        (pdir / "partition.metadata").write_text(
            f"version: 0\ntopic_id: {topic_id}", encoding="utf-8"
        )
    _checkpoint(
        data / "replication-offset-checkpoint", [f"{t} {p} {h}" for t, p, _, _, h, _ in partitions]
    )
    _checkpoint(
        data / "recovery-point-offset-checkpoint",
        [f"{t} {p} {r}" for t, p, _, _, _, r in partitions],
    )
