"""The era of each cluster from what its files say (``--profile auto``).

The replay's rules are an era's rules (``replay.types.Profile``). The
strongest evidence of the era is the cluster's own controller: a KRaft
metadata log, or a ZooKeeper controller's LeaderAndIsr decisions
(``replay.resolve_profile``). Where neither is in the folder, the files
still say a great deal (formats-addendum.md 13 and 12):

* ``broker_config`` events: the ``Kafka version:`` line (13.1; ``Kafka
  version : v`` 0.9-2.1), and ``KafkaConfig values:`` (13.2):
  ``process.roles`` / ``zookeeper.connect`` give the mode,
  ``inter.broker.protocol.version`` the protocol level. Leader-epoch
  truncation needs IBP 0.11.0-IV2 (KIP-101: ``ReplicaFetcherThread`` sends
  OffsetsForLeaderEpoch only from there); the release alone is a weaker
  proxy (IBP may lag the release during an upgrade), used only without IBP;
* request versions: a follower's Fetch version is fixed by its IBP
  (``ReplicaFetcherThread.fetchRequestVersion``): v0-v4 are IBPs before
  0.11.0-IV1, so no leader-epoch truncation; v7+ are 1.1-IV0 or later; v5
  and v6 do not decide;
* line templates only one mode prints: the ZooKeeper controller's ``No
  broker in ISR is alive`` (``zk_unclean_election``, <= 1.0) and the KRaft
  controller's ``UNCLEAN partition change``;
* point-in-time views: metadata-shell output (leader epochs in a
  ``partition_view``) exists only on KRaft, and ``Elr`` lists in a
  ``kafka-topics --describe`` come from DescribeTopicPartitions, served
  only by KRaft brokers (3.8+); a non-empty ELR means KIP-966 is in force.

:func:`choose` weighs these in that order and names each piece it used (file
and line) in the run manifest; with none of them the profile is a default
and the manifest says so. :func:`evidence_by_cluster` gathers them with
Spark (a handful of rows per cluster); :func:`choose` is pure Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from replay import resolve_profile
from replay.types import Profile

#: IBP from which followers truncate by leader epoch (KIP-101).
EPOCH_IBP = (0, 11, 0, 2)
#: A follower's Fetch version at most this: IBP before 0.11.0-IV1.
HW_FETCH_MAX = 4
#: A follower's Fetch version at least this: IBP 1.1-IV0 or later.
EPOCH_FETCH_MIN = 7

_NUMBERS = re.compile(r"^(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:\.(\d{1,4}))?")
_IV = re.compile(r"-IV(\d{1,3})")
#: Confluent Platform prints its own release (``7.4.0-ccs``, ``-ce``): its
#: Kafka is major 5 -> 2.x, 6.0-6.2 -> 2.6-2.8, 7 -> 3.x, 8 -> 4.x.
_CONFLUENT = re.compile(r"^(\d{1,2})\.(\d{1,3})(?:\.\d{1,4})?-c(?:cs|e|p)\b")


def release(text: str | None) -> tuple[int, int, int] | None:
    """A Kafka release as (major, minor, patch) for comparison: ``0.10.1.1``
    is (0, 10, 1), ``2.7.2`` is (2, 7, 2), ``7.4.0-ccs`` is Kafka (3, 4, 0);
    None when the text is no release."""
    if not text:
        return None
    s = text.strip()
    cp = _CONFLUENT.match(s)
    if cp:
        major, minor = int(cp.group(1)), int(cp.group(2))
        if major == 5:
            return (2, minor, 0)
        if major == 6:
            return (2, 6 + minor, 0)
        if major in (7, 8):
            return (major - 4, minor, 0)
        return None
    m = _NUMBERS.match(s)
    if not m:
        return None
    parts = [int(g) for g in m.groups() if g is not None]
    if parts[0] == 0:  # 0.x.y.z: the minor line is 0.x.y
        return (0, parts[1], parts[2] if len(parts) > 2 else 0)
    return (parts[0], parts[1], parts[2] if len(parts) > 2 else 0)


def protocol(text: str | None) -> tuple[int, int, int, int] | None:
    """An ``inter.broker.protocol.version`` as (major, minor, patch, IV):
    ``0.10.1-IV2`` is (0, 10, 1, 2), ``2.7-IV2`` is (2, 7, 0, 2); a value
    without ``-IV`` means that release's latest (99)."""
    r = release(text)
    if r is None or text is None:
        return None
    iv = _IV.search(text)
    return (*r, int(iv.group(1)) if iv else 99)


@dataclass(frozen=True)
class Marker:
    """One piece of era evidence and where it was read."""

    what: str  # "version", "ibp", "mode", "fetch", "template", "view"
    value: str
    where: str  # "file:line", or a count of lines

    def describe(self) -> str:
        return f"{_LABELS[self.what]} {self.value} ({self.where})"


_LABELS = {
    "version": "Kafka version",
    "ibp": "inter.broker.protocol.version",
    "mode": "mode",
    "fetch": "follower Fetch",
    "template": "line template",
    "view": "point-in-time view",
}


@dataclass(frozen=True)
class EraEvidence:
    """What one cluster's files say about its era, beside its controller."""

    markers: tuple[Marker, ...] = ()
    #: partition views with a non-empty ELR or LastKnownELR
    elr_in_use: bool = False

    def of(self, what: str) -> list[Marker]:
        return [m for m in self.markers if m.what == what]


@dataclass
class _Reading:
    """The markers weighed: mode, epochs and release, each with its evidence."""

    modes: set[str] = field(default_factory=set)
    epochs: bool | None = None
    oldest: tuple[int, int, int] | None = None
    used: list[Marker] = field(default_factory=list)


def _read(era: EraEvidence) -> _Reading:
    r = _Reading()
    for m in era.of("mode") + era.of("template") + era.of("view"):
        mode = "kraft" if m.value.startswith("kraft") else "zk"
        r.modes.add(mode)
        r.used.append(m)
    releases = [(v, m) for m in era.of("version") if (v := release(m.value)) is not None]
    if releases:
        r.oldest, oldest = min(releases, key=lambda x: x[0])
        r.used.append(oldest)
    ibps = [(p, m) for m in era.of("ibp") if (p := protocol(m.value)) is not None]
    fetches = [(int(m.value.removeprefix("v")), m) for m in era.of("fetch")]
    if ibps:
        lowest, m = min(ibps, key=lambda x: x[0])
        r.epochs = lowest >= EPOCH_IBP
        r.used.append(m)
    elif fetches and min(fetches)[0] <= HW_FETCH_MAX:
        r.epochs = False
        r.used.append(min(fetches)[1])
    elif fetches and min(fetches)[0] >= EPOCH_FETCH_MIN:
        r.epochs = True
        r.used.append(min(fetches)[1])
    elif r.oldest is not None:
        r.epochs = r.oldest >= (0, 11, 0)
    # The release and the protocol level bound the mode: KRaft exists from
    # 2.8, ZooKeeper until 3.9, and a KRaft cluster always has epochs.
    if not r.modes and (r.epochs is False or (r.oldest is not None and r.oldest < (2, 8, 0))):
        r.modes.add("zk")
    if not r.modes and r.oldest is not None and r.oldest >= (4, 0, 0):
        r.modes.add("kraft")
    return r


def _evidence(used: list[Marker]) -> str:
    return "; ".join(dict.fromkeys(m.describe() for m in used))


def choose(
    requested: Profile,
    has_metadata_log: bool,
    has_elr: bool,
    has_zk_controller: bool,
    has_leader_epochs: bool,
    era: EraEvidence,
) -> tuple[Profile, str, list[str], bool]:
    """(profile, why, the evidence named, whether it is a default).

    The controller's own evidence first (``replay.resolve_profile``); the
    markers refine a ZooKeeper controller's era when no fetch or checkpoint
    shows a leader epoch, and decide alone where no controller is in the
    folder. Conflicting markers (two modes outside a migration's release
    range) decide nothing.
    """
    reading = _read(era)
    named = list(dict.fromkeys(m.describe() for m in reading.used))
    if requested != Profile.AUTO or has_metadata_log:
        profile, why = resolve_profile(
            requested, has_metadata_log, has_elr, has_zk_controller, has_leader_epochs
        )
        return profile, why, [], False
    if has_zk_controller:
        profile, why = resolve_profile(
            requested, has_metadata_log, has_elr, has_zk_controller, has_leader_epochs
        )
        if not has_leader_epochs and reading.epochs:
            return (
                Profile.ZK_EPOCH,
                "a ZooKeeper controller's LeaderAndIsr decisions, and a protocol level with "
                f"leader-epoch truncation (0.11+): {_evidence(reading.used)}",
                named,
                False,
            )
        return profile, why, [], False
    modes = reading.modes
    if len(modes) == 1:
        (mode,) = modes
        if mode == "kraft":
            elr = era.elr_in_use or (reading.oldest is not None and reading.oldest >= (4, 0, 0))
            if elr:
                why = "KRaft with KIP-966 (4.x, or an ELR in a view)"
                return Profile.KRAFT_ELR, f"{why}: {_evidence(reading.used)}", named, False
            return Profile.KRAFT, f"KRaft: {_evidence(reading.used)}", named, False
        if reading.epochs is False:
            return (
                Profile.ZK_HW,
                "ZooKeeper, before leader-epoch truncation (followers truncate to their HW): "
                f"{_evidence(reading.used)}",
                named,
                False,
            )
        if reading.epochs is True:
            return (
                Profile.ZK_EPOCH,
                f"ZooKeeper with leader-epoch truncation (0.11+): {_evidence(reading.used)}",
                named,
                False,
            )
        return (
            Profile.ZK_EPOCH,
            f"ZooKeeper ({_evidence(reading.used)}); the protocol level is in no file: 0.11+ "
            "(leader-epoch truncation) is assumed, a default",
            named,
            True,
        )
    if len(modes) > 1:
        return (
            Profile.KRAFT,
            f"the evidence names both modes ({_evidence(reading.used)}), no controller decides: "
            "kraft is assumed, a default, and verdicts without a lineage are unknown",
            named,
            True,
        )
    if named:
        return (
            Profile.KRAFT,
            f"the mode is in no file ({_evidence(reading.used)}): kraft is assumed, a default, "
            "and verdicts without a lineage are unknown",
            named,
            True,
        )
    profile, why = resolve_profile(requested, False, False, False, has_leader_epochs)
    return profile, why + " (a default: no version, configuration or mode marker either)", [], True


# --- gathering, with Spark ---------------------------------------------------------------


def evidence_by_cluster(events: Any) -> dict[str, EraEvidence]:
    """Each cluster's :class:`EraEvidence` from its events (PARTITION_EVENTS):
    the first line of each distinct marker value, and per cluster the
    lowest follower Fetch version and the mode-only templates and views.

    Each event that carries markers names them, and per (cluster, marker,
    value) the first line wins; for the Fetch version the lowest version,
    then the first line (each version's first line found first)."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    kind = F.col("kind")
    where = F.concat_ws(":", F.col("source_file"), F.col("line_no").cast("string"))
    config = kind == "broker_config"
    follower = (kind == "fetch_request") & (F.col("replica") >= 0)
    shell = (kind == "partition_view") & F.col("leader_epoch").isNotNull()
    describe_elr = (
        (kind == "partition_view")
        & F.col("leader_epoch").isNull()
        & (F.col("elr").isNotNull() | F.col("last_known_elr").isNotNull())
    )
    templates = {
        "kraft: metadata-shell output": shell,
        "kraft: kafka-topics --describe with Elr lists (DescribeTopicPartitions)": describe_elr,
        "zk: ZooKeeper controller 'No broker in ISR is alive'": kind == "zk_unclean_election",
        "kraft: KRaft controller 'UNCLEAN partition change'": kind == "unclean_partition_change",
    }
    elr_in_use = (kind == "partition_view") & ((F.size("elr") > 0) | (F.size("last_known_elr") > 0))

    def mark(
        cond: Column, what: str, value: Column, key: str | None = None, rank: Column | None = None
    ) -> Column:
        """(what, group key, value, rank) when ``cond``; the group key is the
        value unless given (the Fetch version groups per cluster)."""
        return F.when(
            cond,
            F.struct(
                F.lit(what).alias("what"),
                (value if key is None else F.lit(key)).alias("key"),
                value.alias("value"),
                (F.lit(0) if rank is None else rank).cast("int").alias("rank"),
            ),
        )

    marks = [
        mark(config & F.col(column).isNotNull(), what, F.col(column))
        for what, column in (
            ("version", "kafka_version"),
            ("ibp", "inter_broker_protocol"),
            ("mode", "mode"),
        )
    ]
    for label, cond in templates.items():
        what = "view" if "view" in label or "shell" in label or "describe" in label else "template"
        marks.append(mark(cond, what, F.lit(label)))
    marks.append(mark(elr_in_use, "elr", F.lit("")))
    any_mark = config | elr_in_use
    for cond in templates.values():
        any_mark = any_mark | cond
    candidates = events.filter(any_mark).select(
        "cluster",
        where.alias("where"),
        F.struct("source_file", "line_no").alias("line"),
        F.explode(F.filter(F.array(*marks), lambda m: m.isNotNull())).alias("m"),
    )
    # Every follower fetch names its version: reduced to each version's
    # first line before it becomes a mark (a mark per fetch row was most of
    # this aggregation's cost: 4 s of 1.5 million rows at 1 GiB of input).
    version = F.col("api_version")
    first_fetches = (
        events.filter(follower & version.isNotNull())
        .groupBy("cluster", "api_version")
        .agg(F.min(F.struct("source_file", "line_no")).alias("line"))
    )
    candidates = candidates.unionByName(
        first_fetches.select(
            "cluster",
            F.concat_ws(":", F.col("line.source_file"), F.col("line.line_no").cast("string")).alias(
                "where"
            ),
            "line",
            F.struct(
                F.lit("fetch").alias("what"),
                F.lit("").alias("key"),
                F.concat(F.lit("v"), version.cast("string")).alias("value"),
                version.cast("int").alias("rank"),
            ).alias("m"),
        )
    )
    rows = candidates.groupBy("cluster", F.col("m.what").alias("what"), F.col("m.key")).agg(
        F.min_by(
            F.struct(F.col("m.value").alias("value"), F.col("where")),
            F.struct(F.col("m.rank"), F.col("line")),
        ).alias("first")
    )
    rows = rows.select("cluster", "what", "first.value", "first.where")
    found: dict[str, list[Marker]] = {}
    elr: set[str] = set()
    for r in rows.collect():
        if r["what"] == "elr":
            elr.add(r["cluster"])
        else:
            found.setdefault(r["cluster"], []).append(Marker(r["what"], r["value"], r["where"]))
    return {
        c: EraEvidence(tuple(sorted(found.get(c, []), key=lambda m: (m.what, m.value))), c in elr)
        for c in set(found) | elr
    }
