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

We read the message templates of sections 5.2-5.5, 5.7 / 2.6, and those of
formats-addendum.md:

* 9, before 2.8 (0.8.2-2.7, each version's value printing, 9.0.2): the ZK
  controller's ``sending become-leader LeaderAndIsr request`` (one per
  decision: a ``become-follower`` line repeats it to a follower and is
  ignored) and the broker's ``received LeaderAndIsr request`` ->
  ``leader_and_isr`` (as the request log's: partition_epoch = zkVersion when
  printed, controller_epoch = the line's); ``Partition [t,p] on broker N:
  Shrinking/Expanding ISR ...`` -> ``isr_shrink`` / ``isr_expand`` (no HWM
  or LEO before 2.2); makeLeader's ``t-p starts at Leader Epoch E from offset
  O`` (0.11-2.3) and ``... with high watermark H`` (2.4-2.5) ->
  ``become_leader``; ``Truncating log t-p to offset N.`` -> ``truncation``;
  the fetcher's ``Halting``/``Exiting because log truncation is not
  allowed`` -> ``fetcher_halt`` (0.8.2-0.10.0 name the topic only: partition
  null) and ``reset its fetch offset`` / ``Reset fetch offset`` to the
  leader's *latest* offset -> ``offset_reset`` (the start-offset variant is
  no truncation: ignored); the controller's ``There's potential data loss.``
  -> ``zk_unclean_election``. The prefixes of those versions are read too:
  ``Partition [t,p] on broker N: ``, ``[ReplicaFetcherThread-F-L], ``.
* 10, log load and recovery: the clean-shutdown lines -> ``broker_restart``
  (clean_shutdown true/false; ``Loading logs.``, the only line 0.8.2-2.5
  print at INFO, -> null: unknown, never assumed clean), ``Recovering
  unflushed segment`` -> ``log_recovered``, ``Corruption found ...
  truncating to offset`` / ``Found invalid offset during recovery`` ->
  ``recovery_truncation``, ``Completed load of ...`` -> ``log_end_at_load``
  (also the producer-state ``till offset`` line, under a ``[LogLoader ...]``
  prefix only: after a truncation the same text is no load);
* 13, ``Kafka version:`` and the ``KafkaConfig values:`` dump's key lines
  (``\tkey = value``, read one by one; 0.8.2 ``Property key is overridden to
  value``) -> ``broker_config``, one field per line: process.roles (``[]`` ->
  mode zk, else kraft), zookeeper.connect (set -> zk; ``null`` ignored),
  inter.broker.protocol.version, unclean.leader.election.enable,
  min.insync.replicas.

Every other line (other messages, stack-trace continuation lines, blanks) is
ignored by rule, except what cannot be a log line (DESIGN "Inputs"): in a
broker log, a line with no layout head, no JSON, no logIdent and no
template, which is none of the forms a log or a ticket holds (blank or
indented, ``Caused by:``, ``... N more``, ``>`` quotes, a Java name first, a
date first, or ending with ``(logger)``), is quarantined as not a log line;
a layout line that starts a template's words but ends with no ``(logger)``
(or ``[thread]``) was cut before the words that tell the template and is
quarantined as that template's. Three stages like request_log.py:

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
  ``(logger)`` suffix, maybe no logIdent), maybe indented, ``> ``-quoted (any
  depth) or with the logger first (``kafka.cluster.Partition: ...``), is
  read as it is, in file order, with a null event time. Such a line also
  marks the file as a broker log when it is a whole message of a template
  we read.
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
from pyspark.sql.types import ArrayType

from pipeline import sqltext as F
from pipeline.ingest import request_log
from pipeline.ingest.outcome import (
    EVENT_FIELDS,
    OUTCOME_ROW,
    long_substr,
    no_rows,
    unreadable_reason,
)

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
    rf"^Shrinking ISR from {_LIST} to {_LIST}(?:\. "
    rf"Leader: \(highWatermark: {_INT}, endOffset: {_INT}\)"
    # 0.11-2.1: the ISRs alone, then the logger (or the end of a pasted line)
    r"|(?<=\d) ?(?:\([\w$.]+\)\s*)?$)"
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

# --- pre-2.8 templates (formats-addendum.md 9, values as 9.0.2 prints them) --------
# Written with named groups (``(?P<name>..)``, letters only as Java wants):
# ``_java`` turns them into Java's ``(?<name>..)`` for Spark, and the events
# read a group by name (``_n``).


#: ``[t,p]`` (TopicAndPartition <= 0.11) or ``t-p``; suffix tells the names apart.
def _tp(suffix: str) -> str:
    return (
        rf"(?:\[(?P<ot{suffix}>[^,\]\s]+),(?P<op{suffix}>\d+)\]"
        rf"|(?P<nt{suffix}>\S+)-(?P<np{suffix}>\d+))"
    )


_N = r"-?\d{1,19}"
#: 9.0.2 ``LeaderIsrAndControllerEpoch``: ``(Leader:2,ISR:2,1,LeaderEpoch:6,
#: ControllerEpoch:3)``, 2.7.2+ ``ZkVersion:`` and 3.2+ ``LeaderRecoveryState:``.
_LIACE = (
    rf"\(Leader:(?P<liLeader>{_N}),ISR:(?P<liIsr>[\d,]*),(?:LeaderRecoveryState:\w+,)?"
    rf"LeaderEpoch:(?P<liEpoch>{_N}),(?:ZkVersion:(?P<liZk>{_N}),)?"
    rf"ControllerEpoch:(?P<liCe>{_N})\)"
)
#: 9.0.2 ``PartitionStateInfo`` (0.8.2-0.9 "received"; the unbalanced
#: parentheses are Kafka's).
_PSI = rf"\(LeaderAndIsrInfo:{_LIACE},ReplicationFactor:\d+\),AllReplicas:(?P<allReplicas>[\d,]*)\)"
#: 9.0.2 ``PartitionState(...)`` 0.10-2.3 (``isr=[2, 1]`` 0.10, ``isr=2,1``
#: 0.11+, ``isNew`` 1.0+) and 2.4-2.7 ``LeaderAndIsrPartitionState(...)``.
_PSTATE = (
    r"(?:LeaderAndIsr)?PartitionState\((?:topicName='(?P<psTopic>[^']*)', "
    rf"partitionIndex=(?P<psPartition>\d+), )?controllerEpoch=(?P<psCe>{_N}), "
    rf"leader=(?P<psLeader>{_N}), leaderEpoch=(?P<psEpoch>{_N}), isr=\[?(?P<psIsr>[\d, ]*?)\]?, "
    rf"zkVersion=(?P<psZk>{_N}), replicas=\[?(?P<psReplicas>[\d, ]*?)\]?(?:, [a-zA-Z][^)]*)?\)"
)
#: 9.2 ZK controller, one line per target broker; only ``become-leader`` is
#: read (sent once per decision, to the new leader). <= 0.11 text prefix.
SENDING_OLD = (
    rf"^Controller \d+ epoch (?P<ce>\d+) sending become-leader LeaderAndIsr request {_LIACE} "
    rf"(?:with correlationId \d+ )?to broker \d+ for partition {_tp('')}"
)
#: 9.2 1.0+ (prefix ``[Controller id=N epoch=E] ``).
SENDING = (
    rf"^Sending become-leader LeaderAndIsr request {_PSTATE} to broker \d+ "
    rf"for partition (?P<t>\S+)-(?P<p>\d+)"
)
#: 9.2 the partition state machine's moves that name no leader (to
#: Offline or NonExistent; to New with its assigned replicas): 0.8.2-0.11
#: ``Controller N epoch E changed partition [t,p] state from S1 to S2``, 1.0-2.7
#: ``Changed partition t-p state from S1 to S2`` (prefix ``[Controller id=N
#: epoch=E] ``).
STATE_MOVE_OLD = (
    rf"^Controller \d+ epoch (?P<ce>\d+) changed partition {_tp('')} "
    r"state from (?P<from>\w+) to (?P<to>\w+)"
)
STATE_MOVE = rf"^Changed partition {_tp('')} state from (?P<from>\w+) to (?P<to>\w+)"
#: 9.3 broker side, <= 0.11 (``Broker N received ...``).
RECEIVED_OLD = (
    rf"^Broker \d+ received LeaderAndIsr request (?:{_PSI}|{_PSTATE}) correlation id \d+ "
    rf"from controller \d+ epoch (?P<ce>\d+) for partition {_tp('')}"
)
#: 9.3 1.0-2.3 (``for partition tp``) and 2.4-2.7 (the partition in the state).
RECEIVED = (
    rf"^Received LeaderAndIsr request {_PSTATE} correlation id \d+ from controller \d+ "
    rf"epoch (?P<ce>\d+)(?: for partition (?P<t>\S+)-(?P<p>\d+))?"
)
#: 9.4 0.8.2-0.10.2 (prefix ``Partition [t,p] on broker N: ``).
SHRINK_OLD = rf"^Shrinking ISR for partition {_tp('')} from (?P<old>[\d,]*) to (?P<new>[\d,]*)"
EXPAND_OLD = rf"^Expanding ISR for partition {_tp('')} from (?P<old>[\d,]*) to (?P<new>[\d,]*)"
#: 9.4 makeLeader 0.11-2.3 (``{o}`` the LEO when becoming leader) and 2.4-2.5.
LEADER_OLD = (
    rf"^(?P<t>\S+)-(?P<p>\d+) starts at Leader Epoch (?P<e>{_N}) from offset (?P<o>{_N})\. "
    rf"Previous Leader Epoch was: {_N}"
)
LEADER_24 = (
    rf"^(?P<t>\S+)-(?P<p>\d+) starts at leader epoch (?P<e>{_N}) from offset (?P<o>{_N}) "
    rf"with high watermark (?P<h>{_N})\. Previous leader epoch was {_N}"
)
#: 9.5 0.8.2-0.11 (no prefix; the log's name in the text).
TRUNCATE_LOG_OLD = rf"^Truncating log (?P<t>\S+)-(?P<p>\d+) to offset (?P<o>{_N})\."
#: 9.6 FATAL/ERROR, every form 0.8.2-1.1 (0.8.2-0.10.0 name the topic only).
HALT = (
    r"^(?:Halting|Exiting) because log truncation is not allowed for "
    r"(?:topic (?P<topic>[^,\s]+)|partition (?P<t>\S+)-(?P<p>\d+)), [Cc]urrent leader"
    rf"(?: (?P<l>\d+))?'s latest offset (?P<lleo>{_N}) is less than replica(?: (?P<me>\d+))?'s "
    rf"latest offset (?P<leo>{_N})"
)
#: 9.6 WARN <= 0.11.
RESET_OLD = (
    rf"^Replica (?P<me>\d+) for partition {_tp('')} reset its fetch offset from (?P<leo>{_N}) "
    rf"to current leader (?P<l>\d+)'s latest offset (?P<to>{_N})"
)
#: 9.6 WARN 1.0-2.7 (and the 2.8+ text).
RESET = (
    rf"^Reset fetch offset for partition (?P<t>\S+)-(?P<p>\d+) from (?P<leo>{_N}) to current "
    rf"leader's latest offset (?P<to>{_N})"
)

# --- log load and recovery (formats-addendum.md 10) ----------------------------------
#: 10.1 per data directory: clean (DEBUG <= 2.5; INFO 2.6-3.4 and 3.5+) or not.
RESTART_CLEAN = (
    r"^(?:Found clean shutdown file\. Skipping recovery for all logs in data directory: \S"
    r"|Skipping recovery for all logs in \S.* since clean shutdown file was found"
    r"|Skipping recovery of \d+ logs from \S.* since clean shutdown file was found)"
)
RESTART_UNCLEAN = (
    r"^(?:Attempting recovery for all logs in \S.* since no clean shutdown file was found"
    r"|Recovering \d+ logs from \S.* since no clean shutdown file was found)"
)
#: 10.1 0.8.2-2.5: the only INFO line at load, which says nothing of the shutdown.
LOADING_LOGS = r"^Loading logs\.(?:\s|$)"
#: 10.2 every form: ``in log t-p.`` (<= 0.11), the prefix alone (1.0-3.2),
#: ``. i/n recovered for t-p.`` (3.3-3.9), ``. q recovered for t-p.`` (Java).
LOG_RECOVERED = (
    r"^Recovering unflushed segment (?P<base>\d{1,19})(?: in log (?P<t>\S+)-(?P<p>\d+)\."
    r"|\. (?:\d+/\d+|\d+) recovered for (?P<t2>\S+)-(?P<p2>\d+)\.|\s|$)"
)
#: 10.2 recovery cut a log: corrupt segment (<= 0.11 names the log), invalid offset.
CORRUPTION = (
    r"^Corruption found in segment (?P<base>\d{1,19})(?: of log (?P<t>\S+)-(?P<p>\d+))?, "
    rf"truncating to offset (?P<o>{_N})"
)
INVALID_OFFSET = (
    r"^Found invalid offset during recovery(?: for log (?P<t>\S+)-(?P<p>\d+))?\. Deleting the "
    rf"corrupt segment and creating an empty one with starting offset (?P<o>{_N})"
)
#: 10.3 every form: 0.8.2-0.11 (``log t-p with ...``), 1.0-2.5 (prefix),
#: 2.6+ ``Log(dir=..., topic=t, partition=p, ..., logStartOffset=S, logEndOffset=E)``.
COMPLETED_LOAD = (
    r"^Completed load of (?:log (?P<t>\S+)-(?P<p>\d+) with (?:\d+ log segments(?: and|,) )?"
    rf"(?:log start offset (?P<lsoA>{_N}) and )?log end offset (?P<leoA>{_N})"
    rf"|log with \d+ segments, log start offset (?P<lsoB>{_N}) and log end offset (?P<leoB>{_N})"
    r"|Log\(dir=[^,]*(?:, topicId=[^,]*)?, topic=(?P<t2>[^,\s]+), partition=(?P<p2>\d+), "
    rf"highWatermark={_N}, lastStableOffset={_N}, logStartOffset=(?P<lsoC>{_N}), "
    rf"logEndOffset=(?P<leoC>{_N})\))"
)
#: 10.3 producer state rebuild; read under a ``[LogLoader ...]`` prefix only
#: (3.0+, loading): the same text follows every truncation under ``[Log ...]``
#: / ``[UnifiedLog ...]``, so there it says nothing about the load.
PRODUCER_STATE = (
    rf"^Loading producer state (?:from|till) offset (?P<o>{_N})"
    r"(?: for partition (?P<t>\S+)-(?P<p>\d+))? with message format version"
)

# --- version and config markers (formats-addendum.md 13) ---------------------------
KAFKA_VERSION = r"^Kafka version ?: (?P<v>[^\s()]+)"
#: The ``KafkaConfig values:`` keys read (13.2), one per line of the dump
#: (``\t{key} = {value}``; 0.8.2 ``Property {key} is overridden to {value}``).
CONFIG_KEYS = (
    "process.roles",
    "zookeeper.connect",
    "inter.broker.protocol.version",
    "unclean.leader.election.enable",
    "min.insync.replicas",
)
CONFIG = (
    r"^(?:Property )?(?P<key>" + "|".join(re.escape(k) for k in CONFIG_KEYS) + r")"
    r"(?: = | is overridden to )(?P<val>\S(?:.*?\S)?|)(?:\s+\([\w$.]+\))?\s*$"
)


def _java(regex: str) -> str:
    """Python named groups -> Java's (Spark's regexp_extract)."""
    return regex.replace("(?P<", "(?<")


def _anon(regex: str) -> str:
    """Without group names (templates joined in one regex repeat them)."""
    return re.sub(r"\(\?P<\w+>", "(", regex)


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
    # pre-2.8 (addendum 9)
    ("sending_old", "leader_and_isr", "Controller ", " sending become-leader LeaderAndIsr request ",
     SENDING_OLD),
    ("sending", "leader_and_isr", "Sending become-leader LeaderAndIsr request ", None, SENDING),
    ("received_old", "leader_and_isr", "Broker ", " received LeaderAndIsr request ",
     RECEIVED_OLD),
    ("received", "leader_and_isr", "Received LeaderAndIsr request ", None, RECEIVED),
    ("state_move_old", "zk_partition_offline", "Controller ", " state from ", STATE_MOVE_OLD),
    ("state_move", "zk_partition_offline", "Changed partition ", " state from ", STATE_MOVE),
    ("shrink_old", "isr_shrink", "Shrinking ISR for partition ", None, SHRINK_OLD),
    ("expand_old", "isr_expand", "Expanding ISR for partition ", None, EXPAND_OLD),
    ("leader_old", "become_leader", "", " starts at Leader Epoch ", LEADER_OLD),
    ("leader_24", "become_leader", "", " starts at leader epoch ", LEADER_24),
    ("truncate_log_old", "truncation", "Truncating log ", None, TRUNCATE_LOG_OLD),
    ("halt", "fetcher_halt", "Halting because log truncation is not allowed ", None, HALT),
    ("halt", "fetcher_halt", "Exiting because log truncation is not allowed ", None, HALT),
    ("reset_old", "offset_reset", "Replica ", "'s latest offset ", RESET_OLD),
    ("reset", "offset_reset", "Reset fetch offset for partition ",
     " to current leader's latest offset ", RESET),
    # log load and recovery (addendum 10)
    ("restart_clean", "broker_restart", "Found clean shutdown file. ", None, RESTART_CLEAN),
    ("restart_clean", "broker_restart", "Skipping recovery ",
     " since clean shutdown file was found", RESTART_CLEAN),
    ("restart_unclean", "broker_restart", "Attempting recovery for all logs in ", None,
     RESTART_UNCLEAN),
    ("log_recovered", "log_recovered", "Recovering unflushed segment ", None, LOG_RECOVERED),
    ("restart_unclean", "broker_restart", "Recovering ",
     " since no clean shutdown file was found", RESTART_UNCLEAN),
    ("loading_logs", "broker_restart", "Loading logs.", None, LOADING_LOGS),
    ("corruption", "recovery_truncation", "Corruption found in segment ", None, CORRUPTION),
    ("invalid_offset", "recovery_truncation", "Found invalid offset during recovery", None,
     INVALID_OFFSET),
    ("completed_load", "log_end_at_load", "Completed load of ", None, COMPLETED_LOAD),
    ("producer_state", "log_end_at_load", "Loading producer state ",
     " with message format version ", PRODUCER_STATE),
    # version and config markers (addendum 13)
    ("kafka_version", "broker_config", "Kafka version", None, KAFKA_VERSION),
    *(("config", "broker_config", start, None, CONFIG)
      for key in CONFIG_KEYS
      for start in (f"{key} = ", f"Property {key} is overridden to ")),
)  # fmt: skip

#: Each template once (a template may have several starts).
_UNIQUE: dict[str, tuple[str, str]] = {}
for _template in _TEMPLATES:
    _UNIQUE.setdefault(_template[0], (_template[1], _template[4]))
#: Per template, its named groups' indexes.
_GROUP_INDEX: dict[str, dict[str, int]] = {
    name: dict(re.compile(regex).groupindex) for name, (_, regex) in _UNIQUE.items()
}

#: What marks a line worth a look: each template's fixed words. Messages we
#: do not read (``Truncating to N has no effect ...``, clean elections, DEBUG
#: ``partition change for``) may carry one too: their template test fails and
#: they are ignored by rule.
_MARKERS: tuple[str, ...] = (
    " starts at leader epoch ",
    "Truncating ",
    "Shrinking ISR ",
    "Expanding ISR ",
    "ISR updated to ",
    "Non-monotonic update of high watermark ",
    "Log loaded for partition ",
    " was marked as RECOVERING",
    "UNCLEAN partition change for ",
    " using an unclean election",
    " with state LeaderAndIsr(",
    "No broker in ISR is alive for ",
    " LeaderAndIsr request ",
    " state from ",
    " starts at Leader Epoch ",
    "log truncation is not allowed",
    "reset its fetch offset",
    "Reset fetch offset for partition ",
    "Found clean shutdown file",
    " since clean shutdown file was found",
    " since no clean shutdown file was found",
    "Loading logs.",
    "Recovering unflushed segment ",
    "Corruption found in segment ",
    "Found invalid offset during recovery",
    "Completed load of ",
    "Loading producer state ",
    "Kafka version",
    *(f"{key} = " for key in CONFIG_KEYS),
    " is overridden to ",
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
#: <= 1.0 idents end ``]: `` (``[OfflinePartitionLeaderSelector]: ``), <= 0.10
#: fetchers ``], `` (``[ReplicaFetcherThread-0-2], ``); <= 0.11 Partition
#: ``Partition [t,p] on broker N: `` (no brackets around it, 9.4).
_PREFIX = (
    r"^(?:\[([^\]\r\n]{1,4096})\][:,]? "
    r"|(Partition \[[^\]\r\n]{1,300}\] on broker \d{1,10}): )"
)
_PREFIX_WINDOW = 4200
#: The broker a prefix names (5.1 table): Partition/ReplicaManager
#: ``broker=N``, state-change ``Broker id=N``, fetcher ``replicaId=N``,
#: <= 0.11 Partition ``on broker N``.
_PREFIX_BROKER = r"(?:\bbroker=|^Broker id=|\breplicaId=|\bon broker )(\d{1,10})\b"
#: The leader a fetcher's prefix names: ``leaderId=L`` (1.0+),
#: ``ReplicaFetcherThread-F-L`` (<= 0.11).
_PREFIX_LEADER = r"(?:\bleaderId=|^ReplicaFetcherThread-\d+-)(\d{1,10})\b"
#: 5.6 ZK controller prefix: ``Controller id=N epoch=E``.
_PREFIX_CONTROLLER_EPOCH = r"^Controller id=\d{1,10} epoch=(\d{1,10})$"
#: The partition a prefix names: ``Partition tp broker=N``, ``UnifiedLog
#: partition=tp, dir=D`` (``Log partition=`` <= 3.0, ``LogLoader partition=``
#: 3.0+), <= 0.11 ``Partition [t,p] on broker N`` (groups 3 and 4).
_PREFIX_TP = (
    r"^(?:(?:Partition |(?:Unified)?Log(?:Loader)? partition=)(\S+?)-(\d+)(?: broker=|, dir=)"
    r"|Partition \[([^,\]\s]+),(\d+)\] on broker )"
)
#: Stack-trace continuation lines: ignored by rule (5.1: a stack trace
#: follows a message on its own lines). Other indented lines are read: a
#: pasted excerpt, a ``KafkaConfig values:`` line.
_CONTINUATION = r"^(?:\s+at |\s*\.\.\. \d+ more|Caused by: |\s*Suppressed: )"
#: What a person puts before a pasted message (13.2): an indent, ``> `` quotes
#: (Markdown, e-mail), or the logger first (``%c: %m``; a dotted name).
_EXCERPT = r"^(?:[ \t]*>)*[ \t]*(?:[A-Za-z_$][\w$]*(?:\.[\w$]+)+: )?"
#: Lines without a layout head that a broker log or a ticket holds (besides
#: those a template reads): blank or indented (stack frames, config dumps,
#: pasted excerpts), ``Caused by:``, ``... N more``, ``> `` quotes, a Java
#: name first (a throwable, a logger-first excerpt), another layout's time
#: (an ISO date, a container runtime's, syslog's), a line that ends with
#: ``(logger)`` (a message's last line). Any other line is not a log line.
_ACCEPTED = (
    r"^(?:\s|$|Caused by: |Suppressed: |\.\.\. \d+ more|>"
    r"|[A-Za-z_$][\w$]*(?:\.[\w$]+)+(?::|\s|$)"
    r"|\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2})"
    r"|\([\w$.]+\)\s*$"
)
NOT_A_LOG_LINE_REASON = "not a log line (no log4j layout, stack trace or message we know)"

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
    return "^(?:" + "|".join(_anon(r).removeprefix("^") for _, r in _UNIQUE.values()) + ")"


_ANY_START = _any_template_start()
_ANY_TEMPLATE = _any_template()
#: The message body of a pattern-layout or prefix-less line, in one regex:
#: without the layout head (or a pasted excerpt's indent, quotes or logger)
#: and without the logIdent prefix.
_PLAIN_BODY = (
    rf"^(?:{_HEAD.removeprefix('^')}|{_EXCERPT.removeprefix('^')})"
    rf"(?:{_PREFIX.removeprefix('^')})?(.*)$"
)
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
    return (has_marker(value) & ~value.rlike(_CONTINUATION)) | _suspect(value)


def _suspect(value: Column) -> Column:
    """A line that may be no log line at all, or a layout line cut short (no
    ``(logger)`` or ``[thread]`` at its end): looked at, judged in stage 1.
    Cheap for the lines a log4j file is made of (``[`` ... ``)``)."""
    return F.when(value.startswith("["), ~value.endswith(")") & ~value.endswith("]")).otherwise(
        ~value.startswith("{") & ~value.rlike(_ACCEPTED)
    )


def layout_line(line: str) -> bool:
    """A whole line in the log4j pattern layout (``[%d] %p %m (%c)``): what
    makes a file a broker log when none of its lines is one we read
    (``sniff.classify``, DESIGN "Inputs")."""
    return bool(_HEAD_RE.search(line[:_HEAD_WINDOW])) and bool(_LOGGER_END_RE.search(line[-512:]))


_LOGGER_END_RE = re.compile(r"\([\w$.]+\)\s*(?:\[[^\]]*\]\s*)?$")


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
    # A line without any layout (pasted into a ticket) is read as it is, less
    # its indent, quotes or logger (13.2), with no event time; a JSON line's
    # message is its message key.
    excerpt = F.regexp_extract(F.substring(r, 1, _HEAD_WINDOW), _EXCERPT, 0)
    message = (
        F.when(j.isNotNull(), F.coalesce(j["message"], j["short_message"]))
        .when(head != "", long_substr(r, F.length(head) + 1))
        .when(json_head != "", r)
        .otherwise(long_substr(r, F.length(excerpt) + 1))
    )
    staged = staged.select("*", message.alias("bl_message"))
    m = F.col("bl_message")
    staged = staged.select(
        "*", F.regexp_extract(F.substring(m, 1, _PREFIX_WINDOW), _PREFIX, 0).alias("bl_prefix_text")
    )
    prefix_text = F.col("bl_prefix_text")
    staged = staged.select(
        "*",
        F.concat(
            F.regexp_extract(prefix_text, _PREFIX, 1), F.regexp_extract(prefix_text, _PREFIX, 2)
        ).alias("bl_prefix"),
    )
    body = F.when(prefix_text != "", long_substr(m, F.length(prefix_text) + 1)).otherwise(m)
    staged = staged.select("*", body.alias("bl_body"))
    staged = staged.select("*", _template_of(F.col("bl_body")).alias("bl_template"))
    b, t = F.col("bl_body"), F.col("bl_template")
    # Not a log line (13.5): no layout, no JSON, no prefix, no template or
    # marker, and none of the forms a log file or a ticket holds.
    garbage = (
        r.isNotNull() & j.isNull() & (json_head == "") & (head == "") & t.isNull()
        & (prefix_text == "") & ~has_marker(r) & ~r.rlike(_ACCEPTED)
    )  # fmt: skip
    # A layout line cut short inside a template we read, before the words
    # that tell the template: it starts like one and has no logger at its end.
    cut = F.when((head != "") & t.isNull() & ~F.rtrim(r).rlike(r"[)\]]$"), _cut_kind(b))
    reason = (
        F.when(F.col("bl_unreadable").isNotNull(), F.col("bl_unreadable"))
        .when(j["_corrupt_record"].isNotNull(), F.lit(BAD_JSON_REASON))
        .when(garbage, F.lit(NOT_A_LOG_LINE_REASON))
        .when(cut.isNotNull(), F.format_string("unrecognised %s message", cut))
    )
    staged = staged.select("*", reason.alias("bl_reason"))
    candidate = F.col("bl_template").isNotNull() & F.col("bl_reason").isNull()
    return staged.select("*", F.coalesce(candidate, F.lit(False)).alias("bl_candidate"))


def _cut_kind(body: Column) -> Column:
    """The event kind of the first template whose start the body has (its
    extra words left out: they were cut), or null."""
    kind = F.lit(None).cast("string")
    for _, event_kind, start, _, _ in reversed(_TEMPLATES):
        if start:
            kind = F.when(body.startswith(start), F.lit(event_kind)).otherwise(kind)
    return kind


# --- stage 2: regex groups -----------------------------------------------------------


def _groups(body: Column, regex: str) -> Column:
    count = re.compile(regex).groups
    java = _java(regex)
    return F.array(*[F.regexp_extract(body, java, i) for i in range(count + 1)])


def with_parsed(df: DataFrame) -> DataFrame:
    """Stage 2: ``bl_groups`` = [match, group 1, ...] of the line's template
    regex ("" for a group that did not take part), evaluated only for
    candidate lines (CASE WHEN evaluates the chosen branch only)."""
    t, b = F.col("bl_template"), F.col("bl_body")
    groups = F.lit(None).cast("array<string>")
    for name, (_, regex) in reversed(list(_UNIQUE.items())):
        groups = F.when(t == name, _groups(b, regex)).otherwise(groups)
    p = F.col("bl_prefix")
    c = F.col("bl_candidate") & (p != "")

    def from_prefix(regex: str, *indexes: int) -> Column:
        return F.when(c, F.concat(*[F.regexp_extract(p, regex, i) for i in indexes]))

    return df.select(
        "*",
        F.when(F.col("bl_candidate"), groups).alias("bl_groups"),
        from_prefix(_PREFIX_BROKER, 1).alias("bl_prefix_broker"),
        from_prefix(_PREFIX_TP, 1, 3).alias("bl_prefix_topic"),
        from_prefix(_PREFIX_TP, 2, 4).alias("bl_prefix_partition"),
        from_prefix(_PREFIX_CONTROLLER_EPOCH, 1).alias("bl_prefix_controller_epoch"),
        from_prefix(_PREFIX_LEADER, 1).alias("bl_prefix_leader"),
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


def _diff_old(diff: Column, field: str, value: str) -> Column:
    """The old value of ``field: old -> new`` in a 2.6 partition-change diff."""
    return F.nullif(F.regexp_extract(diff, rf"(?:^|, ){field}: {value} -> {value}", 1), F.lit(""))


def _list_ok(values: Column) -> Column:
    """No element we could not read (``event`` drops nulls from lists, so the
    check runs on the list before it)."""
    return ~F.coalesce(F.exists(values, lambda x: x.isNull()), F.lit(False))


#: One template's event before assembly: (kind, {column: value}).
_Ev = tuple[str, dict[str, Column]]
#: A template's entry: (event, required) or (event, required, keep), where a
#: false ``keep`` marks a line read and used for nothing (ignored by rule).
_Template = tuple[_Ev, Column] | tuple[_Ev, Column, Column]
_EVENT_TYPES = {f.name: f.dataType for f in EVENT_FIELDS}


def _ev(kind: str, **values: Column) -> _Ev:
    """A template's event as its kind and the columns it sets (the others
    null); assembled with every other template's by :func:`_assemble`."""
    unknown = set(values) - set(_EVENT_TYPES)
    if unknown:  # a typo here would silently drop a field: fail at build time
        raise ValueError(f"not PARTITION_EVENTS columns: {sorted(unknown)}")
    return kind, values


def _assemble(t: Column, by_template: dict[str, _Template]) -> Column:
    """The outcome row of the line's template, one CASE per column over the
    templates that set it (not one struct per template: the generated code
    of ~50 structs of ~60 fields outgrows the JVM's 64 KB per method)."""
    fields: list[Column] = []
    for f in EVENT_FIELDS:
        if f.name == "kind":
            value: Column | None = None
            for name, (ev, *_) in by_template.items():
                lit = F.lit(ev[0])
                value = F.when(t == name, lit) if value is None else value.when(t == name, lit)
            fields.append(value.alias("kind") if value is not None else F.lit(None).alias("kind"))
            continue
        value = None
        for name, (ev, *_) in by_template.items():
            v = ev[1].get(f.name)
            if v is not None:
                value = F.when(t == name, v) if value is None else value.when(t == name, v)
        if value is None:
            fields.append(F.lit(None).cast(f.dataType).alias(f.name))
        elif isinstance(f.dataType, ArrayType):
            element = ArrayType(f.dataType.elementType)
            fields.append(F.array_compact(value.cast(element)).alias(f.name))
        else:
            fields.append(value.cast(f.dataType).alias(f.name))
    fields += [
        F.lit(None).cast("string").alias("reason"),
        F.lit(None).cast("string").alias("text"),
        F.lit(None).cast("boolean").alias("text_truncated"),
    ]
    return F.struct(*fields).cast(OUTCOME_ROW)


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
    # the leader a fetcher thread's prefix names: the one whose answer it acted on
    fetcher_leader = F.nullif(F.col("bl_prefix_leader"), F.lit("")).try_cast("int")
    by_template: dict[str, _Template] = {
        "leader": (
            _ev(
                "become_leader", topic=_g(1), partition=_int(2), topic_id=_topic_id(_g(3)),
                replica=replica, leader=replica, leader_epoch=_int(4), leo=_long(5),
                partition_epoch=_int(6), hwm=_long(7), isr=int_list(_g(8)),
            ),
            _int(2).isNotNull() & _int(4).isNotNull() & _long(5).isNotNull()
            & _long(7).isNotNull() & replica.isNotNull() & _list_ok(int_list(_g(8))),
        ),
        "follower": (
            _ev(
                "become_follower", topic=_g(1), partition=_int(2), replica=replica,
                leader_epoch=_int(3), leo=_long(4), partition_epoch=_int(5), hwm=_long(6),
                leader=_int(7),
            ),
            _int(2).isNotNull() & _int(3).isNotNull() & _long(4).isNotNull()
            & _long(6).isNotNull(),
        ),
        "truncate_log": (
            _ev("truncation", topic=p_topic, partition=p_partition, replica=replica,
                  truncate_to=_long(1)),
            p_partition.isNotNull() & _long(1).isNotNull(),
        ),
        "truncate_epoch": (
            _ev(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=_long(3), diverging_epoch=_int(6), diverging_end_offset=_long(7),
                leader=fetcher_leader,
            ),
            _int(2).isNotNull() & _long(3).isNotNull() & _int(6).isNotNull()
            & _long(7).isNotNull(),
        ),
        "truncate_hwm": (
            _ev(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=F.coalesce(_long(3), _long(4)), hwm=_long(4),
                leader=fetcher_leader,
            ),
            _int(2).isNotNull() & _long(4).isNotNull(),
        ),
        "truncate_below_hwm": (
            _ev(
                "truncation", topic=_g(1), partition=_int(2), replica=replica,
                truncate_to=_long(3), hwm=_long(4), leader=fetcher_leader,
            ),
            _int(2).isNotNull() & _long(3).isNotNull() & _long(4).isNotNull(),
        ),
        "shrink": (
            _ev(
                "isr_shrink", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(F.get(F.col("bl_groups"), F.lit(2))), hwm=_long(3), leo=_long(4),
            ),
            # 0.11-2.1 print the ISRs alone: no HWM, no LEO
            p_partition.isNotNull()
            & ((_raw(3) == "") | (_long(3).isNotNull() & _long(4).isNotNull()))
            & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(2)))),
        ),
        "expand": (
            _ev(
                "isr_expand", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(F.get(F.col("bl_groups"), F.lit(2))),
            ),
            p_partition.isNotNull() & _list_ok(int_list(F.get(F.col("bl_groups"), F.lit(2)))),
        ),
        "isr_updated": (
            _ev(
                "isr_updated", topic=p_topic, partition=p_partition, replica=replica,
                isr=int_list(_raw(2)), partition_epoch=_int(7), under_min_isr=under_min_isr,
            ),
            p_partition.isNotNull() & _int(7).isNotNull() & _list_ok(int_list(_raw(2))),
        ),
        "hwm_regression": (
            _ev(
                "hwm_regression_warning", topic=p_topic, partition=p_partition,
                replica=replica, previous_hwm=_long(1), hwm=_long(2),
            ),
            p_partition.isNotNull() & _long(1).isNotNull() & _long(2).isNotNull(),
        ),
        "log_loaded": (
            _ev("log_loaded", topic=_g(1), partition=_int(2), replica=replica, hwm=_long(3)),
            _int(2).isNotNull() & _long(3).isNotNull(),
        ),
        "recovering": (
            _ev("recovering", topic=_g(1), partition=_int(2), replica=replica, leader=replica),
            _int(2).isNotNull(),
        ),
        "unclean_change": (
            _ev(
                "unclean_partition_change", topic=_g(1), partition=_int(2), topic_id=_g(3),
                leader=_diff_new(diff, "leader", r"(-?\d+)").try_cast("int"),
                leader_epoch=_diff_new(diff, "leaderEpoch", r"(-?\d+)").try_cast("int"),
                partition_epoch=_diff_new(diff, "partitionEpoch", r"(-?\d+)").try_cast("int"),
                isr=int_list(_diff_new(diff, "isr", r"(\[[\d, ]*\])")),
                leader_recovery_state=F.when(recovery == "RECOVERED", F.lit(0)).when(
                    recovery == "RECOVERING", F.lit(1)
                ),
                # the state it changed (a field the diff leaves out is unchanged)
                previous_leader=_diff_old(diff, "leader", r"(-?\d+)").try_cast("int"),
                previous_leader_epoch=_diff_old(diff, "leaderEpoch", r"(-?\d+)").try_cast("int"),
                previous_partition_epoch=_diff_old(
                    diff, "partitionEpoch", r"(-?\d+)"
                ).try_cast("int"),
                previous_isr=int_list(_diff_old(diff, "isr", r"(\[[\d, ]*\])")),
            ),
            _int(2).isNotNull() & _list_ok(int_list(_diff_new(diff, "isr", r"(\[[\d, ]*\])")))
            & _list_ok(int_list(_diff_old(diff, "isr", r"(\[[\d, ]*\])"))),
        ),
        "unclean_election": (
            _ev(
                "unclean_partition_change", topic_id=_g(1), partition=_int(2), leader=_int(3)
            ),
            _int(2).isNotNull() & _int(3).isNotNull(),
        ),
        "leader_and_isr": (
            _ev(
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
            _ev(
                "zk_unclean_election", topic=F.coalesce(_g(1), _g(3)),
                partition=F.coalesce(_int(2), _int(4)), leader=_int(5),
            ),
            F.coalesce(_int(2), _int(4)).isNotNull() & _int(5).isNotNull(),
        ),
    }  # fmt: skip
    by_template.update(_old_and_startup_events(replica, p_topic, p_partition, controller_epoch))
    required: Column | None = None
    keep: Column = F.lit(True)
    for name, (_, _req, *kept) in by_template.items():
        # ``kept`` false: a line we read and use nothing of (ignored by rule)
        if kept:
            keep = F.when(t == name, kept[0]).otherwise(keep)
    events = F.when(keep, F.array(_assemble(t, by_template))).otherwise(no_rows())
    for name, (_, req, *_kept) in by_template.items():
        required = F.when(t == name, req) if required is None else required.when(t == name, req)
    assert events is not None and required is not None
    return events, required


def _n(template: str, group: str) -> Column:
    """A named group of a template's regex ("" -> null)."""
    return _g(_GROUP_INDEX[template][group])


def _tp_of(template: str, suffix: str = "") -> tuple[Column, Column]:
    """(topic, partition) of a ``_tp`` group pair: ``[t,p]`` or ``t-p``."""
    topic = F.coalesce(_n(template, f"ot{suffix}"), _n(template, f"nt{suffix}"))
    partition = F.coalesce(_n(template, f"op{suffix}"), _n(template, f"np{suffix}"))
    return topic, partition.try_cast("int")


def _old_and_startup_events(
    replica: Column, p_topic: Column, p_partition: Column, controller_epoch: Column
) -> dict[str, _Template]:
    """(event, required[, keep]) of the pre-2.8 templates (addendum 9), log
    load and recovery (10) and version and config markers (13)."""
    leader_of_prefix = F.nullif(F.col("bl_prefix_leader"), F.lit("")).try_cast("int")
    out: dict[str, _Template] = {}

    def lai(name: str, topic: Column, partition: Column, line_epoch: Column) -> None:
        """A LeaderAndIsr decision as the controller sent it or a broker got it:
        leader_and_isr, as the request log's (partition_epoch = zkVersion)."""
        li = name.endswith("_old")
        if name == "sending_old":
            leader, epoch, isr = _n(name, "liLeader"), _n(name, "liEpoch"), _n(name, "liIsr")
            zk, state_ce, replicas = _n(name, "liZk"), _n(name, "liCe"), F.lit(None)
        elif li:  # received_old: PartitionStateInfo (0.8.2-0.9) or PartitionState (0.10-0.11)
            leader = F.coalesce(_n(name, "liLeader"), _n(name, "psLeader"))
            epoch = F.coalesce(_n(name, "liEpoch"), _n(name, "psEpoch"))
            isr = F.coalesce(_n(name, "liIsr"), _n(name, "psIsr"))
            zk = F.coalesce(_n(name, "liZk"), _n(name, "psZk"))
            state_ce = F.coalesce(_n(name, "liCe"), _n(name, "psCe"))
            replicas = F.coalesce(_n(name, "allReplicas"), _n(name, "psReplicas"))
        else:
            leader, epoch, isr = _n(name, "psLeader"), _n(name, "psEpoch"), _n(name, "psIsr")
            zk, state_ce, replicas = _n(name, "psZk"), _n(name, "psCe"), _n(name, "psReplicas")
        isr_list = int_list(F.coalesce(isr, F.lit("")))
        replica_list = int_list(F.coalesce(replicas, F.lit("")))
        out[name] = (
            _ev(
                "leader_and_isr", topic=topic, partition=partition, leader=leader.try_cast("int"),
                leader_epoch=epoch.try_cast("int"), isr=isr_list,
                replicas=F.when(replicas.isNotNull(), replica_list),
                partition_epoch=zk.try_cast("int"),
                controller_epoch=F.coalesce(line_epoch, state_ce.try_cast("int")),
            ),
            partition.isNotNull() & leader.try_cast("int").isNotNull()
            & epoch.try_cast("int").isNotNull() & _list_ok(isr_list) & _list_ok(replica_list)
            & (zk.isNull() | zk.try_cast("int").isNotNull()),
        )  # fmt: skip

    topic, partition = _tp_of("sending_old")
    lai("sending_old", topic, partition, _n("sending_old", "ce").try_cast("int"))
    lai("sending", _n("sending", "t"), _n("sending", "p").try_cast("int"), controller_epoch)
    topic, partition = _tp_of("received_old")
    lai("received_old", topic, partition, _n("received_old", "ce").try_cast("int"))
    lai(
        "received",
        F.coalesce(_n("received", "t"), _n("received", "psTopic")),
        F.coalesce(_n("received", "p"), _n("received", "psPartition")).try_cast("int"),
        _n("received", "ce").try_cast("int"),
    )

    # The controller moved the partition to OfflinePartition: its leader is
    # gone and none was elected (the replay infers the leaderless epoch the
    # controller then wrote, replay/transitions.py). Other moves that name
    # no leader are read and ignored by rule.
    for name, line_epoch in (
        ("state_move_old", _n("state_move_old", "ce").try_cast("int")),
        ("state_move", controller_epoch),
    ):
        topic, partition = _tp_of(name)
        out[name] = (
            _ev("zk_partition_offline", topic=topic, partition=partition,
                controller_epoch=line_epoch),
            partition.isNotNull() & _n(name, "to").isNotNull(),
            F.coalesce(_n(name, "to") == "OfflinePartition", F.lit(False)),
        )  # fmt: skip

    for name, kind in (("shrink_old", "isr_shrink"), ("expand_old", "isr_expand")):
        topic, partition = _tp_of(name)
        isr = int_list(F.coalesce(_n(name, "new"), F.lit("")))
        out[name] = (
            _ev(kind, topic=topic, partition=partition, replica=replica, isr=isr),
            partition.isNotNull() & _list_ok(isr) & (F.size(isr) > 0),
        )

    for name in ("leader_old", "leader_24"):
        partition = _n(name, "p").try_cast("int")
        leo = _n(name, "o").try_cast("long")
        epoch = _n(name, "e").try_cast("int")
        hwm = _n(name, "h").try_cast("long") if name == "leader_24" else F.lit(None)
        out[name] = (
            _ev(
                "become_leader", topic=_n(name, "t"), partition=partition, replica=replica,
                leader=replica, leader_epoch=epoch, leo=leo, hwm=hwm,
            ),
            partition.isNotNull() & epoch.isNotNull() & leo.isNotNull() & replica.isNotNull()
            & ((name == "leader_old") | hwm.isNotNull()),
        )  # fmt: skip

    o = _n("truncate_log_old", "o").try_cast("long")
    partition = _n("truncate_log_old", "p").try_cast("int")
    out["truncate_log_old"] = (
        _ev(
            "truncation", topic=_n("truncate_log_old", "t"), partition=partition,
            replica=replica, truncate_to=o,
        ),
        partition.isNotNull() & o.isNotNull(),
    )  # fmt: skip

    # 9.6: the follower halts instead of truncating below its leader
    halt_partition = _n("halt", "p").try_cast("int")
    leo, lleo = _n("halt", "leo").try_cast("long"), _n("halt", "lleo").try_cast("long")
    out["halt"] = (
        _ev(
            "fetcher_halt", topic=F.coalesce(_n("halt", "t"), _n("halt", "topic")),
            partition=halt_partition,
            replica=F.coalesce(_n("halt", "me").try_cast("int"), replica),
            leader=F.coalesce(_n("halt", "l").try_cast("int"), leader_of_prefix),
            leo=leo, truncate_to=lleo,
        ),
        # 0.8.2-0.10.0 name the topic only: the partition stays unknown
        (halt_partition.isNotNull() | _n("halt", "topic").isNotNull())
        & leo.isNotNull() & lleo.isNotNull(),
    )  # fmt: skip
    topic, partition = _tp_of("reset_old")
    for name, tp in (("reset_old", (topic, partition)),
                     ("reset", (_n("reset", "t"), _n("reset", "p").try_cast("int")))):  # fmt: skip
        leo, to = _n(name, "leo").try_cast("long"), _n(name, "to").try_cast("long")
        leader = _n(name, "l").try_cast("int") if name == "reset_old" else F.lit(None)
        out[name] = (
            _ev(
                "offset_reset", topic=tp[0], partition=tp[1],
                replica=F.coalesce(
                    _n(name, "me").try_cast("int") if name == "reset_old" else F.lit(None),
                    replica,
                ),
                leader=F.coalesce(leader, leader_of_prefix), leo=leo, truncate_to=to,
            ),
            tp[1].isNotNull() & leo.isNotNull() & to.isNotNull(),
        )  # fmt: skip

    # 10.1: the restart, per data directory (partition null)
    for name, clean in (("restart_clean", True), ("restart_unclean", False),
                        ("loading_logs", None)):  # fmt: skip
        out[name] = (
            _ev("broker_restart", replica=replica, clean_shutdown=F.lit(clean).cast("boolean")),
            F.lit(True),
        )
    # 10.2
    partition = F.coalesce(_n("log_recovered", "p"), _n("log_recovered", "p2")).try_cast("int")
    partition = F.coalesce(partition, p_partition)
    base = _n("log_recovered", "base").try_cast("long")
    out["log_recovered"] = (
        _ev(
            "log_recovered",
            topic=F.coalesce(_n("log_recovered", "t"), _n("log_recovered", "t2"), p_topic),
            partition=partition, replica=replica, base_offset=base,
        ),
        partition.isNotNull() & base.isNotNull(),
    )  # fmt: skip
    for name in ("corruption", "invalid_offset"):
        partition = F.coalesce(_n(name, "p").try_cast("int"), p_partition)
        o = _n(name, "o").try_cast("long")
        base = _n(name, "base").try_cast("long") if name == "corruption" else F.lit(None)
        out[name] = (
            _ev(
                "recovery_truncation", topic=F.coalesce(_n(name, "t"), p_topic),
                partition=partition, replica=replica, truncate_to=o, base_offset=base,
            ),
            partition.isNotNull() & o.isNotNull(),
        )  # fmt: skip
    # 10.3
    c = "completed_load"
    partition = F.coalesce(_n(c, "p"), _n(c, "p2")).try_cast("int")
    partition = F.coalesce(partition, p_partition)
    leo = F.coalesce(_n(c, "leoA"), _n(c, "leoB"), _n(c, "leoC")).try_cast("long")
    lso = F.coalesce(_n(c, "lsoA"), _n(c, "lsoB"), _n(c, "lsoC"))
    out[c] = (
        _ev(
            "log_end_at_load", topic=F.coalesce(_n(c, "t"), _n(c, "t2"), p_topic),
            partition=partition, replica=replica, leo=leo,
            log_start_offset=lso.try_cast("long"),
        ),
        partition.isNotNull() & leo.isNotNull()
        & (lso.isNull() | lso.try_cast("long").isNotNull()),
    )  # fmt: skip
    partition = F.coalesce(_n("producer_state", "p").try_cast("int"), p_partition)
    o = _n("producer_state", "o").try_cast("long")
    out["producer_state"] = (
        _ev(
            "log_end_at_load", topic=F.coalesce(_n("producer_state", "t"), p_topic),
            partition=partition, replica=replica, leo=o,
        ),
        partition.isNotNull() & o.isNotNull(),
        # only while loading (the LogLoader's prefix): after a truncation the
        # same text says nothing about the load
        F.col("bl_prefix").startswith("LogLoader "),
    )  # fmt: skip

    # 13: version and config markers (replica: the file's broker)
    v = _n("kafka_version", "v")
    out["kafka_version"] = (_ev("broker_config", replica=replica, kafka_version=v), v.isNotNull())
    key, val = _n("config", "key"), F.coalesce(_n("config", "val"), F.lit(""))
    roles = F.regexp_extract(val, r"^\[([\w, ]*)\]$", 0) != ""
    kraft = F.regexp_extract(val, r"^\[\s*\]$", 0) == ""
    mode = F.when(
        key == "process.roles", F.when(kraft, F.lit("kraft")).otherwise(F.lit("zk"))
    ).when(key == "zookeeper.connect", F.lit("zk"))
    unclean = F.when(key == "unclean.leader.election.enable", F.lower(val))
    min_isr = F.when(key == "min.insync.replicas", val.try_cast("int"))
    out["config"] = (
        _ev(
            "broker_config", replica=replica, mode=mode,
            inter_broker_protocol=F.when(key == "inter.broker.protocol.version", val),
            unclean_election_enabled=F.when(unclean == "true", F.lit(True)).when(
                unclean == "false", F.lit(False)
            ),
            min_isr=min_isr,
        ),
        F.when(key == "process.roles", roles)
        .when(key == "unclean.leader.election.enable", unclean.isin("true", "false"))
        .when(key == "min.insync.replicas", min_isr.isNotNull())
        .otherwise(val != ""),
        # KRaft prints ``zookeeper.connect = null``: no mode from it
        ~((key == "zookeeper.connect") & (val == "null")),
    )  # fmt: skip
    return out


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
