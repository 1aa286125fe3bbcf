"""A small epoch loop shared by the neural families (Tables 2, 4-8).

It mirrors the parts of AllenNLP's trainer the paper's search spaces set: a fixed
number of epochs, early stopping on a higher-is-better validation metric after
``patience`` epochs without improvement, an optional gradient-norm clip and a
learning-rate scheduler stepped once per epoch (reduce-on-plateau with the
validation metric, others without).
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import torch
from torch import nn

from experiments.context import TrialFailed

Batch = Mapping[str, torch.Tensor]
Scheduler = torch.optim.lr_scheduler.LRScheduler | torch.optim.lr_scheduler.ReduceLROnPlateau


@dataclass
class TrainResult:
    """Best validation metric, its 1-based epoch, epochs run and each epoch's wall time."""

    best_metric: float
    best_epoch: int
    epochs_run: int
    epoch_seconds: list[float] = field(default_factory=list)


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def choose_device(requested: str) -> torch.device:
    """``cuda`` when it was requested and is available, else ``cpu``."""
    return torch.device("cuda" if requested == "cuda" and torch.cuda.is_available() else "cpu")


def build_scheduler(optimizer: torch.optim.Optimizer, params: Mapping[str, Any]) -> Scheduler | None:
    """The scheduler named by ``params["scheduler"]``.

    ``reduce_on_plateau`` reads ``scheduler_mode``, ``scheduler_factor`` and
    ``scheduler_patience`` (torch's ReduceLROnPlateau, stepped with the validation
    metric, as AllenNLP did); ``exponential`` reads ``scheduler_gamma``; a missing
    null or "none" ``scheduler`` means none (Table 7).
    """
    name = params.get("scheduler")
    if name in (None, "none"):
        return None
    if name == "reduce_on_plateau":
        return torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode=params["scheduler_mode"], factor=params["scheduler_factor"],
            patience=params["scheduler_patience"])
    if name == "exponential":
        return torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=params["scheduler_gamma"])
    raise ValueError(f"unknown scheduler {name!r}; expected reduce_on_plateau, exponential or null")


def fit(model: nn.Module, train_batches_fn: Callable[[int], Iterable[Batch]],
        eval_fn: Callable[[nn.Module], float], *, epochs: int, patience: int | None,
        optimizer: torch.optim.Optimizer, scheduler: Scheduler | None,
        grad_norm: float | None = None, device: torch.device | str = "cpu", seed: int = 0) -> TrainResult:
    """Train ``model`` and return its best validation metric.

    ``train_batches_fn(epoch)`` yields the batches of a 1-based epoch as dicts of
    tensors; ``model(**batch)`` must return a dict with a scalar ``"loss"``.
    ``eval_fn(model)`` returns the validation metric (higher is better); it runs
    with the model in eval mode under ``torch.no_grad``. Training stops after
    ``patience`` epochs without improvement (never when ``patience`` is None).
    Raises :class:`TrialFailed` when the loss is NaN or infinite.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    seed_everything(seed)
    device = torch.device(device)
    model.to(device)
    best_metric, best_epoch, epoch_seconds = -math.inf, 0, []
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        model.train()
        for step, batch in enumerate(train_batches_fn(epoch), start=1):
            loss = model(**{k: v.to(device) for k, v in batch.items()})["loss"]
            if not math.isfinite(loss.item()):
                raise TrialFailed(f"loss became {loss.item()} at epoch {epoch}, batch {step}")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
            optimizer.step()
        model.eval()
        with torch.no_grad():
            metric = float(eval_fn(model))
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(metric)
        elif scheduler is not None:
            scheduler.step()
        epoch_seconds.append(time.perf_counter() - start)
        if metric > best_metric:
            best_metric, best_epoch = metric, epoch
        elif patience is not None and epoch - best_epoch >= patience:
            break
    return TrainResult(best_metric, best_epoch, epoch, epoch_seconds)
