"""What a person reads after a run: a partition's timeline, and the run as
one self-contained HTML page. Both read the published gold tables (as a BI
tool would: no Spark). Every text that came from an input file is escaped
(DESIGN.md "Hostile input": a log line holding ``<script>`` renders as text).
"""

from __future__ import annotations

import html
import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.run import read_table

#: order of same-time entries: what began the epoch first, its finding last
_RANK = {"epoch": 0, "isr": 1, "finding": 2}


@dataclass(frozen=True)
class Entry:
    """One line of a partition's timeline."""

    at: datetime | None
    what: str  # epoch | isr | finding
    leader_epoch: int | None
    text: str
    source: str  # file:line, or the finding's id

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": None if self.at is None else self.at.isoformat(),
            "what": self.what,
            "leader_epoch": self.leader_epoch,
            "text": self.text,
            "source": self.source,
        }


def parse_partition(spec: str) -> tuple[str, int]:
    """``orders-0`` -> ("orders", 0); topic names may hold dashes."""
    topic, sep, number = spec.rpartition("-")
    if not sep or not topic or not number.isdigit():
        raise ValueError(f"a partition is written TOPIC-N (e.g. orders-0), not {spec!r}")
    return topic, int(number)


def _mine(
    rows: list[dict[str, Any]], topic: str, partition: int, cluster: str | None
) -> list[dict[str, Any]]:
    return [
        r
        for r in rows
        if r["topic"] == topic
        and r["partition"] == partition
        and (cluster is None or r["cluster"] == cluster)
    ]


def _range(r: dict[str, Any]) -> str:
    if r.get("offset_start") is None and r.get("offset_end") is None:
        return ""
    lo = "?" if r.get("offset_start") is None else r["offset_start"]
    hi = "?" if r.get("offset_end") is None else r["offset_end"]
    return f" [{lo}, {hi})"


def timeline(
    out: str, topic: str, partition: int, cluster: str | None = None
) -> tuple[list[Entry], dict[str, Any] | None]:
    """The partition's epochs, recorded ISRs and findings in time order, and
    its verdict row (None when the run holds no such partition)."""
    entries: list[Entry] = []
    for r in _mine(read_table(out, "epoch_lineage"), topic, partition, cluster):
        start = "" if r["start_offset"] is None else f" from offset {r['start_offset']}"
        leader = "no leader" if r["leader"] < 0 else f"leader {r['leader']}"
        entries.append(
            Entry(
                r["start_time"],
                "epoch",
                r["leader_epoch"],
                f"epoch {r['leader_epoch']} begins ({r['election_kind']}): {leader}{start}",
                "" if r["metadata_offset"] is None else f"metadata offset {r['metadata_offset']}",
            )
        )
    for r in _mine(read_table(out, "isr_timeline"), topic, partition, cluster):
        under = ""
        if r["under_min_isr"]:
            under = f" (below min ISR {r['min_isr']})"
        entries.append(
            Entry(
                r["start_time"],
                "isr",
                r["leader_epoch"],
                f"ISR {r['isr']}{under}",
                f"{r['source_file']}:{r['line_no']}",
            )
        )
    for r in _mine(read_table(out, "anomalies"), topic, partition, cluster):
        who = "" if r["replica"] is None else f" replica {r['replica']}"
        entries.append(
            Entry(
                r["detected_at"],
                "finding",
                r["leader_epoch"],
                f"{r['kind']} ({r['severity']}, {r['confidence']}){who}{_range(r)}: "
                f"{r['explanation']}",
                r["anomaly_id"],
            )
        )
    entries.sort(
        key=lambda e: (
            e.at is None,
            e.at or datetime.min,
            e.leader_epoch if e.leader_epoch is not None else -1,
            _RANK[e.what],
        )
    )
    verdicts = _mine(read_table(out, "partition_verdicts"), topic, partition, cluster)
    return entries, (verdicts[0] if verdicts else None)


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_html(out: str) -> str:
    """The run as one HTML page: manifest summary, verdicts, findings with
    their evidence lines. No script, no external resource."""
    manifest_path = Path(out) / "run_manifest.json"
    manifest: dict[str, Any] = {}
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
    findings = sorted(
        read_table(out, "anomalies"),
        key=lambda r: (r["cluster"], r["topic"] or "", r["partition"] or 0, r["leader_epoch"] or 0),
    )
    verdicts = sorted(
        read_table(out, "partition_verdicts"),
        key=lambda r: (r["cluster"], r["topic"] or "", r["partition"]),
    )
    counts = Counter(v["verdict"] for v in verdicts)
    kinds = Counter(f["kind"] for f in findings)
    lost = sum(f["records_lost"] or 0 for f in findings if f["kind"] == "committed_data_loss")
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        "<title>epochtrail report</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
        "pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.4em}"
        ".critical{color:#a00}.warning{color:#a60}</style></head><body>",
        "<h1>epochtrail report</h1>",
        "<p>"
        + _e(
            f"{len(verdicts)} partitions: {counts.get('invalid', 0)} invalid, "
            f"{counts.get('unknown', 0)} unknown, {counts.get('valid', 0)} valid; "
            f"{len(findings)} findings; committed records lost: {lost}"
        )
        + "</p>",
    ]
    if manifest:
        profile = manifest.get("profile") or {}
        parts.append(
            "<p>"
            + _e(
                f"profile {profile.get('chosen')} ({profile.get('why', '')}); "
                f"epochtrail {manifest.get('version', '')}; "
                f"quarantined lines: {manifest.get('quarantined_lines', 0)}"
            )
            + "</p>"
        )
    if kinds:
        parts.append("<h2>Findings by kind</h2><table><tr><th>kind</th><th>count</th></tr>")
        parts += [f"<tr><td>{_e(k)}</td><td>{n}</td></tr>" for k, n in sorted(kinds.items())]
        parts.append("</table>")
    parts.append(
        "<h2>Partitions</h2><table><tr><th>cluster</th><th>partition</th><th>verdict</th>"
        "<th>findings</th><th>gaps</th></tr>"
    )
    for v in verdicts:
        gaps = "".join(f"<li>{_e(g)}</li>" for g in v["gaps"] or [])
        parts.append(
            f"<tr><td>{_e(v['cluster'])}</td><td>{_e(v['topic'])}-{_e(v['partition'])}</td>"
            f"<td>{_e(v['verdict'])}</td><td>{_e(v['findings'])}</td>"
            f"<td>{'<ul>' + gaps + '</ul>' if gaps else ''}</td></tr>"
        )
    parts.append("</table><h2>Findings</h2>")
    for f in findings:
        parts.append(
            f'<h3 id="{_e(f["anomaly_id"])}" class="{_e(f["severity"])}">{_e(f["kind"])} '
            f"{_e(f['topic'])}-{_e(f['partition'])}, epoch {_e(f['leader_epoch'])}"
            f"{_e(_range(f))}</h3>"
        )
        parts.append(
            f"<p>{_e(f['severity'])}, {_e(f['confidence'])}; records lost: "
            f"{_e(f['records_lost'])}; id {_e(f['anomaly_id'])}</p>"
            f"<p>{_e(f['explanation'])}</p>"
        )
        for e in f.get("evidence") or []:
            parts.append(
                f"<p>{_e(e['source_file'])}:{_e(e['line_no'])}</p><pre>{_e(e['text'])}</pre>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
