"""Seconds of training with subnormal floats kept (IEEE, torch's default) or flushed to zero
(``flush_denormal``, models/trainer.py), on one thread.

On x86 CPUs an operation on a subnormal float (|x| < 1.2e-38) can take ~100x the normal time.
Adam's moving averages of parameters whose gradients stay zero (embedding rows of words not in
recent batches, dead units) shrink geometrically towards that range, and saturated gates produce
such values, so trials can slow down as they train; GPUs, on which the paper's time axes were
measured, flush subnormals in their fast paths. Two ways to look, both with the two settings side
by side:

- default: each chosen assignment of a study's family (default: those with the highest and the
  median learning rate among the study's trials) trains as a whole trial twice, once each way,
  the order alternating between assignments; the two runs' dev scores show what flushing changed.
- ``--steps N``: the first N training steps of each chosen trial (its own model, batches, optimizer
  and clipping), kept and flushed in two processes at once (one per core, so both see the same
  machine), printing seconds per step every ``--every`` steps.

    SYW_DATA_DIR=../shared/data .venv/bin/python -m benchmarks.denormals [--study S] [--family F] [--trials I ...]
    SYW_DATA_DIR=../shared/data .venv/bin/python -m benchmarks.denormals --study squad_reduced --family bidaf --trials 13 --steps 30
"""
from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

from hydra.utils import get_method

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.core.settings import resolve
from syw.experiments.space import load_family, study_config, trial_seed
from syw.experiments.timing import data_dir

REPO = Path(__file__).resolve().parent.parent


def default_trials(family, n: int) -> list[int]:
    """The indices of the highest- and the median-learning-rate assignments among the first ``n``."""
    by_lr = sorted(range(n), key=lambda i: family.params(0, i)["lr"])
    return [by_lr[-1], by_lr[len(by_lr) // 2]]


def context(config: dict, name: str, index: int) -> TrialContext:
    return TrialContext(study="bench", family=name, trial_index=index, seed=trial_seed(0, name, index),
                        data_dir=data_dir(),
                        cache_dir=Path(os.environ.get("SYW_CACHE_DIR") or REPO / ".cache"), dataset=config["dataset"])


def step_seconds(study: str, name: str, index: int, steps: int, flush: bool) -> list[float]:
    """Seconds of each of the first ``steps`` training steps of one trial, subnormals kept or flushed."""
    import torch

    from syw.models.trainer import build_optimizer, seed_everything, update

    torch.set_num_threads(1)
    torch.set_flush_denormal(flush)
    config = study_config(study)
    family = load_family(config["families"][name], name=name)
    module = importlib.import_module(family.train_target.rpartition(".")[0])
    params = resolve(family.params(0, index), module.SETTINGS)
    ctx = context(config, name, index)
    data = module.TASK.load(ctx, params)
    data = module.prepare(data) if hasattr(module, "prepare") else data
    seed_everything(ctx.seed)
    model = module.build(params, data)
    optimizer = build_optimizer(model, params)
    model.train()
    seconds = []
    batches = iter(module.TASK.training_batches(data.train, params, torch.Generator().manual_seed(ctx.seed)))
    for _ in range(steps):
        batch = next(batches, None)
        if batch is None:
            break
        start = time.perf_counter()
        update(model, model(**batch)["loss"], optimizer, grad_norm=params.get("grad_norm"), grad_clipping=params.get("grad_clipping"))
        seconds.append(time.perf_counter() - start)
    return seconds


def compare_steps(args: argparse.Namespace, trials: list[int]) -> None:
    every = max(1, args.every)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        for index in trials:
            kept, flushed = pool.starmap(step_seconds, [(args.study, args.family, index, args.steps, flush)
                                                        for flush in (False, True)])
            print(f"trial {index}: seconds per step, kept | flushed (steps {every} at a time)", flush=True)
            for at in range(0, min(len(kept), len(flushed)), every):
                a, b = statistics.mean(kept[at:at + every]), statistics.mean(flushed[at:at + every])
                print(f"  steps {at + 1:4d}-{min(at + every, len(kept)):4d}: {a:7.2f} | {b:7.2f}  ({a / b:.2f}x)", flush=True)
            print(f"trial {index}: {sum(kept):.1f} s kept, {sum(flushed):.1f} s flushed over {len(kept)} steps "
                  f"({sum(kept) / sum(flushed):.2f}x)", flush=True)


def compare_trials(args: argparse.Namespace, family, trials: list[int]) -> None:
    config = study_config(args.study)
    train = get_method(family.train_target)
    ratios = []
    for k, index in enumerate(trials):
        params = family.params(0, index)
        if args.epochs:
            params["epochs"] = args.epochs
        seconds = {}
        for flush in ((False, True) if k % 2 == 0 else (True, False)):
            start = time.perf_counter()
            outcome = train({**params, "flush_denormal": flush}, context(config, args.family, index))
            seconds[flush] = time.perf_counter() - start
            epochs = " ".join(f"{s:.1f}" for s in outcome.epoch_seconds)
            print(f"trial {index:3d} lr {params['lr']:.2e} flush {'on ' if flush else 'off'}: {seconds[flush]:7.1f} s "
                  f"(epochs: {epochs}) {outcome.metric:.4f} at epoch {outcome.best_epoch}", flush=True)
        ratios.append(seconds[False] / seconds[True])
        print(f"trial {index:3d}: flushing ran {ratios[-1]:.2f}x as fast", flush=True)
    print(f"kept / flushed seconds: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f} "
          f"over {len(ratios)} trials")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default="sst2_bcn_reduced")
    parser.add_argument("--family", default="glove", help="the family's short name in the study")
    parser.add_argument("--trials", type=int, nargs="*", help="assignment indices (seed 0)")
    parser.add_argument("--epochs", type=int, help="whole trials: train this many epochs instead of the family's")
    parser.add_argument("--steps", type=int, help="time only the first N training steps, both ways at once")
    parser.add_argument("--every", type=int, default=5, help="with --steps: print a line per this many steps")
    args = parser.parse_args(argv)
    config = study_config(args.study)
    family = load_family(config["families"][args.family], name=args.family)
    trials = args.trials if args.trials else default_trials(family, int(config.get("trials", 20)))
    how = f"the first {args.steps} steps" if args.steps else "whole trials"
    print(f"{args.study}/{args.family}: trials {trials}, {how}, one thread each, subnormals kept vs flushed", flush=True)
    if args.steps:
        compare_steps(args, trials)
    else:
        compare_trials(args, family, trials)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
