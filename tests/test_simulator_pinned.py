"""The simulator's existing artefacts stay byte for byte what they were.

Every artefact kind added later (consumer traffic, startup lines, pre-2.8
template sets, describe snapshots, pasted excerpts) is switched off by default:
with the knobs off, each named scenario and a few random clusters write
exactly the archive pinned in ``tests/golden/simulator-archives.json`` (one
SHA-256 over every file's relative path and bytes). A deliberate change of the
default output updates that file in the same commit (``python -m
tests.test_simulator_pinned`` rewrites it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import simulator

PINNED: dict[str, str] = json.loads(
    (Path(__file__).parent / "golden" / "simulator-archives.json").read_text(encoding="utf-8")
)


def archive_digest(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(out)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def case(key: str) -> tuple[str, int, dict[str, Any]]:
    name, seed, *knobs = key.split("/", 2)
    return name, int(seed), json.loads(knobs[0]) if knobs else {}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_default_output_is_byte_identical(tmp_path: Path, key: str) -> None:
    name, seed, knobs = case(key)
    simulator.simulate(name, tmp_path, seed=seed, **knobs)
    assert archive_digest(tmp_path) == PINNED[key]


def regenerate(path: Path = Path(__file__).parent / "golden" / "simulator-archives.json") -> None:
    """Rewrite the pinned digests from the current simulator (a deliberate change
    of the default output): ``python -m tests.test_simulator_pinned``."""
    import tempfile

    digests = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, key in enumerate(sorted(PINNED)):
            name, seed, knobs = case(key)
            out = Path(tmp) / str(i)
            simulator.simulate(name, out, seed=seed, **knobs)
            digests[key] = archive_digest(out)
    path.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    regenerate()
