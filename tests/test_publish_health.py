"""partition_health_daily, the BI rollup: per partition and day, counts of
findings by kind, records lost, elections, ISR changes and the seconds the
recorded ISR was below the min ISR in force, split at midnight (UTC)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from pipeline.publish import partition_health_daily
from schemas.tables import ANOMALIES, EPOCH_LINEAGE, ISR_TIMELINE, PARTITION_VERDICTS

pytestmark = pytest.mark.spark

KEY = {"cluster": "c1", "topic": "orders", "topic_id": "T1", "partition": 0}


def frame(spark: Any, schema: Any, rows: list[dict[str, Any]]) -> Any:
    return spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
    )


def isr(start: datetime, end: datetime | None, size: int, under: bool | None) -> dict[str, Any]:
    return {
        **KEY,
        "leader_epoch": 1,
        "leader": 1,
        "isr": list(range(1, size + 1)),
        "isr_size": size,
        "min_isr": None if under is None else 2,
        "under_min_isr": under,
        "start_time": start,
        "end_time": end,
        "source_file": "metadata.log.txt",
        "line_no": 1,
        "date": start.strftime("%Y-%m-%d"),
    }


def finding(kind: str, severity: str, lost: int | None, day: str) -> dict[str, Any]:
    return {
        **KEY,
        "anomaly_id": f"{kind}-{day}",
        "kind": kind,
        "severity": severity,
        "confidence": "confirmed",
        "profile": "kraft",
        "explanation": "-",
        "records_lost": lost,
        "caused_by": [],
        "date": day,
    }


def test_counts_findings_and_splits_under_min_isr_time_at_midnight(spark) -> None:  # type: ignore[no-untyped-def]
    anomalies = frame(
        spark,
        ANOMALIES,
        [
            finding("unclean_election", "critical", 30, "2024-05-01"),
            finding("committed_data_loss", "critical", 30, "2024-05-01"),
            finding("truncation_below_hwm", "warning", None, "2024-05-02"),
        ],
    )
    lineage = frame(
        spark,
        EPOCH_LINEAGE,
        [
            {**KEY, "leader_epoch": 0, "leader": 1, "election_kind": "initial",
             "start_offset_known": True, "date": "2024-05-01"},
            {**KEY, "leader_epoch": 1, "leader": 2, "election_kind": "unclean",
             "start_offset_known": True, "date": "2024-05-01"},
        ],
    )  # fmt: skip
    timeline = frame(
        spark,
        ISR_TIMELINE,
        [
            # full ISR, then below min ISR from 23:00 to 01:30 the next day,
            # then below again from 02:00 with no later record: until the
            # partition's last event at 02:10
            isr(datetime(2024, 5, 1, 9), datetime(2024, 5, 1, 23), 3, False),
            isr(datetime(2024, 5, 1, 23), datetime(2024, 5, 2, 1, 30), 1, True),
            isr(datetime(2024, 5, 2, 1, 30), datetime(2024, 5, 2, 2), 2, False),
            isr(datetime(2024, 5, 2, 2), None, 1, True),
        ],
    )
    verdicts = frame(
        spark,
        PARTITION_VERDICTS,
        [
            {**KEY, "verdict": "invalid", "profile": "kraft", "findings": 3, "events": 9,
             "last_event_time": datetime(2024, 5, 2, 2, 10), "date": "2024-05-02"},
        ],
    )  # fmt: skip

    rows = {
        r["date"]: r.asDict()
        for r in partition_health_daily(anomalies, lineage, timeline, verdicts).collect()
    }

    assert sorted(rows) == ["2024-05-01", "2024-05-02"]
    first, second = rows["2024-05-01"], rows["2024-05-02"]
    assert (first["findings"], first["critical_findings"]) == (2, 2)
    assert (first["unclean_elections"], first["truncations_below_hwm"]) == (1, 0)
    assert first["records_lost"] == 30  # committed_data_loss only, not the election's
    assert (first["leader_elections"], first["isr_changes"]) == (2, 2)
    assert first["under_min_isr_seconds"] == 3600.0
    assert first["verdict"] is None  # the verdict sits on the day of the last event
    assert (second["findings"], second["critical_findings"]) == (1, 0)
    assert (second["truncations_below_hwm"], second["records_lost"]) == (1, 0)
    assert (second["leader_elections"], second["isr_changes"]) == (0, 2)
    assert second["under_min_isr_seconds"] == 5400.0 + 600.0
    assert second["verdict"] == "invalid"


def test_an_unknown_min_isr_counts_no_time(spark) -> None:  # type: ignore[no-untyped-def]
    timeline = frame(
        spark,
        ISR_TIMELINE,
        [isr(datetime(2024, 5, 1, 9), datetime(2024, 5, 1, 10), 1, None)],
    )
    empty = {t: frame(spark, s, []) for t, s in (("a", ANOMALIES), ("l", EPOCH_LINEAGE))}
    verdicts = frame(
        spark,
        PARTITION_VERDICTS,
        [{**KEY, "verdict": "unknown", "profile": "kraft", "findings": 0, "events": 1,
          "date": "2024-05-01"}],
    )  # fmt: skip

    [row] = partition_health_daily(empty["a"], empty["l"], timeline, verdicts).collect()

    assert row["under_min_isr_seconds"] == 0.0
    assert (row["isr_changes"], row["verdict"]) == (1, "unknown")
