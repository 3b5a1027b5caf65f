"""The driver JVM's class archive (pipeline/classarchive.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import classarchive

ROOT = Path(__file__).resolve().parents[1]


def test_no_archive_no_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(classarchive.DIR_ENV, str(tmp_path))
    monkeypatch.delenv(classarchive.ENV, raising=False)
    assert classarchive.jvm_options() == []


def test_an_archive_for_this_java_and_these_jars_is_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(classarchive.DIR_ENV, str(tmp_path))
    monkeypatch.delenv(classarchive.ENV, raising=False)
    path = classarchive.archive_path()
    assert path is not None and path.parent == tmp_path
    path.write_bytes(b"archive")
    options = classarchive.jvm_options()
    assert options[0] == f"-XX:SharedArchiveFile={path}"
    assert set(options[1:]) == set(classarchive.QUIET)
    monkeypatch.setenv(classarchive.ENV, "off")
    assert classarchive.jvm_options() == []


def test_the_key_follows_the_jars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another PySpark (other jars, or the same jar rebuilt to another size)
    finds no archive under its key: it runs without one until set-up builds it."""
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"x" * 10)
    monkeypatch.setattr(classarchive, "_spark_jars", lambda: jars)
    first = classarchive.archive_key()
    assert first is not None and first == classarchive.archive_key()
    (jars / "spark-core.jar").write_bytes(b"x" * 11)
    second = classarchive.archive_key()
    (jars / "spark-sql.jar").write_bytes(b"y")
    third = classarchive.archive_key()
    assert len({first, second, third}) == 3


def _classes_from_the_archive(env: dict[str, str], log: Path) -> int:
    """Start a bare session in a new JVM and count the classes it loaded
    from the dynamic archive (the JVM logs them as from the top layer)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from pipeline.session import get_spark\n"
        "get_spark(input_size=1000).range(1).count()\n"
    )
    env = {**env, "EPOCHTRAIL_JAVA_OPTS": f"-Xlog:class+load=info:file={log}"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return sum("shared objects file (top)" in line for line in log.read_text().splitlines())


@pytest.mark.slow
def test_setup_builds_an_archive_that_the_next_jvm_maps(tmp_path: Path) -> None:
    env = {**os.environ, classarchive.DIR_ENV: str(tmp_path)}
    env.pop(classarchive.ENV, None)
    built = subprocess.run(
        [sys.executable, "-m", "pipeline.classarchive"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    archives = list(tmp_path.glob("spark-classes-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 0
    assert "class archive:" in built.stdout
    # thousands of Spark's classes come from it; none without it
    assert _classes_from_the_archive(env, tmp_path / "with.log") > 5000
    env[classarchive.ENV] = "off"
    assert _classes_from_the_archive(env, tmp_path / "without.log") == 0
