"""The main job: ingest -> reconstruct -> replay -> publish, and its manifest."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import functions as F

from pipeline import __version__
from pipeline.bridge import BridgeSettings, replay_partitions, shared_table, split
from pipeline.era import EraEvidence, choose, evidence_by_cluster
from pipeline.ingest.lines import cluster_of
from pipeline.publish import (
    conform,
    local_path,
    partition_health_daily,
    redact,
    redact_quarantine,
    with_evidence_text,
    write_manifest,
    write_table,
)
from pipeline.reconstruct import (
    compress,
    partition_rows,
    shared_rows,
    with_topic_key,
)
from pipeline.session import end_spark, materialise, release, spark_running
from replay.types import FindingKind, Profile, Verdict

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_UNKNOWN = 3
EXIT_BAD_INPUT = 4


class BadInput(Exception):
    """Input the job cannot start from (missing paths, nothing readable)."""


@dataclass(frozen=True)
class RunOptions:
    paths: list[str]
    out: str
    master: str | None = None
    profile: Profile = Profile.AUTO
    max_clock_skew_s: float = 2.0
    cluster: str | None = None
    broker_id: int | None = None
    #: folder of the saved replay state for incremental runs
    state: str | None = None
    #: client ids and principals in gold log lines replaced by pseudonyms
    redact: bool = False
    #: run the Great Expectations suites over what the run wrote
    validate: bool = True
    #: also build GE's static Data Docs site under out/data_docs/
    data_docs: bool = False
    #: entered around each stage, e.g. to show progress (pipeline/progress.py)
    progress: Callable[[str], AbstractContextManager[None]] | None = None


@dataclass
class RunSummary:
    manifest: dict[str, Any]
    partitions: int
    verdicts: dict[str, int]
    findings_by_kind: dict[str, int]
    quarantined_lines: int
    exit_code: int
    manifest_path: str
    findings: list[dict[str, Any]] = field(default_factory=list)


def _sha256(path: str) -> str | None:
    local = local_path(path)
    if local is None or not local.is_file():
        return None
    digest = hashlib.sha256()
    with local.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Timings:
    def __init__(
        self, progress: Callable[[str], AbstractContextManager[None]] | None = None
    ) -> None:
        self.seconds: dict[str, float] = {}
        self.progress = progress

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            with self.progress(name) if self.progress else nullcontext():
                yield
        finally:
            self.seconds[name] = round(time.perf_counter() - start, 3)


def check_paths(paths: list[str]) -> None:
    if not paths:
        raise BadInput("no input path given")
    for path in paths:
        local = local_path(path)
        if local is not None and not local.exists():
            raise BadInput(f"input path does not exist: {path}")


def exit_code_for(verdicts: dict[str, int], findings: int) -> int:
    if findings:
        return EXIT_FINDINGS
    if verdicts.get(Verdict.UNKNOWN.value, 0) or not sum(verdicts.values()):
        return EXIT_UNKNOWN
    return EXIT_OK


def run_job(options: RunOptions) -> RunSummary:
    from pipeline.ingest import ingest
    from pipeline.ingest.sniff import input_bytes
    from pipeline.session import (
        end_spark_early,
        get_spark,
        prestart_python_workers,
        reuse_python_workers,
        small_input,
    )

    check_paths(options.paths)
    started = datetime.now(UTC)
    run_date = started.strftime("%Y-%m-%d")
    timings = Timings(options.progress)
    size = input_bytes(options.paths)
    # GE's import and context load in the background while Spark works: as
    # the run starts for a small input (its run is shorter than the
    # import), after the replay for a large one (GE's 150 MiB in the driver
    # and the replay's Python workers are then never resident together: the
    # peak of a 1 GiB run)
    early_ge = options.validate and small_input(size)
    if early_ge:
        from pipeline.quality import prewarm

        prewarm()
    # A run of a large input that starts its own session (the CLI's) ends
    # it before validation; one that finds a session running (tests, a
    # notebook) leaves it be.
    end_first = not spark_running() and end_spark_early(size)
    with timings.stage("spark_start"):
        spark = get_spark(options.master, input_size=size)
    if reuse_python_workers(size):
        prestart_python_workers(spark)
    cluster = options.cluster or "default"

    with timings.stage("ingest"):
        ingested = ingest(
            spark,
            options.paths,
            cluster=cluster,
            broker_id=options.broker_id,
            persist=True,
        )
    try:
        return _judge_and_publish(
            options,
            spark,
            ingested,
            timings,
            started,
            run_date,
            cluster,
            late_ge=not early_ge,
            end_spark_first=end_first,
        )
    finally:
        if spark_running():
            ingested.unpersist()


def _judge_and_publish(
    options: RunOptions,
    spark: Any,
    ingested: Any,
    timings: Timings,
    started: datetime,
    run_date: str,
    cluster: str,
    late_ge: bool = False,
    end_spark_first: bool = False,
) -> RunSummary:
    with timings.stage("accounting"):
        files = [r.asDict() for r in ingested.file_stats.orderBy("path").collect()]
    if not files:
        raise BadInput("no input files found under " + ", ".join(options.paths))
    # a file that is not text (kind "binary") is of no supported kind either
    if all(f["kind"] in ("unrecognised", "binary") for f in files):
        raise BadInput(
            "no file of a supported kind (request log, metadata dump or raw metadata segment, "
            "broker log, checkpoint, segment dump or raw data segment, znode dump, "
            "point-in-time view, bundle) "
            "found under " + ", ".join(options.paths)
        )

    # The profile is chosen per cluster: one fleet run may hold clusters of
    # several eras, and each is judged by the rules of its own evidence.
    clusters = sorted({cluster_of(f["path"], cluster) for f in files})
    kinds = ingested.events.groupBy("cluster", "kind").agg(
        F.count_if(F.col("elr").isNotNull() | F.col("last_known_elr").isNotNull()).alias("elr"),
        F.count_if(F.col("current_leader_epoch") >= 0).alias("named_epochs"),
    )
    seen: dict[str, dict[str, Any]] = {}
    for r in kinds.collect():
        seen.setdefault(r["cluster"], {})[r["kind"]] = r
    chosen: dict[str, tuple[Profile, str]] = {}
    # Without a controller's evidence, the era from what the files say
    # (version and configuration lines, request versions, templates, views).
    markers = evidence_by_cluster(ingested.events) if options.profile == Profile.AUTO else {}
    evidence: dict[str, dict[str, Any]] = {}
    for c in sorted(set(clusters) | set(seen)):
        mine = seen.get(c, {})
        has_metadata = any(
            f["kind"] in ("metadata_dump", "metadata_segment")
            for f in files
            if cluster_of(f["path"], cluster) == c
        )
        has_elr = has_metadata and any(r["elr"] for r in mine.values())
        has_leader_epochs = "epoch_checkpoint" in mine or bool(
            mine.get("fetch_request") and mine["fetch_request"]["named_epochs"]
        )
        has_zk_controller = "leader_and_isr" in mine or "zk_partition_state" in mine
        profile, why, named, default = choose(
            options.profile,
            has_metadata,
            has_elr,
            has_zk_controller,
            has_leader_epochs,
            markers.get(c, EraEvidence()),
        )
        chosen[c] = (profile, why)
        evidence[c] = {"evidence": named, "default": default}
    distinct = {p for p, _ in chosen.values()}
    if len(distinct) == 1:
        profile, why = next(iter(chosen.values()))
    else:
        profile, why = Profile.AUTO, "chosen per cluster from each cluster's evidence: see profiles"
    observers: dict[str, set[int]] = {}
    for f in files:
        if f["kind"] == "request_log" and f["observer"] is not None:
            observers.setdefault(cluster_of(f["path"], cluster), set()).add(int(f["observer"]))
    settings = BridgeSettings(
        profile if profile != Profile.AUTO else Profile.KRAFT,
        options.max_clock_skew_s,
        {c: frozenset(b) for c, b in observers.items()},
        {c: p for c, (p, _) in chosen.items()},
    )

    states = saved_state(spark, options.state) if options.state else None
    with timings.stage("reconstruct_replay"):
        # Compression and replay in one plan, straight from the ingest's
        # cached rows: compress's window leaves the rows hash-partitioned and
        # sorted by partition, which is what the replay's grouping needs (a
        # materialised frame between them forgets that, and every event was
        # shuffled and sorted a second time). The rows that concern many
        # partitions are collected once and copied into each partition's
        # replay (reconstruct.shared_rows), so no join reads the evidence.
        streams = partition_rows(with_topic_key(ingested.events))
        shared = shared_table(shared_rows(ingested.events))
        replayed = materialise(replay_partitions(compress(streams), settings, states, shared))
        # The replay's few rows per partition apart from replica_offsets'
        # many (1.1 million at 1 GiB): the tables below each read them.
        bridged = materialise(replayed.filter(F.col("table") != "replica_offsets"))
    if options.validate and late_ge:
        from pipeline.quality import prewarm

        prewarm()  # a large input's GE loads while the run publishes

    out = options.out
    with timings.stage("publish"):
        anomalies = with_evidence_text(split(bridged, "anomalies"), ingested.lines_of)
        quarantine = ingested.quarantine
        if options.redact:
            anomalies, quarantine = redact(anomalies), redact_quarantine(quarantine)
        anomalies_gold = conform(anomalies, "anomalies", run_date, "detected_at")
        write_table(anomalies_gold, out, "anomalies")
        lineage = conform(split(bridged, "epoch_lineage"), "epoch_lineage", run_date, "start_time")
        write_table(lineage, out, "epoch_lineage")
        isr_timeline = conform(
            split(bridged, "isr_timeline"), "isr_timeline", run_date, "start_time"
        )
        write_table(isr_timeline, out, "isr_timeline")
        offsets_gold = conform(
            split(replayed, "replica_offsets"),
            "replica_offsets",
            run_date,
            "event_time",
        )
        write_table(offsets_gold, out, "replica_offsets")
        verdicts_df = split(bridged, "partition_verdicts")
        verdicts_gold = conform(verdicts_df, "partition_verdicts", run_date, "last_event_time")
        write_table(verdicts_gold, out, "partition_verdicts")
        health = partition_health_daily(
            conform(split(bridged, "anomalies"), "anomalies", run_date, "detected_at"),
            lineage,
            isr_timeline,
            verdicts_gold,
        )
        health_gold = conform(health, "partition_health_daily", run_date, None)
        write_table(health_gold, out, "partition_health_daily")
        quarantine_gold = conform(quarantine, "quarantine", run_date, None)
        write_table(quarantine_gold, out, "quarantine")
        if options.state:
            save_state(split(bridged, "partition_state"), options.state, started)

    verdicts = {Verdict(v).value: 0 for v in Verdict}
    for counted in verdicts_df.groupBy("verdict").count().collect():
        verdicts[counted["verdict"]] = counted["count"]
    by_kind = {k.value: 0 for k in FindingKind}
    finding_rows = [
        r.asDict(recursive=True)
        for r in split(bridged, "anomalies")
        .select(
            "kind",
            "severity",
            "topic",
            "partition",
            "leader_epoch",
            "replica",
            "offset_start",
            "offset_end",
            "records_lost",
            "explanation",
        )
        .orderBy("topic", "partition", "leader_epoch", "kind")
        .collect()
    ]
    for row in finding_rows:
        by_kind[row["kind"]] += 1

    for f in files:
        f["sha256"] = _sha256(f["path"])
        local = local_path(f["path"])
        if local is not None:
            f["path"] = str(local)
        f["accounted"] = (
            f["lines_read"] == f["lines_parsed"] + f["lines_ignored"] + f["lines_quarantined"]
        )
    master = spark.sparkContext.master
    validation = None
    if options.validate:
        # DESIGN.md "Validation": the GE suites over what this run wrote
        from pipeline.quality import read_published, silver_sample, validate_run

        local = local_path(out)
        silver: Any = ingested.events
        if local is not None and end_spark_first:
            # Validation reads the published tables with pyarrow: with
            # silver's sample taken, no Spark work is left, and the JVM
            # ends before GE's frames fill the driver (the run's peak
            # memory was the two together: docs/performance.md "Memory").
            with timings.stage("spark_stop"):
                silver = silver_sample("partition_events", ingested.events)
                release(bridged)
                release(replayed)
                ingested.unpersist()
                end_spark(spark)
        with timings.stage("validate"):
            # the gold tables as published, read back without Spark (on
            # remote storage: the frames), and silver's first rows
            # (quality.SILVER_SAMPLE_ROWS)
            gold: dict[str, Any] = {
                "anomalies": anomalies_gold,
                "epoch_lineage": lineage,
                "replica_offsets": offsets_gold,
                "partition_verdicts": verdicts_gold,
                "isr_timeline": isr_timeline,
                "partition_health_daily": health_gold,
                "quarantine": quarantine_gold,
            }
            if local is not None:
                gold = read_published(str(local), tuple(gold), clusters=sorted(chosen))
            validation = validate_run(
                spark,
                {"partition_events": silver, **gold},
                {"files": files},
                out=None if local is None else str(local),
                data_docs=options.data_docs,
            )
    if spark_running():
        release(bridged)
        release(replayed)
    quarantined = sum(f["lines_quarantined"] for f in files)
    partitions = sum(verdicts.values())
    code = exit_code_for(verdicts, len(finding_rows))
    finished = datetime.now(UTC)
    manifest: dict[str, Any] = {
        "tool": "epochtrail",
        "version": __version__,
        "started_at": started.isoformat(),
        "finished_at": finished.isoformat(),
        "inputs": options.paths,
        "out": out,
        "cluster": cluster,
        "spark_master": master,
        "profile": {"requested": options.profile.value, "chosen": profile.value, "why": why},
        "profiles": {
            c: {"chosen": p.value, "why": w, **evidence[c]} for c, (p, w) in chosen.items()
        },
        "max_clock_skew_s": options.max_clock_skew_s,
        "redacted": options.redact,
        "timings_s": timings.seconds,
        "lines_read": sum(f["lines_read"] for f in files),
        "lines_parsed": sum(f["lines_parsed"] for f in files),
        "lines_ignored": sum(f["lines_ignored"] for f in files),
        "quarantined_lines": quarantined,
        "files": files,
        "partitions": partitions,
        "verdicts": verdicts,
        "findings_by_kind": by_kind,
        "exit_code": code,
        "validation": None if validation is None else validation.to_dict(),
    }
    manifest_path = write_manifest(out, manifest)
    # The run's own record in the lake, per cluster and day (the UTC day the
    # run started, as partition `date` of the rows without a time): the
    # top-level run_manifest.json is the last run's, whichever cluster it
    # audited, so runs side by side into one lake each keep theirs here.
    for name in clusters:
        write_manifest(manifest_dir(out, name, run_date), manifest)
    return RunSummary(
        manifest=manifest,
        partitions=partitions,
        verdicts=verdicts,
        findings_by_kind=by_kind,
        quarantined_lines=quarantined,
        exit_code=code,
        manifest_path=manifest_path,
        findings=finding_rows,
    )


def manifest_dir(out: str, cluster: str, run_date: str) -> str:
    """The folder of one cluster's manifest for the runs started on ``run_date``."""
    return f"{out.rstrip('/')}/manifests/cluster={cluster}/date={run_date}"


def saved_state(spark: Any, state: str) -> Any:
    """The partition states the previous incremental run saved, if any."""
    from schemas.state import PARTITION_STATE

    root = local_path(state)
    if root is None:
        raise BadInput(f"--state must be a local folder, not {state}")
    current = root / "CURRENT"
    if not current.exists():
        return spark.createDataFrame([], PARTITION_STATE)
    version = current.read_text().strip()
    if not version.startswith("v") or not (root / version).is_dir():
        raise BadInput(f"{current} names no saved state ({version!r})")
    return spark.read.schema(PARTITION_STATE).parquet(str(root / version))


def save_state(states: Any, state: str, started: datetime) -> None:
    """Write a new state version beside the old one, then point CURRENT at
    it: a run that fails half-way leaves the previous state intact."""
    import os

    root = local_path(state)
    assert root is not None
    version = f"v{started:%Y%m%dT%H%M%S%f}"
    states.write.mode("error").parquet(str(root / version))
    tmp = root / "CURRENT.tmp"
    tmp.write_text(version + "\n")
    os.replace(tmp, root / "CURRENT")


def read_table(out: str, table: str) -> list[dict[str, Any]]:
    """Read a published gold table without Spark (as a BI tool would)."""
    from pipeline.report import read_gold

    return read_gold(out, table)
