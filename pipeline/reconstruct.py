"""Reconstruct: from silver observations to per-partition timelines.

Follower fetches repeat the same offsets many times a second, and idle
consumers are told the same HWM as often. Only observations that change
something reach the replay (run-length compression with window functions),
so replay cost follows the number of changes, not the number of log lines.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

#: Per observation series, the fields whose change is worth keeping.
SERIES_FIELDS: dict[str, tuple[str, ...]] = {
    "fetch_request": ("fetch_offset", "last_fetched_epoch", "current_leader_epoch"),
    "fetch_response": ("hwm", "error_code", "diverging_epoch", "diverging_end_offset"),
    # What a broker showed consumers (formats-addendum.md 11.1): the series is
    # the answering broker's (every consumer has replica -1 or none), so a run
    # is the same answer whichever consumer asked; positions are not kept.
    "consumer_fetch": ("hwm", "log_start_offset", "error_code"),
    "list_offsets": ("hwm", "leader_epoch", "error_code"),
    # A consumer's position where the line prints no answer (before 1.0): a
    # run of the same client at the same offset keeps its ends; the replay
    # reads the advances (replay/transitions.py ``_client_position``).
    "consumer_position": ("client_id", "fetch_offset"),
}

BROKER_KINDS = ("register_broker", "fence_broker", "unfence_broker", "broker_registration_change")
#: a broker's startup (clean or not) and its config lines name no partition:
#: they concern every partition of the cluster, like its registration
BROKER_LINE_KINDS = ("broker_restart", "broker_config")
#: a describe header's topic configs name no partition: every one of the topic's
TOPIC_KINDS = ("topic_config",)
#: ConfigRecord ``min.insync.replicas`` (routed by topic, or cluster-wide)
MIN_ISR_KIND = "min_isr_config"


def topic_key(df: DataFrame) -> Column:
    """A partition's topic: its name, else its id (events from Fetch v13+ whose
    TopicRecord is not in the evidence)."""
    return F.coalesce(F.col("topic"), F.concat(F.lit("id:"), F.col("topic_id")))


def with_topic_key(df: DataFrame) -> DataFrame:
    return df.withColumn("topic_key", topic_key(df))


def _local_order() -> list[Column]:
    return [F.col("event_time").asc_nulls_first(), F.col("source_file"), F.col("seq")]


#: The same order as pyarrow sort keys, for the replay's Arrow function
#: (Spark's ascending order puts nulls first)
LOCAL_ORDER_KEYS = [
    ("event_time", "ascending", "at_start"),
    ("source_file", "ascending", "at_start"),
    ("seq", "ascending", "at_start"),
]


#: A partition's key: the replay groups by it, and every window below is
#: partitioned by it, so that the events cross the shuffle once.
PARTITION_KEY = ("cluster", "topic_key", "partition")


def compress(streams: DataFrame) -> DataFrame:
    """Drop the inside of each run of identical fetch observations of a
    series (same partition, leader, follower; a consumer answer's series is
    the answering broker's); keep everything else.

    A run keeps its first and its last observation: the replay's clock-based
    rules need to know how long a follower stayed at an offset (a follower
    still at offset X just before an ISR expansion is not one that might have
    caught up unseen), and repeats in between add nothing.

    The window is partitioned by the partition alone (the series is the
    first part of its order, and compared with the values): the rows leave
    it hash-partitioned by :data:`PARTITION_KEY`, which is what the replay's
    grouping needs, so it does not shuffle again (``replica_offsets`` is
    computed beside the replay: pipeline/offsets.py)."""
    series_key = ("observer", "replica", "kind")
    by_partition = Window.partitionBy(*PARTITION_KEY).orderBy(
        *[F.col(c).asc_nulls_first() for c in series_key], *_local_order()
    )
    # One value per row: the series key and every kind's compared fields,
    # each null where the row's kind does not compare it. The kind is in the
    # key, so two rows are equal exactly when they are of one kind and equal
    # in its fields: one lag and one lead for every kind, where a pair per
    # kind made the window evaluate ten.
    fields = sorted({f for compared in SERIES_FIELDS.values() for f in compared})
    current = F.struct(
        *[F.col(c) for c in series_key],
        *[
            F.when(
                F.col("kind").isin(*[k for k, own in SERIES_FIELDS.items() if f in own]),
                F.col(f),
            ).alias(f)
            for f in fields
        ],
    )
    inside = (
        F.col("kind").isin(*SERIES_FIELDS)
        & F.lag(current).over(by_partition).eqNullSafe(current)
        & F.lead(current).over(by_partition).eqNullSafe(current)
    )
    return (
        streams.withColumn("_repeated", F.coalesce(inside, F.lit(False)))
        .filter(~F.col("_repeated"))
        .drop("_repeated")
    )


#: ``shared_rows``' column naming the topic a row concerns (null: every
#: partition of its cluster)
SHARED_TOPIC = "shared_topic"


def partition_rows(events: DataFrame) -> DataFrame:
    """The rows that name their partition (``events`` with its topic key)."""
    return events.filter(
        F.col("partition").isNotNull()
        & F.col("topic_key").isNotNull()
        & (F.col("kind") != "topic_record")
        & (F.col("kind") != MIN_ISR_KIND)
    )


def shared_rows(events: DataFrame) -> DataFrame:
    """The rows that concern many partitions, each with the topic it concerns
    in :data:`SHARED_TOPIC` (null: every partition of its cluster); the
    replay of each partition receives its own copy of every row that
    concerns it (``pipeline.bridge.with_shared``), so that one partition's
    replay is self-contained.

    Broker registration and fencing, and a broker's startup and config lines,
    concern every partition of the cluster. So does ``min.insync.replicas``
    set for a broker or the cluster (each replay picks the one its leader
    applies); a topic override (ConfigRecord, or a describe header's
    configs) concerns that topic's partitions. A partition known only by its
    topic id gets no topic override (it cannot be matched by name): its min
    ISR is then unknown unless set broker- or cluster-wide.

    These rows are few (a cluster's brokers and topics, not its traffic):
    they are collected once and handed to every partition's replay, where a
    join in Spark would read the whole of the evidence several times over
    (at 1 GiB of busy input that was a third of the replay stage)."""
    brokers = F.col("kind").isin(*BROKER_KINDS) | (
        F.col("kind").isin(*BROKER_LINE_KINDS) & F.col("partition").isNull()
    )
    configs = (F.col("kind") == MIN_ISR_KIND) | (
        F.col("kind").isin(*TOPIC_KINDS) & F.col("partition").isNull()
    )
    return (
        events.filter(brokers | configs)
        .withColumn(SHARED_TOPIC, F.when(configs, F.col("topic")))
        .withColumn("topic_key", F.lit(None).cast("string"))  # each partition's own
    )
