from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

# Under pytest-xdist a worker's ``__main__`` is execnet's, with neither a spec
# nor a file, which pyspark.sql.connect (imported by Great Expectations) takes
# for a doctest run without Spark Connect's extras, and exits the worker.
_main = sys.modules["__main__"]
if getattr(_main, "__spec__", None) is None and not hasattr(_main, "__file__"):
    _main.__file__ = "<pytest worker>"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local Spark session for every Spark-edge test."""
    import os

    from pipeline.session import get_spark

    # The suite runs hundreds of audits in one JVM (a run of the CLI is one
    # audit per process, with the default 1 GiB heap).
    os.environ.setdefault("EPOCHTRAIL_DRIVER_MEMORY", "2g")
    # Every test's input is small: the quick JIT (pipeline/session.py) cut
    # the evidence scenarios' module from 119 s to 99 s of CPU.
    os.environ.setdefault("EPOCHTRAIL_JIT", "quick")

    # every test's input is small (a session sized for one keeps its Python
    # workers between tasks, pipeline.session.reuse_python_workers)
    session = get_spark("local[2]", app_name="epochtrail-tests", input_size=1 << 20)
    yield session
    session.stop()


@pytest.fixture(scope="module", autouse=True)
def _release_cached_frames() -> Iterator[None]:
    """After each module, drop the frames its fixtures materialised: the runs
    release theirs, but tests keep ingest results in module fixtures, and in
    one long session their cached blocks would squeeze execution memory."""
    yield
    if "pyspark" not in sys.modules:
        return
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        return
    session.catalog.clearCache()
    for rdd in session.sparkContext._jsc.getPersistentRDDs().values():
        rdd.unpersist(False)
