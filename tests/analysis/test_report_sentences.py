"""Every sentence template of the ``syw curve`` report (``syw.curve.report.SENTENCES``) and of the comparison
sentence (``syw.analysis.compare.PHRASES``) is rendered once by the fixtures below and its text checked (issue 65,
item 6): a template added without a case here fails the coverage test."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from syw.analysis import compare
from syw.analysis.compare import Difference, sentence
from syw.analysis.curves import Options
from syw.curve import api, report

TWO = pd.DataFrame({"model": ["a"] * 6 + ["b"] * 6, "seconds": [5.0] * 12,
                    "val_acc": [0.5, 0.6, 0.55, 0.65, 0.52, 0.58, 0.7, 0.8, 0.75, 0.85, 0.72, 0.78]})
TIES = {"a": [0.5, 0.5, 0.6, 0.7, 0.6, 0.8], "b": [0.55, 0.65, 0.65, 0.75, 0.6, 0.7]}
ADAPTIVE = pd.DataFrame({"strategy": ["TPE"] * 6, "run": [1, 1, 1, 2, 2, 2], "number": [0, 1, 2, 0, 1, 2],
                         "val_acc": [0.5, 0.6, 0.7, 0.55, 0.65, 0.6]})
NS = np.arange(1, 11)
ESTIMATE = np.array([-3, -2, -1, -0.5, 0.5, 1, 2, 3, 4, 5.0])


SHIFTED = [0.50, 0.56, 0.53, 0.61, 0.58, 0.64, 0.52, 0.60]


def stated(result: api.Curves, at: tuple[int, ...]) -> api.Curves:
    """``result`` with its comparisons at budgets stated in advance (``syw curve --at``)."""
    return api.Curves(result.curves, result.prepared, replace(result.options, at=at))


def reports() -> list[str]:
    """Reports and comparison sentences that between them take every path of the templates."""
    unresolved = dict(low=np.minimum(ESTIMATE - 1.5, -1), high=ESTIMATE + 1.0)
    return [
        api.curves(TWO).report([(0.6, "x"), (0.99, "")], files=["a.csv"]),  # one leads throughout, placeholders
        api.curves({"a": [0.5, 0.7], "b": [0.7, 0.5]}).report(),  # identical curves
        api.curves([0.5, 0.6, 0.7]).report(),  # one group
        api.curves(TIES, statistic="median", confidence=0.9, bounds=(0.0, 1.0)).report(),  # quantile, bands, ties
        api.curves(TWO.assign(seconds=[1.0, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7]),
                   options=Options(workers=1)).report([(0.8, ""), (0.99, "")]),  # cost-aware
        api.curves(TWO.assign(test_acc=TWO.val_acc - 0.01), duration="seconds").report(),  # the winner's curse
        api.curves(ADAPTIVE).report(),  # an adaptive search in two runs
        api.curves({"a": TWO.val_acc[:6].tolist()}, options=Options(forecast_to=10, forecast_resamples=0)).report(),
        stated(api.curves({"a": SHIFTED, "b": [x + 0.03 for x in SHIFTED]}), (1, 2)).report(),  # undecided: syw plan
        sentence(Difference(("A", "B"), NS, ESTIMATE, ESTIMATE - 1.5, ESTIMATE + 1.0, 0.9)),  # located
        sentence(Difference(("A", "B"), NS, ESTIMATE, confidence=0.9, method="jackknife", limit=5,
                            **unresolved), (10, 12)),  # past the limit of the trials
    ]


@pytest.fixture(scope="module")
def rendered():
    """Each template's first rendering, and every text produced."""
    seen: dict[str, str] = {}
    patch = pytest.MonkeyPatch()
    for module in (report, compare):
        original = module.say

        def say(key, /, _original=original, **fields):
            text = _original(key, **fields)
            seen.setdefault(key, text)
            return text

        patch.setattr(module, "say", say)
    try:
        texts = reports()
    finally:
        patch.undo()
    return seen, "\n".join(texts)


EXPECTED = {
    "header": ("Trials: 12 in 2 group(s). Score: `val_acc` (picked), higher is better. Groups: `model` (picked). "
               "Training time: `seconds` (picked). Test score: none."),
    "not_within_n": "not within N",
    "leads_throughout": "nowhere: b leads at every shared budget (n = 1 to 6)",
    "identical": "nowhere: the curves are identical at every shared budget (n = 1 to 2)",
    "one_group": "one group only",
    "leads": "b leads a for n = 1 at 95%",
    "tied": "undecided with 6 and 6 trials for n in [2, 6]",
    "opening": ("Mean curves, a vs b (n = 1 to 6, simultaneous claims): b leads a for n = 1 at 95%; undecided with 6 "
                "and 6 trials for n in [2, 6]"),
    "limit": (". Beyond n = 1 these trials allow no claim without assumptions (the limit of docs/syw.md), so no leader "
              "is named there"),
    "crossing": (". a first overtakes b at n = 4 (point estimates); at 95% that first crossover lies somewhere from "
                 "n = 1 to beyond n = 6, the last budget compared: it cannot be located with 6 trials per group"),
    "past_last": ("lies somewhere from n = 1 to beyond n = 6, the last budget compared: it cannot be located with 6 "
                  "trials per group"),
    "located": "lies in [4, 7]",
    "past_limit": ("lies somewhere from n = 4 to beyond n = 5, the largest budget these trials can decide: it cannot "
                   "be located with 10 trials in the smaller group"),
    "quantile": ("**Median best of n** (Lourie et al. 2024): the score the best of n draws (with replacement, from the "
                 "N observed) reaches with probability 0.5, the empirical quantile F^-1(p) = min{v : F(v) >= p} at "
                 "p = 0.5^(1/n) (1 - (1 - 0.5)^(1/n) for the worst of n when lower is better); a step curve, always "
                 "one of the observed scores. The shading is the 25% to 75% quantiles of the best of n; the bands and "
                 "budgets are this curve's."),
    "band": ("**90% simultaneous confidence band** (opda, method `ks`) of the median best of n: a band for the CDF of "
             "the score distribution holding with that probability, pushed through the map from CDF to median best "
             "of n; it holds for every n at once (past N too), assuming only that the scores lie within [0, 1] and "
             "the trials are independent draws; infinite where the data cannot bound it."),
    "ties": ("  Some scores are tied (a finite validation set): the `ks` band's coverage is exact only for continuous "
             "scores; `--band-method dkw` holds regardless."),
    "difference": ("**Difference of two curves** (`analysis/compare.py`): each group's simultaneous band at level "
                   "sqrt(0.95) = 0.9747 (opda, `ks`), so that both hold with probability at least 95% (the groups' "
                   "trials are independent); where both hold, curve(A) - curve(B) lies between low(A) - high(B) and "
                   "high(A) - low(B) at every n at once. A group leads where that band excludes zero; the first "
                   "crossover lies between the first n whose band allows the group behind at n = 1 ahead and the "
                   "first n whose band puts it ahead. With tens of trials per group the band is wide past small n: "
                   "the mean of the best of n depends on mass above every score seen, which the data cannot rule out "
                   "(the median's band is tighter; more trials narrow both)."),
    "reached_in_time": "0.8 at 12 s",
    "not_in_time": "0.8 not within its trials' time",
    "adaptive": "- trials: TPE, 2 run(s) of 3+ trials; drawn and tabled as the best score so far in trial order",
    "files": "Files: `a.csv`",
}
# The simulation's error and the fitted forecast's parameters are measured, not fixed: their form is checked.
FORMS = {"cost_error": r" The simulation's standard error is at most 0\.\d+\.",
         "settle": (r"a vs b, undecided at n = 1 with these trials: about \d+ trials per group would decide it with 80% "
                    r"power at the same level \(`syw plan`, these trials as the pilot: docs/syw\.md\)"),
         "settle_none": (r"a vs b, undecided at n = 2 with these trials: no size up to 5,000 trials per group is planned "
                         r"to decide it from these trials \(they speak for n up to 1; `syw plan`\)"),
         "forecast": (r"- \*\*Forecast\*\*: expected best of n draws from opda's quadratic distribution, fitted by "
                      r"maximum spacing \(.+\); interval: no interval\. Checked on the authors' published trials in "
                      r"docs/forecast_backtest\.md\.")}


def test_every_template_is_rendered_by_a_case(rendered):
    seen, _ = rendered
    assert set(report.SENTENCES) - set(seen) == set(), "a report sentence has no case here: add one"
    assert set(compare.PHRASES) - set(seen) == set(), "a comparison phrase has no case here: add one"


def test_each_template_says_exactly_this(rendered):
    seen, text = rendered
    fixed = {k: v for k, v in report.SENTENCES.items() if "{" not in v}  # no field: the text is the template
    assert set(EXPECTED) | set(FORMS) | set(fixed) == set(report.SENTENCES) | set(compare.PHRASES)
    for key, expected in EXPECTED.items():
        assert seen[key] == expected, key
    for key, form in FORMS.items():
        assert re.fullmatch(form, seen[key]), (key, seen[key])
    for key, template in fixed.items():
        assert seen[key] == template and template in text, key


def test_no_parameter_name_and_no_half_interval_reaches_the_text(rendered):
    _, text = rendered
    assert "`decimals`" not in text and "With 'decimals'" not in text
    assert not re.search(r"\[\d+, beyond", text)  # "lies in [1, beyond 35, ...]"
    assert "one group leads" not in text and "one family leads" not in text
