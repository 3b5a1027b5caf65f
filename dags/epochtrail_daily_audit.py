"""
### epochtrail daily audit

For each day, audit every cluster's log archive with `epochtrail run` on the
configured Spark master and publish the gold Parquet tables into the lake
(`<lake_root>/<table>/cluster=<name>/date=<day>/`; a rerun replaces exactly
the partitions it produced). The whole fleet's day is one `epochtrail run`:
one Spark application, whose fixed cost is paid once, not once per cluster.

- **Day**: the run's data interval, midnight to midnight UTC; the run starts
  when the day is over and audits `<archive_root>/<cluster>/<YYYY-MM-DD>/`.
- **Config**: the Variable `epochtrail_audit` (JSON; see `dags/README.md`
  and `DEFAULT_CONFIG` in `dags/epochtrail_tasks.py`). Unset, the fleet is
  empty and the audit is skipped.
- **State**: `--state <state_root>/_fleet`, so each day continues every
  cluster's partition histories; hence one run at a time and
  `depends_on_past` (a day waits until the previous day's audit succeeded
  or skipped).
- **Task outcome**: findings (exit 1) and unknown verdicts (exit 3) succeed:
  they are published. Bad input, no Java, crashes and a failed
  data-quality expectation fail the task, and so does a cluster's archive
  folder with no file in it (after the other clusters are published). A
  cluster without a folder for the day is left out (named in the task's
  XCom); a day on which no cluster has one is skipped.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import CronDataIntervalTimetable, dag, task

# Airflow puts the DAGs folder on sys.path; the helper imports only the
# standard library, so parsing this file stays cheap.
from epochtrail_tasks import VARIABLE


@dag(
    dag_id="epochtrail_daily_audit",
    # A data-interval timetable: the run for day D starts at D+1 00:00 UTC
    # and its interval is [D, D+1), so the day audited is complete. (Airflow
    # 3's "@daily" is a trigger timetable whose run for D starts at D 00:00.)
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    # backfills cannot reach before start_date: keep it before any archive
    start_date=pendulum.datetime(2020, 1, 1, tz="UTC"),
    # Past days are audited on purpose, with `airflow backfill create`; a
    # scheduler outage does not queue months of runs.
    catchup=False,
    # Each day continues the saved replay state of the day before.
    max_active_runs=1,
    doc_md=__doc__,
    tags=["epochtrail", "audit"],
    default_args={"owner": "epochtrail"},
)
def epochtrail_daily_audit() -> None:
    @task
    def config() -> dict[str, Any]:
        """The checked configuration, read once per run."""
        from airflow.sdk import Variable
        from epochtrail_tasks import config_for_xcom, parse_config

        # the raw text: parse_config names what is wrong with it
        raw = Variable.get(VARIABLE, default=None)
        return config_for_xcom(parse_config(raw))

    @task(
        # Day D+1 continues the state day D saved: it waits for day D.
        depends_on_past=True,
        # A retry is safe (partition overwrite, state skips folded lines) and
        # helps against a lost executor; non-retryable errors fail at once.
        retries=1,
        retry_delay=timedelta(minutes=15),
        execution_timeout=timedelta(hours=6),
    )
    def audit(cfg: dict[str, Any]) -> dict[str, Any]:
        """Run epochtrail once over every cluster's archive for the interval's day."""
        from airflow.sdk import get_current_context
        from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException
        from epochtrail_tasks import (
            ArchiveMissing,
            AuditFailed,
            day_of,
            parse_config,
            run_fleet_audit,
        )

        day = day_of(get_current_context()["data_interval_start"])
        try:
            return run_fleet_audit(parse_config(cfg), day)
        except ArchiveMissing as missing:
            raise AirflowSkipException(str(missing)) from missing
        except AuditFailed as failed:
            if failed.retryable:
                raise
            raise AirflowFailException(str(failed)) from failed

    audit(config())


epochtrail_daily_audit()
