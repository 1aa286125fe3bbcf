"""Expected maximum of n i.i.d. validation scores (Dodge et al., 2019, section 3).

Every function takes the N observed scores of one model family and a budget
``ns`` (an int or a sequence of ints >= 1) and returns one value per budget.
``maximize=False`` handles lower-is-better metrics (loss, perplexity): the
"maximum" is then the minimum, computed as the negated maximum of the negated
scores.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Budgets = int | Sequence[int] | np.ndarray


def check_scores(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """Return ``scores`` as a 1-D float array, or raise ``ValueError`` if empty, non-numeric or not finite."""
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"scores must be numeric, got {scores!r:.80}") from err
    if arr.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("scores is empty: need at least one observed validation score")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"scores must be finite, got {int(np.sum(~np.isfinite(arr)))} NaN/inf value(s)")
    return arr


def check_budgets(ns: Budgets, n_max: int | None = None) -> np.ndarray:
    """Return ``ns`` as a 1-D int array; raise ``ValueError`` for n < 1 (or n > ``n_max``)."""
    arr = np.atleast_1d(np.asarray(ns))
    if arr.size == 0 or arr.ndim != 1:
        raise ValueError(f"budgets must be a non-empty 1-D sequence of integers, got {ns!r}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
            raise ValueError(f"budgets must be integers, got {ns!r}")
        arr = arr.astype(int)
    if np.any(arr < 1):
        raise ValueError(f"budget n must be >= 1, got {int(arr.min())}")
    if n_max is not None and np.any(arr > n_max):
        raise ValueError(
            f"budget n = {int(arr.max())} exceeds the N = {n_max} observed scores; "
            "the unbiased estimator is defined for n <= N only"
        )
    return arr.astype(int)


def _oriented(scores, maximize: bool) -> np.ndarray:
    arr = check_scores(scores)
    return arr if maximize else -arr


def max_distribution(scores, n: int, *, maximize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values v and P(V*_n = v) under the empirical distribution (Eqs. 5-7).

    With ``maximize=False`` the values are those of the minimum of n draws.
    """
    (n,) = check_budgets(n)
    values, counts = np.unique(_oriented(scores, maximize), return_counts=True)
    cdf = np.cumsum(counts) / counts.sum()  # P(V <= v), Eq. 7
    cdf_below = np.concatenate(([0.0], cdf[:-1]))  # P(V < v)
    pmf = cdf**n - cdf_below**n  # Eqs. 5-6
    return (values if maximize else -values), pmf


# Above this many (budget, distinct value) pairs Eq. 8 is evaluated by the running product below: at
# every n from 1 to 10,000 over 10,000 distinct scores the direct matrix would hold 10^8 powers.
DIRECT_LIMIT = 4_000_000
_SKIP_EVERY = 32  # the running evaluations look for the zeros they can skip every this many n
# Past DIRECT_LIMIT, budgets this sparse (the largest over their count) are evaluated one at a time: the running
# product would walk every n up to the largest (a grid to n = 10^6 is 200 budgets, not 10^6 steps).
SPARSE = 4
_ZERO = -800.0  # log of a weight or power below which it is 0 in double precision (the smallest is e^-744.4)


def _sparse(budgets: np.ndarray) -> bool:
    return int(budgets.max()) > SPARSE * budgets.size


def _leading_run(budgets: np.ndarray) -> int:
    """How many budgets open with 1, 2, 3, ... (the running evaluations' share of a sparse grid)."""
    return int(np.flatnonzero(np.append(budgets != np.arange(1, budgets.size + 1), True))[0])


def _moments(scores, ns: Budgets, maximize: bool, spread: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    budgets = check_budgets(ns)
    values, counts = np.unique(_oriented(scores, maximize), return_counts=True)
    cdf = np.cumsum(counts) / counts.sum()
    if values.size * budgets.size > DIRECT_LIMIT:
        mean, sd = (_each_moments if _sparse(budgets) else _running_moments)(values, cdf, budgets, spread)
        return (mean if maximize else -mean), sd
    power = cdf[None, :] ** budgets[:, None]  # P(V <= v)^n; P(V < v)^n is its column to the left, the same floats
    pmf = power - np.pad(power[:, :-1], ((0, 0), (1, 0)))
    mean = pmf @ values
    sd = None
    if spread:
        var = np.einsum("kv,kv->k", pmf, (values[None, :] - mean[:, None]) ** 2)
        sd = np.sqrt(np.maximum(var, 0.0))
    return (mean if maximize else -mean), sd


def _each_moments(values: np.ndarray, cdf: np.ndarray, budgets: np.ndarray,
                  spread: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`_running_moments`' sums for sparse budgets: the run of budgets 1, 2, ..., m at the start by the
    running product, then each budget n on its own over the values whose F^n is not 0 in double precision
    (n log F > -800): at large n only the top of the distribution. O(V) memory."""
    run = _leading_run(budgets)
    head = _running_moments(values, cdf, budgets[:run], spread) if run else (np.empty(0), np.empty(0))
    top = values[-1]
    gaps = np.diff(values)
    dist = top - values
    gaps2 = dist[:-1] ** 2 - dist[1:] ** 2
    below = cdf[:-1]
    log_below = np.log(below)
    d1, d2 = np.empty(budgets.size - run), np.empty(budgets.size - run)
    for k, n in enumerate(budgets[run:]):
        lo = int(np.searchsorted(log_below, _ZERO / n))  # F^n below lo is 0 in double precision
        power = below[lo:] ** n
        d1[k] = gaps[lo:] @ power
        d2[k] = gaps2[lo:] @ power if spread else 0.0
    mean = np.concatenate([head[0], top - d1])
    if not spread:
        return mean, None
    sd = np.concatenate([head[1], np.sqrt(np.maximum(d2 - d1 ** 2, 0.0))])
    return mean, sd


def _running_moments(values: np.ndarray, cdf: np.ndarray, budgets: np.ndarray,
                     spread: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Eq. 8 and the SD of the best of n by summation by parts, with F^n kept as a running product:
    the best of n lies at or below v_k with probability F(v_k)^n, so with D = v_top - best,
    E[D] = sum_k (v_(k+1) - v_k) F_k^n and E[D^2] = sum_k (d_k^2 - d_(k+1)^2) F_k^n (d = v_top - v).
    O(V) work per n up to the largest budget, nothing of size V x K; the SD only when ``spread``."""
    top = values[-1]
    gaps = np.diff(values)
    dist = top - values
    gaps2 = dist[:-1] ** 2 - dist[1:] ** 2
    power = np.ones(values.size - 1)
    below = cdf[:-1]
    wanted = np.zeros(int(budgets.max()) + 1, dtype=bool)
    wanted[budgets] = True
    drop, drop2, lo = {}, {}, 0
    for n in range(1, wanted.size):
        power[lo:] *= below[lo:]
        if n % _SKIP_EVERY == 0:  # F_k^n that underflowed to 0 stays 0: skip that prefix (F rises with k)
            lo = int(np.searchsorted(power, 0.0, side="right"))
        if wanted[n]:
            drop[n] = float(gaps[lo:] @ power[lo:])
            if spread:
                drop2[n] = float(gaps2[lo:] @ power[lo:])
    d1 = np.array([drop[int(n)] for n in budgets])
    if not spread:
        return top - d1, None
    var = np.array([drop2[int(n)] for n in budgets]) - d1**2
    return top - d1, np.sqrt(np.maximum(var, 0.0))


def expected_max(scores, ns: Budgets, *, maximize: bool = True) -> np.ndarray:
    """Eq. 8: sum over distinct v of v * (P(V <= v)^n - P(V < v)^n), empirical CDF.

    Any n >= 1 is allowed (n > N extrapolates the empirical distribution).
    """
    return _moments(scores, ns, maximize, spread=False)[0]


def expected_max_std(scores, ns: Budgets, *, maximize: bool = True) -> np.ndarray:
    """Section 3.3: plug-in standard deviation of the max of n draws under the Eq. 5 PMF.

    This is the spread of V*_n (what the paper shades), not a standard error of the mean curve.
    """
    return _moments(scores, ns, maximize)[1]


def expected_max_with_std(scores, ns: Budgets, *, maximize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 8 and its section-3.3 spread together (:func:`expected_max`, :func:`expected_max_std`), one pass."""
    return _moments(scores, ns, maximize)


def expected_max_unbiased(scores, ns: Budgets, *, maximize: bool = True) -> np.ndarray:
    """Tang et al. (2020): expected max of n draws *without* replacement, defined for n <= N.

    sum_i v_(i) C(i-1, n-1) / C(N, n) over ascending order statistics v_(i).
    The weights are built from w_N = n / N by w_(i-1) = w_i (i - n) / (i - 1),
    which stays exact in floating point where binomials would overflow.
    """
    values = np.sort(_oriented(scores, maximize))
    big_n = values.size
    budgets = check_budgets(ns, n_max=big_n)
    if big_n * budgets.size > DIRECT_LIMIT:
        out = _each_unbiased(values, budgets) if _sparse(budgets) else _running_unbiased(values, budgets)
        return out if maximize else -out
    out = np.empty(budgets.size)
    idx = np.arange(big_n, 0, -1)  # i = N, N-1, ..., 1
    for k, n in enumerate(budgets):
        ratios = np.ones(big_n)
        ratios[1:] = np.clip((idx[:-1] - n) / (idx[:-1] - 1), 0.0, None)
        weights = (n / big_n) * np.cumprod(ratios)  # w_N, w_(N-1), ..., w_1
        out[k] = weights @ values[::-1]
    return out if maximize else -out


def _each_unbiased(values: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """:func:`expected_max_unbiased`'s weights one budget at a time over the top order statistics only:
    w_i = (n / N) prod_j (i - j) / (N - j) <= (n / N) (i / N)^(n - 1), so below i = N exp(-800 / (n - 1)) every
    weight is 0 in double precision and is left out."""
    big_n = values.size
    run = _leading_run(budgets)  # budgets 1, 2, ..., m: the running weights are cheaper there
    out = np.empty(budgets.size)
    out[:run] = _running_unbiased(values, budgets[:run]) if run else []
    for k, n in enumerate(budgets[run:], start=run):
        lo = 1 if n == 1 else max(1, int(big_n * np.exp(_ZERO / (n - 1))))
        idx = np.arange(big_n, lo - 1, -1)  # i = N, N-1, ..., lo
        ratios = np.ones(idx.size)
        ratios[1:] = np.clip((idx[:-1] - n) / (idx[:-1] - 1), 0.0, None)
        out[k] = ((n / big_n) * np.cumprod(ratios)) @ values[lo - 1:][::-1]
    return out


def _running_unbiased(values: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """The weights of :func:`expected_max_unbiased` carried from n to n + 1 for every i at once:
    w(n+1, i) = w(n, i) (i - n) (n + 1) / (n (N - n)), from w(1, i) = 1 / N. O(N) work per n; each
    weight is unimodal in n, so none underflows and comes back."""
    big_n = values.size
    idx = np.arange(1, big_n + 1, dtype=float)
    weights = np.full(big_n, 1.0 / big_n)
    found, lo = {}, 0
    for n in range(1, int(budgets.max()) + 1):
        if n > 1:
            weights[lo:] *= np.clip(idx[lo:] - (n - 1), 0.0, None) * n / ((n - 1) * (big_n - (n - 1)))
        if n % _SKIP_EVERY == 0:  # a weight at 0 (i < n, or underflowed) stays 0: skip that prefix (w rises with i)
            lo = int(np.searchsorted(weights, 0.0, side="right"))
        found[n] = float(weights[lo:] @ values[lo:])
    return np.array([found[int(n)] for n in budgets])


def bootstrap_expected_max(
    scores, ns: Budgets, n_resamples: int, *, seed: int = 0, maximize: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Section 3.2: mean and SD of the max over K resamples of size n drawn with replacement.

    As K grows the mean converges to :func:`expected_max` and the SD to :func:`expected_max_std`;
    the closed form has none of the resampling error.
    """
    arr = _oriented(scores, maximize)
    budgets = check_budgets(ns)
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    means, stds = np.empty(budgets.size), np.empty(budgets.size)
    for k, n in enumerate(budgets):
        maxima = rng.choice(arr, size=(int(n_resamples), n), replace=True).max(axis=1)
        means[k], stds[k] = maxima.mean(), maxima.std()
    return (means if maximize else -means), stds
