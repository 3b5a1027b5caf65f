"""Broker log4j logs (server.log, state-change.log, controller.log), kafka-formats.md section 5.

A line is ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)`` (layout
``[%d] %p %m (%c)%n``, section 5.1), maybe prefixed by a container runtime
(CRI: ``2024-05-01T10:00:00.123456789Z stdout F ``; ``docker logs -t``: the
time alone) and maybe without the brackets (Strimzi's ``%d{ISO8601} %p %m``).
The message may start with its component's prefix (logIdent, section 5.1
table): ``[Partition tp broker=N] ``, ``[Broker id=N] ``, ``[UnifiedLog
partition=tp, dir=D] ``, ``[ReplicaFetcher replicaId=N, leaderId=L,
fetcherId=F] ``, ``[QuorumController id=N] `` ...

JSON layouts (log4j2, one event per line, maybe behind a container prefix).
The message (with its logIdent prefix: Kafka puts it in the message) goes
through the same template matching; the time comes from the layout's keys.
Key names, from apache/logging-log4j2 (2.x branch):

* ``JsonLayout`` (log4j-core; keys as its Jackson mix-in writes them, and as
  ``log4j-layout-template-json/src/main/resources/JsonLayout.json`` mirrors
  them): ``instant`` ``{epochSecond, nanoOfSecond}`` (2.11+), or
  ``timeMillis`` (``includeTimeMillis="true"`` and before 2.11), ``level``,
  ``loggerName``, ``message``, ``thread``, ``endOfBatch``, ``loggerFqcn``,
  ``threadId``, ``threadPriority``. Read with ``compact="true"
  eventEol="true"``; the default pretty-printed form spreads one event over
  lines, which are ignored by rule (not read).
* ``JsonTemplateLayout`` stock templates
  (``log4j-layout-template-json/src/main/resources/``):
  ``EcsLayout.json``: ``@timestamp`` (``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'``, UTC),
  ``log.level``, ``log.logger``, ``message`` (keys with dots, not nested);
  ``GelfLayout.json``: ``short_message``, ``timestamp`` (epoch seconds with
  a fraction), ``level`` (syslog code), ``_logger``;
  ``LogstashJsonEventLayoutV1.json``: ``@timestamp`` (the timestamp
  resolver's default pattern ``yyyy-MM-dd'T'HH:mm:ss.SSSZZZ`` in the JVM's
  zone, ``JsonTemplateLayoutDefaults.getTimestampFormatPattern``), ``level``,
  ``logger_name``, ``message``.

Only ``message``/``short_message`` and the time keys are read (a minimal
``from_json`` schema, on lines that start with ``{``, carry a marker and a
message key). A JSON line that is not an object we can read (cut, bad
escapes, a time key of the wrong shape) is quarantined; one whose message is
no template we read, or that has no message key, is ignored by rule.

We read a dozen message templates (sections 5.2-5.5, 5.7 / 2.6); every other
line (other messages, stack-trace continuation lines, blanks) is ignored by
rule. Three stages like request_log.py:

1. :func:`with_cheap_columns`: the layout head (or the JSON object), the
   time, the prefix and the template, from ``startswith`` on the message
   (the template's fixed words);
2. :func:`with_parsed`: the template's regex groups, evaluated only for the
   lines of that template (one regex per template, one run per group);
3. :func:`with_verdict`: the event, or why the line is quarantined: a line
   that starts like a template we read but does not match it exactly (a
   wording we do not know: never guess).

Lines as people paste them into tickets:

* A line that is only the message (no ``[timestamp] LEVEL`` head, maybe no
  ``(logger)`` suffix, maybe no logIdent) is read as it is, with a null
  event time. Such a line also marks the file as a broker log when it is a
  whole message of a template we read.
* Re-flowed lines. An *open start* is a line that needs a look, is at most
  8 KiB, is no JSON line, starts one of our templates and does not match it.
  The pass over the bytes quarantines it and flags it; after the lines are
  numbered, its pair is looked for (``plan._reflow``). Its pair is the
  next physical line of the same file when that line is readable (valid
  UTF-8, at most 8 KiB, not blank), has no layout head, is no JSON line and
  does not need a look itself (so it cannot be an open start, or a line
  parsed on its own). The joined text is ``first + " " + next`` with the
  blanks around the break removed when the next line is indented (a space
  or tab: the break replaced a space), else ``first + next`` (a terminal's
  wrap), then ``first + " " + next``. A pair is kept when its joined text
  yields an event through the same stages (:func:`reflow_pairs`, reading
  again only the files where an open start was found). One continuation
  line at most: bounded
  and exact. A stack trace after a WARN/ERROR never completes a template,
  so it stays ignored by rule; an open start with no pair is quarantined as
  an unrecognised message, as before.
  Accounting of a kept pair: the first line is *parsed* (its event's
  evidence, event time from its head); the continuation line, which the
  pass never looks at, is also counted as *parsed*, as part of its pair
  (added to ``lines_parsed`` per file), so read =
  parsed + ignored + quarantined still holds exactly.

``isr_updated.under_min_isr`` (5.3): true for the 3.6+ ``(under-min-isr)``
marker, false for 3.6+'s empty slot (``ISR updated to 1  and version
updated to N``: two spaces, no brackets), null for older templates.

Columns are prefixed ``bl_`` and are null for lines of other file kinds.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.ingest import request_log
from pipeline.ingest.outcome import event, long_substr, unreadable_reason

KIND = "broker_log"


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
#: [..] and zkVersion updated to [..]`` (<= 2.6). Groups: 1 the ISR's "[",
#: 2 the ISR, 3 the spaces after it, 4 the under-min-isr marker, 5
#: ``zkVersion``/``version``, 6 the version's "[", 7 the version.
ISR_UPDATED = (
    r"^ISR updated to (\[?)([\d, ]*?)\]?( *)(\(under-min-isr\))?\s*"
    rf"and (zkVersion|version) updated to (\[?){_INT}\]?"
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

#: Optional container-runtime prefix: CRI ``<RFC3339Nano> <stream> <P|F> ``,
#: or ``docker logs -t``'s time alone.
_CONTAINER = (
    r"(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}) "
    r"(?:(?:stdout|stderr) [FP] )?)"
)
#: The container prefix, then ``[%d] %p `` (brackets optional).
_HEAD = (
    rf"^{_CONTAINER}?"
    r"\[?(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\]? +(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +"
)
_HEAD_WINDOW = 128
#: A JSON layout line (module docstring), maybe behind a container prefix:
#: the match ends with the object's opening brace.
_JSON_HEAD = rf"^{_CONTAINER}?\{{"
#: logIdent: ``[...] `` at the head of the message (a log dir path may be long);
#: <= 1.0 idents end ``]: `` (``[OfflinePartitionLeaderSelector]: ``).
_PREFIX = r"^\[([^\]\r\n]{1,4096})\]:? "
_PREFIX_WINDOW = 4200
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

#: The JSON layouts' keys we read (module docstring): the message, and the
#: time in each layout's own shape. Anything else in the object is not read.
_JSON_SCHEMA = (
    "message string, short_message string, "
    "instant struct<epochSecond: long, nanoOfSecond: long>, timeMillis long, "
    "`@timestamp` string, timestamp decimal(20,9), _corrupt_record string"
)
_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}
#: Epoch seconds beyond year 9999 are not dates (and would overflow micros).
_MAX_EPOCH_SECONDS = 253402300799

BAD_JSON_REASON = "unreadable JSON log line"


def _head(value: Column) -> Column:
    return F.substring(value, 1, _MARKER_WINDOW)


def has_marker(value: Column) -> Column:
    head = _head(value)
    found = F.lit(False)
    for marker in _MARKERS:
        found = found | (F.instr(head, marker) > 0)
    return found


def _json_message_keys(value: Column) -> Column:
    head = _head(value)
    return (F.instr(head, '"message"') > 0) | (F.instr(head, '"short_message"') > 0)


def _template_of(body: Column) -> Column:
    """The template whose start (and extra test) the message body has, or null."""
    template = F.lit(None).cast("string")
    for name, _, start, extra, _ in reversed(_TEMPLATES):
        test = body.startswith(start)
        if extra is not None:
            test = test & (F.instr(_head(body), extra) > 0)
        template = F.when(test, F.lit(name)).otherwise(template)
    return template


def _any_template_start() -> str:
    """One regex: the body starts one of our templates (its start, and its
    extra words within the marker window), as :func:`_template_of` decides."""
    parts = []
    for _, _, start, extra, _ in _TEMPLATES:
        part = re.escape(start)
        if extra is not None:
            part += rf"(?=.{{0,{_MARKER_WINDOW}}}?{re.escape(extra)})"
        parts.append(part)
    return "^(?:" + "|".join(parts) + ")"


def _any_template() -> str:
    """One regex: the body matches one of our templates."""
    return "^(?:" + "|".join(regex.removeprefix("^") for *_, regex in _TEMPLATES) + ")"


_ANY_START = _any_template_start()
_ANY_TEMPLATE = _any_template()
#: The message body of a pattern-layout or prefix-less line, in one regex:
#: without the layout head and without the logIdent prefix.
_PLAIN_BODY = rf"^(?:{_HEAD.removeprefix('^')})?(?:{_PREFIX.removeprefix('^')})?(.*)$"
_PLAIN_BODY_GROUP = re.compile(_PLAIN_BODY).groups


def _plain_body(value: Column) -> Column:
    """A line's message body: without its layout head and logIdent prefix
    (one regex)."""
    return F.regexp_extract(value, _PLAIN_BODY, _PLAIN_BODY_GROUP)


_HEAD_RE = re.compile(_HEAD)
_JSON_HEAD_RE = re.compile(_JSON_HEAD)
_PLAIN_BODY_RE = re.compile(_PLAIN_BODY)
_ANY_TEMPLATE_RE = re.compile(_ANY_TEMPLATE)


def marks_line(line: str) -> bool:
    """A line that says "this file is a broker log" (``sniff.classify``):
    one of the messages we read, in the log4j pattern layout, in a JSON
    layout, or a whole message of a template we read without any layout (a
    line pasted into a ticket). A request log quotes anything in a client
    id, so its ``Completed request:`` lines never count."""
    head = line[:_MARKER_WINDOW]
    if not any(m in head for m in _MARKERS) or request_log.marks_line(line):
        return False
    window = line[:_HEAD_WINDOW]
    if _HEAD_RE.search(window):
        return True
    if _JSON_HEAD_RE.search(window) and ('"message"' in head or '"short_message"' in head):
        return True
    body = _PLAIN_BODY_RE.match(line)
    return body is not None and bool(_ANY_TEMPLATE_RE.search(body.group(_PLAIN_BODY_GROUP)))


def needs_a_look(value: Column) -> Column:
    """Lines of a broker log that may be parsed or quarantined beyond the
    checks every recognised file gets; all others are ignored by rule."""
    return has_marker(value) & ~value.rlike(_CONTINUATION)


# --- re-flowed lines (a template split over two physical lines) -------------------

#: Only lines up to this length can start a re-joined pair (a template line
#: is a few hundred characters; this keeps pass 1's collection small).
_REFLOW_LINE_LIMIT = 8192
#: At most this many open starts are looked at per run (a hostile input of
#: millions of cut lines gets the first ones re-joined, the rest quarantined
#: as unrecognised, as without this rule).
REFLOW_LIMIT = 100_000


def open_start(value: Column) -> Column:
    """A line that needs a look, starts one of our templates and does not
    complete it (no JSON layout: a JSON line is whole or cut)."""
    gate = (
        needs_a_look(value)
        & ~F.substring(value, 1, _HEAD_WINDOW).rlike(_JSON_HEAD)
        & (F.octet_length(value) <= _REFLOW_LINE_LIMIT)
    )
    body = _plain_body(value)
    return F.coalesce(
        F.when(gate, body.rlike(_ANY_START) & ~body.rlike(_ANY_TEMPLATE)), F.lit(False)
    )


def _strip_end(text: Column) -> Column:
    return F.regexp_replace(text, r"[ \t]+$", "")


def _strip_start(text: Column) -> Column:
    return F.regexp_replace(text, r"^[ \t]+", "")


def reflow_pairs(starts: DataFrame, lines: DataFrame) -> DataFrame:
    """The re-joined pairs: (source_file, line_no of the first line,
    observer, line_time, joined text, events), for the open starts the pass
    found (``starts``: source_file, start, observer) and the numbered lines
    of their files (``lines``: source_file, line_no, value). The rule (module
    docstring, "Re-flowed lines") is decided here, on the pairs alone, with
    the same stages as every other broker-log line.
    """
    wanted = starts.select(
        "source_file", "start", F.explode(F.array(F.lit(0), F.lit(1))).alias("role")
    ).select("source_file", "start", "role", (F.col("start") + F.col("role")).alias("line_no"))
    found = lines.select("source_file", "line_no", "value").join(
        F.broadcast(wanted), ["source_file", "line_no"]
    )
    two = found.groupBy("source_file", "start").agg(
        F.max(F.when(F.col("role") == 0, F.col("value"))).alias("first"),
        F.max(F.when(F.col("role") == 1, F.col("value"))).alias("next"),
    )
    first, nxt = F.col("first"), F.col("next")
    may_continue = (
        nxt.isNotNull()
        & (F.octet_length(nxt) <= _REFLOW_LINE_LIMIT)
        & F.is_valid_utf8(first)
        & F.is_valid_utf8(nxt)
        & ~needs_a_look(nxt)
        & ~F.substring(nxt, 1, _HEAD_WINDOW).rlike(_HEAD)
        & ~F.substring(nxt, 1, _HEAD_WINDOW).rlike(_JSON_HEAD)
        & (_strip_start(nxt) != "")
    )
    indented = nxt.rlike(r"^[ \t]")
    spaced = F.concat(_strip_end(first), F.lit(" "), _strip_start(nxt))
    # An indented continuation replaced a space; a bare one is a terminal's
    # wrap (no character lost) or a break at a space: tried in that order.
    variants = F.when(indented, F.array(spaced)).otherwise(F.array(F.concat(first, nxt), spaced))
    candidates = (
        two.filter(may_continue)
        .join(F.broadcast(starts), ["source_file", "start"])
        .select(
            "source_file",
            F.col("start").alias("line_no"),
            "observer",
            F.posexplode(variants).alias("variant", "value"),
        )
    )
    judged = (
        candidates.transform(lambda df: with_cheap_columns(df, F.lit(True)))
        .transform(with_parsed)
        .transform(with_verdict)
    )
    # An outer generator between the stages and the filter (as in the pass,
    # plan.py): a filter is never pushed below it, so the optimizer cannot
    # inline the stages' expressions into the filter.
    verdicts = judged.select(
        "source_file",
        "line_no",
        "observer",
        "variant",
        F.explode_outer(
            F.array(
                F.struct(
                    F.col("bl_quarantine").alias("reason"),
                    F.col("bl_events").alias("events"),
                    F.col("bl_time").alias("line_time"),
                    F.col("value").alias("joined"),
                )
            )
        ).alias("v"),
    )
    has_events = F.coalesce(F.size("v.events"), F.lit(0)) > 0
    ok = verdicts.filter(F.col("v.reason").isNull() & has_events)
    best = ok.groupBy("source_file", "line_no", "observer").agg(
        F.min_by(F.col("v"), F.col("variant")).alias("v")
    )
    return best.select(
        "source_file",
        "line_no",
        "observer",
        F.col("v.line_time").alias("line_time"),
        F.col("v.joined").alias("joined"),
        F.col("v.events").alias("events"),
    ).localCheckpoint(eager=True)


# --- stage 1: string tests -----------------------------------------------------------


def _json_time(parsed: Column) -> Column:
    """The event time a JSON layout gives: JsonLayout's ``instant`` or
    ``timeMillis``, ECS/Logstash ``@timestamp`` (ISO 8601 with a zone), GELF
    ``timestamp`` (epoch seconds with a fraction)."""
    secs = parsed["instant"]["epochSecond"]
    nanos = F.coalesce(parsed["instant"]["nanoOfSecond"], F.lit(0))
    from_instant = F.when(
        secs.between(0, _MAX_EPOCH_SECONDS) & nanos.between(0, 999_999_999),
        F.timestamp_micros(secs * 1_000_000 + F.floor(nanos / 1000).cast("long")),
    )
    millis = parsed["timeMillis"]
    from_millis = F.when(millis.between(0, _MAX_EPOCH_SECONDS * 1000), F.timestamp_millis(millis))
    gelf = parsed["timestamp"]
    from_gelf = F.when(
        gelf.between(0, _MAX_EPOCH_SECONDS),
        F.timestamp_micros(F.floor(gelf * 1_000_000).cast("long")),
    )
    return F.coalesce(
        from_instant, from_millis, F.try_to_timestamp(parsed["@timestamp"]), from_gelf
    )


def with_cheap_columns(df: DataFrame, is_broker_log: Column) -> DataFrame:
    """Stage 1: the layout, the time, the prefix and the template."""
    v0 = F.col("value")
    staged = df.select(
        "*",
        F.when(is_broker_log, unreadable_reason(v0)).alias("bl_unreadable"),
    )
    readable = is_broker_log & F.col("bl_unreadable").isNull() & needs_a_look(v0)
    v = v0
    staged = staged.select("*", F.when(readable, v).alias("bl_value"))
    r = F.col("bl_value")
    head_text = F.substring(F.when(is_broker_log, v), 1, _HEAD_WINDOW)
    json_head = F.regexp_extract(F.when(r.isNotNull(), head_text), _JSON_HEAD, 0)
    staged = staged.select(
        "*",
        F.when(
            (json_head != "") & _json_message_keys(r),
            F.from_json(long_substr(r, F.length(json_head)), _JSON_SCHEMA, _JSON_OPTIONS),
        ).alias("bl_json"),
    )
    j = F.col("bl_json")
    staged = staged.select(
        "*",
        F.regexp_extract(F.when(r.isNotNull() & j.isNull(), head_text), _HEAD, 0).alias("bl_head"),
        # From the head of every line of the file, so that it dates quarantined
        # lines too; a JSON line's from its own keys.
        F.coalesce(
            F.when(j.isNotNull(), _json_time(j)),
            F.try_to_timestamp(
                F.nullif(F.regexp_extract(head_text, _HEAD, 1), F.lit("")),
                F.lit("yyyy-MM-dd HH:mm:ss,SSS"),
            ),
        ).alias("bl_time"),
    )
    head = F.col("bl_head")
    # A line without any layout (pasted into a ticket) is read as it is,
    # with no event time; a JSON line's message is its message key.
    message = (
        F.when(j.isNotNull(), F.coalesce(j["message"], j["short_message"]))
        .when(head != "", long_substr(r, F.length(head) + 1))
        .otherwise(r)
    )
    staged = staged.select("*", message.alias("bl_message"))
    m = F.col("bl_message")
    staged = staged.select(
        "*", F.regexp_extract(F.substring(m, 1, _PREFIX_WINDOW), _PREFIX, 0).alias("bl_prefix_text")
    )
    prefix_text = F.col("bl_prefix_text")
    staged = staged.select("*", F.regexp_extract(prefix_text, _PREFIX, 1).alias("bl_prefix"))
    body = F.when(prefix_text != "", long_substr(m, F.length(prefix_text) + 1)).otherwise(m)
    staged = staged.select("*", body.alias("bl_body"))
    staged = staged.select("*", _template_of(F.col("bl_body")).alias("bl_template"))
    reason = F.when(F.col("bl_unreadable").isNotNull(), F.col("bl_unreadable")).when(
        j["_corrupt_record"].isNotNull(), F.lit(BAD_JSON_REASON)
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


def _raw(i: int) -> Column:
    """Group i as extracted ("" when it did not take part)."""
    return F.get(F.col("bl_groups"), F.lit(i))


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
    # 3.6+: the marker, or the empty slot's two spaces before ``and version``
    # (no brackets anywhere); older templates have no slot: null.
    under_min_isr = F.when(_raw(4) != "", F.lit(True)).when(
        (_raw(3) == "  ") & (_raw(5) == "version") & (_raw(1) == "") & (_raw(6) == ""),
        F.lit(False),
    )
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
                isr=int_list(_raw(2)), partition_epoch=_int(7), under_min_isr=under_min_isr,
            ),
            p_partition.isNotNull() & _int(7).isNotNull() & _list_ok(int_list(_raw(2))),
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
