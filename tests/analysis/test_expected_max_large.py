"""Eq. 8, its SD and the unbiased estimate at every n for large N (issue 61, item 3): the running
evaluations of ``syw.analysis.expected_max`` agree with the direct matrix to 1e-12."""
import importlib

import numpy as np
import pytest

em = importlib.import_module("syw.analysis.expected_max")


@pytest.mark.parametrize("kind", ["normal", "ties", "skewed"])
def test_the_running_evaluation_is_the_direct_one(kind, monkeypatch):
    rng = np.random.default_rng(3)
    scores = {"normal": rng.normal(0.5, 0.05, 1500), "ties": np.round(rng.beta(2, 5, 1500), 2),
              "skewed": rng.lognormal(0.0, 1.5, 1500)}[kind]
    ns = np.arange(1, scores.size + 1)
    monkeypatch.setattr(em, "DIRECT_LIMIT", 0)  # every call takes the running path
    running = em.expected_max(scores, ns), em.expected_max_std(scores, ns), em.expected_max_unbiased(scores, ns)
    monkeypatch.setattr(em, "DIRECT_LIMIT", 10**12)
    direct = em.expected_max(scores, ns), em.expected_max_std(scores, ns), em.expected_max_unbiased(scores, ns)
    for fast, slow in zip(running, direct):
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12 * float(np.abs(scores).max()))
    assert running[0][-1] < scores.max() and running[2][-1] == pytest.approx(scores.max(), rel=1e-12)


def test_the_running_path_keeps_the_order_and_direction_of_the_budgets(monkeypatch):
    scores = np.random.default_rng(0).normal(size=400)
    monkeypatch.setattr(em, "DIRECT_LIMIT", 0)
    ns = [7, 1, 400, 7]
    np.testing.assert_allclose(em.expected_max(scores, ns, maximize=False),
                               -em.expected_max(-scores, ns), rtol=1e-14)
    assert em.expected_max(scores, [1])[0] == pytest.approx(scores.mean(), rel=1e-12)
    assert em.expected_max_unbiased(scores, ns)[1] == pytest.approx(scores.mean(), rel=1e-12)
