"""Publish: the only functions that write. Gold tables are Parquet partitioned
by ``cluster`` and ``date``; a rerun replaces exactly the partitions it
produced (dynamic partition overwrite), nothing else under ``--out``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.tables import GOLD_TABLES

EVIDENCE_TEXT_CHARS = 4096


def day(column: str, run_date: str) -> Column:
    return F.coalesce(F.date_format(F.col(column), "yyyy-MM-dd"), F.lit(run_date))


def with_evidence_text(anomalies: DataFrame, lines: DataFrame) -> DataFrame:
    """Fill each evidence reference with its source line (one broadcast join
    over the numbered input lines; the references are few)."""
    refs = anomalies.select("anomaly_id", F.posexplode("evidence").alias("pos", "ref")).select(
        "anomaly_id",
        "pos",
        F.col("ref.source_file").alias("source_file"),
        F.col("ref.line_no").alias("line_no"),
    )
    keys = refs.select("source_file", "line_no").distinct()
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
