"""A trial's training state after each finished epoch, so that a trial stopped with its study (a
kill, the end of a working session) continues from its last finished epoch instead of its first.

The state is everything the next epoch reads: the weights, the optimiser's and the scheduler's
state, every random generator the epochs draw from (torch's, NumPy's and Python's global ones and
the task's own, such as its shuffle), and the trainer's bookkeeping (the best epoch so far and the
learning curve). So a continued trial ends with the result an uninterrupted one would have had
(on one machine and torch version; tested). A file is continued only by the trial it belongs to:
its ``key`` (the assignment and seed) must match, or the trial starts afresh.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from syw.core.context import TrialContext

# A trial's epochs shorter than this are cheaper to run again than to save after each (saving 10M
# weights with Adam's moments takes about 0.7 s here).
MIN_EPOCH_SECONDS = 60.0


@dataclass(frozen=True)
class EpochState:
    """Where a trial keeps its state between epochs (``path``), what it belongs to (``key``), and
    the task's own generators, saved and restored with the global ones; only epochs of
    ``min_epoch_seconds`` or more are saved."""

    path: Path
    key: dict[str, Any]
    generators: tuple[torch.Generator, ...] = ()
    min_epoch_seconds: float = 0.0

    def save(self, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any, progress: dict[str, Any]) -> None:
        """Write the state after a finished epoch; written whole or not at all (a kill mid-write
        leaves the previous epoch's file)."""
        state = {"key": self.key, "progress": progress, "model": model.state_dict(),
                 "optimizer": optimizer.state_dict(), "scheduler": None if scheduler is None else scheduler.state_dict(),
                 "rng": rng_state(*self.generators)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        torch.save(state, partial)
        os.replace(partial, self.path)

    def load(self, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any) -> dict[str, Any] | None:
        """Restore a saved state into the trial's objects and return its bookkeeping; None (nothing
        restored) when there is no file or it belongs to another assignment or seed."""
        if not self.path.is_file():
            return None
        state = torch.load(self.path, map_location="cpu", weights_only=True)
        if state["key"] != self.key:
            return None
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if scheduler is not None:
            scheduler.load_state_dict(state["scheduler"])
        set_rng_state(state["rng"], *self.generators)
        return state["progress"]

    def clear(self) -> None:
        """Remove the file once the trial has finished (its record holds the result)."""
        self.path.unlink(missing_ok=True)


def trial_state(ctx: TrialContext, params: dict[str, Any], *generators: torch.Generator) -> EpochState | None:
    """The state of trial ``ctx`` beside its study's records (``<results>/<study>/resume/<family>-<trial>.pt``),
    or None when the runner gave no results folder (a direct call)."""
    path = ctx.output_path("resume", "pt")
    return None if path is None else EpochState(path, {"params": dict(params), "seed": ctx.seed}, generators,
                                                MIN_EPOCH_SECONDS)


def rng_state(*generators: torch.Generator) -> dict[str, Any]:
    """Every random generator a training run draws from: torch's (CPU and CUDA), NumPy's and
    Python's global ones, and ``generators`` (a task's own)."""
    name, keys, position, has_gauss, gauss = np.random.get_state()
    return {"torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "numpy": [name, keys.tolist(), position, has_gauss, gauss], "python": random.getstate(),
            "generators": [g.get_state() for g in generators]}


def set_rng_state(state: dict[str, Any], *generators: torch.Generator) -> None:
    """Restore what :func:`rng_state` saved, ``generators`` in the same order."""
    torch.set_rng_state(state["torch"])
    if state["cuda"]:
        torch.cuda.set_rng_state_all(state["cuda"])
    name, keys, position, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), position, has_gauss, gauss))
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))
    for generator, saved in zip(generators, state["generators"], strict=True):
        generator.set_state(saved)
