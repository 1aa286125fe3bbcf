"""Back-test of ``syw.analysis.forecast`` on the authors' published trials (Dodge et al. 2019).

For every family of the four camera-ready files (results/paper/, checked by sha256), fit each
forecast model on k of its N trials (k = 10, 20) and forecast the expected maximum at n = N.
The reference is Eq. 8 on all N trials at n = N, the number the paper's curves end on. Two ways
of choosing the k trials:

- the first k rows of the file (a search as it would be stopped early, if rows are in run order;
  a family whose rows are sorted by score is flagged: its first k are its worst, not a sample);
- ``--subsets`` random subsets of k trials (no order assumed), forecasts only, no interval
  (and no noisy quadratic, too slow to fit that often).

    .venv/bin/python -m benchmarks.forecast_backtest --out docs/forecast_backtest.md

takes 12 to 22 minutes on one core of a busy 2-core machine (``--resamples 20 --subsets 3`` for
a quick look); every fit is seeded, so a rerun writes the same numbers.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from syw.analysis import expected_max
from syw.analysis.forecast import forecast
from syw.core.entry import run_main
from syw.figures.sources import PAPER_DIR, from_paper
from syw.figures.specs import FIGURES

KS = (10, 20)
INTERVAL_MODELS = ("empirical", "quadratic", "normal")  # forecast with a bootstrap interval
POINT_MODELS = ("noisy_quadratic",)  # too slow to refit per resample: point forecast only
SORTED = 0.9  # a Spearman correlation of row order and score above this: rows sorted by score
DATASETS = {1: "SST-5", 2: "SST-2", 3: "SciTail", 4: "SQuAD"}


def families(folder: Path) -> list[tuple[str, str, np.ndarray]]:
    """(dataset, family label, scores in file order) of every family in the four published files."""
    return [(DATASETS[number], group.label, group.scores)
            for number, spec in FIGURES.items() for group in from_paper(spec, folder, labels=spec.labels)]


def first_k(scores: np.ndarray, k: int, resamples: int, level: float) -> list[dict]:
    """Each model's forecast at n = N from the first k scores, against Eq. 8 on all N."""
    big_n = scores.size
    reference = float(expected_max(scores, [big_n])[0])
    rows = []
    for model in INTERVAL_MODELS + POINT_MODELS:
        f = forecast(scores[:k], [big_n], model=model, level=level,
                     resamples=resamples if model in INTERVAL_MODELS else 0)
        low, high = float(f.low[0]), float(f.high[0])
        rows.append(dict(k=k, model=model, reference=reference, forecast=float(f.mean[0]),
                         error=float(f.mean[0]) - reference, low=low, high=high,
                         covered=None if np.isnan(low) else bool(low <= reference <= high)))
    return rows


def subsets(scores: np.ndarray, k: int, count: int, seed: int) -> list[dict]:
    """Absolute error of each model's forecast at n = N from ``count`` random subsets of k scores."""
    big_n = scores.size
    reference = float(expected_max(scores, [big_n])[0])
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        sample = rng.choice(scores, k, replace=False)
        for model in INTERVAL_MODELS:  # the noisy quadratic: too slow for this many fits
            value = float(forecast(sample, [big_n], model=model, resamples=0).mean[0])
            rows.append(dict(k=k, model=model, subset=i, abs_error=abs(value - reference)))
    return rows


def fmt(value: float, digits: int = 4) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.{digits}f}"


def report(first: pd.DataFrame, random: pd.DataFrame, meta: pd.DataFrame, args: argparse.Namespace) -> str:
    models = list(INTERVAL_MODELS + POINT_MODELS)
    out = ["# Forecast back-test on the authors' published trials", "",
           "Produced by `.venv/bin/python -m benchmarks.forecast_backtest "
           f"--resamples {args.resamples} --subsets {args.subsets} --out docs/forecast_backtest.md` "
           "(the four camera-ready files of Dodge et al. 2019 in `results/paper/`, checked by sha256).", "",
           "Each model is fitted to k trials of a family and forecasts the expected maximum at n = N "
           "(50, 100 or 128 trials). The reference is Eq. 8 on all N trials at n = N. Models "
           "(`analysis/forecast.py`): `empirical` is no model, Eq. 8 on the k trials read at n = N (it levels "
           "off at their best score), the baseline; `quadratic` and `noisy_quadratic` are opda's "
           "parametric tuning-curve distributions (maximum spacing fits, concave); `normal` is a normal "
           f"fitted to the scores. Intervals: {args.level:.0%} bootstrap percentile intervals "
           f"({args.resamples} resamples of the k trials, each refitted).", ""]
    summary = []
    for model in models:
        row = {"model": model}
        for k in KS:
            part = first[(first.model == model) & (first.k == k)]
            rand = random[(random.model == model) & (random.k == k)]
            row[f"first {k}: median abs. error"] = fmt(part.error.abs().median())
            row[f"first {k}: mean abs. error"] = fmt(part.error.abs().mean())
            unsorted = part[~part.sorted]
            row[f"first {k}: coverage"] = "-" if part.covered.isna().all() else (
                f"{part.covered.mean():.0%} ({unsorted.covered.mean():.0%})")
            row[f"random {k}: median abs. error"] = fmt(rand.abs_error.median()) if not rand.empty else "-"
        summary.append(row)
    out += ["## Verdict", "", verdict(first, random, args.level), "",
            "## Summary over the ten families", "", markdown(pd.DataFrame(summary)), "",
            "Coverage: how often the interval holds the reference (in brackets: leaving out the families "
            "whose rows are sorted by score). Random subsets: the median over families and subsets of "
            f"the absolute error ({args.subsets} subsets of k trials per family).", ""]
    out += ["## Family by family (first k trials)", "",
            "Sorted: the file's rows are sorted by score (Spearman correlation of row and score above "
            f"{SORTED}), so its first k trials are its worst k, not a sample of the search.", ""]
    table = []
    for (dataset, family, k), part in first.groupby(["dataset", "family", "k"], sort=False):
        row = {"dataset": dataset, "family": family, "N": int(meta.loc[(dataset, family), "N"]),
               "sorted": "yes" if meta.loc[(dataset, family), "sorted"] else "", "k": k,
               "reference": fmt(part.reference.iloc[0])}
        for r in part.itertuples():
            interval = "" if pd.isna(r.low) else f" [{fmt(r.low)}, {fmt(r.high)}]{'' if r.covered else ' missed'}"
            row[r.model] = f"{r.forecast:.4f} ({r.error:+.4f}){interval}"
        table.append(row)
    out += [markdown(pd.DataFrame(table)), "", "Each cell: forecast (its error) [interval]; `missed`: the "
            "reference is outside the interval.", ""]
    return "\n".join(out)


def verdict(first: pd.DataFrame, random: pd.DataFrame, level: float) -> str:
    """Recommend a model only if it beats the baseline's median error on both k and both ways of
    choosing the k trials, and its intervals cover the reference within 10 points of ``level``."""
    good = []
    for model in INTERVAL_MODELS[1:]:
        beats = all(
            part[part.model == model][col].abs().median() < part[part.model == "empirical"][col].abs().median()
            for k in KS for part, col in ((first[first.k == k], "error"), (random[random.k == k], "abs_error")))
        coverage = first[first.model == model].covered.mean()
        if beats and coverage >= level - 0.10:
            good.append(f"`{model}` (coverage {coverage:.0%})")
    if good:
        return "Recommended: " + ", ".join(good) + "."
    return ("**Not recommended.** No fitted model beats the baseline (Eq. 8 on the k trials, read at n = N) on "
            "median error for both k with both the first and random k trials while its "
            f"{level:.0%} intervals cover the reference at least {level - 0.10:.0%} of the time (see the summary). "
            "`syw curve --forecast` says so in its output and report.")


def markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|---" * len(frame.columns) + "|"]
    return "\n".join(lines + ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper-dir", type=Path, default=PAPER_DIR)
    parser.add_argument("--resamples", type=int, default=100, help="bootstrap resamples per interval")
    parser.add_argument("--subsets", type=int, default=20, help="random subsets of k trials per family")
    parser.add_argument("--level", type=float, default=0.9, help="the intervals' nominal coverage")
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    args = parser.parse_args(argv)
    start = time.time()
    first, random, meta = [], [], []
    for dataset, family, scores in families(args.paper_dir):
        rho = stats.spearmanr(np.arange(scores.size), scores).statistic
        meta.append(dict(dataset=dataset, family=family, N=scores.size, sorted=rho > SORTED))
        for k in KS:
            first += [dict(dataset=dataset, family=family, sorted=rho > SORTED, **r)
                      for r in first_k(scores, k, args.resamples, args.level)]
            random += [dict(dataset=dataset, family=family, **r) for r in subsets(scores, k, args.subsets, seed=k)]
        print(f"{dataset} {family}: done ({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
    text = report(pd.DataFrame(first), pd.DataFrame(random), pd.DataFrame(meta).set_index(["dataset", "family"]), args)
    print(text)
    if args.out:
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
