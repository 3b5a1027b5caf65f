"""A partition's story as a picture: one inline SVG drawn from the gold tables.

x is time, y is the log offset. Drawn, back to front:

* leader-epoch bands, coloured by leader, labelled with the epoch, the leader
  and how the election went (``epoch_lineage.election_kind``: clean, unclean,
  elr, unclean_recovery, ...);
* the committed range a finding says was lost, shaded across the plot with
  its size (``data-offset-start`` / ``data-offset-end`` hold the finding's
  exact half-open range ``[start, end)``);
* one step line per replica's log end offset (``replica_offsets.leo``): a
  truncation is the line dropping;
* the high watermark as the partition's leader exposed it (rows of
  ``replica_offsets`` whose replica led the epoch they were seen in);
* ISR changes (``isr_timeline``) as marks under the plot, red when below
  ``min.insync.replicas``;
* findings as markers that link to their evidence (``#anomaly_id``).

What carries no time (pasted excerpts, order-only evidence) is not placed on
the time axis: it is drawn in a separate "time unknown" strip at the right,
in the order the tables give, never at an invented moment.

No script, no external resource, every text escaped: the SVG is safe to
inline in the report and to attach to a ticket on its own. Standard library
only, so the chart is drawn the same wherever the gold tables are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from typing import Any

#: one colour per leader / replica, cycled (Okabe-Ito: tells apart for
#: colour-blind readers too)
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442")
LOST = "#d62728"
HWM = "#222222"

WIDTH = 900
HEIGHT = 340
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 40, 56
#: width of the "time unknown" strip, when anything lacks a time
STRIP = 110


@dataclass
class PartitionData:
    """The gold rows of one partition (dicts as ``read_table`` gives them)."""

    cluster: str
    topic: str
    partition: int
    offsets: list[dict[str, Any]] = field(default_factory=list)
    lineage: list[dict[str, Any]] = field(default_factory=list)
    isr: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)


def _a(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _fmt_time(t: datetime, span_s: float) -> str:
    if span_s < 120:
        return t.strftime("%H:%M:%S.%f")[:-3]
    if span_s < 2 * 86400:
        return t.strftime("%H:%M:%S")
    return t.strftime("%m-%d %H:%M")


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    step = max(
        1.0, min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw), default=raw)
    )
    first = int(lo // step) * step
    ticks = []
    value = first
    while value <= hi + 1e-9:
        if value >= lo:
            ticks.append(value)
        value += step
    return ticks


def _leader_by_epoch(lineage: Sequence[dict[str, Any]]) -> dict[int, int]:
    return {r["leader_epoch"]: r["leader"] for r in lineage if r.get("leader_epoch") is not None}


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _times(rows: Iterable[dict[str, Any]], key: str) -> list[datetime]:
    return [r[key] for r in rows if r.get(key) is not None]


def draw(data: PartitionData, width: int = WIDTH, height: int = HEIGHT) -> str:
    """The partition's chart as one ``<svg>`` element (a string)."""
    offsets = sorted(
        data.offsets,
        key=lambda r: (
            r.get("event_time") is None,
            r.get("event_time") or datetime.min,
            r.get("line_no") or 0,
        ),
    )
    lineage = sorted(data.lineage, key=lambda r: r["leader_epoch"])
    isr = sorted(
        data.isr, key=lambda r: (r.get("start_time") is None, r.get("start_time") or datetime.min)
    )
    findings = sorted(
        data.findings,
        key=lambda r: (
            r.get("detected_at") is None,
            r.get("detected_at") or datetime.min,
            r.get("anomaly_id") or "",
        ),
    )
    times = (
        _times(offsets, "event_time")
        + _times(lineage, "start_time")
        + _times(isr, "start_time")
        + _times(findings, "detected_at")
    )
    untimed_offsets = [r for r in offsets if r.get("event_time") is None]
    untimed_findings = [f for f in findings if f.get("detected_at") is None]
    untimed_epochs = [r for r in lineage if r.get("start_time") is None]
    strip = STRIP if (untimed_offsets or untimed_findings or untimed_epochs or not times) else 0

    leader_of = _leader_by_epoch(lineage)
    values: list[int] = [r["leo"] for r in offsets if r.get("leo") is not None]
    values += [r["hwm"] for r in offsets if _leader_hwm(r, lineage, leader_of)]
    for f in findings:
        values += [v for v in (f.get("offset_start"), f.get("offset_end")) if v is not None]
    values += [r["start_offset"] for r in lineage if r.get("start_offset") is not None]
    y_lo = 0
    y_hi = max(values, default=1)
    if y_hi <= y_lo:
        y_hi = y_lo + 1
    y_hi = int(y_hi * 1.05) + 1

    plot_left, plot_top = LEFT, TOP
    plot_bottom = height - BOTTOM
    plot_right = width - RIGHT - strip
    plot_w = max(1, plot_right - plot_left)
    plot_h = plot_bottom - plot_top

    t0 = min(times) if times else None
    t1 = max(times) if times else None
    span = (t1 - t0).total_seconds() if t0 is not None and t1 is not None else 0.0
    pad = span * 0.03 if span > 0 else 1.0

    def x(t: datetime) -> float:
        assert t0 is not None
        return round(plot_left + ((t - t0).total_seconds() + pad) / (span + 2 * pad) * plot_w, 2)

    def y(offset: float) -> float:
        return round(plot_bottom - (offset - y_lo) / (y_hi - y_lo) * plot_h, 2)

    strip_left = plot_right + 10
    strip_w = strip - 14

    def xs(i: int, n: int) -> float:
        """The i-th of n untimed items, in order, across the strip."""
        return round(strip_left + (i + 1) / (n + 1) * strip_w, 2)

    title = f"{data.cluster} {data.topic}-{data.partition}"
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'data-cluster="{_a(data.cluster)}" data-topic="{_a(data.topic)}" '
        f'data-partition="{data.partition}" data-plot-top="{plot_top}" '
        f'data-plot-bottom="{plot_bottom}" data-offset-low="{y_lo}" data-offset-high="{y_hi}" '
        f'font-family="sans-serif" font-size="11">',
        f"<title>{_a('offsets over time, ' + title)}</title>",
        f'<rect x="{plot_left}" y="{plot_top}" width="{plot_w}" height="{plot_h}" '
        'fill="#fff" stroke="#999"/>',
    ]

    # --- leader-epoch bands --------------------------------------------------
    leaders = sorted({r["leader"] for r in lineage if r["leader"] >= 0})
    leader_colour = {leader: _colour(i) for i, leader in enumerate(leaders)}
    timed_epochs = [r for r in lineage if r.get("start_time") is not None]
    for i, r in enumerate(timed_epochs):
        bx = x(r["start_time"])
        if i + 1 < len(timed_epochs):
            ex = x(timed_epochs[i + 1]["start_time"])
        elif r.get("end_time") is not None:
            ex = x(r["end_time"])
        else:
            ex = float(plot_right)
        ex = min(max(ex, bx), float(plot_right))
        leader, epoch = r["leader"], r["leader_epoch"]
        colour = "#bbbbbb" if leader < 0 else leader_colour[leader]
        kind = r.get("election_kind") or "unknown"
        label = f"e{r['leader_epoch']} " + ("no leader" if leader < 0 else f"L{leader}")
        out.append(
            f'<g class="epoch" data-leader-epoch="{r["leader_epoch"]}" data-leader="{leader}" '
            f'data-election-kind="{_a(kind)}">'
            f"<title>{_a(f'epoch {epoch}, leader {leader}, {kind} election')}</title>"
            f'<rect x="{bx}" y="{plot_top}" width="{round(ex - bx, 2)}" height="{plot_h}" '
            f'fill="{colour}" fill-opacity="0.10"/>'
            f'<line x1="{bx}" x2="{bx}" y1="{plot_top - 22}" y2="{plot_bottom}" '
            f'stroke="{colour}" stroke-width="{2.5 if "unclean" in kind else 1}"'
            f"{'' if 'unclean' in kind else ' stroke-dasharray=' + chr(34) + '3 3' + chr(34)}/>"
            f'<text x="{bx + 3}" y="{plot_top - 12}" fill="{colour}">{_a(label)}</text>'
            f'<text x="{bx + 3}" y="{plot_top - 2}" font-weight="'
            f'{"bold" if "unclean" in kind else "normal"}" '
            f'fill="{LOST if "unclean" in kind else "#444"}">{_a(kind)}</text></g>'
        )

    # --- lost committed range -------------------------------------------------
    for f in findings:
        if f.get("kind") != "committed_data_loss":
            continue
        lo, hi = f.get("offset_start"), f.get("offset_end")
        if lo is None or hi is None:
            continue
        top, bottom = y(hi), y(lo)
        lost = f.get("records_lost")
        size = f"{lost} records lost" if lost is not None else "records lost: unknown"
        out.append(
            f'<g class="lost" data-anomaly-id="{_a(f.get("anomaly_id"))}">'
            f'<rect class="lost-range" x="{plot_left}" y="{top}" width="{plot_w}" '
            f'height="{round(bottom - top, 2)}" fill="{LOST}" fill-opacity="0.22" '
            f'stroke="{LOST}" stroke-dasharray="4 2" data-offset-start="{lo}" '
            f'data-offset-end="{hi}" data-records-lost="{_a(lost)}">'
            f"<title>{_a(f'{size}: offsets [{lo}, {hi})')}</title></rect>"
            f'<text x="{plot_left + 6}" y="{round(top + (bottom - top) / 2 + 4, 2)}" '
            f'fill="{LOST}" font-weight="bold">{_a(f"{size} [{lo}, {hi})")}</text></g>'
        )

    # --- replica LEO step lines, leader HWM ------------------------------------
    replicas = sorted({r["replica"] for r in offsets if r.get("leo") is not None})
    others = [rep for rep in replicas if rep not in leader_colour]
    replica_colour = {
        **leader_colour,
        **{rep: _colour(len(leaders) + i) for i, rep in enumerate(others)},
    }
    for rep in replicas:
        points = [
            (x(r["event_time"]), y(r["leo"]))
            for r in offsets
            if r["replica"] == rep and r.get("leo") is not None and r.get("event_time") is not None
        ]
        if points:
            out.append(_step_path(points, "leo", replica_colour[rep], float(plot_right), rep))
    hwm_points = [
        (x(r["event_time"]), y(r["hwm"]))
        for r in offsets
        if r.get("event_time") is not None and _leader_hwm(r, lineage, leader_of)
    ]
    if hwm_points:
        out.append(_step_path(hwm_points, "hwm", HWM, float(plot_right), None, dashed=True))

    # --- ISR marks ------------------------------------------------------------
    for r in isr:
        if r.get("start_time") is None:
            continue
        ix = x(r["start_time"])
        under = bool(r.get("under_min_isr"))
        members = list(r.get("isr") or [])
        text = f"ISR {members}" + (f" below min ISR {r.get('min_isr')}" if under else "")
        out.append(
            f'<g class="isr" data-isr="{_a(",".join(str(m) for m in members))}" '
            f'data-under-min-isr="{str(under).lower()}"><title>{_a(text)}</title>'
            f'<path d="M{ix} {plot_bottom + 4} l-4 8 h8 z" fill="{LOST if under else "#555"}"/>'
            f'<text x="{ix}" y="{plot_bottom + 22}" text-anchor="middle" font-size="9">'
            f"{_a(','.join(str(m) for m in members))}</text></g>"
        )

    # --- findings --------------------------------------------------------------
    for f in findings:
        if f.get("detected_at") is None:
            continue
        fy = _finding_y(f, y, plot_top)
        out.append(_finding_marker(f, x(f["detected_at"]), fy))

    # --- axes --------------------------------------------------------------------
    for v in _nice_ticks(y_lo, y_hi):
        ty = y(v)
        out.append(
            f'<line x1="{plot_left - 4}" x2="{plot_left}" y1="{ty}" y2="{ty}" stroke="#999"/>'
            f'<text x="{plot_left - 6}" y="{ty + 4}" text-anchor="end">{int(v)}</text>'
        )
    out.append(
        f'<text x="14" y="{plot_top + plot_h / 2}" transform="rotate(-90 14 '
        f'{plot_top + plot_h / 2})" text-anchor="middle">offset</text>'
    )
    if t0 is not None and t1 is not None:
        for i in range(5):
            t = t0 + (t1 - t0) * (i / 4)
            tx = x(t)
            out.append(
                f'<line x1="{tx}" x2="{tx}" y1="{plot_bottom}" y2="{plot_bottom + 3}" '
                f'stroke="#999"/><text x="{tx}" y="{plot_bottom + 36}" text-anchor="middle">'
                f"{_a(_fmt_time(t, span))}</text>"
            )
        out.append(
            f'<text x="{plot_left}" y="{height - 4}">{_a(f"time (UTC) from {t0.isoformat()}")}'
            "</text>"
        )
    else:
        out.append(f'<text x="{plot_left}" y="{height - 4}">no time in evidence</text>')

    # --- the time-unknown strip ------------------------------------------------
    if strip:
        out.append(
            f'<g class="time-unknown"><rect x="{plot_right + 6}" y="{plot_top}" '
            f'width="{strip - 8}" height="{plot_h}" fill="#f3f3f3" stroke="#999" '
            'stroke-dasharray="2 2"/>'
            f'<text x="{plot_right + 6 + (strip - 8) / 2}" y="{plot_bottom + 14}" '
            'text-anchor="middle">time unknown</text>'
            f'<text x="{plot_right + 6 + (strip - 8) / 2}" y="{plot_bottom + 26}" '
            'text-anchor="middle" font-size="9">(order only)</text>'
        )
        n = len(untimed_offsets)
        for i, r in enumerate(untimed_offsets):
            px = xs(i, n)
            for key, colour in (("leo", replica_colour.get(r["replica"], "#555")), ("hwm", HWM)):
                if r.get(key) is None or (key == "hwm" and not _leader_hwm(r, lineage, leader_of)):
                    continue
                out.append(
                    f'<circle class="{key} untimed" cx="{px}" cy="{y(r[key])}" r="3" '
                    f'fill="{colour}" data-replica="{r["replica"]}" data-{key}="{r[key]}">'
                    f"<title>{_a(untimed_title(r, key))}</title></circle>"
                )
        m = len(untimed_findings)
        for i, f in enumerate(untimed_findings):
            out.append(_finding_marker(f, xs(i, m), _finding_y(f, y, plot_top)))
        for i, r in enumerate(untimed_epochs):
            out.append(
                f'<text class="epoch untimed" x="{plot_right + 10}" y="{plot_top + 12 + 12 * i}" '
                f'data-leader-epoch="{r["leader_epoch"]}" data-election-kind='
                f'"{_a(r.get("election_kind"))}" font-size="9">'
                f"{_a(untimed_label(r))}</text>"
            )
        out.append("</g>")

    # --- legend ------------------------------------------------------------------
    lx = plot_left
    legend: list[tuple[str, str, bool]] = [
        (f"LEO replica {rep}", replica_colour[rep], False) for rep in replicas
    ]
    if hwm_points:
        legend.append(("HWM (leader)", HWM, True))
    for text, colour, dashed in legend:
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(
            f'<line x1="{lx}" x2="{lx + 16}" y1="8" y2="8" stroke="{colour}" stroke-width="2"'
            f"{dash}/>"
            f'<text x="{lx + 20}" y="12">{_a(text)}</text>'
        )
        lx += 28 + 7 * len(text)
    out.append("</svg>")
    return "".join(out)


def untimed_label(r: dict[str, Any]) -> str:
    return f"e{r['leader_epoch']} L{r['leader']} {r.get('election_kind')}"


def untimed_title(r: dict[str, Any], key: str) -> str:
    return f"replica {r['replica']} {key} {r[key]}, time unknown"


def _step_path(
    points: list[tuple[float, float]],
    what: str,
    colour: str,
    right: float,
    replica: int | None,
    dashed: bool = False,
) -> str:
    """A step line: a value holds until the next one (horizontal, then a
    jump); repeated values add no point, so the path stays small."""
    d = [f"M{points[0][0]} {points[0][1]}"]
    last_y = points[0][1]
    for px, py in points[1:]:
        if py == last_y:
            continue
        d.append(f"H{px}V{py}")
        last_y = py
    d.append(f"H{right}")
    dash = ' stroke-dasharray="5 3"' if dashed else ""
    who = "" if replica is None else f' data-replica="{replica}"'
    return (
        f'<path class="{what}"{who} d="{"".join(d)}" fill="none" stroke="{colour}" '
        f'stroke-width="{2 if replica is not None else 1.5}"{dash}/>'
    )


def _leader_hwm(
    r: dict[str, Any], lineage: Sequence[dict[str, Any]], leader_of: dict[int, int]
) -> bool:
    """Whether a row is the HWM as the partition's leader exposed it: the
    broker's own HWM (replica = observer), from the leader of the epoch the
    row names, or, when it names none, of the epoch in force at its time.
    Without a known leader, a broker's own HWM is still shown."""
    if r.get("hwm") is None:
        return False
    if r.get("leader_epoch") is not None and r["leader_epoch"] in leader_of:
        return bool(leader_of[r["leader_epoch"]] == r["replica"])
    if r.get("observer") is not None and r["observer"] != r["replica"]:
        return False
    at = r.get("event_time")
    leader = None
    for e in lineage:
        if e.get("start_time") is not None and at is not None and e["start_time"] <= at:
            leader = e["leader"]
    return leader is None or leader == r["replica"]


def _finding_y(f: dict[str, Any], y: Any, top: float) -> float:
    for key in ("offset_end", "offset_start"):
        if f.get(key) is not None:
            return float(y(f[key]))
    return top + 8


def _finding_marker(f: dict[str, Any], fx: float, fy: float) -> str:
    critical = f.get("severity") == "critical"
    lo, hi = f.get("offset_start"), f.get("offset_end")
    offsets = "" if lo is None and hi is None else f" [{'?' if lo is None else lo}, "
    offsets += "" if lo is None and hi is None else f"{'?' if hi is None else hi})"
    text = f"{f.get('kind')} ({f.get('severity')}){offsets}: {f.get('explanation') or ''}"
    return (
        f'<a class="finding" href="#{_a(f.get("anomaly_id"))}" '
        f'data-anomaly-id="{_a(f.get("anomaly_id"))}" data-kind="{_a(f.get("kind"))}">'
        f"<title>{_a(text)}</title>"
        f'<path d="M{fx} {round(fy - 7, 2)} l6 7 l-6 7 l-6 -7 z" '
        f'fill="{LOST if critical else "#e69f00"}" stroke="#000" stroke-width="0.8"/></a>'
    )
