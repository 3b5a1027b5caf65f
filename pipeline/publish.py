"""Publish: the only functions that write. Gold tables are Parquet partitioned
by ``cluster`` and ``date``; a rerun replaces exactly the partitions it
produced (dynamic partition overwrite), nothing else under ``--out``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.tables import GOLD_TABLES

EVIDENCE_TEXT_CHARS = 4096


def day(column: str, run_date: str) -> Column:
    return F.coalesce(F.date_format(F.col(column), "yyyy-MM-dd"), F.lit(run_date))


def with_evidence_text(
    anomalies: DataFrame, lines_of: Callable[[list[str] | None], DataFrame]
) -> DataFrame:
    """Fill each evidence reference with its source line: the references
    are few, so only the files they name are read again (``lines_of``,
    ``IngestResult.lines_of``), and joined by a broadcast of the keys."""
    refs = anomalies.select("anomaly_id", F.posexplode("evidence").alias("pos", "ref")).select(
        "anomaly_id",
        "pos",
        F.col("ref.source_file").alias("source_file"),
        F.col("ref.line_no").alias("line_no"),
    )
    keys = refs.select("source_file", "line_no").distinct().localCheckpoint(eager=True)
    files = [r.source_file for r in keys.select("source_file").distinct().collect()]
    lines = lines_of(files)
    texts = lines.join(F.broadcast(keys), ["source_file", "line_no"]).select(
        "source_file", "line_no", F.substring("value", 1, EVIDENCE_TEXT_CHARS).alias("text")
    )
    filled = (
        refs.join(texts, ["source_file", "line_no"], "left")
        .groupBy("anomaly_id")
        .agg(
            F.sort_array(
                F.collect_list(
                    F.struct("pos", F.struct("source_file", "line_no", "text").alias("ref"))
                )
            ).alias("_refs")
        )
        .select("anomaly_id", F.transform("_refs", lambda r: r["ref"]).alias("evidence"))
    )
    return anomalies.drop("evidence").join(filled, "anomaly_id", "left")


def conform(df: DataFrame, table: str, run_date: str, date_from: str | None) -> DataFrame:
    """Add the ``date`` partition column and select the declared columns in order."""
    schema = GOLD_TABLES[table]
    if "date" not in df.columns:
        df = df.withColumn("date", day(date_from, run_date) if date_from else F.lit(run_date))
    return df.select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])


def write_table(df: DataFrame, out: str, table: str) -> None:
    (
        df.write.mode("overwrite")
        .partitionBy("cluster", "date")
        .parquet(f"{out.rstrip('/')}/{table}")
    )


def local_path(path: str) -> Path | None:
    """The local filesystem path of a Spark path, or None for remote storage."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else path)
    return None


def write_manifest(out: str, manifest: dict[str, Any]) -> str:
    target = local_path(out)
    if target is None:
        raise ValueError(f"run_manifest.json can only be written to a local --out, not {out}")
    target.mkdir(parents=True, exist_ok=True)
    path = target / "run_manifest.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str) + "\n")
    os.replace(tmp, path)
    return str(path)


KEYS = ["cluster", "topic", "topic_id", "partition"]
#: partition_health_daily's per-kind counts: column -> finding kind
KIND_COUNTS = {
    "unclean_elections": "unclean_election",
    "truncations_below_hwm": "truncation_below_hwm",
    "log_divergences": "log_divergence",
    "hwm_regressions": "hwm_regression",
    "fencing_violations": "fencing_violation",
    "isr_rule_violations": "isr_rule_violation",
}


def under_min_isr_seconds(isr_timeline: DataFrame, verdicts: DataFrame) -> DataFrame:
    """Seconds per partition and day that the recorded ISR was below the min
    ISR in force; the last ISR of a partition counts until its last event."""
    last = verdicts.select(*KEYS, F.col("last_event_time").alias("_last"))
    spans = (
        isr_timeline.where(F.col("under_min_isr") & F.col("start_time").isNotNull())
        .join(last, KEYS, "left")
        .select(
            *KEYS,
            F.col("start_time").alias("_from"),
            F.coalesce("end_time", "_last", "start_time").alias("_to"),
        )
        .where(F.col("_to") > F.col("_from"))
    )
    days = spans.withColumn(
        "_day", F.explode(F.sequence(F.to_date("_from"), F.to_date("_to")))
    ).withColumn("_day_start", F.to_timestamp(F.col("_day")))
    overlap = F.unix_seconds(
        F.least(F.col("_to"), F.timestamp_add("DAY", F.lit(1), F.col("_day_start")))
    ) - F.unix_seconds(F.greatest(F.col("_from"), F.col("_day_start")))
    return (
        days.select(
            *KEYS,
            F.date_format("_day", "yyyy-MM-dd").alias("date"),
            F.greatest(overlap, F.lit(0)).cast("double").alias("under_min_isr_seconds"),
        )
        .groupBy(*KEYS, "date")
        .agg(F.sum("under_min_isr_seconds").alias("under_min_isr_seconds"))
    )


def partition_health_daily(
    anomalies: DataFrame, lineage: DataFrame, isr_timeline: DataFrame, verdicts: DataFrame
) -> DataFrame:
    """The BI rollup (schemas.tables.PARTITION_HEALTH_DAILY) from the
    conformed gold tables of this run (each with its ``date``)."""
    found = anomalies.groupBy(*KEYS, "date").agg(
        F.count("*").cast("int").alias("findings"),
        F.count_if(F.col("severity") == "critical").cast("int").alias("critical_findings"),
        *[
            F.count_if(F.col("kind") == kind).cast("int").alias(column)
            for column, kind in KIND_COUNTS.items()
        ],
        F.coalesce(
            F.sum(F.when(F.col("kind") == "committed_data_loss", F.col("records_lost"))),
            F.lit(0),
        )
        .cast("long")
        .alias("records_lost"),
    )
    elections = lineage.groupBy(*KEYS, "date").agg(
        F.count("*").cast("int").alias("leader_elections")
    )
    changes = isr_timeline.groupBy(*KEYS, "date").agg(F.count("*").cast("int").alias("isr_changes"))
    under = under_min_isr_seconds(isr_timeline, verdicts)
    verdict = verdicts.select(*KEYS, "date", "verdict")
    days = (
        found.select(*KEYS, "date")
        .unionByName(elections.select(*KEYS, "date"))
        .unionByName(changes.select(*KEYS, "date"))
        .unionByName(under.select(*KEYS, "date"))
        .unionByName(verdict.select(*KEYS, "date"))
        .distinct()
    )

    # topic_id may be null: joined null-safely; the right side's keys renamed
    # (every part derives from the same tables, so their columns would clash)
    def join(left: DataFrame, right: DataFrame) -> DataFrame:
        keys = [*KEYS, "date"]
        right = right.select(
            *[F.col(k).alias(f"_r_{k}") for k in keys], *[c for c in right.columns if c not in keys]
        )
        cond = [F.col(k).eqNullSafe(F.col(f"_r_{k}")) for k in keys]
        return left.join(right, cond, "left").drop(*[f"_r_{k}" for k in keys])

    rolled = days
    for part in (found, elections, changes, under, verdict):
        rolled = join(rolled, part)
    zero_int = [*KIND_COUNTS, "findings", "critical_findings", "leader_elections", "isr_changes"]
    return rolled.fillna(0, subset=zero_int + ["records_lost"]).fillna(
        0.0, subset=["under_min_isr_seconds"]
    )


#: Where request-log lines name a client or a principal (kafka-formats.md 1.1
#: JSON, 1.2 text from 1.0, 0.9-0.10 Scala forms): (key)(value)(closing).
IDENTITY_PATTERNS = (
    r'("clientId":")([^"]*)(")',
    r'("principal":")([^"]*)(")',
    r"(clientId=)([^,;)\s]*)()",
    r"(ClientId: )([^;]*)()",
    r"(principal:)([^,;)\s]*)()",
)


def pseudonym(value: Column) -> Column:
    """The same input always gives the same name, so joins and counts still
    work; the first 16 hex digits of its SHA-256 (not a secret: a known
    client id can be hashed and compared)."""
    return F.when(value.isNotNull(), F.concat(F.lit("h:"), F.substring(F.sha2(value, 256), 1, 16)))


def _hash_match(pattern: str) -> Any:
    def merge(acc: Column, match: Column) -> Column:
        named = F.concat(
            F.regexp_extract(match, pattern, 1),
            pseudonym(F.regexp_extract(match, pattern, 2)),
            F.regexp_extract(match, pattern, 3),
        )
        return F.replace(acc, match, named)

    return merge


def redact_text(text: Column) -> Column:
    """Every client id and principal in a log line replaced by its pseudonym."""
    for pattern in IDENTITY_PATTERNS:
        matches = F.regexp_extract_all(text, F.lit(pattern), F.lit(0))
        text = F.aggregate(matches, text, _hash_match(pattern))
    return text


def redact(anomalies: DataFrame) -> DataFrame:
    """``--redact``: client ids and principals in the anomalies table (its
    evidence lines and acknowledged produces) replaced by pseudonyms; the
    silver tables keep them as they are (DESIGN.md "Hostile input")."""
    return anomalies.withColumn(
        "evidence",
        F.transform("evidence", lambda e: e.withField("text", redact_text(e["text"]))),
    ).withColumn(
        "acked_produces",
        F.transform(
            "acked_produces", lambda a: a.withField("client_id", pseudonym(a["client_id"]))
        ),
    )


def redact_quarantine(quarantine: DataFrame) -> DataFrame:
    """``--redact`` for the quarantine table: its lines, as in evidence."""
    return quarantine.withColumn("text", redact_text(F.col("text")))
