"""The facts a README marker names, each computed from a study's records (section 3's Eq. 8 for
expected maxima, section 4's budget inference) and written once, by :mod:`syw.pages.readme_format`.

A marker is ``<!-- syw: FACT key=value ... -->TEXT<!-- /syw -->``. The facts (:data:`FACTS` gives
the keys each takes; each function's docstring says more):

- ``count``, ``each``, ``which``: how many trials (of a family, or all) meet ``where``; the count
  every family has; the indices of those that meet it.
- ``best``, ``trial``: field ``of`` (default the value) of the best trial, or of trial ``trial=K``.
- ``min``, ``max``, ``mean``, ``median``, ``sum``, ``sd`` (sample standard deviation): of field ``of``
  over the trials that meet ``where``; ``share``: the sum over them as a share of the sum over all.
- ``emax`` (Eq. 8 at ``n``; ``test=FIELD``: that field of the trial the values select; ``scale=log``: Eq. 8
  of the values' logarithms, written back as exp), ``reach``
  (first n reaching ``target``; ``time=yes``: its wall time), ``overtakes`` (from which n ``family``
  stays ahead of ``over``), ``leaders`` (whose curve is best at each n), ``behind`` (largest shortfall against the best other family), ``gap``
  (largest difference from the authors' curve), ``lead`` (start or end of a stretch of wall time a
  family leads, Figs. 2 and 4), ``ratio`` (of mean durations or another field).
- ``tuner`` (an adaptive tuner's runs beside random search: their count, mean best-so-far, where it
  reaches random search's expected best at N and the trials that saves, in the mean and run by run), ``seeds`` (a family's seed
  spread under ``syw reseed``, and the gap between two families against it; case study 5).
- ``provenance`` (what the study's PROVENANCE.md states: the span, the suite commits, each command's wall
  time, start and end, the most trials at once: :mod:`syw.pages.readme_provenance`), ``squad_dev`` (a
  predictions file scored on SQuAD dev).
- ``verdict`` (docs/verdicts.md's verdict on a claim for the study), ``compared`` (who leads at 95% where, and where
  the comparison is undecided with these trials), ``majority`` (a split's most frequent label's share):
  :mod:`syw.pages.readme_claims`.

Keys every fact takes: ``study`` (a folder under results/, default the README's), ``times`` (a
number to multiply a numeric fact by, e.g. the dev set's size: an accuracy as sentences right),
``fmt`` (how to write it, see :func:`syw.pages.readme_format.render`). Most also take ``family``
(optional when the study has one), ``source`` (``ours``, default, or ``paper``: the authors'
published trials of the same figure), ``where`` (conditions on the trials, see
:func:`syw.pages.readme_data.conditions`) and ``with`` (another study whose same trials are paired
with these: fields ``with.<field>``; ``with=paper``: the authors' trials of the study's figure).
"""
from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from syw.analysis import budget_to_reach, overtakes_from, time_leaders
from syw.analysis.adaptive import reaches_random, saved_by_run, trials_saved, tuner_progress, tuner_runs
from syw.analysis.compare import leaders_by_n
from syw.analysis.selected import selected_test
from syw.core.units import stretches_text
from syw.experiments.tuner import GP
from syw.figures.seeds import best_assignments, gap_rows, seed_rows
from syw.pages.readme_args import Args, best_row, curve, values_of
from syw.pages.readme_claims import CLAIM_FACTS
from syw.pages.readme_data import FactError, Trials, entry, field, squad_scores
from syw.pages.readme_format import Value, field_kind, render
from syw.pages.readme_provenance import provenance


def _budget(args: Args, trials: Trials) -> int:
    text = args.get("n", "N")
    if text == "N":
        return len(trials.rows)
    if not text.isdigit() or not 1 <= int(text) <= len(trials.rows):
        raise FactError(f"n={text!r}: a budget from 1 to the {len(trials.rows)} trials of {trials.family}, or N")
    return int(text)


# --- the facts -------------------------------------------------------------------------------------------
def count(a: Args) -> Value:
    """Trials that meet ``where`` (all ok trials without it), of ``family`` or, without it, of every family."""
    if a.get("family") is None and len(a.study().families) > 1:
        return Value(sum(len(t.rows) for t in a.each()), "count")
    return Value(len(a.select(a.family(a.study())).rows), "count")


def each(a: Args) -> Value:
    """The number of ok trials every family has (an error when the families differ)."""
    sizes = {t.family: len(t.rows) for t in a.each()}
    if len(set(sizes.values())) != 1:
        raise FactError(f"the families have different numbers of trials: {sizes}")
    return Value(next(iter(sizes.values())), "count")


def best(a: Args) -> Value:
    """Field ``of`` (default value) of the best trial of ``family``."""
    name = a.get("of", "value")
    return Value(field(best_row(a.trials()), name), field_kind(name))


def trial(a: Args) -> Value:
    """Field ``of`` (default value) of trial ``trial=K`` of ``family``."""
    trials, k = a.trials(), int(a.number("trial"))
    row = next((r for r in trials.rows if r["trial"] == k), None)
    if row is None:
        raise FactError(f"{trials.family} has no ok trial {k}")
    name = a.get("of", "value")
    return Value(field(row, name), field_kind(name))


def _aggregate(how: Callable[[list], Any]) -> Callable[[Args], Value]:
    def fact(a: Args) -> Value:
        name = a.get("of", "value")
        kind = "count" if how is sum and field_kind(name) == "count" else field_kind(name)
        if how in (statistics.mean, statistics.median, statistics.stdev) and kind == "count":
            kind = "number"
        return Value(how(values_of(a.trials(), name)), kind)
    fact.__doc__ = f"The {how.__name__} of field ``of`` (default value) over the trials of ``family`` that meet ``where``."
    return fact


def emax(a: Args) -> Value:
    """Expected best value of ``n`` trials (Eq. 8; ``n=N``, the default: all); ``scale=log``: Eq. 8 of the
    values' logarithms, written back as exp (:func:`~syw.pages.readme_args.curve`); ``test=FIELD`` (``extra.test_accuracy``):
    the expected FIELD of the trial the values select among n (the winner's curse, :func:`~syw.analysis.selected.selected_test`)."""
    trials, test = a.trials(), a.get("test")
    n = _budget(a, trials)
    if test is None:
        return Value(float(curve(trials, scale=a.get("scale"))[n - 1]), "score")
    if a.get("scale") is not None:
        raise FactError("scale= and test= together: the winner's curse is computed on the values' own scale")
    mean, _ = selected_test(values_of(trials), values_of(trials, test), [n], maximize=trials.maximize)
    return Value(float(mean[0]), "score")


def reaching(trials: Trials, target: float) -> Value:
    """The first n whose Eq. 8 value reaches ``target`` (section 4.4), or ``more than N``."""
    n = budget_to_reach(curve(trials), target, maximize=trials.maximize)
    return Value(n, "count") if n is not None else Value(f"more than {len(trials.rows)}", "text")


def reach(a: Args) -> Value:
    """The first n whose Eq. 8 value reaches ``target`` (section 4.4), or ``more than N``; with
    ``time=yes`` the wall time of those n trials (n times the mean duration, Figs. 2 and 4)."""
    trials = a.trials()
    n = reaching(trials, a.number("target"))
    if a.get("time") is None or n.kind == "text":
        return n
    return Value(n.value * statistics.mean(values_of(trials, "seconds")), "seconds")


def which(a: Args) -> Value:
    """The indices of the trials of ``family`` that meet ``where``: ``11, 13, 14 and 15``."""
    names = [str(r["trial"]) for r in a.trials().rows]
    return Value(names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1], "text")


def overtakes(a: Args) -> Value:
    """The n from which ``family``'s Eq. 8 curve is ahead of ``over``'s up to the shorter curve's end, or ``never``."""
    mine, other = a.trials(), a.trials("over")
    n = overtakes_from(curve(mine), curve(other), maximize=mine.maximize)
    return Value(n, "count") if n is not None else Value("never", "text")


def leaders(a: Args) -> Value:
    """Whose Eq. 8 curve is best at each n = 1 to the smallest N of the study's families (``scale=log`` as for
    ``emax``): ``nas at n = 1-4; lstm at n = 5-20``."""
    every = a.each()
    curves = {t.family: curve(t, scale=a.get("scale")) for t in every}
    return Value(stretches_text(leaders_by_n(curves, maximize=every[0].maximize)), "text")


def behind(a: Args) -> Value:
    """How far ``family``'s Eq. 8 curve falls below the best other family's at worst (0 when it leads throughout)."""
    mine = a.trials()
    others = [t for t in a.each() if t.family != mine.family]
    n = min(len(t.rows) for t in [mine, *others])
    sign = 1.0 if mine.maximize else -1.0
    lead = np.max([sign * curve(t, n) for t in others], axis=0)
    return Value(float(max(0.0, np.max(lead - sign * curve(mine, n)))), "score")


def gap(a: Args) -> Value:
    """The largest |difference| between ``family``'s Eq. 8 curve and the authors' (same figure), or with
    ``with`` the same family's in that study, up to the shorter one's N."""
    ours = a.trials()
    other = {k: v for k, v in a.values.items() if k != "with"} | {"where": ""}
    other |= {"study": a.values["with"]} if "with" in a.values else {"source": "paper"}
    theirs = Args(other, a.default_study, a.results).trials()
    n = min(len(ours.rows), len(theirs.rows))
    return Value(float(np.max(np.abs(curve(ours, n) - curve(theirs, n)))), "score")


def ratio(a: Args) -> Value:
    """Mean field ``of`` (default seconds) of ``family`` over that of ``over`` (in study ``with``, default the same)."""
    name = a.get("of", "seconds")
    mine = a.trials()
    other = Args({k: v for k, v in a.values.items() if k != "with"}, a.default_study, a.results)
    if a.get("with") is not None:
        other.values["study"] = a.values["with"]
    theirs = other.trials("over")
    return Value(statistics.mean(values_of(mine, name)) / statistics.mean(values_of(theirs, name)), "number")


def lead(a: Args) -> Value:
    """Start or end (``edge``) of the ``k``-th (default 1st) stretch of wall time in which ``family``
    leads when every family spends the time alone (Figs. 2 and 4; :func:`syw.analysis.time_leaders`)."""
    family = a.trials().family
    timed = {t.family: (curve(t), statistics.mean(values_of(t, "seconds"))) for t in a.each()}
    spans = [x for x in time_leaders(timed, maximize=a.trials().maximize) if x.leader == family]
    k = int(a.get("k", "1"))
    if not 1 <= k <= len(spans):
        raise FactError(f"{family} leads {len(spans)} time(s), so k={k} names no stretch")
    edge = a.need("edge")
    if edge not in ("start", "end"):
        raise FactError(f"edge={edge!r}: start or end")
    return Value(getattr(spans[k - 1], edge), "seconds")


def tuner(a: Args) -> Value:
    """The GP-tuner runs of ``family`` beside its random search (issue 36; :mod:`syw.figures.fig5`): ``of=runs``
    (default), their count; ``length``, the trials of the shortest; ``mean``, their mean best-so-far at ``n`` (default the shortest run's end);
    ``reach``, the first n at which that mean reaches random search's Eq. 8 value at N (or ``more than K``);
    ``saves``, N minus that n (0 when runs of N trials never reach it; unknown while the runs are shorter); ``each``, the
    trials each run saves on its own, by tuner seed (``14, 9 and 11``; point estimates, one per run)."""
    random, what = a.trials(), a.get("of", "runs")
    found = tuner_progress(a.study().folder, random.family, GP)
    if found is None:
        raise FactError(f"no {GP}-tuner run of {random.family} with a finished trial in {a.study().folder / GP}")
    best = found[0]
    if what in ("runs", "length"):
        return Value(best.runs if what == "runs" else best.budgets.size, "count")
    if what == "mean":
        n = best.budgets.size if a.get("n") is None else int(a.number("n"))
        if not 1 <= n <= best.budgets.size:
            raise FactError(f"n={n}: a budget from 1 to {best.budgets.size}, the shortest {GP} run")
        return Value(float(best.mean[n - 1]), "score")
    if what not in ("reach", "saves", "each"):
        raise FactError(f"of={what!r}: runs, length, mean, reach, saves or each")
    eq8, within = curve(random), min(len(random.rows), best.budgets.size)
    if what == "each":
        saved = [str(k) if k is not None else "not yet" for k in
                 saved_by_run(tuner_runs(a.study().folder, random.family, GP), eq8, maximize=random.maximize)]
        return Value(saved[0] if len(saved) == 1 else ", ".join(saved[:-1]) + " and " + saved[-1], "text")
    if what == "reach":
        n = reaches_random(best, eq8, maximize=random.maximize)
        return Value(n, "count") if n is not None else Value(f"more than {within}", "text")
    saved = trials_saved(best, eq8, maximize=random.maximize)
    return Value(saved, "count") if saved is not None else Value(f"unknown yet (the runs end at {within})", "text")


def seeds(a: Args) -> Value:
    """Seed reruns (``syw reseed``, :mod:`syw.figures.seeds`) of ``family``'s best rerun assignment: ``of=`` sd
    (default), mean, reruns or original; with ``over=`` the gap between the two families' best assignments
    (Melis et al. 2018, section 7.2): ``of=`` gap (default), pooled_sd, ratio, robust (``yes``/``no``) or ahead
    (the one with the better rerun mean)."""
    try:
        rows = seed_rows(a.study().folder)
    except FileNotFoundError as err:
        raise FactError(str(err)) from None
    family, over = a.need("family"), a.get("over")
    if over is None:
        best = best_assignments(rows).set_index("group")
        what = a.get("of", "sd")
        if family not in best.index or what not in ("sd", "mean", "reruns", "original"):
            raise FactError(f"family={family!r} of={what!r}: a rerun family ({', '.join(best.index)}) and sd, mean, reruns or original")
        return Value(int(best.at[family, what]), "count") if what == "reruns" else Value(float(best.at[family, what]), "score")
    pairs = [g for g in gap_rows(rows).itertuples() if {g.ahead, g.behind} == {family, over}]
    what = a.get("of", "gap")
    if not pairs or what not in ("gap", "pooled_sd", "ratio", "robust", "ahead"):
        raise FactError(f"family={family!r} over={over!r} of={what!r}: two rerun families and gap, pooled_sd, ratio, robust or ahead")
    if what == "robust":
        return Value({True: "yes", False: "no", None: "-"}[pairs[0].robust], "text")
    if what == "ahead":
        return Value(pairs[0].ahead, "text")
    return Value(float(getattr(pairs[0], what)), "number" if what == "ratio" else "score")


def share(a: Args) -> Value:
    """The sum of field ``of`` (default seconds) over the trials of ``family`` that meet ``where``,
    as a share of its sum over all the family's trials."""
    name = a.get("of", "seconds")
    everyone = Args({k: v for k, v in a.values.items() if k != "where"}, a.default_study, a.results).trials()
    return Value(sum(values_of(a.trials(), name)) / sum(values_of(everyone, name)), "share")


def squad_dev(a: Args) -> Value:
    """Exact match or F1 (``of``) of a predictions file (``file``, in the study's folder, .json or .json.gz)
    on every question of SQuAD v1.1 dev, read from ``$SYW_DATA_DIR/squad/dev-v1.1.json``."""
    metric = a.need("of")
    if metric not in ("exact_match", "f1"):
        raise FactError(f"of={metric!r}: exact_match or f1")
    return Value(squad_scores(a.study().folder / a.need("file"))[metric], "score")


COMMON = {"study", "fmt", "times"}
TRIALS = COMMON | {"family", "source", "where"}
FACTS: dict[str, tuple[Callable[[Args], Value], set[str]]] = {
    "count": (count, TRIALS | {"with"}),
    "each": (each, COMMON | {"source", "where"}),
    "best": (best, TRIALS | {"of", "with"}),
    "trial": (trial, TRIALS | {"of", "trial", "with"}),
    "min": (_aggregate(min), TRIALS | {"of", "with"}),
    "max": (_aggregate(max), TRIALS | {"of", "with"}),
    "mean": (_aggregate(statistics.mean), TRIALS | {"of", "with"}),
    "median": (_aggregate(statistics.median), TRIALS | {"of", "with"}),
    "sum": (_aggregate(sum), TRIALS | {"of", "with"}),
    "sd": (_aggregate(statistics.stdev), TRIALS | {"of", "with"}),
    "share": (share, TRIALS | {"of"}),
    "emax": (emax, TRIALS | {"n", "test", "scale"}),
    "reach": (reach, TRIALS | {"target", "time"}),
    "which": (which, TRIALS | {"with"}),
    "overtakes": (overtakes, TRIALS | {"over"}),
    "leaders": (leaders, COMMON | {"source", "where", "scale"}),
    "behind": (behind, TRIALS),
    "gap": (gap, COMMON | {"family", "where", "with"}),
    "ratio": (ratio, TRIALS | {"over", "with", "of"}),
    "lead": (lead, TRIALS | {"edge", "k"}),
    "tuner": (tuner, TRIALS | {"of", "n"}),
    "seeds": (seeds, COMMON | {"family", "over", "of"}),
    "provenance": (provenance, COMMON | {"of", "family", "k", "segment"}),
    "squad_dev": (squad_dev, COMMON | {"file", "of"}),
    **CLAIM_FACTS,  # verdict, majority: syw.pages.readme_claims
}


def compute(name: str, values: dict[str, str], default_study: Path | None, results: Path) -> str:
    """The text of fact ``name`` for a marker's ``values``; :class:`FactError` for an unknown fact or key."""
    function = entry(FACTS, "fact", name, values, hint=", table")
    if values.get("source", "ours") not in ("ours", "paper"):
        raise FactError(f"source={values['source']!r}: ours or paper")
    args = Args(values, default_study, results)
    fact = function(args)
    if "times" in values:  # e.g. an accuracy times the dev set's size: sentences right
        if fact.kind not in ("score", "count", "number"):
            raise FactError(f"times= scales a number, and {name} gives {fact.value!r}")
        fact = Value(fact.value * args.number("times"), "scaled")
    return render(fact, values.get("fmt"))
