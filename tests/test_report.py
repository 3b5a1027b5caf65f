"""The HTML report treats every text from the inputs as hostile: a log line
holding markup renders as text (DESIGN.md "Hostile input")."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.report import parse_partition, render_html

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def write(out: Path, table: str, rows: list[dict[str, object]]) -> None:
    folder = out / table / "cluster=c1" / "date=2024-05-01"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-0.parquet")


def test_log_text_and_names_from_the_inputs_are_escaped(tmp_path: Path) -> None:
    write(
        tmp_path,
        "anomalies",
        [
            {
                "anomaly_id": "a1",
                "kind": "unclean_election",
                "severity": "critical",
                "confidence": "confirmed",
                "topic": "t<b>",
                "partition": 0,
                "leader_epoch": 2,
                "replica": 2,
                "offset_start": 120,
                "offset_end": 150,
                "records_lost": 30,
                "explanation": "Broker 2 became leader & " + HOSTILE,
                "evidence": [{"source_file": "broker-1/x.log", "line_no": 7, "text": HOSTILE}],
            }
        ],
    )
    write(
        tmp_path,
        "partition_verdicts",
        [{"topic": "t<b>", "partition": 0, "verdict": "invalid", "findings": 1, "gaps": [HOSTILE]}],
    )

    page = render_html(str(tmp_path))

    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "t&lt;b&gt;-0" in page
    assert "Broker 2 became leader &amp; &lt;script&gt;" in page
    assert "1 partitions: 1 invalid, 0 unknown, 0 valid; 1 findings; committed records lost: 0" in (
        page
    )


@pytest.mark.parametrize(
    ("spec", "expected"), [("orders-0", ("orders", 0)), ("my-topic-12", ("my-topic", 12))]
)
def test_partition_names_split_at_the_last_dash(spec: str, expected: tuple[str, int]) -> None:
    assert parse_partition(spec) == expected


@pytest.mark.parametrize("spec", ["orders", "orders-", "-3", "orders-x"])
def test_a_partition_without_a_number_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="TOPIC-N"):
        parse_partition(spec)
