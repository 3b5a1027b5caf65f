from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local Spark session for every Spark-edge test."""
    import os

    from pipeline.session import get_spark

    # The suite runs hundreds of audits in one JVM (a run of the CLI is one
    # audit per process, with the default 1 GiB heap).
    os.environ.setdefault("EPOCHTRAIL_DRIVER_MEMORY", "2g")

    session = get_spark("local[2]", app_name="epochtrail-tests")
    yield session
    session.stop()
