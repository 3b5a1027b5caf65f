"""The gold table ``replica_offsets`` from one partition's rows, in the
replay's Arrow function.

LEO and HWM change points per replica: a follower's fetch offset (with the
leader epoch it names) is its log end offset, and each change of it is a
row; the HWM in a leader's successful fetch answer is that leader's HWM, and
each change of it, across all its answers to every follower, is a row.

The replay's input is already what this table is read from (the compressed
fetches of one partition, ``reconstruct.compress``), so it is computed there,
with pyarrow and numpy over whole columns, before the rows are folded. As a
Spark plan of its own it read, shuffled and sorted all the fetches a second
time: 13.7 s of a 1 GiB run (docs/performance.md).

Order within a series is the events' local order (event time, nulls
first, then file and sequence), as everywhere else
(``reconstruct.LOCAL_ORDER_KEYS``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.reconstruct import LOCAL_ORDER_KEYS

#: the columns of the table the bridge carries (its ``date`` is the publisher's)
COLUMNS = (
    "cluster",
    "topic",
    "topic_id",
    "partition",
    "replica",
    "observer",
    "event_time",
    "leader_epoch",
    "leo",
    "hwm",
    "source_file",
    "line_no",
)


#: the input columns ``offset_changes`` reads: the table's own (``leo`` and
#: ``leader_epoch`` are named from ``fetch_offset`` and
#: ``current_leader_epoch``), the rows' kind and error, and the order's
_READ = [
    *(c for c in COLUMNS if c not in ("leo", "leader_epoch")),
    "fetch_offset",
    "current_leader_epoch",
    "kind",
    "error_code",
    "seq",
]


def _moved(values: list[np.ndarray], valid: list[np.ndarray], series: np.ndarray) -> np.ndarray:
    """For rows sorted by series then order: the first row of each series, and
    every row whose values differ (null-safe) from the row before it."""
    n = len(series)
    moved = np.ones(n, dtype=bool)
    if n < 2:
        return moved
    same = series[1:] == series[:-1]
    for v, ok in zip(values, valid, strict=True):
        both = ok[1:] & ok[:-1]
        equal = np.where(both, v[1:] == v[:-1], ok[1:] == ok[:-1])
        same &= equal
    moved[1:] = ~same
    return moved


def _column(table: pa.Table, name: str, fill: Any) -> tuple[np.ndarray, np.ndarray]:
    col = table[name]
    valid = pc.is_valid(col).to_numpy(zero_copy_only=False)
    return pc.fill_null(col, fill).to_numpy(zero_copy_only=False), valid


def _series_codes(table: pa.Table, names: tuple[str, ...]) -> np.ndarray:
    """One integer per run of equal ``names`` (nulls equal to each other
    only), for rows sorted by them."""
    change = np.zeros(table.num_rows, dtype=bool)
    if table.num_rows:
        change[0] = True
    for name in names:
        values, valid = _column(table, name, 0)
        change[1:] |= (values[1:] != values[:-1]) | (valid[1:] != valid[:-1])
    return np.cumsum(change)


def offset_changes(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The ``replica_offsets`` rows of one partition's compressed rows, as a
    table of ``schema`` (the bridge's union of gold columns, with the table
    name in ``table``)."""
    n = table.num_rows
    if not n:
        return schema.empty_table()
    # Only the columns read below: a filter or a take costs per column, and
    # the replay's table has some fifty (a third of this function's time).
    table = table.select(_READ)
    kind = table["kind"]
    fetches = table.filter(pc.equal(kind, "fetch_request"))
    error = pc.fill_null(table["error_code"], 0)
    answered = pc.and_(
        pc.and_(pc.equal(kind, "fetch_response"), pc.equal(error, 0)),
        pc.and_(pc.greater_equal(table["hwm"], 0), pc.is_valid(table["observer"])),
    )
    answers = table.filter(pc.fill_null(answered, False))

    # a follower's log end: per (observer, replica), each change of
    # (fetch offset, leader epoch named)
    fetches = fetches.take(
        pc.sort_indices(
            fetches,
            sort_keys=[
                ("observer", "ascending", "at_start"),
                ("replica", "ascending", "at_start"),
                *LOCAL_ORDER_KEYS,
            ],
        )
    )
    offset, offset_ok = _column(fetches, "fetch_offset", 0)
    epoch, epoch_ok = _column(fetches, "current_leader_epoch", 0)
    leo = fetches.filter(
        pa.array(
            _moved(
                [offset, epoch],
                [offset_ok, epoch_ok],
                _series_codes(fetches, ("observer", "replica")),
            )
        )
    )
    # a leader's HWM: per observer, across its answers to every follower
    answers = answers.take(
        pc.sort_indices(
            answers, sort_keys=[("observer", "ascending", "at_start"), *LOCAL_ORDER_KEYS]
        )
    )
    hwm, hwm_ok = _column(answers, "hwm", 0)
    hwms = answers.filter(pa.array(_moved([hwm], [hwm_ok], _series_codes(answers, ("observer",)))))

    def rows(part: pa.Table, is_leo: bool) -> dict[str, Any]:
        m = part.num_rows

        def nulls(name: str) -> Any:
            return pa.nulls(m, schema.field(name).type)

        return {
            "replica": part["replica"] if is_leo else part["observer"],
            "leader_epoch": part["current_leader_epoch"] if is_leo else nulls("leader_epoch"),
            "leo": part["fetch_offset"] if is_leo else nulls("leo"),
            "hwm": nulls("hwm") if is_leo else part["hwm"],
        }

    parts = []
    for part, is_leo in ((leo, True), (hwms, False)):
        m = part.num_rows
        if not m:
            continue
        own = rows(part, is_leo)
        keep = pc.and_(pc.is_valid(part["partition"]), pc.is_valid(own["replica"]))
        columns = []
        for f in schema:
            if f.name == "table":
                value = pa.repeat(pa.scalar("replica_offsets", f.type), m)
            elif f.name in own:
                value = own[f.name]
            elif f.name in COLUMNS:
                value = part[f.name]
            else:
                value = pa.nulls(m, f.type)
            columns.append(pc.cast(value, f.type) if value.type != f.type else value)
        parts.append(pa.Table.from_arrays(columns, schema=schema).filter(keep))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)
