"""The Markdown report of ``syw curve``: the numbers, and each number's rule in words."""
from __future__ import annotations

import numpy as np
import pandas as pd

from syw.analysis import inference
from syw.analysis.adaptive import RULE as ADAPTIVE_RULE
from syw.analysis.compare import Difference, leaders_by_n, sentence
from syw.analysis.cost import RULE as COST_RULE
from syw.analysis.cost import drawn_from, round_time_ticks
from syw.analysis.curves import Curve, Options
from syw.analysis.forecast import VERDICT
from syw.analysis.power import plan
from syw.analysis.selected import RULE as SELECTED_RULE
from syw.analysis.statistic import Statistic
from syw.core.units import human_duration

# Every sentence the report says, by name (tests/analysis/test_report_sentences.py renders each once and
# fails on a name it never saw).
SENTENCES = {
    "eq8": ("**Expected best of n** (Eq. 8 of Dodge et al. 2019): the mean of the best of n scores drawn with "
            "replacement from the N observed ones, sum over distinct scores v of v (P(V <= v)^n - P(V < v)^n) with "
            "the empirical CDF; not rounded (the table keeps 10 significant digits). Defined for n <= N here."),
    "sd": ("**±1 SD** (section 3.3): the standard deviation of that best of n under the same distribution, i.e. "
           "the spread of a single search of n trials, not an error bar of the mean; the figure clips the shading "
           "to the observed range of the group's scores, as the paper does."),
    "unbiased": ("**Unbiased** (Tang et al. 2020): the mean of the best of n drawn *without* replacement from the "
                 "N scores, sum over order statistics v_(i) C(i-1, n-1) / C(N, n); equals the best observed score "
                 "at n = N."),
    "quantile": ("**{name}** (Lourie et al. 2024): the score the best of n draws (with replacement, from the "
                 "N observed) reaches with probability {p}, the empirical quantile F^-1(p) = min{{v : F(v) >= p}} "
                 "at p = {q}^(1/n) (1 - (1 - {q})^(1/n) for the worst of n when lower is better); a step curve, "
                 "always one of the observed scores. The shading is the 25% to 75% quantiles of the best of n; the "
                 "bands and budgets are this curve's."),
    "band": ("**{level} simultaneous confidence band** (opda, method `{method}`) of the {what}: a band for the CDF "
             "of the score distribution holding with that probability, pushed through the map from CDF to {what}; "
             "it holds for every n at once (past N too), assuming only that the scores lie within [{low}, {high}] "
             "and the trials are independent draws{tail}"),
    "ties": ("  Some scores are tied (a finite validation set): the `{method}` band's coverage is exact only for "
             "continuous scores; `--band-method dkw` holds regardless."),
    "one_group": "one group only",
    "settle": ("{a} vs {b}, undecided at n = {n} with these trials: about {k} trials per group would decide it with "
               "{power} power at the same level (`syw plan`, these trials as the pilot: docs/syw.md)"),
    "settle_none": ("{a} vs {b}, undecided at n = {n} with these trials: no size up to 5,000 trials per group is "
                    "planned to decide it from these trials (they speak for n up to {limit}; `syw plan`)"),
    "identical": "nowhere: the curves are identical at every shared budget (n = 1 to {last})",
    "leads_throughout": "nowhere: {name} leads at every shared budget (n = 1 to {last})",
    "difference": ("**Difference of two curves** (`analysis/compare.py`): each group's simultaneous band at level "
                   "sqrt({confidence}) = {each} (opda, `{method}`), so that both hold with probability at least "
                   "{level} (the groups' trials are independent); where both hold, curve(A) - curve(B) lies between "
                   "low(A) - high(B) and high(A) - low(B) at every n at once. A group leads where that band excludes "
                   "zero; the first crossover lies between the first n whose band allows the group behind at n = 1 "
                   "ahead and the first n whose band puts it ahead. With tens of trials per group the band is wide "
                   "past small n: the mean of the best of n depends on mass above every score seen, which the data "
                   "cannot rule out (the median's band is tighter; more trials narrow both)."),
    "reached_in_time": "{target} at {time}",
    "not_in_time": "{target} not within its trials' time",
    "not_within_n": "not within N",
    "selected_intro": ("Each cell: the expected test score of the selected trial, ± its SD, and in brackets Eq. 8 of "
                       "the validation scores minus it."),
    "adaptive": ("- {name}: {strategy}, {runs} run(s) of {size}+ trials; drawn and tabled as the best score so far "
                 "in trial order"),
    "adaptive_runs": " (the runs' mean, shaded ±1 SD across runs, up to the shortest run)",
    "cost_error": " The simulation's standard error is at most {error}.",
    "budget": ("**Budget to reach a target**: the smallest n whose expected best (the drawn curve) reaches the "
               "target, in the score's direction. The column \"trials (3 decimals)\" rounds "
               "both sides to 3 decimals first, as when a curve is read at reported precision; \"time\" is n times "
               "the group's mean training duration."),
    "forecast": ("- **Forecast**: {rule} Checked on the authors' published trials in docs/forecast_backtest.md."),
    "placeholders": ("- Every duration of a group is the same number: if these are placeholders, its time axis "
                     "means nothing."),
    "header": ("Trials: {trials} in {groups} group(s). Score: {metric}. Groups: {group}. Training time: {duration}. "
               "Test score: {test}."),
    "files": "Files: {files}",
}


def say(key: str, /, **fields) -> str:
    """The sentence ``key`` of :data:`SENTENCES` with its fields filled."""
    return SENTENCES[key].format(**fields) if fields else SENTENCES[key]


def quantile_rule(statistic: Statistic) -> str:
    """How the quantile curve of the best of n is computed."""
    return say("quantile", name=statistic.title, p=f"{1 - statistic.q:g}", q=f"{statistic.q:g}")


def band_rule(options: Options, bounds: tuple[float, float] | None) -> str:
    """How the simultaneous band of the drawn curve is computed."""
    mean = options.statistic.is_mean
    what = "expected best of n" if mean else options.statistic.title.lower()
    return say("band", level=f"{options.confidence:.0%}", method=options.band_method, what=what, low=f"{bounds[0]:g}",
               high=f"{bounds[1]:g}", tail="." if mean else "; infinite where the data cannot bound it.")


def no_change(curves: list[Curve], maximize: bool) -> str:
    """The overtakes line when no curve crosses another: which group leads throughout, or that the curves are the same."""
    if len(curves) < 2:
        return say("one_group")
    ns = curves[0].ns[: min(c.drawn.size for c in curves)]
    for c in curves[1:]:
        ns = np.intersect1d(ns, c.ns[: c.drawn.size])
    values = {c.name: np.array([c.at(int(n)) for n in ns]) for c in curves}
    if all(np.array_equal(v, values[curves[0].name]) for v in values.values()):
        return say("identical", last=int(ns[-1]))
    (name, _, last), *_ = leaders_by_n(values, maximize=maximize)
    return say("leads_throughout", name=name, last=int(ns[last - 1]))


def difference_rule(confidence: float, method: str) -> str:
    """How the crossed-bands difference of two curves is computed."""
    return say("difference", confidence=f"{confidence:g}", each=f"{confidence ** 0.5:.4f}", method=method,
               level=f"{confidence:.0%}")


def cost_rows(curves: list[Curve], budgets: pd.DataFrame, maximize: bool) -> list[str]:
    """Per group: the expected best within round wall-clock times, and when it reaches each target."""
    seconds = curves[0].cost.seconds
    shown = [s for s in round_time_ticks(seconds[0], seconds[-1], most=5).values()]
    header = ["group"] + [f"{human_duration(t)}" for t in shown] + ["targets"]
    out = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for c in curves:
        drawn = drawn_from(c.cost) & np.isfinite(c.cost.mean)
        cells = []
        for t in shown:
            at = np.searchsorted(c.cost.seconds, t, side="right") - 1
            cells.append(f"{c.cost.mean[at]:.4f}" if at >= 0 and drawn[at] else "-")
        reached = []
        for target in sorted(set(budgets.target)) if not budgets.empty else []:
            hits = np.flatnonzero(drawn & ((c.cost.mean >= target) if maximize else (c.cost.mean <= target)))
            reached.append(say("reached_in_time", target=f"{target:g}", time=human_duration(c.cost.seconds[hits[0]]))
                           if hits.size else say("not_in_time", target=f"{target:g}"))
        out.append(f"| {c.name} | " + " | ".join(cells) + f" | {'; '.join(reached) or '-'} |")
    return out


def settle_lines(curves: list[Curve], differences: list[Difference], options: Options) -> list[str]:
    """For each budget stated with ``--at`` that a jackknife comparison leaves undecided: about how many trials per
    group would decide it with 80% power (``syw.analysis.power.plan``, these trials as the pilot)."""
    by_name = {c.name: c for c in curves}
    out = []
    for d in differences:
        if d.method != "jackknife" or d.claim != "pointwise":
            continue
        undecided = [int(n) for n, who in zip(d.ns, d.leader()) if who is None]
        if not undecided:
            continue
        a, b = (by_name[name] for name in d.names)
        for row in plan(a.scores, b.scores, undecided, confidence=d.confidence, maximize=options.maximize, names=d.names):
            if row.trials_per_group is not None:
                out.append(say("settle", a=d.names[0], b=d.names[1], n=row.n, k=row.trials_per_group,
                               power=f"{row.power:.0%}"))
            else:
                out.append(say("settle_none", a=d.names[0], b=d.names[1], n=row.n, limit=row.limit))
    return out


def _fmt(value) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.4f}"


def _scores(curves: list[Curve], options: Options, shown: list[int]) -> list[str]:
    """Eq. 8 (or the quantile curve) at round budgets and at each N, its twin in brackets; adaptive
    searches tabled as the best so far."""
    title = ("Expected best score by budget (Eq. 8; unbiased in brackets)" if options.statistic.is_mean
             else f"{options.statistic.title} by budget (Eq. 8 in brackets)")
    header = ["group", "N", "mean time"] + [f"n={n}" for n in shown] + ["best observed"]
    out = [f"## {title}", "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for c in curves:
        beside = c.unbiased if options.statistic.is_mean else c.mean
        cells = [("-" if n > c.ns[c.drawn.size - 1] else f"{c.at(n):.4f} (best so far)" if c.strategy
                  else f"{c.at(n):.4f} [{c.at(n, beside):.4f}]" if n <= c.scores.size else "-") for n in shown]
        best = c.scores.max() if options.maximize else c.scores.min()
        out.append(f"| {c.name} | {c.scores.size} | {human_duration(c.mean_duration)} | " + " | ".join(cells)
                   + f" | {best:.4f} |")
    return out


def _budget_rows(budgets: pd.DataFrame) -> list[str]:
    """Trials (exact and at 3 decimals), time and forecast trials to reach each target."""
    def trials(v) -> str:
        return say("not_within_n") if v is None or pd.isna(v) else str(int(v))

    out = ["", "## Budget to reach each target", "",
           "| group | target | where it comes from | trials | trials (3 decimals) | time | forecast trials |",
           "|---|---|---|---|---|---|---|"]
    for r in budgets.itertuples():
        forecast = "" if r.forecast_trials is None or pd.isna(r.forecast_trials) else str(int(r.forecast_trials))
        out.append(f"| {r.group} | {r.target:g} | {r.source or '-'} | {trials(r.trials)} | "
                   f"{trials(r.trials_rounded_3dp)} | {human_duration(r.seconds)} | {forecast or '-'} |")
    return out


def _selected_rows(tested: list[Curve], shown: list[int]) -> list[str]:
    """The winner's curse: the selected trial's expected test score and Eq. 8 of validation minus it."""
    shown = [n for n in shown if n <= max(c.scores.size for c in tested)]
    out = ["", "## Test score of the trial validation picks (the winner's curse)", "", say("selected_intro"), "",
           "| group | " + " | ".join(f"n={n}" for n in shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for c in tested:
        cells = [f"{c.at(n, c.selected[0]):.4f} ± {c.at(n, c.selected[1]):.4f} [{c.at(n, c.mean) - c.at(n, c.selected[0]):+.4f}]"
                 if n <= c.scores.size else "-" for n in shown]
        out.append(f"| {c.name} | " + " | ".join(cells) + " |")
    return out


def _adaptive_lines(adaptive: list[Curve]) -> list[str]:
    """Why Eq. 8 is not applied to adaptive searches, and what is drawn instead."""
    out = ["", "## Adaptive searches: Eq. 8 does not apply", ""]
    out += [say("adaptive", name=c.name, strategy=c.strategy, runs=c.runs, size=c.drawn.size)
            + (say("adaptive_runs") if c.runs > 1 else "") for c in adaptive]
    return out + ["", ADAPTIVE_RULE]


def _forecast_rows(forecasts: list[Curve]) -> list[str]:
    """Each group's fitted forecast at N and at the horizon, with its interval."""
    horizon = forecasts[0].forecast.ns.size
    out = ["", f"## Forecast to n = {horizon} ({forecasts[0].forecast.model})", "", f"**{VERDICT}**", "",
           "| group | N | Eq. 8 at N | forecast at N | forecast at n = " + str(horizon)
           + f" | {forecasts[0].forecast.level:.0%} interval | fitted |", "|---|---|---|---|---|---|---|"]
    for c in forecasts:
        f, n = c.forecast, c.scores.size
        out.append(f"| {c.name} | {n} | {c.mean[-1]:.4f} | {f.mean[n - 1]:.4f} | {f.mean[-1]:.4f} | "
                   f"[{_fmt(f.low[-1])}, {_fmt(f.high[-1])}] | {f.fitted} |")
    return out


def _rules(curves: list[Curve], options: Options, bounds: tuple[float, float] | None,
           differences: list[Difference]) -> list[str]:
    """How each number in the report is computed, one line per kind of number shown."""
    out = ["", "## How each number is computed", ""] + [f"- {say(name)}" for name in ("eq8", "sd", "unbiased")]
    if not options.statistic.is_mean:
        out.append(f"- {quantile_rule(options.statistic)}")
    if options.confidence:
        out.append(f"- {band_rule(options, bounds)}")
        if options.band_method != "dkw" and any(np.unique(c.scores).size < c.scores.size for c in curves):
            out.append(say("ties", method=options.band_method))
    if any(c.selected is not None for c in curves):
        out.append(f"- {SELECTED_RULE}")
    costly = [c for c in curves if c.cost is not None]
    if costly:
        out.append(f"- {COST_RULE}" + say("cost_error", error=f"{max(c.cost.standard_error for c in costly):.2g}"))
    if differences and differences[0].method == "bands":
        out.append(f"- {difference_rule(differences[0].confidence, options.band_method)}")
    elif differences:
        out.append(f"- {inference.rule(differences[0].confidence)}")
    out.append(f"- {say('budget')}")
    forecasts = [c for c in curves if c.forecast is not None]
    if forecasts:
        out.append(say("forecast", rule=forecasts[0].forecast.rule()))
    if any(c.durations is not None and np.ptp(c.durations) == 0 for c in curves):
        out.append(say("placeholders"))
    return out


def build(curves: list[Curve], *, source: str, columns: dict[str, str], notes: list[str], options: Options,
          budgets: pd.DataFrame, changes: list[str], bounds: tuple[float, float] | None,
          files: list[str], differences: list[Difference] = ()) -> str:
    """The report text. ``columns`` says which column is which and why; ``files`` what was written."""
    out = [f"# Expected validation performance: {source}", "",
           say("header", trials=sum(c.scores.size for c in curves), groups=len(curves), metric=columns["metric"],
               group=columns["group"], duration=columns["duration"], test=columns.get("test", "none")), ""]
    out += [f"- note: {n}" for n in notes] + ([""] if notes else [])
    shown = sorted({1, 5, 10} | {c.scores.size for c in curves})
    out += _scores(curves, options, shown) + ([] if budgets.empty else _budget_rows(budgets))
    out += ["", "## Where one group overtakes another", ""]
    out += [f"- {line}" for line in changes] or [f"- {no_change(curves, options.maximize)}"]
    if tested := [c for c in curves if c.selected is not None]:
        out += _selected_rows(tested, shown)
    if costly := [c for c in curves if c.cost is not None]:
        out += ["", f"## Within a wall-clock budget (cost-aware, {costly[0].cost.workers} worker(s))", ""]
        out += cost_rows(costly, budgets, options.maximize)
    if adaptive := [c for c in curves if c.strategy is not None]:
        out += _adaptive_lines(adaptive)
    if differences:
        out += ["", f"## Is one group better? ({differences[0].what} for the difference)", ""]
        sizes = {c.name: c.scores.size for c in curves}
        out += [f"- {sentence(d, (sizes[d.names[0]], sizes[d.names[1]]))}" for d in differences]
        out += [f"- {line}" for line in inference.limit_lines(list(differences), {c.name: c.scores.size for c in curves})]
        out += [f"- {line}" for line in settle_lines(curves, differences, options)]
    if forecasts := [c for c in curves if c.forecast is not None]:
        out += _forecast_rows(forecasts)
    out += _rules(curves, options, bounds, differences)
    return "\n".join(out + ["", say("files", files=", ".join(f"`{f}`" for f in files)), ""])
