"""The architecture's two hard boundaries, checked on the source."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(folder: Path) -> list[tuple[Path, int, str]]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [(path, node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((path, node.lineno, node.module))
    return found


def test_replay_imports_the_standard_library_only() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__", "replay"}
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path, line, module in imported_modules(ROOT / "replay")
        if module.split(".")[0] not in allowed
    ]
    assert offending == []


def test_the_simulator_never_imports_the_replay_core_or_the_pipeline() -> None:
    folder = ROOT / "simulator"
    assert any(folder.rglob("*.py"))
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path, line, module in imported_modules(folder)
        if module.split(".")[0] in {"replay", "pipeline", "schemas"}
    ]
    assert offending == []


def _ingest_modules_imported(path: Path) -> set[str]:
    """The ``pipeline.ingest`` modules a file imports (``from pipeline.ingest
    import x`` and ``from pipeline.ingest.x import y`` alike)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "pipeline.ingest":
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "pipeline.ingest."
        ):
            out.add((node.module or "").split(".")[2])
    return out


def test_ingest_reads_in_one_direction() -> None:
    """plan.py composes the readers; a reader depends on the line table and
    the shared outcome row, never on the plan; the line table depends on no
    reader (issue 11 item 5: no import circle, a plan that shows)."""
    folder = ROOT / "pipeline" / "ingest"
    readers = {
        "request_log", "broker_log", "metadata_dump", "segment_dump",
        "znode_dump", "checkpoint", "binary_segment", "kafka_binary", "bundle",
    }  # fmt: skip
    imports = {p.stem: _ingest_modules_imported(p) for p in folder.glob("*.py")}
    assert imports["lines"] & (readers | {"plan", "sniff"}) == {"bundle"}
    assert imports["outcome"] == set()
    offending = {name: got & {"plan", "sniff"} for name, got in imports.items() if name in readers}
    assert {k: v for k, v in offending.items() if v} == {}
    assert imports["__init__"] == {"plan"}
