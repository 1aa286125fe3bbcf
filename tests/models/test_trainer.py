"""The shared epoch loop: early stopping, NaN handling and the schedulers of Tables 2, 4-8."""
import math

import pytest
import torch
from torch import nn

from syw.core.context import TrialFailed
from syw.models.trainer import build_scheduler, choose_device, fit, seed_everything, train_model, update


class Regression(nn.Module):
    """A one-weight model whose forward returns ``{"loss": ...}`` like the families' models."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1))

    def forward(self, x, y):
        return {"loss": ((self.weight * x - y) ** 2).mean()}


def batches(epoch):
    x = torch.linspace(-1, 1, 8)
    return [{"x": x, "y": 2 * x}]


def run(metrics, *, epochs=20, patience=3, scheduler=None, lr=0.1, lrs=None):
    """Fit with a scripted validation metric per epoch; record the lr seen at each epoch."""
    model = Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    sched = None if scheduler is None else build_scheduler(optimizer, scheduler)
    seen = iter(metrics)

    def evaluate(m):
        assert not m.training and not torch.is_grad_enabled()
        if lrs is not None:
            lrs.append(optimizer.param_groups[0]["lr"])
        return next(seen)

    return fit(model, batches, evaluate, epochs=epochs, patience=patience, optimizer=optimizer,
               scheduler=sched, seed=0)


def test_early_stopping_after_patience_epochs_without_improvement():
    result = run([0.1, 0.5, 0.4, 0.5, 0.3, 0.9, 0.9])
    assert (result.best_metric, result.best_epoch, result.epochs_run) == (0.5, 2, 5)
    assert len(result.epoch_seconds) == 5 and all(s > 0 for s in result.epoch_seconds)


def test_runs_all_epochs_while_improving_and_learns():
    model = Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    result = fit(model, batches, lambda m: -abs(m.weight.item() - 2), epochs=30, patience=3,
                 optimizer=optimizer, scheduler=None)
    assert result.epochs_run == 30 and result.best_epoch == 30
    assert model.weight.item() == pytest.approx(2, abs=1e-3)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_loss_fails_the_trial(bad):
    def poisoned(epoch):
        return batches(epoch) if epoch == 1 else [{"x": torch.tensor([bad]), "y": torch.tensor([0.0])}]

    model = Regression()
    with pytest.raises(TrialFailed, match="epoch 2, batch 1"):
        fit(model, poisoned, lambda m: 0.5, epochs=5, patience=3,
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1), scheduler=None)


PLATEAU = {"scheduler": "reduce_on_plateau", "scheduler_patience": 2, "scheduler_factor": 0.5}


def test_plateau_mode_min_watching_rising_accuracy_halves_every_third_epoch():
    # Accuracy rises every epoch. In "min" mode that never counts as an improvement,
    # so after patience + 1 = 3 such epochs the rate halves (and the count restarts).
    lrs = []
    run([0.1 * k for k in range(1, 11)], epochs=10, scheduler=PLATEAU | {"scheduler_mode": "min"},
        lr=1.0, lrs=lrs)
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]


def test_plateau_mode_max_watching_rising_accuracy_never_halves():
    lrs = []
    run([0.1 * k for k in range(1, 11)], epochs=10, scheduler=PLATEAU | {"scheduler_mode": "max"},
        lr=1.0, lrs=lrs)
    assert lrs == [1.0] * 10


def test_plateau_mode_max_halves_after_a_plateau():
    lrs = []
    run([0.5, 0.4, 0.4, 0.4, 0.4, 0.6], epochs=6, patience=None,
        scheduler=PLATEAU | {"scheduler_mode": "max"}, lr=1.0, lrs=lrs)
    assert lrs == [1, 1, 1, 1, 0.5, 0.5]


def test_exponential_scheduler_steps_once_per_epoch():
    lrs = []
    run([0.1] * 4, epochs=4, patience=None, scheduler={"scheduler": "exponential", "scheduler_gamma": 0.5},
        lr=1.0, lrs=lrs)
    assert lrs == [1, 0.5, 0.25, 0.125]


def test_exponential_scheduler_with_allennlps_one_epoch_lag():
    lrs = []
    run([0.1] * 4, epochs=4, patience=None, lr=1.0, lrs=lrs,
        scheduler={"scheduler": "exponential", "scheduler_gamma": 0.5, "scheduler_lag": 1})
    assert lrs == [1, 1, 0.5, 0.25]


def test_scheduler_choice():
    optimizer = torch.optim.SGD(Regression().parameters(), lr=0.1)
    assert build_scheduler(optimizer, {"scheduler": None}) is None
    assert build_scheduler(optimizer, {"scheduler": "none"}) is None  # Table 7 (DAM) has no scheduler
    with pytest.raises(ValueError, match="unknown scheduler 'cosine'"):
        build_scheduler(optimizer, {"scheduler": "cosine"})


def test_gradient_norm_clipping():
    model = Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    fit(model, batches, lambda m: 0.0, epochs=1, patience=None, optimizer=optimizer,
        scheduler=None, grad_norm=0.25)
    assert model.weight.item() == pytest.approx(0.25)


def test_seed_and_device_helpers():
    seed_everything(7)
    a = torch.rand(3)
    seed_everything(7)
    assert torch.equal(a, torch.rand(3))
    assert choose_device("cpu").type == "cpu"
    assert choose_device("cuda").type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_minimized_metric_and_the_best_epochs_other_metrics_are_kept():
    scripted = iter([{"loss": 0.9, "f1": 0.1}, {"loss": 0.4, "f1": 0.5}, {"loss": 0.6, "f1": 0.7}, {"loss": 0.5, "f1": 0.9}])
    model = Regression()
    result = fit(model, batches, lambda m: next(scripted), epochs=4, patience=2, metric="loss", maximize=False,
                 optimizer=torch.optim.SGD(model.parameters(), lr=0.1), scheduler=None)
    assert (result.best_metric, result.best_epoch, result.epochs_run) == (0.4, 2, 4)
    assert result.best_metrics == {"loss": 0.4, "f1": 0.5}


def test_gradient_values_clamped_elementwise():
    model = Regression()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    fit(model, batches, lambda m: 0.0, epochs=1, patience=None, optimizer=optimizer, scheduler=None, grad_clipping=0.1)
    assert model.weight.item() == pytest.approx(0.1)  # the gradient is about -2.6, clamped to -0.1


def test_train_model_seeds_builds_and_reads_the_settings():
    def build():
        return Regression()

    params = {"epochs": 3, "patience": None, "optimizer": "adagrad", "lr": 0.5, "scheduler": None}
    first = train_model(build, batches, lambda m: -abs(m.weight.item() - 2), params, seed=3)
    second = train_model(build, batches, lambda m: -abs(m.weight.item() - 2), params, seed=3)
    assert first.best_metric == second.best_metric and first.epochs_run == 3
    with pytest.raises(ValueError, match="unknown optimizer 'sgd'"):
        train_model(build, batches, lambda m: 0.0, {**params, "optimizer": "sgd"}, seed=3)


class RandomLine(nn.Module):
    """A line y = a x + b whose a and b start at random (torch's default initialisation of nn.Linear)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)

    def forward(self, x, y):
        return {"loss": ((self.linear(x.unsqueeze(-1)).squeeze(-1) - y) ** 2).mean()}


def test_train_model_seeds_the_initial_weights():
    """The seed, not whatever the global generator held before, decides a model's initial weights."""
    initial = []

    def build():
        model = RandomLine()
        initial.append(torch.cat([p.detach().flatten().clone() for p in model.parameters()]))
        return model

    params = {"epochs": 1, "patience": None, "optimizer": "adam", "lr": 0.1, "scheduler": None}
    for before, seed in ((1, 3), (2, 3), (1, 4)):
        torch.manual_seed(before)  # a different global state before each call
        train_model(build, batches, lambda m: 0.0, params, seed=seed)
    assert torch.equal(initial[0], initial[1])
    assert not torch.equal(initial[0], initial[2])


def test_flush_denormal_is_set_for_each_trial_either_way():
    subnormal = torch.tensor([1e-40])
    seen = []

    def build():
        seen.append(float(subnormal * 1.0))  # 0.0 when subnormals are flushed
        return Regression()

    params = {"epochs": 1, "patience": None, "optimizer": "adam", "lr": 0.1, "scheduler": None}
    try:
        train_model(build, batches, lambda m: 0.0, {**params, "flush_denormal": True}, seed=0)
        train_model(build, batches, lambda m: 0.0, params, seed=0)  # a worker's next trial, default off
    finally:
        torch.set_flush_denormal(False)
    assert seen == [0.0, pytest.approx(1e-40, rel=1e-3)]


@pytest.mark.parametrize("grad_norm, grad_clipping, expected", [
    (None, None, [3.0, 4.0]),
    (1.0, None, [0.6, 0.8]),  # the norm 5 scaled to 1
    (None, 0.7, [0.7, 0.7]),  # each element clamped
    (1.0, 0.7, [0.6, 0.7]),  # the norm first, then each element
])
def test_update_clips_the_norm_then_each_element(grad_norm, grad_clipping, expected):
    weight = nn.Parameter(torch.zeros(2))
    model = nn.Module()
    model.weight = weight
    optimizer = torch.optim.SGD([weight], lr=1.0)
    update(model, (weight * torch.tensor([3.0, 4.0])).sum(), optimizer, grad_norm=grad_norm, grad_clipping=grad_clipping)
    assert (-weight.detach()).tolist() == pytest.approx(expected, abs=1e-6)
