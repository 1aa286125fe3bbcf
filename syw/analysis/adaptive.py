"""Adaptive searches: recognise them, and draw what applies to them instead of Eq. 8.

Eq. 8 (Dodge et al. 2019, section 3.1) is the expected best of n *independent* draws from the score
distribution: random search. An adaptive sampler (Optuna's TPE, GP or CMA-ES, a Ray Tune searcher
such as OptunaSearch or HyperOpt) chooses each trial from the earlier ones, so its N scores are not
draws from one distribution and reshuffling them answers no question about it. For such a search
``syw curve`` draws what was observed: the best score so far in trial order and, with several runs
of the search (a ``run`` column, several studies or files), their mean with the spread of the runs.

A search is recognised from what it leaves behind:

- Optuna does not store the sampler, but its samplers mark trials or the study: ``tpe:``, ``gp:``,
  ``cma:``, ``sepcma:``, ``cmawm:`` trial attributes, ``NSGAIISampler:``-like study attributes; a
  user attribute ``sampler`` or ``strategy`` names it outright. RandomSampler (and TPE's first,
  random, trials) leaves no mark: a study without one is read as random search.
- A Ray Tune experiment run with a searcher holds ``search_gen_state-*.json`` or
  ``searcher-state-*.pkl`` (its class name is read from the pickle's bytes, never unpickled; where a
  wrapper hides it, the library its state pickles: ``optuna.samplers`` is OptunaSearch); one
  run with the default random/grid generator holds ``basic-variant-state-*.json`` only.
- A column ``strategy`` (or ``search_strategy``, ``sampler``, ``searcher``): random search is
  ``random``, ``uniform``, ``uniform sampling``, ``random search``, ``RandomSampler``, ``grid``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.budget import budget_to_reach
from syw.core.records import adaptive_runs

RANDOM = frozenset({"random", "uniform", "uniform sampling", "uniform random sampling", "random search",
                    "random sampling", "randomsampler", "basicvariantgenerator", "grid", "grid search",
                    "gridsampler", "qmcsampler", "quasi-random"})
STRATEGY_COLUMNS = ("strategy", "search_strategy", "sampler", "searcher", "search_alg")
OPTUNA_TRIAL_MARKS = {"tpe:": "TPESampler", "gp:": "GPSampler", "cma:": "CmaEsSampler",
                      "sepcma:": "CmaEsSampler", "cmawm:": "CmaEsSampler"}
RULE = ("Eq. 8 assumes the N trials are independent draws (random search); an adaptive search chooses "
        "each trial from the earlier ones, so for its groups the figure and tables show the best score so far "
        "in trial order (with several runs: their mean at each n, shaded ±1 SD across runs, clipped to the "
        "observed scores) and nothing of Eq. 8, its bands or comparisons.")


def is_random(label: str | None) -> bool:
    """Whether a strategy label (None: none recorded) names random search."""
    return label is None or str(label).strip().lower() in RANDOM


def optuna_strategy(trial_keys: set[str], study_keys: set[str], user_attrs: dict) -> str | None:
    """The adaptive Optuna sampler the attribute keys reveal (module doc), else None."""
    named = user_attrs.get("sampler") or user_attrs.get("strategy")
    if named:
        return None if is_random(named) else f"Optuna {named}"
    for prefix, sampler in OPTUNA_TRIAL_MARKS.items():
        if any(key.startswith(prefix) for key in trial_keys):
            return f"Optuna {sampler}"
    genetic = next((key.split(":")[0] for key in study_keys if re.match(r"\w+Sampler:parent:", key)), None)
    return f"Optuna {genetic}" if genetic else None


SEARCHER_LIBRARIES = {b"optuna.samplers": "OptunaSearch", b"hyperopt.": "HyperOptSearch", b"bayes_opt.": "BayesOptSearch"}


def ray_strategy(folder: Path) -> str | None:
    """The Ray Tune searcher an experiment folder was run with (module doc), else None."""
    states = sorted(folder.glob("searcher-state-*.pkl")) + sorted(folder.glob("search_gen_state-*.json"))
    if not states:
        return None
    state = b"".join(p.read_bytes()[:1_000_000] for p in states)
    found = re.findall(rb"([A-Z][A-Za-z]*Search|TuneBOHB)\b", state)
    names = [n.decode() for n in found if n.decode() not in ("BasicVariantSearch",)]
    names += [name for module, name in SEARCHER_LIBRARIES.items() if module in state]
    return f"Ray Tune {names[0]}" if names else "a Ray Tune searcher"


def strategy_column(frame: pd.DataFrame) -> str | None:
    """The column naming each trial's search strategy (module doc), else None."""
    by_name = {str(c).lower().split(".")[-1]: c for c in frame.columns}
    return next((by_name[name] for name in STRATEGY_COLUMNS if name in by_name), None)


def best_so_far(values, *, maximize: bool = True) -> np.ndarray:
    """The running best of ``values`` in their order; a failed trial (NaN) keeps the best so far (NaN
    until the first finished trial)."""
    arr = np.asarray(values, dtype=float)
    return np.fmax.accumulate(arr) if maximize else np.fmin.accumulate(arr)


@dataclass(frozen=True)
class BestSoFar:
    """The best score so far after n = 1..L trials over several runs of a search (L: the shortest run)."""

    budgets: np.ndarray
    mean: np.ndarray  # the runs' mean at each n
    sd: np.ndarray  # the SD across runs (ddof 1; NaN with one run)
    low: np.ndarray  # the worst run's best so far (the higher one when lower is better)
    high: np.ndarray  # the best run's
    runs: int
    lengths: tuple[int, ...] = ()  # each run's number of trials


def mean_best_so_far(runs, *, maximize: bool = True) -> BestSoFar:
    """:func:`best_so_far` of each run (a sequence of scores in trial order), summarised up to the shortest."""
    curves = [best_so_far(run, maximize=maximize) for run in runs]
    if not curves or min(c.size for c in curves) == 0:
        raise ValueError("best so far: every run needs at least one trial")
    length = min(c.size for c in curves)
    stack = np.vstack([c[:length] for c in curves])
    sd = stack.std(axis=0, ddof=1) if len(curves) > 1 else np.full(length, np.nan)
    worst, best = (stack.min(axis=0), stack.max(axis=0)) if maximize else (stack.max(axis=0), stack.min(axis=0))
    return BestSoFar(np.arange(1, length + 1), stack.mean(axis=0), sd, worst, best, len(curves),
                     tuple(c.size for c in curves))


def reaches_random(best: BestSoFar, random_curve: np.ndarray, *, maximize: bool = True) -> int | None:
    """The smallest n, up to random search's N and the shortest adaptive run, at which the runs' mean
    best-so-far reaches random search's expected best at N (``random_curve``: Eq. 8 at n = 1..N); None
    where it does not. N minus that n is the trials the adaptive search saves (issue 36, item 8)."""
    within = min(random_curve.size, best.budgets.size)
    return budget_to_reach(best.mean[:within], float(random_curve[-1]), maximize=maximize)


def trials_saved(best: BestSoFar, random_curve: np.ndarray, *, maximize: bool = True) -> int | None:
    """The trials the adaptive search saves against random search's N: N minus :func:`reaches_random`'s n; 0 where
    runs of at least N trials never reach random search's expected best at N; None (not known yet) where runs
    shorter than N have not reached it."""
    n = reaches_random(best, random_curve, maximize=maximize)
    if n is not None:
        return random_curve.size - n
    return 0 if best.budgets.size >= random_curve.size else None


def progress(scores: np.ndarray, order: np.ndarray, runs: np.ndarray, *, maximize: bool = True) -> BestSoFar:
    """:func:`mean_best_so_far` of a group's trials: each run's scores sorted by ``order`` (stable)."""
    split = []
    for run in pd.unique(runs):
        mine = runs == run
        split.append(scores[mine][np.argsort(order[mine], kind="stable")])
    return mean_best_so_far(split, maximize=maximize)


def tuner_runs(study_dir: Path, family: str, strategy: str) -> list[np.ndarray]:
    """The values of each ``strategy`` run of ``family`` with a finished trial, in trial order (NaN: failed), by
    tuner seed (:func:`syw.core.records.adaptive_runs`)."""
    return [values for (found, _), values in sorted(adaptive_runs(study_dir, family).items())
            if found == strategy and np.isfinite(values).any()]


def saved_by_run(runs: list[np.ndarray], random_curve: np.ndarray, *, maximize: bool = True) -> list[int | None]:
    """:func:`trials_saved` of each run on its own: N minus the first n at which the run's best-so-far reaches random
    search's expected best at N; 0 where a run of at least N trials never does, None where a shorter one has not yet."""
    out = []
    for run in runs:
        n = budget_to_reach(best_so_far(run, maximize=maximize)[:random_curve.size], float(random_curve[-1]), maximize=maximize)
        out.append(random_curve.size - n if n is not None else 0 if run.size >= random_curve.size else None)
    return out


def tuner_progress(study_dir: Path, family: str, strategy: str) -> tuple[BestSoFar, np.ndarray] | None:
    """The ``strategy`` runs of ``family`` (:func:`tuner_runs`) as their mean best-so-far (lower is better, as
    perplexity) and their finished values; None without a run that has finished a trial."""
    runs = tuner_runs(study_dir, family, strategy)
    if not runs:
        return None
    values = np.concatenate(runs)
    return mean_best_so_far(runs, maximize=False), values[np.isfinite(values)]
