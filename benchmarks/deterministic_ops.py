"""Which ops of each model ``torch.use_deterministic_algorithms(True)`` swaps for a deterministic
version on CUDA (docs/gpu.md, "Determinism on CUDA").

Trial 0 of seed 0 of a family file (:func:`syw.experiments.gpu_check.trial_zero`, on the task adapter's
generated data) takes one training forward and backward step on the CPU under a
``TorchDispatchMode`` that notes every aten op, and whether its first input requires grad. The ops
are matched against torch's own list (the docstring of ``torch.use_deterministic_algorithms``,
torch 2.13: "the following normally-nondeterministic operations will act deterministically"), read
for CUDA tensors. A CUDA run can dispatch some layers differently (an LSTM as one cuDNN call), so
this is what the model's code asks for, not a CUDA trace.

    .venv/bin/python -m benchmarks.deterministic_ops [--families STEM ...]   # prints the docs' table
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from syw.core.entry import run_main
from syw.experiments.gpu_check import FAMILY_DIR, SEED, trial_zero
from syw.experiments.space import find_family_file
from syw.models.trainer import seed_everything

REPO = Path(__file__).resolve().parent.parent

# One family file per model, as the paper sets it (the variants share the model's code).
DEFAULT = ("sst5_cnn", "sst2_bcn_glove", "sst2_bcn_elmo_frozen", "sst2_bcn_elmo_finetuned", "scitail_ngram",
           "scitail_dam", "scitail_esim", "scitail_dgem", "squad_bidaf", "ptb_lstm", "ptb_rhn", "ptb_nas")

Call = tuple[str, str, bool]  # (aten op name without its overload, the overload, first input requires grad)


def _is(*names: str, grad: bool | None = None, overloads: tuple[str, ...] = ()) -> Callable[[Call], bool]:
    def match(call: Call) -> bool:
        name, overload, requires_grad = call
        return (name.rstrip("_") in names and (grad is None or requires_grad == grad)
                and (not overloads or overload in overloads))
    return match


# torch's list, the entries that apply to CUDA tensors, as aten ops (torch.bmm on sparse tensors and
# MaxPool3d are left out: no model here uses them).
DETERMINISTIC: dict[str, Callable[[Call], bool]] = {
    "convolution": _is("convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
    "replication_pad (its backward)": _is("replication_pad1d", "replication_pad2d", "replication_pad3d", grad=True),
    "index_put": _is("index_put", "_index_put_impl"),
    "scatter_add": _is("scatter_add"),
    "gather (its backward)": _is("gather", grad=True),
    "index_add": _is("index_add"),
    "index_select (its backward)": _is("index_select", grad=True),
    "repeat_interleave (its backward)": _is("repeat_interleave", grad=True),
    "index_copy": _is("index_copy"),
    "scatter": _is("scatter", overloads=("src",)),
    "scatter_reduce": _is("scatter_reduce"),
}


class OpTrace(TorchDispatchMode):
    """Notes each aten op dispatched inside it as a :data:`Call`."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: set[Call] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        first = args[0] if args else None
        grad = isinstance(first, torch.Tensor) and first.requires_grad
        name = func.overloadpacket.__name__
        if name.rstrip("_") in ("index_put", "_index_put_impl") and _accumulates(args, kwargs or {}):
            name += ":accumulate"  # not in torch's list on CUDA: index_put is only listed without accumulate
        self.calls.add((name, func._overloadname, grad))
        return func(*args, **(kwargs or {}))


def _accumulates(args: tuple, kwargs: dict[str, Any]) -> bool:
    """index_put(self, indices, values, accumulate=False, ...)'s accumulate flag."""
    return bool(kwargs.get("accumulate", args[3] if len(args) > 3 else False))


def training_step_calls(stem: str) -> set[Call] | None:
    """The aten ops of one training step of ``stem``'s trial 0; None for a family without a torch model."""
    seed_everything(SEED)
    trial = trial_zero(stem, epochs=1)
    if trial.cpu_only is not None:
        return None
    generator = torch.Generator().manual_seed(SEED)
    batch = next(iter(trial.module.TASK.training_batches(trial.data.train, trial.params, generator, *trial.layout)))
    trial.model.train()
    with OpTrace() as trace:
        trial.model(**batch)["loss"].backward()
    return trace.calls


def made_deterministic(calls: set[Call]) -> list[str]:
    """The entries of :data:`DETERMINISTIC` that some call matches, in the table's order."""
    return [entry for entry, match in DETERMINISTIC.items() if any(match(call) for call in calls)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", metavar="STEM", default=list(DEFAULT),
                        help="family file stems (default: one per model, as the paper sets it)")
    args = parser.parse_args(argv)
    missing = [stem for stem in args.families if find_family_file(stem, [FAMILY_DIR]) is None]
    if missing:
        raise ValueError(f"deterministic_ops: --families: no family file {missing[0]}.yaml in {FAMILY_DIR}")
    print("| family file | made deterministic |\n|---|---|")
    for stem in args.families:
        calls = training_step_calls(stem)
        entries = "CPU-only (no torch model)" if calls is None else ", ".join(made_deterministic(calls)) or "-"
        print(f"| `{stem}` | {entries} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
