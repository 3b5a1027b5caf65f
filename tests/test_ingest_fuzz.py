"""Hypothesis fuzz of ingest: valid lines of every kind, mutated (cut, bytes
inserted, digits swapped, braces dropped, random unicode, CRLF endings), then
one ingest per example batch: no exception, and exact accounting per file
(every line read, read = parsed + ignored + quarantined, nothing negative,
every event and quarantine row on a line of its file).

Few examples (each a Spark job over a handful of files): ~40 s with Spark start.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import (
    test_ingest_broker_log as bl,
)
from tests import (
    test_ingest_broker_log_layouts as lay,
)
from tests import (
    test_ingest_metadata as md,
)
from tests import (
    test_ingest_request_log as rl,
)
from tests import (
    test_ingest_segment_dump as sd,
)
from tests import (
    test_ingest_zk_era as zk,
)
from tests import (
    test_ingest_znode as zn,
)

pytestmark = pytest.mark.spark

#: One file per kind: (folder, name, valid lines).
SOURCES: list[tuple[str, str, list[str]]] = [
    ("broker-1", "state-change.log", bl.STATE_CHANGE + zk.CONTROLLER_STATE_CHANGE),
    ("broker-1", "server.log", bl.SERVER_LOG + zk.CONTROLLER_LOG),
    ("broker-2", "kafka-request.log", rl.BROKER_1_LINES + zk.REQUEST_LOG),
    ("controller", "metadata.txt", md.SEGMENT + md.SNAPSHOT),
    ("broker-3", "segment-dump.txt", sd.DUMP),
    ("broker-3/orders-0", "leader-epoch-checkpoint", ["0", "2", "0 0", "5 3200"]),
    # log4j2 JSON layouts; lines pasted without layout and re-flowed (the
    # ticket's readable lines: the 2 MB one would only slow the fuzz down)
    ("broker-1", "server.json.log", lay.JSON_LOG),
    (
        "broker-2",
        "ticket.txt",
        [t.decode() for t in lay.TICKET if len(t) < 4096 and b"\xff" not in t],
    ),
    # ZooKeeper znode dumps: shell transcripts and a tree dump's one-line file
    ("zk", "shell.txt", zn.SHELL + zn.STDERR_FIRST + zn.NO_PATH),
    ("zk/brokers/topics/payments/partitions/0", "state", [zn.TREE_LINES[0].decode()]),
]

#: No line breaks inside a line: the file's line count stays known.
_NO_EOL = st.characters(exclude_characters="\r\n", exclude_categories=("Cs",))


@st.composite
def mutated(draw: st.DrawFn, line: str) -> bytes:
    op = draw(st.sampled_from(["keep", "cut", "bytes", "digits", "braces", "unicode"]))
    data = line.encode()
    if op == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if op == "bytes":
        at = draw(st.integers(0, len(data)))
        junk = draw(st.binary(min_size=1, max_size=8)).replace(b"\n", b"").replace(b"\r", b"")
        return data[:at] + junk + data[at:]
    if op == "digits":
        digits = [m.start() for m in re.finditer(r"\d", line)]
        if not digits:
            return data
        i = draw(st.sampled_from(digits))
        return (line[:i] + str(draw(st.integers(0, 9))) + line[i + 1 :]).encode()
    if op == "braces":
        return re.sub(r"[{}\[\]()]", "", line, count=draw(st.integers(1, 4))).encode()
    if op == "unicode":
        at = draw(st.integers(0, len(line)))
        return (line[:at] + draw(st.text(_NO_EOL, min_size=1, max_size=6)) + line[at:]).encode()
    return data


@st.composite
def batch(draw: st.DrawFn) -> list[tuple[str, str, list[bytes], bytes]]:
    files = []
    for folder, name, lines in SOURCES:
        out = [draw(mutated(line)) for line in lines]
        eol = draw(st.sampled_from([b"\n", b"\r\n"]))
        files.append((folder, name, out, eol))
    return files


@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(files=batch())
def test_mutated_lines_never_crash_and_account_exactly(
    spark: Any, files: list[tuple[str, str, list[bytes], bytes]]
) -> None:
    from pipeline.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        expected: dict[str, int] = {}
        for folder, name, lines, eol in files:
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / name).write_bytes(eol.join(lines) + eol)
            expected[f"{folder}/{name}"] = len(lines)
        r = ingest(spark, [str(root)], cluster="fuzz", persist=True)
        try:
            stats = r.file_stats.collect()
            rows = (
                r.quarantine.select("source_file", "line_no")
                .union(r.events.select("source_file", "line_no"))
                .collect()
            )
        finally:
            r.unpersist()
    got = {s.path.split(root.name + "/", 1)[1]: s for s in stats}
    assert set(got) == set(expected)
    for key, s in got.items():
        assert s.lines_read == expected[key], key
        assert s.lines_parsed + s.lines_ignored + s.lines_quarantined == s.lines_read, key
        assert min(s.lines_parsed, s.lines_ignored, s.lines_quarantined) >= 0, key
    for row in rows:
        key = row.source_file.split(root.name + "/", 1)[1]
        assert 1 <= row.line_no <= expected[key], (key, row.line_no)
