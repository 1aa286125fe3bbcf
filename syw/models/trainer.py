"""The epoch loop shared by the neural families (Tables 2, 4-11), and the settings it reads.

It mirrors the parts of AllenNLP's trainer the paper's search spaces set: a fixed number of
epochs, early stopping after ``patience`` epochs without a strictly better validation metric (in
the study's direction), an optional gradient-norm clip or element-wise clamp, and a learning-rate
scheduler stepped once per epoch after validation (reduce-on-plateau with the metric, others
without). The best epoch's metrics are the trial's result; metrics other than the selection
metric (F1 beside exact match) are kept beside it.
"""
from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialFailed
from syw.core.settings import SIZE
from syw.models.resume import EpochState

Batch = Mapping[str, torch.Tensor]
Scheduler = torch.optim.lr_scheduler.LRScheduler | torch.optim.lr_scheduler.ReduceLROnPlateau
Metrics = float | Mapping[str, float]

# Declared for the settings check (syw/core/settings.py). Scheduler settings default to torch's
# own defaults, as AllenNLP built its schedulers from only the keys a config gave.
TRAINING_SETTINGS = {
    "epochs": SIZE,
    "patience": {"type": "int", "min": 1, "null": True},
    "batch_size": SIZE,
    "optimizer": {"values": ["adam", "adagrad"]},
    "lr": {"type": "float", "min": 0.0},
    # Adam's betas (torch's defaults unless given; BiDAF samples both, Table 11)
    "adam_beta1": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.9},
    "adam_beta2": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.999},
    "grad_norm": {"type": "float", "min": 0.0, "null": True, "default": None},
    "grad_clipping": {"type": "float", "min": 0.0, "null": True, "default": None},
    "scheduler": {"values": ["reduce_on_plateau", "exponential", "none", None], "default": None},
    "scheduler_mode": {"values": ["min", "max"], "default": "min"},
    "scheduler_factor": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.1},
    "scheduler_patience": {"type": "int", "min": 0, "default": 10},
    "scheduler_gamma": {"type": "float", "min": 0.0, "max": 1.0, "null": True, "default": None},
    # epochs the exponential decay starts late: AllenNLP stepped it with the finished epoch's index,
    # so epochs 0 and 1 both ran at the base rate (lag 1, docs/models.md §0)
    "scheduler_lag": {"type": "int", "min": 0, "default": 0},
    # subnormal floats flushed to zero on this trial's thread (torch.set_flush_denormal): on x86 CPUs
    # arithmetic on them is many times slower, a cost GPUs do not pay (benchmarks/denormals.py); a
    # CPU setting, left off for a trial on CUDA (configure_torch)
    "flush_denormal": {"type": "bool", "default": False},
}


@dataclass
class TrainResult:
    """Best validation metric, its 1-based epoch, epochs run, each epoch's wall time, every metric
    of the best epoch, and every epoch's metrics (the learning curve)."""

    best_metric: float
    best_epoch: int
    epochs_run: int
    epoch_seconds: list[float] = field(default_factory=list)
    best_metrics: dict[str, float] = field(default_factory=dict)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)
    resumed_after: list[int] = field(default_factory=list)  # the epochs after which a stopped trial went on


def classification_output(logits: torch.Tensor, label: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """What a classifier returns to the trainer: its logits and, given labels, the batch-mean
    cross-entropy (docs/models.md §0)."""
    output = {"logits": logits}
    if label is not None:
        output["loss"] = F.cross_entropy(logits, label)
    return output


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def choose_device(requested: str) -> torch.device:
    """``cuda`` when it was requested and is available, else ``cpu``."""
    return torch.device("cuda" if requested == "cuda" and torch.cuda.is_available() else "cpu")


def configure_torch(device: torch.device | str, flush_denormal: bool) -> None:
    """The process-wide torch settings of a trial on ``device``, set every time (workers run many trials).

    Threads: one, or ``SYW_TORCH_THREADS``; on CUDA this bounds only the work left on the CPU.
    Subnormals are flushed only on a CPU: the flush is the CPU's own mode and changes nothing a GPU
    computes. On CUDA, float32 stays IEEE float32 in matrix products and in cuDNN's convolutions
    and LSTMs, which torch otherwise lets use TF32 (a 10-bit mantissa) on Ampere and later GPUs;
    the paper's GTX 1080 and Titan Xp have no TF32.
    """
    device = torch.device(device)
    torch.set_num_threads(max(1, int(os.environ.get("SYW_TORCH_THREADS", 1))))
    torch.set_flush_denormal(flush_denormal and device.type == "cpu")
    if device.type == "cuda":
        for backend in (torch.backends.cuda.matmul, torch.backends.cudnn.conv, torch.backends.cudnn.rnn):
            backend.fp32_precision = "ieee"


def build_optimizer(model: nn.Module, params: Mapping[str, Any]) -> torch.optim.Optimizer:
    """Adam (betas ``adam_beta1``/``adam_beta2``, else torch's; fused: one kernel over all parameters,
    ~4x faster on CPU) or Adagrad."""
    if params["optimizer"] == "adam":
        betas = (float(params.get("adam_beta1", 0.9)), float(params.get("adam_beta2", 0.999)))
        return torch.optim.Adam(model.parameters(), lr=float(params["lr"]), betas=betas, fused=True)
    if params["optimizer"] == "adagrad":
        return torch.optim.Adagrad(model.parameters(), lr=float(params["lr"]))
    raise ValueError(f"unknown optimizer {params['optimizer']!r}; expected adam or adagrad")


def build_scheduler(optimizer: torch.optim.Optimizer, params: Mapping[str, Any]) -> Scheduler | None:
    """The scheduler named by ``params["scheduler"]``.

    ``reduce_on_plateau`` reads ``scheduler_mode``, ``scheduler_factor`` and
    ``scheduler_patience`` (torch's ReduceLROnPlateau, stepped with the validation
    metric, as AllenNLP did); ``exponential`` reads ``scheduler_gamma`` and ``scheduler_lag``
    (epoch e, from 0, runs at lr·γ^max(0, e − lag)); a missing, null or "none" ``scheduler``
    means none (Table 7).
    """
    name = params.get("scheduler")
    if name in (None, "none"):
        return None
    if name == "reduce_on_plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode=params["scheduler_mode"], factor=params["scheduler_factor"],
            patience=params["scheduler_patience"])
    if name == "exponential":
        if params.get("scheduler_gamma") is None:
            raise ValueError("the exponential scheduler needs scheduler_gamma")
        gamma, lag = params["scheduler_gamma"], params.get("scheduler_lag", 0)
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: gamma ** max(0, epoch - lag))
    raise ValueError(f"unknown scheduler {name!r}; expected reduce_on_plateau, exponential or null")


def train_model(build: Callable[[], nn.Module], train_batches_fn: Callable[[int], Iterable[Batch]],
                eval_fn: Callable[[nn.Module], Metrics], params: Mapping[str, Any], *, seed: int,
                device: torch.device | str = "cpu", metric: str = "accuracy", maximize: bool = True,
                state: EpochState | None = None) -> TrainResult:
    """Build a model under ``seed`` and :func:`fit` it with the optimizer, scheduler, epochs,
    patience and clipping that ``params`` (:data:`TRAINING_SETTINGS`) name.

    Trials run side by side, one per core, so torch uses one thread unless ``SYW_TORCH_THREADS``
    says otherwise; ``flush_denormal`` applies to that thread on a CPU (:func:`configure_torch`).
    """
    configure_torch(device, bool(params.get("flush_denormal", False)))
    seed_everything(seed)
    model = build().to(device)
    optimizer = build_optimizer(model, params)
    return fit(model, train_batches_fn, eval_fn, epochs=params["epochs"], patience=params["patience"],
               optimizer=optimizer, scheduler=build_scheduler(optimizer, params), grad_norm=params.get("grad_norm"),
               grad_clipping=params.get("grad_clipping"), device=device, seed=seed, metric=metric, maximize=maximize,
               state=state)


def update(model: nn.Module, loss: torch.Tensor, optimizer: torch.optim.Optimizer, *,
           grad_norm: float | None = None, grad_clipping: float | None = None) -> None:
    """One optimiser step from ``loss``: gradients, the norm clip, then the element clip, the update."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
    if grad_clipping is not None:  # DAM (Table 7): each gradient element clamped
        nn.utils.clip_grad_value_(model.parameters(), grad_clipping)
    optimizer.step()


def fit(model: nn.Module, train_batches_fn: Callable[[int], Iterable[Batch]], eval_fn: Callable[[nn.Module], Metrics],
        *, epochs: int, patience: int | None, optimizer: torch.optim.Optimizer, scheduler: Scheduler | None,
        grad_norm: float | None = None, grad_clipping: float | None = None, device: torch.device | str = "cpu",
        seed: int = 0, metric: str = "metric", maximize: bool = True, state: EpochState | None = None) -> TrainResult:
    """Train ``model`` and return its best validation metric.

    ``train_batches_fn(epoch)`` yields the batches of a 1-based epoch as dicts of tensors;
    ``model(**batch)`` must return a dict with a scalar ``"loss"``. ``eval_fn(model)`` returns the
    validation metrics (a mapping holding ``metric``, or that one number); it runs with the model
    in eval mode under ``torch.no_grad``. The generators are seeded again here, so the training
    stream (dropout masks) starts at the same place whatever building the model drew. Training
    stops after ``patience`` epochs without improvement (never when ``patience`` is None).
    With ``state``, each finished epoch is saved there and a saved one is continued from
    (:mod:`syw.models.resume`). Raises :class:`TrialFailed` when the loss is NaN or infinite.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    seed_everything(seed)
    device = torch.device(device)
    model.to(device)
    progress = (state.load(model, optimizer, scheduler) if state else None) or {
        "epoch": 0, "best_metric": -math.inf if maximize else math.inf, "best_epoch": 0, "best_metrics": {},
        "epoch_seconds": [], "epoch_metrics": [], "resumed_after": []}
    if progress["epoch"]:
        progress["resumed_after"].append(progress["epoch"])
    try:
        result = _epochs(model, train_batches_fn, eval_fn, progress, epochs=epochs, patience=patience,
                         optimizer=optimizer, scheduler=scheduler, grad_norm=grad_norm, grad_clipping=grad_clipping,
                         device=device, metric=metric, maximize=maximize, state=state)
    except TrialFailed:  # a result too (recorded as failed); a stop or a kill keeps the state
        if state:
            state.clear()
        raise
    if state:
        state.clear()
    return result


def _epochs(model: nn.Module, train_batches_fn: Callable[[int], Iterable[Batch]], eval_fn: Callable[[nn.Module], Metrics],
            progress: dict[str, Any], *, epochs: int, patience: int | None, optimizer: torch.optim.Optimizer,
            scheduler: Scheduler | None, grad_norm: float | None, grad_clipping: float | None, device: torch.device,
            metric: str, maximize: bool, state: EpochState | None) -> TrainResult:
    """:func:`fit`'s loop from the epoch after ``progress["epoch"]``, saving ``progress`` after each epoch."""
    best_metric, best_epoch, best_metrics = progress["best_metric"], progress["best_epoch"], progress["best_metrics"]
    epoch_seconds, epoch_metrics = progress["epoch_seconds"], progress["epoch_metrics"]
    for epoch in range(progress["epoch"] + 1, epochs + 1):  # a saved state always has an epoch left
        start = time.perf_counter()
        model.train()
        for step, batch in enumerate(train_batches_fn(epoch), start=1):
            loss = model(**{k: v.to(device) for k, v in batch.items()})["loss"]
            if not math.isfinite(loss.item()):
                raise TrialFailed(f"loss became {loss.item()} at epoch {epoch}, batch {step}")
            update(model, loss, optimizer, grad_norm=grad_norm, grad_clipping=grad_clipping)
        model.eval()
        with torch.no_grad():
            metrics = eval_fn(model)
        metrics = {k: float(v) for k, v in metrics.items()} if isinstance(metrics, Mapping) else {metric: float(metrics)}
        value = metrics[metric]
        epoch_metrics.append(metrics)
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(value)
        elif scheduler is not None:
            scheduler.step()
        epoch_seconds.append(time.perf_counter() - start)
        if value > best_metric if maximize else value < best_metric:
            best_metric, best_epoch, best_metrics = value, epoch, metrics
        elif patience is not None and epoch - best_epoch >= patience:
            break
        if state and epoch < epochs and epoch_seconds[-1] >= state.min_epoch_seconds:
            progress.update(epoch=epoch, best_metric=best_metric, best_epoch=best_epoch, best_metrics=best_metrics)
            state.save(model, optimizer, scheduler, progress)
    return TrainResult(best_metric, best_epoch, epoch, epoch_seconds, best_metrics, epoch_metrics,
                       progress["resumed_after"])
