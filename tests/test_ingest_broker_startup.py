"""Ingest of a broker's startup lines: log load and recovery (formats-addendum.md
10) and the version and config markers (13), in their 0.8.2 to 4.x forms.

One ingest reads a hand-made tree (every form, built from the addendum's
templates, with cut and garbled lines) and two simulator runs with startup
lines on (0.10.1 and 3.6), whose lines are checked against the events.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting, events_of, non_null

pytestmark = pytest.mark.spark

DATA = "/var/lib/kafka/data"
LM = "(kafka.log.LogManager)"
LOG = "(kafka.log.Log)"
LOADER = "(kafka.log.LogLoader)"
CFG = " (kafka.server.KafkaConfig)"
APP = "(org.apache.kafka.common.utils.AppInfoParser)"
L0 = f"[Log partition=orders-0, dir={DATA}]"
LL1 = f"[LogLoader partition=orders-1, dir={DATA}]"


def at(second: int, level: str, message: str) -> str:
    return f"[2024-02-10 06:00:{second:02d},020] {level} {message}"


def t(second: int) -> dt.datetime:
    return dt.datetime(2024, 2, 10, 6, 0, second, 20000)


#: broker 1: a 0.10.1 broker after a crash, then its version and config.
OLD = [
    # 1: 0.8.2-2.5 print nothing that decides clean or unclean: null
    at(1, "INFO", f"Loading logs. {LM}"),
    # 2: 10.2 <= 0.11
    at(1, "INFO", f"Recovering unflushed segment 0 in log orders-0. {LOG}"),
    # 3: 10.3 0.10.1-0.10.2
    at(1, "INFO", f"Completed load of log orders-0 with 1 log segments and log end offset 1200 in "
       f"12 ms {LOG}"),
    # 4: 10.2 <= 0.11 corrupt segment
    at(1, "WARN", f"Corruption found in segment 1100 of log orders-1, truncating to offset 1150. "
       f"{LOG}"),
    # 5: ignored by rule
    at(2, "INFO", f"Logs loading complete in 29 ms. {LM}"),
    # 6: 13.1 0.9-2.1
    at(3, "INFO", f"Kafka version : 0.10.1.1 {APP}"),
    # 7-12: 13.2, a multi-line message: its key lines are read one by one
    at(3, "INFO", "KafkaConfig values: "),
    "\tinter.broker.protocol.version = 0.10.1-IV2",
    "\tmin.insync.replicas = 2",
    "\tunclean.leader.election.enable = false",
    "\tzookeeper.connect = zk1:2181/kafka",
    CFG,
    # 13: cut inside a template: quarantined
    at(4, "INFO", "Completed load of log orders-0 with 1 log segm"),
    # 14: garbled value: quarantined
    at(4, "INFO", f"Recovering unflushed segment x1 in log orders-0. {LOG}"),
    # 15: not a log line at all: quarantined
    "%%%% garbage %%%%",
    # 16: cut before the words that tell its template: quarantined
    at(5, "INFO", f"Skipping recovery of 2 logs from {DATA} since clean"),
]  # fmt: skip

#: broker 2: the 1.0-4.x forms.
NEW = [
    # 1: 10.1 2.6-3.4 unclean
    at(10, "INFO", f"Attempting recovery for all logs in {DATA} since no clean shutdown file was "
       f"found {LM}"),
    # 2: 10.2 1.0-2.8 (the partition in the prefix)
    at(10, "INFO", f"{L0} Recovering unflushed segment 0 {LOG}"),
    # 3: 10.3 2.6-3.2
    at(10, "INFO", f"Completed load of Log(dir={DATA}/orders-0, topic=orders, partition=0, "
       "highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=1200) with 1 segments "
       f"in 12ms (1/1 loaded in {DATA}) {LM}"),
    # 4: 10.1 3.5+ clean
    at(11, "INFO", f"Skipping recovery of 2 logs from {DATA} since clean shutdown file was found "
       f"{LM}"),
    # 5: 10.3 3.6+ (topic id, local-log-start-offset)
    at(11, "INFO", f"Completed load of Log(dir={DATA}/orders-1, topicId=5LHkG7R4S0aKxLbBzyP8wA, "
       "topic=orders, partition=1, highWatermark=0, lastStableOffset=0, logStartOffset=100, "
       "logEndOffset=1300) with 2 segments, local-log-start-offset 100 and log-end-offset 1300 in "
       f"450ms (2/2 completed in {DATA}) {LM}"),
    # 6: 10.1 3.5+ unclean
    at(12, "INFO", f"Recovering 2 logs from {DATA} since no clean shutdown file was found {LM}"),
    # 7: 10.2 3.3-3.9
    at(12, "INFO", f"{LL1} Recovering unflushed segment 1100. 0/1 recovered for orders-1. "
       f"{LOADER}"),
    # 8: 10.2 Java LogLoader (integer division)
    at(12, "INFO", f"{LL1} Recovering unflushed segment 1100. 0 recovered for orders-1. "
       "(org.apache.kafka.storage.internals.log.LogLoader)"),
    # 9: 10.3 producer state while loading
    at(12, "INFO", f"{LL1} Loading producer state till offset 1250 with message format version 2 "
       "(kafka.log.UnifiedLog$)"),
    # 10: the same text after a truncation: ignored by rule
    at(13, "INFO", f"[UnifiedLog partition=orders-1, dir={DATA}] Loading producer state till "
       "offset 1180 with message format version 2 (kafka.log.UnifiedLog$)"),
    # 11: 10.2 1.0+ corrupt segment
    at(13, "WARN", f"{LL1} Corruption found in segment 1100, truncating to offset 1240 {LOADER}"),
    # 12: 10.2 1.0+ invalid offset
    at(13, "WARN", f"{L0} Found invalid offset during recovery. Deleting the corrupt segment and "
       f"creating an empty one with starting offset 1000 {LOG}"),
    # 13: 10.3 1.0-2.5
    at(13, "INFO", f"{L0} Completed load of log with 1 segments, log start offset 0 and log end "
       f"offset 1000 in 5 ms {LOG}"),
    # 14: 10.1 <= 2.5 DEBUG clean
    at(14, "DEBUG", "Found clean shutdown file. Skipping recovery for all logs in data directory: "
       f"{DATA} {LM}"),
    # 15: 13.1 2.2+
    at(15, "INFO", f"Kafka version: 3.6.0 {APP}"),
    # 16-20: 13.2 KRaft
    at(15, "INFO", "KafkaConfig values: "),
    "\tprocess.roles = [broker]",
    "\tzookeeper.connect = null",  # KRaft: no mode from it, ignored by rule
    "\tunclean.leader.election.enable = true",
    CFG,
    # 21: 13.2 0.8.2
    at(16, "INFO", "Property unclean.leader.election.enable is overridden to false "
       "(kafka.utils.VerifiableProperties)"),
    # 22: 10.3 0.8.2-0.10.0
    at(16, "INFO", f"Completed load of log orders-2 with log end offset 77 {LOG}"),
    # 23: cut inside a template: quarantined
    at(17, "INFO", f"Recovering 2 logs from {DATA} since no clean shutdown file was fou"),
    # 24: a value out of range: quarantined
    "\tmin.insync.replicas = two",
    # 25: ZooKeeper mode in 2.8+
    "\tprocess.roles = []",
]  # fmt: skip


def sim(out: Path) -> None:
    import simulator

    simulator.simulate("seed000-hw-truncation-0.10", out / "zk010", startup_lines=True)
    simulator.simulate("kraft-recovery-cut", out / "kraft36")
    for p in list(out.rglob("*")):
        if p.is_file() and p.name != "server.log":
            p.unlink()  # the server logs only: their startup lines


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("startup")
    for name, lines in (("broker-1", OLD), ("broker-2", NEW)):
        (root / "hand" / name).mkdir(parents=True)
        (root / "hand" / name / "server.log").write_text("\n".join(lines) + "\n")
    sim(root / "sim")
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], cluster="prod")
    root = str(tree) + "/"
    return {
        "root": tree,
        "schemas": (r.events.schema, r.quarantine.schema, r.file_stats.schema),
        "events": [e.asDict() for e in r.events.collect()],
        "quarantine": sorted(
            (q.source_file.split(root, 1)[1], q.line_no, q.reason) for q in r.quarantine.collect()
        ),
        "file_stats": {s.path.split(root, 1)[1]: s.asDict() for s in r.file_stats.collect()},
    }


def test_schemas_are_the_contract(result: dict[str, Any]) -> None:
    from schemas.tables import FILE_STATS, PARTITION_EVENTS, QUARANTINE

    assert result["schemas"] == (PARTITION_EVENTS, QUARANTINE, FILE_STATS)


def test_accounting_per_file(result: dict[str, Any]) -> None:
    got = {k: v for k, v in accounting(result["file_stats"]).items() if k.startswith("hand/")}
    assert got == {
        "hand/broker-1/server.log": ("broker_log", 1, 16, 9, 3, 4),
        "hand/broker-2/server.log": ("broker_log", 2, 25, 19, 4, 2),
    }


def test_load_and_recovery_every_version(result: dict[str, Any]) -> None:
    old = events_of(result, "hand/broker-1/server.log")
    startup = ("broker_restart", "log_recovered", "recovery_truncation", "log_end_at_load")
    assert [non_null(r) for r in old if r["kind"] in startup] == [
        {"line_no": 1, "kind": "broker_restart", "replica": 1},  # clean_shutdown null
        {"line_no": 2, "kind": "log_recovered", "topic": "orders", "partition": 0, "replica": 1,
         "base_offset": 0},
        {"line_no": 3, "kind": "log_end_at_load", "topic": "orders", "partition": 0, "replica": 1,
         "leo": 1200},
        {"line_no": 4, "kind": "recovery_truncation", "topic": "orders", "partition": 1,
         "replica": 1, "base_offset": 1100, "truncate_to": 1150},
    ]  # fmt: skip
    assert old[0]["clean_shutdown"] is None and old[0]["partition"] is None
    assert [r["event_time"] for r in old[:4]] == [t(1)] * 4
    new = events_of(result, "hand/broker-2/server.log")
    assert [non_null(r) for r in new if r["kind"] in startup] == [
        {"line_no": 1, "kind": "broker_restart", "replica": 2, "clean_shutdown": False},
        {"line_no": 2, "kind": "log_recovered", "topic": "orders", "partition": 0, "replica": 2,
         "base_offset": 0},
        {"line_no": 3, "kind": "log_end_at_load", "topic": "orders", "partition": 0, "replica": 2,
         "leo": 1200, "log_start_offset": 0},
        {"line_no": 4, "kind": "broker_restart", "replica": 2, "clean_shutdown": True},
        {"line_no": 5, "kind": "log_end_at_load", "topic": "orders", "partition": 1, "replica": 2,
         "leo": 1300, "log_start_offset": 100},
        {"line_no": 6, "kind": "broker_restart", "replica": 2, "clean_shutdown": False},
        {"line_no": 7, "kind": "log_recovered", "topic": "orders", "partition": 1, "replica": 2,
         "base_offset": 1100},
        {"line_no": 8, "kind": "log_recovered", "topic": "orders", "partition": 1, "replica": 2,
         "base_offset": 1100},
        {"line_no": 9, "kind": "log_end_at_load", "topic": "orders", "partition": 1, "replica": 2,
         "leo": 1250},
        {"line_no": 11, "kind": "recovery_truncation", "topic": "orders", "partition": 1,
         "replica": 2, "base_offset": 1100, "truncate_to": 1240},
        {"line_no": 12, "kind": "recovery_truncation", "topic": "orders", "partition": 0,
         "replica": 2, "truncate_to": 1000},
        {"line_no": 13, "kind": "log_end_at_load", "topic": "orders", "partition": 0, "replica": 2,
         "leo": 1000, "log_start_offset": 0},
        {"line_no": 14, "kind": "broker_restart", "replica": 2, "clean_shutdown": True},
        {"line_no": 22, "kind": "log_end_at_load", "topic": "orders", "partition": 2, "replica": 2,
         "leo": 77},
    ]  # fmt: skip


def test_version_and_config_markers(result: dict[str, Any]) -> None:
    rows = [
        non_null(r)
        for name in ("hand/broker-1/server.log", "hand/broker-2/server.log")
        for r in events_of(result, name)
        if r["kind"] == "broker_config"
    ]
    assert rows == [
        {"line_no": 6, "kind": "broker_config", "replica": 1, "kafka_version": "0.10.1.1"},
        {"line_no": 8, "kind": "broker_config", "replica": 1,
         "inter_broker_protocol": "0.10.1-IV2"},
        {"line_no": 9, "kind": "broker_config", "replica": 1, "min_isr": 2},
        {"line_no": 10, "kind": "broker_config", "replica": 1, "unclean_election_enabled": False},
        {"line_no": 11, "kind": "broker_config", "replica": 1, "mode": "zk"},
        {"line_no": 15, "kind": "broker_config", "replica": 2, "kafka_version": "3.6.0"},
        {"line_no": 17, "kind": "broker_config", "replica": 2, "mode": "kraft"},
        {"line_no": 19, "kind": "broker_config", "replica": 2, "unclean_election_enabled": True},
        {"line_no": 21, "kind": "broker_config", "replica": 2, "unclean_election_enabled": False},
        {"line_no": 25, "kind": "broker_config", "replica": 2, "mode": "zk"},
    ]  # fmt: skip


def test_quarantine(result: dict[str, Any]) -> None:
    from pipeline.ingest.broker_log import NOT_A_LOG_LINE_REASON

    got = [q for q in result["quarantine"] if q[0].startswith("hand/")]
    assert got == [
        ("hand/broker-1/server.log", 13, "unrecognised log_end_at_load message"),
        ("hand/broker-1/server.log", 14, "unrecognised log_recovered message"),
        ("hand/broker-1/server.log", 15, NOT_A_LOG_LINE_REASON),
        ("hand/broker-1/server.log", 16, "unrecognised broker_restart message"),
        ("hand/broker-2/server.log", 23, "unrecognised broker_restart message"),
        ("hand/broker-2/server.log", 24, "unrecognised broker_config message"),
    ]


# --- the simulator's startup lines, read back ---------------------------------------------

#: An independent reading of what the simulator writes (simulator/startup.py).
_EXPECT = [
    (re.compile(r"\] INFO Loading logs\. "), lambda m: ("broker_restart", None, None, None)),
    (re.compile(r"since no clean shutdown file was found"),
     lambda m: ("broker_restart", None, None, False)),
    (re.compile(r"since clean shutdown file was found"),
     lambda m: ("broker_restart", None, None, True)),
    (re.compile(r"Recovering unflushed segment (\d+)"),
     lambda m: ("log_recovered", None, int(m.group(1)), None)),
    (re.compile(r"Completed load of .*?(?:log end offset |logEndOffset=)(\d+)"),
     lambda m: ("log_end_at_load", None, int(m.group(1)), None)),
]  # fmt: skip


def test_simulated_startup_lines(result: dict[str, Any]) -> None:
    root: Path = result["root"]
    logs = sorted((root / "sim").rglob("server.log"))
    assert len(logs) == 5
    seen = 0
    for log in logs:
        rel = str(log.relative_to(root))
        expected = []
        for n, line in enumerate(log.read_text().splitlines(), start=1):
            for regex, what in _EXPECT:
                m = regex.search(line)
                if m:
                    kind, partition, value, clean = what(m)
                    expected.append((n, kind, value, clean))
                    break
        got = [
            (r["line_no"], r["kind"],
             r["base_offset"] if r["kind"] == "log_recovered" else r["leo"], r["clean_shutdown"])
            for r in events_of(result, rel)
            if r["kind"] in ("broker_restart", "log_recovered", "log_end_at_load")
        ]  # fmt: skip
        assert got == expected, rel
        assert all(
            r["replica"] == int(log.parent.name.split("-")[1])
            for r in events_of(result, rel)
            if r["kind"] in ("broker_restart", "log_recovered", "log_end_at_load")
        )
        seen += len(got)
    assert seen == 8  # the restarts of both runs, every line of them read
    assert not [q for q in result["quarantine"] if q[0].startswith("sim/") and "server" in q[0]]
