"""pipeline.session: driver-built rows as a local relation; the replay's
Python workers started early."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pipeline.session import local_frame


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


@pytest.mark.spark
def test_rows_typed_by_ddl_with_nulls_are_a_local_table_scan(spark: Any) -> None:
    df = local_frame(spark, [("a", 1, 7), ("b", None, None)], "name string, n long, k int")
    assert [(f.name, f.dataType) for f in df.schema.fields] == [
        ("name", StringType()),
        ("n", LongType()),
        ("k", IntegerType()),
    ]
    assert [tuple(r) for r in df.collect()] == [("a", 1, 7), ("b", None, None)]
    # a LocalTableScan in the JVM: no parallelised RDD for Python workers to unpickle
    assert "LocalTableScan" in _plan(df)
    assert "Scan ExistingRDD" not in _plan(df)


@pytest.mark.spark
def test_no_rows_and_a_struct_type_with_a_timestamp(spark: Any) -> None:
    schema = StructType(
        [StructField("source_file", StringType()), StructField("at", TimestampType())]
    )
    empty = local_frame(spark, [], schema)
    assert empty.schema == schema
    assert empty.count() == 0
    at = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    one = local_frame(spark, [("f", at)], schema)
    [row] = one.select("source_file", F.unix_timestamp("at").alias("epoch_s")).collect()
    assert (row["source_file"], row["epoch_s"]) == ("f", int(at.timestamp()))


def test_an_unknown_ddl_type_is_refused() -> None:
    with pytest.raises(KeyError):
        local_frame(None, [], "x double")  # type: ignore[arg-type]


@pytest.mark.spark
def test_python_workers_start_early_and_pass_rows_through(spark: Any) -> None:
    """The early start of the replay's Python workers (session.
    prestart_python_workers) runs one job to the end in its thread; its
    worker function loads the replay's modules and passes batches through."""
    from pipeline.session import _load_replay, prestart_python_workers

    thread = prestart_python_workers(spark)
    thread.join(timeout=120)
    assert not thread.is_alive()
    rows = spark.range(3).mapInArrow(_load_replay, "id long").collect()
    assert sorted(r["id"] for r in rows) == [0, 1, 2]
