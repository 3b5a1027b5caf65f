"""The driver JVM's JIT is chosen from the input's size (pipeline/session.py,
sized by pipeline/ingest/sniff.py)."""

from __future__ import annotations

import gzip

import pytest

from pipeline.ingest.sniff import COMPRESSED_WEIGHT, input_bytes
from pipeline.session import (
    QUICK_JIT_BELOW_BYTES,
    codegen_settings,
    end_spark_early,
    gc_options,
    jit_options,
    quick_jit,
    reuse_python_workers,
)


def test_input_bytes_counts_every_file_under_a_folder_and_compressed_ones_inflated(
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-1" / "server.log").write_bytes(b"x" * 1000)
    packed = gzip.compress(b"y" * 10_000)
    (tmp_path / "broker-1" / "server.log.1.gz").write_bytes(packed)
    single = tmp_path / "one.log"
    single.write_bytes(b"z" * 7)

    assert input_bytes([str(tmp_path / "broker-1")]) == 1000 + len(packed) * COMPRESSED_WEIGHT
    assert input_bytes([str(tmp_path / "broker-1"), str(single)]) == (
        1000 + len(packed) * COMPRESSED_WEIGHT + 7
    )
    assert input_bytes([f"file://{single}"]) == 7


def test_a_remote_or_missing_path_makes_the_size_unknown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert input_bytes(["s3a://bucket/logs"]) is None
    assert input_bytes([str(tmp_path / "absent")]) is None


def test_small_inputs_take_the_quick_jit_large_or_unknown_ones_the_full_one(
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("EPOCHTRAIL_JIT", raising=False)
    assert quick_jit(QUICK_JIT_BELOW_BYTES - 1) is True
    assert quick_jit(QUICK_JIT_BELOW_BYTES) is False
    assert quick_jit(None) is False


@pytest.mark.parametrize(
    ("chosen", "size", "expected"), [("full", 10, False), ("quick", None, True)]
)
def test_the_environment_decides_when_set(monkeypatch, chosen, size, expected) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EPOCHTRAIL_JIT", chosen)
    assert quick_jit(size) is expected


def test_the_quick_jit_keeps_the_tiered_code_cache(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """C1 alone would shrink the code cache to 48 MiB, which the test session
    filled (CI: "CodeCache is full", then a failed collect)."""
    monkeypatch.delenv("EPOCHTRAIL_JIT", raising=False)
    assert jit_options(1) == ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m"]
    assert jit_options(QUICK_JIT_BELOW_BYTES) == ["-XX:-DontCompileHugeMethods"]


def test_small_inputs_run_interpreted_large_or_unknown_ones_compiled(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("EPOCHTRAIL_CODEGEN", raising=False)
    assert codegen_settings(QUICK_JIT_BELOW_BYTES - 1) == {
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    }
    assert codegen_settings(QUICK_JIT_BELOW_BYTES) == {}
    assert codegen_settings(None) == {}
    monkeypatch.setenv("EPOCHTRAIL_CODEGEN", "on")
    assert codegen_settings(1) == {}
    monkeypatch.setenv("EPOCHTRAIL_CODEGEN", "off")
    assert codegen_settings(None)["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"


def test_large_inputs_end_spark_before_validation_small_ones_at_exit(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("EPOCHTRAIL_END_SPARK", raising=False)
    assert end_spark_early(QUICK_JIT_BELOW_BYTES) is True
    assert end_spark_early(None) is True
    assert end_spark_early(QUICK_JIT_BELOW_BYTES - 1) is False
    monkeypatch.setenv("EPOCHTRAIL_END_SPARK", "early")
    assert end_spark_early(1) is True
    monkeypatch.setenv("EPOCHTRAIL_END_SPARK", "late")
    assert end_spark_early(None) is False


@pytest.mark.spark
def test_the_test_session_runs_interpreted(spark) -> None:  # type: ignore[no-untyped-def]
    """The test session is a small input's (conftest): its settings are."""
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "false"
    assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"


def test_the_throughput_collector_unless_the_user_chose_one() -> None:
    assert gc_options([]) == ["-XX:+UseParallelGC"]
    assert gc_options(["-Xlog:gc"]) == ["-XX:+UseParallelGC"]
    # two collectors on one command line stop the JVM from starting
    assert gc_options(["-XX:+UseG1GC"]) == []
    assert gc_options(["-Xss2m", "-XX:+UseSerialGC"]) == []


@pytest.mark.spark
def test_the_session_jvm_runs_the_chosen_collector(spark) -> None:  # type: ignore[no-untyped-def]
    beans = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    names = {b.getName() for b in beans.getGarbageCollectorMXBeans()}
    assert names == {"PS Scavenge", "PS MarkSweep"}


def test_python_workers_outlive_their_task_for_small_inputs_only() -> None:
    assert reuse_python_workers(QUICK_JIT_BELOW_BYTES - 1) is True
    assert reuse_python_workers(QUICK_JIT_BELOW_BYTES) is False
    assert reuse_python_workers(None) is False


@pytest.mark.spark
def test_the_test_session_is_sized_for_small_inputs(spark) -> None:  # type: ignore[no-untyped-def]
    assert spark.conf.get("spark.python.worker.reuse") == "true"
