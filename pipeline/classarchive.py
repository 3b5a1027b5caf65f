"""The driver JVM's class archive (AppCDS): Spark's classes loaded once, at set-up.

A Spark driver loads some 25,000 classes from about 280 jars on every start,
parsing and verifying each; the README demo spent most of its Spark start
doing so. A dynamic class-data-sharing archive (JDK 13+,
``-XX:ArchiveClassesAtExit``) keeps those classes parsed and verified in one
file that later JVMs map: measured on this project's machine, a bare session
start took 3.1 s with it against 6.1 s without, and the demo's Spark start
3.0 s against 5.0 s (docs/performance.md, "Spark's classes, archived").

``bash setup.sh`` builds the archive once (``python -m pipeline.classarchive``)
by running the bundled demo incident with ``ArchiveClassesAtExit``; every
later driver JVM maps it (``session.get_spark``). It belongs to one Java and
one set of Spark jars: its name carries a key of both, so a new Java or a new
PySpark finds no archive under its key and runs without one until set-up
builds it again (the JVM also checks the jars itself and, on any mismatch,
runs without it). ``EPOCHTRAIL_CLASS_ARCHIVE=off`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ENV = "EPOCHTRAIL_CLASS_ARCHIVE"

#: The run that fills the archive: the README demo's incident (request logs,
#: a metadata dump, broker logs; the replay and the writes)
TRAINING_INPUT = Path(__file__).resolve().parents[1] / "examples" / "unclean-election"


def _java() -> Path | None:
    java = shutil.which("java")
    if java is None and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        java = str(candidate) if candidate.exists() else None
    return None if java is None else Path(java).resolve()


def _spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def archive_key() -> str | None:
    """What an archive belongs to: the Java binary and the Spark jars (names
    and sizes), hashed; None without a Java."""
    java = _java()
    if java is None:
        return None
    digest = hashlib.sha256()
    stat = java.stat()
    digest.update(f"{java}\0{stat.st_size}\0{int(stat.st_mtime)}\n".encode())
    jars = _spark_jars()
    if jars.is_dir():
        for jar in sorted(jars.iterdir()):
            digest.update(f"{jar.name}\0{jar.stat().st_size}\n".encode())
    return digest.hexdigest()[:20]


#: where the archive lives, when not beside the installation (tests)
DIR_ENV = "EPOCHTRAIL_CLASS_ARCHIVE_DIR"


def archive_dir() -> Path:
    """Beside the installation (the virtual environment's ``var/``), or
    ``EPOCHTRAIL_CLASS_ARCHIVE_DIR``."""
    chosen = os.environ.get(DIR_ENV)
    return Path(chosen) if chosen else Path(sys.prefix) / "var" / "epochtrail"


def archive_path(key: str | None = None) -> Path | None:
    key = key if key is not None else archive_key()
    return None if key is None else archive_dir() / f"spark-classes-{key}.jsa"


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "false", "no")


#: JVM logging of the archive off: a stale one is dropped silently (the JVM
#: then loads the classes as usual), and nothing reaches the CLI's output
QUIET = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]


def jvm_options() -> list[str]:
    """The driver JVM options that map the archive, when there is one."""
    if not enabled():
        return []
    path = archive_path()
    if path is None or not path.is_file():
        return []
    return [f"-XX:SharedArchiveFile={path}", *QUIET]


def build(force: bool = False, timeout_s: float = 600.0) -> Path | None:
    """Build the archive for this Java and these jars by running the demo
    incident in this process's own Spark (which must not be running yet).
    Returns its path, or None when it could not be built (said on stderr)."""
    key = archive_key()
    target = archive_path(key)
    if target is None:
        print("class archive: no Java found; not built", file=sys.stderr)
        return None
    if target.is_file() and not force:
        print(f"class archive: {target} (up to date)")
        return target
    if not TRAINING_INPUT.is_dir():
        print(f"class archive: {TRAINING_INPUT} is missing; not built", file=sys.stderr)
        return None
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        raise RuntimeError("the class archive is built by a process whose Spark has not started")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    os.environ[ENV] = "off"  # dumping, not mapping
    os.environ["EPOCHTRAIL_JAVA_OPTS"] = " ".join(
        [os.environ.get("EPOCHTRAIL_JAVA_OPTS", ""), f"-XX:ArchiveClassesAtExit={partial}", *QUIET]
    ).strip()
    started = time.perf_counter()
    from pyspark.sql import SparkSession

    from pipeline.run import RunOptions, run_job
    from pipeline.session import end_spark

    with tempfile.TemporaryDirectory(prefix="epochtrail-archive-") as out:
        run_job(RunOptions(paths=[str(TRAINING_INPUT)], out=out, validate=False))
        spark = SparkSession.getActiveSession()
        if spark is not None:
            # the JVM writes the archive as it exits, which takes a while
            end_spark(spark, timeout_s=timeout_s)
    if not partial.is_file() or partial.stat().st_size == 0:
        with contextlib.suppress(OSError):
            partial.unlink()
        print("class archive: the JVM wrote none; runs go without it", file=sys.stderr)
        return None
    os.replace(partial, target)
    for old in archive_dir().glob("spark-classes-*.jsa"):
        if old != target:
            with contextlib.suppress(OSError):
                old.unlink()
    size = target.stat().st_size >> 20
    took = time.perf_counter() - started
    print(f"class archive: {target} ({size} MiB, built in {took:.0f} s)")
    return target


def main() -> None:
    """``python -m pipeline.classarchive [--force]``: build it unless it is
    there; exit 1 when it could not be built (the tool works without)."""
    force = "--force" in sys.argv[1:]
    if not enabled():
        print(f"class archive: {ENV}=off; not built")
        return
    if build(force=force) is None:
        sys.exit(1)


if __name__ == "__main__":
    main()
