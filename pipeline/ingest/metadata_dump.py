"""``kafka-dump-log.sh --cluster-metadata-decoder`` output, kafka-formats.md section 2.

The tool prints (section 2.1), per dumped file, a ``Dumping <path>`` header, a
file-kind header (``Starting offset:`` / ``Log starting offset:`` /
``Snapshot end offset: N, epoch: E`` / ``KRaft bootstrap snapshot``), then one
batch line per batch (``baseOffset: ...``) and one record line per record:

* 3.0+: ``| offset: O CreateTime: TS keySize: K ... headerKeys: [...] payload: {...}``;
* 2.8: ``| offset: O isValid: ... CreateTime: TS ... headerKeys: [...] payload: {...}``;
* ``--skip-record-metadata``: `` payload: {...}`` (Scala) / ``| payload: {...}`` (Java),
  without offset or timestamp.

The payload is the envelope ``{"type":T,"version":N,"data":{...}}`` (section
2.2), or ``Error at <offset>, skipping. <message>`` when it could not be
decoded. Control records never get a payload.

``CONFIG_RECORD`` is read for ``min.insync.replicas`` only (section 2.4:
``{resourceType int8, resourceName string, name string, value string}``;
resourceType TOPIC = 2, BROKER = 4, the cluster default being BROKER with an
empty name; a null value deletes the setting). Its only version is 0
(``validVersions: "0"`` in apache/kafka
``metadata/src/main/resources/common/metadata/ConfigRecord.json``, read at
commit 135de580); every other configuration is ignored by rule.

Three stages like request_log.py (string tests, from_json per record type,
events or a quarantine reason); columns are prefixed ``md_`` and null for
lines of other kinds.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame, Window

from pipeline import sqltext as F
from pipeline.ingest.outcome import event, long_substr, unreadable_reason

KIND = "metadata_dump"

# --- record types we read (sections 2.3, 2.4) ---------------------------------

TOPIC_RECORD = "TOPIC_RECORD"
PARTITION_RECORD = "PARTITION_RECORD"
PARTITION_CHANGE_RECORD = "PARTITION_CHANGE_RECORD"
REGISTER_BROKER_RECORD = "REGISTER_BROKER_RECORD"
FENCE_BROKER_RECORD = "FENCE_BROKER_RECORD"
UNFENCE_BROKER_RECORD = "UNFENCE_BROKER_RECORD"
BROKER_REGISTRATION_CHANGE_RECORD = "BROKER_REGISTRATION_CHANGE_RECORD"
CONFIG_RECORD = "CONFIG_RECORD"

#: ConfigResource.Type (section 2.4) and the one configuration we read
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
MIN_ISR_CONFIG = "min.insync.replicas"

#: Highest record version whose shape we know (section 2.3, trunk-2024). A
#: newer version may carry a field that changes what the record means (as v2
#: added ELR), so it is quarantined rather than half-read.
KNOWN_VERSIONS: dict[str, int] = {
    TOPIC_RECORD: 0,
    PARTITION_RECORD: 2,
    PARTITION_CHANGE_RECORD: 2,
    REGISTER_BROKER_RECORD: 3,
    FENCE_BROKER_RECORD: 0,
    UNFENCE_BROKER_RECORD: 0,
    BROKER_REGISTRATION_CHANGE_RECORD: 2,
    CONFIG_RECORD: 0,
}

_CORRUPT = "_corrupt_record"
JSON_OPTIONS = {"columnNameOfCorruptRecord": _CORRUPT, "mode": "PERMISSIVE"}

#: ``data`` of each type, minimal (section 2.4). Tagged fields are absent from
#: the JSON when they hold their default, and from_json gives null for an
#: absent key, which is exactly how "unchanged" must reach the replay.
_DATA: dict[str, str] = {
    TOPIC_RECORD: "name: STRING, topicId: STRING",
    PARTITION_RECORD: (
        "partitionId: INT, topicId: STRING, replicas: ARRAY<INT>, isr: ARRAY<INT>, "
        "removingReplicas: ARRAY<INT>, addingReplicas: ARRAY<INT>, leader: INT, "
        "leaderRecoveryState: INT, leaderEpoch: INT, partitionEpoch: INT, "
        # 3.7 spelled the field LastKnownELR (JSON "lastKnownELR"), 3.8+ LastKnownElr.
        "eligibleLeaderReplicas: ARRAY<INT>, lastKnownElr: ARRAY<INT>, lastKnownELR: ARRAY<INT>"
    ),
    PARTITION_CHANGE_RECORD: (
        "partitionId: INT, topicId: STRING, isr: ARRAY<INT>, leader: INT, replicas: ARRAY<INT>, "
        "removingReplicas: ARRAY<INT>, addingReplicas: ARRAY<INT>, leaderRecoveryState: INT, "
        "eligibleLeaderReplicas: ARRAY<INT>, lastKnownElr: ARRAY<INT>, lastKnownELR: ARRAY<INT>"
    ),
    # fenced is a bool here (default true) but an int8 in the change record.
    REGISTER_BROKER_RECORD: "brokerId: INT, brokerEpoch: BIGINT, fenced: BOOLEAN",
    FENCE_BROKER_RECORD: "id: INT, epoch: BIGINT",
    UNFENCE_BROKER_RECORD: "id: INT, epoch: BIGINT",
    BROKER_REGISTRATION_CHANGE_RECORD: (
        "brokerId: INT, brokerEpoch: BIGINT, fenced: INT, inControlledShutdown: INT"
    ),
    CONFIG_RECORD: "resourceType: INT, resourceName: STRING, name: STRING, value: STRING",
}


def envelope_schema(record_type: str) -> str:
    """Section 2.2: ``{"type":..,"version":..,"data":{..}}``."""
    return f"type STRING, version INT, data STRUCT<{_DATA[record_type]}>, {_CORRUPT} STRING"


#: Spark resolves struct fields case-insensitively, so lastKnownElr and
#: lastKnownELR could not both be read by name. JSON keys are matched
#: exactly, so both are parsed, then the struct is cast (by position) to
#: this spelling.
_LAST_KNOWN_ELR_3_7 = "lastKnownElr37"


def _parse(payload: Column, record_type: str) -> Column:
    schema = envelope_schema(record_type)
    parsed = F.from_json(payload, schema, JSON_OPTIONS)
    if "lastKnownELR" in schema:
        parsed = parsed.cast(
            schema.replace("lastKnownELR:", _LAST_KNOWN_ELR_3_7 + ":").join(("STRUCT<", ">"))
        )
    return parsed


def _column(record_type: str) -> str:
    return "md_" + record_type.lower()


# --- line shapes (section 2.1) -------------------------------------------------

_PAYLOAD = "payload: "
_RECORD_OFFSET = r"^\| offset: (\d{1,19})"
_RECORD_TIMESTAMP = r"(?:CreateTime|LogAppendTime): (-?\d{1,19})"
_RECORD_TYPE = r'^\{"type":"([A-Za-z0-9_]+)"'
#: The tool's headers and batch lines: well formed, nothing to read.
_HEADER_PREFIXES = (
    "Dumping ",
    "Starting offset: ",  # <= 3.2
    "Log starting offset: ",  # 3.3+
    "Snapshot end offset: ",
    "KRaft bootstrap snapshot",
    "baseOffset: ",  # magic v2 batch line
    "offset: ",  # magic 0/1 batch line
)
#: Trailers, the tool's stderr, and stack traces: ignored by rule.
_IGNORED_LINE = (
    r"^(?:Found \d+ invalid bytes at the end of "
    r"|Non-consecutive offsets in "
    r"|\s+\d+ is followed by \d+\s*$"
    r"|\s+at "
    r"|Caused by: "
    r"|\s*\.\.\. \d+ more)"
)
#: Control records (section 2.1): printed after the record metadata, no payload.
#: After ``headerKeys: [...]``, or first on the line with --skip-record-metadata.
_CONTROL_RECORD = (
    r"(?:^\s*\|?\s*|\] )(?:controlType: |endTxnMarker: |SnapshotHeader \{|SnapshotFooter \{"
    r"|KRaftVersion \{|KRaftVoters \{|LeaderChange: )"
)
#: A record line of a dump made without a decoder: complete, but no payload.
_RECORD_WITHOUT_PAYLOAD = r"^\| offset: \d+ .*headerKeys: \[[^\]]*\]\s*$"
_SNAPSHOT_END = r"^Snapshot end offset: (\d{1,19}), epoch: "
#: timestamp_millis refuses values past year 9999; -1 is NoTimestampType.
_MAX_MILLIS = 253_402_300_799_999

UNRECOGNISED_REASON = "unrecognised line in a metadata dump"
BAD_JSON_REASON = "bad JSON in metadata payload"
NO_ENVELOPE_REASON = "metadata payload is not a record envelope"


def _is_record_line(value: Column) -> Column:
    return value.startswith("|") | value.startswith(_PAYLOAD) | value.startswith(" " + _PAYLOAD)


def _payload_at(value: Column) -> Column:
    """1-based position of the payload text, 0 when the line has none.

    ``payload: `` is the last field of a record line (section 2.1); nothing
    before it in a metadata record line can contain that text (metadata
    records have no key and no headers).
    """
    at = F.instr(value, _PAYLOAD)
    return F.when(_is_record_line(value) & (at > 0), at + len(_PAYLOAD)).otherwise(F.lit(0))


def _type_at_head(payload: Column) -> Column:
    return F.regexp_extract(F.substring(payload, 1, 64), _RECORD_TYPE, 1)


# --- file recognition and the first pass ----------------------------------------


def marks_line(line: str) -> bool:
    """A line only a metadata dump has (``sniff.classify``).

    Batch and record lines alone do not make a *metadata* dump: a data-log
    dump has them too. A metadata dump shows decoded envelopes, decode
    errors, snapshot headers, or the ``__cluster_metadata`` path in its
    ``Dumping`` header.
    """
    record = line.startswith(("|", _PAYLOAD, " " + _PAYLOAD)) and (
        _PAYLOAD + '{"type":"' in line or _PAYLOAD + "Error at " in line
    )
    return (
        record
        or line.startswith(("Snapshot end offset: ", "KRaft bootstrap snapshot"))
        or (line.startswith("Dumping ") and "__cluster_metadata" in line)
    )


def section_start(value: Column) -> Column:
    """(is_snapshot, snapshot_end_offset) for a line that starts a dumped
    file's section, else null.

    One dump output can hold several files (``--files a,b``), and only the
    records of a snapshot section get the snapshot's offset (see
    :func:`with_cheap_columns`), so sections are tracked per line range.
    """
    is_snapshot = value.startswith("Snapshot end offset: ") | value.startswith(
        "KRaft bootstrap snapshot"
    )
    starts = (
        value.startswith("Dumping ")
        | value.startswith("Starting offset: ")
        | value.startswith("Log starting offset: ")
        | is_snapshot
    )
    end_offset = F.nullif(F.regexp_extract(value, _SNAPSHOT_END, 1), F.lit("")).try_cast("long")
    return F.when(
        starts,
        F.struct(
            is_snapshot.alias("is_snapshot"),
            end_offset.alias("snapshot_end_offset"),
        ),
    )


def sections(lines: DataFrame) -> DataFrame:
    """(source_file, first_pos, next_first_pos, is_snapshot, snapshot_end_offset)
    of every section of the dump ``lines`` (a handful per file): the context
    each record line is read in. One aggregate over the dump's own lines."""
    starts = lines.select("source_file", "pos", section_start(F.col("value")).alias("s")).filter(
        F.col("s").isNotNull()
    )
    by_file = Window.partitionBy("source_file").orderBy("pos")
    return starts.select(
        "source_file",
        F.col("pos").alias("first_pos"),
        F.lead("pos").over(by_file).alias("next_first_pos"),
        F.col("s.is_snapshot").alias("is_snapshot"),
        F.col("s.snapshot_end_offset").alias("snapshot_end_offset"),
    )


def with_sections(df: DataFrame, section_table: DataFrame, is_dump: Column) -> DataFrame:
    """Attach the section (snapshot or not) each dump line belongs to.

    A broadcast join on the file with a range condition: a dump has a handful
    of sections, so each line probes a handful of rows.
    """
    s = F.broadcast(section_table.alias("md_s"))
    cond = (
        is_dump
        & (F.col("l.source_file") == F.col("md_s.source_file"))
        & (F.col("l.pos") >= F.col("md_s.first_pos"))
        & (F.col("md_s.next_first_pos").isNull() | (F.col("l.pos") < F.col("md_s.next_first_pos")))
    )
    joined = df.alias("l").join(s, cond, "left")
    return joined.select(
        "l.*",
        F.col("md_s.is_snapshot").alias("md_in_snapshot"),
        F.col("md_s.snapshot_end_offset").alias("md_snapshot_end_offset"),
    )


def needs_a_look(value: Column) -> Column:
    """Every line of a metadata dump but the tool's own headers and batch
    lines: anything unexpected in a dump is quarantined, not skipped."""
    return ~_is_header(value) & (value != "")


def _is_header(value: Column) -> Column:
    header = F.lit(False)
    for prefix in _HEADER_PREFIXES:
        header = header | value.startswith(prefix)
    return header


# --- stage 1: string tests only ---------------------------------------------------


def with_cheap_columns(df: DataFrame, is_dump: Column) -> DataFrame:
    """Stage 1: ``md_reason`` (quarantine) / ``md_candidate`` (parse), record
    offset, time and metadata_offset, from string tests alone."""
    v = F.col("value")
    staged = df.select("*", F.when(is_dump, unreadable_reason(v)).alias("md_unreadable"))
    staged = staged.select(
        "*", F.when(is_dump & F.col("md_unreadable").isNull(), v).alias("md_value")
    )
    r = F.col("md_value")
    # Offset and timestamp come from the record metadata before the payload,
    # read on every dump line (a bounded head: cheap, and it dates even a
    # quarantined line); the payload only from readable lines.
    dump_line = F.when(is_dump, v)
    staged = staged.select("*", _payload_at(dump_line).alias("md_payload_at"))
    at = F.col("md_payload_at")
    meta = F.substring(dump_line, 1, 1024)
    meta = F.when(at > 0, F.substring(dump_line, 1, F.least(at, F.lit(1024)))).otherwise(meta)
    staged = staged.select(
        "*",
        F.when(at > 0, long_substr(r, at)).alias("md_payload"),
        F.nullif(F.regexp_extract(meta, _RECORD_OFFSET, 1), F.lit(""))
        .try_cast("long")
        .alias("md_record_offset"),
        F.nullif(F.regexp_extract(meta, _RECORD_TIMESTAMP, 1), F.lit(""))
        .try_cast("long")
        .alias("md_record_ts"),
    )
    payload = F.col("md_payload")
    record_type = _type_at_head(payload)
    staged = staged.select("*", F.when(at > 0, record_type).alias("md_record_type"))
    rtype = F.col("md_record_type")

    decode_message = F.regexp_extract(payload, r"^Error at -?\d+, skipping\. ?(.*)$", 1)
    decode_message = F.substring(
        F.when(decode_message == "", payload).otherwise(decode_message), 1, 200
    )
    reason = (
        F.when(F.col("md_unreadable").isNotNull(), F.col("md_unreadable"))
        .when(r.isNull(), F.lit(None))
        .when(
            at > 0,
            F.when(
                payload.startswith("Error at "),
                F.concat(F.lit("metadata payload decode error: "), decode_message),
            )
            # Any other record type is well formed and unused: ignored by rule.
            .when(rtype != "", F.lit(None))
            .otherwise(F.lit(NO_ENVELOPE_REASON)),
        )
        .when(_is_header(r), F.lit(None))
        .when(F.trim(r) == "", F.lit(None))
        .when(r.rlike(_CONTROL_RECORD), F.lit(None))
        .when(r.rlike(_RECORD_WITHOUT_PAYLOAD), F.lit(None))
        .when(r.rlike(_IGNORED_LINE), F.lit(None))
        .otherwise(F.lit(UNRECOGNISED_REASON))
    )
    staged = staged.select("*", reason.alias("md_reason"))
    candidate = r.isNotNull() & F.col("md_reason").isNull() & rtype.isin(*KNOWN_VERSIONS)
    ts = F.col("md_record_ts")
    # Section 2.1 / DESIGN.md "Ordering": a snapshot's records carry offsets
    # internal to the snapshot, not controller offsets; all of them hold the
    # state as of the snapshot end offset N (exclusive), so they sit at N - 1
    # in controller order and keep their own order in seq (line order). The
    # replay treats a repeated PartitionRecord as a reset. A bootstrap
    # snapshot precedes the log and has no end offset: null.
    metadata_offset = F.when(
        F.col("md_in_snapshot"), F.col("md_snapshot_end_offset") - 1
    ).otherwise(F.col("md_record_offset"))
    return staged.select(
        "*",
        F.coalesce(candidate, F.lit(False)).alias("md_candidate"),
        F.when(ts.between(0, _MAX_MILLIS), F.timestamp_millis(ts)).alias("md_time"),
        F.when(r.isNotNull(), metadata_offset).alias("md_metadata_offset"),
    )


# --- stage 2: from_json --------------------------------------------------------------


def with_parsed(df: DataFrame) -> DataFrame:
    """Stage 2: one from_json column per record type, each evaluated only for
    candidate lines of that type."""
    guard = F.col("md_candidate")
    rtype = F.col("md_record_type")
    payload = F.col("md_payload")
    return df.select(
        "*",
        *[
            F.when(guard & (rtype == t), _parse(payload, t)).alias(_column(t))
            for t in KNOWN_VERSIONS
        ],
    )


# --- stage 3: events ----------------------------------------------------------------


def _has_null(values: Column) -> Column:
    return F.coalesce(F.exists(values, lambda x: x.isNull()), F.lit(False))


def _required(parsed: Column, record_type: str) -> Column:
    """The fields without which the record cannot be replayed as Kafka would."""
    d = parsed["data"]
    if record_type == TOPIC_RECORD:
        return d["name"].isNotNull() & d["topicId"].isNotNull()
    if record_type == PARTITION_RECORD:
        ok = d["partitionId"].isNotNull() & d["topicId"].isNotNull()
        for name in ("replicas", "isr", "leader", "leaderEpoch", "partitionEpoch"):
            ok = ok & d[name].isNotNull()
        return ok
    if record_type == PARTITION_CHANGE_RECORD:
        return d["partitionId"].isNotNull() & d["topicId"].isNotNull()
    if record_type in (REGISTER_BROKER_RECORD, BROKER_REGISTRATION_CHANGE_RECORD):
        return d["brokerId"].isNotNull() & d["brokerEpoch"].isNotNull()
    if record_type == CONFIG_RECORD:
        named = d["resourceType"].isNotNull() & d["resourceName"].isNotNull()
        # a min ISR we would read must be a number, and a broker's name its id
        broker_id = (
            (d["resourceType"] != RESOURCE_BROKER)
            | (d["resourceName"] == "")
            | d["resourceName"].try_cast("int").isNotNull()
        )
        number = d["value"].isNull() | d["value"].try_cast("int").isNotNull()
        return named & d["name"].isNotNull() & (~_is_min_isr(d) | (broker_id & number))
    return d["id"].isNotNull() & d["epoch"].isNotNull()


_ARRAYS = (
    "replicas",
    "isr",
    "removingReplicas",
    "addingReplicas",
    "eligibleLeaderReplicas",
    "lastKnownElr",
    _LAST_KNOWN_ELR_3_7,
)


def _valid(record_type: str, parsed: Column) -> Column:
    """Readable JSON, a version we know, the required fields, no null in a
    replica list."""
    ok = (
        parsed[_CORRUPT].isNull()
        & parsed["version"].between(0, KNOWN_VERSIONS[record_type])
        & parsed["data"].isNotNull()
        & _required(parsed, record_type)
    )
    if record_type in (PARTITION_RECORD, PARTITION_CHANGE_RECORD):
        for name in _ARRAYS:
            ok = ok & ~_has_null(parsed["data"][name])
    return F.coalesce(ok, F.lit(False))


def _last_known_elr(d: Column) -> Column:
    return F.coalesce(d["lastKnownElr"], d[_LAST_KNOWN_ELR_3_7])


def _topic_record(d: Column) -> Column:
    return event("topic_record", topic=d["name"], topic_id=d["topicId"])


def _partition_record(d: Column) -> Column:
    return event(
        "partition_record",
        topic_id=d["topicId"],
        partition=d["partitionId"],
        replicas=d["replicas"],
        isr=d["isr"],
        removing_replicas=d["removingReplicas"],
        adding_replicas=d["addingReplicas"],
        leader=d["leader"],
        leader_epoch=d["leaderEpoch"],
        partition_epoch=d["partitionEpoch"],
        # Tagged, default 0 (RECOVERED): in the JSON only when 1 (section 2.4).
        leader_recovery_state=F.coalesce(d["leaderRecoveryState"], F.lit(0)),
        elr=d["eligibleLeaderReplicas"],
        last_known_elr=_last_known_elr(d),
    )


def _partition_change(d: Column) -> Column:
    """Section 2.4/2.5: every field after topicId is tagged; absent = unchanged.
    Arrays stay null when absent and [] when present and empty."""
    return event(
        "partition_change",
        topic_id=d["topicId"],
        partition=d["partitionId"],
        # Absent leader = NO_LEADER_CHANGE (-2); -1 (NO_LEADER) is written as is.
        leader=F.coalesce(d["leader"], F.lit(-2)),
        isr=d["isr"],
        replicas=d["replicas"],
        removing_replicas=d["removingReplicas"],
        adding_replicas=d["addingReplicas"],
        # Absent = -1, no change.
        leader_recovery_state=F.coalesce(d["leaderRecoveryState"], F.lit(-1)),
        elr=d["eligibleLeaderReplicas"],
        last_known_elr=_last_known_elr(d),
    )


def _is_min_isr(d: Column) -> Column:
    """A ConfigRecord setting min ISR for a topic, a broker or the cluster."""
    return (d["name"] == MIN_ISR_CONFIG) & d["resourceType"].isin(RESOURCE_TOPIC, RESOURCE_BROKER)


def _config_record(d: Column) -> Column:
    kind, name = d["resourceType"], d["resourceName"]
    return event(
        "min_isr_config",
        topic=F.when(kind == RESOURCE_TOPIC, name),
        # BROKER with an empty name is the cluster default: both null
        replica=F.when((kind == RESOURCE_BROKER) & (name != ""), name.try_cast("int")),
        min_isr=d["value"].try_cast("int"),
    )


def _register_broker(d: Column) -> Column:
    # fenced: bool, schema default true (section 2.4).
    fenced = F.when(d["fenced"].isNull() | d["fenced"], F.lit(1)).otherwise(F.lit(0))
    return event(
        "register_broker", replica=d["brokerId"], broker_epoch=d["brokerEpoch"], fenced=fenced
    )


def _fence_broker(d: Column) -> Column:
    return event("fence_broker", replica=d["id"], broker_epoch=d["epoch"], fenced=F.lit(1))


def _unfence_broker(d: Column) -> Column:
    return event("unfence_broker", replica=d["id"], broker_epoch=d["epoch"], fenced=F.lit(-1))


def _broker_registration_change(d: Column) -> Column:
    # Tagged int8s, in the JSON only when non-zero: 1 fence, -1 unfence, 0 none.
    return event(
        "broker_registration_change",
        replica=d["brokerId"],
        broker_epoch=d["brokerEpoch"],
        fenced=F.coalesce(d["fenced"], F.lit(0)),
        in_controlled_shutdown=F.coalesce(d["inControlledShutdown"], F.lit(0)),
    )


_BUILDERS: dict[str, Callable[[Column], Column]] = {
    TOPIC_RECORD: _topic_record,
    PARTITION_RECORD: _partition_record,
    PARTITION_CHANGE_RECORD: _partition_change,
    REGISTER_BROKER_RECORD: _register_broker,
    FENCE_BROKER_RECORD: _fence_broker,
    UNFENCE_BROKER_RECORD: _unfence_broker,
    BROKER_REGISTRATION_CHANGE_RECORD: _broker_registration_change,
    CONFIG_RECORD: _config_record,
}


def with_verdict(df: DataFrame) -> DataFrame:
    """Stage 3: ``md_events`` (one event per record we read) and
    ``md_quarantine`` (why the line is quarantined, else null)."""
    rtype = F.col("md_record_type")
    events: Column | None = None
    quarantine = F.when(F.col("md_reason").isNotNull(), F.col("md_reason")).when(
        ~F.col("md_candidate"), F.lit(None)
    )
    for t, build in _BUILDERS.items():
        parsed = F.col(_column(t))
        one = F.array(build(parsed["data"]))
        if t == CONFIG_RECORD:
            # every other configuration is well formed and unused: no event
            one = F.when(_is_min_isr(parsed["data"]), one)
        events = F.when(rtype == t, one) if events is None else events.when(rtype == t, one)
        quarantine = quarantine.when(
            (rtype == t) & parsed[_CORRUPT].isNotNull(), F.lit(BAD_JSON_REASON)
        ).when((rtype == t) & ~_valid(t, parsed), F.lit(f"unknown {t} shape"))
    return df.select(
        "*",
        F.when(F.col("md_candidate"), events).alias("md_events"),
        quarantine.alias("md_quarantine"),
    )
