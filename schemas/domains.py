"""Enum domains of the tables. The finding vocabularies belong to the replay
core (the single source); the ingest vocabularies are declared here."""

from __future__ import annotations

from replay.types import Confidence, ElectionKind, FindingKind, Severity, Verdict

FINDING_KINDS: tuple[str, ...] = tuple(k.value for k in FindingKind)
SEVERITIES: tuple[str, ...] = tuple(s.value for s in Severity)
CONFIDENCES: tuple[str, ...] = tuple(c.value for c in Confidence)
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
ELECTION_KINDS: tuple[str, ...] = tuple(e.value for e in ElectionKind)

#: partition_events.kind
METADATA_EVENT_KINDS: tuple[str, ...] = (
    "topic_record",
    "partition_record",
    "partition_change",
    "register_broker",
    "fence_broker",
    "unfence_broker",
    "broker_registration_change",
    "min_isr_config",
)
REQUEST_EVENT_KINDS: tuple[str, ...] = (
    "fetch_request",
    "fetch_response",
    "produce",
    "epoch_query",
    "epoch_answer",
    "leader_and_isr",
    "alter_partition",
    "consumer_fetch",
    "list_offsets",
    "consumer_epoch_answer",
    "consumer_position",
)
BROKER_LOG_EVENT_KINDS: tuple[str, ...] = (
    "become_leader",
    "become_follower",
    "truncation",
    "isr_shrink",
    "isr_expand",
    "isr_updated",
    "hwm_regression_warning",
    "log_loaded",
    "recovering",
    "unclean_partition_change",
    "leader_and_isr",
    "zk_unclean_election",
    #: a ZooKeeper controller moved the partition to OfflinePartition (9.2)
    "zk_partition_offline",
    "broker_restart",
    "log_recovered",
    "recovery_truncation",
    "log_end_at_load",
    "broker_config",
    "fetcher_halt",
    "offset_reset",
)
#: partition.metadata yields ``topic_record`` (a metadata kind) too.
CHECKPOINT_EVENT_KINDS: tuple[str, ...] = ("epoch_checkpoint", "hwm_checkpoint")
SEGMENT_DUMP_EVENT_KINDS: tuple[str, ...] = ("segment_batch",)
ZNODE_EVENT_KINDS: tuple[str, ...] = ("zk_partition_state",)
#: kafka-topics --describe, metadata shell, log dirs, GetOffsetShell (addendum 12)
VIEW_EVENT_KINDS: tuple[str, ...] = (
    "partition_view",
    "topic_config",
    "log_dir_view",
    "offset_view",
)
#: leader_and_isr comes from both request logs and broker logs: listed once.
EVENT_KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        METADATA_EVENT_KINDS
        + REQUEST_EVENT_KINDS
        + BROKER_LOG_EVENT_KINDS
        + CHECKPOINT_EVENT_KINDS
        + SEGMENT_DUMP_EVENT_KINDS
        + ZNODE_EVENT_KINDS
        + VIEW_EVENT_KINDS
    )
)

#: run_manifest.json files[].kind
FILE_KINDS: tuple[str, ...] = (
    "request_log",
    "metadata_dump",
    "unrecognised",
    "broker_log",
    "checkpoint",
    "segment_dump",
    "bundle",
    #: binary ``__cluster_metadata-0/*.log`` segments and ``*.checkpoint`` snapshots
    "metadata_segment",
    #: binary data-partition segment files (batch headers only)
    "data_segment",
    "znode_dump",
    #: a file that is not text (zero-filled indexes, heap dumps): not read as lines
    "binary",
    #: kafka-topics --describe, metadata shell, log-dirs, GetOffsetShell output
    "point_in_time_view",
)
