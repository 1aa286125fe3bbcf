"""Figure 1's CNN under the search space as reported (Table 2) and as the authors ran it.

``python -m figures fig1 --variant as_run`` calls :func:`compare_fig1`, which draws the curves
side by side and writes a Markdown comparison: expected max at n = 1, 10, 50, the budget to
reach 0.395, when each CNN overtakes LR (with a bootstrap of that budget), and, when the
authors' file is in ``results/paper/``, our as-run CNN against their 50 trials. When the
study ``sst5_as_run_random`` (the as-run CNN with the authors' random batches) has records,
its curve joins them, with a trial-by-trial comparison (both studies draw the same
assignments and seeds). When ``sst5_as_run_replay`` (our LR and as-run CNN rerun on the
authors' own assignments) has records, its curves join too, each paired trial by trial
with the authors' run of the same assignment.
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
REPLAY_STUDY = "sst5_as_run_replay"  # our LR and as-run CNN on the authors' 50 + 50 assignments
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


def markdown(curves: list[Group], pairs: list[tuple[Group, Group]], bins: pd.DataFrame,
             as_run: list[Group], authors: Group | None, paired: dict[str, str], studies: list[str]) -> str:
    out = ["# Figure 1's CNN: search space as reported vs as run", "",
           "Generated by `python -m figures fig1 --variant as_run` from " + ", ".join(f"`results/{s}/`" for s in studies)
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
    for title, text in paired.items():
        out += [f"## {title}", "", text, ""]
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
    drawn, tabled = [lr, cnn_reported, cnn_as_run], []  # tabled: extra rows of the table, not drawn
    pairs = [(cnn_reported, lr), (cnn_as_run, lr)]
    studies = ["sst5", "sst5_as_run"]
    runs = {"ours": cnn_rows(Path(results) / "sst5_as_run")}
    paired = {}
    if has_records(results, RANDOM_STUDY):
        studies.append(RANDOM_STUDY)
        cnn_random = replace({g.family: g for g in from_records(RANDOM_STUDY, results)}["cnn"],
                             family="cnn_as_run_random", label="CNN, space as run, random batches")
        drawn.append(cnn_random)
        pairs.append((cnn_random, lr))
        runs["ours, random batches"] = cnn_rows(Path(results) / RANDOM_STUDY)
        paired["Sorted vs random batches, trial by trial (CNN, space as run)"] = trial_by_trial(
            runs["ours"], runs["ours, random batches"], ("sorted", "random"), "the same assignment and seed in both studies")
    lr_replay = None
    if has_records(results, REPLAY_STUDY):
        studies.append(REPLAY_STUDY)
        groups = {g.family: g for g in from_records(REPLAY_STUDY, results)}
        cnn_replay = replace(groups["cnn"], family="cnn_as_run_replay", label="CNN, space as run, the authors' assignments")
        lr_replay = replace(groups["lr"], family="lr_replay", label="LR, the authors' assignments")
        drawn.append(cnn_replay)
        tabled.append(lr_replay)
        pairs += [(cnn_replay, lr_replay), (cnn_replay, lr)]
        runs["ours, the authors' assignments"] = cnn_rows(Path(results) / REPLAY_STUDY)
    as_run_cnns = drawn[2:]
    authors_cnn = None
    if (Path(paper_dir) / spec.paper.name).is_file():
        authors = {g.family: g for g in from_paper(spec, folder=paper_dir)}
        authors_cnn = replace(authors["cnn"], family="cnn_authors", label="CNN, the authors' 50 trials")
        authors_lr = replace(authors["lr"], family="lr_authors", label="LR, the authors' 50 trials")
        rows = paper_rows(spec, paper_dir)
        runs["authors"] = authors_frame(rows["cnn"])
        drawn.append(authors_cnn)
        tabled.append(authors_lr)
        pairs += [(authors_cnn, lr), (authors_cnn, authors_lr)] + [(c, authors_lr) for c in as_run_cnns]
        if lr_replay is not None:
            paired["Our CNN against theirs on the same assignments, trial by trial (space as run)"] = trial_by_trial(
                runs["authors"], runs["ours, the authors' assignments"], ("theirs", "ours"), "the same assignment")
            ours_lr, _ = load_study(Path(results) / REPLAY_STUDY)
            ours_lr = ours_lr[ours_lr["family"] == "lr"].assign(acc=lambda f: f["value"])
            paired["Our LR against theirs on the same assignments, trial by trial"] = trial_by_trial(
                authors_frame(rows["lr"]), ours_lr, ("theirs", "ours"), "the same assignment")
    plain = replace(spec, shade=False, guide=None)
    paths = draw(plain, drawn, "Figure 1's CNN: search space as reported vs as run", out / "fig1_reported_vs_as_run")
    md = out / "fig1_reported_vs_as_run.md"
    md.write_text(markdown(drawn + tabled, pairs, lr_bins(runs), as_run_cnns, authors_cnn, paired, studies))
    return [*paths, md]


def has_records(results: Path, study: str) -> bool:
    return any((Path(results) / study).glob("*.jsonl"))


def authors_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """The authors' trials of one family with ``trial`` (row order, as replayed), ``lr`` and ``acc``."""
    return rows.assign(trial=np.arange(len(rows)), lr=rows.get("trainer.optimizer.lr"), acc=rows["best_validation_accuracy"])


def cnn_rows(study_dir: Path) -> pd.DataFrame:
    """A study's CNN records with their ``trial``, learning rate ``lr`` and accuracy ``acc``."""
    frame, _ = load_study(study_dir)
    cnn = frame[frame["family"] == "cnn"]
    return cnn.assign(lr=cnn["params.lr"], acc=cnn["value"])
