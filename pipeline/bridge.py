"""The one bridge between Spark and the pure replay core.

Spark brings each partition's events together; an Arrow function
(``mapInArrow``, :func:`key_groups`) hands them to ``replay_partition`` and
turns its result back into rows of the gold tables (anomalies,
epoch_lineage, isr_timeline, partition_verdicts, replica_offsets), sharing
one union schema with a ``table`` discriminator.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice, repeat
from typing import Any
from zoneinfo import ZoneInfo

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from pipeline.reconstruct import SHARED_TOPIC
from replay import ReplayContext, codec, replay_partition
from replay.findings import Finding
from replay.result import ReplayResult
from replay.types import (
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERY_NO_CHANGE,
    AlterPartition,
    BecomeFollower,
    BecomeLeader,
    BrokerConfig,
    BrokerFencing,
    BrokerRegistration,
    BrokerRestart,
    ClientEpochAnswer,
    ClientHwm,
    ClientPosition,
    ControllerChange,
    EpochAnswer,
    EpochCheckpoint,
    Event,
    FetchAnswer,
    FetcherHalt,
    FollowerFetch,
    IsrUpdated,
    LeaderAndIsr,
    LogLoaded,
    LogRecovered,
    LogTruncated,
    MinIsrConfig,
    OffsetReset,
    Origin,
    PartitionChangeRecord,
    PartitionKey,
    PartitionOffline,
    PartitionRecord,
    PartitionView,
    ProduceAck,
    Profile,
    RecoveryTruncation,
    Source,
    TopicConfig,
)
from schemas.state import PARTITION_STATE
from schemas.tables import (
    ANOMALIES,
    EPOCH_LINEAGE,
    ISR_TIMELINE,
    PARTITION_VERDICTS,
    REPLICA_OFFSETS,
)

BRIDGED_TABLES = {
    "anomalies": ANOMALIES,
    "epoch_lineage": EPOCH_LINEAGE,
    "isr_timeline": ISR_TIMELINE,
    "partition_verdicts": PARTITION_VERDICTS,
    "partition_state": PARTITION_STATE,
    # computed beside the replay, from the same rows (pipeline/offsets.py)
    "replica_offsets": REPLICA_OFFSETS,
}


def _union_schema() -> StructType:
    fields: dict[str, StructField] = {"table": StructField("table", StringType(), False)}
    for schema in BRIDGED_TABLES.values():
        for f in schema.fields:
            if f.name == "date":
                continue
            known = fields.get(f.name)
            if known is not None and known.dataType != f.dataType:
                raise TypeError(f"column {f.name} has two types in the gold tables")
            fields[f.name] = StructField(f.name, f.dataType, True)
    return StructType(list(fields.values()))


BRIDGE_SCHEMA = _union_schema()


@dataclass(frozen=True)
class BridgeSettings:
    #: the profile of a cluster not in ``profiles``
    profile: Profile
    max_clock_skew_s: float
    #: per cluster, the brokers whose request logs are in the evidence
    request_log_observers: dict[str, frozenset[int]]
    #: per cluster, the profile its own evidence chose (a fleet run mixes eras)
    profiles: dict[str, Profile] = field(default_factory=dict)


# --- rows -> events -----------------------------------------------------------


def _ints(value: str | Iterable[int] | None) -> tuple[int, ...] | None:
    """A broker set as the replay takes it, from a list or from the text
    :data:`SET_COLUMNS` cross into Python as ("1,2,3"; "" is the empty set)."""
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(int(v) for v in value.split(",")) if value else ()
    return tuple(int(v) for v in value)


def _origin(row: dict[str, Any]) -> Origin:
    return Origin(
        source=Source(row["source_file"], int(row["line_no"])),
        time=row["event_time"],
        observer=row["observer"],
        metadata_offset=row["metadata_offset"],
        seq=int(row["seq"]),
    )


def _partition_record(row: dict[str, Any]) -> Event:
    return PartitionRecord(
        origin=_origin(row),
        replicas=_ints(row["replicas"]) or (),
        isr=_ints(row["isr"]) or (),
        leader=row["leader"],
        leader_epoch=row["leader_epoch"],
        partition_epoch=row["partition_epoch"],
        leader_recovery_state=row["leader_recovery_state"]
        if row["leader_recovery_state"] is not None
        else RECOVERED,
        adding_replicas=_ints(row["adding_replicas"]) or (),
        removing_replicas=_ints(row["removing_replicas"]) or (),
        elr=_ints(row["elr"]),
        last_known_elr=_ints(row["last_known_elr"]),
    )


def _partition_change(row: dict[str, Any]) -> Event:
    return PartitionChangeRecord(
        origin=_origin(row),
        leader=row["leader"] if row["leader"] is not None else NO_LEADER_CHANGE,
        isr=_ints(row["isr"]),
        replicas=_ints(row["replicas"]),
        adding_replicas=_ints(row["adding_replicas"]),
        removing_replicas=_ints(row["removing_replicas"]),
        leader_recovery_state=row["leader_recovery_state"]
        if row["leader_recovery_state"] is not None
        else RECOVERY_NO_CHANGE,
        elr=_ints(row["elr"]),
        last_known_elr=_ints(row["last_known_elr"]),
    )


def _fencing(row: dict[str, Any]) -> Event:
    return BrokerFencing(
        origin=_origin(row),
        broker=row["replica"],
        broker_epoch=row["broker_epoch"],
        fenced=row["fenced"] or 0,
        in_controlled_shutdown=row["in_controlled_shutdown"] == 1,
    )


def _leader_and_isr(r: dict[str, Any]) -> LeaderAndIsr:
    return LeaderAndIsr(
        _origin(r),
        r["leader"],
        r["leader_epoch"],
        _ints(r["isr"]) or (),
        r["partition_epoch"],
        r["leader_recovery_state"],
        r.get("controller_epoch"),
    )


def _controller_change(r: dict[str, Any]) -> ControllerChange | None:
    """A KRaft controller's ``UNCLEAN partition change`` line. A field its
    diff leaves out is unchanged (old = new); a change that elects no new
    leader epoch, or whose leader or ISR neither side prints, is no step of
    a lineage (None, by rule), and neither is the ``Setting new leader``
    line, which names no epoch."""
    epoch, leader, isr = r["leader_epoch"], r["leader"], _ints(r["isr"])
    before_epoch = r.get("previous_leader_epoch")
    if epoch is None or before_epoch is None or leader is None or isr is None:
        return None
    before_leader = r.get("previous_leader")
    before_isr = _ints(r.get("previous_isr"))
    partition_epoch = r["partition_epoch"]
    before_partition_epoch = r.get("previous_partition_epoch")
    return ControllerChange(
        _origin(r),
        leader if before_leader is None else before_leader,
        leader,
        before_epoch,
        epoch,
        isr if before_isr is None else before_isr,
        isr,
        partition_epoch if before_partition_epoch is None else before_partition_epoch,
        partition_epoch,
        r["leader_recovery_state"],
    )


def _broker(r: dict[str, Any]) -> int:
    """The broker a startup or config line speaks of: its own id when the line
    prints it, else the broker whose file it is."""
    broker = r["replica"] if r["replica"] is not None else r["observer"]
    if broker is None:
        raise ValueError("the line names no broker and its file belongs to none")
    return int(broker)


def _client_hwm(r: dict[str, Any]) -> Event:
    # a consumer's Fetch names the epoch it believes current (it is refused
    # otherwise); a ListOffsets answer v4+ carries the leader's epoch
    epoch = r["leader_epoch"] if r["kind"] == "list_offsets" else r.get("current_leader_epoch")
    return ClientHwm(
        _origin(r),
        r["hwm"],
        r["error_code"] or 0,
        epoch,
        r.get("log_start_offset"),
        r["kind"] == "list_offsets",
    )


def _partition_view(r: dict[str, Any]) -> Event:
    leader = r["leader"]
    return PartitionView(
        _origin(r),
        -1 if leader is None else int(leader),
        _ints(r["replicas"]) or (),
        _ints(r["isr"]) or (),
        _ints(r["elr"]),
        _ints(r["last_known_elr"]),
        r["leader_epoch"],
        r["partition_epoch"],
        r["leader_recovery_state"],
    )


def _isr_written(r: dict[str, Any]) -> Event | None:
    """A leader's ``Shrinking`` / ``Expanding ISR`` line (formats-addendum.md
    9.4). Before 2.7 the leader writes its ISR to ZooKeeper itself, and before
    2.4 this line is the only INFO trace of that write (the "ISR updated"
    confirmation is at TRACE): it is the ISR the next election starts from
    (replay/transitions.py ``_isr_updated``). ``Expanding`` is printed on the
    ZooKeeper path only (0.8.2-2.7); a ``Shrinking`` line with the leader's
    HWM (2.2+) is, from 2.7 and in KRaft, a proposal the controller may
    refuse: not bridged (2.4-2.7 confirm their writes with "ISR updated")."""
    if r["kind"] == "isr_shrink" and r.get("hwm") is not None:
        return None
    return IsrUpdated(_origin(r), r["replica"], _ints(r["isr"]) or ())


CONVERTERS: dict[str, Callable[[dict[str, Any]], Event | None]] = {
    "partition_record": _partition_record,
    "partition_change": _partition_change,
    "register_broker": lambda r: BrokerRegistration(
        _origin(r), r["replica"], r["broker_epoch"], r["fenced"] == 1
    ),
    "fence_broker": _fencing,
    "unfence_broker": _fencing,
    "broker_registration_change": _fencing,
    "fetch_request": lambda r: FollowerFetch(
        _origin(r),
        r["replica"],
        r["fetch_offset"],
        r["last_fetched_epoch"],
        r["current_leader_epoch"],
    ),
    "fetch_response": lambda r: FetchAnswer(
        _origin(r),
        r["replica"],
        r["hwm"],
        r["error_code"] or 0,
        r["diverging_epoch"],
        r["diverging_end_offset"],
        r.get("folded_after") or 0,
    ),
    "produce": lambda r: ProduceAck(
        _origin(r), r["acks"], r["base_offset"], r["error_code"] or 0, r["client_id"]
    ),
    "epoch_answer": lambda r: EpochAnswer(
        _origin(r),
        r["replica"],
        r["leader_epoch"],
        r["end_offset"],
        r["error_code"] or 0,
    ),
    # broker server / state-change logs and checkpoint files
    "become_leader": lambda r: BecomeLeader(
        _origin(r), r["replica"], r["leader_epoch"], r.get("leo"), r.get("hwm")
    ),
    "become_follower": lambda r: BecomeFollower(
        _origin(r), r["replica"], r["leader_epoch"], r.get("leo"), r.get("leader"), r.get("hwm")
    ),
    "leader_and_isr": _leader_and_isr,
    # A ZooKeeper partition-state znode holds the same state as the
    # controller's LeaderAndIsr decision it wrote; its zkVersion (the dump's
    # dataVersion, when shown) is the partition epoch. replay/order.py orders
    # it by leader epoch and zkVersion, so a dump without mtime needs no clock.
    "zk_partition_state": _leader_and_isr,
    "zk_partition_offline": lambda r: PartitionOffline(_origin(r), r["controller_epoch"]),
    "truncation": lambda r: LogTruncated(
        _origin(r),
        r["replica"],
        r["truncate_to"],
        r["diverging_epoch"],
        r["diverging_end_offset"],
        r["leader"],
    ),
    "unclean_partition_change": _controller_change,
    "epoch_checkpoint": lambda r: EpochCheckpoint(
        _origin(r), r["replica"], r["leader_epoch"], r["base_offset"]
    ),
    # min ISR (ConfigRecord) and the ISR changes leaders report
    "min_isr_config": lambda r: MinIsrConfig(_origin(r), r["topic"], r["replica"], r["min_isr"]),
    "isr_updated": lambda r: IsrUpdated(
        _origin(r),
        r["replica"],
        _ints(r["isr"]) or (),
        r["partition_epoch"],
        r["under_min_isr"],
    ),
    "isr_shrink": _isr_written,
    "isr_expand": _isr_written,
    "alter_partition": lambda r: AlterPartition(
        _origin(r),
        r["replica"],
        r["leader_epoch"],
        _ints(r["isr"]),
        r["partition_epoch"],
        r["error_code"],
        r["leader"],
    ),
    # what clients were shown (formats-addendum.md 11)
    "consumer_fetch": _client_hwm,
    "list_offsets": _client_hwm,
    "consumer_position": lambda r: ClientPosition(_origin(r), r["fetch_offset"], r["client_id"]),
    "consumer_epoch_answer": lambda r: ClientEpochAnswer(
        _origin(r), r["leader_epoch"], r["end_offset"], r["error_code"] or 0
    ),
    # a broker coming back (10), its config (13), pre-2.8 fetcher lines (9.6)
    "broker_restart": lambda r: BrokerRestart(_origin(r), _broker(r), r["clean_shutdown"]),
    "log_recovered": lambda r: LogRecovered(_origin(r), _broker(r), r["base_offset"]),
    "recovery_truncation": lambda r: RecoveryTruncation(_origin(r), _broker(r), r["truncate_to"]),
    "log_end_at_load": lambda r: LogLoaded(
        _origin(r), _broker(r), r["leo"], r.get("log_start_offset")
    ),
    "broker_config": lambda r: BrokerConfig(
        _origin(r),
        r["replica"] if r["replica"] is not None else r["observer"],
        r.get("unclean_election_enabled"),
        r["min_isr"],
        r.get("kafka_version"),
        r.get("mode"),
    ),
    "fetcher_halt": lambda r: FetcherHalt(
        _origin(r), _broker(r), r["leader"], r["leo"], r["truncate_to"]
    ),
    "offset_reset": lambda r: OffsetReset(
        _origin(r), _broker(r), r["leader"], r["leo"], r["truncate_to"]
    ),
    # point-in-time views (12)
    "partition_view": _partition_view,
    "topic_config": lambda r: TopicConfig(
        _origin(r), r["topic"], r["min_isr"], r.get("unclean_election_enabled")
    ),
}

#: kinds the replay does not read (yet): kept in silver, not bridged
NOT_REPLAYED = frozenset(
    {
        "topic_record",
        "epoch_query",
        # kept in silver for people and dashboards; the replay does not judge
        # with them yet
        "hwm_regression_warning",
        "log_loaded",
        "recovering",
        "hwm_checkpoint",
        "zk_unclean_election",
        "segment_batch",
        # point-in-time sizes and offsets: which --time made a GetOffsetShell
        # offset, and what a log's size means in offsets, the files do not say
        "log_dir_view",
        "offset_view",
    }
)


def to_events(rows: Iterable[dict[str, Any]]) -> tuple[list[Event], list[str]]:
    """Convert silver rows; a row that cannot be interpreted becomes a gap."""
    events: list[Event] = []
    problems: list[str] = []
    for row in rows:
        kind = row["kind"]
        if kind in NOT_REPLAYED:
            continue
        convert = CONVERTERS.get(kind)
        if convert is None:
            problems.append(f"{row['source_file']}:{row['line_no']}: unknown event kind {kind!r}")
            continue
        try:
            event = convert(row)
        except (KeyError, TypeError, ValueError) as error:
            problems.append(f"{row['source_file']}:{row['line_no']}: {kind} unusable ({error})")
            continue
        if event is not None:  # None: a row its converter does not bridge, by rule
            events.append(event)
    return events, problems


# --- result -> rows -----------------------------------------------------------


def finding_row(f: Finding, profile: Profile) -> dict[str, Any]:
    return {
        "table": "anomalies",
        "anomaly_id": f.anomaly_id,
        "kind": f.kind.value,
        "severity": f.severity.value,
        "confidence": f.confidence.value,
        "cluster": f.key.cluster,
        "topic": f.key.topic,
        "topic_id": f.key.topic_id,
        "partition": f.key.partition,
        "leader_epoch": f.leader_epoch,
        "replica": f.replica,
        "offset_start": f.offset_start,
        "offset_end": f.offset_end,
        "records_lost": f.records_lost,
        "qualifier": None if f.qualifier is None else f.qualifier.value,
        "caused_by": list(f.caused_by),
        "detected_at": f.detected_at,
        "profile": profile.value,
        "explanation": f.explain(),
        "evidence": [
            {"source_file": s.source_file, "line_no": s.line_no, "text": None} for s in f.evidence
        ],
        "acked_produces": [
            {
                "client_id": a.client_id,
                "base_offset": a.base_offset,
                "source_file": a.source.source_file,
                "line_no": a.source.line_no,
            }
            for a in f.acked_produces
        ],
    }


def isr_rows(result: ReplayResult, common: dict[str, Any]) -> list[dict[str, Any]]:
    """The ISRs the controller recorded, each until the next (isr_timeline)."""
    history = result.history
    changes = history.isr_changes
    rows = []
    for i, change in enumerate(changes):
        setting = history.effective_min_isr(change.leader)
        min_isr = None if setting is None else setting.value
        rows.append(
            {
                "table": "isr_timeline",
                **common,
                "leader_epoch": change.leader_epoch,
                "leader": change.leader,
                "isr": list(change.isr),
                "isr_size": len(change.isr),
                "min_isr": min_isr,
                "under_min_isr": None if min_isr is None else len(change.isr) < min_isr,
                "start_time": change.at,
                "end_time": changes[i + 1].at if i + 1 < len(changes) else None,
                "source_file": change.source.source_file,
                "line_no": change.source.line_no,
            }
        )
    return rows


def result_rows(
    result: ReplayResult, problems: list[str], topic_key: str | None = None
) -> list[dict[str, Any]]:
    k = result.key
    common = {
        "cluster": k.cluster,
        "topic": k.topic,
        "topic_id": k.topic_id,
        "partition": k.partition,
    }
    rows = [finding_row(f, result.profile) for f in result.findings]
    for view in result.lineage:
        rows.append(
            {
                "table": "epoch_lineage",
                **common,
                "leader_epoch": view.leader_epoch,
                "leader": view.leader,
                "election_kind": view.election.value,
                "partition_epoch": view.partition_epoch,
                "start_time": view.began_at,
                "end_time": view.ended_at,
                "start_offset": view.start_offset.exact,
                "start_offset_known": view.start_offset.exact is not None,
                "isr": list(view.isr),
                "elr": list(view.elr),
                "metadata_offset": view.metadata_offset,
            }
        )
    rows += isr_rows(result, common)
    gaps = list(result.coverage.gaps) + problems
    verdict = result.verdict.value
    if problems and verdict == "valid":
        verdict = "unknown"
    rows.append(
        {
            "table": "partition_verdicts",
            **common,
            "verdict": verdict,
            "profile": result.profile.value,
            "findings": len(result.findings),
            "evidence_kinds": list(result.coverage.evidence_kinds),
            "observers": list(result.coverage.observers),
            "gaps": gaps,
            "events": result.coverage.events,
            "first_event_time": result.coverage.first_time,
            "last_event_time": result.coverage.last_time,
        }
    )
    if topic_key is not None:
        rows.append(
            {
                "table": "partition_state",
                **common,
                "topic_key": topic_key,
                "state": codec.dumps(result.history),
            }
        )
    return rows


def replay_group(
    rows: list[dict[str, Any]],
    settings: BridgeSettings,
    saved: dict[str, Any] | None = None,
    keep_state: bool = False,
) -> list[dict[str, Any]]:
    """Replay one partition's silver rows (the body of the Arrow function),
    continuing from its ``saved`` state row when there is one."""
    first = rows[0] if rows else saved
    assert first is not None
    topic = next((r["topic"] for r in rows if r["topic"] is not None), None)
    topic_id = next((r["topic_id"] for r in rows if r["topic_id"] is not None), None)
    if saved is not None:
        topic = topic if topic is not None else saved["topic"]
        topic_id = topic_id if topic_id is not None else saved["topic_id"]
    key = PartitionKey(first["cluster"], topic, topic_id, int(first["partition"]))
    events, problems = to_events(rows)
    initial = None
    if saved is not None:
        try:
            initial = codec.loads(saved["state"])
        except codec.StateError as error:
            problems.append(
                f"the saved state could not be read ({error}); replayed from this run only"
            )
    ctx = ReplayContext(
        key=key,
        profile=settings.profiles.get(key.cluster, settings.profile),
        max_clock_skew_s=settings.max_clock_skew_s,
        request_log_observers=settings.request_log_observers.get(key.cluster, frozenset()),
    )
    return result_rows(
        replay_partition(events, ctx, initial),
        problems,
        first["topic_key"] if keep_state else None,
    )


# --- Arrow <-> rows ---------------------------------------------------------------

_EPOCH_NAIVE = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=ZoneInfo("UTC"))


def _python_values(column: Any) -> list[Any]:
    """A column's values in Python. Timestamps (microseconds, UTC, as Spark
    sends them) are built from their integers: Arrow's own conversion costs
    several times more per value; the datetimes are the same, zone included."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) and kind.unit == "us" and kind.tz in (None, "UTC"):
        epoch = _EPOCH_UTC if kind.tz == "UTC" else _EPOCH_NAIVE
        return [
            None if v is None else epoch + timedelta(microseconds=v)
            for v in column.cast(pa.int64()).to_pylist()
        ]
    return list(column.to_pylist())


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A group's rows, the same dicts ``Table.to_pylist`` gives, built
    column-wise: each column converted to Python once (one null in every
    row not at all), the rows zipped from the columns in C, where
    ``to_pylist`` builds each row in Python, value by value."""
    names = table.column_names
    columns = [
        repeat(None) if column.null_count == len(column) else _python_values(column)
        for column in table.columns
    ]
    # a null column repeats None without end: the row count bounds the zip
    rows = islice(zip(*columns, strict=False), table.num_rows)
    return [dict(zip(names, values, strict=True)) for values in rows]


def table_events(table: Any) -> tuple[list[Event], list[str]]:
    """A group's Arrow table straight to events (``table_rows``, ``to_events``)."""
    return to_events(table_rows(table))


def replay_table(
    table: Any,
    settings: BridgeSettings,
    schema: Any,
    saved: Any | None = None,
    keep_state: bool = False,
    shared: Any | None = None,
) -> Any:
    """The body of the Arrow function: one group's table of silver rows (and
    its saved state's, incremental runs) in, its result rows out as a table
    of ``schema``. ``shared`` (:func:`shared_table`) holds the rows that
    concern many partitions: the group gets its own copy of those that
    concern it."""
    import pyarrow as pa

    from pipeline.fold import with_folded

    # The replay makes several records per event and no reference cycles
    # (frozen records, tuples): the cyclic collector would only walk the
    # group's growing heap again and again (a third of the order's cost,
    # a sixth of the whole). Reference counting frees the group as before;
    # the collector runs again after it.
    from pipeline.offsets import offset_changes

    offsets = offset_changes(table, schema)
    collecting = gc.isenabled()
    gc.disable()
    try:
        if shared is not None and table.num_rows:
            table = with_shared(table, shared)
        rows = table_rows(with_folded(table, settings.max_clock_skew_s))
        saved_rows = table_rows(saved) if saved is not None else []
        state = saved_rows[0] if saved_rows else None
        out = replay_group(rows, settings, state, keep_state) if rows or state else []
    finally:
        if collecting:
            gc.enable()
    return pa.concat_tables([pa.Table.from_pylist(out, schema=schema), offsets])


KEYS = ("cluster", "topic_key", "partition")

#: Broker sets cross into Python as text ("1,2,3"; ``_ints`` reads it): an
#: array column costs Spark's Arrow writer about 1.3 us a row even when null,
#: and six of them were three quarters of the replay job at 1 GiB of busy
#: input (38.4 s against 9.8 s as text, docs/performance.md).
SET_COLUMNS = (
    "replicas",
    "isr",
    "elr",
    "last_known_elr",
    "adding_replicas",
    "removing_replicas",
    "previous_isr",
)

#: The silver columns the converters read: only these cross into Python
#: (Arrow-to-Python conversion costs per column and row).
REPLAYED_COLUMNS = (
    *KEYS,
    "topic",
    "topic_id",
    "observer",
    "source_file",
    "line_no",
    "event_time",
    "metadata_offset",
    "seq",
    "kind",
    "leader",
    "leader_epoch",
    "partition_epoch",
    *SET_COLUMNS,
    "leader_recovery_state",
    "replica",
    "broker_epoch",
    "fenced",
    "in_controlled_shutdown",
    "fetch_offset",
    "last_fetched_epoch",
    "current_leader_epoch",
    "hwm",
    "diverging_epoch",
    "diverging_end_offset",
    "end_offset",
    "base_offset",
    "acks",
    "error_code",
    "client_id",
    "leo",
    "truncate_to",
    "controller_epoch",
    "min_isr",
    "under_min_isr",
    "log_start_offset",
    "clean_shutdown",
    "unclean_election_enabled",
    "kafka_version",
    "mode",
    "previous_leader",
    "previous_leader_epoch",
    "previous_partition_epoch",
)


def replayed_columns() -> list[Column]:
    """:data:`REPLAYED_COLUMNS` as they cross into Python."""
    return [
        F.array_join(F.col(c), ",").alias(c) if c in SET_COLUMNS else F.col(c)
        for c in REPLAYED_COLUMNS
    ]


def shared_table(shared: DataFrame) -> Any:
    """``reconstruct.shared_rows`` collected as one Arrow table for every
    partition's replay (they are few: a cluster's brokers and configs)."""
    return shared.select(*replayed_columns(), SHARED_TOPIC).toArrow()


def with_shared(table: Any, shared: Any) -> Any:
    """One partition's rows (one group: one cluster, topic key and partition)
    and its copy of the ``shared`` rows that concern it: its cluster's, and
    its topic's where the partition is known by name."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cluster = table["cluster"][0].as_py()
    mine = pc.equal(shared["cluster"], cluster)
    if table["topic"].null_count == table.num_rows:  # known by its topic id only
        concerns = pc.is_null(shared[SHARED_TOPIC])
    else:  # its topic key is then its name
        topic = table["topic_key"][0].as_py()
        concerns = pc.fill_null(pc.equal(shared[SHARED_TOPIC], topic), True)
    rows = shared.filter(pc.and_(mine, concerns)).drop_columns([SHARED_TOPIC])
    if not rows.num_rows:
        return table
    n = rows.num_rows
    for name in ("topic_key", "partition"):
        at = rows.schema.get_field_index(name)
        rows = rows.set_column(
            at, name, pa.repeat(table[name][0], n).cast(table.schema.field(name).type)
        )
    return pa.concat_tables([table, rows.select(table.column_names).cast(table.schema)])


def key_groups(batches: Iterable[Any]) -> Iterator[Any]:
    """The rows of each partition key (:data:`KEYS`) as one Arrow table, in
    turn, from record batches in which each key's rows come together.

    A key met again after another one is a broken promise of the plan
    (``replay_partitions``): it is raised, never replayed in two halves."""
    import numpy as np
    import pyarrow as pa

    pending: list[Any] = []
    current: tuple[Any, ...] | None = None
    done: set[tuple[Any, ...]] = set()

    def flush() -> Any:
        table = pa.Table.from_batches(pending)
        pending.clear()
        return table

    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        columns = [batch.column(k).to_numpy(zero_copy_only=False) for k in KEYS]
        starts = np.zeros(n, dtype=bool)
        for values in columns:
            starts[1:] |= values[1:] != values[:-1]
        bounds = [0, *np.flatnonzero(starts).tolist(), n]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if lo == hi:
                continue
            key = tuple(values[lo] for values in columns)
            if key != current:
                if current is not None:
                    done.add(current)
                    yield flush()
                if key in done:
                    raise RuntimeError(
                        f"the rows of partition {'/'.join(map(str, key))} reached the "
                        "replay apart: a partition must be replayed from all its rows at once"
                    )
                current = key
            pending.append(batch.slice(lo, hi - lo))
    if pending:
        yield flush()


def replay_partitions(
    streams: DataFrame,
    settings: BridgeSettings,
    states: DataFrame | None = None,
    shared: Any | None = None,
) -> DataFrame:
    """One ``replay_partition`` call per (cluster, topic, partition), with
    the ``shared`` rows (:func:`shared_table`) that concern it.

    With ``states`` (incremental runs) each partition continues from its
    saved state, partitions with a state and no new events included, and
    the output carries every partition's new state (table partition_state).
    """
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    # The session time zone is UTC (pipeline.session), so are the timestamps.
    arrow_schema = to_arrow_schema(BRIDGE_SCHEMA, timezone="UTC")

    streams = streams.select(*replayed_columns())
    if states is None:

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for group in key_groups(batches):
                yield from replay_table(group, settings, arrow_schema, shared=shared).to_batches()

        # Each partition's rows in one Spark partition, one after another:
        # compression's window (reconstruct.compress) leaves them so,
        # hash-partitioned and sorted by the key, and Spark then drops this
        # repartition and sort as redundant; on other input they make it so.
        # ``groupBy().applyInArrow`` did the same grouping at about 4.5 ms a
        # group (an Arrow stream of its own each way): 4.5 s of every run of
        # 1000 partitions, whatever their size (docs/performance.md).
        return streams.repartition(*KEYS).sortWithinPartitions(*KEYS).mapInArrow(run, BRIDGE_SCHEMA)

    def run_from(table: pa.Table, saved: pa.Table) -> pa.Table:
        return replay_table(table, settings, arrow_schema, saved, keep_state=True, shared=shared)

    return (
        streams.groupBy(*KEYS).cogroup(states.groupBy(*KEYS)).applyInArrow(run_from, BRIDGE_SCHEMA)
    )


def split(bridged: DataFrame, table: str) -> DataFrame:
    """The rows of one gold table, in its declared columns (``date`` added by
    the publisher)."""
    schema = BRIDGED_TABLES[table]
    return bridged.filter(F.col("table") == table).select(
        *[F.col(f.name) for f in schema.fields if f.name != "date"]
    )
