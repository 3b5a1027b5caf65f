"""Point-in-time views: the CLI tools' answers at one moment (formats-addendum.md 12).

Four tools, any mix of them in one file (a ticket pastes what it has), each
read from its own line forms:

* ``kafka-topics --describe`` (12.1): a topic header line
  ``Topic:{t}\\tPartitionCount:{n}\\tReplicationFactor:{rf}\\tConfigs:{k=v,..}``
  (0.8.2-2.3; 2.4+ with a space after each colon; 2.8+ ``TopicId: {id}``
  after the name; 1.0+ may end ``MarkedForDeletion: true``) yields a
  ``topic_config`` event (topic, topic_id, min_isr and
  unclean_election_enabled when its Configs list them, else null). Each
  partition line ``\\tTopic: {t}\\tPartition: {p}\\tLeader: {l}\\tReplicas:
  {r,..}\\tIsr: {i,..}`` (2.6+ ``Adding Replicas`` / ``Removing Replicas``
  during a reassignment; 3.8+ ``Elr: {..}\\tLastKnownElr: {..}``, ``N/A``
  against brokers without DescribeTopicPartitions) yields a
  ``partition_view``: leader (``none`` and ``-1`` both -1), replicas, isr,
  adding/removing replicas (null when not printed), elr and last_known_elr
  (null when not printed or ``N/A``; an empty list is ``[]``). Several runs
  of the tool in one file are a sampled timeline: the tool prints no time,
  so event_time is null and file order (``seq``) is the only order.
* ``kafka-metadata-shell`` (12.2): 3.5+ ``cat /image/topics/byName/{t}/{p}``
  (or ``byId/{id}/{p}``) prints ``PartitionRegistration(replicas=[..], ..,
  leader=L, leaderRecoveryState=RECOVERED, leaderEpoch=E,
  partitionEpoch=P)`` on one line (3.7+ with ``directories``, ``elr``,
  ``lastKnownElr``); 2.8-3.4 ``cat /topics/{t}/{p}/data`` prints a
  PartitionRecord as Jackson's pretty JSON over several lines (``{`` alone,
  then ``"key" : value`` lines, then ``}``; ``leaderRecoveryState`` only
  when RECOVERING, so absent reads 0). Each yields a ``partition_view`` with
  leader_epoch, partition_epoch and leader_recovery_state too. The one-line
  form names no partition: it comes from the last shell path before it
  (the ``cat`` command line, or ``find`` output); without one the line is
  quarantined. The pretty JSON's event sits on its ``{`` line; its other
  lines, like the path lines, give context and are ignored by rule.
* ``kafka-log-dirs --describe`` (12.3): one JSON line
  ``{"version":1,"brokers":[{"broker":B,"logDirs":[{"logDir":..,"error":..,
  "partitions":[{"partition":"t-p","size":S,"offsetLag":L,"isFuture":F}]}]}]}``
  (keys in any order from 3.6) yields one ``log_dir_view`` per partition
  entry: replica B, topic, partition, records_size S, offset_lag L,
  is_future F. Its two chatter lines are ignored by rule.
* ``GetOffsetShell`` (12.4): ``{t}:{p}:{o1,o2,..}`` yields one
  ``offset_view`` with end_offset = the first offset (the only one from
  2.0; before, the newest of ``--offsets`` values). An empty offset list
  (no offset for a timestamp) is read and yields nothing.

Lines are found with a leading ``>`` quote or indentation too (pasted into a
ticket), and with spaces where the tool printed TABs (copied from a
terminal). A line that starts one of these forms and does not complete it
(cut, garbled) is quarantined with the form's reason; every other line is
ignored by rule. Columns are prefixed ``vw_``.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql.types import IntegerType

from pipeline import sqltext as F
from pipeline.ingest.outcome import event, or_empty, unreadable_reason

KIND = "point_in_time_view"

_WINDOW = 4096
#: A pasted line may be indented or ``> ``-quoted.
_LEAD = r"^[\s>]*"

# --- kafka-topics --describe --------------------------------------------------------

_IDS = r"(?:\d{1,10}(?:,\d{1,10})*)?"
_HEADER = (
    _LEAD + r"Topic:\s?(\S{1,255})(?:\s+TopicId:\s?(\S{1,64}))?\s+PartitionCount:\s?(\d{1,10})"
    r"\s+ReplicationFactor:\s?(\d{1,10})\s+Configs:\s?(.*?)(?:\s+MarkedForDeletion:\s?true)?\s*$"
)
_PARTITION = (
    _LEAD + r"Topic:\s?(\S{1,255})\s+Partition:\s?(\d{1,10})\s+Leader:\s?(-1|\d{1,10}|none)"
    rf"\s+Replicas:\s?({_IDS})\s+Isr:\s?({_IDS})"
    rf"(?:\s+Adding Replicas:\s?({_IDS}))?(?:\s+Removing Replicas:\s?({_IDS}))?"
    rf"(?:\s+Elr:\s?(N/A|{_IDS})\s+LastKnownElr:\s?(N/A|{_IDS}))?"
    r"(?:\s+MarkedForDeletion:\s?true)?\s*$"
)
_TOPIC_LINE = _LEAD + r"Topic:"
_MIN_ISR = r"(?:^|,)min\.insync\.replicas=(\d{1,10})(?:,|$)"
_UNCLEAN = r"(?:^|,)unclean\.leader\.election\.enable=(true|false)(?:,|$)"

# --- kafka-metadata-shell -------------------------------------------------------------

_REG_IDS = r"(?:-?\d{1,10}(?:, -?\d{1,10})*)?"
_REGISTRATION = (
    rf"PartitionRegistration\(replicas=\[({_REG_IDS})\],(?: directories=\[[^\]]*\],)?"
    rf" isr=\[({_REG_IDS})\], removingReplicas=\[({_REG_IDS})\], addingReplicas=\[({_REG_IDS})\],"
    rf"(?: elr=\[({_REG_IDS})\], lastKnownElr=\[({_REG_IDS})\],)?"
    r" leader=(-?\d{1,10}), leaderRecoveryState=(RECOVERED|RECOVERING),"
    r" leaderEpoch=(-?\d{1,10}), partitionEpoch=(-?\d{1,10})\)\s*$"
)
_REGISTRATION_MARK = "PartitionRegistration("
#: A shell path naming a partition, ending its line (``cat`` argument, ``find``
#: output): 3.5+ image paths by name or id, 2.8-3.4 ``/topics/{t}/{p}/data``
#: and ``/topicIds/{id}/{p}/data``.
_SHELL_PATH = (
    r"/(?:image/)?(?:topics/byName/([^/\s]{1,255})|topics/byId/([A-Za-z0-9_-]{22})"
    r"|topicIds/([A-Za-z0-9_-]{22})|topics/([^/\s]{1,255}))/(\d{1,10})(?:/data)?/?\s*$"
)
_PRETTY_SCHEMA = (
    "partitionId int, topicId string, replicas array<int>, isr array<int>, "
    "removingReplicas array<int>, addingReplicas array<int>, leader int, "
    "leaderRecoveryState int, leaderEpoch int, partitionEpoch int, "
    "eligibleLeaderReplicas array<int>, lastKnownElr array<int>, _corrupt_record string"
)

# --- kafka-log-dirs --describe ----------------------------------------------------------

_LOG_DIRS_SCHEMA = (
    "version int, brokers array<struct<broker: int, logDirs: array<struct<logDir: string, "
    "error: string, partitions: array<struct<partition: string, size: long, offsetLag: long, "
    "isFuture: boolean>>>>>>, _corrupt_record string"
)
_TOPIC_PARTITION = r"^(.{1,255})-(\d{1,10})$"

# --- GetOffsetShell ---------------------------------------------------------------------

_OFFSETS = _LEAD + r"([A-Za-z0-9._-]{1,249}):(\d{1,10}):((?:-?\d{1,19}(?:,-?\d{1,19})*)?)\s*$"
_OFFSETS_START = _LEAD + r"[A-Za-z0-9._-]{1,249}:-?\d"

_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}

DESCRIBE_REASON = "unreadable kafka-topics --describe line (cut or garbled)"
REGISTRATION_REASON = "unreadable metadata-shell PartitionRegistration (cut or garbled)"
NO_PATH_REASON = "metadata-shell partition without its path: partition unknown"
PRETTY_REASON = "unreadable metadata-shell partition JSON (cut or garbled)"
LOG_DIRS_REASON = "unreadable kafka-log-dirs JSON (cut or garbled)"
OFFSETS_REASON = "unreadable GetOffsetShell line (cut or garbled)"


# --- file recognition ------------------------------------------------------------------

_HEAD_RE = re.compile(
    r"^[\s>]*Topic:\s?\S{1,255}\s+(?:TopicId:\s?\S{1,64}\s+)?(?:PartitionCount|Partition):"
)
_PRETTY_KEY_RE = re.compile(r'^\s*"(?:partitionId|leaderEpoch|partitionEpoch)" : ')
_OFFSETS_RE = re.compile(_OFFSETS)


def marks_line(line: str) -> bool:
    """A line only one of the four tools prints (``sniff.classify``).
    GetOffsetShell's lines are too plain to vote here: see
    :func:`offsets_line`."""
    w = line[:_WINDOW]
    return bool(
        _HEAD_RE.search(w)
        or "PartitionRegistration(replicas=" in w
        or _PRETTY_KEY_RE.search(w)
        or ('"logDirs":' in w and '"broker":' in w)
        or w.startswith("Querying brokers for log directories information")
    )


def offsets_line(line: str) -> bool:
    """A whole GetOffsetShell line (``topic:partition:offsets``): a vote only
    in a file where nothing else votes (``sniff.classify``)."""
    return bool(_OFFSETS_RE.search(line[:_WINDOW]))


def _window(value: Column) -> Column:
    return F.substring(value, 1, _WINDOW)


def _trimmed(value: Column) -> Column:
    return F.trim(_window(value))


def _is_topic_line(value: Column) -> Column:
    return (F.instr(_window(value), "Topic:") > 0) & _window(value).rlike(_TOPIC_LINE)


def _is_registration(value: Column) -> Column:
    return F.instr(_window(value), _REGISTRATION_MARK) > 0


def _is_log_dirs(value: Column) -> Column:
    return _trimmed(value).startswith('{"') & (
        (F.instr(value, '"logDirs"') > 0) | (F.instr(value, '"brokers"') > 0)
    )


def _is_open(value: Column) -> Column:
    return _trimmed(value) == "{"


def _is_offsets(value: Column) -> Column:
    return _window(value).rlike(_OFFSETS_START)


def needs_a_look(value: Column) -> Column:
    """The lines that start one of the four tools' forms; all others (shell
    prompts, chatter, the pretty JSON's inner lines, blanks) are ignored by
    rule."""
    return (
        _is_topic_line(value)
        | _is_registration(value)
        | _is_open(value)
        | _is_log_dirs(value)
        | (~_is_topic_line(value) & _is_offsets(value))
    )


# --- the shell's context: paths and pretty JSON objects ---------------------------------


def contexts(lines: DataFrame) -> DataFrame:
    """One row per shell target line (a ``PartitionRegistration`` line or a
    ``{`` line) of the view ``lines``: (source_file, pos, path_topic,
    path_topic_id, path_partition, json, closed).

    ``json``: for a ``{`` line, the object's text (its ``"key" : value``
    lines up to the next ``}`` or ``{``); ``closed``: a ``}`` ends it before
    the next ``{`` (else it was cut). Shell outputs are small; the describe
    lines of other files are no item and cost one filter.
    """
    value = F.col("value")
    trimmed = _trimmed(value)
    is_path = (F.instr(_window(value), "/") > 0) & _window(value).rlike(_SHELL_PATH)
    is_key = trimmed.startswith('"')
    is_close = trimmed.startswith("}")
    item = (
        F.when(_is_registration(value), F.lit("reg"))
        .when(_is_open(value), F.lit("open"))
        .when(is_close, F.lit("close"))
        .when(is_key, F.lit("key"))
        .when(is_path, F.lit("path"))
    )
    w = _window(value)
    items = lines.select(
        "source_file",
        "pos",
        item.alias("item"),
        F.when(item == "key", trimmed).alias("text"),
        F.when(item == "path", F.regexp_extract(w, _SHELL_PATH, 1)).alias("p_name"),
        F.when(item == "path", F.coalesce(
            F.nullif(F.regexp_extract(w, _SHELL_PATH, 2), F.lit("")),
            F.nullif(F.regexp_extract(w, _SHELL_PATH, 3), F.lit("")),
        )).alias("p_id"),
        F.when(item == "path", F.regexp_extract(w, _SHELL_PATH, 4)).alias("p_old_name"),
        F.when(item == "path", F.regexp_extract(w, _SHELL_PATH, 5)).alias("p_partition"),
    ).filter(F.col("item").isNotNull())  # fmt: skip
    by_file = Window.partitionBy("source_file").orderBy("pos")
    before = by_file.rowsBetween(Window.unboundedPreceding, -1)
    after = by_file.rowsBetween(1, Window.unboundedFollowing)
    is_open = F.col("item") == "open"
    last_path = F.last(F.when(F.col("item") == "path", F.col("pos")), ignorenulls=True).over(before)
    items = items.select(
        "*",
        last_path.alias("path_pos"),
        F.last(F.when(is_open, F.col("pos")), ignorenulls=True)
        .over(by_file.rowsBetween(Window.unboundedPreceding, 0))
        .alias("obj"),
        F.last(F.when(F.col("item") == "close", F.col("pos")), ignorenulls=True)
        .over(before)
        .alias("last_close"),
        F.first(F.when(F.col("item") == "close", F.col("pos")), ignorenulls=True)
        .over(after)
        .alias("next_close"),
        F.first(F.when(is_open, F.col("pos")), ignorenulls=True).over(after).alias("next_open"),
    )
    paths = items.filter(F.col("item") == "path").select(
        "source_file",
        F.col("pos").alias("path_pos"),
        F.coalesce(
            F.nullif(F.col("p_name"), F.lit("")), F.nullif(F.col("p_old_name"), F.lit(""))
        ).alias("path_topic"),
        F.col("p_id").alias("path_topic_id"),
        F.col("p_partition").try_cast("int").alias("path_partition"),
    )
    # Key lines of an open object: after its ``{`` and after no ``}``.
    inside = (F.col("item") == "key") & F.col("obj").isNotNull() & (
        F.col("last_close").isNull() | (F.col("last_close") < F.col("obj"))
    )  # fmt: skip
    bodies = (
        items.filter(inside)
        .groupBy("source_file", "obj")
        .agg(F.array_sort(F.collect_list(F.struct("pos", "text"))).alias("keys"))
        .select(
            "source_file",
            F.col("obj").alias("pos"),
            F.concat(
                F.lit("{"), F.array_join(F.transform("keys", lambda k: k["text"]), "\n"), F.lit("}")
            ).alias("json"),
        )
    )
    targets = items.filter(F.col("item").isin("reg", "open")).select(
        "source_file",
        "pos",
        "path_pos",
        F.when(
            is_open,
            F.col("next_close").isNotNull()
            & (F.col("next_open").isNull() | (F.col("next_close") < F.col("next_open"))),
        ).alias("closed"),
    )
    return (
        targets.join(paths, ["source_file", "path_pos"], "left")
        .join(bodies, ["source_file", "pos"], "left")
        .select(
            "source_file", "pos", "path_topic", "path_topic_id", "path_partition", "json", "closed"
        )
    )


def with_context(df: DataFrame, context_table: DataFrame, is_view: Column) -> DataFrame:
    c = F.broadcast(
        context_table.select(
            F.col("source_file").alias("vw_c_file"),
            F.col("pos").alias("vw_c_pos"),
            F.col("path_topic").alias("vw_c_topic"),
            F.col("path_topic_id").alias("vw_c_topic_id"),
            F.col("path_partition").alias("vw_c_partition"),
            F.col("json").alias("vw_c_json"),
            F.col("closed").alias("vw_c_closed"),
        )
    )
    cond = (
        is_view & (F.col("source_file") == F.col("vw_c_file")) & (F.col("pos") == F.col("vw_c_pos"))
    )
    return df.join(c, cond, "left").drop("vw_c_file", "vw_c_pos")


# --- the verdict ------------------------------------------------------------------------


def _ids(text: Column, sep: str = ",") -> Column:
    """A printed id list as array<int>: ``""`` is ``[]`` (event() drops the
    null an empty element casts to; the regexes admit digits only)."""
    return F.transform(F.split(text, sep), lambda x: x.try_cast(IntegerType()))


def _group(value: Column, pattern: str, idx: int) -> Column:
    return F.regexp_extract(value, pattern, idx)


def _describe(v: Column) -> tuple[Column, Column, Column]:
    """(is header, is partition line, the event) of a ``Topic:`` line."""
    w = _window(v)
    header = w.rlike(_HEADER)
    part = ~header & w.rlike(_PARTITION)
    configs = _group(w, _HEADER, 5)
    topic_id = F.nullif(_group(w, _HEADER, 2), F.lit(""))
    config_event = event(
        "topic_config",
        topic=_group(w, _HEADER, 1),
        topic_id=topic_id,
        min_isr=F.nullif(_group(configs, _MIN_ISR, 1), F.lit("")).try_cast("int"),
        unclean_election_enabled=F.nullif(_group(configs, _UNCLEAN, 1), F.lit("")) == "true",
    )
    leader = _group(w, _PARTITION, 3)
    has_elr = F.instr(w, "LastKnownElr:") > 0
    elr = _group(w, _PARTITION, 8)
    last_known = _group(w, _PARTITION, 9)
    view = event(
        "partition_view",
        topic=_group(w, _PARTITION, 1),
        partition=_group(w, _PARTITION, 2).try_cast("int"),
        leader=F.when(leader == "none", F.lit(-1)).otherwise(leader.try_cast("int")),
        replicas=_ids(_group(w, _PARTITION, 4)),
        isr=_ids(_group(w, _PARTITION, 5)),
        adding_replicas=F.when(F.instr(w, "Adding Replicas:") > 0, _ids(_group(w, _PARTITION, 6))),
        removing_replicas=F.when(
            F.instr(w, "Removing Replicas:") > 0, _ids(_group(w, _PARTITION, 7))
        ),
        elr=F.when(has_elr & (elr != "N/A"), _ids(elr)),
        last_known_elr=F.when(has_elr & (last_known != "N/A"), _ids(last_known)),
    )
    return header, part, F.when(header, F.array(config_event)).when(part, F.array(view))


def _registration(v: Column) -> tuple[Column, Column]:
    """(readable, the event) of a one-line ``PartitionRegistration``."""
    w = _window(v)
    ok = w.rlike(_REGISTRATION)
    has_elr = F.instr(w, ", elr=[") > 0
    view = event(
        "partition_view",
        topic=F.col("vw_c_topic"),
        topic_id=F.col("vw_c_topic_id"),
        partition=F.col("vw_c_partition"),
        replicas=_ids(_group(w, _REGISTRATION, 1), ", "),
        isr=_ids(_group(w, _REGISTRATION, 2), ", "),
        removing_replicas=_ids(_group(w, _REGISTRATION, 3), ", "),
        adding_replicas=_ids(_group(w, _REGISTRATION, 4), ", "),
        elr=F.when(has_elr, _ids(_group(w, _REGISTRATION, 5), ", ")),
        last_known_elr=F.when(has_elr, _ids(_group(w, _REGISTRATION, 6), ", ")),
        leader=_group(w, _REGISTRATION, 7).try_cast("int"),
        leader_recovery_state=F.when(_group(w, _REGISTRATION, 8) == "RECOVERING", F.lit(1))
        .otherwise(F.lit(0)),
        leader_epoch=_group(w, _REGISTRATION, 9).try_cast("int"),
        partition_epoch=_group(w, _REGISTRATION, 10).try_cast("int"),
    )  # fmt: skip
    return ok, view


def _pretty(j: Column) -> tuple[Column, Column, Column]:
    """(is a partition object, complete, the event) of a pretty JSON object."""
    is_partition = (
        j["partitionId"].isNotNull() | j["leaderEpoch"].isNotNull() | j["isr"].isNotNull()
    )

    def no_null(a: Column) -> Column:
        return ~F.coalesce(F.exists(a, lambda x: x.isNull()), F.lit(False))

    complete = (
        j["partitionId"].isNotNull()
        & j["leader"].isNotNull()
        & j["leaderEpoch"].isNotNull()
        & j["isr"].isNotNull()
        & j["replicas"].isNotNull()
        & no_null(j["isr"])
        & no_null(j["replicas"])
    )
    view = event(
        "partition_view",
        topic=F.col("vw_c_topic"),
        topic_id=F.coalesce(j["topicId"], F.col("vw_c_topic_id")),
        partition=j["partitionId"],
        leader=j["leader"],
        replicas=j["replicas"],
        isr=j["isr"],
        removing_replicas=j["removingReplicas"],
        adding_replicas=j["addingReplicas"],
        elr=j["eligibleLeaderReplicas"],
        last_known_elr=j["lastKnownElr"],
        leader_epoch=j["leaderEpoch"],
        partition_epoch=j["partitionEpoch"],
        leader_recovery_state=F.coalesce(j["leaderRecoveryState"], F.lit(0)),
    )
    return is_partition, complete, view


_PART_ENTRY = "struct<partition:string,size:long,offsetLag:long,isFuture:boolean>"
_DIR_ENTRY = f"struct<logDir:string,error:string,partitions:array<{_PART_ENTRY}>>"
_BROKER_ENTRY = f"struct<broker:int,logDirs:array<{_DIR_ENTRY}>>"
_FLAT_ENTRY = "struct<broker:int,name:string,size:long,lag:long,future:boolean>"


def _empty(element: str) -> Column:
    return F.array().cast(f"array<{element}>")


def _log_dirs(j: Column) -> tuple[Column, Column]:
    """(every entry readable, the events) of a log-dirs JSON object: one
    event per partition entry of every log dir of every broker (a log dir
    with an error lists none)."""

    def entries_of(b: Column) -> Column:
        return F.flatten(
            F.transform(
                F.coalesce(b["logDirs"], _empty(_DIR_ENTRY)),
                lambda d: F.coalesce(
                    F.transform(
                        d["partitions"],
                        lambda p: F.struct(
                            b["broker"].alias("broker"),
                            p["partition"].alias("name"),
                            p["size"].alias("size"),
                            p["offsetLag"].alias("lag"),
                            p["isFuture"].alias("future"),
                        ),
                    ),
                    _empty(_FLAT_ENTRY),
                ),
            )
        )

    entries = F.flatten(F.transform(F.coalesce(j["brokers"], _empty(_BROKER_ENTRY)), entries_of))
    bad = F.exists(
        entries,
        lambda e: (
            e["broker"].isNull()
            | e["name"].isNull()
            | ~e["name"].rlike(_TOPIC_PARTITION)
            | e["size"].isNull()
        ),
    )
    events = F.transform(
        entries,
        lambda e: event(
            "log_dir_view",
            replica=e["broker"],
            topic=F.regexp_extract(e["name"], _TOPIC_PARTITION, 1),
            partition=F.regexp_extract(e["name"], _TOPIC_PARTITION, 2).try_cast("int"),
            records_size=e["size"],
            offset_lag=e["lag"],
            is_future=e["future"],
        ),
    )
    readable = j["brokers"].isNotNull() & ~F.coalesce(bad, F.lit(False))
    return readable, events


def with_verdict(df: DataFrame, is_view: Column) -> DataFrame:
    """``vw_events``, ``vw_quarantine`` and ``vw_time`` (always null: no
    tool prints a time)."""
    v = F.col("value")
    staged = df.select("*", F.when(is_view, unreadable_reason(v)).alias("vw_unreadable"))
    readable = is_view & F.col("vw_unreadable").isNull()
    topic_line = readable & _is_topic_line(v)
    registration = readable & ~topic_line & _is_registration(v)
    open_line = readable & ~topic_line & ~registration & _is_open(v)
    log_dirs = readable & ~topic_line & ~registration & _is_log_dirs(v)
    offsets = readable & ~topic_line & ~registration & ~open_line & ~log_dirs & _is_offsets(v)
    staged = staged.select(
        "*",
        F.when(open_line, F.from_json(F.col("vw_c_json"), _PRETTY_SCHEMA, _JSON_OPTIONS)).alias(
            "vw_pretty"
        ),
        F.when(log_dirs, F.from_json(v, _LOG_DIRS_SCHEMA, _JSON_OPTIONS)).alias("vw_dirs"),
    )
    header, part, describe_rows = _describe(v)
    reg_ok, reg_view = _registration(v)
    pj = F.col("vw_pretty")
    is_partition, complete, pretty_view = _pretty(pj)
    dj = F.col("vw_dirs")
    dirs_ok, dirs_events = _log_dirs(dj)
    ow = _window(v)
    offset_list = _group(ow, _OFFSETS, 3)
    offset_view = event(
        "offset_view",
        topic=_group(ow, _OFFSETS, 1),
        partition=_group(ow, _OFFSETS, 2).try_cast("int"),
        end_offset=F.split(offset_list, ",")[0].try_cast("long"),
    )
    pretty_bad = pj["_corrupt_record"].isNotNull() | ~F.coalesce(F.col("vw_c_closed"), F.lit(False))
    quarantine = (
        F.when(F.col("vw_unreadable").isNotNull(), F.col("vw_unreadable"))
        .when(topic_line & ~header & ~part, F.lit(DESCRIBE_REASON))
        .when(registration & ~reg_ok, F.lit(REGISTRATION_REASON))
        .when(registration & F.col("vw_c_partition").isNull(), F.lit(NO_PATH_REASON))
        .when(open_line & F.col("vw_c_json").isNull(), F.lit(None))  # a ``{`` with no keys
        .when(open_line & pj["_corrupt_record"].isNotNull(), F.lit(PRETTY_REASON))
        .when(open_line & ~is_partition, F.lit(None))  # another record's JSON: ignored
        .when(open_line & (pretty_bad | ~complete), F.lit(PRETTY_REASON))
        .when(log_dirs & (dj["_corrupt_record"].isNotNull() | ~dirs_ok), F.lit(LOG_DIRS_REASON))
        .when(offsets & ~ow.rlike(_OFFSETS), F.lit(OFFSETS_REASON))
    )
    rows = (
        F.when(topic_line, describe_rows)
        .when(registration, F.array(reg_view))
        .when(open_line & is_partition, F.array(pretty_view))
        .when(log_dirs, or_empty(dirs_events))
        .when(offsets & (offset_list != ""), F.array(offset_view))
    )
    return staged.select(
        "*",
        rows.alias("vw_events"),
        quarantine.alias("vw_quarantine"),
        F.lit(None).cast("timestamp").alias("vw_time"),
    )
