"""The commands a study's ``run.log`` records (the wrapper around each ``time syw run``): when each
started and ended and its wall time, for the study's PROVENANCE.md (:mod:`syw.experiments.provenance`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# run.log: `date` lines and `=== started|resumed|stopped <date>` notes around each `time syw run`; a date is
# `date`'s default (Fri Nov 27 19:38:02 UTC 2026) or `date -u '+%F %T'` followed by UTC (Ray's own log lines,
# `[2026-11-27 19:38:02,945 ...`, carry no UTC and are not stamps).
_DATE = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d UTC \d{4}|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
_REAL = re.compile(r"^real\s+(?:(\d+)h)?(\d+)m([\d.]+)s")


@dataclass(frozen=True)
class Segment:
    """One command of a run.log: its start, its last time stamp, and what `time` measured (s)."""

    start: datetime
    end: datetime | None
    real: float | None

    @property
    def wall(self) -> float | None:
        if self.real is not None:
            return self.real
        return None if self.end is None else (self.end - self.start).total_seconds()


def _stamp(text: str) -> datetime:
    form = "%Y-%m-%d %H:%M:%S UTC" if text[0].isdigit() else "%a %b %d %H:%M:%S UTC %Y"
    return datetime.strptime(" ".join(text.split()), form).replace(tzinfo=timezone.utc)


def run_segments(path: Path) -> tuple[Segment, ...]:
    """The commands ``path`` (a study's run.log) records: each opens at a ``=== started``/``resumed``
    line (or the first time stamp) and ends at its last time stamp or ``real`` line before the next; none
    when it holds no time stamp (a log of the runner's output only)."""
    segments: list[list[Any]] = []
    for line in path.read_text(errors="replace").splitlines():
        stamp = _DATE.search(line)
        real = _REAL.match(line)
        if stamp and (line.startswith(("=== started", "=== resumed")) or not segments):
            segments.append([_stamp(stamp.group()), None, None])
        elif stamp and segments:
            segments[-1][1] = _stamp(stamp.group())
        elif real and segments:
            hours, minutes, seconds = real.groups()
            segments[-1][2] = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    return tuple(Segment(*s) for s in segments)
