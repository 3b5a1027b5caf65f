"""Progress of a long run on stderr: the stage running, its elapsed time and
the Spark tasks done so far (from Spark's status tracker), one line per
stage. Silent when stderr is not a terminal, so Airflow's and CI's logs hold
only what the run prints at its end. Spark's own console progress bar and
GE's progress bars stay off (pipeline/session.py, pipeline/quality.py): this
is the only progress shown.

The run asks for nothing but a context manager per stage
(``RunOptions.progress``); this module owns how it is shown.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import IO, Any

#: what a run calls around each stage
StageHook = Callable[[str], AbstractContextManager[None]]

#: how often the Spark status tracker is asked (seconds)
POLL_S = 0.5


def _no_stage(name: str) -> AbstractContextManager[None]:
    del name
    return nullcontext()


def spark_tasks() -> tuple[int, int] | None:
    """(tasks done, tasks) of the Spark stages running now, or None without
    an active Spark context."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return None
    tracker = sc.statusTracker()
    done = total = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done += info.numCompletedTasks
            total += info.numTasks
    return done, total


class StageProgress:
    """rich progress on a terminal: one line per stage, a spinner while it
    runs, then its elapsed time."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        tasks: Callable[[], tuple[int, int] | None] = spark_tasks,
    ) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream or sys.stderr, stderr=stream is None)
        self._tasks = tasks
        self._progress = Progress(
            SpinnerColumn(finished_text="[green]done[/green]"),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[spark]}"),
            console=self.console,
            transient=False,
        )

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        progress = self._progress
        if not progress.live.is_started:
            progress.start()
        task = progress.add_task(name.replace("_", " "), total=None, spark="")
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(POLL_S):
                try:
                    now = self._tasks()
                except Exception:  # a stopping context: show nothing more
                    return
                if now is None:
                    continue
                done, total = now
                progress.update(task, spark=f"Spark tasks {done}/{total}" if total else "")

        watcher = threading.Thread(target=poll, name="epochtrail-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join(timeout=2 * POLL_S)
            progress.update(task, total=1, completed=1, spark="")

    def close(self) -> None:
        if self._progress.live.is_started:
            self._progress.stop()


def for_stderr(stream: IO[str] | None = None) -> tuple[StageHook, Callable[[], None]]:
    """The stage hook for this process and its closer: rich progress when
    the stream (stderr by default) is a terminal, nothing otherwise."""
    target: Any = stream if stream is not None else sys.stderr
    if not (hasattr(target, "isatty") and target.isatty()):
        return _no_stage, lambda: None
    shown = StageProgress(stream)
    return shown.stage, shown.close
