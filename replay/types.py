"""Events, sentinels and vocabularies of the reference model.

Events are a closed union of frozen dataclasses: one per observation kind the
pipeline hands over. Kafka's sentinels keep Kafka's values
(``LeaderConstants``, ``LeaderRecoveryState``) so that a record reads the same
here as in ``PartitionRegistration.merge``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

# --- Kafka's sentinels (metadata/.../LeaderConstants, LeaderRecoveryState) ----

NO_LEADER = -1
NO_LEADER_CHANGE = -2
RECOVERY_NO_CHANGE = -1
RECOVERED = 0
RECOVERING = 1
UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


# --- vocabularies -------------------------------------------------------------


class Profile(StrEnum):
    """The protocol era whose rules judge the evidence."""

    AUTO = "auto"
    #: Kafka 0.8 - 0.10 on ZooKeeper: followers truncate to their HW (seed 004)
    ZK_HW = "zk-hw"
    #: Kafka 0.11 - 3.x on ZooKeeper: leader-epoch truncation (KIP-101, KIP-320)
    ZK_EPOCH = "zk-epoch"
    KRAFT = "kraft"
    #: Kafka 4.x with KIP-966: ISR, then ELR, then unclean recovery
    KRAFT_ELR = "kraft-elr"


class FindingKind(StrEnum):
    UNCLEAN_ELECTION = "unclean_election"
    TRUNCATION_BELOW_HWM = "truncation_below_hwm"
    LOG_DIVERGENCE = "log_divergence"
    HWM_REGRESSION = "hwm_regression"
    COMMITTED_DATA_LOSS = "committed_data_loss"
    FENCING_VIOLATION = "fencing_violation"
    ISR_RULE_VIOLATION = "isr_rule_violation"


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"


class Confidence(StrEnum):
    CONFIRMED = "confirmed"
    PROBABLE = "probable"
    UNKNOWN = "unknown"


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


class ElectionKind(StrEnum):
    """How a leader epoch began (DESIGN.md, epoch_lineage)."""

    INITIAL = "initial"
    CLEAN = "clean"
    PREFERRED = "preferred"
    REASSIGNMENT = "reassignment"
    ELR = "elr"
    UNCLEAN = "unclean"
    UNCLEAN_RECOVERY = "unclean_recovery"
    #: the epoch began with leader = NO_LEADER (-1): the partition went offline.
    OFFLINE = "offline"
    #: the epoch is known only from a snapshot; how it began is not in evidence.
    UNKNOWN = "unknown"


class Scope(StrEnum):
    """Qualifiers DESIGN.md gives truncations and divergences."""

    LOCAL = "local"
    GLOBAL = "global"
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"
    UNKNOWN = "unknown"


# --- where an observation comes from ------------------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    """One line of one input file; ``text`` is filled in by the publisher."""

    source_file: str
    line_no: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where and when an event was observed, and its place in its source.

    ``metadata_offset`` is the controller's total order (metadata events only).
    ``seq`` orders events inside one source file (line, then position in line).
    ``time`` is the observer's clock, which may be skewed against other brokers.
    """

    source: Source
    time: datetime | None
    observer: int | None
    metadata_offset: int | None
    seq: int


# --- events: controller metadata (totally ordered) ----------------------------


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    """A full partition registration: topic creation or a snapshot."""

    origin: Origin
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int = RECOVERED
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A delta; every field but the key is optional (None = unchanged)."""

    origin: Origin
    leader: int = NO_LEADER_CHANGE
    isr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = RECOVERY_NO_CHANGE
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """RegisterBrokerRecord: a broker began a new uptime session."""

    origin: Origin
    broker: int
    broker_epoch: int
    fenced: bool


@dataclass(frozen=True, slots=True)
class BrokerFencing:
    """Fence / Unfence / BrokerRegistrationChange records.

    ``fenced`` uses BrokerRegistrationFencingChange's values: 1 fence,
    -1 unfence, 0 no change.
    """

    origin: Origin
    broker: int
    broker_epoch: int | None
    fenced: int
    in_controlled_shutdown: bool = False


# --- events: broker observations (ordered per observer only) ------------------


@dataclass(frozen=True, slots=True)
class FollowerFetch:
    """A follower's Fetch as logged by the leader: the follower's LEO."""

    origin: Origin
    replica: int
    fetch_offset: int
    last_fetched_epoch: int | None
    current_leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class FetchAnswer:
    """The leader's answer to a follower fetch: its HWM, maybe a divergence."""

    origin: Origin
    replica: int
    hwm: int | None
    error_code: int
    diverging_epoch: int | None = None
    diverging_end_offset: int | None = None
    #: answers of the same series that the pipeline left out after this one,
    #: inside a run that only rose (pipeline/reconstruct.py): acts all the same
    folded: int = 0


@dataclass(frozen=True, slots=True)
class ProduceAck:
    """A produce response partition, with the request's acks and client id."""

    origin: Origin
    acks: int
    base_offset: int | None
    error_code: int
    client_id: str | None = None


@dataclass(frozen=True, slots=True)
class EpochAnswer:
    """An OffsetsForLeaderEpoch answer: in the leader's log, the largest epoch
    not above the one asked about is ``leader_epoch`` and ends at
    ``end_offset`` (KIP-101)."""

    origin: Origin
    replica: int | None
    leader_epoch: int | None
    end_offset: int | None
    error_code: int
    requested_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """A ZooKeeper-era controller decision (its state-change line or the
    LeaderAndIsr request a broker received): the partition's whole state."""

    origin: Origin
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int | None = None
    leader_recovery_state: int | None = None
    controller_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class ControllerChange:
    """A KRaft controller's own line for one partition change it replayed,
    ``UNCLEAN partition change for tp with topic ID U: field: old -> new,
    ...`` (kafka-formats.md 2.6): the state before and after a change that
    elected a new leader (a field the diff leaves out is unchanged). The
    metadata log holds the same change as a record: where the partition has
    records, they decide and this line adds nothing; without them (a ticket
    of pasted excerpts) the line is the lineage's evidence for the epochs it
    names (replay/order.py ``order_events``)."""

    origin: Origin
    leader_before: int
    leader: int
    leader_epoch_before: int
    leader_epoch: int
    isr_before: tuple[int, ...]
    isr: tuple[int, ...]
    partition_epoch_before: int | None = None
    partition_epoch: int | None = None
    leader_recovery_state: int | None = None


@dataclass(frozen=True, slots=True)
class PartitionOffline:
    """A ZooKeeper controller moved the partition to OfflinePartition
    (``changed partition ... state from OnlinePartition to
    OfflinePartition``, formats-addendum.md 9.2): its leader is gone and no
    live ISR member can take over. The line names no epoch: ``after_epoch``
    is the epoch E of the decision logged before it in its file, when the
    next one there is E + 2 (replay/order.py sets it), else None."""

    origin: Origin
    controller_epoch: int | None = None
    after_epoch: int | None = None


# --- events: broker server / state-change logs and checkpoint files -----------


@dataclass(frozen=True, slots=True)
class BecomeLeader:
    """``Leader tp ... starts at leader epoch E from offset X``: the leader's
    own statement of where its epoch starts (its log end on becoming leader)."""

    origin: Origin
    broker: int
    leader_epoch: int
    start_offset: int | None
    hwm: int | None = None


@dataclass(frozen=True, slots=True)
class BecomeFollower:
    """``Follower tp starts at leader epoch E from offset X``: its log end."""

    origin: Origin
    broker: int
    leader_epoch: int | None
    log_end: int | None
    leader: int | None = None
    hwm: int | None = None


@dataclass(frozen=True, slots=True)
class LogTruncated:
    """A broker's own log line saying it truncated its log to ``to_offset``;
    with the diverging epoch when the fetcher says why."""

    origin: Origin
    broker: int
    to_offset: int
    diverging_epoch: int | None = None
    diverging_end_offset: int | None = None
    #: the leader a fetcher thread's line names (``leaderId=L``): the one
    #: whose answer it truncated on
    leader: int | None = None


@dataclass(frozen=True, slots=True)
class EpochCheckpoint:
    """One leader-epoch-checkpoint entry of a broker: epoch -> start offset."""

    origin: Origin
    broker: int
    leader_epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class MinIsrConfig:
    """A ConfigRecord setting ``min.insync.replicas`` (kafka-formats.md 2.4).

    ``topic`` set: a topic override; ``broker`` set: one broker's dynamic
    default; both None: the cluster-wide default (resource BROKER, empty
    name). ``min_isr`` None: the value was deleted."""

    origin: Origin
    topic: str | None
    broker: int | None
    min_isr: int | None


# --- events: ISR changes a leader reports ---------------------------------------


@dataclass(frozen=True, slots=True)
class IsrUpdated:
    """The leader's ``ISR updated to ... and version updated to V`` line: the
    controller confirmed its ISR change (kafka-formats.md 5.3). From 3.6 it
    says whether the new ISR is below min ISR (``(under-min-isr)``)."""

    origin: Origin
    broker: int
    isr: tuple[int, ...]
    partition_epoch: int | None = None
    under_min_isr: bool | None = None


@dataclass(frozen=True, slots=True)
class AlterPartition:
    """An AlterIsr / AlterPartition partition in the controller's request log
    (kafka-formats.md 1.8): the leader's proposal (``error_code`` None) or
    the answer (``error_code`` 0 = confirmed, with the confirmed state)."""

    origin: Origin
    broker: int | None
    leader_epoch: int | None
    isr: tuple[int, ...] | None
    partition_epoch: int | None
    error_code: int | None
    leader: int | None = None


# --- events: what clients were shown (formats-addendum.md 11) -------------------


@dataclass(frozen=True, slots=True)
class ClientHwm:
    """A Fetch answered to a consumer, or a ListOffsets LATEST answer: the
    HWM the answering broker (the observer) exposed to a client. The best
    evidence of the true HWM there is (DESIGN.md, Inputs): offsets below it
    were committed. ``leader_epoch`` is the epoch the request or answer
    names, when it names one."""

    origin: Origin
    hwm: int | None
    error_code: int
    leader_epoch: int | None = None
    log_start_offset: int | None = None
    list_offsets: bool = False


@dataclass(frozen=True, slots=True)
class ClientEpochAnswer:
    """An OffsetsForLeaderEpoch answer to a consumer: in the answering
    broker's log, epoch ``leader_epoch`` ends at ``end_offset``."""

    origin: Origin
    leader_epoch: int | None
    end_offset: int | None
    error_code: int


@dataclass(frozen=True, slots=True)
class ClientPosition:
    """A consumer's Fetch whose line prints no answer (0.8.2-0.10.1,
    formats-addendum.md 11.1): the position ``fetch_offset`` of client
    ``client_id`` on the answering broker (the observer). Alone it proves
    nothing (a consumer may seek; a fetch at or below the log end but above
    the HWM is answered empty); an advance of the same client on the same
    leader in one epoch does (``transitions._client_position``)."""

    origin: Origin
    fetch_offset: int | None
    client_id: str | None


# --- events: a broker coming back (formats-addendum.md 10) ----------------------


@dataclass(frozen=True, slots=True)
class BrokerRestart:
    """A broker started: ``clean`` True when its clean-shutdown file was
    found, False when it recovered without one, None when its version prints
    nothing that decides (never assumed clean)."""

    origin: Origin
    broker: int
    clean: bool | None


@dataclass(frozen=True, slots=True)
class LogRecovered:
    """``Recovering unflushed segment``: the log was not flushed when the
    broker stopped, so its shutdown was unclean."""

    origin: Origin
    broker: int
    base_offset: int | None = None


@dataclass(frozen=True, slots=True)
class RecoveryTruncation:
    """Recovery at startup cut the log to ``to_offset``."""

    origin: Origin
    broker: int
    to_offset: int


@dataclass(frozen=True, slots=True)
class LogLoaded:
    """``Completed load of log ... log end offset``: the log end a replica came
    back with."""

    origin: Origin
    broker: int
    log_end: int
    log_start_offset: int | None = None


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """``KafkaConfig values:`` / ``Kafka version:`` of one broker (``broker``
    None when the file does not say whose): the settings rules depend on."""

    origin: Origin
    broker: int | None
    unclean_election_enabled: bool | None = None
    min_isr: int | None = None
    kafka_version: str | None = None
    mode: str | None = None


@dataclass(frozen=True, slots=True)
class FetcherHalt:
    """A follower's fetcher halted rather than truncate below its leader
    (unclean leader election disabled, formats-addendum.md 9.6)."""

    origin: Origin
    broker: int
    leader: int | None
    log_end: int | None
    leader_log_end: int | None


@dataclass(frozen=True, slots=True)
class OffsetReset:
    """A follower reset its fetch offset (out of range): its log now ends
    at ``to_offset``."""

    origin: Origin
    broker: int
    leader: int | None
    from_offset: int | None
    to_offset: int


# --- events: point-in-time views (formats-addendum.md 12) -----------------------


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One partition in a ``kafka-topics --describe`` or metadata-shell
    snapshot: a sample, not a record of every change. ``leader`` -1: none."""

    origin: Origin
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    leader_epoch: int | None = None
    partition_epoch: int | None = None
    leader_recovery_state: int | None = None


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """A describe header's ``Configs:`` of one topic."""

    origin: Origin
    topic: str | None
    min_isr: int | None = None
    unclean_election_enabled: bool | None = None


Event = (
    PartitionRecord
    | PartitionChangeRecord
    | BrokerRegistration
    | BrokerFencing
    | FollowerFetch
    | FetchAnswer
    | ProduceAck
    | EpochAnswer
    | BecomeLeader
    | BecomeFollower
    | LogTruncated
    | EpochCheckpoint
    | LeaderAndIsr
    | ControllerChange
    | PartitionOffline
    | MinIsrConfig
    | IsrUpdated
    | AlterPartition
    | ClientHwm
    | ClientEpochAnswer
    | ClientPosition
    | BrokerRestart
    | LogRecovered
    | RecoveryTruncation
    | LogLoaded
    | BrokerConfig
    | FetcherHalt
    | OffsetReset
    | PartitionView
    | TopicConfig
)

METADATA_EVENTS = (
    PartitionRecord,
    PartitionChangeRecord,
    BrokerRegistration,
    BrokerFencing,
    LeaderAndIsr,
    ControllerChange,
    PartitionOffline,
    MinIsrConfig,
)


@dataclass(frozen=True, slots=True)
class PartitionKey:
    cluster: str
    topic: str | None
    topic_id: str | None
    partition: int

    def describe(self) -> str:
        name = self.topic if self.topic is not None else f"topic id {self.topic_id}"
        return f"{name}-{self.partition}"


class InputError(ValueError):
    """Evidence the model cannot interpret (e.g. a change to an unknown
    partition). Raised at the edge; the pipeline turns it into a gap."""
