"""A seeded, reduced form of the group-sequential benchmark (issue 74), and the replay of sst5_as_run_200.

On the synthetic families, looks every 10 trials to 50: under either spending function no leader named for
two samples of one pool, nor a wrong leader for two pools, in more than 5% of resamples plus two Monte-Carlo
SEs; testing every look at the fixed level names one for a single pool more often than the rule; the rule's
trials used stay within the last look.
"""
import numpy as np
import pytest

from benchmarks import sequential_replay
from benchmarks.sequential import GRID, _match, pools, run_family
from syw.core.paths import REPO

REPS = 150
MARGIN = 2 * (0.05 * 0.95 / REPS) ** 0.5


@pytest.mark.slow
def test_the_rule_holds_its_error_where_the_naive_rule_does_not():
    fams = {f.name: f for f in pools(seed=0, pool=50_000, data=None, authors=None)}
    naive_null = rule_null = 0.0
    for k, name in enumerate(("normal", "bimodal")):
        cells = run_family(fams[name], REPS, np.random.default_rng([74, k]))
        for rule in ("obrien-fleming", "pocock"):
            cell = cells[(5, rule)]
            assert cell["null"] <= 0.05 + MARGIN and cell["wrong"] <= 0.05 + MARGIN, (name, rule)
            assert 10 <= cell["EN"] <= 50 and cell["P1"] > 0.3, (name, rule)
        rule_null += cells[(5, "obrien-fleming")]["null"]
        naive_null += cells[(10, "naive")]["null"]
    assert naive_null > rule_null


def test_the_fixed_n_of_equal_power_is_interpolated():
    curve = np.linspace(0.0, 1.4, len(GRID)).clip(max=1.0)
    assert _match(curve, curve[3]) == GRID[3]
    assert _match(curve, 0.5 * (curve[3] + curve[4])) == pytest.approx(0.5 * (GRID[3] + GRID[4]))
    assert _match(np.zeros(len(GRID)), 0.5) == np.inf


def test_the_replay_decides_lr_at_n_1_and_5_and_nothing_at_20(capsys):
    if not (REPO / "results" / "sst5_as_run_200" / "lr.jsonl").is_file():
        pytest.skip("results/sst5_as_run_200 is not in this checkout")
    assert sequential_replay.main([]) == 0
    out = capsys.readouterr().out
    # every 20 trials, O'Brien-Fleming-type, Bonferroni over n = 1, 5, 20
    assert "| every 20, obrien-fleming, bonferroni (0.0167 per n) | lr at 80 | lr at 160 | none by 200 | 200 | 2 of 3 |" in out
    assert "| every 20, naive, none (0.0500 per n) | lr at 20 | lr at 80 | none by 200 | 200 | 2 of 3 |" in out
