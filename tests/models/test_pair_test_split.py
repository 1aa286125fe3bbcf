"""A pair study that names a test split: every epoch is scored on it, selection reads dev only, and
the record keeps the selected epoch's test accuracy and every epoch's metrics."""
import dataclasses

import pytest

from syw.core.context import TrialContext
from syw.core.settings import resolve
from syw.models import dgem, ngram
from syw.models.tasks import pair
from tests.models.test_models_scitail import PARAMS


def _ctx(tmp_path) -> TrialContext:
    return TrialContext(study="t", family="f", trial_index=0, seed=5, data_dir=tmp_path, cache_dir=tmp_path)


def _with_test(data: pair.PairData, seed: int) -> pair.PairData:
    return dataclasses.replace(data, test=pair.synthetic(n_train=8, n_dev=40, seed=seed).dev)


def test_map_splits_reaches_the_test_split():
    data = ngram.prepare(_with_test(pair.synthetic(n_train=16, n_dev=8), seed=1))
    assert data.test.extras["features"].shape == (40, 3)
    graphs = dgem.prepare(_with_test(pair.synthetic(n_train=16, n_dev=8), seed=1))
    assert set(graphs.test.extras) == set(graphs.train.extras) and graphs.test.extras["nodes"].shape[0] == 40


def test_the_record_holds_the_selected_epochs_test_accuracy(tmp_path):
    params = resolve({**PARAMS["ngram"], "epochs": 4, "lr": 0.05}, ngram.SETTINGS)
    data = ngram.prepare(_with_test(pair.synthetic(n_train=96, n_dev=32, seed=2), seed=9))
    outcome = pair.run(params, _ctx(tmp_path), data, lambda: ngram.build(params, data))
    curve = outcome.epoch_metrics
    assert len(curve) == outcome.epochs_run == 4
    dev = [m["accuracy"] for m in curve]
    assert outcome.metric == max(dev) and outcome.best_epoch == dev.index(max(dev)) + 1
    # the test accuracy beside the metric is the selected (first best-dev) epoch's, not the best test epoch's
    assert outcome.extra_metrics == {"test_accuracy": curve[outcome.best_epoch - 1]["test_accuracy"]}
    # and it is the accuracy on the test pairs: 40 of them, so a multiple of 1/40
    assert all(abs(m["test_accuracy"] * 40 - round(m["test_accuracy"] * 40)) < 1e-9 for m in curve)


def test_no_test_split_no_test_accuracy(tmp_path):
    params = resolve({**PARAMS["ngram"], "epochs": 2}, ngram.SETTINGS)
    data = ngram.prepare(pair.synthetic(n_train=32, n_dev=16))
    outcome = pair.run(params, _ctx(tmp_path), data, lambda: ngram.build(params, data))
    assert outcome.extra_metrics == {} and [set(m) for m in outcome.epoch_metrics] == [{"accuracy"}] * 2


@pytest.mark.parametrize("test_seed", [11, 12])
def test_the_test_split_never_steers_selection(tmp_path, test_seed):
    """Whatever the test pairs, the dev curve, and so the selected epoch, is the one without them."""
    params = resolve({**PARAMS["ngram"], "epochs": 3, "lr": 0.05}, ngram.SETTINGS)
    base = pair.synthetic(n_train=64, n_dev=24, seed=4)
    other = pair.synthetic(n_train=8, n_dev=30, seed=test_seed).dev
    data = ngram.prepare(dataclasses.replace(base, test=other))
    outcome = pair.run(params, _ctx(tmp_path), data, lambda: ngram.build(params, data))
    plain = ngram.prepare(base)
    reference = pair.run(params, _ctx(tmp_path), plain, lambda: ngram.build(params, plain))
    assert [m["accuracy"] for m in outcome.epoch_metrics] == [m["accuracy"] for m in reference.epoch_metrics]
    assert outcome.best_epoch == reference.best_epoch
