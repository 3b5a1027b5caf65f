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
