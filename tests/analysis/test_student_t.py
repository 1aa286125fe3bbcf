"""syw.analysis.student_t against the closed forms (1 and 2 degrees of freedom, the normal's erfc) and scipy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from syw.analysis.student_t import normal_isf, normal_sf, t_isf, t_sf

T = np.concatenate([np.linspace(-40, 40, 161), 10.0 ** np.linspace(-9, 9, 73), -(10.0 ** np.linspace(-9, 4, 27))])
DFS = [0.3, 1.0, 1.7, 2.0, 4.5, 9.0, 9.3, 30.0, 99.0, 999.0, 9999.0]


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.abs(b)))


def test_the_tails_of_one_and_two_degrees_of_freedom_are_their_closed_forms():
    up, root = T > 0, np.sqrt(2.0 + T * T)  # each closed form written without cancellation in the upper tail
    assert relative(t_sf(T, 1.0), np.where(up, np.arctan2(1.0, np.abs(T)) / np.pi, 0.5 - np.arctan(T) / np.pi)) < 1e-14
    assert relative(t_sf(T, 2.0), np.where(up, 1.0 / (root * (root + np.abs(T))), 0.5 - T / (2.0 * root))) < 1e-13
    q = 10.0 ** -np.linspace(0.31, 12, 40)
    assert relative(t_isf(q, 1.0), 1.0 / np.tan(np.pi * q)) < 1e-12
    assert relative(t_isf(q, 2.0), (1 - 2 * q) / np.sqrt(2 * q * (1 - q))) < 1e-12


@pytest.mark.parametrize("df", DFS)
def test_the_tail_and_its_quantile_agree_with_scipy(df):
    ours, theirs = t_sf(T, df), special.stdtr(df, -T)
    keep = (theirs > 1e-300) & ~((df == 1.0) & (np.abs(T) < 1e-4))  # scipy's Cauchy tail near 0 is off by 1e-9
    assert relative(ours[keep], theirs[keep]) < 6e-17 * max(df, 1e4)  # ours within 3e-17 df of mpmath, scipy within 1e-17 df
    q = np.concatenate([10.0 ** -np.linspace(0.31, 30, 60), [0.025, 0.5, 0.6, 0.975, 1 - 1e-9]])
    quantile = t_isf(q, df)
    assert relative(quantile[q != 0.5], -special.stdtrit(df, q[q != 0.5])) < 1e-12
    assert quantile[q == 0.5] == 0.0
    assert relative(t_sf(quantile[q < 0.5], df), q[q < 0.5]) < 1e-12  # and back


def test_arrays_broadcast_and_the_limits_hold():
    df = np.array([[2.0], [9.0]])
    assert t_sf(np.array([0.0, 1.0, -1.0]), df).shape == (2, 3)
    assert t_isf(np.array([0.025, 0.975]), df).shape == (2, 2)
    assert t_sf(np.array([np.inf, -np.inf, 0.0, 1e300, 1e-300]), 3.0).tolist() == [0.0, 1.0, 0.5, 0.0, 0.5]
    assert t_isf(0.025, 1e6) == pytest.approx(-special.stdtrit(1e6, 0.025), rel=1e-10)
    assert t_isf(1e-300, 9.0) > 1e33  # a tail that far out is t's power law, not the normal's


def test_one_batch_of_very_different_degrees_of_freedom():
    """A batch mixing 10 to 1e6 degrees of freedom (a comparison of a million trials: Welch's df near 1e6 at n = 1,
    about 10 at the limit budget) gives what each gives alone, and scipy's: an entry that converged is not carried
    on through the thousands of terms another needs (which broke down to 0/0 and raised)."""
    rng = np.random.default_rng(0)
    t, df = np.abs(rng.normal(size=180)) * 5 + 0.1, np.geomspace(10, 1e6, 180)
    batch = t_sf(t, df)
    assert batch.tolist() == [t_sf(t[i:i + 1], df[i:i + 1])[0] for i in range(t.size)]
    assert relative(batch, special.stdtr(df, -t)) < 1e-10
    assert relative(t_isf(np.full(df.size, 0.025), df), -special.stdtrit(df, 0.025)) < 1e-10


def test_the_normal_tail_and_quantile():
    z = np.linspace(-37, 37, 149)
    assert relative(normal_sf(z), np.array([0.5 * math.erfc(x / math.sqrt(2)) for x in z])) == 0.0
    assert relative(normal_sf(z), special.ndtr(-z)) < 3e-13  # each within 1.2e-13 of mpmath's at 30 digits
    q = 10.0 ** -np.linspace(0, 300, 301)[1:]
    assert relative(normal_isf(q), -special.ndtri(q)) < 1e-14


@pytest.mark.parametrize(("call", "message"), [
    (lambda: t_sf(1.0, 0.0), "degrees of freedom must be above 0"),
    (lambda: t_sf(np.nan, 3.0), "t a number"),
    (lambda: t_isf(0.0, 3.0), r"a tail probability must lie in \(0, 1\)"),
    (lambda: t_isf(0.5, -1.0), "degrees of freedom must be above 0"),
    (lambda: normal_isf(1.0), r"a tail probability must lie in \(0, 1\)"),
])
def test_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("df", [1.7, 30.0, 9999.0])
def test_the_tail_agrees_with_mpmath_at_40_digits(df):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    ts = [0.01, 1.0, 1.75, 2.0, 5.0, 30.0]
    exact = [float(mpmath.betainc(df / 2, 0.5, 0, df / (df + mpmath.mpf(t) ** 2), regularized=True) / 2) for t in ts]
    assert relative(t_sf(np.array(ts), df), np.array(exact)) < 3e-17 * max(df, 1e4)
