"""Which Kafka version's templates a run writes (the ``version`` knob).

The era fixes the protocol the model follows (seed files 000-004); the version
fixes the texts. Each era has a default version, the one its artefacts were
always written in; the ZooKeeper eras accept older ones, whose line templates
come from formats-addendum.md section 9 (pre-2.8 broker lines), 10 (log load),
11 (request log), 12 (describe) and 13, read at the tags named there:

* ``0.10`` (0.10.1.1): zk-hw. No leader epochs in the data; a new follower
  truncates to its HW; TRACE request log without responses.
* ``1.1`` (1.1.1): zk-epoch (KIP-101): a follower asks its leader with
  OffsetsForLeaderEpoch v0 when it starts following a new leader, and truncates
  to the answer (no KIP-279); text request log with responses (Fetch v7).
* ``2.4`` (2.4.1): zk-epoch (KIP-279, KIP-320 fencing): OffsetsForLeaderEpoch
  v3 at every new leader epoch; Fetch v11; consumers validate their position
  with OffsetsForLeaderEpoch after a leader change (2.3+ clients).
* ``2.8`` (2.8.2): zk-epoch's default; JSON request log, truncation from the
  fetch answer's divergingEpoch (KIP-320 with IBP 2.7+).
* ``3.6`` (3.6.2): kraft. ``4.0``: kraft-elr (trunk-2024 texts, KIP-966).

zk-hw without the knob keeps the approximation it always had: 0.10.1 request
log, 2.8 broker-log templates (simulator/logs.py ``ZkBrokerLogs``). Every
artefact kind added since (consumer traffic, startup lines, describe output)
follows the cluster's real version, 0.10.1.
"""

from __future__ import annotations

from dataclasses import dataclass

ERA_DEFAULT = {"kraft": "3.6", "kraft-elr": "4.0", "zk-epoch": "2.8", "zk-hw": "0.10"}
ERA_VERSIONS = {
    "kraft": ("3.6",),
    "kraft-elr": ("4.0",),
    "zk-epoch": ("1.1", "2.4", "2.8"),
    "zk-hw": ("0.10",),
}


@dataclass(frozen=True)
class Version:
    name: str
    release: str  # the tag the templates were read at
    ibp: str  # inter.broker.protocol.version / metadata.version in force

    @property
    def key(self) -> tuple[int, ...]:
        """The release as numbers (``0.10`` is 0.10.1.1), for ``at_least``."""
        level = self.release if self.release[0].isdigit() else self.name
        return tuple(int(x) for x in level.split("."))

    def at_least(self, name: str) -> bool:
        return self.key >= tuple(int(x) for x in name.split("."))

    def before(self, name: str) -> bool:
        return not self.at_least(name)

    # -- what the version prints and does --------------------------------------
    @property
    def json_request_log(self) -> bool:
        """KIP-673 JSON from 2.8; text before (kafka-formats.md 1.2)."""
        return self.at_least("2.8")

    @property
    def epochs(self) -> bool:
        """Leader epochs in the data and the epoch cache (0.11+, KIP-101)."""
        return self.at_least("1.1")

    @property
    def truncation_on_fetch(self) -> bool:
        """Followers send lastFetchedEpoch and truncate from divergingEpoch
        (IBP 2.7-IV1+); before, OffsetsForLeaderEpoch when they start
        following (kafka-formats.md 1.6)."""
        return self.at_least("2.8")

    @property
    def fetch_version(self) -> int:
        """Fetch version of a follower (IBP) and of the version's Java client."""
        return {"0.10": 3, "1.1": 7, "2.4": 11, "2.8": 12, "3.6": 15, "4.0": 17}[self.name]

    @property
    def list_offsets_version(self) -> int:
        return {"0.10": 1, "1.1": 2, "2.4": 5, "2.8": 6, "3.6": 8, "4.0": 10}[self.name]

    @property
    def epoch_request_version(self) -> int:
        """OffsetsForLeaderEpoch of a follower (IBP) and consumer (2.3+)."""
        return {"1.1": 0, "2.4": 3, "2.8": 4, "3.6": 4, "4.0": 4}[self.name]

    @property
    def consumer_validates(self) -> bool:
        """Consumers check their position with OffsetsForLeaderEpoch after a
        leader change (KIP-320 client side, Java clients 2.3+; addendum 11.1)."""
        return self.at_least("2.4")

    @property
    def produce_version(self) -> int:
        return {"0.10": 2, "1.1": 5, "2.4": 8, "2.8": 9, "3.6": 9, "4.0": 9}[self.name]

    @property
    def client_version(self) -> str:
        """The Java clients' version (clientInformation, 2.4+ KIP-511)."""
        return {"0.10": "0.10.1.1", "1.1": "1.1.1", "2.4": "2.4.1", "2.8": "2.8.2"}.get(
            self.name, "3.6.1"
        )


VERSIONS = {
    "0.10": Version("0.10", "0.10.1.1", "0.10.1-IV2"),
    "1.1": Version("1.1", "1.1.1", "1.1-IV0"),
    "2.4": Version("2.4", "2.4.1", "2.4-IV1"),
    "2.8": Version("2.8", "2.8.2", "2.8-IV1"),
    "3.6": Version("3.6", "3.6.2", "3.6-IV2"),
    "4.0": Version("4.0", "trunk-2024", "4.0-IV3"),
}


def resolve(era: str, name: str | None) -> Version:
    """The version a run of ``era`` writes; ``name`` None: the era's default."""
    if name is None:
        return VERSIONS[ERA_DEFAULT[era]]
    if name not in ERA_VERSIONS[era]:
        raise ValueError(
            f"version {name!r} does not go with era {era}; known: {', '.join(ERA_VERSIONS[era])}"
        )
    return VERSIONS[name]
