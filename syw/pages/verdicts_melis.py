"""Section 5 of ``docs/verdicts.md``: case study 5 (Melis, Dyer and Blunsom 2018) read off our records.

Four questions (issue 36's bar; the seed noise apart from the gaps, issue 62), each answered by the rule in :data:`RULES` on each study's records
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

from syw.analysis.adaptive import trials_saved
from syw.core.errors import DataError
from syw.core.paths import REPO
from syw.core.records import RecordError
from syw.core.units import count, score, spans, stretches_text
from syw.experiments.space import study_config
from syw.experiments.tuner import GP
from syw.figures import fig5
from syw.figures.seeds import MELIS_RATIO, MELIS_ROBUST_GAP, MELIS_SEED_SD, best_assignments, gap_rows, seed_rows
from syw.figures.sources import has_records

STUDIES = fig5.STUDIES
LSTM = "lstm"  # the family whose lead question 1 asks about (``lstm``, ``lstm_24m``)
COMMAND = (f"`make study5-reduced` runs `syw run study={fig5.REDUCED}`, the three GP-tuner runs of the LSTM "
           f"(`syw run study={fig5.REDUCED} family=lstm strategy={GP} tuner.seed=k`, k = 0, 1, 2) and "
           f"`syw reseed study={fig5.REDUCED}`")
ABOUT = 1.5  # "about": within this factor, as docs/verdicts.md's budgets
RULES = (
    "Validation perplexity, lower is better; cells are compared within one parameter budget (`lstm`, `rhn`, `nas`; "
    "`lstm_24m`, `rhn_24m`, `nas_24m`). (1) On random search's expected best of n trials (Eq. 8, direction min) at "
    "n = 1 to the smallest cell's N: the LSTM leading at every n supports the claim, another cell leading at some n "
    "contradicts it (the leaders by n are given). (2) The GP tuner's mean best-so-far over its runs (never Eq. 8: "
    "adaptive trials are no i.i.d. draws) beside random search of the same cell: it saves N - n trials, n the "
    "smallest at which that mean is at or below random search's expected best at N (n up to N and the shortest "
    "run); saving at least one trial supports the claim, saving none contradicts it (runs shorter than N that do not "
    "reach it cannot test it); also given: at how many n of 1 to min(N, the shortest run) the mean is at or below "
    "random search's curve. (3) Each cell's best random-search assignment rerun with new seeds (`syw reseed`): "
    f"the sample SD of its reruns is about {MELIS_SEED_SD} perplexity when within a factor {ABOUT:g} of it; every cell's "
    "supports the claim, any cell's outside contradicts it. (4) With the same reruns, a gap "
    "between two cells (the difference of their rerun means) is robust when it is at least "
    f"{MELIS_RATIO:.3g} times their pooled seed SD (root mean square of the two sample SDs; Melis et al.'s "
    f"{MELIS_ROBUST_GAP} over {MELIS_SEED_SD}, the rule of `syw seeds`); every pair robust supports the claim, "
    "any pair not robust contradicts it. A reduced study cannot test a claim about the paper's scale: its numbers "
    "are evidence from a reduced study.")
QUESTIONS = (
    "LSTMs beat RHN and NAS once each is tuned well (abstract; section 6.1, Table 1). Does the LSTM lead at every "
    "budget?",
    "A batched-GP-bandit tuner is more efficient than grid search with few hyperparameters (section 5.1); here "
    "against random search. How many trials does the GP tuner save (LSTM)?",
    f"Seed noise is about {MELIS_SEED_SD} perplexity on PTB (section 7.2, Model Selection). Is each cell's seed SD "
    f"about {MELIS_SEED_SD}?",
    f"A gap of {MELIS_ROBUST_GAP} perplexity, {MELIS_RATIO:.3g} seed SDs, is robust (section 7.2). Do the gaps between "
    f"cells exceed {MELIS_RATIO:.3g} pooled seed SDs?",
)
Answer = tuple[str, str]  # the evidence in words and the verdict


def _missing(why: str, text: str = "-") -> Answer:
    return text, f"cannot be tested here (data: {why})"


def combine(verdicts: list[str]) -> str:
    """Supports when every part does; a part that cannot be tested makes the whole untestable."""
    return next((v for v in verdicts if v.startswith("cannot")), None) or (
        "supports" if all(v == "supports" for v in verdicts) else "contradicts")


def budgets(cells_: list[fig5.Cell]) -> list[list[fig5.Cell]]:
    """The cells of each parameter budget (a family's suffix: ``lstm`` with ``nas``, ``lstm_24m`` with ``nas_24m``)."""
    out: dict[str, list[fig5.Cell]] = {}
    for c in cells_:
        out.setdefault(c.group.name.partition("_")[2], []).append(c)
    return list(out.values())


def lead(cells_: list[fig5.Cell]) -> Answer:
    """Question 1: whether the LSTM's Eq. 8 curve (direction min) is the lowest at every n = 1 to the smallest N."""
    texts, verdicts = [], []
    for group in budgets(cells_):
        lstm = next(c.group.name for c in group if c.group.name.split("_")[0] == LSTM)
        stretches = fig5.leaders(group)
        n_max = min(c.group.scores.size for c in group)
        at_n = ", ".join(f"{c.group.name} {score(c.curve()[1][n_max - 1])}" for c in group)
        if [who for who, _, _ in stretches] == [lstm]:
            texts.append(f"{lstm} leads at every n = 1 to {n_max} (expected best at n = {n_max}: {at_n})")
            verdicts.append("supports")
            continue
        by_n = stretches_text(stretches)
        changes = ", ".join(str(a) for _, a, _ in stretches[1:])
        texts.append(f"{lstm} does not lead at every n = 1 to {n_max}: the leader is {by_n}"
                     + (f" (the lead changes at n = {changes})" if changes else "")
                     + f" (expected best at n = {n_max}: {at_n})")
        verdicts.append("contradicts")
    return "; ".join(texts), combine(verdicts)


def gp_saving(study: str, cells_: list[fig5.Cell]) -> Answer:
    """Question 2: the trials the GP tuner saves (:func:`fig5.saves`) and where its mean is at or below Eq. 8."""
    tuned = [c for c in cells_ if c.tuner]
    if not tuned:
        return _missing(f"no GP-tuner run with a finished trial in results/{study}/{GP}/; `syw run "
                        f"study={study} family={LSTM} strategy={GP} tuner.seed=k` writes one")
    texts, verdicts = [], []
    for c in tuned:
        big_n = c.group.scores.size
        within = min(big_n, c.tuner.budgets.size)
        above = np.flatnonzero(~(c.tuner.mean[:within] <= c.curve()[1][:within])) + 1  # NaN (no finished trial yet) too
        texts.append(f"{fig5.saves(c).removesuffix('.')} ({count(c.tuner.runs, 'run')}); the mean best-so-far is at or below "
                     f"random search's Eq. 8 curve at {within - above.size} of n = 1 to {within}"
                     + (f" (above at n = {spans(above.tolist())})" if above.size else ""))
        saved = trials_saved(c.tuner, c.curve()[1], maximize=False)
        verdicts.append("supports" if saved else "contradicts" if saved == 0 else
                        f"cannot be tested here (data: the GP runs end at {within} trials, before N = {big_n})")
    return "; ".join(texts), combine(verdicts)


def _pair(g) -> str:
    head = f"{g.ahead} ahead of {g.behind} by {g.gap:.2f}, pooled seed SD {g.pooled_sd:.2f}: "
    if math.isnan(g.ratio):
        return head + "undetermined (a seed SD of 0 or fewer than two ok reruns)"
    return head + f"{g.ratio:.2f} SDs, " + ("robust" if g.robust else "not robust")


def seed_noise(study: str, results: Path, cells_: list[fig5.Cell]) -> Answer:
    """Question 3: each cell's seed SD (its best assignment's reruns) against Melis et al.'s noise of about 0.4 perplexity."""
    try:
        rows = seed_rows(results / study)
    except FileNotFoundError:
        return _missing(f"no seed reruns in results/{study}/reseed/; `syw reseed study={study}` writes them")
    best = best_assignments(rows[rows.group.isin([c.group.name for c in cells_])])
    text = "; ".join(f"{r.group} SD {r.sd:.2f} over {count(r.reruns, 'rerun')} (trial {r.trial})" for r in best.itertuples()) or "-"
    absent = [c.group.name for c in cells_ if c.group.name not in set(best.group)]
    if absent:
        return _missing(f"no seed reruns of {', '.join(absent)} in results/{study}/reseed/", text)
    if best.sd.isna().any():
        return _missing("a cell's seed SD is undetermined (fewer than two ok reruns)", text)
    about = all(MELIS_SEED_SD / ABOUT <= sd <= MELIS_SEED_SD * ABOUT for sd in best.sd)
    return text, "supports" if about else "contradicts"


def seed_gaps(study: str, results: Path, cells_: list[fig5.Cell]) -> Answer:
    """Question 4: each pair of cells' gap between their best assignments' rerun means against their seed spread."""
    try:
        rows = seed_rows(results / study)
    except FileNotFoundError:
        return _missing(f"no seed reruns in results/{study}/reseed/; `syw reseed study={study}` writes them")
    rows = rows[rows.group.isin([c.group.name for c in cells_])]  # a GP run's reruns are no cell of their own
    gaps = []
    for group in budgets(cells_):
        mine = rows[rows.group.isin([c.group.name for c in group])]
        gaps += [] if mine.empty else list(gap_rows(mine).itertuples())
    text = "; ".join(_pair(g) for g in gaps) or "-"
    absent = [c.group.name for c in cells_ if c.group.name not in set(rows.group)]
    if absent:
        return _missing(f"no seed reruns of {', '.join(absent)} in results/{study}/reseed/", text)
    if any(math.isnan(g.ratio) for g in gaps):
        return _missing("a pair's seed SD is undetermined", text)
    return text, "supports" if all(g.robust for g in gaps) else "contradicts"


def answers(study: str, results: Path) -> list[Answer]:
    """The four questions' evidence and verdicts on ``study``'s records (:data:`RULES`)."""
    if not has_records(results, study):
        return [_missing(f"no records in results/{study}")] * len(QUESTIONS)
    try:
        _, cells_ = fig5.cells(results, study)
        found = [lead(cells_), gp_saving(study, cells_), seed_noise(study, results, cells_),
                 seed_gaps(study, results, cells_)]
    except (FileNotFoundError, DataError, RecordError) as err:
        return [_missing(str(err).replace(f"{REPO}/", "").replace(f"{results}/", "results/"))] * len(QUESTIONS)
    reduced = study_config(study).get("reduced")
    if not reduced:
        return found
    scale = f"cannot be tested here (scale: {reduced.removeprefix('REDUCED: ')}): evidence from a reduced study"
    return [(text, scale if verdict in ("supports", "contradicts") else verdict) for text, verdict in found]


def section(results: Path = REPO / "results") -> list[str]:
    """The lines of ``docs/verdicts.md``'s section 5: the rules, one row per question, and what to run when no records."""
    by_study = {s: answers(s, results) for s in STUDIES}
    out = ["## Section 5 case study (Melis et al. 2018)", "", f"Rules: {RULES}", "",
           "| Melis et al. say; the question | ours | verdict |", "|---|---|---|"]
    for k, question in enumerate(QUESTIONS):
        out.append(f"| {question} | " + "<br>".join(f"{s}: {a[k][0]}" for s, a in by_study.items()) + " | "
                   + "<br>".join(f"{s}: {a[k][1]}" for s, a in by_study.items()) + " |")
    if not any(has_records(results, s) for s in STUDIES):
        out += ["", f"No records yet ({'; '.join(f'no records in results/{s}' for s in STUDIES)}): {COMMAND}."]
    return out + [""]
