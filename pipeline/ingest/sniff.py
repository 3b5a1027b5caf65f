"""What each input file is, from its first bytes, on the driver.

Files are recognised by content (DESIGN.md "Inputs"). A person, or ``file``,
knows a Kafka artefact from its first lines: a request log says ``Completed
request:``, a dump starts ``Dumping``, a broker log is in a log4j layout,
a checkpoint is a number over a number. So the driver reads the head of
every listed file (the first :data:`HEAD_BYTES`, decompressed) and decides
its kind there, before Spark reads anything:

* each family is then read only from its own files, by a plan that holds
  only its own parser (no plan ever carries a parser for a kind absent from
  the input, and no line is tested against every family's marks);
* a small file (at most :data:`SMALL_FILE_BYTES` decompressed) is read whole
  here, so it is numbered exactly and costs Spark no file scan (a broker's
  data dir holds thousands of tiny checkpoint files);
* a file that is not text (zero-filled preallocated indexes, heap dumps,
  archives of anything: mostly NUL or control bytes in its head) is never
  read as lines: Hadoop's line reader would try to hold a whole "line" of
  hundreds of megabytes. It is listed with kind ``binary`` and the reason.

The kind is the head's vote, by the rules of :func:`classify` (the same
votes the readers' marks cast before, now over the head's complete lines):
a file whose first :data:`HEAD_BYTES` hold no line of any kind, and whose
name is no Kafka artefact's (:func:`kind_by_name`), is ``unrecognised`` (its
lines are counted and ignored by rule).
"""

from __future__ import annotations

import bz2
import gzip
import os
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.ingest import (
    broker_log,
    bundle,
    checkpoint,
    metadata_dump,
    request_log,
    segment_dump,
    views,
    znode_dump,
)
from pipeline.ingest.lines import UNRECOGNISED, local_file, split_lines

#: How much of a big file's head decides its kind.
HEAD_BYTES = 64 << 10
#: A file at most this large (decompressed) is read whole on the driver.
SMALL_FILE_BYTES = 1 << 20
#: The most the driver reads whole in one run; later small files go to Spark.
DRIVER_BUDGET_BYTES = 16 << 20
#: Checkpoint files are judged whole (Kafka reads them whole): read on the
#: driver up to this size (a broker with a million partitions writes ~40 MB).
CHECKPOINT_BYTES = 256 << 20

BINARY = "binary"
BINARY_REASON = "binary content (mostly NUL or control bytes): not a text artefact, not read"
#: A text file with no line break in its whole head and no mark of any
#: artefact: its "first line" alone is longer than the head (a file of one
#: endless line, a gzip that inflates to gigabytes of one character). No
#: reader could use it, and reading it as lines would inflate all of it.
NO_LINE_BREAK_REASON = (
    f"no line break in its first {HEAD_BYTES >> 10} KiB and no mark of any artefact:"
    " not read as lines"
)

#: Bytes that appear in text: printable ASCII, tab, LF, VT, FF, CR, ESC
#: (ANSI colours) and every byte >= 0x80 (UTF-8 sequences).
_TEXT_BYTES = bytes([9, 10, 11, 12, 13, 27, *range(32, 127), *range(128, 256)])


@dataclass(frozen=True)
class Sniffed:
    """One listed file as its head shows it."""

    path: str
    kind: str
    #: why the file is not read as lines (kind ``binary``), else None
    note: str | None = None
    #: the whole (decompressed) content, when the file is small
    content: bytes | None = None


# --- reading heads -----------------------------------------------------------------


def _inflate(raw: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes of a decompressing stream; on damage, what came
    out before it (Spark keeps the lines read before a corrupt block too)."""
    out = bytearray()
    try:
        while len(out) < limit:
            chunk = raw.read(min(1 << 16, limit - len(out)))
            if not chunk:
                break
            out += chunk
    except (OSError, EOFError, zlib.error, ValueError):
        pass
    return bytes(out)


_PYTHON_CODECS: dict[str, Callable[[str], Any]] = {
    ".gz": lambda p: gzip.open(p, "rb"),  # noqa: SIM115  (opened in a with below)
    ".bz2": lambda p: bz2.open(p, "rb"),  # noqa: SIM115
}
#: Hadoop's codec extensions (CompressionCodecFactory): read through the JVM.
_HADOOP_CODECS = (".deflate", ".lz4", ".snappy", ".zst")
#: how much a compressed input counts for when a run is sized before Spark
#: starts (``input_bytes``): gzip'd logs inflate about eight-fold
COMPRESSED_WEIGHT = 8
COMPRESSED_SUFFIXES = (*_PYTHON_CODECS, *_HADOOP_CODECS, *bundle.SUFFIXES)


def input_bytes(paths: Sequence[str]) -> int | None:
    """Bytes a run will read from local ``paths`` (a folder: every file under
    it), compressed files and bundles counted inflated; None when any path
    is remote (its size is not cheap to know) or missing. Sizes the driver
    JVM before Spark starts (``session.quick_jit``)."""
    total = 0
    for path in paths:
        local = local_file(path)
        if local is None:
            return None
        root = Path(local)
        if root.is_file():
            files = [root]
        elif root.is_dir():
            files = [p for p in root.rglob("*") if p.is_file()]
        else:
            return None
        for f in files:
            try:
                size = f.stat().st_size
            except OSError:
                continue
            packed = f.name.lower().endswith(COMPRESSED_SUFFIXES)
            total += size * COMPRESSED_WEIGHT if packed else size
    return total


def read_head(spark: Any, path: str, limit: int) -> bytes:
    """The first ``limit`` bytes of a file as Spark's text source sees it
    (decompressed by extension). A file that cannot be read gives b""."""
    local = local_file(path)
    ext = os.path.splitext(path)[1].lower()
    try:
        if local is not None and ext not in _HADOOP_CODECS:
            opener = _PYTHON_CODECS.get(ext)
            if opener is None:
                with open(local, "rb") as fh:
                    return fh.read(limit)
            with opener(local) as fh:
                return _inflate(fh, limit)
        return _hadoop_head(spark, path, limit)
    except OSError:
        return b""


def _hadoop_head(spark: Any, path: str, limit: int) -> bytes:
    """The head through Hadoop's FileSystem and codecs (remote files, and
    codecs Python does not read)."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    fs = hpath.getFileSystem(conf)
    stream = fs.open(hpath)
    try:
        codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(conf).getCodec(hpath)
        if codec is not None:
            stream = codec.createInputStream(stream)
        return bytes(stream.readNBytes(limit))
    except Exception:  # noqa: BLE001  (py4j errors: a damaged file reads as empty)
        return b""
    finally:
        stream.close()


def _size(path: str) -> int | None:
    local = local_file(path)
    if local is None:
        return None
    try:
        return os.path.getsize(local)
    except OSError:
        return None


def looks_binary(head: bytes) -> bool:
    """Mostly bytes no text has: NULs (preallocated index files, sparse
    files) or control bytes. A log with a stray NUL is still text."""
    sample = head[:HEAD_BYTES]
    if not sample:
        return False
    if sample.count(0) * 10 >= len(sample):
        return True
    other = len(sample.translate(None, _TEXT_BYTES))
    return other * 10 >= len(sample) * 3


# --- the vote --------------------------------------------------------------------------


def classify(path: str, lines: Sequence[str]) -> str:
    """A file's kind from its (head) lines: the readers' marks vote.

    A checkpoint by name and first line (it has no other mark); then the
    votes: a request log when its lines outnumber a dump's and a broker
    log's (a request log may quote anything in a client id, a dump anything
    in a payload, a broker log a stray request line); a data-segment dump
    by its ``Dumping`` headers alone (payloads never vote); a znode dump
    when its state lines outnumber dump and broker-log marks; a
    point-in-time view (``views.py``) when its tools' lines outnumber dump
    and broker-log marks; then a metadata dump; then a broker log; then a
    file at least half of whose lines are GetOffsetShell's plain
    ``topic:partition:offset`` (too plain to outvote anything); then a file
    whose lines are in the log4j layout (a broker log, even when no line is
    one we read). Last, a file carrying a Kafka artefact's own name and at
    least one line is that artefact (:func:`kind_by_name`), never
    ``unrecognised``.
    """
    if checkpoint.is_checkpoint_file(path, lines[0] if lines else None):
        return checkpoint.KIND
    rl = md = bl = sd = mh = zn = vw = go = filled = layout = 0
    for line in lines:
        if request_log.marks_line(line):
            rl += 1
            continue
        md += metadata_dump.marks_line(line)
        bl += broker_log.marks_line(line)
        sd += segment_dump.marks_line(line)
        mh += segment_dump.metadata_header_line(line)
        zn += znode_dump.marks_line(line)
        vw += views.marks_line(line)
        go += views.offsets_line(line)
        filled += bool(line.strip())
        layout += broker_log.layout_line(line)
    if rl > md and rl >= bl and rl > 0:
        return request_log.KIND
    if sd > 0 and mh == 0:
        return segment_dump.KIND
    if zn > 0 and zn > md and zn > bl:
        return znode_dump.KIND
    if vw > 0 and vw > md and vw > bl:
        return views.KIND
    if md > 0 and md >= bl:
        return metadata_dump.KIND
    if bl > 0:
        return broker_log.KIND
    if go > 0 and go * 2 >= filled:
        return views.KIND
    if layout > 0:
        return broker_log.KIND
    return kind_by_name(path) if lines else UNRECOGNISED


#: Kafka's own file names (rotations and compression suffixes after them).
_LOG_NAMES = ("server.log", "state-change.log", "controller.log")
_REQUEST_LOG_NAMES = ("kafka-request.log",)


def kind_by_name(path: str) -> str:
    """The kind a Kafka artefact's own file name says (no line voted), else
    ``unrecognised``: its reader then reads what it can and quarantines what
    it cannot (a checkpoint of the wrong shape gets Kafka's own reason)."""
    name = path.rsplit("/", 1)[-1]
    if checkpoint.checkpoint_name(path) is not None:
        return checkpoint.KIND
    if name.startswith(_LOG_NAMES):
        return broker_log.KIND
    if name.startswith(_REQUEST_LOG_NAMES):
        return request_log.KIND
    return UNRECOGNISED


def _decode(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")


def sniff_one(spark: Any, path: str) -> Sniffed:
    size = _size(path)
    bound = CHECKPOINT_BYTES if checkpoint.checkpoint_name(path) else SMALL_FILE_BYTES
    small_on_disk = size is not None and size <= bound
    compressed = os.path.splitext(path)[1].lower() in (*_PYTHON_CODECS, *_HADOOP_CODECS)
    # A small plain file is read whole; a compressed one may inflate past the
    # bound, which reading one byte more tells.
    want = bound + 1 if (small_on_disk or compressed) else HEAD_BYTES
    data = read_head(spark, path, want)
    whole = len(data) <= bound and (small_on_disk or compressed)
    head = data if whole else data[:HEAD_BYTES]
    if looks_binary(head):
        return Sniffed(path, BINARY, BINARY_REASON)
    lines = split_lines(head)
    if not whole and lines and not head.endswith((b"\n", b"\r")):
        lines.pop()  # the head cut its last line
    kind = classify(path, [_decode(line) for line in lines[:4096]])
    if kind == UNRECOGNISED and not whole and len(head) >= HEAD_BYTES and not lines:
        return Sniffed(path, UNRECOGNISED, NO_LINE_BREAK_REASON)
    if kind == checkpoint.KIND and not whole:
        # Kafka reads a checkpoint whole, and so do its verdicts: a file this
        # large is no checkpoint Kafka wrote. Its lines are counted, not read.
        kind = UNRECOGNISED
    return Sniffed(path, kind, None, data if whole else None)


def sniff(spark: Any, paths: Sequence[str]) -> list[Sniffed]:
    """Every file's :class:`Sniffed`, in the order given. Local heads are
    read by a few threads (file reads and zlib release the GIL); small files
    past :data:`DRIVER_BUDGET_BYTES` in all are left to Spark."""
    local = [p for p in paths if local_file(p) is not None]
    remote = [p for p in paths if local_file(p) is None]
    found: dict[str, Sniffed] = {}
    with ThreadPoolExecutor(max_workers=min(8, max(1, len(local)))) as pool:
        for s in pool.map(lambda p: sniff_one(spark, p), local):
            found[s.path] = s
    for p in remote:  # py4j calls: one at a time
        found[p] = sniff_one(spark, p)
    budget = DRIVER_BUDGET_BYTES
    out: list[Sniffed] = []
    for p in paths:
        s = found[p]
        content = s.content
        if content is not None and s.kind != checkpoint.KIND:
            if len(content) > budget:
                s = Sniffed(s.path, s.kind, s.note, None)
            else:
                budget -= len(content)
        out.append(s)
    return out
