"""Broker and controller log4j lines of ZooKeeper-era Kafka before 2.8.

formats-addendum.md section 9 gives the templates per version; each method
below names the section, and the texts were checked with ``git show
<tag>:<path>`` at 0.10.1.1, 1.1.1 and 2.4.1 of apache/kafka (paths: core/src/
main/scala/kafka/{server/ReplicaManager, cluster/Partition, log/Log,
server/ReplicaFetcherThread, server/AbstractFetcherThread,
server/AbstractFetcherManager, controller/*}.scala). The default
``config/log4j.properties`` of these versions sends ``state.change.logger`` to
state-change.log at TRACE (9.0.1), so the per-partition TRACE lines are there.

Value printing (9.0.2): ``TopicAndPartition`` is ``[t,p]`` before 1.0 and
``t-p`` from 1.0 (in 0.10.1 the become-leader/-follower lines already print a
Java ``TopicPartition`` in some places: each method says which);
``LeaderIsrAndControllerEpoch`` ``(Leader:2,ISR:2,1,LeaderEpoch:6,
ControllerEpoch:3)``; ``PartitionState`` (0.10 ``isr=[2, 1]``, 1.x
``isr=2,1``); 2.4 ``LeaderAndIsrPartitionState(...)``; ``LeaderAndIsr`` JSON
before 1.1, ``LeaderAndIsr(leader=.., ...)`` from 1.1; ``BrokerEndPoint``
``BrokerEndPoint(2,broker-2,9092)`` before 2.1 and ``BrokerEndPoint(id=2,
host=broker-2:9092)`` from 2.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simulator.logs import (
    DATA_DIR,
    FETCHER,
    LOG_28,
    PARTITION,
    STATE_CHANGE,
    ZK_CONTROLLER,
    ZkBrokerLogs,
    ZkControllerLogs,
    commas,
)
from simulator.sinks import DEFAULT_OUTPUT, Log4j, Output
from simulator.versions import Version

FETCHER_MANAGER = "kafka.server.ReplicaFetcherManager"
LEADER_ELECTOR = "kafka.server.ZookeeperLeaderElector"  # <= 0.10.2 controller election
OFFLINE_SELECTOR = "kafka.controller.OfflinePartitionLeaderSelector"  # <= 1.0
BROKER_CHANGE_010 = "kafka.controller.ReplicaStateMachine$BrokerChangeListener"


@dataclass(frozen=True)
class PartitionState:
    """One partition's state as the ZK controller sends it in a LeaderAndIsr request."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    is_new: bool = False

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def old_tp(self) -> str:
        """``TopicAndPartition.toString`` before 1.0."""
        return f"[{self.topic},{self.partition}]"


def java_list(ids: tuple[int, ...] | list[int]) -> str:
    """``Arrays.toString`` / ``MessageUtil.deepToString``: ``[2, 1]``."""
    return "[" + ", ".join(str(i) for i in ids) + "]"


def scala_list(ids: tuple[int, ...] | list[int]) -> str:
    return "List(" + ", ".join(str(i) for i in ids) + ")"


def state_text(version: Version, s: PartitionState) -> str:
    """The partition state a LeaderAndIsr request carries (9.0.2)."""
    if version.before("1.0"):  # org.apache.kafka.common.requests.PartitionState, 0.10
        return (
            f"PartitionState(controllerEpoch={s.controller_epoch}, leader={s.leader}, "
            f"leaderEpoch={s.leader_epoch}, isr={java_list(s.isr)}, zkVersion={s.zk_version}, "
            f"replicas={java_list(s.replicas)})"
        )
    if version.before("2.4"):  # LeaderAndIsrRequest.PartitionState, 1.0-2.3 (Utils.join)
        return (
            f"PartitionState(controllerEpoch={s.controller_epoch}, leader={s.leader}, "
            f"leaderEpoch={s.leader_epoch}, isr={commas(list(s.isr))}, zkVersion={s.zk_version}, "
            f"replicas={commas(list(s.replicas))}, isNew={str(s.is_new).lower()})"
        )
    # generated LeaderAndIsrPartitionState.toString, 2.4-2.7
    return (
        f"LeaderAndIsrPartitionState(topicName='{s.topic}', partitionIndex={s.partition}, "
        f"controllerEpoch={s.controller_epoch}, leader={s.leader}, leaderEpoch={s.leader_epoch}, "
        f"isr={java_list(s.isr)}, zkVersion={s.zk_version}, replicas={java_list(s.replicas)}, "
        f"addingReplicas=[], removingReplicas=[], isNew={str(s.is_new).lower()})"
    )


def leader_isr_and_controller_epoch(s: PartitionState) -> str:
    """``LeaderIsrAndControllerEpoch.toString`` 0.8.2-2.7.1 (9.0.2)."""
    return (
        f"(Leader:{s.leader},ISR:{commas(list(s.isr))},LeaderEpoch:{s.leader_epoch},"
        f"ControllerEpoch:{s.controller_epoch})"
    )


def leader_and_isr(version: Version, s: PartitionState) -> str:
    """``kafka.api.LeaderAndIsr.toString``: JSON up to 1.0, case-class form 1.1-3.1."""
    if version.before("1.1"):
        isr = ",".join(str(i) for i in s.isr)
        return f'{{"leader":{s.leader},"leader_epoch":{s.leader_epoch},"isr":[{isr}]}}'
    return (
        f"LeaderAndIsr(leader={s.leader}, leaderEpoch={s.leader_epoch}, "
        f"isr={scala_list(s.isr)}, zkVersion={s.zk_version})"
    )


def broker_end_point(version: Version, broker: int) -> str:
    """``kafka.cluster.BrokerEndPoint.toString`` (9.0.2); hosts as registered."""
    if version.before("2.1"):
        return f"BrokerEndPoint({broker},broker-{broker},9092)"
    return f"BrokerEndPoint(id={broker}, host=broker-{broker}:9092)"


class OldBrokerLogs(ZkBrokerLogs):
    """A pre-2.8 ZK broker's state-change.log and server.log (0.10, 1.1, 2.4)."""

    def __init__(
        self, folder: Path, broker: int, version: Version, output: Output = DEFAULT_OUTPUT
    ) -> None:
        super().__init__(folder, broker, "zk-hw" if version.before("1.1") else "zk-epoch", output)
        self.version = version

    # -- prefixes ------------------------------------------------------------------
    def _sc(self, ms: int, message: str, level: str = "TRACE") -> None:
        """9.1: ``[Broker id=N] `` from 1.0; before, the text starts ``Broker N ``."""
        if self.version.before("1.0"):
            text = f"Broker {self.broker} {message[0].lower()}{message[1:]}"
        else:
            text = f"[Broker id={self.broker}] {message}"
        self.state_change.write(ms, level, text, STATE_CHANGE)

    def _partition(self, ms: int, tp: str, message: str, level: str = "INFO") -> None:
        """9.4: ``Partition [t,p] on broker N: `` before 1.0 (0.11), ``[Partition t-p
        broker=N] `` from 1.0."""
        topic, p = tp.rsplit("-", 1)
        if self.version.before("1.0"):
            prefix = f"Partition [{topic},{p}] on broker {self.broker}: "
        else:
            prefix = f"[Partition {tp} broker={self.broker}] "
        self.server.write(ms, level, prefix + message, PARTITION)

    def _fetcher_ident(self, leader: int) -> str:
        """9.6: the fetcher thread's logIdent."""
        if self.version.before("0.11"):
            return f"[ReplicaFetcherThread-0-{leader}], "
        return f"[ReplicaFetcher replicaId={self.broker}, leaderId={leader}, fetcherId=0] "

    def _fetch_line(self, ms: int, leader: int, level: str, message: str) -> None:
        self.server.write(ms, level, self._fetcher_ident(leader) + message, FETCHER)

    # -- LeaderAndIsr handling, state-change.log (9.3) ----------------------------
    def lai_received(
        self, ms: int, s: PartitionState, correlation: int, controller: int, cepoch: int
    ) -> None:
        head = f"Received LeaderAndIsr request {state_text(self.version, s)} correlation id "
        head += f"{correlation} from controller {controller} epoch {cepoch}"
        if self.version.before("1.0"):
            head += f" for partition {s.old_tp}"  # topic and partition formatted apart
        elif self.version.before("2.4"):
            head += f" for partition {s.tp}"
        self._sc(ms, head)

    def _tp_lai(self, s: PartitionState) -> str:
        """The become-leader/-follower lines: ``TopicAndPartition`` (``[t,p]``) in
        0.10, the partition's ``TopicPartition`` (``t-p``) from 1.0."""
        return s.old_tp if self.version.before("1.0") else s.tp

    def lai_leader(
        self,
        ms: int,
        s: PartitionState,
        correlation: int,
        controller: int,
        cepoch: int,
        new_leader: bool,
        start: int,
        hwm: int,
        prev_epoch: int,
    ) -> None:
        """``makeLeaders`` with ``Partition.makeLeader`` (9.3, 9.4)."""
        tp = self._tp_lai(s)
        self._sc(
            ms,
            f"Handling LeaderAndIsr request correlationId {correlation} from controller "
            f"{controller} epoch {cepoch} starting the become-leader transition for partition {tp}",
        )
        if self.version.at_least("2.4"):  # Partition.makeLeader, 2.4-2.5
            self._partition(
                ms,
                s.tp,
                f"{s.tp} starts at leader epoch {s.leader_epoch} from offset {start} with high "
                f"watermark {hwm}. Previous leader epoch was {prev_epoch}.",
            )
        elif self.version.at_least("0.11"):  # 0.11-2.3; the offset is the LEO until 1.1
            self._partition(
                ms,
                s.tp,
                f"{s.tp} starts at Leader Epoch {s.leader_epoch} from offset {start}. Previous "
                f"Leader Epoch was: {prev_epoch}",
            )
        last = f" (last update controller epoch {s.controller_epoch})"
        if self.version.before("1.0"):
            last = ""
        if new_leader:
            self._sc(
                ms,
                f"Stopped fetchers as part of become-leader request from controller {controller} "
                f"epoch {cepoch} with correlation id {correlation} for partition {tp}{last}",
            )
        else:
            self._sc(
                ms,
                "Skipped the become-leader state change after marking its partition as leader "
                f"with correlation id {correlation} from controller {controller} epoch {cepoch} "
                f"for partition {tp}{last} since it is already the leader for the partition.",
                "INFO",
            )
        self._sc(
            ms,
            f"Completed LeaderAndIsr request correlationId {correlation} from controller "
            f"{controller} epoch {cepoch} for the become-leader transition for partition {tp}",
        )

    def _with_leader(self, s: PartitionState) -> str:
        """2.0-2.5 append `` with leader L`` to the follower lines."""
        return f" with leader {s.leader}" if self.version.at_least("2.0") else ""

    def lai_follower_start(
        self,
        ms: int,
        s: PartitionState,
        correlation: int,
        controller: int,
        cepoch: int,
        changed: bool,
    ) -> None:
        """``makeFollowers`` up to the truncation; ``changed`` False: ``makeFollower``
        returned false (the same leader, and before 2.4 any epoch)."""
        tp = self._tp_lai(s)
        self._sc(
            ms,
            f"Handling LeaderAndIsr request correlationId {correlation} from controller "
            f"{controller} epoch {cepoch} starting the become-follower transition for partition "
            f"{tp}{self._with_leader(s)}",
        )
        if not changed:
            skipped_tp = s.old_tp if self.version.before("0.10.2") else s.tp
            last = (
                ""
                if self.version.before("1.0")
                else (f" (last update controller epoch {s.controller_epoch})")
            )
            self._sc(
                ms,
                "Skipped the become-follower state change after marking its partition as "
                f"follower with correlation id {correlation} from controller {controller} epoch "
                f"{cepoch if self.version.at_least('1.0') else s.controller_epoch} for partition "
                f"{skipped_tp}{last} since the new leader {s.leader} is the same as the old leader",
                "INFO",
            )
            self._lai_follower_completed(ms, s, correlation, controller, cepoch)
            return
        self._sc(
            ms,
            f"Stopped fetchers as part of become-follower request from controller {controller} "
            f"epoch {cepoch} with correlation id {correlation} for partition {tp}"
            f"{self._with_leader(s)}",
        )

    def lai_follower_end(
        self,
        ms: int,
        s: PartitionState,
        correlation: int,
        controller: int,
        cepoch: int,
        init_offset: int,
    ) -> None:
        """``makeFollowers`` after the truncation: the fetcher is added at
        ``init_offset`` (the LEO before 1.1, after the HW truncation; the HW from
        1.1: 9.3 "Where the initial fetch offset is")."""
        tp = s.old_tp if self.version.before("1.0") else s.tp
        if self.version.before("2.6"):
            self._sc(
                ms,
                f"Truncated logs and checkpointed recovery boundaries for partition {tp} as part "
                f"of become-follower request with correlation id {correlation} from controller "
                f"{controller} epoch {cepoch}{self._with_leader(s)}",
            )
        endpoint = broker_end_point(self.version, s.leader)
        if self.version.before("2.2"):  # AbstractFetcherManager, 0.8.2-2.1
            added = (
                f"Added fetcher for partitions List([{s.tp}, initOffset {init_offset} to broker "
                f"{endpoint}] )"
            )
        else:  # 2.2-2.4
            added = (
                f"Added fetcher to broker {endpoint} for partitions Map({s.tp} -> "
                f"(offset={init_offset}, leaderEpoch={s.leader_epoch}))"
            )
        self.server.write(
            ms, "INFO", f"[ReplicaFetcherManager on broker {self.broker}] {added}", FETCHER_MANAGER
        )
        leader = f" with leader {endpoint}" if self.version.at_least("2.0") else ""
        self._sc(
            ms,
            f"Started fetcher to new leader as part of become-follower request from controller "
            f"{controller} epoch {cepoch} with correlation id {correlation} for partition {tp}"
            f"{leader}",
        )
        self._lai_follower_completed(ms, s, correlation, controller, cepoch)

    def lai_no_leader(
        self, ms: int, s: PartitionState, correlation: int, controller: int, cepoch: int
    ) -> None:
        """A LeaderAndIsr with leader -1: not a live broker, the follower
        transition is refused (9.3, ERROR)."""
        tp = self._tp_lai(s)
        self._sc(
            ms,
            f"Handling LeaderAndIsr request correlationId {correlation} from controller "
            f"{controller} epoch {cepoch} starting the become-follower transition for partition "
            f"{tp}{self._with_leader(s)}",
        )
        if self.version.before("1.0"):
            text = (
                f"Received LeaderAndIsrRequest with correlation id {correlation} from controller "
                f"{controller} epoch {s.controller_epoch} for partition {s.old_tp} but cannot "
                f"become follower since the new leader {s.leader} is unavailable."
            )
        else:
            text = (
                f"Received LeaderAndIsrRequest with correlation id {correlation} from controller "
                f"{controller} epoch {cepoch} for partition {s.tp} (last update controller epoch "
                f"{s.controller_epoch}) but cannot become follower since the new leader "
                f"{s.leader} is unavailable."
            )
        self._sc(ms, text, "ERROR")
        self._lai_follower_completed(ms, s, correlation, controller, cepoch)

    def _lai_follower_completed(
        self, ms: int, s: PartitionState, correlation: int, controller: int, cepoch: int
    ) -> None:
        self._sc(
            ms,
            f"Completed LeaderAndIsr request correlationId {correlation} from controller "
            f"{controller} epoch {cepoch} for the become-follower transition for partition "
            f"{self._tp_lai(s)}{self._with_leader(s)}",
        )

    # -- the 2.8 entry points, in these versions' texts ------------------------------
    def leader(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("pre-2.8: the cluster calls lai_leader")

    def follower28(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("pre-2.8: no follower transition line")

    # -- Log truncation, server.log (9.5) ---------------------------------------------
    def _truncate_log(self, ms: int, tp: str, to: int, leo: int) -> None:
        no_effect = f"has no effect as the largest offset in the log is {leo - 1}"
        if self.version.before("1.0"):  # no prefix; the log's name in the text
            if to >= leo:
                text = f"Truncating {tp} to {to} {no_effect}."
            else:
                text = f"Truncating log {tp} to offset {to}."
        else:
            prefix = f"[Log partition={tp}, dir={DATA_DIR}] "
            if to >= leo:
                text = prefix + f"Truncating to {to} {no_effect}"
            else:
                text = prefix + f"Truncating to offset {to}"
        self.server.write(ms, "INFO", text, LOG_28)

    def hw_truncation(self, ms: int, tp: str, leader: int, hwm: int, leo: int) -> None:
        """0.8.2-0.10.2: ``makeFollowers`` truncates every new follower to its HW
        (9.5 "Pre-KIP-101 truncation signature"); 2.1+: a follower without epochs
        truncates to its HW from the fetcher (9.6)."""
        if self.version.at_least("2.1"):
            self._fetch_line(
                ms, leader, "INFO", f"Truncating partition {tp} to local high watermark {hwm}"
            )
        self._truncate_log(ms, tp, hwm, leo)

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
        """Truncation after an OffsetsForLeaderEpoch answer: ``Partition.truncateTo``
        (the Log line). 2.0-2.7 follow it with a WARN when the offset is below the
        log's HW, read after the truncation has lowered the HW to the offset
        (``Log.updateLogEndOffset``), so it is never printed."""
        self._truncate_log(ms, tp, to, leo)

    def epoch_no_truncation(self, ms: int, tp: str, leader: int, end: int, leo: int) -> None:
        """1.1 (0.11-1.1): the leader's end offset is at or beyond ours."""
        self._fetch_line(
            ms,
            leader,
            "INFO",
            f"Based on follower's leader epoch, leader replied with an offset {end} >= the "
            f"follower's log end offset {leo} in {tp}. No truncation needed.",
        )
        self._truncate_log(ms, tp, leo, leo)

    def epoch_unknown_offset(self, ms: int, tp: str, leader: int, initial: int) -> None:
        who = "follower" if self.version.before("2.1") else "replica"
        self._fetch_line(
            ms,
            leader,
            "WARN",
            f"Based on {who}'s leader epoch, leader replied with an unknown offset in {tp}. The "
            f"initial fetch offset {initial} will be used for truncation.",
        )

    def epoch_unknown_to_replica(self, ms: int, tp: str, leader: int, epoch: int, to: int) -> None:
        """2.1-2.7: KIP-279's intermediate step."""
        self._fetch_line(
            ms,
            leader,
            "INFO",
            f"Based on replica's leader epoch, leader replied with epoch {epoch} unknown to the "
            f"replica for {tp}. Will truncate to {to} and send another leader epoch request to "
            "the leader.",
        )

    def epoch_below_tracked(self, ms: int, tp: str, leader: int, epoch: int, end: int) -> None:
        self._fetch_line(
            ms,
            leader,
            "WARN",
            f"Based on replica's leader epoch, leader replied with epoch {epoch} below any "
            f"replica's tracked epochs for {tp}. The leader's offset only {end} will be used for "
            "truncation.",
        )

    def epoch_fenced(self, ms: int, tp: str, leader: int, epoch: int) -> None:
        """2.1-2.7 ``onPartitionFenced``: the leader is in a later epoch."""
        self._fetch_line(
            ms,
            leader,
            "INFO",
            f"Partition {tp} has an older epoch ({epoch}) than the current leader. Will await the "
            "new LeaderAndIsr state before resuming fetching.",
        )

    def epoch_retry(self, ms: int, tp: str, leader: int, error: str) -> None:
        self._fetch_line(
            ms,
            leader,
            "INFO",
            f"Retrying leaderEpoch request for partition {tp} as the leader reported an error: "
            f"{error}",
        )

    def offset_reset(self, ms: int, tp: str, leader: int, leo: int, to: int, hwm: int) -> None:
        """OFFSET_OUT_OF_RANGE with the leader's log end below ours (9.6): the WARN,
        then the truncation, then the out-of-range line of AbstractFetcherThread."""
        if self.version.before("1.0"):
            self._fetch_line(
                ms,
                leader,
                "WARN",
                f"Replica {self.broker} for partition {tp} reset its fetch offset from {leo} to "
                f"current leader {leader}'s latest offset {to}",
            )
        else:
            self._fetch_line(
                ms,
                leader,
                "WARN",
                f"Reset fetch offset for partition {tp} from {leo} to current leader's latest "
                f"offset {to}",
            )
        self._truncate_log(ms, tp, to, leo)
        if self.version.before("1.0"):
            topic, p = tp.rsplit("-", 1)
            self._fetch_line(
                ms,
                leader,
                "ERROR",
                f"Current offset {leo} for partition [{topic},{p}] out of range; reset offset to "
                f"{to}",
            )
        else:
            self._fetch_line(
                ms,
                leader,
                "INFO",
                f"Current offset {leo} for partition {tp} is out of range, which typically implies "
                f"a leader change. Reset fetch offset to {to}",
            )

    def truncation_not_allowed(
        self, ms: int, tp: str, leader: int, leo: int, leader_leo: int
    ) -> None:
        """0.8.2-1.1 with unclean.leader.election.enable=false: the follower stops
        the broker instead of truncating (9.6); FATAL up to 1.0, ERROR with the
        FATAL marker in 1.1 (9.0)."""
        if self.version.before("0.11"):
            text = (
                f"Exiting because log truncation is not allowed for partition {tp}, Current "
                f"leader {leader}'s latest offset {leader_leo} is less than replica "
                f"{self.broker}'s latest offset {leo}"
            )
            level = "FATAL"
        else:
            text = (
                f"Exiting because log truncation is not allowed for partition {tp}, current "
                f"leader's latest offset {leader_leo} is less than replica's latest offset {leo}"
            )
            level = "FATAL" if self.version.before("1.1") else "ERROR"
        self._fetch_line(ms, leader, level, text)

    # -- ISR, server.log (9.4) -------------------------------------------------------
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
        if self.version.before("0.11"):
            topic, p = tp.rsplit("-", 1)
            text = f"Shrinking ISR for partition [{topic},{p}] from {commas(old)} to {commas(new)}"
        elif self.version.before("2.2"):
            text = f"Shrinking ISR from {commas(old)} to {commas(new)}"
        else:  # 2.2-2.6: the follower's LEO as the leader knows it, -1 when unknown
            replicas = " ".join(f"(brokerId: {b}, endOffset: {end})" for b, end, _ in out)
            text = (
                f"Shrinking ISR from {commas(old)} to {commas(new)}. Leader: (highWatermark: "
                f"{hwm}, endOffset: {leo}). Out of sync replicas: {replicas}."
            )
        self._partition(ms, tp, text)

    def expand_isr(self, ms: int, tp: str, old: list[int], new: list[int]) -> None:
        if self.version.before("0.10.2"):
            topic, p = tp.rsplit("-", 1)
            text = f"Expanding ISR for partition [{topic},{p}] from {commas(old)} to {commas(new)}"
        elif self.version.before("0.11"):
            text = f"Expanding ISR for partition {tp} from {commas(old)} to {commas(new)}"
        else:
            text = f"Expanding ISR from {commas(old)} to {commas(new)}"
        self._partition(ms, tp, text)

    def isr_updated(
        self, ms: int, tp: str, isr: list[int], under_min_isr: bool, partition_epoch: int
    ) -> None:
        """TRACE up to 2.3 (not in server.log at the default INFO), INFO 2.4-2.7."""
        if self.version.at_least("2.4"):
            self._partition(
                ms,
                tp,
                f"ISR updated to [{commas(isr)}] and zkVersion updated to [{partition_epoch}]",
            )

    def log_loaded(self, ms: int, tp: str, hwm: int) -> None:
        """2.4+ (10.3): the checkpointed HW applied when the Partition is created."""
        if self.version.at_least("2.4"):
            self._partition(
                ms, tp, f"Log loaded for partition {tp} with initial high watermark {hwm}"
            )


class OldControllerLogs(ZkControllerLogs):
    """A pre-2.8 ZK controller's state-change.log lines (9.2) and controller.log
    lines (9.7), under ``controller/``; 0.10's controller election is logged by
    ZookeeperLeaderElector into the broker's own server.log (``elected_to``)."""

    def __init__(self, folder: Path, version: Version, output: Output = DEFAULT_OUTPUT) -> None:
        super().__init__(folder, output)
        self.version = version

    def _sc(self, ms: int, controller: int, cepoch: int, message: str) -> None:
        if self.version.before("1.0"):
            text = f"Controller {controller} epoch {cepoch} {message[0].lower()}{message[1:]}"
        else:
            text = f"[Controller id={controller} epoch={cepoch}] {message}"
        self.state_change.write(ms, "TRACE", text, STATE_CHANGE)

    def _ctl(self, ms: int, controller: int, message: str, level: str = "INFO") -> None:
        prefix = (
            f"[Controller {controller}]: "
            if self.version.before("0.11")
            else (f"[Controller id={controller}] ")
        )
        self.log.write(ms, level, prefix + message, ZK_CONTROLLER)

    def partition_online(
        self, ms: int, controller: int, cepoch: int, from_state: str, s: PartitionState
    ) -> None:
        """A partition the controller moved to OnlinePartition (9.2)."""
        if self.version.before("1.0"):
            if from_state == "OfflinePartition":
                self._sc(
                    ms, controller, cepoch, f"Started leader election for partition {s.old_tp}"
                )
                self._sc(
                    ms,
                    controller,
                    cepoch,
                    f"Elected leader {s.leader} for Offline partition {s.old_tp}",
                )
            self._sc(
                ms,
                controller,
                cepoch,
                f"Changed partition {s.old_tp} from {from_state} to OnlinePartition with leader "
                f"{s.leader}",
            )
            return
        self._sc(
            ms,
            controller,
            cepoch,
            f"Changed partition {s.tp} from {from_state} to OnlinePartition with state "
            f"{leader_and_isr(self.version, s)}",
        )

    def partition_offline(self, ms: int, controller: int, cepoch: int, s: PartitionState) -> None:
        tp = s.old_tp if self.version.before("1.0") else s.tp
        self._sc(
            ms,
            controller,
            cepoch,
            f"Changed partition {tp} state from OnlinePartition to OfflinePartition",
        )

    def sending(
        self, ms: int, controller: int, cepoch: int, broker: int, s: PartitionState
    ) -> None:
        """``ControllerChannelManager.sendRequestsToBrokers`` (9.2)."""
        kind = "become-leader" if broker == s.leader else "become-follower"
        if self.version.before("1.0"):
            self._sc(
                ms,
                controller,
                cepoch,
                f"Sending {kind} LeaderAndIsr request {leader_isr_and_controller_epoch(s)} to "
                f"broker {broker} for partition {s.old_tp}",
            )
        else:
            self._sc(
                ms,
                controller,
                cepoch,
                f"Sending {kind} LeaderAndIsr request {state_text(self.version, s)} to broker "
                f"{broker} for partition {s.tp}",
            )

    def unclean_selected(self, ms: int, s: PartitionState, live: list[int]) -> None:
        """0.8.2-1.0 ``OfflinePartitionLeaderSelector`` (9.7, kafka-formats 5.6)."""
        if self.version.at_least("1.1"):
            return  # 1.1-2.7: no dedicated line
        self.log.write(
            ms,
            "WARN",
            f"[OfflinePartitionLeaderSelector]: No broker in ISR is alive for {s.old_tp}. Elect "
            f"leader {s.leader} from live brokers {commas(live)}. There's potential data loss.",
            OFFLINE_SELECTOR,
        )

    def offline_selected(self, ms: int, s: PartitionState) -> None:
        if self.version.at_least("1.1"):
            return
        self.log.write(
            ms,
            "INFO",
            f"[OfflinePartitionLeaderSelector]: Selected new leader and ISR "
            f"{leader_and_isr(self.version, s)} for offline partition {s.old_tp}",
            OFFLINE_SELECTOR,
        )

    # -- controller.log (9.7) -----------------------------------------------------------
    def elected(self, ms: int, controller: int, epoch: int) -> None:
        if self.version.before("0.11"):
            self._ctl(
                ms, controller, f"Broker {controller} starting become controller state transition"
            )
            self._ctl(ms, controller, f"Controller {controller} incremented epoch to {epoch}")
            self._ctl(
                ms,
                controller,
                f"Broker {controller} is ready to serve as the new controller with epoch {epoch}",
            )
        elif self.version.before("2.3"):
            self._ctl(ms, controller, f"{controller} successfully elected as the controller")
            self._ctl(ms, controller, f"Epoch incremented to {epoch}")
            self._ctl(ms, controller, f"Ready to serve as the new controller with epoch {epoch}")
        else:
            super().elected(ms, controller, epoch)
            self._ctl(ms, controller, f"Ready to serve as the new controller with epoch {epoch}")

    def elected_to(self, server: Log4j, ms: int, controller: int) -> None:
        """<= 0.10.2: ZookeeperLeaderElector, no prefix, in the broker's server.log."""
        if self.version.before("0.11"):
            server.write(ms, "INFO", f"{controller} successfully elected as leader", LEADER_ELECTOR)

    def broker_failure(self, ms: int, controller: int, dead: list[int]) -> None:
        self._ctl(ms, controller, f"Broker failure callback for {commas(dead)}")

    def broker_startup(self, ms: int, controller: int, added: list[int]) -> None:
        self._ctl(ms, controller, f"New broker startup callback for {commas(added)}")

    def brokers_changed(
        self, ms: int, controller: int, added: list[int], deleted: list[int], live: list[int]
    ) -> None:
        text = f"Newly added brokers: {commas(added)}, deleted brokers: {commas(deleted)}, "
        if self.version.at_least("2.3"):
            text += "bounced brokers: , "
        text += f"all live brokers: {commas(live)}"
        if self.version.before("0.11"):  # the listener's own logIdent and logger
            self.log.write(
                ms,
                "INFO",
                f"[BrokerChangeListener on Controller {controller}]: {text}",
                BROKER_CHANGE_010,
            )
        else:
            self._ctl(ms, controller, text)
