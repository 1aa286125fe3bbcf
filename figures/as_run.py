"""Figure 1's CNN under the search space as reported (Table 2) and as the authors ran it.

``python -m figures fig1 --variant as_run`` calls :func:`compare_fig1`, which draws the curves
side by side and writes a Markdown comparison: expected max at n = 1, 10, 50, the budget to
reach 0.395, when each CNN overtakes LR (with a bootstrap of that budget), and, when the
authors' file is in ``results/paper/``, our as-run CNN against their 50 trials. When the
study ``sst5_as_run_random`` (the as-run CNN with the authors' random batches) has records,
its curve joins them, with a trial-by-trial comparison (both studies draw the same
assignments and seeds).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import bootstrap_overtake, budget_to_reach, expected_max, overtakes_from
from experiments.records import load_study
from figures.plot import draw
from figures.sources import PAPER_DIR, Group, from_paper, from_records, paper_rows
from figures.specs import FIGURES

BUDGETS = (1, 10, 50)
TARGET = 0.395  # the paper's Fig. 1 guide
CROSSOVER_RANGE = (8, 20)  # issue 6: our as-run CNN should overtake our LR within this many trials
TOLERANCE = 0.015  # issue 6: as-run expected max within this of the authors' at BUDGETS
RESAMPLES = 1000
RANDOM_STUDY = "sst5_as_run_random"  # same assignments and seeds as sst5_as_run, random batches
LR_BINS = (0.0, 0.005, 0.01, 0.025, 0.05, np.inf)  # both spaces draw the learning rate from [1e-6, 0.1]


def markdown_table(frame: pd.DataFrame) -> str:
    """A pipe table of ``frame`` (its index too when it is named)."""
    if frame.index.name:
        frame = frame.reset_index()
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|---" * len(frame.columns) + "|"]
    lines += ["| " + " | ".join("-" if pd.isna(v) else str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def curve(scores: np.ndarray, n_max: int = 50) -> np.ndarray:
    return expected_max(scores, np.arange(1, n_max + 1))


def pair_row(cnn: Group, lr: Group) -> dict:
    """When ``cnn`` overtakes ``lr`` for good, and how often a bootstrap of both puts it in CROSSOVER_RANGE."""
    at = overtakes_from(curve(cnn.scores), curve(lr.scores))
    boot = bootstrap_overtake(cnn.scores, lr.scores, 50, RESAMPLES, seed=0)
    low, high = CROSSOVER_RANGE
    return {"CNN": cnn.label, "LR": lr.label, "overtakes from n": "never" if at is None else at,
            f"bootstrap: n in {low}-{high}": f"{np.mean((boot >= low) & (boot <= high)):.0%}",
            "bootstrap: never": f"{np.mean(boot == 0):.0%}", "bootstrap: median n": _median(boot)}


def _median(boot: np.ndarray) -> str:
    med = np.median(np.where(boot == 0, np.inf, boot))
    return "never" if np.isinf(med) else f"{med:g}"


def curve_row(group: Group) -> dict:
    values = curve(group.scores)
    reach = budget_to_reach(values, TARGET)
    return {"curve": group.label, "trials": group.scores.size,
            **{f"n={n}": f"{values[n - 1]:.4f}" for n in BUDGETS},
            "best": f"{group.scores.max():.4f}", f"reaches {TARGET}": reach or "no"}


def lr_bins(parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Trials, mean and max accuracy per learning-rate bin of each frame (columns ``lr``, ``acc``)."""
    columns = {}
    for who, frame in parts.items():
        grouped = frame.groupby(pd.cut(frame["lr"], LR_BINS), observed=False)["acc"]
        columns[f"{who}: trials"] = grouped.size()
        columns[f"{who}: mean"] = grouped.mean().round(3)
        columns[f"{who}: max"] = grouped.max().round(3)
    table = pd.DataFrame(columns)
    table.index = [f"({iv.left:g}, {iv.right:g}]" for iv in table.index]
    return table.rename_axis("learning rate")


def trial_by_trial(sorted_batches: pd.DataFrame, random_batches: pd.DataFrame) -> str:
    """How the same assignments and seeds score with sorted and with random batches."""
    both = sorted_batches[["trial", "acc"]].merge(random_batches[["trial", "acc"]], on="trial",
                                                  suffixes=("_sorted", "_random"))
    diff = both["acc_random"] - both["acc_sorted"]
    return (f"{len(both)} trials with the same assignment and seed in both studies: random batches score "
            f"higher in {int((diff > 0).sum())}, lower in {int((diff < 0).sum())}, the same in {int((diff == 0).sum())}; "
            f"difference (random - sorted) mean {diff.mean():+.4f}, sd {diff.std():.4f}, "
            f"range {diff.min():+.4f} to {diff.max():+.4f}; best trial {both['acc_sorted'].max():.4f} sorted, "
            f"{both['acc_random'].max():.4f} random.")


def markdown(curves: list[Group], pairs: list[tuple[Group, Group]], bins: pd.DataFrame,
             as_run: list[Group], authors: Group | None, paired: str | None) -> str:
    sources = ["`results/sst5/`", "`results/sst5_as_run/`"] + ([f"`results/{RANDOM_STUDY}/`"] if paired else [])
    out = ["# Figure 1's CNN: search space as reported vs as run", "",
           "Generated by `python -m figures fig1 --variant as_run` from " + ", ".join(sources)
           + (" and the authors' `sst5_cnn_lr_search.tsv`." if authors else " (the authors' file was not present)."), "",
           "## Expected validation accuracy (Eq. 8)", "", markdown_table(pd.DataFrame(map(curve_row, curves))), "",
           f"## When the CNN overtakes LR for good (bootstrap: {RESAMPLES} resamples of both families' trials)", "",
           markdown_table(pd.DataFrame([pair_row(c, lr) for c, lr in pairs])), ""]
    if authors is not None:
        out += ["## Our as-run CNN against the authors' 50 trials", ""]
        theirs = curve(authors.scores)
        for group in as_run:
            ours = curve(group.scores)
            gaps = {n: ours[n - 1] - theirs[n - 1] for n in BUDGETS}
            worst = int(np.argmax(np.abs(ours - theirs))) + 1
            verdict = "within" if all(abs(g) <= TOLERANCE for g in gaps.values()) else "NOT within"
            out += [f"{group.label}: differences in expected max (ours - theirs): "
                    + ", ".join(f"n = {n}: {g:+.4f}" for n, g in gaps.items())
                    + f"; largest over n = 1..50: {ours[worst - 1] - theirs[worst - 1]:+.4f} at n = {worst}. "
                    + f"{verdict.capitalize()} {TOLERANCE} at n = {', '.join(map(str, BUDGETS))}.", ""]
    if paired:
        out += ["## Sorted vs random batches, trial by trial (CNN, space as run)", "", paired, ""]
    out += ["## Trials per learning-rate bin (CNN, space as run)", "", markdown_table(bins), ""]
    return "\n".join(out)


def compare_fig1(results: Path, out: Path, paper_dir: Path = PAPER_DIR) -> list[Path]:
    """Draw ``fig1_reported_vs_as_run.{pdf,png}`` and write its ``.md`` comparison."""
    spec = FIGURES[1]
    reported = {g.family: g for g in from_records("sst5", results)}
    as_run = {g.family: g for g in from_records("sst5_as_run", results)}
    lr = replace(reported["lr"], label="LR")
    cnn_reported = replace(reported["cnn"], family="cnn_reported", label="CNN, space as reported (Table 2)")
    cnn_as_run = replace(as_run["cnn"], family="cnn_as_run", label="CNN, space as run, sorted batches")
    drawn = [lr, cnn_reported, cnn_as_run]
    pairs = [(cnn_reported, lr), (cnn_as_run, lr)]
    runs = {"ours": cnn_rows(Path(results) / "sst5_as_run")}
    paired = None
    if any((Path(results) / RANDOM_STUDY).glob("*.jsonl")):
        cnn_random = replace({g.family: g for g in from_records(RANDOM_STUDY, results)}["cnn"],
                             family="cnn_as_run_random", label="CNN, space as run, random batches")
        drawn.append(cnn_random)
        pairs.append((cnn_random, lr))
        runs["ours, random batches"] = cnn_rows(Path(results) / RANDOM_STUDY)
        paired = trial_by_trial(runs["ours"], runs["ours, random batches"])
    as_run_cnns = drawn[2:]
    tabled = list(drawn)  # the authors' LR is tabled but not drawn
    authors_cnn = None
    if (Path(paper_dir) / spec.paper.name).is_file():
        authors = {g.family: g for g in from_paper(spec, folder=paper_dir)}
        authors_cnn = replace(authors["cnn"], family="cnn_authors", label="CNN, the authors' 50 trials")
        authors_lr = replace(authors["lr"], family="lr_authors", label="LR, the authors' 50 trials")
        rows = paper_rows(spec, paper_dir)["cnn"]
        runs["authors"] = rows.assign(lr=rows["trainer.optimizer.lr"], acc=rows["best_validation_accuracy"])
        drawn.append(authors_cnn)
        tabled += [authors_cnn, authors_lr]
        pairs += [(authors_cnn, lr), (authors_cnn, authors_lr)] + [(c, authors_lr) for c in as_run_cnns]
    plain = replace(spec, shade=False, guide=None)
    paths = draw(plain, drawn, "Figure 1's CNN: search space as reported vs as run", out / "fig1_reported_vs_as_run")
    md = out / "fig1_reported_vs_as_run.md"
    md.write_text(markdown(tabled, pairs, lr_bins(runs), as_run_cnns, authors_cnn, paired))
    return [*paths, md]


def cnn_rows(study_dir: Path) -> pd.DataFrame:
    """A study's CNN records with their ``trial``, learning rate ``lr`` and accuracy ``acc``."""
    frame, _ = load_study(study_dir)
    cnn = frame[frame["family"] == "cnn"]
    return cnn.assign(lr=cnn["params.lr"], acc=cnn["value"])
