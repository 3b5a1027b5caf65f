"""Tripwire: every table's schema is pinned; changing one is a deliberate act
(regenerate with `python -m tests.test_schemas`, and say why in the commit)."""

from __future__ import annotations

from pathlib import Path

from schemas import tables

GOLDEN = Path(__file__).parent / "golden" / "schemas.txt"
TABLES = {
    "raw_lines": tables.RAW_LINES,
    "partition_events": tables.PARTITION_EVENTS,
    "quarantine": tables.QUARANTINE,
    "file_stats": tables.FILE_STATS,
    **tables.GOLD_TABLES,
}


def render() -> str:
    out = []
    for name, schema in TABLES.items():
        out.append(f"{name}:")
        out += [
            f"  {f.name} {f.dataType.simpleString()}{'' if f.nullable else ' not null'}"
            for f in schema.fields
        ]
    return "\n".join(out) + "\n"


def test_schemas_match_the_pinned_copy() -> None:
    assert render() == GOLDEN.read_text()


def test_enum_domains_come_from_the_replay_core() -> None:
    from replay.types import FindingKind

    assert tuple(k.value for k in FindingKind) == tables.FINDING_KINDS
    assert "unclean_election" in tables.FINDING_KINDS


if __name__ == "__main__":
    GOLDEN.write_text(render())
