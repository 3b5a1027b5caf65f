from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local Spark session for every Spark-edge test."""
    from pipeline.session import get_spark

    session = get_spark("local[2]", app_name="epochtrail-tests")
    yield session
    session.stop()
