"""Hypothesis fuzz of ingest: lines of every input family, mutated, through
the real ingest, with exact accounting and no crash.

The families: the request log (JSON of 2.8+, text of 0.8 to 2.7), broker and
controller logs of every era the simulator writes (0.10, 0.10.1, 2.4, 3.x
KRaft, 4.0 with ELR) and the hand-written ones (log4j2 JSON layout, a pasted
ticket), the metadata dump, segment dumps, checkpoints, znode dumps (shell
transcript, tree dump), ``kafka-topics --describe`` output and binary
segments (metadata and data). An example is one file: some of a family's
lines, each kept or mutated (cut, bytes inserted, a digit changed, brackets
dropped, unicode inserted, lines swapped), LF or CRLF endings; a binary
segment's bytes cut, flipped or with bytes inserted.

Hypothesis draws the examples first (no Spark), then one ingest reads a
whole batch of them, each in its own folder: hundreds in the default run,
thousands under ``-m slow``. Every file must be listed; a text file's lines
read are exactly the lines written; read = parsed + ignored + quarantined,
none negative; every event and quarantine row is on a line of its file.
Failures found are kept in :data:`REGRESSIONS` and read in every run.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import simulator
from tests import test_ingest_binary as bn
from tests import test_ingest_broker_log as bl
from tests import test_ingest_broker_log_layouts as lay
from tests import test_ingest_metadata as md
from tests import test_ingest_request_log as rl
from tests import test_ingest_segment_dump as sd
from tests import test_ingest_zk_era as zk
from tests import test_ingest_znode as zn

#: the examples of the default run, read in one ingest
DEFAULT_EXAMPLES = 300
#: the examples under ``-m slow``, read in ingests of ``SLOW_BATCH``
SLOW_EXAMPLES = 3000
SLOW_BATCH = 600
#: the most lines of one family an example takes
MAX_LINES = 30

#: simulated clusters whose artefacts give each era's text families
ERAS = {
    "0.10": "seed000-hw-truncation-0.10",
    "0.10.1": "seed000-hw-truncation",
    "2.4": "zk-epoch-unclean",
    "3.x": "kraft-unclean-election",
    "4.0": "elr-5.3.3",
    "describe": "zk-unclean-describe-only",
}


@dataclass(frozen=True)
class Family:
    """An input family: where its file goes (the path says the observer and,
    for binary segments, the partition) and its valid content."""

    name: str
    path: str
    lines: tuple[str, ...] = ()
    data: bytes = b""

    @property
    def binary(self) -> bool:
        return bool(self.data)


def _simulated() -> list[Family]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for era, scenario in ERAS.items():
            root = Path(tmp) / era
            simulator.simulate(scenario, root, seed=0)
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root).as_posix()
                if not path.is_file() or rel == "truth.json":
                    continue
                if rel.startswith(("broker-2/", "broker-3/")):
                    continue  # broker 1's files stand for every broker's
                lines = path.read_text().splitlines()[:200]
                if lines:
                    out.append(Family(f"{era}:{rel}", rel, tuple(lines)))
    return out


def _binary() -> list[Family]:
    metadata = (
        bn.control_batch(0)
        + bn.batch(1, [bn.topic_record("orders"), bn.partition_record()])
        + bn.batch(3, [bn.partition_change(leader=2)], codec=bn.LZ4)
        + bn.batch(4, [bn.partition_change(leader=3, isr=[3])])
        + bn.batch(5, [bn.register_broker(1, 7, False)])
    )
    data = (
        bn.legacy_message(0)
        + bn.batch(1, [b"a", b"b"], epoch=3)
        + bn.batch(3, [b"c"], epoch=4, codec=bn.SNAPPY)
        + bn.batch(4, [b"d", b"e"], epoch=5, codec=bn.ZSTD)
    )
    return [
        Family("metadata segment", "broker-1/__cluster_metadata-0/00000000000000000000.log",
               data=metadata),
        Family("metadata snapshot", "broker-1/__cluster_metadata-0/"
               "00000000000000000006-0000000001.checkpoint", data=metadata),
        Family("data segment", "broker-1/orders-0/00000000000000000000.log", data=data),
    ]  # fmt: skip


@cache
def families() -> list[Family]:
    """Every family, hand-written or simulated."""
    # imported here: that module takes ``mutated`` from this one
    from tests import test_ingest_request_log_text as rt

    return [
        Family("request log JSON", "broker-2/kafka-request.log", tuple(rl.BROKER_1_LINES)),
        Family("request log JSON, controller", "controller/kafka-request.log",
               tuple(rl.CONTROLLER_LINES)),
        Family("request log text", "broker-1/kafka-request.log", tuple(rt.VALID_TEXT)),
        Family("request log text, ZooKeeper era", "broker-3/kafka-request.log",
               tuple(zk.REQUEST_LOG)),
        Family("state-change log", "broker-1/state-change.log",
               tuple(bl.STATE_CHANGE + zk.CONTROLLER_STATE_CHANGE)),
        Family("server log", "broker-1/server.log", tuple(bl.SERVER_LOG + zk.CONTROLLER_LOG)),
        Family("controller log", "controller/controller.log", tuple(bl.CONTROLLER)),
        Family("container log", "broker-1/container.log", tuple(bl.CONTAINER)),
        Family("log4j2 JSON layout", "broker-1/server.json.log", tuple(lay.JSON_LOG)),
        Family("pasted ticket", "broker-2/ticket.txt",
               tuple(t.decode() for t in lay.TICKET if len(t) < 4096 and b"\xff" not in t)),
        Family("metadata dump", "controller/metadata.txt", tuple(md.SEGMENT + md.SNAPSHOT)),
        Family("metadata dump, old and skipped", "controller/old.txt", tuple(md.OLD_AND_SKIPPED)),
        Family("segment dump", "broker-3/segment-dump.txt", tuple(sd.DUMP + md.DATA_DUMP)),
        Family("leader-epoch-checkpoint", "broker-3/orders-0/leader-epoch-checkpoint",
               ("0", "3", "0 0", "2 1200", "5 3200")),
        Family("replication-offset-checkpoint", "broker-3/replication-offset-checkpoint",
               ("0", "2", "orders 0 3200", "payments 1 17")),
        Family("znode shell transcript", "zk/shell.txt",
               tuple(zn.SHELL + zn.STDERR_FIRST + zn.NO_PATH)),
        Family("znode tree dump", "zk/brokers/topics/payments/partitions/0/state",
               (zn.TREE_LINES[0].decode(),)),
        *_simulated(),
        *_binary(),
    ]  # fmt: skip


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
def mutated_binary(draw: st.DrawFn, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["cut", "flip", "insert", "keep"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "cut":
            data = data[:at]
        elif op == "flip" and data:
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif op == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    return data


@dataclass(frozen=True)
class Example:
    """One file: a family's path and the bytes written there; ``lines`` is
    the number of lines written (None for a binary segment)."""

    family: str
    path: str
    content: bytes
    lines: int | None


@st.composite
def example(draw: st.DrawFn, family: Family) -> Example:
    if family.binary:
        content = draw(mutated_binary(family.data))
        return Example(family.name, family.path, content, None)
    count = draw(st.integers(1, min(MAX_LINES, len(family.lines))))
    first = draw(st.integers(0, len(family.lines) - count))
    lines = [draw(mutated(line)) for line in family.lines[first : first + count]]
    if len(lines) > 1 and draw(st.booleans()):
        i = draw(st.integers(0, len(lines) - 2))
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    return Example(family.name, family.path, eol.join(lines) + eol, len(lines))


def draw_examples(count: int, draw: int) -> list[Example]:
    """``count`` examples, as many of each family (give or take one), the
    same every run for the same ``draw``."""
    out: list[Example] = []
    every = families()
    for i, family in enumerate(every):
        out += _draw(family, count // len(every) + (i < count % len(every)), draw)
    return out


def _draw(family: Family, count: int, draw: int) -> list[Example]:
    out: list[Example] = []
    if not count:
        return out

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(example(family), st.just(draw))
    def collect(ex: Example, _draw: int) -> None:
        out.append(ex)

    collect()
    return out


#: Examples that once failed (kept as they were found).
REGRESSIONS: list[Example] = []


def ingest_and_check(spark: Any, examples: list[Example]) -> list[str]:
    """Write each example to its own folder, ingest them all at once, and
    return what is wrong (empty = every file accounted for exactly)."""
    from pipeline.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        expected: dict[str, Example] = {}
        for i, ex in enumerate(examples):
            name = f"ex{i:05d}/{ex.path}"
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(ex.content)
            expected[name] = ex
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
    prefix = root.name + "/"
    got = {s.path.split(prefix, 1)[1]: s for s in stats}
    problems = [f"not listed: {n} ({expected[n]})" for n in sorted(set(expected) - set(got))]
    problems += [f"listed, never written: {n}" for n in sorted(set(got) - set(expected))]
    for name, s in sorted(got.items()):
        ex = expected.get(name)
        if ex is None:
            continue
        parts = (s.lines_parsed, s.lines_ignored, s.lines_quarantined)
        if ex.lines is not None and s.lines_read != ex.lines:
            problems.append(f"{name}: read {s.lines_read} of {ex.lines} lines ({ex})")
        if sum(parts) != s.lines_read or min(parts) < 0:
            problems.append(f"{name}: read {s.lines_read} != {parts} ({ex})")
    for row in rows:
        name = row.source_file.split(prefix, 1)[1]
        read = got[name].lines_read if name in got else 0
        if not 1 <= row.line_no <= read:
            problems.append(f"{name}: a row on line {row.line_no} of {read} ({expected[name]})")
    return problems


def test_every_family_is_drawn_and_the_draw_is_the_same_every_run() -> None:
    examples = draw_examples(DEFAULT_EXAMPLES, 0)
    assert len(examples) == DEFAULT_EXAMPLES
    assert examples == draw_examples(DEFAULT_EXAMPLES, 0)
    eras = {f.name.split(":", 1)[0] for f in families() if ":" in f.name}
    assert eras == set(ERAS)
    # every family in every default run, at least four times
    per_family = Counter(ex.family for ex in examples)
    assert set(per_family) == {f.name for f in families()}
    assert min(per_family.values()) >= 4


@pytest.mark.spark
def test_hundreds_of_mutated_files_never_crash_and_account_exactly(spark: Any) -> None:
    examples = REGRESSIONS + draw_examples(DEFAULT_EXAMPLES, 0)
    assert ingest_and_check(spark, examples) == []


@pytest.mark.slow
@pytest.mark.spark
def test_thousands_of_mutated_files_never_crash_and_account_exactly(spark: Any) -> None:
    examples = draw_examples(SLOW_EXAMPLES, 1)
    problems = []
    for start in range(0, len(examples), SLOW_BATCH):
        problems += ingest_and_check(spark, examples[start : start + SLOW_BATCH])
    assert problems == []
