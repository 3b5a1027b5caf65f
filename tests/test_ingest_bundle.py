"""Incident bundles: .tar.gz / .tgz / .zip extracted safely before ingest (bundle.py)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import accounting

STATE_CHANGE = (
    "[2024-05-01 10:00:01,500] INFO [Broker id=1] Follower orders-1 starts at leader epoch 6 "
    "from offset 2987 with high watermark 2900. Previous leader epoch was 5. "
    "(state.change.logger)\n"
    "[2024-05-01 10:00:02,500] INFO something else (kafka.server.KafkaServer)\n"
)


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            payload = data.get(m.name)
            if payload is not None:
                m.size = len(payload)
            tf.addfile(m, io.BytesIO(payload) if payload is not None else None)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type = kind
    m.linkname = link
    return m


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundles")
    (root / "in").mkdir()
    (root / "in" / "notes.txt").write_text("hello\n")
    _tar(
        root / "in" / "incident.tar.gz",
        [
            _member("broker-1/state-change.log"),
            _member("broker-1/big.log"),
            _member("../escape.log"),
            _member("/etc/abs.log"),
            _member("broker-1/link", tarfile.SYMTYPE, "/etc/passwd"),
            _member("broker-1/hard", tarfile.LNKTYPE, "broker-1/state-change.log"),
            _member("dev", tarfile.CHRTYPE),
        ],
        {
            "broker-1/state-change.log": STATE_CHANGE.encode(),
            "broker-1/big.log": b"x" * 5000,
            "../escape.log": b"no\n",
            "/etc/abs.log": b"no\n",
        },
    )
    with zipfile.ZipFile(root / "in" / "more.zip", "w") as zf:
        zf.writestr("broker-2/notes.txt", "a\nb\n")
        zf.writestr("..\\..\\evil.txt", "no\n")
    (root / "in" / "broken.tgz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    return root


def test_extract_refuses_unsafe_members(tree: Path, tmp_path: Path) -> None:
    from pipeline.ingest import bundle

    paths, bundles = bundle.expand([str(tree / "in")], str(tmp_path), member_limit=4096)
    by_name = {Path(b.archive).name: b for b in bundles}
    assert set(by_name) == {"incident.tar.gz", "more.zip", "broken.tgz"}
    inc = by_name["incident.tar.gz"]
    assert inc.members == 7
    assert sorted(r for _, r in inc.refused) == sorted(
        ["member larger than 4096 bytes", "member path escapes the extraction folder",
         "member path escapes the extraction folder", "link or special member",
         "link or special member", "link or special member"]
    )  # fmt: skip
    assert [p.relative_to(inc.target).as_posix() for p in inc.target.rglob("*") if p.is_file()] == [
        "broker-1/state-change.log"
    ]
    assert not (tmp_path / "escape.log").exists()
    assert by_name["more.zip"].refused == [
        ("..\\..\\evil.txt", "member path escapes the extraction folder")
    ]
    assert by_name["broken.tgz"].refused[0][1].startswith("unreadable archive: ")
    # the folder's other files are passed one by one, the bundles as folders
    assert str(tree / "in" / "notes.txt") in paths
    assert not any(p.endswith((".zip", ".tgz", ".tar.gz")) for p in paths)


def test_total_limit(tree: Path, tmp_path: Path) -> None:
    from pipeline.ingest import bundle

    _, bundles = bundle.expand([str(tree / "in" / "incident.tar.gz")], str(tmp_path),
                               total_limit=100)  # fmt: skip
    reasons = [r for _, r in bundles[0].refused]
    assert "bundle larger than 100 bytes" in reasons


@pytest.mark.spark
def test_ingest_reads_bundles(spark: Any, tree: Path, tmp_path: Path) -> None:
    from pipeline.ingest import ingest

    r = ingest(spark, [str(tree / "in")], cluster="prod", work_dir=str(tmp_path),
               bundle_member_limit=4096)  # fmt: skip
    stats = {s.path.split("/in/", 1)[1]: s.asDict() for s in r.file_stats.collect()}
    got = accounting(stats)
    assert got == {
        "notes.txt": ("unrecognised", None, 1, 0, 1, 0),
        "incident.tar.gz": ("bundle", None, 7, 0, 1, 6),
        "incident.tar.gz!/broker-1/state-change.log": ("broker_log", 1, 2, 1, 1, 0),
        "more.zip": ("bundle", None, 2, 0, 1, 1),
        "more.zip!/broker-2/notes.txt": ("unrecognised", 2, 2, 0, 2, 0),
        "broken.tgz": ("bundle", None, 1, 0, 0, 1),
    }
    events = r.events.collect()
    assert [(e.kind, e.line_no, e.observer, e.source_file.split("/in/", 1)[1]) for e in events] == [
        ("become_follower", 1, 1, "incident.tar.gz!/broker-1/state-change.log")
    ]
    q = sorted((x.source_file.split("/in/", 1)[1], x.line_no, x.reason, x.text)
               for x in r.quarantine.collect())  # fmt: skip
    assert len(q) == 8 and all(line == 0 for _, line, _, _ in q)
    assert ("incident.tar.gz", 0, "refused bundle member: link or special member",
            "broker-1/link") in q  # fmt: skip
