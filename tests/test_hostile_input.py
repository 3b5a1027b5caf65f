"""Whatever else a broker's folder holds is read in bounded memory.

People copy whole log directories into a ticket: preallocated index files
full of zero bytes, heap dumps, archives that inflate to gigabytes. Beside
the bundled incident, such files must neither end the run nor change its
findings, and the manifest must account for each with its reason. The JVM
heap is the default one.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.ingest.sniff import BINARY_REASON, NO_LINE_BREAK_REASON, looks_binary
from pipeline.run import read_table

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]
INCIDENT = ROOT / "examples" / "unclean-election"
MIB = 1 << 20

#: The bundled incident's findings: (kind, topic, partition, epoch, start, end).
STORY = [
    ("committed_data_loss", "orders", 0),
    ("hwm_regression", "orders", 0),
    ("truncation_below_hwm", "orders", 0),
    ("unclean_election", "orders", 0),
]


def _bomb(path: Path, chunk: bytes, members: int) -> None:
    """A gzip of ``members`` members, each the compression of ``chunk``:
    gzip readers concatenate members, so it inflates to members * len(chunk)
    bytes from a few megabytes on disk."""
    member = gzip.compress(chunk, compresslevel=9)
    with path.open("wb") as fh:
        for _ in range(members):
            fh.write(member)


def _findings(out: Path) -> list[tuple[object, ...]]:
    rows = read_table(str(out), "anomalies")
    return sorted(
        (
            r["kind"],
            r["topic"],
            r["partition"],
            r["leader_epoch"],
            r["offset_start"],
            r["offset_end"],
        )
        for r in rows
    )


def test_a_head_of_zeros_or_control_bytes_is_binary_and_a_log_with_a_stray_nul_is_not() -> None:
    assert looks_binary(bytes(4096))
    assert looks_binary(bytes(range(1, 9)) * 512)
    line = b"[2024-05-01 10:00:00,000] INFO text (kafka.server.KafkaServer)\n"
    assert not looks_binary(line * 40 + b"\x00" + line * 40)


@pytest.mark.slow
def test_zero_filled_files_and_gzip_bombs_beside_real_logs(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    clean = tmp_path / "clean"
    CliRunner().invoke(app, ["run", str(INCIDENT), "--out", str(clean), "--no-validate"])
    expected = _findings(clean)
    assert [f[:3] for f in expected] == STORY

    folder = tmp_path / "incident"
    shutil.copytree(INCIDENT, folder)
    data_dir = folder / "broker-1" / "data" / "orders-0"
    data_dir.mkdir(parents=True)
    zeros = data_dir / "00000000000000000000.timeindex"
    with zeros.open("wb") as fh:  # a preallocated index: 300 MB of zero bytes
        fh.truncate(300 * MIB)
    zero_bomb = folder / "broker-2" / "heap.bin.gz"
    _bomb(zero_bomb, bytes(64 * MIB), 64)  # 4 GiB of zeros
    line_bomb = folder / "broker-3" / "server.log.2024-05-01.gz"
    _bomb(line_bomb, b"x" * (64 * MIB), 64)  # 4 GiB of one line
    assert zero_bomb.stat().st_size < 16 * MIB and line_bomb.stat().st_size < 16 * MIB

    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(folder), "--out", str(out), "--no-validate"])
    assert result.exit_code == 1, result.output
    assert _findings(out) == expected

    import json

    manifest = json.loads((out / "run_manifest.json").read_text())
    by_name = {Path(f["path"]).name: f for f in manifest["files"]}
    assert by_name[zeros.name]["kind"] == "binary"
    assert by_name[zeros.name]["note"] == BINARY_REASON
    assert by_name[zero_bomb.name]["kind"] == "binary"
    assert by_name[zero_bomb.name]["note"] == BINARY_REASON
    assert by_name[line_bomb.name]["kind"] == "unrecognised"
    assert by_name[line_bomb.name]["note"] == NO_LINE_BREAK_REASON
    for name in (zeros.name, zero_bomb.name, line_bomb.name):
        assert by_name[name]["lines_read"] == 0
        assert by_name[name]["accounted"]
    assert "not read as lines: 3 file(s)" in result.output
