"""Log load and recovery at broker startup (formats-addendum.md section 10).

A broker that starts again loads every partition log of its data directory
(one, ``/var/lib/kafka/data``). Without the clean-shutdown marker
(``.kafka_cleanshutdown``, written only by a controlled shutdown) it recovers
every segment from the one holding the recovery point (the flushed offset,
``recovery-point-offset-checkpoint``) on: with one segment per log (base offset
0; the simulated logs never reach ``log.segment.bytes``) that is segment 0,
always. An unclean shutdown that lost the page cache has already lost the
unflushed tail (``Log.lose_unflushed``): the log end the lines print is what
the disk kept.

What each version prints (INFO; DEBUG lines are not in server.log):

* 0.10.1 (0.8.2-0.10.2): ``Loading logs.``; ``Recovering unflushed segment 0
  in log t-p.`` (``kafka.log.Log``, no prefix); ``Completed load of log t-p
  with 1 log segments and log end offset N in M ms``; ``Logs loading complete
  in M ms.``. Nothing says whether the shutdown was clean (10.1).
* 1.1 and 2.4 (1.0-2.5): the same brackets; the Log lines with the ``[Log
  partition=t-p, dir=D] `` prefix: ``Recovering unflushed segment 0``,
  ``Completed load of log with 1 segments, log start offset 0 and log end
  offset N in M ms``.
* 2.8 (2.6-3.4): ``Skipping recovery for all logs in D since clean shutdown
  file was found`` / ``Attempting recovery for all logs in D since no clean
  shutdown file was found``; ``[Log ...] Recovering unflushed segment 0``;
  ``Completed load of Log(dir=D/t-p, topic=t, partition=p, highWatermark=0,
  lastStableOffset=0, logStartOffset=0, logEndOffset=N) with 1 segments in Mms
  (i/K loaded in D)`` (``kafka.log.LogManager``; a loaded log's HW starts at
  its log start offset, 10.3); ``Loaded K logs in Mms.``.
* 3.6 (3.5-3.9): ``Skipping recovery of K logs from D since clean shutdown
  file was found`` / ``Recovering K logs from D since no clean shutdown file
  was found``; ``[LogLoader partition=t-p, dir=D] Recovering unflushed segment
  0. 0/1 recovered for t-p.`` (``kafka.log.LogLoader``); ``Completed load of
  Log(dir=D/t-p, topicId=ID, topic=t, ...) with 1 segments,
  local-log-start-offset 0 and log-end-offset N in Mms (i/K completed in D)``;
  ``Loaded K logs in Mms`` and `` (unclean log dirs = ArrayBuffer(D))`` after
  an unclean shutdown.
* 4.0 (trunk-2024): as 3.6, the recovery line from the Java LogLoader
  (``org.apache.kafka.storage.internals.log.LogLoader``): ``Recovering
  unflushed segment 0. 0 recovered for t-p.`` (``numFlushed / numUnflushed``
  in integer division).

``Log loaded for partition t-p with initial high watermark H`` (2.4+,
``kafka.cluster.Partition``) comes later, when the broker creates the
Partition on its first LeaderAndIsr or metadata image (``Cluster.apply``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from simulator.logs import DATA_DIR, LOG_28, BrokerLogs
from simulator.versions import Version

#: the shape of ``Log4j.write``: (ms, level, message, logger)
Writer: TypeAlias = Callable[[int, str, str, str], None]

LOG_MANAGER = "kafka.log.LogManager"
LOG_LOADER = "kafka.log.LogLoader"
LOG_LOADER_JAVA = "org.apache.kafka.storage.internals.log.LogLoader"

#: milliseconds a log takes to load, with and without recovery (what the lines print)
LOAD_MS = 3
RECOVERY_MS = 12


def write_startup(
    logs: BrokerLogs,
    version: Version,
    ms: int,
    partitions: list[tuple[str, int, str, int]],
    clean: bool,
) -> None:
    """``partitions``: (topic, partition, topic id, log end offset), in the
    order the loads complete; ``clean``: the clean-shutdown marker was there."""
    server = logs.server
    n = len(partitions)
    each = LOAD_MS if clean else RECOVERY_MS
    total = n * each + 5
    if version.before("2.6"):
        server.write(ms, "INFO", "Loading logs.", LOG_MANAGER)
    elif version.before("3.5"):
        if clean:
            text = (
                f"Skipping recovery for all logs in {DATA_DIR} since clean shutdown file was found"
            )
        else:
            text = (
                f"Attempting recovery for all logs in {DATA_DIR} since no clean shutdown file was "
                "found"
            )
        server.write(ms, "INFO", text, LOG_MANAGER)
    elif n == 0:
        server.write(ms, "INFO", f"No logs found to be loaded in {DATA_DIR}", LOG_MANAGER)
    elif clean:
        server.write(
            ms,
            "INFO",
            f"Skipping recovery of {n} logs from {DATA_DIR} since clean shutdown file was found",
            LOG_MANAGER,
        )
    else:
        server.write(
            ms,
            "INFO",
            f"Recovering {n} logs from {DATA_DIR} since no clean shutdown file was found",
            LOG_MANAGER,
        )
    for i, (topic, p, topic_id, leo) in enumerate(partitions, start=1):
        tp = f"{topic}-{p}"
        if not clean:
            recovering(server.write, version, ms, tp)
        loaded(server.write, version, ms, i, n, topic, p, topic_id, leo, each)
    if version.before("2.6"):
        server.write(ms, "INFO", f"Logs loading complete in {total} ms.", LOG_MANAGER)
    elif version.before("3.5"):
        server.write(ms, "INFO", f"Loaded {n} logs in {total}ms.", LOG_MANAGER)
    else:
        unclean = "" if clean else f" (unclean log dirs = ArrayBuffer({DATA_DIR}))"
        server.write(ms, "INFO", f"Loaded {n} logs in {total}ms{unclean}", LOG_MANAGER)


def recovering(write: Writer, version: Version, ms: int, tp: str) -> None:
    """10.2: one line per unflushed segment (here segment 0)."""
    if version.before("1.0"):
        write(ms, "INFO", f"Recovering unflushed segment 0 in log {tp}.", LOG_28)
    elif version.before("3.0"):
        write(
            ms,
            "INFO",
            f"[Log partition={tp}, dir={DATA_DIR}] Recovering unflushed segment 0",
            LOG_28,
        )
    elif version.before("3.3"):
        write(
            ms,
            "INFO",
            f"[LogLoader partition={tp}, dir={DATA_DIR}] Recovering unflushed segment 0",
            LOG_LOADER,
        )
    elif version.before("4.0"):
        write(
            ms,
            "INFO",
            f"[LogLoader partition={tp}, dir={DATA_DIR}] Recovering unflushed segment 0. 0/1 "
            f"recovered for {tp}.",
            LOG_LOADER,
        )
    else:
        write(
            ms,
            "INFO",
            f"[LogLoader partition={tp}, dir={DATA_DIR}] Recovering unflushed segment 0. 0 "
            f"recovered for {tp}.",
            LOG_LOADER_JAVA,
        )


def loaded(
    write: Writer,
    version: Version,
    ms: int,
    i: int,
    n: int,
    topic: str,
    p: int,
    topic_id: str,
    leo: int,
    took: int,
) -> None:
    """10.3: the log end offset after loading."""
    tp = f"{topic}-{p}"
    if version.before("0.10.1"):
        write(ms, "INFO", f"Completed load of log {tp} with log end offset {leo}", LOG_28)
    elif version.before("0.11"):
        write(
            ms,
            "INFO",
            f"Completed load of log {tp} with 1 log segments and log end offset {leo} in {took} ms",
            LOG_28,
        )
    elif version.before("2.6"):
        write(
            ms,
            "INFO",
            f"[Log partition={tp}, dir={DATA_DIR}] Completed load of log with 1 segments, log "
            f"start offset 0 and log end offset {leo} in {took} ms",
            LOG_28,
        )
    else:
        ident = "" if version.before("3.0") else f", topicId={topic_id}"
        log = (
            f"Log(dir={DATA_DIR}/{tp}{ident}, topic={topic}, partition={p}, highWatermark=0, "
            f"lastStableOffset=0, logStartOffset=0, logEndOffset={leo})"
        )
        if version.before("3.3"):
            tail = f"with 1 segments in {took}ms ({i}/{n} loaded in {DATA_DIR})"
        elif version.before("3.6"):
            tail = f"with 1 segments in {took}ms ({i}/{n} completed in {DATA_DIR})"
        else:
            tail = (
                f"with 1 segments, local-log-start-offset 0 and log-end-offset {leo} in {took}ms "
                f"({i}/{n} completed in {DATA_DIR})"
            )
        write(ms, "INFO", f"Completed load of {log} {tail}", LOG_MANAGER)
