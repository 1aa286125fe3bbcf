"""``syw compare RUN_A RUN_B [--out FILE]``: two runs of one study, trial by trial.

A study's sampler is seeded, so a rerun draws the same assignments and training seeds;
on the same machine it gives the same records. Across CPU models floating-point
results differ (each picks its own matrix-product kernels), so neural trials drift
apart while their assignments stay paired. For every family both runs hold, this
writes how far: identical assignments and scores, the trial-by-trial differences,
the expected-max curves (Eq. 8) at n = 1, 10 and N and their largest gap, when one
family overtakes another in each run, and each run's wall time and hardware.
"""
from __future__ import annotations

import itertools
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis import expected_max, overtakes_from
from syw.core.entry import Parser, run_main, write_output
from syw.core.errors import DataError
from syw.core.records import iter_records

# what the report reads of each ok record besides what every record has (syw.core.records.check_record)
FIELDS = ("started_at", "ended_at", "duration_seconds", "hardware.cpu", "hardware.cpu_count", "versions.suite_commit")


def trial_by_trial(first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str], same: str) -> str:
    """How two runs of the same trials (columns ``trial``, ``acc``) differ, trial by trial."""
    a, b = names
    both = first[["trial", "acc"]].merge(second[["trial", "acc"]], on="trial", suffixes=("_1", "_2"))
    diff = both["acc_2"] - both["acc_1"]
    return (f"{len(both)} trials with {same}: {b} scores higher in {int((diff > 0).sum())}, lower in "
            f"{int((diff < 0).sum())}, the same in {int((diff == 0).sum())}; difference ({b} - {a}) mean "
            f"{diff.mean():+.4f}, sd {diff.std():.4f}, range {diff.min():+.4f} to {diff.max():+.4f}, within 0.01 in "
            f"{int((diff.abs() <= 0.01).sum())}; correlation {both['acc_1'].corr(both['acc_2']):.3f}; best trial "
            f"{both['acc_1'].max():.4f} {a}, {both['acc_2'].max():.4f} {b}.")


def _field(record: dict, key: str):
    for part in key.split("."):
        if not isinstance(record, dict) or part not in record:
            raise KeyError(key)
        record = record[part]
    return record


def _ok_records(path: Path) -> list[dict]:
    """The ok records of ``path``; :class:`DataError` naming the file and trial when one lacks what the report reads."""
    rows = [r for r in iter_records(path) if r.get("status") == "ok"]
    for number, row in enumerate(rows, start=1):
        where = f"{path}: ok record {number} (trial {row['trial']})"
        try:
            values = {key: _field(row, key) for key in FIELDS}
        except KeyError as err:
            raise DataError(f"{where}: no {err.args[0]!r}") from None
        for key in ("started_at", "ended_at"):
            try:
                datetime.fromisoformat(values[key])
            except (TypeError, ValueError):
                raise DataError(f"{where}: {key} {values[key]!r} is not an ISO date and time") from None
    return rows


def _span_minutes(rows: list[dict]) -> float:
    """Wall time of a family: first trial start to last trial end."""
    start = min(datetime.fromisoformat(r["started_at"]) for r in rows)
    end = max(datetime.fromisoformat(r["ended_at"]) for r in rows)
    return (end - start).total_seconds() / 60


def family_summary(first: list[dict], second: list[dict], names: tuple[str, str]) -> list[str]:
    """Markdown lines comparing one family's records in two runs of a study."""
    a, b = ({r["trial"]: r for r in rows} for rows in (first, second))
    common = sorted(set(a) & set(b))
    if not common:
        return ["No trial index is in both runs."]
    keys = [set(rows[common[0]]["params"]) for rows in (a, b)]
    shared = keys[0] & keys[1]  # a later suite may record a new fixed setting (e.g. ``batching``)
    same_params = sum(all(a[i]["params"][k] == b[i]["params"][k] for k in shared) for i in common)
    only = [f"{', '.join(sorted(k - shared))} only in {name}" for name, k in zip(names, keys) if k - shared]
    same_value = sum(a[i]["value"] == b[i]["value"] for i in common)
    frame = lambda rows: pd.DataFrame({"trial": common, "acc": [rows[i]["value"] for i in common]})  # noqa: E731
    n_max = len(common)
    budgets = sorted({1, min(10, n_max), n_max})
    curves = [expected_max(np.array([rows[i]["value"] for i in common]), np.arange(1, n_max + 1)) for rows in (a, b)]
    gap = curves[1] - curves[0]
    worst = int(np.argmax(np.abs(gap)))
    lines = [f"- Paired trials: {len(common)}; the same assignment in {same_params}, the same score in {same_value}"
             + (f" (settings {'; '.join(only)})." if only else "."),
             f"- {trial_by_trial(frame(a), frame(b), names, 'the same trial index')}",
             "- Expected max (Eq. 8) at n = " + ", ".join(map(str, budgets)) + ": "
             + "; ".join(f"{name} " + " / ".join(f"{c[n - 1]:.3f}" for n in budgets) for name, c in zip(names, curves))
             + f"; largest gap over n = 1..{n_max}: {gap[worst]:+.4f} at n = {worst + 1}."]
    for name, rows in zip(names, (first, second)):
        hardware = sorted({f"{r['hardware']['cpu']}, {r['hardware']['cpu_count']} cores" for r in rows})
        commits = sorted({r["versions"]["suite_commit"][:7] for r in rows})
        lines.append(f"- {name}: wall {_span_minutes(rows):.1f} min (first start to last end), sum of trial time "
                     f"{sum(r['duration_seconds'] for r in rows) / 60:.1f} min; {'; '.join(hardware)}; commit {', '.join(commits)}.")
    lines.append(f"- Sum of trial time, {names[1]} / {names[0]} on the paired trials: "
                 f"{sum(b[i]['duration_seconds'] for i in common) / sum(a[i]['duration_seconds'] for i in common):.3f}.")
    return lines


def compare(first: Path, second: Path, names: tuple[str, str] = ("first", "second")) -> str:
    """The Markdown report of two runs (folders of ``<family>.jsonl`` records) of one study."""
    for folder in (first, second):
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no such folder")
    families = sorted({p.stem for p in first.glob("*.jsonl")} & {p.stem for p in second.glob("*.jsonl")})
    if not families:
        raise FileNotFoundError(f"no family has records in both {first} and {second}")
    runs = {name: {f: _ok_records(folder / f"{f}.jsonl") for f in families} for name, folder in zip(names, (first, second))}
    out = [f"# Two runs of one study: {names[0]} ({first}) and {names[1]} ({second})", "",
           "Generated by `syw compare`.", ""]
    for family in families:
        out += [f"## {family}", "", *family_summary(runs[names[0]][family], runs[names[1]][family], names), ""]
    if len(families) > 1:
        out += ["## Overtaking", ""]
        for name in names:
            for x, y in itertools.permutations(families, 2):
                scores = [np.array([r["value"] for r in runs[name][f]]) for f in (x, y)]
                n_max = min(map(len, scores))
                at = overtakes_from(*(expected_max(s, np.arange(1, n_max + 1)) for s in scores))
                if at is not None:
                    out.append(f"- {name}: {x} overtakes {y} for good from n = {at} (of {n_max}).")
        out.append("")
    return "\n".join(out)


DESCRIPTION = """\
Compare two runs of one study trial by trial: whether they drew the same assignments and scores, the
differences of each trial's score, the expected-max curves (Eq. 8) at n = 1, 10 and N with their largest
gap, where one family overtakes another in each run, and each run's wall time and hardware. The report
is printed, or written to --out."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="syw compare", description=DESCRIPTION)
    parser.add_argument("first", type=Path, help="a study folder of records, e.g. results/sst5")
    parser.add_argument("second", type=Path, help="another run of the same study")
    parser.add_argument("--names", nargs=2, default=("first", "second"), help="what to call the two runs")
    parser.add_argument("--out", type=Path, default=None, help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    report = compare(args.first, args.second, tuple(args.names))
    if args.out:
        write_output(args.out, lambda path: path.write_text(report), "report")
    else:
        print(report)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
