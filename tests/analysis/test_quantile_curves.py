"""Median and other quantile tuning curves (syw.analysis.bands, ``syw curve --statistic``): the curve against
its definition, its simultaneous band's coverage by simulation, and what syw writes with it."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from syw.analysis.bands import confidence_bands
from syw.analysis.expected_max import expected_max
from syw.analysis.statistic import MEAN, MEDIAN, Statistic
from syw.core.entry import run_main
from syw.curve.command import main
from tests.support.synthetic_scores import BIMODAL, STEADY


def by_definition(scores, n: int, q: float, maximize: bool = True) -> float:
    """The smallest observed v with P(best of n <= v) = F(v)^n >= q (worst of n: 1 - (1 - F(v))^n >= q
    for the largest v... read from below: the smallest v with 1 - (1 - F(v))^n >= q)."""
    ordered = sorted(scores)
    size = len(ordered)
    for i, v in enumerate(ordered, start=1):
        if i < size and ordered[i] == v:
            continue  # F jumps at the last copy of a tied value
        cdf = i / size
        reached = cdf ** n if maximize else 1 - (1 - cdf) ** n
        if reached >= q - 1e-12:
            return v
    return ordered[-1]


@pytest.mark.parametrize("q", [0.5, 0.9, 0.25])
@pytest.mark.parametrize("maximize", [True, False])
def test_the_curve_is_the_quantile_of_the_best_of_n(q, maximize):
    scores = np.random.default_rng(5).integers(0, 30, 40) / 30  # ties included
    ns = np.arange(1, 61)
    curve = Statistic(q).curve(scores, ns, maximize=maximize)
    assert curve.tolist() == [by_definition(scores, n, q, maximize) for n in ns]
    assert np.all(np.diff(curve) >= 0) if maximize else np.all(np.diff(curve) <= 0)


def test_the_median_of_the_best_of_n_from_uniform_order_statistics():
    """Scores 1..100: the median best of n is the ceil(100 * 0.5^(1/n))-th score."""
    scores = np.arange(1, 101, dtype=float)
    ns = np.array([1, 2, 5, 20, 100])
    expected = [math.ceil(100 * 0.5 ** (1 / n) - 1e-9) for n in ns]
    assert MEDIAN.curve(scores, ns).tolist() == expected


def test_statistic_names():
    """Each statistic's spelling, axis title and table column, from one value."""
    parsed = [Statistic.parse(t) for t in ("mean", "median", "q=0.9", "q=.25")]
    assert parsed == [MEAN, MEDIAN, Statistic(0.9), Statistic(0.25)] and [s.q for s in parsed] == [None, 0.5, 0.9, 0.25]
    assert [s.name for s in parsed] == ["mean", "median", "q=0.9", "q=0.25"]
    assert [s.title for s in parsed] == ["Expected best of n", "Median best of n", "0.9-quantile of the best of n",
                                         "0.25-quantile of the best of n"]
    assert [s.column for s in parsed] == ["expected_max", "median", "quantile_0.9", "quantile_0.25"]
    assert [s.is_mean for s in parsed] == [True, False, False, False]
    for bad in ("q=1.5", "q=0", "p=0.5", "max"):
        with pytest.raises(ValueError, match="is not a statistic"):
            Statistic.parse(bad)
    for bad in (0.0, 1.0, -0.5, "0.5"):
        with pytest.raises(ValueError, match="needs 0 < q < 1"):
            Statistic(bad)


def test_the_mean_statistic_is_eq8():
    scores = np.random.default_rng(6).normal(size=30)
    assert MEAN.curve(scores, [1, 5, 30]) == pytest.approx(expected_max(scores, [1, 5, 30]), rel=1e-15)


def band_coverage(dist, n_trials: int, q: float, replications: int = 200, confidence: float = 0.95) -> float:
    ns = np.arange(1, n_trials + 1)
    truth = dist.quantile_curve(ns, q)
    rng = np.random.default_rng(2037 + n_trials)
    hits = 0
    for _ in range(replications):
        low, _, high = confidence_bands(dist.sample(rng, n_trials), ns, confidence=confidence, statistic=Statistic(q),
                                        bounds=(-np.inf, np.inf))
        hits += bool(np.all((low <= truth + 1e-12) & (truth - 1e-12 <= high)))
    return hits / replications


@pytest.mark.slow
@pytest.mark.parametrize("n_trials", [20, 50, 100])
@pytest.mark.parametrize("dist", [STEADY, BIMODAL], ids=["normal", "bimodal"])
@pytest.mark.parametrize("q", [0.5, 0.9], ids=["median", "q0.9"])
def test_the_quantile_band_covers_the_true_curve_at_its_level(dist, n_trials, q):
    """200 seeded replications per case: the 95% band holds the true curve at every n = 1..N at once in
    at least 95% of them (opda's KS band for the CDF holds with exactly 95% for continuous scores, and
    the curve's band holds whenever the CDF's does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert band_coverage(dist, n_trials, q) >= 0.95


def test_syw_draws_tables_and_reports_the_median(tmp_path, capsys):
    rng = np.random.default_rng(8)
    rows = pd.DataFrame({"model": ["a"] * 30 + ["b"] * 30, "val_acc": np.r_[rng.uniform(0.2, 0.6, 30),
                                                                          rng.uniform(0.3, 0.5, 30)]})
    rows.to_csv(tmp_path / "r.csv", index=False)
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "r.csv"), "--statistic", "median", "--bands", "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    a = table[table.group == "a"]
    scores = rows[rows.model == "a"].val_acc.to_numpy()
    assert a["median"].tolist() == pytest.approx([by_definition(scores, n, 0.5) for n in range(1, 31)])
    assert (a.band_low <= a["median"]).all() and (a["median"] <= a.band_high).all()
    report = (out / "report.md").read_text()
    assert "## Median best of n by budget (Eq. 8 in brackets)" in report and "Lourie et al. 2024" in report
    assert "Median curves, a vs b (n = 1 to 30)" in report
    assert run_main(main, ["curve", str(tmp_path / "r.csv"), "--statistic", "median", "--forecast", "50",
                 "--out", str(tmp_path / "f")]) == 2
    assert "--forecast forecasts the mean (Eq. 8)" in capsys.readouterr().err
