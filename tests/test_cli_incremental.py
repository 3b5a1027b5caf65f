"""--state: day two continues from day one and ends as one run over both."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.run import read_table

pytestmark = pytest.mark.spark

INCIDENT = Path(__file__).resolve().parents[1] / "examples" / "unclean-election"
CUT = "[2024-05-01 10:06"  # after the unclean election, before broker 1 returns


def read(path: Path) -> list[str]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode().splitlines()


def write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())


def split_days(root: Path) -> tuple[Path, Path]:
    day1, day2 = root / "day1", root / "day2"
    metadata = "controller-3000/metadata-00000000000000000000.log.txt"
    for path in INCIDENT.rglob("*"):
        if not path.is_file():
            continue
        name = path.relative_to(INCIDENT).as_posix()
        lines = read(path)
        if name == metadata:
            # day one has the log as it was then; day two the whole log again
            cut = next(i for i, line in enumerate(lines) if "CreateTime: 1714558200000" in line)
            write(day1 / name, lines[: cut - 1])
            write(day2 / name, lines)
            continue
        write(day1 / name, [line for line in lines if line < CUT])
        write(day2 / name, [line for line in lines if line >= CUT])
    return day1, day2


def findings(out: Path) -> list[tuple[object, ...]]:
    return sorted(
        (
            r["anomaly_id"],
            r["kind"],
            r["leader_epoch"],
            r["replica"],
            r["offset_start"],
            r["offset_end"],
            r["records_lost"],
            tuple(r["caused_by"]),
        )
        for r in read_table(str(out), "anomalies")
    )


def test_day_two_from_saved_state_equals_one_run(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    day1, day2 = split_days(tmp_path)
    state = tmp_path / "state"
    runner = CliRunner()

    # what is compared is the findings; validation has its own tests
    quick = ["--no-validate"]
    first = runner.invoke(
        app, ["run", str(day1), "--out", str(tmp_path / "o1"), "--state", str(state), *quick]
    )
    # day one already holds the unclean election of 10:05 and its loss
    assert first.exit_code == 1, first.output
    second = runner.invoke(
        app, ["run", str(day2), "--out", str(tmp_path / "o2"), "--state", str(state), *quick]
    )
    assert second.exit_code == 1, second.output
    once = runner.invoke(app, ["run", str(INCIDENT), "--out", str(tmp_path / "once"), *quick])
    assert once.exit_code == 1

    assert findings(tmp_path / "o2") == findings(tmp_path / "once")
    assert len(findings(tmp_path / "once")) == 4
    assert (state / "CURRENT").read_text().startswith("v")
