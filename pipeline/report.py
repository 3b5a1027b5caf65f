"""What a person reads after a run: a partition's timeline (as rows and as a
chart), and the run as one self-contained HTML page. All of it reads the
published gold tables as a BI tool would (no Spark), with the lake's hive
partitioning stated rather than guessed: ``cluster`` and ``date`` are
strings, so a cluster named ``42`` stays ``"42"``.

The page comes from a jinja2 template with autoescape on: every text that
came from an input file is escaped by default (DESIGN.md "Hostile input": a
log line holding ``<script>`` renders as text). The one piece of markup not
escaped by the template is the chart, drawn by :mod:`pipeline.chart`, which
escapes its own texts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from pipeline.chart import PartitionData, draw

#: order of same-time entries: what began the epoch first, its finding last
_RANK = {"epoch": 0, "isr": 1, "finding": 2}

#: the gold tables the report reads
REPORT_TABLES = (
    "anomalies",
    "partition_verdicts",
    "epoch_lineage",
    "isr_timeline",
    "replica_offsets",
)

#: how bad a partition's verdict is, for sorting clusters and partitions
_VERDICT_RANK = {"invalid": 0, "unknown": 1, "valid": 2}
_SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}


# --- reading the lake -------------------------------------------------------------


def read_gold(
    out: str,
    table: str,
    cluster: str | None = None,
    partitions: set[tuple[str, str, int]] | None = None,
) -> list[dict[str, Any]]:
    """A gold table's rows, read with the partitioning it was written with:
    ``cluster=`` and ``date=`` folders, both strings (pyarrow would otherwise
    infer ``cluster=42`` as the integer 42 and ``date=`` as a date).
    ``cluster`` keeps that cluster's folder only; ``partitions`` (cluster,
    topic, partition) keeps those partitions' rows only."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    parsed = urlparse(out)
    if parsed.scheme not in ("", "file"):
        return []
    root = Path(parsed.path if parsed.scheme else out) / table
    if not root.exists() or not any(root.rglob("*.parquet")):
        return []
    partitioning = ds.partitioning(
        pa.schema([("cluster", pa.string()), ("date", pa.string())]), flavor="hive"
    )
    dataset = ds.dataset(str(root), format="parquet", partitioning=partitioning)
    where = None if cluster is None else ds.field("cluster") == cluster
    if partitions is not None:
        # a superset, pushed down to the files; exact below
        topics = {t for _, t, _ in partitions}
        narrow = ds.field("cluster").isin(sorted({c for c, _, _ in partitions})) & ds.field(
            "partition"
        ).isin(sorted({p for _, _, p in partitions}))
        if None not in topics:  # a partition known by its topic id only
            narrow = narrow & ds.field("topic").isin(sorted(topics))
        where = narrow if where is None else where & narrow
    rows: list[dict[str, Any]] = dataset.to_table(filter=where).to_pylist()
    if partitions is not None:
        rows = [r for r in rows if (r["cluster"], r["topic"], r["partition"]) in partitions]
    return rows


def load_manifest(out: str) -> dict[str, Any]:
    path = Path(out) / "run_manifest.json"
    if not path.exists():
        return {}
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


# --- paths a person can use -------------------------------------------------------


def _local(path: str) -> str:
    parsed = urlparse(path)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return path


def input_roots(manifest: dict[str, Any]) -> list[str]:
    """The input paths given to ``run``, absolute. The manifest keeps them as
    given (perhaps relative to where ``run`` ran); its files are absolute, so
    a relative input is found as the part of a file's path that it names."""
    files = [_local(str(f.get("path") or "")) for f in manifest.get("files") or []]
    roots = []
    for p in manifest.get("inputs") or []:
        local = _local(str(p))
        if "://" in local or os.path.isabs(local):
            roots.append(local.rstrip("/") or "/")
            continue
        norm = os.path.normpath(local)
        found = None
        for f in files:
            if norm == ".":
                break
            at = f.find("/" + norm + "/")
            if at >= 0:
                found = f[: at + 1 + len(norm)]
                break
            if f.endswith("/" + norm):
                found = f
                break
        roots.append(found or os.path.abspath(local))
    return roots


def relative_source(path: str | None, roots: list[str]) -> str:
    """``file:/x/in/broker-1/a.log`` -> ``broker-1/a.log`` when ``/x/in`` was
    given to ``run``. With several inputs the input's own name leads, so the
    path stays unambiguous; a path under no input is shown whole (local
    paths without ``file:``)."""
    if not path:
        return ""
    local = _local(path)
    for root in roots:
        base = root.rstrip("/")
        if local == base:
            return os.path.basename(base)
        if local.startswith(base + "/"):
            rest = local[len(base) + 1 :]
            if len(roots) > 1:
                return str(PurePosixPath(os.path.basename(base)) / rest)
            return rest
    return local


# --- one partition ------------------------------------------------------------------


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
    roots = input_roots(load_manifest(out))
    entries: list[Entry] = []
    for r in _mine(read_gold(out, "epoch_lineage", cluster), topic, partition, cluster):
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
    for r in _mine(read_gold(out, "isr_timeline", cluster), topic, partition, cluster):
        under = ""
        if r["under_min_isr"]:
            under = f" (below min ISR {r['min_isr']})"
        entries.append(
            Entry(
                r["start_time"],
                "isr",
                r["leader_epoch"],
                f"ISR {r['isr']}{under}",
                f"{relative_source(r['source_file'], roots)}:{r['line_no']}",
            )
        )
    for r in _mine(read_gold(out, "anomalies", cluster), topic, partition, cluster):
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
    verdicts = _mine(read_gold(out, "partition_verdicts", cluster), topic, partition, cluster)
    return entries, (verdicts[0] if verdicts else None)


def partition_chart(out: str, topic: str, partition: int, cluster: str | None = None) -> str | None:
    """The partition's chart (an ``<svg>`` string), or None when the run
    holds no such partition. Without ``cluster``, the first cluster that has
    it (a fleet run names the cluster)."""
    tables = {
        t: _mine(read_gold(out, t, cluster), topic, partition, cluster) for t in REPORT_TABLES
    }
    clusters = sorted({r["cluster"] for rows in tables.values() for r in rows})
    if not clusters:
        return None
    chosen = cluster if cluster is not None else clusters[0]
    mine = {t: [r for r in rows if r["cluster"] == chosen] for t, rows in tables.items()}
    return draw(
        PartitionData(
            chosen,
            topic,
            partition,
            offsets=mine["replica_offsets"],
            lineage=mine["epoch_lineage"],
            isr=mine["isr_timeline"],
            findings=mine["anomalies"],
        )
    )


# --- the page -------------------------------------------------------------------------


def anchor(*parts: object) -> str:
    """An HTML id for a cluster or partition: readable, unique, safe."""
    raw = "\x1f".join(str(p) for p in parts)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(str(p) for p in parts))[:60]
    return f"p-{slug}-{hashlib.sha1(raw.encode()).hexdigest()[:6]}"


def _key(r: dict[str, Any]) -> tuple[str, str, int]:
    return (r["cluster"], r.get("topic") or r.get("topic_id") or "", r["partition"])


def page_context(
    out: str,
    partitions: list[tuple[str, int]] | None = None,
    link_base: str = ".",
) -> dict[str, Any]:
    """Everything the template shows, from the gold tables and the manifest.
    ``partitions`` adds charts for partitions without findings;
    ``link_base`` is the path from the page to ``out`` (for the GE links)."""
    manifest = load_manifest(out)
    roots = input_roots(manifest)
    wanted = set(partitions or [])
    rows = {t: read_gold(out, t) for t in ("anomalies", "partition_verdicts", "epoch_lineage")}
    # the per-event tables, only for the partitions the page charts
    charted = {
        (r["cluster"], r["topic"], r["partition"])
        for r in rows["anomalies"]
        if r.get("partition") is not None
    } | {
        (r["cluster"], r["topic"], r["partition"])
        for r in rows["partition_verdicts"]
        if (r.get("topic"), r["partition"]) in wanted
    }
    for table in ("isr_timeline", "replica_offsets"):
        rows[table] = read_gold(out, table, partitions=charted) if charted else []
    by_partition: dict[tuple[str, str, int], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: {t: [] for t in REPORT_TABLES}
    )
    for table, table_rows in rows.items():
        for r in table_rows:
            if r.get("partition") is None:
                continue
            by_partition[_key(r)][table].append(r)
    verdicts = sorted(rows["partition_verdicts"], key=_key)
    findings = rows["anomalies"]
    counts = Counter(v["verdict"] for v in verdicts)
    lost = sum(f["records_lost"] or 0 for f in findings if f["kind"] == "committed_data_loss")
    kinds = Counter(f["kind"] for f in findings)

    clusters: dict[str, dict[str, Any]] = {}
    for name in sorted({k[0] for k in by_partition} | {v["cluster"] for v in verdicts}):
        clusters[name] = {
            "name": name,
            "anchor": anchor("cluster", name),
            "partitions": 0,
            "verdicts": Counter(),
            "lost": 0,
            "findings": 0,
            "elections": Counter(),
            "profile": ((manifest.get("profiles") or {}).get(name) or {}).get("chosen"),
            "sections": [],
        }
    for v in verdicts:
        c = clusters[v["cluster"]]
        c["partitions"] += 1
        c["verdicts"][v["verdict"]] += 1
    for f in findings:
        c = clusters[f["cluster"]]
        c["findings"] += 1
        if f["kind"] == "committed_data_loss":
            c["lost"] += f["records_lost"] or 0
    for r in rows["epoch_lineage"]:
        clusters[r["cluster"]]["elections"][r["election_kind"]] += 1

    verdict_of = {_key(v): v for v in verdicts}
    for key, tables in sorted(
        by_partition.items(),
        key=lambda kv: (
            _VERDICT_RANK.get((verdict_of.get(kv[0]) or {}).get("verdict", ""), 3),
            kv[0],
        ),
    ):
        cluster, topic, number = key
        mine = tables["anomalies"]
        if not mine and (topic, number) not in wanted:
            continue
        verdict = verdict_of.get(key) or {}
        mine = sorted(
            mine,
            key=lambda f: (
                _SEVERITY_RANK.get(f["severity"], 3),
                f.get("detected_at") is None,
                f.get("detected_at") or datetime.min,
                f["anomaly_id"],
            ),
        )
        section = {
            "anchor": anchor(cluster, topic, number),
            "cluster": cluster,
            "name": f"{topic}-{number}",
            "verdict": verdict.get("verdict", "unknown"),
            "gaps": verdict.get("gaps") or [],
            "lost": sum(f["records_lost"] or 0 for f in mine if f["kind"] == "committed_data_loss"),
            "chart": draw(
                PartitionData(
                    cluster,
                    topic,
                    number,
                    offsets=tables["replica_offsets"],
                    lineage=tables["epoch_lineage"],
                    isr=tables["isr_timeline"],
                    findings=mine,
                )
            ),
            "findings": [
                {
                    **f,
                    "range": _range(f).strip(),
                    "evidence": [
                        {
                            "where": f"{relative_source(e['source_file'], roots)}:{e['line_no']}",
                            "text": e.get("text"),
                        }
                        for e in (f.get("evidence") or [])
                    ],
                }
                for f in mine
            ],
        }
        clusters[cluster]["sections"].append(section)

    ordered = sorted(
        clusters.values(),
        key=lambda c: (
            -c["lost"],
            -c["verdicts"]["invalid"],
            -c["verdicts"]["unknown"],
            -c["findings"],
            c["name"],
        ),
    )
    for c in ordered:
        c["elections_text"] = ", ".join(f"{k} {n}" for k, n in sorted(c["elections"].items()))
    if counts.get("invalid"):
        overall = "invalid"
    elif counts.get("unknown") or not verdicts:
        overall = "unknown"
    else:
        overall = "valid"
    lost_in = sorted(
        {
            s["name"] if len(clusters) == 1 else f"{s['cluster']} {s['name']}"
            for c in ordered
            for s in c["sections"]
            if s["lost"]
        }
    )
    return {
        "overall": overall,
        "verdicts": {k: counts.get(k, 0) for k in ("invalid", "unknown", "valid")},
        "partitions": len(verdicts),
        "findings": len(findings),
        "kinds": sorted(kinds.items()),
        "lost": lost,
        "lost_in": lost_in,
        "clusters": ordered,
        "fleet": len(ordered) > 1,
        "all_partitions": [
            {
                **v,
                "name": f"{v.get('topic') or v.get('topic_id')}-{v['partition']}",
                "anchor": anchor(*_key(v)),
                "charted": bool(by_partition[_key(v)]["anomalies"])
                or (v.get("topic"), v["partition"]) in wanted,
            }
            for v in sorted(verdicts, key=lambda v: (_VERDICT_RANK.get(v["verdict"], 3), _key(v)))
        ],
        "manifest": manifest,
        "validation": _validation(out, manifest, link_base),
    }


def _validation(out: str, manifest: dict[str, Any], link_base: str) -> dict[str, Any] | None:
    summary = manifest.get("validation")
    folder = Path(out) / "validation"
    results = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
    docs = Path(out) / "data_docs" / "index.html"
    if summary is None and not results:
        return None
    base = link_base.rstrip("/") or "."
    failed = []
    for suite in (summary or {}).get("suites", []):
        for e in suite["expectations"]:
            if not e["success"]:
                failed.append(f"{suite['suite']}: {e['rule']}({', '.join(e['columns'])})")
    return {
        "summary": summary,
        "failed": failed,
        "results": [(name, f"{base}/validation/{name}") for name in results],
        "data_docs": f"{base}/data_docs/index.html" if docs.exists() else None,
    }


def render_html(
    out: str, partitions: list[tuple[str, int]] | None = None, link_base: str = "."
) -> str:
    """The run as one HTML page: the story first (verdict, records lost, a
    chart per partition with findings, the findings with their evidence
    folded), then every partition, the validation and the run's provenance.
    No script, no external resource."""
    from jinja2 import Environment, PackageLoader, select_autoescape
    from markupsafe import Markup

    env = Environment(
        loader=PackageLoader("pipeline", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    context = page_context(out, partitions, link_base)
    for c in context["clusters"]:
        for s in c["sections"]:
            # drawn by pipeline.chart, which escapes every text it holds
            s["chart"] = Markup(s["chart"])  # noqa: S704
    return env.get_template("report.html.j2").render(**context)
