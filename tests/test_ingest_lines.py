"""Reading, numbering, observers and hostile input (DESIGN.md "Inputs", "Hostile input").

Line numbers must be exact per file even when Spark splits a plain file into
several partitions; every byte is hostile and nothing in the input is fatal.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

pytestmark = pytest.mark.spark

TOPIC_ID = "5LHkG7R4S0aKxLbBzyP8wA"


def fetch_line(ts: str, replica: int, fetch_offset: int, client_id: str | None = None) -> str:
    """A follower Fetch v13 request-log line (kafka-formats.md 1.2, 1.6)."""
    body = {
        "isForwarded": False,
        "requestHeader": {
            "requestApiKey": 1,
            "requestApiVersion": 13,
            "correlationId": fetch_offset,
            "clientId": client_id or f"broker-{replica}-fetcher-0",
            "requestApiKeyName": "FETCH",
        },
        "request": {
            "replicaId": replica,
            "maxWaitMs": 500,
            "minBytes": 1,
            "maxBytes": 10485760,
            "isolationLevel": 0,
            "sessionId": 1,
            "sessionEpoch": 1,
            "topics": [
                {
                    "topicId": TOPIC_ID,
                    "partitions": [
                        {
                            "partition": 0,
                            "currentLeaderEpoch": 5,
                            "fetchOffset": fetch_offset,
                            "lastFetchedEpoch": 5,
                            "logStartOffset": 0,
                            "partitionMaxBytes": 1048576,
                        }
                    ],
                }
            ],
            "forgottenTopicsData": [],
            "rackId": "",
        },
        "response": {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 1, "responses": []},
        "connection": "10.0.0.1:9092-10.0.0.2:51514-3",
        "totalTimeMs": 0.5,
        "requestQueueTimeMs": 0.1,
        "localTimeMs": 0.1,
        "remoteTimeMs": 0.1,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": 0.1,
        "sendTimeMs": 0.1,
        "securityProtocol": "PLAINTEXT",
        "principal": "User:ANONYMOUS",
        "listener": "PLAINTEXT",
        "clientInformation": {"softwareName": "unknown", "softwareVersion": "unknown"},
    }
    return (
        f"[{ts}] DEBUG Completed request:{json.dumps(body, separators=(',', ':'))}"
        " (kafka.request.logger)"
    )


GOOD_1 = fetch_line("2024-05-01 10:00:00,000", 2, 100).encode()
BAD_BYTES = fetch_line("2024-05-01 10:00:01,000", 2, 101, client_id="broker-2-XX").encode()
BAD_BYTES = BAD_BYTES.replace(b"XX", b"\xff\xfe")
OTHER_LOGGER_BAD_BYTES = b"[2024-05-01 10:00:02,000] INFO \xc3\x28 garbled (kafka.server.X)"
HUGE = fetch_line("2024-05-01 10:00:03,000", 2, 102, client_id="x" * 2_000_000).encode()
GOOD_6 = fetch_line("2024-05-01 10:00:04,000", 3, 103).encode()
#: CRLF line endings throughout.
QUIRKS = b"\r\n".join([GOOD_1, BAD_BYTES, OTHER_LOGGER_BAD_BYTES, HUGE, b"", GOOD_6]) + b"\r\n"


def _blob(lines: int) -> bytes:
    """Binary junk: random bytes without CR/LF, cut into ``lines`` lines."""
    rng = random.Random(42)
    alphabet = [b for b in range(256) if b not in (0x0A, 0x0D)]
    return b"\n".join(bytes(rng.choice(alphabet) for _ in range(200)) for _ in range(lines))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    for d in ("broker-1", "misc", "kafka-3", "logs"):
        (root / d).mkdir()
    (root / "broker-1" / "quirks.log").write_bytes(QUIRKS)
    (root / "misc" / "blob.bin").write_bytes(_blob(7))  # no trailing newline: 7 lines
    (root / "misc" / "empty.log").write_bytes(b"")
    (root / "kafka-3" / "notes.txt").write_text("hello\nworld\n")
    (root / "logs" / "server.log").write_text(
        "[2024-05-01 10:00:00,000] INFO [KafkaServer id=4] started (kafka.server.KafkaServer)\n"
        + fetch_line("2024-05-01 10:00:05,000", 1, 7)
        + "\n"
    )
    return root


@pytest.fixture(scope="module")
def result(spark: Any, tree: Path) -> dict[str, Any]:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree)], broker_id=9)
    return {
        "schema": r.lines.schema,
        "events": sorted(
            (e.asDict() for e in r.events.collect()), key=lambda e: (e["source_file"], e["seq"])
        ),
        "quarantine": sorted(
            (q.asDict() for q in r.quarantine.collect()), key=lambda q: q["line_no"]
        ),
        "file_stats": {Path(s.path).name: s.asDict() for s in r.file_stats.collect()},
    }


def test_accounting_and_kinds(result: dict[str, Any]) -> None:
    got = accounting(result["file_stats"])
    assert got == {
        # good, bad bytes (Q), bad bytes in another logger's line (Q), 2 MB (Q), blank, good
        "quirks.log": ("request_log", 1, 6, 2, 1, 3),
        "blob.bin": ("unrecognised", 9, 7, 0, 7, 0),  # binary junk: ignored, never fatal
        "empty.log": ("unrecognised", 9, 0, 0, 0, 0),  # no line, still reported
        "notes.txt": ("unrecognised", 3, 2, 0, 2, 0),
        "server.log": ("request_log", 9, 2, 1, 1, 0),  # no broker in the path: --broker-id
    }


def test_quirks(result: dict[str, Any]) -> None:
    quirks = [e for e in result["events"] if e["source_file"].endswith("/quirks.log")]
    assert [(e["line_no"], e["kind"], e["replica"], e["fetch_offset"]) for e in quirks] == [
        (1, "fetch_request", 2, 100),  # CRLF: the JSON still ends in '}'
        (6, "fetch_request", 3, 103),  # numbered right after a 2 MB line
    ]
    assert quirks[1]["event_time"] == dt.datetime(2024, 5, 1, 10, 0, 4)
    q = result["quarantine"]
    assert [(x["line_no"], x["reason"], x["text_truncated"], x["date"]) for x in q] == [
        (2, "invalid UTF-8", False, "2024-05-01"),
        (3, "invalid UTF-8", False, "2024-05-01"),
        (4, "line longer than 1048576 characters", True, "2024-05-01"),
    ]
    assert "\ufffd" in q[0]["text"] and q[0]["text"].startswith("[2024-05-01 10:00:01,000]")
    assert q[2]["text"] == HUGE[:8192].decode()


def test_lines_schema(result: dict[str, Any]) -> None:
    from schemas.tables import RAW_LINES

    assert result["schema"] == RAW_LINES


def test_observer_from_the_path(spark: Any) -> None:
    from pyspark.sql import functions as F

    from pipeline.ingest.lines import observer

    paths = {
        "file:/x/broker-1/kafka-request.log": 1,
        "file:/x/broker=2/y.log.gz": 2,
        "file:/x/BROKER_3/sub/z.log": 3,
        "file:/x/kafka-4/a.log": 4,
        "file:/x/broker-1/kafka-5/b.log": 5,  # the directory nearest to the file
        "file:/x/kafka-logs/c.log": None,  # not broker-N
        "file:/x/broker-6.log": None,  # a file name, not a directory
        "file:/x/mybroker-7/d.log": None,  # not a whole directory name
        "file:/x/broker-99999999999/e.log": None,  # not an int
    }
    df = spark.createDataFrame([(p,) for p in paths], "p string")
    got = dict(df.select("p", observer(F.col("p"), None).alias("o")).collect())
    assert got == paths
    fallback = df.select(observer(F.col("p"), 8).alias("o")).collect()
    assert sorted({r.o for r in fallback}) == [1, 2, 3, 4, 5, 8]


@pytest.fixture()
def small_splits(spark: Any) -> Iterator[None]:
    """Make Spark cut a plain file into ~2 KiB splits (several partitions)."""
    key = "spark.sql.files.maxPartitionBytes"
    before = spark.conf.get(key)
    spark.conf.set(key, "2048")
    try:
        yield
    finally:
        spark.conf.set(key, before)


@pytest.mark.parametrize("route", ["driver", "spark"])
def test_line_numbers_exact_across_splits(
    spark: Any, tmp_path: Path, small_splits: None, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small files are read whole on the driver, large ones by Spark's text
    source (pipeline/ingest/lines.py): both number every line exactly."""
    from pyspark.sql import functions as F

    from pipeline.ingest import ingest, sniff

    if route == "spark":
        monkeypatch.setattr(sniff, "SMALL_FILE_BYTES", 0)

    fetch_at = {57: 1000, 180: 1001, 300: 1002}
    lines = [
        fetch_line("2024-05-01 10:00:00,000", 2, fetch_at[n])
        if n in fetch_at
        else f"[2024-05-01 10:00:00,000] INFO line {n:05d} {'.' * (n % 90)} (kafka.server.X)"
        for n in range(1, 301)
    ]
    (tmp_path / "broker-2").mkdir()
    big = tmp_path / "broker-2" / "kafka-request.log"
    big.write_text("\n".join(lines) + "\n")
    (tmp_path / "broker-2" / "small.log").write_text("a\nb\nc\n")  # shares partitions
    blocks = spark.read.text(str(big)).select("_metadata.file_block_start").distinct().count()
    assert blocks > 5  # the file really is split

    r = ingest(spark, [str(tmp_path)])
    numbered = r.lines.select("source_file", "line_no", "value").collect()
    by_file: dict[str, dict[int, str]] = {}
    for row in numbered:
        by_file.setdefault(Path(row.source_file).name, {})[row.line_no] = row.value
    assert by_file["kafka-request.log"] == dict(enumerate(lines, start=1))
    assert by_file["small.log"] == {1: "a", 2: "b", 3: "c"}

    events = r.events.select("line_no", "fetch_offset", "observer").collect()
    assert sorted((e.line_no, e.fetch_offset, e.observer) for e in events) == [
        (57, 1000, 2),
        (180, 1001, 2),
        (300, 1002, 2),
    ]
    if route == "driver":
        return
    # Line numbers hold only for the splits the pass saw: a later action under
    # other split settings fails loudly instead of misnumbering evidence.
    spark.conf.set("spark.sql.files.maxPartitionBytes", "128MB")
    with pytest.raises(Exception, match="changed between ingest"):
        r.lines.agg(F.max("line_no")).collect()


def test_small_and_large_files_pass_in_two_jobs_and_are_numbered_alike(
    spark: Any, tmp_path: Path, small_splits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small files' rows pass in a job of their own, interpreted, before
    the large files' scan (plan._pass): every line of both is numbered and
    read once, and the session's codegen settings are as they were."""
    from pipeline.ingest import ingest, sniff

    monkeypatch.setattr(sniff, "SMALL_FILE_BYTES", 4096)
    lines = [fetch_line("2024-05-01 10:00:00,000", 2, 1000 + n) for n in range(120)]
    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-2").mkdir()
    big = tmp_path / "broker-1" / "kafka-request.log"
    big.write_text("\n".join(lines) + "\n")
    small = tmp_path / "broker-2" / "kafka-request.log"
    small.write_text(lines[7] + "\nnot a request line\n")
    assert big.stat().st_size > 4096 >= small.stat().st_size
    settings = {k: spark.conf.get(k, None) for k in
                ("spark.sql.codegen.wholeStage", "spark.sql.codegen.factoryMode")}  # fmt: skip

    r = ingest(spark, [str(tmp_path)])

    events = r.events.select("source_file", "line_no", "fetch_offset", "observer").collect()
    assert sorted((Path(e.source_file).parent.name, e.line_no, e.fetch_offset, e.observer)
                  for e in events) == sorted(
        [("broker-1", n + 1, 1000 + n, 1) for n in range(120)] + [("broker-2", 1, 1007, 2)]
    )  # fmt: skip
    stats = {Path(f.path).parent.name: f for f in r.file_stats.collect()}
    assert (stats["broker-1"].lines_read, stats["broker-1"].lines_parsed) == (120, 120)
    assert (stats["broker-2"].lines_read, stats["broker-2"].lines_parsed) == (2, 1)
    assert len(r.cached) == 2
    assert settings == {k: spark.conf.get(k, None) for k in settings}
