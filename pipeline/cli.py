"""epochtrail's command line: thin sub-commands, one library call each.

Exit codes: 0 no findings, 1 findings, 3 unknown verdicts only (nothing
invalid, something undecided), 4 bad input, 5 environment (no Java 17+);
2 stays with typer for usage errors.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline.run import EXIT_BAD_INPUT, BadInput, RunOptions
from replay.types import Profile
from simulator.cli import simulate_command

EXIT_ENVIRONMENT = 5

app = typer.Typer(
    name="epochtrail",
    help="Forensics for Kafka replication: did we lose committed data, where, how much, and why?",
    no_args_is_help=True,
    add_completion=False,
)
out_console = Console(soft_wrap=True)
err_console = Console(stderr=True)


class ProfileChoice(StrEnum):
    auto = "auto"
    zk_hw = "zk-hw"
    zk_epoch = "zk-epoch"
    kraft = "kraft"
    kraft_elr = "kraft-elr"


class Format(StrEnum):
    table = "table"
    json = "json"


def _require_java() -> None:
    from pipeline.session import java_major_version

    major = java_major_version()
    if major is None or major < 17:
        found = "no java on PATH or JAVA_HOME" if major is None else f"Java {major}"
        err_console.print(
            f"[red]epochtrail needs Java 17 or newer for Spark; found {found}.[/red] "
            "Install a JDK 17+ (e.g. `apt-get install openjdk-17-jre-headless`) and set JAVA_HOME."
        )
        raise typer.Exit(EXIT_ENVIRONMENT)


@app.command()
def run(
    paths: Annotated[
        list[str], typer.Argument(help="Files or folders of artefacts (any tree, plain or .gz).")
    ],
    out: Annotated[
        str, typer.Option("--out", help="Folder for the gold Parquet tables and run_manifest.json.")
    ],
    master: Annotated[
        str | None, typer.Option("--master", help="Spark master URL; default local[*].")
    ] = None,
    profile: Annotated[
        ProfileChoice,
        typer.Option("--profile", help="Protocol era whose rules judge the evidence."),
    ] = ProfileChoice.auto,
    max_clock_skew: Annotated[
        float,
        typer.Option(
            "--max-clock-skew", help="Seconds of clock skew allowed between brokers.", min=0.0
        ),
    ] = 2.0,
    cluster: Annotated[
        str | None, typer.Option("--cluster", help="Cluster name for the output partitions.")
    ] = None,
    broker_id: Annotated[
        int | None,
        typer.Option("--broker-id", help="Observer broker for files whose path names none."),
    ] = None,
    state: Annotated[
        str | None,
        typer.Option(
            "--state", help="Folder of saved replay state: continue from the last run, save anew."
        ),
    ] = None,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate/--no-validate",
            help="Check what the run wrote against the Great Expectations suites.",
        ),
    ] = True,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Replace client ids and principals in the published log lines by pseudonyms.",
        ),
    ] = False,
    data_docs: Annotated[
        bool,
        typer.Option(
            "--data-docs",
            help="Also build Great Expectations' static Data Docs site under OUT/data_docs/.",
        ),
    ] = False,
) -> None:
    """Ingest artefacts, replay every partition against the protocol, publish findings."""
    from pipeline.progress import for_stderr
    from pipeline.run import run_job

    _require_java()
    stage, close_progress = for_stderr()
    try:
        summary = run_job(
            RunOptions(
                paths=paths,
                out=out,
                master=master,
                profile=Profile(profile.value),
                max_clock_skew_s=max_clock_skew,
                cluster=cluster,
                broker_id=broker_id,
                state=state,
                redact=redact,
                validate=validate,
                data_docs=data_docs,
                progress=stage,
            )
        )
    except BadInput as error:
        close_progress()
        err_console.print(f"[red]bad input:[/red] {error}")
        raise typer.Exit(EXIT_BAD_INPUT) from error
    close_progress()
    _print_summary(summary.manifest, summary.findings)
    raise typer.Exit(summary.exit_code)


def _print_summary(manifest: dict[str, Any], findings: list[dict[str, Any]]) -> None:
    c = out_console
    v = manifest["verdicts"]
    c.print(
        f"[bold]epochtrail[/bold] {manifest['version']}: profile {manifest['profile']['chosen']} "
        f"({manifest['profile']['why']})"
    )
    c.print(
        f"files {len(manifest['files'])}, lines read {manifest['lines_read']}, parsed "
        f"{manifest['lines_parsed']}, ignored {manifest['lines_ignored']}, quarantined "
        f"{manifest['quarantined_lines']}"
    )
    unread = [f for f in manifest["files"] if f.get("note")]
    if unread:
        c.print(f"not read as lines: {len(unread)} file(s)", soft_wrap=True)
        for f in unread:
            c.print(f"  {f['path']}: {f['note']}", soft_wrap=True, markup=False, highlight=False)
    c.print(
        f"partitions {manifest['partitions']}: valid {v.get('valid', 0)}, invalid "
        f"{v.get('invalid', 0)}, unknown {v.get('unknown', 0)}"
    )
    kinds = {k: n for k, n in manifest["findings_by_kind"].items() if n}
    c.print(
        "findings: " + (", ".join(f"{k} {n}" for k, n in kinds.items()) or "none"),
        soft_wrap=True,
    )
    if findings:
        table = Table(show_lines=False)
        _kind_column(table)
        for col in ("severity", "partition", "epoch", "replica", "offsets", "lost"):
            table.add_column(col, overflow="fold")
        for f in findings:
            table.add_row(
                f["kind"],
                f["severity"],
                escape(f"{f['topic']}-{f['partition']}"),
                _s(f["leader_epoch"]),
                _s(f["replica"]),
                _offsets(f),
                _s(f["records_lost"]),
            )
        c.print(table)
        for f in findings:
            c.print(f"- {f['explanation']}", soft_wrap=True, markup=False, highlight=False)
    validation = manifest.get("validation")
    if validation is not None:
        if validation["success"]:
            c.print("validation: every expectation met", highlight=False)
        else:
            err_console.print("[red]validation failed:[/red]")
            for line in validation_lines(validation):
                err_console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    c.print(f"out: {manifest['out']}  (exit {manifest['exit_code']})")


def validation_lines(validation: dict[str, Any]) -> list[str]:
    """One line per failed expectation of the manifest's ``validation``."""
    out = []
    for suite in validation["suites"]:
        for e in suite["expectations"]:
            if e["success"]:
                continue
            what = e.get("error") or f"{e.get('unexpected_count')} unexpected" + (
                f", e.g. {e['unexpected_examples']}" if e.get("unexpected_examples") else ""
            )
            out.append(f"{suite['suite']}: {e['rule']}({', '.join(e['columns'])}) failed: {what}")
    return out


def _kind_column(table: Table) -> None:
    """The finding kind, never cut: ``committed_data_loss`` whole at 100
    columns (other columns wrap first)."""
    from replay.types import FindingKind

    table.add_column("kind", no_wrap=True, min_width=max(len(k.value) for k in FindingKind))


def _s(value: object) -> str:
    return "" if value is None else str(value)


def _offsets(f: dict[str, Any]) -> str:
    if f["offset_start"] is None and f["offset_end"] is None:
        return ""
    return escape(f"[{_s(f['offset_start']) or '?'}, {_s(f['offset_end']) or '?'})")


ANOMALY_FIELDS = (
    "anomaly_id",
    "kind",
    "severity",
    "confidence",
    "cluster",
    "topic",
    "partition",
    "leader_epoch",
    "replica",
    "offset_start",
    "offset_end",
    "records_lost",
    "qualifier",
    "caused_by",
    "detected_at",
    "profile",
    "explanation",
    "evidence",
    "acked_produces",
)


@app.command()
def anomalies(
    out: Annotated[Path, typer.Argument(help="The --out folder of a run.")],
    format: Annotated[
        Format, typer.Option("--format", help="table, or json: one object per line.")
    ] = Format.table,
    cluster: Annotated[
        str | None, typer.Option("--cluster", help="Only this cluster (a fleet run).")
    ] = None,
) -> None:
    """List the findings of a run (reads the Parquet directly, no Spark)."""
    from pipeline.report import read_gold

    if not out.exists():
        err_console.print(f"[red]bad input:[/red] no such folder: {out}")
        raise typer.Exit(EXIT_BAD_INPUT)
    rows = sorted(
        read_gold(str(out), "anomalies", cluster),
        key=lambda r: (
            r["cluster"],
            r["topic"] or "",
            r["partition"] or 0,
            r["leader_epoch"] or 0,
            r["kind"],
        ),
    )
    if format == Format.json:
        for row in rows:
            record = {k: row.get(k) for k in ANOMALY_FIELDS}
            sys.stdout.write(json.dumps(record, default=str) + "\n")
        return
    if not rows:
        out_console.print("no findings")
        return
    # no vertical rules: the id and the kind stay whole at 100 columns
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    # the id is what `explain` takes: never cut either
    table.add_column("anomaly_id", no_wrap=True, min_width=max(len(r["anomaly_id"]) for r in rows))
    _kind_column(table)
    # severity over confidence in one cell: whole words, one column fewer
    for col in ("severity", "partition", "epoch", "replica", "lost"):
        table.add_column(col, no_wrap=True)
    table.add_column("offsets", overflow="fold")
    for r in rows:
        table.add_row(
            r["anomaly_id"],
            r["kind"],
            f"{r['severity']}\n{r['confidence']}",
            escape(f"{r['topic']}-{r['partition']}"),
            _s(r["leader_epoch"]),
            _s(r["replica"]),
            _s(r["records_lost"]),
            _offsets(r),
        )
    out_console.print(table)


@app.command()
def explain(
    out: Annotated[Path, typer.Argument(help="The --out folder of a run.")],
    anomaly_id: Annotated[str, typer.Argument(help="The finding's anomaly_id.")],
) -> None:
    """Explain one finding: its sentence, the rule it breaks, its evidence in order."""
    from pipeline.report import input_roots, load_manifest, read_gold, relative_source
    from replay.findings import REGISTRY
    from replay.types import FindingKind

    matches = [r for r in read_gold(str(out), "anomalies") if r["anomaly_id"] == anomaly_id]
    if not matches:
        err_console.print(f"[red]bad input:[/red] no finding {anomaly_id} under {out}")
        raise typer.Exit(EXIT_BAD_INPUT)
    f = matches[0]
    c = out_console
    c.print(f"[bold]{f['kind']}[/bold] ({f['severity']}, {f['confidence']}) {anomaly_id}")
    c.print(f["explanation"], soft_wrap=True, markup=False)
    c.print(f"rule: {REGISTRY[FindingKind(f['kind'])].VIOLATES}", soft_wrap=True, markup=False)
    if f.get("caused_by"):
        c.print("caused by: " + ", ".join(f["caused_by"]))
    c.print("evidence:")
    roots = input_roots(load_manifest(str(out)))
    for e in f.get("evidence") or []:
        where = f"{relative_source(e['source_file'], roots)}:{e['line_no']}"
        c.print(f"  {where}", highlight=False, markup=False)
        c.print(f"    {e['text']}", soft_wrap=True, highlight=False, markup=False)


@app.command()
def timeline(
    out: Annotated[Path, typer.Argument(help="The --out folder of a run.")],
    partition: Annotated[str, typer.Argument(help="TOPIC-N, e.g. orders-0.")],
    cluster: Annotated[
        str | None, typer.Option("--cluster", help="Only this cluster (a fleet run).")
    ] = None,
    format: Annotated[
        Format, typer.Option("--format", help="table, or json: one object per line.")
    ] = Format.table,
    chart: Annotated[
        Path | None,
        typer.Option("--chart", help="Also write the partition's chart alone, as an SVG file."),
    ] = None,
) -> None:
    """One partition's story in time order: leader epochs, ISRs, findings."""
    from pipeline.report import parse_partition, partition_chart
    from pipeline.report import timeline as partition_timeline

    try:
        topic, number = parse_partition(partition)
    except ValueError as error:
        err_console.print(f"[red]bad input:[/red] {escape(str(error))}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if not out.exists():
        err_console.print(f"[red]bad input:[/red] no such folder: {escape(str(out))}")
        raise typer.Exit(EXIT_BAD_INPUT)
    entries, verdict = partition_timeline(str(out), topic, number, cluster)
    if verdict is None and not entries:
        err_console.print(
            f"[red]bad input:[/red] no partition {escape(partition)} in the run under "
            f"{escape(str(out))}"
        )
        raise typer.Exit(EXIT_BAD_INPUT)
    if chart is not None:
        svg = partition_chart(str(out), topic, number, cluster)
        if svg is not None:
            chart.write_text(svg + "\n", encoding="utf-8")
            err_console.print(f"chart: {escape(str(chart))}", highlight=False)
    if format == Format.json:
        for entry in entries:
            sys.stdout.write(json.dumps(entry.as_dict()) + "\n")
        return
    table = Table(title=escape(f"{topic}-{number}"))
    for col in ("time", "epoch", "what", "", "source"):
        table.add_column(col)
    for e in entries:
        table.add_row(_s(e.at), _s(e.leader_epoch), e.what, escape(e.text), escape(e.source))
    out_console.print(table)
    if verdict is not None:
        out_console.print(f"verdict: {verdict['verdict']}", highlight=False)
        for gap in verdict["gaps"] or []:
            out_console.print(f"  gap: {gap}", markup=False, highlight=False)


@app.command()
def report(
    out: Annotated[Path, typer.Argument(help="The --out folder of a run.")],
    html_file: Annotated[
        Path | None, typer.Option("--html", help="Where to write it; default OUT/report.html.")
    ] = None,
    partition: Annotated[
        list[str] | None,
        typer.Option(
            "--partition",
            help="TOPIC-N: also chart this partition (partitions with findings always are).",
        ),
    ] = None,
) -> None:
    """Write the run as one self-contained HTML page (every log text escaped)."""
    import os

    from pipeline.report import parse_partition, render_html

    if not out.exists():
        err_console.print(f"[red]bad input:[/red] no such folder: {escape(str(out))}")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        wanted = [parse_partition(p) for p in partition or []]
    except ValueError as error:
        err_console.print(f"[red]bad input:[/red] {escape(str(error))}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    target = html_file or out / "report.html"
    base = os.path.relpath(out.resolve(), target.resolve().parent)
    target.write_text(render_html(str(out), wanted, base), encoding="utf-8")
    out_console.print(f"report: {target}", highlight=False)


# The simulator is an independent package (it never imports the pipeline);
# the CLI only exposes its command.
app.command("simulate", help="Simulate a faulty Kafka cluster: artefacts plus truth.json.")(
    simulate_command
)


def main() -> None:  # pragma: no cover - console script entry
    app()
