"""The report of a simulated unclean election, as headless Chromium builds
its DOM: the chart is there for the partition with findings, the shaded
lost range spans exactly the finding's offsets, and a log line holding
``<script>`` is text, not an element.

Chromium is Debian's ``chromium`` package (``setup.sh --dev`` installs it
where apt-get and root are available); without it the test is skipped and
says how to install it.

``python -m tests.test_report_browser OUT [OUT...]`` measures a report
instead (its size, and Chromium's time to load and lay it out, timed inside
the browser): the figures of docs/report.md. A benchmark, not a test.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

HOSTILE_CLIENT = "producer-<script>alert(1)</script>"


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def dump_dom(page: Path, timeout: float = 120.0) -> str:
    """The DOM Chromium built from the page, serialised."""
    browser = chromium()
    assert browser is not None
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",  # root in containers
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return done.stdout


class Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def having(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [
            a
            for t, a in self.elements
            if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]


@pytest.fixture(scope="module")
def incident(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    """kraft-unclean-election, simulated, with a producer whose client id
    holds markup; run, then its report written by the CLI."""
    if chromium() is None:
        pytest.skip(
            "headless Chromium not found: install Debian's `chromium` package "
            "(apt-get install chromium; setup.sh --dev does it where apt-get and root are)"
        )
    from typer.testing import CliRunner

    import simulator
    from pipeline.cli import app
    from pipeline.run import RunOptions, run_job

    root = tmp_path_factory.mktemp("incident")
    simulator.simulate("kraft-unclean-election", root, seed=0)
    touched = 0
    for log in root.glob("broker-*/kafka-request.log"):
        text = log.read_text(encoding="utf-8")
        touched += text.count('"clientId":"producer-1"')
        log.write_text(
            text.replace('"clientId":"producer-1"', f'"clientId":"{HOSTILE_CLIENT}"'),
            encoding="utf-8",
        )
    assert touched
    out = tmp_path_factory.mktemp("out")
    run_job(RunOptions(paths=[str(root)], out=str(out), validate=False))
    result = CliRunner().invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    page = out / "report.html"
    dom = Dom()
    dom.feed(dump_dom(page))
    return out, dom


def test_the_chart_is_there_for_the_partition_with_findings(incident) -> None:  # type: ignore[no-untyped-def]
    _, dom = incident
    charts = dom.having("svg", data_topic="orders", data_partition="0")
    assert len(charts) == 1
    assert charts[0]["class"] == "timeline"
    bands = dom.having("g", **{"class": "epoch", "data_election_kind": "unclean"})
    assert [b["data-leader"] for b in bands] == ["2"]


def test_the_shaded_lost_range_spans_exactly_the_findings_offsets(incident) -> None:  # type: ignore[no-untyped-def]
    from pipeline.report import read_gold

    out, dom = incident
    (loss,) = [f for f in read_gold(str(out), "anomalies") if f["kind"] == "committed_data_loss"]
    assert (loss["offset_start"], loss["offset_end"], loss["records_lost"]) == (100, 301, 201)
    (shaded,) = dom.having("rect", **{"class": "lost-range"})
    assert (shaded["data-offset-start"], shaded["data-offset-end"]) == ("100", "301")
    assert shaded["data-records-lost"] == "201"
    # and the rectangle's own geometry is that range on the chart's y axis
    (chart,) = dom.having("svg", data_topic="orders", data_partition="0")
    top, bottom = float(chart["data-plot-top"] or 0), float(chart["data-plot-bottom"] or 0)
    low, high = float(chart["data-offset-low"] or 0), float(chart["data-offset-high"] or 0)

    def y(offset: int) -> float:
        return bottom - (offset - low) / (high - low) * (bottom - top)

    assert float(shaded["y"] or 0) == pytest.approx(y(301), abs=0.01)
    assert float(shaded["y"] or 0) + float(shaded["height"] or 0) == pytest.approx(y(100), abs=0.02)
    assert "201 records lost [100, 301)" in dom.texts


def test_a_log_line_holding_script_renders_as_text(incident) -> None:  # type: ignore[no-untyped-def]
    _, dom = incident
    assert not [t for t, _ in dom.elements if t == "script"]
    shown = [t for t in dom.texts if HOSTILE_CLIENT in t]
    assert shown, "the producer's evidence line is in the report, as text"
    assert any('"clientId":"' + HOSTILE_CLIENT in t for t in shown)


# --- measuring (python -m tests.test_report_browser OUT...) -------------------------------


#: a page that times, in Chromium, the report's load in a frame: parse,
#: load, then a forced layout of its whole body (the report itself runs no
#: script: its CSP forbids it)
_TIMER = """<!doctype html><title>timer</title><p id="ms">pending</p>
<script>
const t0 = performance.now();
function done(frame) {
  frame.contentDocument.body.getBoundingClientRect();
  void frame.contentDocument.body.scrollHeight;
  document.getElementById("ms").textContent = String(performance.now() - t0);
}
</script>
<iframe src="REPORT" width="1100" height="900" onload="done(this)"></iframe>
"""


def _chromium_ms(page: Path) -> float:
    timer = page.with_name("timer.html")
    timer.write_text(_TIMER.replace("REPORT", page.name), encoding="utf-8")
    browser = chromium()
    assert browser is not None
    try:
        done = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--allow-file-access-from-files",
                "--dump-dom",
                timer.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
    finally:
        timer.unlink()
    dom = Dom()
    dom.feed(done.stdout)
    # the one text of the timer page that is a number: its milliseconds
    value = next(t for t in dom.texts if t.strip().replace(".", "", 1).isdigit())
    return float(value)


def measure(out: Path, runs: int = 3) -> dict[str, Any]:
    """The report's size, and Chromium's median time (of ``runs``) to load
    it and lay it out, measured inside the browser."""
    from pipeline.report import render_html

    started = time.perf_counter()
    page_text = render_html(str(out))
    render_s = time.perf_counter() - started
    page = out / "report.html"
    page.write_text(page_text, encoding="utf-8")
    times = [_chromium_ms(page) for _ in range(runs)]
    return {
        "out": str(out),
        "bytes": page.stat().st_size,
        "render_html_s": round(render_s, 2),
        "chromium_load_and_layout_s": round(statistics.median(times) / 1000, 3),
        "runs_s": [round(t / 1000, 3) for t in times],
    }


if __name__ == "__main__":  # pragma: no cover - a benchmark
    for folder in sys.argv[1:]:
        print(measure(Path(folder)))
