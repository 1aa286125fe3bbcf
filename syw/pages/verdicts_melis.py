"""Section 5 of ``docs/verdicts.md``: case study 5 (Melis, Dyer and Blunsom 2018) read off our records.

Four questions (issue 36's bar; the seed noise apart from the gaps, issue 62), each answered on each study's records by
its three-valued rule (:data:`syw.pages.verdict_rules.MELIS_RULES`, issue 73), the point estimates beside it
(``results/<study>/<family>.jsonl`` random search, ``gp/<family>.tuner_seed<k>.jsonl`` GP-tuner runs,
``reseed/<source>.jsonl`` seed reruns): random search's Eq. 8 curves with direction min and the GP
tuner's mean best-so-far come from :func:`syw.figures.fig5.cells`, the seed spread and the gaps from
:mod:`syw.figures.seeds`. A reduced study cannot test a claim about the paper's scale: its numbers are
evidence, as in sections 4.1-4.4; a question whose records are missing says which and what writes them.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from syw.analysis.adaptive import best_so_far, saved_by_run, tuner_runs
from syw.analysis.inference import compare, limit_budget
from syw.analysis.intervals import compare_at, gap_interval, sd_interval
from syw.core.errors import DataError
from syw.core.paths import REPO
from syw.core.records import RecordError
from syw.core.units import count, score, spans, stretches_text
from syw.experiments.study import load_study
from syw.experiments.tuner import GP
from syw.figures import fig5
from syw.figures.seeds import MELIS_RATIO, MELIS_ROBUST_GAP, MELIS_SEED_SD, best_assignments, gap_rows, seed_rows
from syw.figures.sources import has_records
from syw.pages import verdict_rules as rules
from syw.pages.verdict_rules import MELIS_RULES, Verdict
from syw.pages.verdicts_claims import HEADER, Reading, row

STUDIES = fig5.STUDIES
LSTM = "lstm"  # the family whose lead question 1 asks about (``lstm``, ``lstm_24m``)
COMMAND = (f"`make study5-reduced` runs `syw run study={fig5.REDUCED}`, the three GP-tuner runs of the LSTM "
           f"(`syw run study={fig5.REDUCED} family=lstm strategy={GP} tuner.seed=k`, k = 0, 1, 2) and "
           f"`syw reseed study={fig5.REDUCED}`")
RULES = (
    "Validation perplexity, lower is better; cells are compared within one parameter budget (`lstm`, `rhn`, `nas`; "
    "`lstm_24m`, `rhn_24m`, `nas_24m`); random search's curves are Eq. 8 with direction min, the GP tuner's its runs' "
    "best-so-far (never Eq. 8: adaptive trials are no i.i.d. draws). " + " ".join(MELIS_RULES.values())
    + f" The claims' numbers: a seed SD of about {MELIS_SEED_SD} perplexity, a robust gap of {MELIS_ROBUST_GAP} ("
    f"{MELIS_RATIO:.3g} seed SDs). A reduced study cannot test a claim about the paper's scale: its reading is "
    "evidence from a reduced study.")
QUESTIONS = (
    "LSTMs beat RHN and NAS once each is tuned well (abstract; section 6.1, Table 1). Does the LSTM lead at every "
    "budget?",
    "A batched-GP-bandit tuner is more efficient than grid search with few hyperparameters (section 5.1); here "
    "against random search. Is the GP tuner ahead of random search, and how many trials does it save (LSTM)?",
    f"Seed noise is about {MELIS_SEED_SD} perplexity on PTB (section 7.2, Model Selection). Is each cell's seed SD "
    f"about {MELIS_SEED_SD}?",
    f"A gap of {MELIS_ROBUST_GAP} perplexity, {MELIS_RATIO:.3g} seed SDs, is robust (section 7.2). Do the gaps between "
    f"cells exceed {MELIS_RATIO:.3g} pooled seed SDs?",
)


def _missing(why: str, point: str = "-") -> Reading:
    return Reading(point, "-", rules.untestable(f"data: {why}"))


def budgets(cells_: list[fig5.Cell]) -> list[list[fig5.Cell]]:
    """The cells of each parameter budget (a family's suffix: ``lstm`` with ``nas``, ``lstm_24m`` with ``nas_24m``)."""
    out: dict[str, list[fig5.Cell]] = {}
    for c in cells_:
        out.setdefault(c.group.name.partition("_")[2], []).append(c)
    return list(out.values())


def _leaders_text(diff, names: tuple[str, str]) -> str:
    """Who leads at 95% at each budget of a comparison, by stretch: ``lstm at n = 1-2; none at n = 3; past the limit ...``."""
    by_who: dict[str, list[int]] = {}
    for n, who in zip(diff.ns.tolist(), diff.leader()):
        by_who.setdefault(f"past the limit n = {diff.limit}" if n > diff.limit else who or "none", []).append(n)
    return f"{names[0]} vs {names[1]}: " + "; ".join(f"{who} at n = {spans(ns)}" for who, ns in by_who.items())


def lead(cells_: list[fig5.Cell]) -> Reading:
    """Question 1: whether the LSTM leads every other cell of its budget at every n (:data:`MELIS_RULES` ``lead``)."""
    points, intervals, parts = [], [], []
    for group in budgets(cells_):
        lstm = next(c for c in group if c.group.name.split("_")[0] == LSTM)
        n_max = min(c.group.scores.size for c in group)
        at_n = ", ".join(f"{c.group.name} {score(c.curve()[1][n_max - 1])}" for c in group)
        stretches = fig5.leaders(group)
        if [who for who, _, _ in stretches] == [lstm.group.name]:
            points.append(f"{lstm.group.name} leads at every n = 1 to {n_max} (expected best at n = {n_max}: {at_n})")
        else:
            changes = ", ".join(str(a) for _, a, _ in stretches[1:])
            points.append(f"{lstm.group.name} does not lead at every n = 1 to {n_max}: the leader is {stretches_text(stretches)}"
                          + (f" (the lead changes at n = {changes})" if changes else "") + f" (expected best at n = {n_max}: {at_n})")
        leaders = []
        for other in (c for c in group if c is not lstm):
            names = (lstm.group.name, other.group.name)
            diff = compare(lstm.group.scores, other.group.scores, names, maximize=False)
            leaders.append(diff.leader())
            intervals.append(_leaders_text(diff, names))
        parts.append(rules.verdict(rules.throughout(leaders, lstm.group.name), {c.group.name: c.group.scores.size for c in group},
                                   per="cell"))
    return Reading("; ".join(points) + " (Eq. 8)", "leader at 95% (simultaneous over n): " + "; ".join(intervals),
                   rules.combine(parts))


def _gp(c: fig5.Cell, runs: list[np.ndarray]) -> tuple[str, Verdict]:
    """The GP runs' best-so-far against random search at the budget L of :data:`MELIS_RULES` ``tuner``."""
    big_n, shortest = c.group.scores.size, min(run.size for run in runs)
    at = min(limit_budget(big_n), shortest)
    values = np.array([best_so_far(run, maximize=False)[at - 1] for run in runs])
    values = values[np.isfinite(values)]
    amount = f"{count(values.size, 'GP run')} and {big_n} random-search trials"
    if values.size < 2:
        return f"{c.group.name} at n = {at}: fewer than 2 GP runs with a finished trial, no interval", Verdict("undecided", words=amount)
    # the runs' mean is V_1 of their values; lower is better, so the difference is random search's minus the GP's
    found = compare_at(values, 1, c.group.scores, at, maximize=False)
    state = "supports" if found.low > 0 else "contradicts" if found.high < 0 else "undecided"
    text = (f"{c.group.name} at n = {at} (L), random search minus the GP tuner's mean best-so-far: "
            + (f"[{found.low:+.2f}, {found.high:+.2f}] perplexity" if found.located else "not located"))
    return text, Verdict(state, words=amount if state == "undecided" else "")


def gp_saving(study: str, results: Path, cells_: list[fig5.Cell]) -> Reading:
    """Question 2: the GP tuner against random search (:data:`MELIS_RULES` ``tuner``), the trials each run saves beside."""
    tuned = [c for c in cells_ if c.tuner]
    if not tuned:
        return _missing(f"no GP-tuner run with a finished trial in results/{study}/{GP}/; `syw run "
                        f"study={study} family={LSTM} strategy={GP} tuner.seed=k` writes one")
    points, intervals, parts = [], [], []
    for c in tuned:
        runs = tuner_runs(results / study, c.group.name, GP)
        saved = saved_by_run(runs, c.curve()[1], maximize=False)
        each = ", ".join("not yet" if s is None else str(s) for s in saved)
        points.append(f"{fig5.saves(c).removesuffix('.')} ({count(c.tuner.runs, 'run')}, their mean best-so-far); "
                      f"each run on its own saves {each} of {c.group.scores.size} trials")
        text, said = _gp(c, runs)
        intervals.append(text)
        parts.append(said)
    return Reading("; ".join(points), "; ".join(intervals), rules.combine(parts))


def _reruns(study: str, results: Path, cells_: list[fig5.Cell]):
    """Each cell's best rerun assignment (:func:`best_assignments`) or why there is none (a :class:`Reading`)."""
    try:
        rows = seed_rows(results / study)
    except FileNotFoundError:
        return _missing(f"no seed reruns in results/{study}/reseed/; `syw reseed study={study}` writes them")
    rows = rows[rows.group.isin([c.group.name for c in cells_])]  # a GP run's reruns are no cell of their own
    absent = [c.group.name for c in cells_ if c.group.name not in set(rows.group)]
    return rows, absent


def seed_noise(study: str, results: Path, cells_: list[fig5.Cell]) -> Reading:
    """Question 3: each cell's seed SD (its best assignment's reruns) against Melis et al.'s noise of about 0.4 perplexity."""
    found = _reruns(study, results, cells_)
    if isinstance(found, Reading):
        return found
    rows, absent = found
    best = best_assignments(rows)
    point = "; ".join(f"{r.group} SD {r.sd:.2f} over {count(r.reruns, 'rerun')} (trial {r.trial})" for r in best.itertuples()) or "-"
    if absent:
        return _missing(f"no seed reruns of {', '.join(absent)} in results/{study}/reseed/", point)
    if (best.reruns < 2).any():
        return _missing("a cell's seed SD is undetermined (fewer than two ok reruns)", point)
    sds = {r.group: sd_interval(r.values) for r in best.itertuples()}
    parts = [rules.verdict(rules.about(s.low, s.high, MELIS_SEED_SD), {g: r}, unit="rerun", per="cell")
             for (g, s), r in zip(sds.items(), best.reruns)]
    interval = "; ".join(f"{g} [{s.low:.2f}, {s.high:.2f}]" for g, s in sds.items())
    return Reading(point, f"seed SD, 95%: {interval}", rules.combine(parts))


def _pair(g) -> str:
    head = f"{g.ahead} ahead of {g.behind} by {g.gap:.2f}, pooled seed SD {g.pooled_sd:.2f}: "
    if math.isnan(g.ratio):
        return head + "undetermined (a seed SD of 0 or fewer than two ok reruns)"
    return head + f"{g.ratio:.2f} SDs, " + ("robust" if g.robust else "not robust")


def seed_gaps(study: str, results: Path, cells_: list[fig5.Cell]) -> Reading:
    """Question 4: each pair of cells' gap between their best assignments' rerun means, in pooled seed SDs."""
    found = _reruns(study, results, cells_)
    if isinstance(found, Reading):
        return found
    rows, absent = found
    gaps, values = [], {r.group: r.values for r in best_assignments(rows).itertuples()}
    for group in budgets(cells_):
        mine = rows[rows.group.isin([c.group.name for c in group])]
        gaps += [] if mine.empty else list(gap_rows(mine).itertuples())
    point = "; ".join(_pair(g) for g in gaps) or "-"
    if absent:
        return _missing(f"no seed reruns of {', '.join(absent)} in results/{study}/reseed/", point)
    if any(math.isnan(g.ratio) for g in gaps):
        return _missing("a pair's seed SD is undetermined", point)
    found = [(g, gap_interval(values[g.behind], values[g.ahead])) for g in gaps]  # perplexity: behind minus ahead > 0
    parts = [rules.verdict(rules.at_least(i.low, i.high, MELIS_RATIO), {k: len(values[k]) for k in (g.ahead, g.behind)},
                           unit="rerun", per="cell") for g, i in found]
    interval = "; ".join(f"{g.ahead} vs {g.behind} [{i.low:.2f}, {i.high:.2f}]" for g, i in found)
    return Reading(point, f"gap in seed SDs, 95%: {interval}", rules.combine(parts))


def answers(study: str, results: Path) -> list[Reading]:
    """The four questions' readings on ``study``'s records (:data:`RULES`)."""
    if not has_records(results, study):
        return [_missing(f"no records in results/{study}")] * len(QUESTIONS)
    try:
        _, cells_ = fig5.cells(results, study)
        found = [lead(cells_), gp_saving(study, results, cells_), seed_noise(study, results, cells_),
                 seed_gaps(study, results, cells_)]
    except (FileNotFoundError, DataError, RecordError) as err:
        return [_missing(str(err).replace(f"{REPO}/", "").replace(f"{results}/", "results/"))] * len(QUESTIONS)
    reduced = load_study(study).reduced
    if not reduced:
        return found
    scale = rules.untestable(f"scale: {reduced.removeprefix('REDUCED: ')}")
    return [r if r.verdict.state == "untestable" else Reading(r.point, r.interval, scale, r.verdict) for r in found]


def section(results: Path = REPO / "results") -> list[str]:
    """The lines of ``docs/verdicts.md``'s section 5: the rules, one row per question and study, and what to run when
    there are no records."""
    by_study = {s: answers(s, results) for s in STUDIES}
    out = ["## Section 5 case study (Melis et al. 2018)", "", f"Rules: {RULES}", "",
           *HEADER.replace("the paper says", "Melis et al. say; the question").split("\n")]
    for k, question in enumerate(QUESTIONS):
        out += [row(question if first else "", s, a[k]) for first, (s, a) in zip([True] + [False] * len(by_study), by_study.items())]
    if not any(has_records(results, s) for s in STUDIES):
        out += ["", f"No records yet ({'; '.join(f'no records in results/{s}' for s in STUDIES)}): {COMMAND}."]
    return out + [""]
