"""Every table epochtrail reads or writes, declared once.

Parsers read with these types, the publisher writes them, the validation
suites are generated from them, and ``tests/test_schemas.py`` pins each one so
that a change is deliberate. Column names use Kafka's words (see STYLE.md).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.domains import (  # noqa: F401  (re-exported for callers)
    CONFIDENCES,
    ELECTION_KINDS,
    EVENT_KINDS,
    FILE_KINDS,
    FINDING_KINDS,
    SEVERITIES,
    VERDICTS,
)


def _f(name: str, dtype: object, nullable: bool = True) -> StructField:
    return StructField(name, dtype, nullable)  # type: ignore[arg-type]


INT_ARRAY = ArrayType(IntegerType(), containsNull=False)

# --- raw --------------------------------------------------------------------

#: One row per physical line of every input file, numbered from 1.
RAW_LINES = StructType(
    [
        _f("source_file", StringType(), False),
        _f("line_no", LongType(), False),
        _f("observer", IntegerType()),
        _f("value", StringType(), False),
    ]
)

# --- silver -----------------------------------------------------------------

#: One row per observation. ``kind`` (see domains.EVENT_KINDS) says which of the
#: typed columns are filled; the others are null.
#:
#: Metadata kinds (controller order in ``metadata_offset``):
#:   topic_record            topic, topic_id
#:   partition_record        topic_id, partition, replicas, isr, removing_replicas,
#:                           adding_replicas, leader, leader_epoch, partition_epoch,
#:                           leader_recovery_state (0 when absent), elr, last_known_elr
#:   partition_change        topic_id, partition, and, exactly as Kafka encodes them:
#:                           leader (-2 = NO_LEADER_CHANGE when the key is absent,
#:                           -1 = no leader), leader_recovery_state (-1 = no change),
#:                           isr / replicas / adding_replicas / removing_replicas /
#:                           elr / last_known_elr (null = unchanged, [] = empty)
#:   register_broker         replica (= broker id), broker_epoch, fenced (1 fenced, 0 not)
#:   fence_broker            replica, broker_epoch, fenced = 1
#:   unfence_broker          replica, broker_epoch, fenced = -1
#:   broker_registration_change
#:                           replica, broker_epoch, fenced (1 fence, -1 unfence,
#:                           0 no change), in_controlled_shutdown (1 or 0)
#: Request-log kinds (observer = the broker whose request log it is, the leader):
#:   fetch_request           replica (the follower), fetch_offset (= follower LEO),
#:                           last_fetched_epoch, current_leader_epoch, log_start_offset,
#:                           api_version, client_id
#:   fetch_response          replica (the follower it answered), hwm (the leader's HWM),
#:                           error_code, diverging_epoch, diverging_end_offset,
#:                           log_start_offset, records_size, api_version
#:   produce                 acks, base_offset, error_code, client_id, api_version
#:   epoch_query             replica, requested_epoch, current_leader_epoch
#:                           (an OffsetsForLeaderEpoch request partition)
#:   epoch_answer            replica, leader_epoch, end_offset, error_code
#:                           (an OffsetsForLeaderEpoch response partition)
#:   leader_and_isr          ZK era (2.8-3.9), a LeaderAndIsr request (apiKey 4) the
#:                           ZK controller sent the observer; one per partition state:
#:                           topic, topic_id (v5+, else null), partition, leader,
#:                           leader_epoch, isr, replicas, partition_epoch (= zkVersion
#:                           <= 3.2 / partitionEpoch 3.3+), leader_recovery_state (v6+:
#:                           0 RECOVERED, 1 RECOVERING; null before v6), controller_epoch
#:                           (the request's controllerEpoch), api_version, client_id
#:                           (the controller id). replica is null.
#: Broker-log kinds (server.log / state-change.log / controller.log, section 5;
#: observer = the broker whose file it is; topic and partition from the line's
#: ``<topic>-<partition>``, the partition after the last '-'; ``replica`` is the
#: broker the line's prefix names (``broker=N``, ``Broker id=N``,
#: ``replicaId=N``), else the observer):
#:   become_leader           replica (= the new leader), leader (= replica),
#:                           leader_epoch, partition_epoch (3.3+, else null),
#:                           leo (the "from offset": the epoch's start offset),
#:                           hwm, isr, topic_id (3.3+ ``Some(id)``, else null)
#:   become_follower         replica, leader (3.3+ "Current leader is L", else null),
#:                           leader_epoch, partition_epoch (3.3+, else null),
#:                           leo (the "from offset"), hwm
#:   truncation              replica (the broker that truncated), truncate_to, and
#:                           by template: diverging_epoch, diverging_end_offset
#:                           (fetcher "due to leader epoch and offset EpochEndOffset"),
#:                           hwm ("to local high watermark H" / "due to local high
#:                           watermark H" / WARN "below high watermark H")
#:                           and, from a fetcher's prefix, leader (the leaderId whose
#:                           answer it acted on)
#:   isr_shrink              replica (the leader), isr (the new ISR), hwm, leo
#:   isr_expand              replica (the leader), isr (the new ISR; <= 2.7 only)
#:   isr_updated             replica (the leader), isr, partition_epoch (the
#:                           controller-confirmed version: ZK version <= 3.2,
#:                           partition epoch 3.3+)
#:   hwm_regression_warning  replica, hwm (the new, lower HWM), previous_hwm
#:   log_loaded              replica, hwm (the initial HWM)
#:   recovering              replica (= leader, the new leader that logged it), leader
#:   unclean_partition_change
#:                           KRaft controller (observer = the controller's folder):
#:                           "UNCLEAN partition change": topic, topic_id, and the
#:                           new value of each field the diff lists, null when the
#:                           diff leaves it out (unchanged): leader, leader_epoch,
#:                           isr, partition_epoch, leader_recovery_state (0
#:                           RECOVERED, 1 RECOVERING), and the old value of the
#:                           same fields: previous_leader, previous_leader_epoch,
#:                           previous_isr, previous_partition_epoch; "Setting new
#:                           leader ... using an unclean election" (3.6+): topic_id,
#:                           partition, leader
#:   leader_and_isr          ZK controller state-change line (5.6, 1.1-3.9; observer
#:                           = the file's broker, the controller): ``[Controller id=N
#:                           epoch=E] Changed partition <tp> from <S> to <S> with state
#:                           LeaderAndIsr(...)``: topic, partition (``topic-p`` or
#:                           ``[topic,p]``), leader, leader_epoch, isr, partition_epoch
#:                           (partitionEpoch 3.2+ / zkVersion 2.8-3.1),
#:                           leader_recovery_state (3.2+: 0 RECOVERED, 1 RECOVERING;
#:                           null in the zkVersion form), controller_epoch (E from the
#:                           prefix; null without it). replica, topic_id, replicas null.
#:                           Unclean hint (5.6): from OfflinePartition, isr == [leader],
#:                           leader_recovery_state == 1.
#:   zk_unclean_election     ZK controller <= 1.0 WARN ``No broker in ISR is alive for
#:                           <tp>. Elect leader L from live brokers ...``: topic,
#:                           partition, leader (= L). Nothing else (no epoch).
#: Segment-dump kinds (``kafka-dump-log --files`` of a data partition, section 3;
#: observer = the broker whose dump it is):
#:   segment_batch           one record batch: topic, partition (from the dumped
#:                           path's ``<topic>-<partition>/`` folder), replica (=
#:                           observer), base_offset, last_offset, leader_epoch (=
#:                           partitionLeaderEpoch); event_time = the batch timestamp.
#:                           ``isvalid: false`` batches are quarantined, not events.
#: Checkpoint kinds (section 4; observer = the broker whose file it is):
#:   epoch_checkpoint        one leader-epoch-checkpoint entry: topic, partition
#:                           (from the ``<topic>-<partition>/`` folder), replica
#:                           (= observer), leader_epoch, base_offset (its start offset)
#:   hwm_checkpoint          one replication-offset-checkpoint entry: topic,
#:                           partition, replica (= observer), hwm
#:   topic_record            also from partition.metadata: topic (from the folder),
#:                           topic_id
#: Interface kinds (declared ahead of their parsers, filled as they land):
#:   min_isr_config          a ConfigRecord (metadata dump or raw segment) setting
#:                           ``min.insync.replicas``: topic (resource type TOPIC),
#:                           or replica (resource type BROKER with a broker id;
#:                           both null = the cluster default, BROKER with an
#:                           empty name), min_isr (null = the value was deleted)
#:   alter_partition         an AlterIsr/AlterPartition request partition (request
#:                           log of the controller, section 1.8): replica (the
#:                           leader that sent it), leader_epoch, isr (proposed),
#:                           partition_epoch (AlterIsr: currentIsrVersion; 3.2+:
#:                           partitionEpoch), leader_recovery_state (null before
#:                           v1); error_code and leader null. Its response
#:                           partition: error_code (set), and the confirmed leader,
#:                           leader_epoch, isr, partition_epoch; replica = the
#:                           sending leader on both rows
#:   zk_partition_state      a ZooKeeper ``/brokers/topics/T/partitions/P/state``
#:                           znode dump: topic, partition, leader, leader_epoch,
#:                           isr, controller_epoch, partition_epoch (the znode's
#:                           dataVersion when the dump shows it, else null),
#:                           leader_recovery_state (only when the znode has it)
#:   isr_updated             also: under_min_isr (3.6+ ``(under-min-isr)`` marker;
#:                           true/false from 3.6, null before)
#: Evidence kinds (issues 12 and 13; formats-addendum.md sections 9-13):
#:   consumer_fetch          request log (11.1): a Fetch answered to a consumer
#:                           (replica id -1, or no replica key from v15): topic /
#:                           topic_id, partition, fetch_offset (the consumer's
#:                           position), hwm (the HWM the answering broker exposed,
#:                           the observer), log_start_offset, error_code, replica
#:                           (-1, or null when the request names none), client_id,
#:                           api_version
#:   list_offsets            request log (11.1): a ListOffsets LATEST (timestamp
#:                           -1) answer to a consumer: topic / topic_id,
#:                           partition, hwm (the offset returned: the HWM, or the
#:                           LSO under read_committed, never above the HWM),
#:                           leader_epoch (v4+), error_code, replica (-1),
#:                           client_id, api_version; other timestamps: ignored
#:   consumer_epoch_answer   request log (11.1): an OffsetsForLeaderEpoch answer to
#:                           a consumer (replica -1 / -2): topic, partition,
#:                           leader_epoch, end_offset (the leader's LEO for its
#:                           current epoch), error_code, replica, client_id
#:   consumer_position       request log (11.1), 0.8.2-0.10.1 only (no answer
#:                           printed): a consumer's Scala Fetch with details:
#:                           topic, partition, fetch_offset (its position),
#:                           replica (-1), client_id, api_version
#:   broker_restart          broker log (10.1), per data directory: replica (the
#:                           broker), clean_shutdown (true: clean-shutdown file
#:                           found; false: recovery without it; null: the version
#:                           prints nothing that decides); partition null (the
#:                           replay copies it to every partition of the cluster)
#:   log_recovered           broker log (10.2): a log recovered at startup
#:                           (``Recovering unflushed segment``): topic, partition,
#:                           replica, base_offset (the segment's)
#:   recovery_truncation     broker log (10.2): recovery cut a log (``Corruption
#:                           found ... truncating to offset``, ``Found invalid
#:                           offset during recovery ...``): topic, partition,
#:                           replica, truncate_to
#:   log_end_at_load         broker log (10.3): ``Completed load of log ... log end
#:                           offset`` / ``log-end-offset`` / the producer-state
#:                           ``till offset`` line: topic, partition, replica, leo,
#:                           log_start_offset (when printed)
#:   broker_config           broker log (13): ``Kafka version:`` and ``KafkaConfig
#:                           values:`` markers: replica (the broker, when the file
#:                           says), kafka_version, inter_broker_protocol, mode
#:                           (``zk`` / ``kraft``), unclean_election_enabled,
#:                           min_isr; partition null
#:   fetcher_halt            broker log (9.6): a follower's fetcher halted rather
#:                           than truncate below the leader (unclean election
#:                           disabled): topic, partition, replica (the follower),
#:                           leader, leo (its log end), truncate_to (the leader's)
#:   offset_reset            broker log (9.6): a follower reset its fetch offset
#:                           (out of range): topic, partition, replica, leo (its
#:                           old log end), truncate_to (the new offset), leader
#:   partition_view          point-in-time views (12.1, 12.2): one partition of a
#:                           ``kafka-topics --describe`` or metadata-shell snapshot,
#:                           in file order, no time: topic, topic_id, partition,
#:                           leader (-1 for ``none``), replicas, isr, elr,
#:                           last_known_elr (3.8+; null for ``N/A``), and from the
#:                           shell leader_epoch, partition_epoch,
#:                           leader_recovery_state
#:   topic_config            12.1's header ``Configs:``: topic, min_isr,
#:                           unclean_election_enabled (null when not listed)
#:   log_dir_view            12.3: replica (the broker), topic, partition,
#:                           records_size (the log's size), offset_lag, is_future
#:   offset_view             12.4: topic, partition, end_offset (GetOffsetShell's
#:                           offset; which --time made it the file does not say)
PARTITION_EVENTS = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType()),
        _f("observer", IntegerType()),
        _f("source_file", StringType(), False),
        _f("line_no", LongType(), False),
        _f("event_time", TimestampType()),
        _f("metadata_offset", LongType()),
        _f("seq", LongType(), False),
        _f("kind", StringType(), False),
        _f("leader", IntegerType()),
        _f("leader_epoch", IntegerType()),
        _f("partition_epoch", IntegerType()),
        _f("replicas", INT_ARRAY),
        _f("isr", INT_ARRAY),
        _f("elr", INT_ARRAY),
        _f("last_known_elr", INT_ARRAY),
        _f("adding_replicas", INT_ARRAY),
        _f("removing_replicas", INT_ARRAY),
        _f("leader_recovery_state", IntegerType()),
        _f("replica", IntegerType()),
        _f("broker_epoch", LongType()),
        _f("fenced", IntegerType()),
        _f("in_controlled_shutdown", IntegerType()),
        _f("fetch_offset", LongType()),
        _f("last_fetched_epoch", IntegerType()),
        _f("current_leader_epoch", IntegerType()),
        _f("log_start_offset", LongType()),
        _f("hwm", LongType()),
        _f("diverging_epoch", IntegerType()),
        _f("diverging_end_offset", LongType()),
        _f("records_size", LongType()),
        _f("requested_epoch", IntegerType()),
        _f("end_offset", LongType()),
        _f("base_offset", LongType()),
        _f("acks", IntegerType()),
        _f("error_code", IntegerType()),
        _f("client_id", StringType()),
        _f("api_version", IntegerType()),
        _f("leo", LongType()),
        _f("truncate_to", LongType()),
        _f("previous_hwm", LongType()),
        _f("controller_epoch", IntegerType()),
        _f("last_offset", LongType()),
        _f("min_isr", IntegerType()),
        _f("under_min_isr", BooleanType()),
        _f("clean_shutdown", BooleanType()),
        _f("kafka_version", StringType()),
        _f("inter_broker_protocol", StringType()),
        _f("mode", StringType()),
        _f("unclean_election_enabled", BooleanType()),
        _f("offset_lag", LongType()),
        _f("is_future", BooleanType()),
        # the state a KRaft controller's printed partition change replaced
        _f("previous_leader", IntegerType()),
        _f("previous_leader_epoch", IntegerType()),
        _f("previous_isr", INT_ARRAY),
        _f("previous_partition_epoch", IntegerType()),
    ]
)

#: Lines that could not be read: never dropped, never a finding.
QUARANTINE = StructType(
    [
        _f("cluster", StringType(), False),
        _f("source_file", StringType(), False),
        _f("line_no", LongType(), False),
        _f("reason", StringType(), False),
        _f("text", StringType(), False),  # first 8 KiB of the raw line
        _f("text_truncated", BooleanType(), False),
        _f("date", StringType(), False),
    ]
)

#: Per input file accounting; becomes run_manifest.json's ``files``.
FILE_STATS = StructType(
    [
        _f("path", StringType(), False),
        _f("kind", StringType(), False),
        _f("observer", IntegerType()),
        _f("lines_read", LongType(), False),
        _f("lines_parsed", LongType(), False),
        _f("lines_ignored", LongType(), False),
        _f("lines_quarantined", LongType(), False),
        #: why a file was not read, or not all of it (a binary file; lines the
        #: reader skipped as longer than its bound), else null
        _f("note", StringType()),
    ]
)

# --- gold -------------------------------------------------------------------

EVIDENCE = ArrayType(
    StructType(
        [
            _f("source_file", StringType()),
            _f("line_no", LongType()),
            _f("text", StringType()),
        ]
    )
)

ACKED_PRODUCES = ArrayType(
    StructType(
        [
            _f("client_id", StringType()),
            _f("base_offset", LongType()),
            _f("source_file", StringType()),
            _f("line_no", LongType()),
        ]
    )
)

ANOMALIES = StructType(
    [
        _f("anomaly_id", StringType(), False),
        _f("kind", StringType(), False),
        _f("severity", StringType(), False),
        _f("confidence", StringType(), False),
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType()),
        _f("leader_epoch", IntegerType()),
        _f("replica", IntegerType()),
        _f("offset_start", LongType()),
        _f("offset_end", LongType()),
        _f("records_lost", LongType()),
        _f("qualifier", StringType()),
        _f("caused_by", ArrayType(StringType(), containsNull=False)),
        _f("detected_at", TimestampType()),
        _f("profile", StringType(), False),
        _f("explanation", StringType(), False),
        _f("evidence", EVIDENCE),
        _f("acked_produces", ACKED_PRODUCES),
        _f("date", StringType(), False),
    ]
)

EPOCH_LINEAGE = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType(), False),
        _f("leader_epoch", IntegerType(), False),
        _f("leader", IntegerType(), False),
        _f("election_kind", StringType(), False),
        _f("partition_epoch", IntegerType()),
        _f("start_time", TimestampType()),
        _f("end_time", TimestampType()),
        _f("start_offset", LongType()),
        _f("start_offset_known", BooleanType(), False),
        _f("isr", INT_ARRAY),
        _f("elr", INT_ARRAY),
        _f("metadata_offset", LongType()),
        _f("date", StringType(), False),
    ]
)

REPLICA_OFFSETS = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType(), False),
        _f("replica", IntegerType(), False),
        _f("observer", IntegerType()),
        _f("event_time", TimestampType()),
        _f("leader_epoch", IntegerType()),
        _f("leo", LongType()),
        _f("hwm", LongType()),
        _f("source_file", StringType(), False),
        _f("line_no", LongType(), False),
        _f("date", StringType(), False),
    ]
)

PARTITION_VERDICTS = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType(), False),
        _f("verdict", StringType(), False),
        _f("profile", StringType(), False),
        _f("findings", IntegerType(), False),
        _f("evidence_kinds", ArrayType(StringType(), containsNull=False)),
        _f("observers", INT_ARRAY),
        _f("gaps", ArrayType(StringType(), containsNull=False)),
        _f("events", LongType(), False),
        _f("first_event_time", TimestampType()),
        _f("last_event_time", TimestampType()),
        _f("date", StringType(), False),
    ]
)

#: One row per ISR the partition's controller recorded (PartitionRecord,
#: PartitionChangeRecord, ZooKeeper LeaderAndIsr), in force from
#: ``start_time`` until the next one (``end_time``, null for the last).
#: ``min_isr`` is min.insync.replicas for the epoch's leader as the metadata
#: last stated it (null when it never did); ``under_min_isr`` null then too.
ISR_TIMELINE = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType(), False),
        _f("leader_epoch", IntegerType(), False),
        _f("leader", IntegerType(), False),
        _f("isr", INT_ARRAY),
        _f("isr_size", IntegerType(), False),
        _f("min_isr", IntegerType()),
        _f("under_min_isr", BooleanType()),
        _f("start_time", TimestampType()),
        _f("end_time", TimestampType()),
        _f("source_file", StringType(), False),
        _f("line_no", LongType(), False),
        _f("date", StringType(), False),
    ]
)

#: The BI rollup: one row per partition and day with anything to say.
#: Counts are of findings detected that day (``anomalies.detected_at``),
#: elections of epochs that began that day; ``under_min_isr_seconds`` is the
#: part of that day the recorded ISR was below the min ISR in force (a last
#: ISR counts until the partition's last event); ``verdict`` is the
#: partition's verdict of the run, on the day of its last event.
PARTITION_HEALTH_DAILY = StructType(
    [
        _f("cluster", StringType(), False),
        _f("topic", StringType()),
        _f("topic_id", StringType()),
        _f("partition", IntegerType(), False),
        _f("verdict", StringType()),
        _f("findings", IntegerType(), False),
        _f("critical_findings", IntegerType(), False),
        _f("unclean_elections", IntegerType(), False),
        _f("truncations_below_hwm", IntegerType(), False),
        _f("log_divergences", IntegerType(), False),
        _f("hwm_regressions", IntegerType(), False),
        _f("fencing_violations", IntegerType(), False),
        _f("isr_rule_violations", IntegerType(), False),
        _f("records_lost", LongType(), False),
        _f("leader_elections", IntegerType(), False),
        _f("isr_changes", IntegerType(), False),
        _f("under_min_isr_seconds", DoubleType(), False),
        _f("date", StringType(), False),
    ]
)

#: Gold tables by the folder name they are published under.
GOLD_TABLES: dict[str, StructType] = {
    "anomalies": ANOMALIES,
    "epoch_lineage": EPOCH_LINEAGE,
    "replica_offsets": REPLICA_OFFSETS,
    "partition_verdicts": PARTITION_VERDICTS,
    "isr_timeline": ISR_TIMELINE,
    "partition_health_daily": PARTITION_HEALTH_DAILY,
    "quarantine": QUARANTINE,
}
