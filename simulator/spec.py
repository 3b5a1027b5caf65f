"""What a run is made of: cluster layout, producers, fault schedule, timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.versions import VERSIONS

ERAS = ("kraft", "kraft-elr", "zk-epoch", "zk-hw")
ZK_ERAS = ("zk-epoch", "zk-hw")
MUTATIONS = ("lagging_isr_join", "acks_all_under_min_isr", "unclean_kept_in_elr")

#: artefact families a run can write (``Evidence.write``)
FAMILIES = (
    "request",  # broker-N/kafka-request.log
    "metadata",  # controller/metadata.log.txt (KRaft)
    "state_change",  # broker-N/state-change.log, controller/state-change.log (ZK)
    "server",  # broker-N/server.log
    "controller",  # controller/controller.log
    "checkpoints",  # broker-N/data/
    "describe",  # describe/kafka-topics-describe.txt (needs describe_every_ms or describe_at)
)
EXCERPT_STYLES = ("indent", "quote", "logger")


@dataclass
class Evidence:
    """Artefacts beyond the default set; every one is off by default, so a run
    without these knobs writes exactly what it always wrote.

    ``version``: the Kafka version whose templates every artefact uses (the
    era fixes the protocol; simulator/versions.py lists which versions go with
    which era). ``None`` keeps the era's default templates."""

    version: str | None = None
    #: one consumer per partition fetching from the leader every ``consumer_ms``
    #: (formats-addendum.md 11); ``consumer_from_follower``: from the first
    #: in-sync follower instead (KIP-392, 2.4+); a ListOffsets LATEST every
    #: ``list_offsets_ms`` (0: never)
    consumers: bool = False
    consumer_ms: int = 1000
    consumer_from_follower: bool = False
    list_offsets_ms: int = 0
    #: log load and recovery lines at every broker (re)start (addendum 10)
    startup_lines: bool = False
    #: ``kafka-topics --describe`` snapshots (addendum 12.1) every N ms and/or
    #: at the given times, all in one file
    describe_every_ms: int = 0
    describe_at: tuple[int, ...] = ()
    #: a pasted-excerpt rendering of every broker and controller log
    #: (server, state-change, controller; ``indent``, ``quote``, ``logger``),
    #: beside the log or, with ``excerpts_only``, instead of it; never of the
    #: request log, which is read by its timestamps (sinks.EXCERPT_FAMILIES)
    excerpts: str | None = None
    excerpts_only: bool = False
    #: the artefact families written (``FAMILIES``); ``None``: all of them
    write: tuple[str, ...] | None = None

    def params(self) -> dict[str, Any]:
        """The knobs that differ from their default (for the truth's params)."""
        out: dict[str, Any] = {}
        for name, default in Evidence().__dict__.items():
            value = getattr(self, name)
            if value != default:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def writes(self, family: str) -> bool:
        return self.write is None or family in self.write


@dataclass
class TopicSpec:
    name: str
    topic_id: str
    assignments: list[list[int]]  # replicas per partition, preferred order
    min_isr: int = 1


@dataclass
class ProducerSpec:
    topic: str
    partition: int
    interval_ms: int
    records: int = 10
    acks: int = -1  # -1 all, 1, 0; or use acks_mix
    start_ms: int = 0
    stop_ms: int | None = None
    phase_ms: int = 100
    jitter_ms: int = 0
    acks_mix: tuple[tuple[int, float], ...] = ()
    max_records: int = 0  # >0: records drawn uniformly in [1, max_records]
    client: int = 1


@dataclass
class Action:
    at_ms: int
    name: str
    args: tuple[Any, ...] = ()


@dataclass
class Spec:
    name: str
    description: str
    brokers: list[int]
    topics: list[TopicSpec]
    producers: list[ProducerSpec] = field(default_factory=list)
    schedule: list[Action] = field(default_factory=list)
    duration_ms: int = 60000
    settle_ms: int = 30000
    era: str = "kraft"
    fetch_ms: int = 500
    fetch_phase: dict[int, int] = field(default_factory=dict)
    fetch_jitter_ms: int = 0
    lag_ms: int = 10000
    session_ms: int = 9000
    unfence_ms: int = 1000
    checkpoint_ms: int = 5000
    flush_ms: dict[int, int | None] = field(default_factory=dict)  # None never, 0 each write
    default_flush_ms: int | None = 1000
    max_fetch_records: int = 10000
    tail_ms: int = 0  # extra clean traffic after the settle (scale > 1 on named scenarios)
    knobs: dict[str, Any] = field(default_factory=dict)
    # ZK eras only: the ZK controller's OfflinePartitionLeaderElection may take
    # a replica outside the ISR (topic config unclean.leader.election.enable)
    unclean_election: bool = False
    # Rule-breaking mutations (broker or controller bugs real Kafka does not
    # have), name -> probability per occasion: ``lagging_isr_join`` (a
    # follower below the HWM admitted to the ISR), ``acks_all_under_min_isr``
    # (acks=all answered errorCode 0 while |ISR| < min.insync.replicas),
    # ``unclean_kept_in_elr`` (kraft-elr: a broker registering after an
    # unclean shutdown is left in every ELR, against seed 002 5.2)
    mutations: dict[str, float] = field(default_factory=dict)
    evidence: Evidence = field(default_factory=Evidence)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "brokers": list(self.brokers),
            "topics": {
                t.name: {
                    "partitions": len(t.assignments),
                    "replicas": t.assignments,
                    "min.insync.replicas": t.min_isr,
                }
                for t in self.topics
            },
            "duration_ms": self.duration_ms,
            "settle_ms": self.settle_ms,
            "tail_ms": self.tail_ms,
            "fetch_ms": self.fetch_ms,
            "replica.lag.time.max.ms": self.lag_ms,
            "broker.session.timeout.ms": self.session_ms,
            "metadata.version": "3.6-IV2",
        }
        if self.era in ZK_ERAS:
            del out["broker.session.timeout.ms"], out["metadata.version"]
            out["zookeeper.session.timeout.ms"] = self.session_ms
            # zk-epoch: Kafka 2.8 (Fetch v12, KIP-320 truncation on fetch);
            # zk-hw: 0.10.1 (no leader epoch in the data, HW truncation; its
            # request log at TRACE, artefacts.TextRequestLog)
            out["inter.broker.protocol.version"] = (
                "2.8-IV1" if self.era == "zk-epoch" else "0.10.1-IV2"
            )
            out["unclean.leader.election.enable"] = self.unclean_election
        if self.era == "kraft-elr":
            out["metadata.version"] = "4.0-IV3"
            out["eligible.leader.replicas.version"] = 1
            out["unclean.recovery.strategy"] = "balanced"
        if self.mutations:
            out["mutations"] = dict(sorted(self.mutations.items()))
        out.update(self.knobs)
        evidence = self.evidence.params()
        if evidence:
            out["evidence"] = evidence
            if self.era in ZK_ERAS and self.evidence.version is not None:
                out["inter.broker.protocol.version"] = VERSIONS[self.evidence.version].ibp
        return out
