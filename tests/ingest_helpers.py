"""What the ingest tests share: reading back events and per-file accounting."""

from __future__ import annotations

from typing import Any


def accounting(file_stats: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """Per file: (kind, observer, read, parsed, ignored, quarantined)."""
    return {
        name: (s["kind"], s["observer"], s["lines_read"], s["lines_parsed"],
               s["lines_ignored"], s["lines_quarantined"])
        for name, s in file_stats.items()
    }  # fmt: skip


def events_of(result: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The events of the file whose path ends with ``name``, in file order."""
    rows = [e for e in result["events"] if e["source_file"].endswith("/" + name)]
    return sorted(rows, key=lambda e: e["seq"])


EVERY_EVENT = frozenset({"cluster", "source_file", "seq", "observer", "event_time"})


def non_null(row: dict[str, Any], common: frozenset[str] = EVERY_EVENT) -> dict[str, Any]:
    """The non-null columns of an event, minus ``common`` (those every event has)."""
    return {k: v for k, v in row.items() if v is not None and k not in common}
