"""Broker log4j logs (server.log, state-change.log, controller.log), kafka-formats.md section 5.

A line is ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)`` (layout
``[%d] %p %m (%c)%n``, section 5.1), maybe prefixed by a container runtime
(CRI: ``2024-05-01T10:00:00.123456789Z stdout F ``; ``docker logs -t``: the
time alone) and maybe without the brackets (Strimzi's ``%d{ISO8601} %p %m``).
The message may start with its component's prefix (logIdent, section 5.1
table): ``[Partition tp broker=N] ``, ``[Broker id=N] ``, ``[UnifiedLog
partition=tp, dir=D] ``, ``[ReplicaFetcher replicaId=N, leaderId=L,
fetcherId=F] ``, ``[QuorumController id=N] `` ...

We read a dozen message templates (sections 5.2-5.5, 5.7 / 2.6); every other
line (other messages, stack-trace continuation lines, blanks) is ignored by
rule. Three stages like request_log.py, all string tests and
``regexp_extract`` (no JSON here):

1. :func:`with_cheap_columns`: the layout head, the time, the prefix and the
   template, from ``startswith`` on the message (the template's fixed words);
2. :func:`with_parsed`: the template's regex groups, evaluated only for the
   lines of that template (one regex per template, one run per group);
3. :func:`with_verdict`: the event, or why the line is quarantined: a line
   that starts like a template we read but does not match it exactly (a
   wording we do not know: never guess), or that has no timestamp.

Columns are prefixed ``bl_`` and are null for lines of other file kinds.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.ingest import request_log
from pipeline.ingest.outcome import event, long_substr, unreadable_reason

KIND = "broker_log"

NO_TIMESTAMP_REASON = "broker log line without a timestamp"


def malformed_reason(template: Column) -> Column:
    """``unrecognised <event kind> message``: the line starts like a message
    we read but does not match its template exactly."""
    kind = F.lit(None).cast("string")
    for name, event_kind, _, _, _ in reversed(_TEMPLATES):
        kind = F.when(template == name, F.lit(event_kind)).otherwise(kind)
    return F.format_string("unrecognised %s message", kind)


#: A marker must start within this many characters of the line (container
#: prefix ~45 + timestamp 26 + level + logIdent with a 249-character topic or
#: a log dir path): keeps the per-line cost of the first pass flat.
_MARKER_WINDOW = 1024

# --- templates ------------------------------------------------------------------
# (template, what the message (after its prefix) starts with, the regex).
# Topic names are [a-zA-Z0-9._-]: no space, and the partition is after the
# last '-' (``(\S+)-(\d+)`` backtracks to it). Group 0 (the match) is kept
# at index 0 of the groups array: non-empty exactly when the line matches.

_TP = r"(\S+)-(\d+)"
_INT = r"(-?\d{1,19})"
#: Comma lists: ``[1,2,3]`` (5.5), ``1,2,3`` (5.3); spaces tolerated.
_LIST = r"([\d, ]*)"

#: 5.5 leader, all three generations: 2.8-3.2 ``with high watermark H ISR
#: [..] addingReplicas [..]``; 3.3+ ``with topic id T ... with partition epoch
#: P, high watermark H, ISR [..], adding replicas [..]`` (3.5/3.6+ add the
#: under-min-isr slot and the previous leader after that: not read). The
#: brackets are optional: the 2.5-era line printed the ISR bare.
LEADER = (
    rf"^Leader {_TP} (?:with topic id (\S+) )?starts at leader epoch {_INT} from offset {_INT} "
    rf"with (?:partition epoch {_INT}, )?high watermark {_INT},? ISR \[?{_LIST}\]?,? "
    r"(?:adding replicas|addingReplicas)"
)
#: 5.5 follower: 2.8-3.2 ``with high watermark H.``; 3.3+ ``with partition
#: epoch P and high watermark H. Current leader is L.``
FOLLOWER = (
    rf"^Follower {_TP} starts at leader epoch {_INT} from offset {_INT} "
    rf"with (?:partition epoch {_INT} and )?high watermark {_INT}\.(?: Current leader is {_INT}\.)?"
)
#: 5.2 UnifiedLog/Log truncateTo (the partition is in the prefix).
TRUNCATE_LOG = rf"^Truncating to offset {_INT}\b"
#: 5.2 fetcher, 3.1+: epoch-based truncation.
TRUNCATE_EPOCH = (
    rf"^Truncating partition {_TP} with TruncationState\(offset={_INT}, completed=(?:true|false)\) "
    rf"due to leader epoch and offset EpochEndOffset\(errorCode={_INT}, partition={_INT}, "
    rf"leaderEpoch={_INT}, endOffset={_INT}\)"
)
#: 5.2 fetcher, HWM truncation: 2.8/3.0 ``to local high watermark H``; 3.1+
#: ``with TruncationState(offset=N, ...) due to local high watermark H``.
TRUNCATE_HWM = (
    rf"^Truncating partition {_TP} (?:with TruncationState\(offset={_INT}, "
    rf"completed=(?:true|false)\) due to|to) local high watermark {_INT}"
)
#: 5.2 WARN ``Truncating tp to offset N below high watermark H``.
TRUNCATE_BELOW_HWM = rf"^Truncating {_TP} to offset {_INT} below high watermark {_INT}"
#: 5.3 shrink (2.7 -> trunk).
SHRINK = (
    rf"^Shrinking ISR from {_LIST} to {_LIST}\. "
    rf"Leader: \(highWatermark: {_INT}, endOffset: {_INT}\)"
)
#: 5.3 expand (<= 2.7 only).
EXPAND = rf"^Expanding ISR from {_LIST} to {_LIST}"
#: 5.3 confirmation, every version in the table: ``[{zkVersion}]`` (2.8-3.0),
#: ``{zkVersion}`` (3.1-3.2), ``{partitionEpoch}`` (3.3+), the
#: ``(under-min-isr)`` slot (3.6+, two spaces when empty), ``ISR updated to
#: [..] and zkVersion updated to [..]`` (<= 2.6).
ISR_UPDATED = (
    r"^ISR updated to \[?([\d, ]*?)\]?\s*(?:\(under-min-isr\)\s*)?"
    rf"and (?:zkVersion|version) updated to \[?{_INT}\]?"
)
#: 5.2 WARN: LogOffsetMetadata prints ``(offset=N, segment=[b:p])`` (3.x) or
#: ``(offset=N segment=[b:p])`` (2.8).
HWM_REGRESSION = (
    rf"^Non-monotonic update of high watermark from [A-Za-z]*\(offset={_INT}[^)]*\) to {_INT}"
)
#: 5.4.
LOG_LOADED = rf"^Log loaded for partition {_TP} with initial high watermark {_INT}"
#: 5.5 unclean recovery (3.2+).
RECOVERING = (
    rf"^The topic partition {_TP} was marked as RECOVERING\. "
    r"Marking the topic partition as RECOVERED\."
)
#: 2.6 ``UNCLEAN partition change for <topic>-<p> with topic ID <id>: <diff>``.
UNCLEAN_CHANGE = rf"^UNCLEAN partition change for {_TP} with topic ID ([A-Za-z0-9_-]{{22}}): (.*)$"
#: 2.6 PartitionChangeBuilder (3.6+ INFO; 3.2-3.5 DEBUG).
UNCLEAN_ELECTION = (
    r"^Setting new leader for topicId ([A-Za-z0-9_-]{22}), partition (\d+) "
    rf"to {_INT} using an unclean election"
)

#: Sub-templates: (name, event kind, message start, extra test, regex).
#: 5.6 ZK controller (1.1-3.9, state.change.logger, prefix ``[Controller id=N
#: epoch=E] ``): ``Changed partition <tp> from <State> to <State> with state
#: LeaderAndIsr(...)``; ``LeaderAndIsr.toString`` 3.2+ ``(leader=L,
#: leaderEpoch=E, isr=List(..), leaderRecoveryState=S, partitionEpoch=P)``,
#: 2.8-3.1 ``(leader=L, leaderEpoch=E, isr=List(..), zkVersion=Z)``. The
#: partition is ``topic-p`` (TopicPartition) or ``[topic,p]`` (older
#: TopicAndPartition).
_ZK_TP = r"(?:\[([^,\]\s]+),(\d+)\]|(\S+)-(\d+))"
LEADER_AND_ISR = (
    rf"^Changed partition {_ZK_TP} from (\w+) to (\w+) with state LeaderAndIsr\("
    rf"leader={_INT}, leaderEpoch={_INT}, isr=List\({_LIST}\), "
    rf"(?:leaderRecoveryState=(RECOVERING|RECOVERED), partitionEpoch={_INT}|zkVersion={_INT})\)"
)
#: 5.6 <= 1.0 OfflinePartitionLeaderSelector WARN (logIdent
#: ``[OfflinePartitionLeaderSelector]: ``).
ZK_UNCLEAN = (
    rf"^No broker in ISR is alive for {_ZK_TP}\. Elect leader {_INT} from live brokers "
    rf"{_LIST}\. There's potential data loss\."
)

#: Sub-templates: (name, event kind, message start, extra test, regex).
#: The first whose start (and extra test) holds decides the line's template.
_TEMPLATES: tuple[tuple[str, str, str, str | None, str], ...] = (
    ("leader", "become_leader", "Leader ", " starts at leader epoch ", LEADER),
    ("follower", "become_follower", "Follower ", " starts at leader epoch ", FOLLOWER),
    ("truncate_log", "truncation", "Truncating to offset ", None, TRUNCATE_LOG),
    ("truncate_epoch", "truncation", "Truncating partition ", " due to leader epoch ",
     TRUNCATE_EPOCH),
    ("truncate_hwm", "truncation", "Truncating partition ", " local high watermark ",
     TRUNCATE_HWM),
    ("truncate_below_hwm", "truncation", "Truncating ", " below high watermark ",
     TRUNCATE_BELOW_HWM),
    ("shrink", "isr_shrink", "Shrinking ISR from ", None, SHRINK),
    ("expand", "isr_expand", "Expanding ISR from ", None, EXPAND),
    ("isr_updated", "isr_updated", "ISR updated to ", None, ISR_UPDATED),
    ("hwm_regression", "hwm_regression_warning", "Non-monotonic update of high watermark ",
     None, HWM_REGRESSION),
    ("log_loaded", "log_loaded", "Log loaded for partition ", None, LOG_LOADED),
    ("recovering", "recovering", "The topic partition ", " was marked as RECOVERING",
     RECOVERING),
    ("unclean_change", "unclean_partition_change", "UNCLEAN partition change for ", None,
     UNCLEAN_CHANGE),
    ("unclean_election", "unclean_partition_change", "Setting new leader for topicId ",
     " using an unclean election", UNCLEAN_ELECTION),
    ("leader_and_isr", "leader_and_isr", "Changed partition ", " with state LeaderAndIsr(",
     LEADER_AND_ISR),
    ("zk_unclean", "zk_unclean_election", "No broker in ISR is alive for ", None, ZK_UNCLEAN),
)  # fmt: skip

#: What marks a line worth a look: each template's fixed words. Messages we
#: do not read (``Truncating to N has no effect ...``, clean elections, DEBUG
#: ``partition change for``) may carry one too: their template test fails and
#: they are ignored by rule.
_MARKERS: tuple[str, ...] = (
    " starts at leader epoch ",
    "Truncating ",
    "Shrinking ISR from ",
    "Expanding ISR from ",
    "ISR updated to ",
    "Non-monotonic update of high watermark ",
    "Log loaded for partition ",
    " was marked as RECOVERING",
    "UNCLEAN partition change for ",
    " using an unclean election",
    " with state LeaderAndIsr(",
    "No broker in ISR is alive for ",
)

# --- the layout (5.1) --------------------------------------------------------------

#: Optional container-runtime prefix (CRI ``<RFC3339Nano> <stream> <P|F> ``,
#: or ``docker logs -t``'s time alone), then ``[%d] %p `` (brackets optional).
_HEAD = (
    r"^(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}) "
    r"(?:(?:stdout|stderr) [FP] )?)?"
    r"\[?(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\]? +(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +"
)
_HEAD_WINDOW = 128
#: logIdent: ``[...] `` at the head of the message (a log dir path may be long);
#: <= 1.0 idents end ``]: `` (``[OfflinePartitionLeaderSelector]: ``).
_PREFIX = r"^\[([^\]\r\n]{1,4096})\]:? "
#: The broker a prefix names (5.1 table): Partition/ReplicaManager
#: ``broker=N``, state-change ``Broker id=N``, fetcher ``replicaId=N``.
_PREFIX_BROKER = r"(?:\bbroker=|^Broker id=|\breplicaId=)(\d{1,10})\b"
#: 5.6 ZK controller prefix: ``Controller id=N epoch=E``.
_PREFIX_CONTROLLER_EPOCH = r"^Controller id=\d{1,10} epoch=(\d{1,10})$"
#: The partition a prefix names: ``Partition tp broker=N``, ``UnifiedLog
#: partition=tp, dir=D`` (``Log partition=`` <= 3.0).
_PREFIX_TP = r"^(?:Partition |(?:Unified)?Log partition=)(\S+?)-(\d+)(?: broker=|, dir=)"
#: Stack-trace continuation lines: ignored by rule (5.1: a stack trace
#: follows a message on its own lines).
_CONTINUATION = r"^(?:\s|Caused by: |\.\.\. \d+ more)"


def _head(value: Column) -> Column:
    return F.substring(value, 1, _MARKER_WINDOW)


def has_marker(value: Column) -> Column:
    head = _head(value)
    found = F.lit(False)
    for marker in _MARKERS:
        found = found | (F.instr(head, marker) > 0)
    return found


def marks_file(value: Column) -> Column:
    """True for a line that says "this file is a broker log": one of the
    messages we read, in the log4j layout (a request log quotes anything in
    a client id, so its ``Completed request:`` lines never count)."""
    return (
        has_marker(value)
        & F.substring(value, 1, _HEAD_WINDOW).rlike(_HEAD)
        & ~request_log.marks_file(value)
    )


def needs_a_look(value: Column) -> Column:
    """Lines of a broker log that may be parsed or quarantined beyond the
    checks every recognised file gets; all others are ignored by rule."""
    return has_marker(value) & ~value.rlike(_CONTINUATION)


# --- stage 1: string tests -----------------------------------------------------------


def with_cheap_columns(df: DataFrame, is_broker_log: Column) -> DataFrame:
    v = F.col("value")
    staged = df.select(
        "*",
        F.when(is_broker_log, unreadable_reason(v)).alias("bl_unreadable"),
    )
    readable = is_broker_log & F.col("bl_unreadable").isNull() & needs_a_look(v)
    staged = staged.select("*", F.when(readable, v).alias("bl_value"))
    r = F.col("bl_value")
    head_text = F.substring(F.when(is_broker_log, v), 1, _HEAD_WINDOW)
    staged = staged.select(
        "*",
        F.regexp_extract(F.when(r.isNotNull(), head_text), _HEAD, 0).alias("bl_head"),
        # From the head of every line of the file, so that it dates quarantined lines too.
        F.try_to_timestamp(
            F.nullif(F.regexp_extract(head_text, _HEAD, 1), F.lit("")),
            F.lit("yyyy-MM-dd HH:mm:ss,SSS"),
        ).alias("bl_time"),
    )
    head = F.col("bl_head")
    # A line without the layout is read as it is (a re-flowed line): its
    # template, if any, is then quarantined for want of a timestamp.
    message = F.when(head != "", long_substr(r, F.length(head) + 1)).otherwise(r)
    staged = staged.select("*", message.alias("bl_message"))
    m = F.col("bl_message")
    staged = staged.select(
        "*", F.regexp_extract(F.substring(m, 1, 4200), _PREFIX, 0).alias("bl_prefix_text")
    )
    prefix_text = F.col("bl_prefix_text")
    staged = staged.select("*", F.regexp_extract(prefix_text, _PREFIX, 1).alias("bl_prefix"))
    body = F.when(prefix_text != "", long_substr(m, F.length(prefix_text) + 1)).otherwise(m)
    staged = staged.select("*", body.alias("bl_body"))
    b = F.col("bl_body")
    template = F.lit(None).cast("string")
    for name, _, start, extra, _ in reversed(_TEMPLATES):
        test = b.startswith(start)
        if extra is not None:
            test = test & (F.instr(_head(b), extra) > 0)
        template = F.when(test, F.lit(name)).otherwise(template)
    staged = staged.select("*", template.alias("bl_template"))
    reason = F.when(F.col("bl_unreadable").isNotNull(), F.col("bl_unreadable")).when(
        F.col("bl_template").isNotNull() & (head == ""), F.lit(NO_TIMESTAMP_REASON)
    )
    staged = staged.select("*", reason.alias("bl_reason"))
    candidate = F.col("bl_template").isNotNull() & F.col("bl_reason").isNull()
    return staged.select("*", F.coalesce(candidate, F.lit(False)).alias("bl_candidate"))


# --- stage 2: regex groups -----------------------------------------------------------


def _groups(body: Column, regex: str) -> Column:
    count = re.compile(regex).groups
    return F.array(*[F.regexp_extract(body, regex, i) for i in range(count + 1)])


def with_parsed(df: DataFrame) -> DataFrame:
    """Stage 2: ``bl_groups`` = [match, group 1, ...] of the line's template
    regex ("" for a group that did not take part), evaluated only for
    candidate lines (CASE WHEN evaluates the chosen branch only)."""
    t, b = F.col("bl_template"), F.col("bl_body")
    groups = F.lit(None).cast("array<string>")
    for name, _, _, _, regex in reversed(_TEMPLATES):
        groups = F.when(t == name, _groups(b, regex)).otherwise(groups)
    p = F.col("bl_prefix")
    return df.select(
        "*",
        F.when(F.col("bl_candidate"), groups).alias("bl_groups"),
        F.when(F.col("bl_candidate") & (p != ""), F.regexp_extract(p, _PREFIX_BROKER, 1)).alias(
            "bl_prefix_broker"
        ),
        F.when(F.col("bl_candidate") & (p != ""), F.regexp_extract(p, _PREFIX_TP, 1)).alias(
            "bl_prefix_topic"
        ),
        F.when(F.col("bl_candidate") & (p != ""), F.regexp_extract(p, _PREFIX_TP, 2)).alias(
            "bl_prefix_partition"
        ),
        F.when(
            F.col("bl_candidate") & (p != ""), F.regexp_extract(p, _PREFIX_CONTROLLER_EPOCH, 1)
        ).alias("bl_prefix_controller_epoch"),
    )


# --- stage 3: events -----------------------------------------------------------------


def _g(i: int) -> Column:
    return F.nullif(F.get(F.col("bl_groups"), F.lit(i)), F.lit(""))


def _int(i: int) -> Column:
    return _g(i).try_cast("int")


def _long(i: int) -> Column:
    return _g(i).try_cast("long")


def int_list(text: Column) -> Column:
    """``1,2,3`` / ``[1, 2]`` / ``""`` -> array<int>; a null element means a
    value we could not read (the caller quarantines)."""
    cleaned = F.regexp_replace(text, r"[\s\[\]]", "")
    return F.transform(
        F.filter(F.split(cleaned, ","), lambda x: x != ""), lambda x: x.try_cast("int")
    )


def _topic_id(text: Column) -> Column:
    """3.3+ leader line: ``Some(<uuid>)`` or ``None`` (Option[Uuid])."""
    return F.nullif(F.regexp_extract(text, r"^(?:Some\()?([A-Za-z0-9_-]{22})\)?$", 1), F.lit(""))


def _diff_new(diff: Column, field: str, value: str) -> Column:
    """The new value of ``field: old -> new`` in a 2.6 partition-change diff."""
    return F.nullif(F.regexp_extract(diff, rf"(?:^|, ){field}: {value} -> {value}", 2), F.lit(""))


def _list_ok(values: Column) -> Column:
    """No element we could not read (``event`` drops nulls from lists, so the
    check runs on the list before it)."""
    return ~F.coalesce(F.exists(values, lambda x: x.isNull()), F.lit(False))


def _events() -> tuple[Column, Column]:
    """(events, required) per template: the line's single event, and the test
    that every value the template must give was read."""
    observer = F.col("observer")
    named = F.nullif(F.col("bl_prefix_broker"), F.lit("")).try_cast("int")
    replica = F.coalesce(named, observer)
    p_topic = F.nullif(F.col("bl_prefix_topic"), F.lit(""))
    p_partition = F.nullif(F.col("bl_prefix_partition"), F.lit("")).try_cast("int")
    t = F.col("bl_template")
    controller_epoch = F.nullif(F.col("bl_prefix_controller_epoch"), F.lit("")).try_cast("int")

    diff = _g(4)
    recovery = _diff_new(diff, "leaderRecoveryState", r"([A-Z]+)")
    by_template: dict[str, tuple[Column, Column]] = {
        "leader": (
            event(
                "become_leader", topic=_g(1), partition=_int(2), topic_id=_topic_id(_g(3)),
                replica=replica, leader=replica, leader_epoch=_int(4), leo=_long(5),
                partition_epoch=_int(6), hwm=_long(7), isr=int_list(_g(8)),
            ),
            _int(2).isNotNull() & _int(4).isNotNull() & _long(5).isNotNull()
            & _long(7).isNotNull() & replica.isNotNull() & _list_ok(int_list(_g(8))),
        ),
        "follower": (
            event(
                "become_follower", topic=_g(1), partition=_int(2), replica=replica,
                leader_epoch=_int(3), leo=_long(4), partition_epoch=_int(5), hwm=_long(6),
                leader=_int(7),
            ),
            _int(2).isNotNull() & _int(3).isNotNull() & _long(4).isNotNull()
            & _long(6).isNotNull(),
        ),
        "truncate_log": (
            event("truncation", topic=p_topic, partition=p_partition, replica=replica,
                  truncate_to=_long(1)),
            p_partition.isNotNull() & _long(1).isNotNull(),
        ),
        "truncate_epoch": (
            event(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=_long(3), diverging_epoch=_int(6), diverging_end_offset=_long(7),
            ),
            _int(2).isNotNull() & _long(3).isNotNull() & _int(6).isNotNull()
            & _long(7).isNotNull(),
        ),
        "truncate_hwm": (
            event(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=F.coalesce(_long(3), _long(4)), hwm=_long(4),
            ),
            _int(2).isNotNull() & _long(4).isNotNull(),
        ),
        "truncate_below_hwm": (
            event(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=_long(3), hwm=_long(4),
            ),
            _int(2).isNotNull() & _long(3).isNotNull() & _long(4).isNotNull(),
        ),
        "shrink": (
            event(
                "isr_shrink", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(F.get(F.col("bl_groups"), F.lit(2))), hwm=_long(3), leo=_long(4),
            ),
            p_partition.isNotNull() & _long(3).isNotNull() & _long(4).isNotNull()
            & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(2)))),
        ),
        "expand": (
            event(
                "isr_expand", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(F.get(F.col("bl_groups"), F.lit(2))),
            ),
            p_partition.isNotNull() & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(2)))),
        ),
        "isr_updated": (
            event(
                "isr_updated", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(F.get(F.col("bl_groups"), F.lit(1))), partition_epoch=_int(2),
            ),
            p_partition.isNotNull() & _int(2).isNotNull()
            & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(1)))),
        ),
        "hwm_regression": (
            event(
                "hwm_regression_warning", topic=p_topic, partition=p_partition,
                replica=replica, previous_hwm=_long(1), hwm=_long(2),
            ),
            p_partition.isNotNull() & _long(1).isNotNull() & _long(2).isNotNull(),
        ),
        "log_loaded": (
            event("log_loaded", topic=_g(1), partition=_int(2), replica=replica, hwm=_long(3)),
            _int(2).isNotNull() & _long(3).isNotNull(),
        ),
        "recovering": (
            event("recovering", topic=_g(1), partition=_int(2), replica=replica, leader=replica),
            _int(2).isNotNull(),
        ),
        "unclean_change": (
            event(
                "unclean_partition_change", topic=_g(1), partition=_int(2), topic_id=_g(3),
                leader=_diff_new(diff, "leader", r"(-?\d+)").try_cast("int"),
                leader_epoch=_diff_new(diff, "leaderEpoch", r"(-?\d+)").try_cast("int"),
                partition_epoch=_diff_new(diff, "partitionEpoch", r"(-?\d+)").try_cast("int"),
                isr=int_list(_diff_new(diff, "isr", r"(\[[\d, ]*\])")),
                leader_recovery_state=F.when(recovery == "RECOVERED", F.lit(0)).when(
                    recovery == "RECOVERING", F.lit(1)
                ),
            ),
            _int(2).isNotNull() & _list_ok(int_list(_diff_new(diff, "isr", r"(\[[\d, ]*\])"))),
        ),
        "unclean_election": (
            event(
                "unclean_partition_change", topic_id=_g(1), partition=_int(2), leader=_int(3)
            ),
            _int(2).isNotNull() & _int(3).isNotNull(),
        ),
        "leader_and_isr": (
            event(
                "leader_and_isr", topic=F.coalesce(_g(1), _g(3)),
                partition=F.coalesce(_int(2), _int(4)), leader=_int(7), leader_epoch=_int(8),
                isr=int_list(F.get(F.col("bl_groups"), F.lit(9))),
                partition_epoch=F.coalesce(_int(11), _int(12)),
                leader_recovery_state=F.when(_g(10) == "RECOVERED", F.lit(0)).when(
                    _g(10) == "RECOVERING", F.lit(1)
                ),
                controller_epoch=controller_epoch,
            ),
            F.coalesce(_int(2), _int(4)).isNotNull() & _int(7).isNotNull()
            & _int(8).isNotNull() & F.coalesce(_int(11), _int(12)).isNotNull()
            & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(9)))),
        ),
        "zk_unclean": (
            event(
                "zk_unclean_election", topic=F.coalesce(_g(1), _g(3)),
                partition=F.coalesce(_int(2), _int(4)), leader=_int(5),
            ),
            F.coalesce(_int(2), _int(4)).isNotNull() & _int(5).isNotNull(),
        ),
    }  # fmt: skip
    events: Column | None = None
    required: Column | None = None
    for name, (ev, req) in by_template.items():
        events = (
            F.when(t == name, F.array(ev))
            if events is None
            else events.when(t == name, F.array(ev))
        )
        required = F.when(t == name, req) if required is None else required.when(t == name, req)
    assert events is not None and required is not None
    return events, required


def with_verdict(df: DataFrame) -> DataFrame:
    """Stage 3: ``bl_events`` (the line's event) and ``bl_quarantine``."""
    events, required = _events()
    c = F.col("bl_candidate")
    staged = df.select(
        "*", F.when(c, events).alias("bl_events"), F.when(c, required).alias("bl_ok")
    )
    matched = F.coalesce(F.get(F.col("bl_groups"), F.lit(0)), F.lit("")) != ""
    ok = matched & F.coalesce(F.col("bl_ok"), F.lit(False))
    quarantine = (
        F.when(F.col("bl_reason").isNotNull(), F.col("bl_reason"))
        .when(~c, F.lit(None))
        .when(~ok, malformed_reason(F.col("bl_template")))
    )
    return staged.select("*", quarantine.alias("bl_quarantine"))
