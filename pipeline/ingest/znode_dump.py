"""ZooKeeper-era partition state: dumps of ``/brokers/topics/<t>/partitions/<p>/state``.

What the znode holds (apache/kafka ``core/src/main/scala/kafka/zk/ZkData.scala``,
``TopicPartitionStateZNode``, read at commit cbf3d00a of trunk; the same keys
since 1.1's ZkData and 0.x's ZkUtils): one compact JSON object,
``{"controller_epoch":C,"leader":L,"version":1,"leader_epoch":E,"isr":[..]}``
in any key order (a Scala map), plus ``"leader_recovery_state":1`` when the
leader is RECOVERING (3.2+; ``encode`` writes it only when it is not
RECOVERED, ``decode`` reads its absence as RECOVERED). ``decode`` takes the
znode's version (``stat.getVersion``, the zkVersion) as the partition epoch:
it is not in the JSON.

How people capture it:

* a ``zookeeper-shell <host> get <path>`` transcript: connection chatter
  (``Connecting to ...``, ``WATCHER::``, ``WatchedEvent state:...``), the
  echoed command in interactive mode (``[zk: host(CONNECTED) 3] get
  /brokers/topics/t/partitions/0/state``), the JSON line, and with ZK 3.4
  ``get`` or 3.5+ ``get -s`` the stat lines (ZooKeeper
  ``ZooKeeperMain.printStat`` 3.4, ``org.apache.zookeeper.cli.StatPrinter``
  3.5+): ``cZxid = 0x..``, ``ctime = <Date.toString()>``, ``mZxid``,
  ``mtime = Wed May 01 10:00:01 UTC 2024``, ``pZxid``, ``cversion``,
  ``dataVersion = N``, ``aclVersion``, ``ephemeralOwner``, ``dataLength``,
  ``numChildren``. In 3.4 the stat lines go to stderr, so a capture with
  ``2>&1`` may put them before or after the JSON;
* tree dumps: a file whose own path ends in
  ``brokers/topics/<t>/partitions/<p>/state`` (maybe with an extension)
  holding the JSON, or one line ``<path>: <json>`` / ``<path> = <json>`` per
  znode.

Reading rules:

* A *path line* is a line ending with a ``.../brokers/topics/<t>/partitions/
  <p>/state`` path that is the whole line or follows ``get`` (with its
  ``-s``/``-w`` flags). It starts a *section*; the lines before the first
  one are a section of their own.
* Every line that starts with ``{`` (maybe after a ``<path>:`` on the same
  line) is looked at: an object that is not a partition state (``get
  /brokers/ids/1``) is ignored by rule; one we cannot parse (cut, a value
  of the wrong type) is quarantined; a partition state missing a key
  ``decode`` requires (leader, leader_epoch, isr, controller_epoch), or
  with a null in its ISR, is quarantined.
* Topic and partition: the path on the JSON's own line, else the section's
  path line, else the file's own path; none of these -> quarantined
  (``znode path unknown``).
* ``mtime``/``dataVersion`` lines belong to the nearest state JSON before
  them in their section, or, when none precedes, to the first one after.
  ``partition_epoch`` = dataVersion, ``event_time`` = mtime when shown (the
  zone abbreviation as printed; one Spark cannot resolve leaves the time
  null), else null: the replay orders such a state by its leader epoch and
  partition epoch (``replay/order.py``).
* Path, stat and chatter lines are ignored by rule: they give context to
  the JSON line, which is the evidence and the one parsed line.

Pass 1 collects the path, stat and JSON line positions (``zn_items``, a
handful per file); :func:`contexts` turns them into one row per JSON line,
joined back in pass 2 with a broadcast. Columns are prefixed ``zn_``.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame, Window

from pipeline import sqltext as F
from pipeline.ingest.outcome import event, unreadable_reason

KIND = "znode_dump"

_PATH = r"brokers/topics/([^/\s]{1,255})/partitions/(\d{1,10})/state"
#: A path line: the path alone, or after ``get [-s] [-w]``, ending the line.
_PATH_LINE = rf"(?:^|\sget(?:\s+-[sw])*\s+)\S*?/?{_PATH}\s*$"
#: A JSON line: ``{`` first, maybe after ``<path>:`` / ``<path> =`` / ``<path> ``.
_JSON_LINE = rf"^[ \t]*(?:\S*?/?{_PATH}[ \t]*[:=]?[ \t]*)?\{{"
#: The file's own path (tree dumps).
_FILE_PATH = rf"(?:^|/){_PATH}(?:\.\w{{1,8}})?$"
_WINDOW = 4096

_STATE_SCHEMA = (
    "leader int, leader_epoch int, controller_epoch int, isr array<int>, "
    "leader_recovery_state int, _corrupt_record string"
)
_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}
#: ``Date.toString()`` is ``EEE MMM dd HH:mm:ss zzz yyyy``; Spark parses no
#: day-of-week, so it is cut off first.
_MTIME = r"^mtime = \w{3} (\w{3} \d{2} \d{2}:\d{2}:\d{2} \S{1,32} \d{4})\s*$"
_DATA_VERSION = r"^dataVersion = (-?\d{1,10})\s*$"

BAD_JSON_REASON = "unreadable znode JSON"
UNRECOGNISED_REASON = "unrecognised partition state znode"
NO_PATH_REASON = "znode path unknown"


# --- file recognition and the first pass -------------------------------------------


def _window(value: Column) -> Column:
    return F.substring(value, 1, _WINDOW)


_JSON_LINE_RE = re.compile(_JSON_LINE)


def marks_line(line: str) -> bool:
    """A partition-state JSON line (its two epoch keys, written by no other
    artefact in snake case)."""
    w = line[:_WINDOW]
    return '"controller_epoch"' in w and '"leader_epoch"' in w and bool(_JSON_LINE_RE.search(w))


def _marks(value: Column) -> Column:
    w = _window(value)
    return (
        (F.instr(w, '"controller_epoch"') > 0)
        & (F.instr(w, '"leader_epoch"') > 0)
        & w.rlike(_JSON_LINE)
    )


def _items(lines: DataFrame) -> DataFrame:
    """Path lines, stat lines and state JSON lines (a handful per dump):
    (source_file, pos, item, text, number)."""
    value = F.col("value")
    w = _window(value)
    is_json = _marks(value)
    is_path = (F.instr(w, "/partitions/") > 0) & ~is_json & w.rlike(_PATH_LINE)
    is_mtime = value.startswith("mtime = ")
    is_version = value.startswith("dataVersion = ")
    item = (
        F.when(is_json, F.lit("json"))
        .when(is_path, F.lit("path"))
        .when(is_mtime, F.lit("mtime"))
        .when(is_version, F.lit("version"))
    )
    text = F.when(is_path, F.regexp_extract(w, _PATH_LINE, 1)).when(
        is_mtime, F.regexp_extract(F.substring(value, 1, 128), _MTIME, 1)
    )
    partition = F.when(is_path, F.regexp_extract(w, _PATH_LINE, 2)).when(
        is_version, F.regexp_extract(F.substring(value, 1, 64), _DATA_VERSION, 1)
    )
    return lines.select(
        "source_file",
        "pos",
        item.alias("item"),
        text.alias("text"),
        partition.alias("number"),
    ).filter(F.col("item").isNotNull())


def contexts(lines: DataFrame) -> DataFrame:
    """One row per state JSON line of the znode dump ``lines``: (source_file,
    pos, topic, partition, mtime, data_version)."""
    items = _items(lines)
    by_file = Window.partitionBy("source_file").orderBy("pos")
    is_path = F.col("item") == "path"
    items = items.select("*", F.sum(is_path.cast("int")).over(by_file).alias("section"))
    section = Window.partitionBy("source_file", "section").orderBy("pos")
    json_line = F.when(F.col("item") == "json", F.col("pos"))
    items = items.select(
        "*",
        F.first(F.when(is_path, F.col("text")), ignorenulls=True).over(section).alias("s_topic"),
        F.first(F.when(is_path, F.col("number")), ignorenulls=True)
        .over(section)
        .alias("s_partition"),
        F.last(json_line, ignorenulls=True)
        .over(section.rowsBetween(Window.unboundedPreceding, Window.currentRow))
        .alias("prev_json"),
        F.first(json_line, ignorenulls=True)
        .over(section.rowsBetween(Window.currentRow, Window.unboundedFollowing))
        .alias("next_json"),
    )
    stats = (
        items.filter(F.col("item").isin("mtime", "version"))
        .select(
            "source_file",
            F.coalesce("prev_json", "next_json").alias("owner"),
            "pos",
            F.when(F.col("item") == "mtime", F.col("text")).alias("mtime"),
            F.when(F.col("item") == "version", F.col("number")).alias("data_version"),
        )
        .filter(F.col("owner").isNotNull())
        .groupBy("source_file", "owner")
        .agg(
            F.min_by("mtime", F.when(F.col("mtime").isNotNull(), F.col("pos"))).alias("mtime"),
            F.min_by("data_version", F.when(F.col("data_version").isNotNull(), F.col("pos"))).alias(
                "data_version"
            ),
        )
    )
    states = items.filter(F.col("item") == "json").select(
        "source_file",
        "pos",
        F.nullif(F.col("s_topic"), F.lit("")).alias("topic"),
        F.nullif(F.col("s_partition"), F.lit("")).alias("partition"),
    )
    return states.join(stats.withColumnRenamed("owner", "pos"), ["source_file", "pos"], "left")


def with_context(df: DataFrame, context_table: DataFrame, is_znode: Column) -> DataFrame:
    c = F.broadcast(
        context_table.select(
            F.col("source_file").alias("zn_c_file"),
            F.col("pos").alias("zn_c_pos"),
            F.col("topic").alias("zn_c_topic"),
            F.col("partition").alias("zn_c_partition"),
            F.col("mtime").alias("zn_c_mtime"),
            F.col("data_version").alias("zn_c_data_version"),
        )
    )
    cond = (
        is_znode
        & (F.col("source_file") == F.col("zn_c_file"))
        & (F.col("pos") == F.col("zn_c_pos"))
    )
    return df.join(c, cond, "left").drop("zn_c_file", "zn_c_pos")


def needs_a_look(value: Column) -> Column:
    """Lines that start with a JSON object; all others are ignored by rule."""
    return (F.instr(_window(value), "{") > 0) & _window(value).rlike(_JSON_LINE)


# --- pass 2 ---------------------------------------------------------------------------


def with_verdict(df: DataFrame, is_znode: Column) -> DataFrame:
    """``zn_events``, ``zn_quarantine`` and ``zn_time``."""
    v = F.col("value")
    staged = df.select("*", F.when(is_znode, unreadable_reason(v)).alias("zn_unreadable"))
    readable = is_znode & F.col("zn_unreadable").isNull() & needs_a_look(v)
    staged = staged.select("*", F.when(readable, v).alias("zn_value"))
    r = F.col("zn_value")
    brace = F.instr(r, "{")
    line_path = F.substring(r, 1, brace - 1)
    staged = staged.select(
        "*",
        F.when(
            r.isNotNull(), F.from_json(F.substring(r, brace, 1 << 30), _STATE_SCHEMA, _JSON_OPTIONS)
        ).alias("zn_json"),
        F.nullif(F.regexp_extract(line_path, _PATH, 1), F.lit("")).alias("zn_line_topic"),
        F.nullif(F.regexp_extract(line_path, _PATH, 2), F.lit("")).alias("zn_line_partition"),
        F.nullif(F.regexp_extract(F.col("source_file"), _FILE_PATH, 1), F.lit("")).alias(
            "zn_file_topic"
        ),
        F.nullif(F.regexp_extract(F.col("source_file"), _FILE_PATH, 2), F.lit("")).alias(
            "zn_file_partition"
        ),
    )
    j = F.col("zn_json")
    # The line's own path, then its section's, then the file's: topic and
    # partition always from the same place.
    source = (
        F.when(F.col("zn_line_partition").isNotNull(), F.lit(0))
        .when(F.col("zn_c_partition").isNotNull(), F.lit(1))
        .when(F.col("zn_file_partition").isNotNull(), F.lit(2))
    )
    topic = (
        F.when(source == 0, F.col("zn_line_topic"))
        .when(source == 1, F.col("zn_c_topic"))
        .when(source == 2, F.col("zn_file_topic"))
    )
    partition = (
        F.when(source == 0, F.col("zn_line_partition"))
        .when(source == 1, F.col("zn_c_partition"))
        .when(source == 2, F.col("zn_file_partition"))
        .try_cast("int")
    )
    is_state = (
        j["leader"].isNotNull()
        | j["leader_epoch"].isNotNull()
        | j["controller_epoch"].isNotNull()
        | j["isr"].isNotNull()
    )
    complete = (
        j["leader"].isNotNull()
        & j["leader_epoch"].isNotNull()
        & j["controller_epoch"].isNotNull()
        & j["isr"].isNotNull()
        & ~F.coalesce(F.exists(j["isr"], lambda x: x.isNull()), F.lit(False))
    )
    quarantine = (
        F.when(F.col("zn_unreadable").isNotNull(), F.col("zn_unreadable"))
        .when(r.isNull(), F.lit(None))
        .when(j["_corrupt_record"].isNotNull(), F.lit(BAD_JSON_REASON))
        .when(~is_state, F.lit(None))
        .when(~complete, F.lit(UNRECOGNISED_REASON))
        .when(partition.isNull(), F.lit(NO_PATH_REASON))
    )
    state = event(
        "zk_partition_state",
        topic=topic,
        partition=partition,
        leader=j["leader"],
        leader_epoch=j["leader_epoch"],
        isr=j["isr"],
        controller_epoch=j["controller_epoch"],
        partition_epoch=F.col("zn_c_data_version").try_cast("int"),
        leader_recovery_state=j["leader_recovery_state"],
    )
    mtime = F.try_to_timestamp(F.col("zn_c_mtime"), F.lit("MMM dd HH:mm:ss z yyyy"))
    return staged.select(
        "*",
        F.when(
            r.isNotNull() & j["_corrupt_record"].isNull() & is_state & complete, F.array(state)
        ).alias("zn_events"),
        quarantine.alias("zn_quarantine"),
        F.when(is_znode, mtime).alias("zn_time"),
    )
