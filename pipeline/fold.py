"""Fold the inside of rising fetch runs out of one partition's rows, before
they become Python objects.

On a busy partition a follower's fetch offset and its leader's HWM move on
almost every fetch, so Spark's compression (``reconstruct.compress``, runs of
equal values) keeps nearly every row, and each costs the replay its
conversion and its fold. But between two decisions about the partition (any
row outside ``OBSERVATION_KINDS``: a metadata record, a leader's ISR change, a
truncation, a restart), every fold of a rising value into the replay's state
is a maximum, a first or a last: a log end and a committed mark only rise; a
leader's first exposure and the first fetches after a decision sit at a run's
head, the latest fetches and HWM rises before a decision at its tail. The
inside of such a run changes nothing the replay decides.

So within a series (observer, replica, kind) and between decisions, a row is
left out when it is not among its run's first ``RUN_HEAD`` or last
``RUN_TAIL`` rows, its fixed fields (epochs, error, divergence) equal both
neighbours', its value lies between theirs, no earlier value of the run was
higher (a dip is kept whole, with the row that ends it), and neither it nor
a neighbour lies within twice the clock-skew allowance of a decision (where
the replay weighs the orders the clocks leave open). A row without a time is
kept, and a partition with an untimed decision is not folded: such a row may
lie anywhere.

Every kept row carries ``folded_after``: how many rows of its series were
left out between it and the next kept one. A leader's answers are acts, and
a deposed leader's acts are counted (replay/state.py ``Acts``).

This runs in the replay's Arrow function, on one partition's table, with
numpy over whole columns: a left-out row costs well under a microsecond,
where a replayed one costs tens (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.bridge import NOT_REPLAYED
from pipeline.reconstruct import LOCAL_ORDER_KEYS, SERIES_FIELDS
from replay.state import ACTS_KEPT, FETCHES_KEPT, HWM_STEPS_KEPT

#: The series that only rise while nothing else happens to the partition,
#: each with its value and the rows kept at its run's head: a leader's
#: answers are acts, and the replay keeps a deposed leader's first
#: ACTS_KEPT acts one by one; a follower's fetches, the first FETCHES_KEPT
#: after an ISR expansion.
LEVEL_SERIES: dict[str, tuple[str, int]] = {
    "fetch_request": ("fetch_offset", FETCHES_KEPT + 1),
    "fetch_response": ("hwm", max(ACTS_KEPT, FETCHES_KEPT) + 1),
}
#: fields that must stay the same along a run
FIXED_FIELDS = (
    "last_fetched_epoch",
    "current_leader_epoch",
    "error_code",
    "diverging_epoch",
    "diverging_end_offset",
)
#: rows kept at a run's tail: the replay reads the latest FETCHES_KEPT
#: fetches and HWM_STEPS_KEPT rises at a decision
RUN_TAIL = max(HWM_STEPS_KEPT, FETCHES_KEPT) + 1
#: Rows that read nothing the fetch series build: they do not end a run,
#: and may lack a time. A produce answer and what a client was shown; an
#: epoch's start offset from a leader-epoch-checkpoint (untimed: a fact about
#: the epoch, which a fetch narrows from the other side, in any order); and
#: the kinds the replay does not read. Every other kind ends a run.
OBSERVATION_KINDS = (
    *LEVEL_SERIES,
    "produce",
    *SERIES_FIELDS,
    "consumer_epoch_answer",
    "epoch_checkpoint",
    *sorted(NOT_REPLAYED),
)

_NULL = np.iinfo(np.int64).min


def _ints(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A column as int64 values (nulls as ``_NULL``; a timestamp as its
    count of units) and its null mask."""
    column = table.column(name).cast(pa.int64())
    mask = column.is_null().to_numpy(zero_copy_only=False)
    values = column.fill_null(_NULL).to_numpy(zero_copy_only=False)
    return values, mask


def _is(table: pa.Table, kinds: tuple[str, ...]) -> np.ndarray:
    found = pc.is_in(table.column("kind"), value_set=pa.array(kinds, pa.string()))
    return np.asarray(found.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def fold_rising_runs(table: pa.Table, max_clock_skew_s: float) -> tuple[pa.Table, np.ndarray]:
    """One partition's rows with the inside of its rising fetch runs left
    out, in their order, and each kept row's ``folded_after`` count."""
    n = table.num_rows
    level_rows = _is(table, tuple(LEVEL_SERIES))
    unfolded = (table, np.zeros(n, dtype=np.int64))
    if not level_rows.any():
        return unfolded
    decision = ~_is(table, OBSERVATION_KINDS)
    at, untimed = _ints(table, "event_time")
    if (decision & untimed).any():
        return unfolded
    reach = int(round(2 * max_clock_skew_s * 1_000_000))  # microseconds, as Spark sends them

    # In time order: each row's decision run, and the decisions either side.
    order = np.asarray(pc.sort_indices(table, sort_keys=LOCAL_ORDER_KEYS).to_numpy())
    decided = decision[order]
    times = at[order]
    big = np.iinfo(np.int64).max
    before = np.maximum.accumulate(np.where(decided, times, _NULL))
    after = np.minimum.accumulate(np.where(decided, times, big)[::-1])[::-1]
    near_sorted = untimed[order].copy()
    has_before = before != _NULL
    near_sorted[has_before] |= times[has_before] - before[has_before] <= reach
    has_after = after != big
    near_sorted[has_after] |= after[has_after] - times[has_after] <= reach
    segment = np.empty(n, dtype=np.int64)
    segment[order] = np.cumsum(decided)
    near = np.empty(n, dtype=bool)
    near[order] = near_sorted
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)

    kinds = table.column("kind").to_numpy(zero_copy_only=False)
    level = np.full(n, _NULL, dtype=np.int64)
    level_null = np.ones(n, dtype=bool)
    head = np.zeros(n, dtype=np.int64)
    kind_code = np.zeros(n, dtype=np.int64)
    for code, (kind, (field, first_kept)) in enumerate(LEVEL_SERIES.items(), start=1):
        rows = kinds == kind
        values, nulls = _ints(table, field)
        level[rows], level_null[rows] = values[rows], nulls[rows]
        head[rows], kind_code[rows] = first_kept, code
    fixed = np.stack([_ints(table, f)[0] for f in FIXED_FIELDS], axis=1)
    observer = _ints(table, "observer")[0]
    replica = _ints(table, "replica")[0]

    # Each series' run between decisions, in time order.
    rows = np.flatnonzero(level_rows)
    rows = rows[
        np.lexsort((rank[rows], segment[rows], kind_code[rows], replica[rows], observer[rows]))
    ]
    keys = np.stack([observer[rows], replica[rows], kind_code[rows], segment[rows]], axis=1)
    starts = np.flatnonzero(np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)])
    ends = np.r_[starts[1:], len(rows)]

    keep = np.ones(n, dtype=bool)
    folded = np.zeros(n, dtype=np.int64)
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        run = rows[start:end]
        size = len(run)
        first_kept = int(head[run[0]])
        if size <= first_kept + RUN_TAIL:
            continue
        value = level[run]
        unknown = level_null[run]
        same = (fixed[run][1:] == fixed[run][:-1]).all(axis=1)
        rising = value[1:] >= value[:-1]
        # the highest value before each row; a dip lies below it
        high = np.maximum.accumulate(np.where(unknown, _NULL, value))
        dip = np.r_[False, value[1:] < high[:-1]]
        close = near[run] | unknown
        inside = np.zeros(size, dtype=bool)
        middle = slice(1, size - 1)
        inside[middle] = (
            same[:-1]
            & same[1:]
            & rising[:-1]
            & rising[1:]
            & ~close[middle]
            & ~close[:-2]
            & ~close[2:]
            & ~dip[middle]
            & ~dip[:-2]
        )
        inside[:first_kept] = False
        inside[size - RUN_TAIL :] = False
        if not inside.any():
            continue
        keep[run[inside]] = False
        kept = np.flatnonzero(~inside)
        folded[run[kept]] = np.diff(np.r_[kept, size]) - 1
    if keep.all():
        return unfolded
    indices = np.flatnonzero(keep)
    return table.take(pa.array(indices)), folded[indices]


def with_folded(table: pa.Table, max_clock_skew_s: float) -> Any:
    """``fold_rising_runs`` with the counts as the ``folded_after`` column."""
    kept, folded = fold_rising_runs(table, max_clock_skew_s)
    return kept.append_column("folded_after", pa.array(folded, pa.int64()))
