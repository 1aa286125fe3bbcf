"""The 95% interval of a budget in words (issue 75, item 7): where N trials cannot bound it, the sentence says
why, the limit budget past which they locate nothing, so an estimate past that limit (n = 17 against an
interval "7 to beyond 9") no longer reads as a contradiction. The paper's Figure 1 example: the authors' 50
CNN trials of SST-5 reach 0.395 at n = 17."""
from __future__ import annotations

import numpy as np
import pytest

from syw.analysis.inference import BudgetInterval, budget_interval, limit_budget
from syw.figures.plot import interval_words

WHY = "the limit budget: beyond it nothing can be located with 50 trials"


def test_an_unbounded_interval_names_the_limit_budget_in_the_same_sentence():
    assert BudgetInterval(0.395, 17, 7, None, 9).words(50) == f"7 to beyond 9, {WHY}"
    assert BudgetInterval(0.8, None, 19, None, 18).words(100) == (
        "beyond 18, the limit budget: beyond it nothing can be located with 100 trials")  # not "19 to beyond 18"
    assert BudgetInterval(0.395, 5, 4, 8, 9).words(50) == "4-8"


def test_the_figures_and_the_verdicts_say_it_alike():
    rng = np.random.default_rng(3)
    scores = np.sort(rng.normal(0.35, 0.03, 50))
    target = float(np.mean(scores[-3:]))  # reached late: past the limit budget
    found = budget_interval(scores, target)
    assert found.high is None and found.limit == limit_budget(50) == 9
    assert interval_words(scores, target) == f"{found.low} to beyond 9, {WHY}"
    assert found.estimate is None or found.estimate > 9


@pytest.mark.parametrize("n", [12, 50])
def test_the_limit_is_the_one_of_docs_syw_md(n):
    assert limit_budget(n) == int(np.floor(n * np.log(2) / np.log(40)))
