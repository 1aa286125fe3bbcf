"""A study's GPU cost before it starts (``dry_run=true``): the paper's per-trial training time
times the trials, per family, and what this suite has measured that scales it.

The paper reports each search's per-trial training time and hardware (appendices B-D, Tables 2-11;
each family file's ``reported.training_duration_seconds`` and ``reported.hardware``). Two kinds of
measurement scale it:

- trials of the family that already ran on a GPU here (their records): their median duration on
  that GPU replaces the paper's, and their ratio to it is the measured speed ratio;
- a GPU check report, ``benchmarks/gpu_reports/*.json`` (``syw/experiments/gpu_check.py``), made on a
  CUDA device: its ``device_steps_per_second`` / ``cpu_steps_per_second`` for the family file is
  that device's speed-up over one CPU thread, which turns the family's CPU trial times recorded
  here into device times. It is not a ratio to the paper's GPU, so alone it scales nothing.

Without either, the line says there is no measured ratio and the hours are at the paper's speed.

A family file of the user's (outside ``conf/search_space``) is no family of the paper, even when it
inherits one: the paper's time does not apply to it. Its estimate is the mean duration of its own
finished (ok) trials in its records, per machine they ran on, times the trials left; before any has
finished there is no estimate, and the line says so.
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syw.core.errors import ConfigError
from syw.core.paths import REPO
from syw.core.records import iter_records
from syw.core.units import human_duration
from syw.experiments.space import CONF_DIR, Family, find_family_file

REPORTS_DIR = REPO / "benchmarks" / "gpu_reports"  # where syw/experiments/gpu_check.py writes, one file per device


@dataclass(frozen=True)
class Speedup:
    """One GPU check report's measurement of a family file: its device and speed-up over one CPU thread."""

    report: Path
    device_name: str
    ratio: float


def hours(seconds: float) -> str:
    """``seconds`` in hours, as the estimate prints them."""
    value = seconds / 3600
    return f"{value:,.1f} h" if value >= 0.1 else f"{value:.2g} h"


def times(ratio: float) -> str:
    """A speed ratio to two significant digits, never in exponent form (101.3 -> 100x, 0.456 -> 0.46x)."""
    return f"{float(f'{ratio:.2g}'):g}x"


def reported_time(family: Family, dirs: list[Path]) -> tuple[float, str, Path] | None:
    """The paper's per-trial training seconds, its hardware and the family file that reports them
    (the family's own, or the one it inherits from); None when no file in its chain does."""
    reported = family.reported or {}
    if "training_duration_seconds" not in reported:
        return None
    seconds = reported["training_duration_seconds"]
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(family.file, "reported.training_duration_seconds", f"must be a positive number of seconds, got {seconds!r}")
    return float(seconds), str(reported.get("hardware") or "unreported hardware"), _reporting_file(family.file, dirs)


def _reporting_file(path: Path, dirs: list[Path]) -> Path:
    from omegaconf import OmegaConf

    raw = OmegaConf.to_container(OmegaConf.load(path))
    if "reported" in raw or not raw.get("inherits"):
        return path
    parent = find_family_file(str(raw["inherits"]), [*dirs, CONF_DIR / "search_space"])
    return _reporting_file(parent, dirs) if parent is not None else path


def gpu_reports(folder: Path = REPORTS_DIR) -> tuple[dict[str, list[Speedup]], list[str]]:
    """The speed-ups that CUDA-made GPU check reports in ``folder`` give per family file stem, and
    a note for each report made without a GPU (which measures no GPU)."""
    found: dict[str, list[Speedup]] = {}
    notes = []
    for path in sorted(folder.glob("*.json")):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise ConfigError(path, "<file>", f"not a GPU check report: {err}") from None
        families = report.get("families") if isinstance(report, dict) else None
        if not isinstance(families, dict):
            raise ConfigError(path, "families", "missing: a GPU check report maps family file stems to results")
        if report.get("device") != "cuda":
            notes.append(f"{_shown(path)} was made on {report.get('device_name') or report.get('device')}, not a GPU")
            continue
        for stem, entry in families.items():
            if isinstance(entry, dict) and entry.get("status") == "ok":
                rates = [_rate(path, stem, entry, key) for key in ("device_steps_per_second", "cpu_steps_per_second")]
                found.setdefault(stem, []).append(Speedup(path, str(report.get("device_name") or "cuda"), rates[0] / rates[1]))
    return found, notes


def _rate(path: Path, stem: str, entry: dict[str, Any], key: str) -> float:
    value = entry.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ConfigError(path, f"families.{stem}.{key}", f"must be a positive number of steps per second, got {value!r}")
    return float(value)


def recorded_seconds(path: Path) -> dict[str, list[float]]:
    """The durations of the ok trials in a records file, by the GPU they ran on (``none``: a CPU)."""
    out: dict[str, list[float]] = {}
    for record in iter_records(path):
        if record["status"] == "ok" and isinstance(record.get("duration_seconds"), (int, float)):
            gpu = str((record.get("hardware") or {}).get("gpu", "none"))
            out.setdefault("none" if gpu.startswith("none") else gpu, []).append(float(record["duration_seconds"]))
    return out


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def of_the_paper(family: Family) -> bool:
    """Whether ``family`` is one of the suite's family files (``conf/search_space``), the paper's or a variant of one."""
    return family.file.resolve().is_relative_to((CONF_DIR / "search_space").resolve())


def own_lines(family: Family, name: str, runs: str, to_run: int, records: Path) -> list[str]:
    """A user's family's estimate: the mean duration of its finished trials (in ``records``), per machine, x the trials left."""
    recorded = recorded_seconds(records)
    if not recorded:
        return [f"  {name} {runs}; no estimate: no finished trials of this family yet ({_shown(family.file)} is not a "
                "family of the paper, so the paper's per-trial time does not apply; a dry run after some trials estimates from them)"]
    lines = [f"  {name} {runs}; from its own finished trials here ({_shown(family.file)} is not a family of the paper):"]
    for gpu, durations in sorted(recorded.items()):
        mean = statistics.fmean(durations)
        lines.append(f"    {len(durations)} trials on {'a CPU' if gpu == 'none' else gpu}, mean {human_duration(mean)}: "
                     f"{to_run} to run x {human_duration(mean)} = {human_duration(to_run * mean)}")
    return lines


def family_lines(family: Family, trials: int, to_run: int, records: Path, dirs: list[Path],
                 speedups: dict[str, list[Speedup]], width: int = 0) -> tuple[list[str], dict[str, float], bool]:
    """One family's estimate (its name padded to ``width``): its lines, the paper's seconds for its
    trials by hardware, and whether anything measured scaled it (a user's family: :func:`own_lines`)."""
    name = f"{family.name + ':':{width + 1}}"
    runs = f"{trials} trials" + (f" ({to_run} to run)" if to_run != trials else "")
    if not of_the_paper(family):
        return own_lines(family, name, runs, to_run, records), {}, False
    paper = reported_time(family, dirs)
    if paper is None:
        lines = [f"  {name} {runs}; the paper reports no training time for {family.file.name}"]
        totals: dict[str, float] = {}
    else:
        seconds, hardware, source = paper
        whose = "" if source == family.file else f" (the paper's time for {source.name}, which this file varies)"
        left = f"; to run: {hours(to_run * seconds)}" if to_run != trials else ""
        lines = [f"  {name} {runs} x {seconds:g} s = {hours(trials * seconds)} on {hardware}{left}{whose}"]
        totals = {hardware: trials * seconds}
    recorded = recorded_seconds(records)
    measured = False
    for gpu, durations in sorted((g, d) for g, d in recorded.items() if g != "none"):
        median = statistics.median(durations)
        ratio = f" ({times(paper[0] / median)} the paper's speed)" if paper else ""
        lines.append(f"    measured: {len(durations)} trials ran on {gpu} here, median {median:.0f} s{ratio}: "
                     f"{to_run} to run x {median:.0f} s = {hours(to_run * median)}")
        measured = True
    for speedup in speedups.get(family.file.stem, []):
        head = (f"    measured: {speedup.device_name} trains {family.file.stem} {times(speedup.ratio)} as many steps per "
                f"second as one CPU thread ({_shown(speedup.report)}, generated data)")
        if "none" in recorded:
            per_trial = statistics.median(recorded["none"]) / speedup.ratio
            lines.append(f"{head}; its {len(recorded['none'])} CPU trials here (median {statistics.median(recorded['none']):.0f} s) "
                         f"scale to about {per_trial:.0f} s on it: {to_run} to run = {hours(to_run * per_trial)}")
            measured = True
        else:
            lines.append(f"{head}; no CPU trial of this family has run here to scale by it")
    return lines, totals, measured


def cost_lines(study: str, families: list[Family], trials: dict[str, int], todo: dict[str, list[int]], results: Path,
               dirs: list[Path], reports: Path = REPORTS_DIR, records: dict[str, Path] | None = None) -> list[str]:
    """The dry run's cost block: per family, its ``trials[name]`` x the paper's per-trial seconds, then what
    this suite measured (:func:`family_lines`), the totals, and a line when nothing was measured. A family's
    records are ``records[name]``, else ``results/<name>.jsonl``."""
    speedups, notes = gpu_reports(reports)
    paper = [of_the_paper(family) for family in families]
    own = "for a family of yours, the mean duration of its own finished trials here x the trials to run"
    head = (f"Cost of {study} ({own})" if not any(paper) else
            f"GPU cost of {study} (the paper's per-trial training time x trials; reported.training_duration_seconds, "
            "reported.hardware" + ("" if all(paper) else f"; {own}") + ")")
    lines = [f"\n{head}:"]
    totals: dict[str, float] = {}
    any_measured = False
    for family in families:
        path = (records or {}).get(family.name, results / f"{family.name}.jsonl")  # an adaptive run's are elsewhere
        more, seconds, measured = family_lines(family, trials[family.name], len(todo[family.name]), path, dirs, speedups,
                                               max(len(f.name) for f in families))
        lines += more
        any_measured |= measured
        for hardware, value in seconds.items():
            totals[hardware] = totals.get(hardware, 0.0) + value
    width = max(len(f.name) for f in families) + 1
    for hardware, value in totals.items():
        lines.append(f"  {'total:':{width}} {hours(value)} on {hardware}, at the paper's speed")
    if not any_measured and any(paper):
        why = ("no CPU trial of these families has run here for the GPU check's speed-ups to scale" if speedups else
               "; ".join([f"no {_shown(reports / '*.json')} report from a CUDA device", *notes]))
        hours_are = "the hours are at the paper's speed" if totals else "no hours to give: the paper reports no training time"
        lines.append(f"  no measured speed ratio ({why}; no trial of them has run on a GPU here): {hours_are}")
    return lines
