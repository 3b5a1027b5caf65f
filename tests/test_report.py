"""The report, the chart and the read-back of the lake, without Spark: gold
tables written here as a run writes them (Parquet under ``cluster=`` and
``date=`` folders)."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console
from typer.testing import CliRunner

from pipeline import cli
from pipeline.chart import PartitionData, draw
from pipeline.progress import StageProgress, for_stderr
from pipeline.report import (
    input_roots,
    page_context,
    parse_partition,
    read_gold,
    relative_source,
    render_html,
)

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
T = datetime(2024, 5, 1, 10, 0, 0)


def at(seconds: int) -> datetime:
    return datetime(2024, 5, 1, 10, seconds // 60, seconds % 60)


def write(out: Path, table: str, rows: list[dict[str, object]], cluster: str = "c1") -> None:
    folder = out / table / f"cluster={cluster}" / "date=2024-05-01"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.Table.from_pylist(rows), folder / f"part-{len(list(folder.iterdir()))}.parquet"
    )


def finding(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "anomaly_id": "a1",
        "kind": "committed_data_loss",
        "severity": "critical",
        "confidence": "confirmed",
        "topic": "orders",
        "partition": 0,
        "leader_epoch": 2,
        "replica": None,
        "offset_start": 120,
        "offset_end": 150,
        "records_lost": 30,
        "detected_at": at(300),
        "explanation": "Committed offsets [120, 150) of orders-0 (30 records) no longer exist",
        "evidence": [
            {"source_file": "file:/in/broker-1/kafka-request.log", "line_no": 7, "text": "x"}
        ],
    }
    row.update(over)
    return row


def verdict(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "topic": "orders",
        "partition": 0,
        "verdict": "invalid",
        "findings": 1,
        "gaps": [],
    }
    row.update(over)
    return row


LINEAGE = [
    {"topic": "orders", "partition": 0, "leader_epoch": 0, "leader": 1,
     "election_kind": "initial", "start_time": at(0), "end_time": at(120), "start_offset": 0,
     "metadata_offset": 5},
    {"topic": "orders", "partition": 0, "leader_epoch": 1, "leader": -1,
     "election_kind": "offline", "start_time": at(120), "end_time": at(300), "start_offset": None,
     "metadata_offset": 9},
    {"topic": "orders", "partition": 0, "leader_epoch": 2, "leader": 2,
     "election_kind": "unclean", "start_time": at(300), "end_time": None, "start_offset": 120,
     "metadata_offset": 12},
]  # fmt: skip


def offsets_row(replica: int, seconds: int | None, leo: int | None, hwm: int | None = None,
                observer: int = 1, epoch: int | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "topic": "orders",
        "partition": 0,
        "replica": replica,
        "observer": observer,
        "event_time": None if seconds is None else at(seconds),
        "leader_epoch": epoch,
        "leo": leo,
        "hwm": hwm,
        "source_file": "file:/in/broker-1/kafka-request.log",
        "line_no": 1,
    }


# --- escaping -----------------------------------------------------------------------


class _Dom(HTMLParser):
    """The elements and texts of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def dom(page: str) -> _Dom:
    parser = _Dom()
    parser.feed(page)
    return parser


def test_log_text_and_names_from_the_inputs_are_escaped(tmp_path: Path) -> None:
    write(
        tmp_path,
        "anomalies",
        [
            finding(
                kind="unclean_election",
                topic="t<b>",
                replica=2,
                explanation="Broker 2 became leader & " + HOSTILE,
                evidence=[{"source_file": "broker-1/x.log", "line_no": 7, "text": HOSTILE}],
            )
        ],
    )
    write(tmp_path, "partition_verdicts", [verdict(topic="t<b>", gaps=[HOSTILE])])

    page = render_html(str(tmp_path))
    parsed = dom(page)

    tags = {t for t, _ in parsed.tags}
    assert "script" not in tags and "img" not in tags and "b" not in tags
    assert HOSTILE in parsed.texts  # the evidence line, as text
    assert any("Broker 2 became leader & " + HOSTILE in t for t in parsed.texts)
    assert "t<b>-0" in "".join(parsed.texts)
    assert "1 partitions: 1 invalid, 0 unknown, 0 valid; 1 findings" in " ".join(
        " ".join(parsed.texts).split()
    )


def test_the_page_opens_on_the_story_with_evidence_folded(tmp_path: Path) -> None:
    write(tmp_path, "anomalies", [finding()])
    write(tmp_path, "partition_verdicts", [verdict()])
    write(tmp_path, "epoch_lineage", LINEAGE)
    write(tmp_path, "replica_offsets", [offsets_row(2, 10, 100), offsets_row(2, 60, 120)])
    (tmp_path / "run_manifest.json").write_text(
        json.dumps({"inputs": ["/in"], "files": [{"path": "/in/broker-1/kafka-request.log"}]})
    )

    page = render_html(str(tmp_path))

    verdict_at = page.index('class="verdict invalid"')
    lost_at = page.index('<p class="lost">30 committed records lost, in orders-0</p>')
    chart_at = page.index("<svg")
    finding_at = page.index('id="a1"')
    assert verdict_at < lost_at < chart_at < finding_at
    # evidence inside a closed <details>, its path relative to the input, with its line
    details = page[page.index("<details>", finding_at) : page.index("</details>", finding_at)]
    assert '<div class="where">broker-1/kafka-request.log:7</div>' in details
    assert "file:" not in page
    # a marker on the chart links to the finding
    assert '<a class="finding" href="#a1"' in page


# --- the chart ----------------------------------------------------------------------


def _attrs(svg: str, cls: str) -> list[dict[str, str | None]]:
    return [a for t, a in dom(svg).tags if (a.get("class") or "").split()[:1] == [cls]]


def test_the_lost_range_is_shaded_over_exactly_the_findings_offsets() -> None:
    svg = draw(
        PartitionData(
            "c1",
            "orders",
            0,
            offsets=[offsets_row(2, 10, 100), offsets_row(1, 400, 120)],
            lineage=LINEAGE,
            findings=[finding()],
        )
    )
    (lost,) = _attrs(svg, "lost-range")
    assert (lost["data-offset-start"], lost["data-offset-end"]) == ("120", "150")
    assert lost["data-records-lost"] == "30"
    (root,) = [a for t, a in dom(svg).tags if t == "svg"]
    top, bottom = float(root["data-plot-top"] or 0), float(root["data-plot-bottom"] or 0)
    low, high = float(root["data-offset-low"] or 0), float(root["data-offset-high"] or 0)

    def y(offset: float) -> float:
        return bottom - (offset - low) / (high - low) * (bottom - top)

    assert float(lost["y"] or 0) == pytest.approx(y(150), abs=0.01)
    assert float(lost["y"] or 0) + float(lost["height"] or 0) == pytest.approx(y(120), abs=0.02)
    assert "30 records lost [120, 150)" in dom(svg).texts


def test_epoch_bands_name_leader_and_election_kind() -> None:
    svg = draw(PartitionData("c1", "orders", 0, lineage=LINEAGE, findings=[finding()]))
    bands = [
        (a["data-leader-epoch"], a["data-leader"], a["data-election-kind"])
        for a in _attrs(svg, "epoch")
    ]
    assert bands == [("0", "1", "initial"), ("1", "-1", "offline"), ("2", "2", "unclean")]
    assert "unclean" in dom(svg).texts and "e1 no leader" in dom(svg).texts


def test_leo_steps_drop_on_truncation_and_the_hwm_is_the_leaders() -> None:
    rows = [
        offsets_row(1, 10, 150),
        offsets_row(1, 400, 120),  # truncated from 150 to 120
        offsets_row(2, 310, None, hwm=120, observer=2),  # leader 2's own HWM in epoch 2
        offsets_row(3, 310, None, hwm=999, observer=2),  # not the leader's: not drawn
    ]
    svg = draw(PartitionData("c1", "orders", 0, offsets=rows, lineage=LINEAGE))
    (leo,) = _attrs(svg, "leo")
    assert leo["data-replica"] == "1"
    ys = [float(v) for v in re.findall(r"V([\d.]+)", leo["d"] or "")]
    start_y = float((leo["d"] or "").split()[1].split("H")[0])
    assert ys and ys[0] > start_y  # a drop: the y of 120 is below the y of 150
    (hwm,) = _attrs(svg, "hwm")
    assert "V" not in (hwm["d"] or "")  # one value: the leader's 120, not 999
    assert 'data-offset-high="158"' in svg  # the axis ends above 150, not at 999


def test_what_has_no_time_is_drawn_apart_not_at_an_invented_time() -> None:
    rows = [offsets_row(1, 10, 100), offsets_row(2, None, 90)]
    untimed = finding(anomaly_id="u1", detected_at=None)
    svg = draw(PartitionData("c1", "orders", 0, offsets=rows, lineage=LINEAGE,
                             findings=[untimed]))  # fmt: skip
    (strip,) = _attrs(svg, "time-unknown")
    assert "time unknown" in dom(svg).texts
    inside = svg[svg.index('class="time-unknown"') :]
    assert 'data-anomaly-id="u1"' in inside and 'data-leo="90"' in inside
    nothing = draw(PartitionData("c1", "orders", 0, findings=[untimed]))
    assert "no time in evidence" in dom(nothing).texts


def test_isr_marks_show_members_and_below_min_isr() -> None:
    isr = [
        {"start_time": at(0), "isr": [1, 2, 3], "under_min_isr": False, "min_isr": 2},
        {"start_time": at(60), "isr": [1], "under_min_isr": True, "min_isr": 2},
    ]
    svg = draw(PartitionData("c1", "orders", 0, lineage=LINEAGE, isr=isr))
    marks = [(a["data-isr"], a["data-under-min-isr"]) for a in _attrs(svg, "isr")]
    assert marks == [("1,2,3", "false"), ("1", "true")]


# --- fleets ----------------------------------------------------------------------------


def test_a_fleet_report_starts_with_its_clusters_worst_first(tmp_path: Path) -> None:
    write(tmp_path, "partition_verdicts", [verdict(verdict="valid", findings=0)], "calm")
    write(tmp_path, "partition_verdicts", [verdict(verdict="unknown", findings=0)], "unsure")
    write(tmp_path, "partition_verdicts", [verdict()], "burnt")
    write(tmp_path, "anomalies", [finding()], "burnt")
    write(tmp_path, "epoch_lineage", LINEAGE, "burnt")

    context = page_context(str(tmp_path))
    assert [c["name"] for c in context["clusters"]] == ["burnt", "unsure", "calm"]
    burnt = context["clusters"][0]
    assert (burnt["lost"], burnt["verdicts"]["invalid"]) == (30, 1)
    assert burnt["elections_text"] == "initial 1, offline 1, unclean 1"
    page = render_html(str(tmp_path))
    table = page[page.index('<table class="clusters">') :]
    section = burnt["sections"][0]["anchor"]
    assert f'href="#{burnt["anchor"]}"' in table and f'id="{section}"' in page
    assert page.index(f'id="{burnt["anchor"]}"') < page.index(f'id="{section}"')


# --- reading the lake back ----------------------------------------------------------------


def test_a_cluster_named_42_is_found_by_its_name(tmp_path: Path) -> None:
    write(tmp_path, "anomalies", [finding(anomaly_id="in-42")], "42")
    write(tmp_path, "anomalies", [finding(anomaly_id="in-2024")], "2024")
    write(tmp_path, "partition_verdicts", [verdict()], "42")
    write(tmp_path, "epoch_lineage", LINEAGE, "42")

    rows = read_gold(str(tmp_path), "anomalies", "42")
    assert [(r["anomaly_id"], r["cluster"], r["date"]) for r in rows] == [
        ("in-42", "42", "2024-05-01")
    ]
    runner = CliRunner()
    listed = runner.invoke(
        cli.app, ["anomalies", str(tmp_path), "--cluster", "42", "--format", "json"]
    )
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["anomaly_id"] for line in listed.output.splitlines()] == ["in-42"]
    shown = runner.invoke(
        cli.app, ["timeline", str(tmp_path), "orders-0", "--cluster", "42", "--format", "json"]
    )
    assert shown.exit_code == 0, shown.output
    assert [json.loads(line)["what"] for line in shown.output.splitlines()].count("epoch") == 3


def test_timeline_writes_the_chart_alone(tmp_path: Path) -> None:
    write(tmp_path, "anomalies", [finding()])
    write(tmp_path, "partition_verdicts", [verdict()])
    write(tmp_path, "epoch_lineage", LINEAGE)
    chart = tmp_path / "orders-0.svg"
    result = CliRunner().invoke(
        cli.app, ["timeline", str(tmp_path), "orders-0", "--chart", str(chart)]
    )
    assert result.exit_code == 0, result.output
    svg = chart.read_text()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    (lost,) = _attrs(svg, "lost-range")
    assert (lost["data-offset-start"], lost["data-offset-end"]) == ("120", "150")


# --- paths a person can use -----------------------------------------------------------------


def test_relative_inputs_are_found_in_the_manifests_absolute_files() -> None:
    manifest = {
        "inputs": ["examples/incident", "/abs/other/"],
        "files": [{"path": "/home/me/examples/incident/broker-1/kafka-request.log"}],
    }
    roots = input_roots(manifest)
    assert roots == ["/home/me/examples/incident", "/abs/other"]
    path = "file:/home/me/examples/incident/broker-1/kafka-request.log"
    assert relative_source(path, roots) == "incident/broker-1/kafka-request.log"
    assert relative_source(path, roots[:1]) == "broker-1/kafka-request.log"
    assert relative_source("file:/elsewhere/a.log", roots[:1]) == "/elsewhere/a.log"


@pytest.mark.parametrize(
    ("spec", "expected"), [("orders-0", ("orders", 0)), ("my-topic-12", ("my-topic", 12))]
)
def test_partition_names_split_at_the_last_dash(spec: str, expected: tuple[str, int]) -> None:
    assert parse_partition(spec) == expected


@pytest.mark.parametrize("spec", ["orders", "orders-", "-3", "orders-x"])
def test_a_partition_without_a_number_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="TOPIC-N"):
        parse_partition(spec)


# --- the terminal -------------------------------------------------------------------------


def test_the_findings_table_shows_whole_kind_names_at_100_columns(tmp_path: Path) -> None:
    write(tmp_path, "anomalies", [finding(anomaly_id="0123456789abcdef")])
    buffer = io.StringIO()
    saved = cli.out_console
    cli.out_console = Console(file=buffer, width=100)
    try:
        result = CliRunner().invoke(cli.app, ["anomalies", str(tmp_path)])
    finally:
        cli.out_console = saved
    assert result.exit_code == 0, result.output
    assert "committed_data_loss" in buffer.getvalue()
    assert "…" not in buffer.getvalue()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_silent_off_a_terminal_and_names_stages_on_one() -> None:
    quiet = io.StringIO()
    stage, close = for_stderr(quiet)
    with stage("ingest"):
        pass
    close()
    assert quiet.getvalue() == ""

    tty = _Tty()
    shown = StageProgress(tty, tasks=lambda: (3, 8))
    with shown.stage("reconstruct_replay"):
        pass
    shown.close()
    assert "reconstruct replay" in tty.getvalue()


def test_report_links_ge_results_and_charts_partitions_asked_for(tmp_path: Path) -> None:
    write(tmp_path, "partition_verdicts", [verdict(verdict="valid", findings=0)])
    write(tmp_path, "replica_offsets", [offsets_row(2, 10, 100)])
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "gold.anomalies.json").write_text("{}")
    (tmp_path / "data_docs").mkdir()
    (tmp_path / "data_docs" / "index.html").write_text("<html></html>")
    (tmp_path / "run_manifest.json").write_text(
        json.dumps({"validation": {"success": True, "seconds": 1.0, "suites": []}})
    )
    target = tmp_path / "pages" / "r.html"
    target.parent.mkdir()
    result = CliRunner().invoke(
        cli.app, ["report", str(tmp_path), "--html", str(target), "--partition", "orders-0"]
    )
    assert result.exit_code == 0, result.output
    page = target.read_text()
    # links relative to where the page is
    assert 'href="../validation/gold.anomalies.json"' in page
    assert 'href="../data_docs/index.html"' in page
    # no finding, but asked for: charted
    (chart,) = [a for t, a in dom(page).tags if t == "svg"]
    assert (chart["data-topic"], chart["data-partition"]) == ("orders", "0")
    unasked = render_html(str(tmp_path))
    assert "<svg" not in unasked


def test_the_run_enters_the_progress_hook_around_each_stage() -> None:
    from contextlib import contextmanager

    from pipeline.run import Timings

    seen: list[str] = []

    @contextmanager
    def hook(name: str):  # type: ignore[no-untyped-def]
        seen.append(f"enter {name}")
        yield
        seen.append(f"leave {name}")

    timings = Timings(hook)
    with timings.stage("ingest"):
        seen.append("work")
    assert seen == ["enter ingest", "work", "leave ingest"]
    assert set(timings.seconds) == {"ingest"}
