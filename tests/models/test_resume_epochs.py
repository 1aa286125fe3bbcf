"""A trial stopped between epochs goes on from its last finished epoch with the result it would
have had uninterrupted (syw.models.resume): the same curve, the same best epoch, the same weights."""
from types import SimpleNamespace

import pytest
import torch

from syw.core.context import TrialContext, TrialFailed
from syw.core.settings import resolve
from syw.experiments import trial as trial_module
from syw.models import esim, resume
from syw.models.resume import EpochState
from syw.models.tasks import pair
from syw.models.trainer import fit
from tests.models.test_models_scitail import PARAMS

# dropout, a scheduler that reads the metric and Adam's moments: every state the next epoch reads
ESIM = {**PARAMS["esim"], "epochs": 4, "lr": 1e-2, "dropout": 0.3, "output_ff_dropout": 0.2, "batch_size": 8,
        "scheduler": "reduce_on_plateau", "scheduler_mode": "max", "scheduler_patience": 0, "scheduler_factor": 0.5}


def _ctx(tmp_path, output: bool = True) -> TrialContext:
    return TrialContext(study="s", family="esim", trial_index=3, seed=7, data_dir=tmp_path, cache_dir=tmp_path,
                        output_dir=tmp_path / "results" / "s" if output else None)


def _run(tmp_path, params=None, output: bool = True):
    params = resolve(params or ESIM, esim.SETTINGS)
    data = pair.synthetic(n_train=96, n_dev=32, seed=3)
    model = {}

    def build():
        model["it"] = esim.build(params, data)
        return model["it"]

    outcome = pair.run(params, _ctx(tmp_path, output), data, build)
    return outcome, model["it"].state_dict()


@pytest.fixture(autouse=True)
def save_every_epoch(monkeypatch):
    """The epochs here take milliseconds; the runs save after each all the same."""
    monkeypatch.setattr(resume, "MIN_EPOCH_SECONDS", 0.0)


def _stop_at_epoch(monkeypatch, epoch: int) -> None:
    """Make the next run raise KeyboardInterrupt (a stop) as epoch ``epoch`` begins."""
    batches, calls = pair.training_batches, {"n": 0}

    def stopping(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == epoch:
            raise KeyboardInterrupt
        return batches(*args, **kwargs)

    monkeypatch.setattr(pair, "training_batches", stopping)


@pytest.mark.parametrize("finished", [1, 2])  # after 1, the scheduler's own state decides epoch 2's rate
def test_a_stopped_trial_ends_as_an_uninterrupted_one(tmp_path, monkeypatch, finished):
    reference, weights = _run(tmp_path, output=False)
    # a curve that moves, with its best at epoch 3: the plateau scheduler has halved the rate by then
    assert reference.resumed_after_epochs == [] and reference.best_epoch == 3
    assert len({m["accuracy"] for m in reference.epoch_metrics}) == 4
    with monkeypatch.context() as patch:
        _stop_at_epoch(patch, finished + 1)
        with pytest.raises(KeyboardInterrupt):
            _run(tmp_path)
    saved = tmp_path / "results" / "s" / "resume" / "esim-3.pt"
    assert saved.is_file()
    resumed, resumed_weights = _run(tmp_path)
    assert resumed.resumed_after_epochs == [finished] and not saved.exists()
    assert resumed.epoch_metrics == reference.epoch_metrics
    assert (resumed.metric, resumed.best_epoch, resumed.epochs_run) == \
        (reference.metric, reference.best_epoch, reference.epochs_run) == (resumed.metric, resumed.best_epoch, 4)
    assert all(torch.equal(weights[k], resumed_weights[k]) for k in weights)
    assert len(resumed.epoch_seconds) == 4


def test_a_state_of_another_assignment_is_not_continued(tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        _stop_at_epoch(patch, 2)
        with pytest.raises(KeyboardInterrupt):
            _run(tmp_path, {**ESIM, "lr": 1e-3})
    other, _ = _run(tmp_path)
    reference, _ = _run(tmp_path, output=False)
    assert other.resumed_after_epochs == [] and other.epoch_metrics == reference.epoch_metrics


def test_a_failed_trial_leaves_no_state(tmp_path):
    """A NaN loss is the trial's result (recorded as failed): its saved epochs are removed with it."""

    class Nan(torch.nn.Linear):
        def forward(self, x):
            return {"loss": super().forward(x).sum()}

    model = Nan(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state = EpochState(tmp_path / "r.pt", {"seed": 1})
    state.save(model, optimizer, None, {"epoch": 1, "best_metric": 0.5, "best_epoch": 1, "best_metrics": {"metric": 0.5},
                                        "epoch_seconds": [1.0], "epoch_metrics": [{"metric": 0.5}], "resumed_after": []})
    with pytest.raises(TrialFailed, match="at epoch 2"):
        fit(model, lambda epoch: [{"x": torch.full((1, 2), float("nan"))}], lambda m: 0.0, epochs=3, patience=None,
            optimizer=optimizer, scheduler=None, state=state)
    assert not (tmp_path / "r.pt").exists()


def test_every_generator_goes_on_where_it_was_saved(tmp_path):
    import random

    import numpy as np

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    own = torch.Generator().manual_seed(3)
    state = EpochState(tmp_path / "r.pt", {"seed": 1}, (own,))

    def draws():
        return (torch.rand(2).tolist(), np.random.rand(2).tolist(), random.random(), torch.rand(2, generator=own).tolist())

    state.save(model, optimizer, None, {"epoch": 1})
    after_save = draws()
    draws()
    assert state.load(model, optimizer, None) == {"epoch": 1}
    assert draws() == after_save


def resumed_toy(params, ctx):
    """A trial that went on after epoch 2 of 3: its earlier runs trained epochs 1 and 2 (100 s and 200 s)."""
    from syw.core.context import TrialOutcome

    return TrialOutcome(metric=0.5, best_epoch=3, epochs_run=3, epoch_seconds=[100.0, 200.0, 0.5],
                        resumed_after_epochs=[2])


def test_the_record_of_a_resumed_trial_counts_its_earlier_epochs(tmp_path, monkeypatch):
    from syw.experiments.space import load_family
    from tests.experiments.test_provenance import trials_in_process

    (tmp_path / "toy_resumed.yaml").write_text(f"inherits: toy\ntrain: {{_target_: {__name__}.resumed_toy}}\n")
    family = load_family("toy_resumed", name="toy", dirs=[tmp_path])
    paths = {"data_dir": str(tmp_path), "cache_dir": str(tmp_path / "cache")}
    clock = iter([10.0, 12.5])  # this run's start and end: 2.5 s, on a clock of the test's own
    monkeypatch.setattr(trial_module, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    [record] = trials_in_process(monkeypatch, family, "toy", {"name": "toy"}, paths, [0])
    assert record["status"] == "ok" and record["resumed_after_epochs"] == [2]
    assert record["duration_seconds"] == 302.5  # epochs 1-2 (300 s) and this run's 2.5 s


def test_short_epochs_are_not_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(resume, "MIN_EPOCH_SECONDS", 60.0)
    with monkeypatch.context() as patch:
        _stop_at_epoch(patch, 3)
        with pytest.raises(KeyboardInterrupt):
            _run(tmp_path)
    assert not (tmp_path / "results" / "s" / "resume").exists()
