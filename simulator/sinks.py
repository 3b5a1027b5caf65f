"""Where log lines go: the log4j layout, timestamps, and the artefact knobs
that decide which files are written and whether a pasted excerpt is.

Layout ``[%d] %p %m (%c)%n`` (kafka-formats.md 5.1); ``%d`` is
``yyyy-MM-dd HH:mm:ss,SSS``, simulated time 0 being 2024-05-01 10:00:00.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

# 2024-05-01 10:00:00 UTC: simulated time 0.
EPOCH_MS = 1714557600000
_BASE = datetime(2024, 5, 1, 10, 0, 0)


class _Stamp:
    """``yyyy-MM-dd HH:mm:ss,SSS`` for a simulated millisecond, cached per second."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self, ms: int) -> str:
        second, milli = divmod(ms, 1000)
        if second != self._second:
            self._second = second
            self._prefix = (_BASE + timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S")
        return f"{self._prefix},{milli:03d}"


@dataclass(frozen=True)
class Output:
    """Which log files a run writes and how (``spec.Evidence``): the artefact
    families written (``None``: all), and a pasted-excerpt rendering of each
    log4j file beside it or, with ``only``, instead of it."""

    families: tuple[str, ...] | None = None
    excerpt: str | None = None
    only: bool = False

    def writes(self, family: str) -> bool:
        return self.families is None or family in self.families


DEFAULT_OUTPUT = Output()


def excerpt_line(style: str, message: str, logger: str) -> str:
    """A log line as people paste it into a ticket (issue 13, part 2): no
    timestamp and no level, the message with its logIdent, indented by four
    spaces, quoted with ``> `` (Markdown, e-mail), or with the logger first
    (``%c: %m``)."""
    if style == "indent":
        return f"    {message}"
    if style == "quote":
        return f"> {message}"
    return f"{logger}: {message}"


#: the log families a ticket pastes excerpts of (issue 13, part 2; DESIGN.md
#: "Inputs"): the broker and controller logs, whose lines carry their own
#: order. The request log is read by its timestamps: a line of it pasted
#: without one is quarantined (pipeline/ingest/request_log.py), so the
#: simulator writes no excerpt of it, and writes it whole even with ``only``.
EXCERPT_FAMILIES = frozenset({"server", "state_change", "controller"})


class Log4j:
    """One log4j file, ``[%d] %p %m (%c)%n``, and its pasted excerpt
    (``<name>-excerpt.txt`` beside it) when ``output`` asks for one and the
    family is one of ``EXCERPT_FAMILIES``."""

    def __init__(self, path: Path, family: str = "server", output: Output = DEFAULT_OUTPUT) -> None:
        self._fh: TextIO | None = None
        self._excerpt: TextIO | None = None
        self._style = output.excerpt if family in EXCERPT_FAMILIES else None
        if output.writes(family):
            path.parent.mkdir(parents=True, exist_ok=True)
            if not (output.only and self._style):
                self._fh = path.open("w", encoding="utf-8", buffering=1 << 16)
            if self._style:
                excerpt = path.with_name(f"{path.name.rsplit('.', 1)[0]}-excerpt.txt")
                self._excerpt = excerpt.open("w", encoding="utf-8", buffering=1 << 16)
        self._stamp = _Stamp()
        self.lines = 0

    def write(self, ms: int, level: str, message: str, logger: str) -> None:
        if self._fh is not None:
            self._fh.write(f"[{self._stamp(ms)}] {level} {message} ({logger})\n")
        if self._excerpt is not None:
            assert self._style is not None
            self._excerpt.write(excerpt_line(self._style, message, logger) + "\n")
        self.lines += 1

    def close(self) -> None:
        for fh in (self._fh, self._excerpt):
            if fh is not None:
                fh.close()
