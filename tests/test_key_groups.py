"""The replay's Arrow function meets each partition's rows as one table
(pipeline/bridge.py ``key_groups``), however Spark cut them into batches."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.bridge import key_groups


def _batch(keys: list[tuple[str, str, int]], first_seq: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "cluster": [k[0] for k in keys],
            "topic_key": [k[1] for k in keys],
            "partition": pa.array([k[2] for k in keys], pa.int32()),
            "seq": list(range(first_seq, first_seq + len(keys))),
        }
    )


def _groups(batches: list[pa.RecordBatch]) -> list[tuple[tuple[str, str, int], list[int]]]:
    out = []
    for table in key_groups(batches):
        keys = set(zip(table["cluster"].to_pylist(), table["topic_key"].to_pylist(),
                       table["partition"].to_pylist(), strict=True))  # fmt: skip
        assert len(keys) == 1
        out.append((keys.pop(), table["seq"].to_pylist()))
    return out


A, B, C = ("c1", "orders", 0), ("c1", "orders", 1), ("c2", "orders", 0)


def test_a_partition_cut_across_batches_is_one_table() -> None:
    batches = [_batch([A, A, B], 0), _batch([B, B], 3), pa.RecordBatch.from_pydict(
        {"cluster": [], "topic_key": [], "partition": pa.array([], pa.int32()), "seq": []},
        schema=_batch([A], 0).schema), _batch([B, C], 5)]  # fmt: skip
    assert _groups(batches) == [(A, [0, 1]), (B, [2, 3, 4, 5]), (C, [6])]


def test_keys_that_differ_in_any_part_are_apart() -> None:
    assert _groups([_batch([A, B, C, C], 0)]) == [(A, [0]), (B, [1]), (C, [2, 3])]


def test_no_batch_no_group() -> None:
    assert _groups([]) == []


def test_a_partition_met_again_is_refused_not_replayed_in_halves() -> None:
    with pytest.raises(RuntimeError, match="c1/orders/0 reached the replay apart"):
        _groups([_batch([A, B], 0), _batch([A], 2)])
