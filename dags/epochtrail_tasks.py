"""What the daily audit DAG does, as plain Python (standard library only).

The DAG file (`epochtrail_daily_audit.py`) only declares structure; every
decision it makes lives here, so the tests exercise it without Airflow:

- `parse_config`: the Airflow Variable `epochtrail_audit` (JSON), checked.
- `survey`: which clusters have an archive folder for the day, and which of
  those folders are empty.
- `fleet_command`: one `epochtrail run` command line for every cluster's
  archive of the day (one Spark application: the fixed cost of a run is
  paid once for the fleet, not once per cluster); each cluster's folder is
  handed over as a `cluster=<name>` link (`link_inputs`), which names it.
- `interpret_exit`: what the CLI's exit code means for the task. Findings
  (exit 1) are the product, published like a clean day; bad input, no Java,
  usage errors and crashes fail the task.
- `validation_status`: the manifest's data-quality verdict, or that the
  manifest reports none (never read as "passed").
- `read_manifest`: the run's manifest, as the CLI files it per cluster in the
  lake, checked to be this run's.
- `run_fleet_audit`: all of the above for one day; a day on which no cluster
  has an archive folder is `ArchiveMissing` (the DAG skips the task).

This module lives in `dags/` because Airflow puts the DAGs folder on
`sys.path`: the DAG imports it as `epochtrail_tasks`, with no dependency on
the `epochtrail` package being importable by the Airflow worker (only its
console script has to be on the worker's PATH, or named in the config).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)

#: the Airflow Variable holding the audit's configuration as JSON
VARIABLE = "epochtrail_audit"

#: used when the Variable is not set: no clusters, so the audit maps over
#: nothing and does no work until an operator names the fleet.
DEFAULT_CONFIG: dict[str, Any] = {
    "archive_root": "/data/kafka-archive",
    "lake_root": "/data/epochtrail/lake",
    "state_root": "/data/epochtrail/state",
    "spark_master": "local[*]",
    "clusters": [],
    "epochtrail": "epochtrail",
    "profile": "auto",
    "max_clock_skew_s": 2.0,
}

# The CLI's exit codes (pipeline/cli.py, pipeline/run.py). Repeated here, not
# imported: this module must load on an Airflow worker without the package.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3
EXIT_BAD_INPUT = 4
EXIT_ENVIRONMENT = 5

PROFILES = ("auto", "kraft", "kraft-elr", "zk-epoch", "zk-hw")

# A cluster name becomes a folder name under three roots and the value of the
# `cluster=` partition: no separators, no `..`, nothing a path could escape by.
_CLUSTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

MANIFEST = "run_manifest.json"


class ConfigError(ValueError):
    """The `epochtrail_audit` Variable cannot drive an audit."""


class ArchiveMissing(Exception):
    """No archive folder for this cluster and day: nothing to audit."""


class AuditFailed(Exception):
    """The audit did not produce a trustworthy publication.

    `retryable` is False when running again cannot help (bad input, no Java,
    a usage error, a failed data-quality expectation)."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class Outcome(StrEnum):
    """What a successful audit published, by the CLI's exit code."""

    VALID = "valid"  # exit 0: no findings
    FINDINGS = "findings"  # exit 1: findings, published
    UNKNOWN = "unknown"  # exit 3: nothing invalid, some verdict unknown (evidence gaps)


class Validation(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    #: the manifest has no `validation` section: nothing was checked, and
    #: the task says so rather than calling it a pass
    NOT_REPORTED = "not_reported"


@dataclass(frozen=True)
class AuditConfig:
    archive_root: str
    lake_root: str
    state_root: str
    spark_master: str
    clusters: tuple[str, ...]
    epochtrail: str = "epochtrail"
    profile: str = "auto"
    max_clock_skew_s: float = 2.0
    extra_args: tuple[str, ...] = field(default_factory=tuple)


def _local_root(config: Mapping[str, Any], key: str) -> str:
    value = config.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{VARIABLE}.{key} must be a non-empty path")
    parsed = urlparse(value)
    # The CLI writes run_manifest.json and the saved state only to a local
    # (or mounted shared) folder, and this helper must see the archive folder
    # to tell a missing day from a failing one.
    if parsed.scheme not in ("", "file"):
        raise ConfigError(
            f"{VARIABLE}.{key} must be a local or mounted folder, not {value!r} "
            "(run_manifest.json and --state are written with local file I/O)"
        )
    path = parsed.path if parsed.scheme else value
    if not Path(path).is_absolute():
        raise ConfigError(f"{VARIABLE}.{key} must be an absolute path, not {value!r}")
    return path


def parse_config(raw: Mapping[str, Any] | str | None) -> AuditConfig:
    """Check the Variable's value (a dict or its JSON text); None means unset."""
    if raw is None:
        raw = DEFAULT_CONFIG
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{VARIABLE} is not JSON: {error}") from error
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{VARIABLE} must be a JSON object")
    unknown = set(raw) - set(DEFAULT_CONFIG) - {"extra_args"}
    if unknown:
        raise ConfigError(f"{VARIABLE} has unknown keys: {', '.join(sorted(unknown))}")
    merged = {**DEFAULT_CONFIG, **raw}

    clusters = merged["clusters"]
    if not isinstance(clusters, list) or not all(isinstance(c, str) for c in clusters):
        raise ConfigError(f"{VARIABLE}.clusters must be a list of names")
    for name in clusters:
        if not _CLUSTER_NAME.fullmatch(name):
            raise ConfigError(
                f"{VARIABLE}.clusters: {name!r} is not a plain name "
                "(letters, digits, '.', '_', '-'; not starting with '.', '_' or '-')"
            )
    if len(set(clusters)) != len(clusters):
        raise ConfigError(f"{VARIABLE}.clusters names a cluster twice")

    master = merged["spark_master"]
    if not isinstance(master, str) or not master:
        raise ConfigError(f"{VARIABLE}.spark_master must be a Spark master URL")
    epochtrail = merged["epochtrail"]
    if not isinstance(epochtrail, str) or not epochtrail:
        raise ConfigError(f"{VARIABLE}.epochtrail must name the epochtrail console script")
    profile = merged["profile"]
    if profile not in PROFILES:
        raise ConfigError(f"{VARIABLE}.profile must be one of {', '.join(PROFILES)}")
    skew = merged["max_clock_skew_s"]
    if isinstance(skew, bool) or not isinstance(skew, int | float) or skew < 0:
        raise ConfigError(f"{VARIABLE}.max_clock_skew_s must be a number of seconds >= 0")
    extra = merged.get("extra_args", [])
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise ConfigError(f"{VARIABLE}.extra_args must be a list of strings")

    return AuditConfig(
        archive_root=_local_root(merged, "archive_root"),
        lake_root=_local_root(merged, "lake_root"),
        state_root=_local_root(merged, "state_root"),
        spark_master=master,
        clusters=tuple(clusters),
        epochtrail=epochtrail,
        profile=profile,
        max_clock_skew_s=float(skew),
        extra_args=tuple(extra),
    )


def config_for_xcom(config: AuditConfig) -> dict[str, Any]:
    """The config as JSON values (lists, not tuples): what `parse_config` reads back."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in asdict(config).items()
    }


def day_of(interval_start: datetime | None) -> str:
    """The UTC day a daily data interval starting at `interval_start` covers."""
    if interval_start is None:
        # Airflow 3 runs without a data interval (asset-triggered, or
        # triggered with none) have no day to audit
        raise ValueError("the DAG run has no data interval: no day to audit")
    if interval_start.tzinfo is None:
        raise ValueError(f"naive data interval start {interval_start!r}")
    start = interval_start.astimezone(UTC)
    if (start.hour, start.minute, start.second, start.microsecond) != (0, 0, 0, 0):
        # the DAG's timetable is midnight to midnight UTC; any other interval
        # would audit a day it does not cover
        raise ValueError(f"data interval starts at {start.isoformat()}, not at midnight UTC")
    return start.date().isoformat()


def audit_day(day: str) -> str:
    """The day as YYYY-MM-DD, checked (it becomes a folder name)."""
    try:
        parsed = date.fromisoformat(day)
    except (TypeError, ValueError) as error:
        raise ValueError(f"not a YYYY-MM-DD day: {day!r}") from error
    if parsed.isoformat() != day:
        raise ValueError(f"not a YYYY-MM-DD day: {day!r}")
    return day


def archive_dir(config: AuditConfig, cluster: str, day: str) -> Path:
    return Path(config.archive_root) / cluster / audit_day(day)


#: Under `state_root`: the fleet's saved replay state (one folder: the state
#: rows carry their cluster), and the day's inputs as `cluster=<name>` links.
#: Cluster names cannot start with '_', so neither is a cluster's folder.
FLEET_STATE = "_fleet"
INPUTS = "_inputs"


def fleet_state_dir(config: AuditConfig) -> Path:
    # One state for the fleet: each day continues every cluster's partition
    # histories (README: "--state DIR makes runs incremental").
    return Path(config.state_root) / FLEET_STATE


def input_link(config: AuditConfig, cluster: str, day: str) -> Path:
    """`<state_root>/_inputs/<day>/cluster=<name>`, a link to the cluster's
    archive folder for the day: the CLI names a file's cluster from a
    `cluster=NAME/` folder, so one run can audit the whole fleet."""
    return Path(config.state_root) / INPUTS / audit_day(day) / f"cluster={cluster}"


@dataclass(frozen=True)
class FleetDay:
    """Which configured clusters have something to audit for the day."""

    audited: tuple[str, ...]
    #: no archive folder for the day: nothing to audit (not an error)
    missing: tuple[str, ...]
    #: a folder without a file: a shipper that created it and sent nothing
    empty: tuple[str, ...]


def _has_a_file(folder: Path) -> bool:
    for _dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(not f.startswith((".", "_")) for f in filenames):
            return True
    return False


def survey(config: AuditConfig, day: str) -> FleetDay:
    audited, missing, empty = [], [], []
    for cluster in config.clusters:
        folder = archive_dir(config, cluster, day)
        if not folder.is_dir():
            missing.append(cluster)
        elif not _has_a_file(folder):
            empty.append(cluster)
        else:
            audited.append(cluster)
    return FleetDay(tuple(audited), tuple(missing), tuple(empty))


def link_inputs(config: AuditConfig, clusters: Sequence[str], day: str) -> list[str]:
    """The `cluster=<name>` links of the day, made anew (a rerun of the day
    may audit other clusters); kept afterwards, so the file names in the
    lake's tables and the manifest stay readable."""
    links = [input_link(config, cluster, day) for cluster in clusters]
    folder = Path(config.state_root) / INPUTS / audit_day(day)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_symlink() and old.name.startswith("cluster="):
            old.unlink()
    for cluster, link in zip(clusters, links, strict=True):
        link.symlink_to(archive_dir(config, cluster, day).resolve(), target_is_directory=True)
    return [str(link) for link in links]


def fleet_command(config: AuditConfig, clusters: Sequence[str], day: str) -> list[str]:
    """One `epochtrail run` over the day's archive of the given clusters, into
    the lake: one Spark application for the fleet, whose fixed cost is paid
    once, not once per cluster."""
    outside = [c for c in clusters if c not in config.clusters]
    if outside:
        raise ConfigError(f"{', '.join(outside)} not in {VARIABLE}.clusters")
    if not clusters:
        raise ValueError("no cluster to audit")
    return [
        config.epochtrail,
        "run",
        *(str(input_link(config, cluster, day)) for cluster in clusters),
        "--out",
        config.lake_root,
        "--master",
        config.spark_master,
        "--profile",
        config.profile,
        "--max-clock-skew",
        repr(config.max_clock_skew_s),
        "--state",
        str(fleet_state_dir(config)),
        *config.extra_args,
    ]


def interpret_exit(code: int) -> Outcome:
    """The task's reading of the CLI's exit code: an outcome, or AuditFailed."""
    if code == EXIT_OK:
        return Outcome.VALID
    if code == EXIT_FINDINGS:
        return Outcome.FINDINGS
    if code == EXIT_UNKNOWN:
        return Outcome.UNKNOWN
    if code == EXIT_BAD_INPUT:
        raise AuditFailed("epochtrail: bad input (exit 4); see the log above", retryable=False)
    if code == EXIT_ENVIRONMENT:
        raise AuditFailed(
            "epochtrail: no Java 17+ on the worker (exit 5); Spark cannot start", retryable=False
        )
    if code == EXIT_USAGE:
        raise AuditFailed("epochtrail: usage error (exit 2); check the config", retryable=False)
    if code < 0:
        raise AuditFailed(f"epochtrail was killed by signal {-code}", retryable=True)
    raise AuditFailed(f"epochtrail crashed (exit {code}); see the log above", retryable=True)


def validation_status(manifest: Mapping[str, Any]) -> Validation:
    """The data-quality verdict the manifest reports, if it reports one."""
    section = manifest.get("validation")
    if section is None:
        # no section, or null: the CLI's --no-validate writes null
        return Validation.NOT_REPORTED
    success = section.get("success") if isinstance(section, Mapping) else None
    if not isinstance(success, bool):
        # present but unreadable is not a pass
        raise AuditFailed(
            f"run_manifest.json has a validation section without a boolean success: "
            f"{json.dumps(section, default=str)[:500]}",
            retryable=False,
        )
    return Validation.PASSED if success else Validation.FAILED


def failed_expectations(section: Mapping[str, Any]) -> str:
    """The failed expectations of a validation section, for the task's error:
    `suite: rule(columns)` per failure where the section has the shape of
    pipeline.quality's report (suites of expectations), else the section."""
    failed = []
    suites = section.get("suites")
    if isinstance(suites, list):
        for suite in suites:
            expectations = suite.get("expectations") if isinstance(suite, Mapping) else None
            for e in expectations if isinstance(expectations, list) else []:
                if isinstance(e, Mapping) and e.get("success") is False:
                    columns = ", ".join(str(c) for c in e.get("columns") or [])
                    what = e.get("error") or f"{e.get('unexpected_count')} unexpected"
                    failed.append(f"{suite.get('suite')}: {e.get('rule')}({columns}): {what}")
    if failed:
        return "; ".join(failed)[:4000]
    return json.dumps(section, default=str)[:2000]


def manifest_path(config: AuditConfig, cluster: str, run_day: str) -> Path:
    """Where the CLI files a run's manifest for one of its clusters: by the
    UTC day the run started (pipeline/run.py `manifest_dir`)."""
    return (
        Path(config.lake_root) / "manifests" / f"cluster={cluster}" / f"date={run_day}" / MANIFEST
    )


def read_manifest(
    config: AuditConfig,
    clusters: Sequence[str],
    inputs: Sequence[str],
    exit_code: int,
    launched_at: datetime,
) -> dict[str, Any]:
    """This run's manifest, as filed for each of its clusters, checked to be
    this run's and not an older or a concurrent one's."""
    now = datetime.now(UTC)
    days = [
        (launched_at.astimezone(UTC).date() + timedelta(days=n)).isoformat()
        for n in range((now.date() - launched_at.astimezone(UTC).date()).days + 1)
    ]
    found: dict[str, Any] | None = None
    for cluster in clusters:
        mine = None
        for run_day in reversed(days):
            path = manifest_path(config, cluster, run_day)
            manifest = _load_manifest(path)
            if manifest is not None and _is_this_runs(manifest, inputs, exit_code, launched_at):
                mine = manifest
                break
        if mine is None:
            raise AuditFailed(
                f"epochtrail exited {exit_code} but no manifest of this run is filed for "
                f"{cluster} under {manifest_path(config, cluster, days[-1]).parent.parent}/ "
                "(none, or another run's: was another audit of that cluster writing to "
                "the same lake?)",
                retryable=True,
            )
        found = found or mine
    assert found is not None
    return found


def _load_manifest(path: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as error:
        raise AuditFailed(f"{path} is not JSON: {error}", retryable=True) from error
    if not isinstance(manifest, dict):
        raise AuditFailed(f"{path} is not a JSON object", retryable=True)
    return manifest


def _is_this_runs(
    manifest: Mapping[str, Any], inputs: Sequence[str], exit_code: int, launched_at: datetime
) -> bool:
    try:
        started = datetime.fromisoformat(manifest["started_at"])
        return bool(
            manifest["inputs"] == list(inputs)
            and manifest["exit_code"] == exit_code
            # same host clock: the CLI started after we launched it
            and started >= launched_at - timedelta(seconds=1)
        )
    except (KeyError, TypeError, ValueError):
        return False


Runner = Callable[[Sequence[str]], int]


def run_streaming(command: Sequence[str]) -> int:
    """Run the command, its output line by line into this task's log."""
    log.info("running: %s", " ".join(command))
    with subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env=os.environ.copy(),
    ) as proc:
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                log.info("%s", line.rstrip("\n"))
            return proc.wait()
        except BaseException:
            # the task was timed out or killed: do not leave the Spark
            # driver running behind it (Popen's exit would wait for it)
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise


def run_fleet_audit(
    config: AuditConfig, day: str, runner: Runner = run_streaming
) -> dict[str, Any]:
    """Audit every configured cluster's archive for one day in one run; a
    small summary for XCom.

    Raises ArchiveMissing when no cluster has a folder for the day, AuditFailed
    when the run cannot be trusted: a failing exit code, a manifest that is
    missing or not this run's, a failed data-quality expectation, or a
    cluster's folder with no file in it (after the others are published).
    Exit 1 (findings) and exit 3 (unknown verdicts) return normally: their
    tables are published.
    """
    fleet = survey(config, day)
    for cluster in fleet.missing:
        log.info(
            "no archive folder %s: nothing to audit for %s on %s",
            archive_dir(config, cluster, day),
            cluster,
            day,
        )
    if not fleet.audited and not fleet.empty:
        raise ArchiveMissing(
            f"no archive folder under {config.archive_root} for any cluster on {day}: "
            "nothing to audit"
        )
    summary: dict[str, Any] = {
        "day": day,
        "clusters": list(fleet.audited),
        "no_archive": list(fleet.missing),
        "empty": list(fleet.empty),
        "lake": config.lake_root,
    }
    if fleet.audited:
        inputs = link_inputs(config, fleet.audited, day)
        command = fleet_command(config, fleet.audited, day)
        launched_at = datetime.now(UTC)
        code = runner(command)
        outcome = interpret_exit(code)
        manifest = read_manifest(config, fleet.audited, inputs, code, launched_at)
        validation = validation_status(manifest)
        if validation is Validation.FAILED:
            raise AuditFailed(
                f"data-quality validation failed on {day} (the tables are published; "
                f"check them before use): {failed_expectations(manifest['validation'])}",
                retryable=False,
            )
        profiles = manifest.get("profiles") or {}
        summary.update(
            exit_code=code,
            outcome=outcome.value,
            validation=validation.value,
            partitions=manifest.get("partitions"),
            verdicts=manifest.get("verdicts"),
            findings_by_kind={
                k: n for k, n in (manifest.get("findings_by_kind") or {}).items() if n
            },
            quarantined_lines=manifest.get("quarantined_lines"),
            profiles={c: p.get("chosen") for c, p in profiles.items() if isinstance(p, Mapping)},
        )
    if fleet.empty:
        # an empty folder is bad input, as the CLI says of one: the rest of
        # the fleet is published first, then the task fails
        raise AuditFailed(
            "archive folder with no file for "
            + ", ".join(f"{c} ({archive_dir(config, c, day)})" for c in fleet.empty)
            + f"; the other clusters were audited: {json.dumps(summary, default=str)}",
            retryable=False,
        )
    return summary
