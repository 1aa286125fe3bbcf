"""Seconds per epoch of whole trials with subnormal floats kept (IEEE, torch's default) or flushed
to zero (``flush_denormal``, models/trainer.py), on one thread.

On x86 CPUs an operation on a subnormal float (|x| < 1.2e-38) can take ~100x the normal time.
Adam's moving averages of parameters whose gradients stay zero (embedding rows of words not in
recent batches, dead units) shrink geometrically towards that range, so trials can slow down as
they train; GPUs, on which the paper's time axes were measured, flush subnormals in their fast
paths. For each chosen assignment of a study's family (default: those with the highest and the
median learning rate among the study's trials) the same trial trains twice, once each way, the
order alternating between assignments; the two runs' dev scores show what flushing changed.

    SYW_DATA_DIR=../shared/data .venv/bin/python benchmarks/denormals.py [--study S] [--family F] [--trials I ...]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hydra.utils import get_method  # noqa: E402

from experiments.context import TrialContext  # noqa: E402
from experiments.space import load_family, study_config, trial_seed  # noqa: E402


def default_trials(family, n: int) -> list[int]:
    """The indices of the highest- and the median-learning-rate assignments among the first ``n``."""
    by_lr = sorted(range(n), key=lambda i: family.params(0, i)["lr"])
    return [by_lr[-1], by_lr[len(by_lr) // 2]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default="sst2_bcn_reduced")
    parser.add_argument("--family", default="glove", help="the family's short name in the study")
    parser.add_argument("--trials", type=int, nargs="*", help="assignment indices (seed 0)")
    parser.add_argument("--epochs", type=int, help="train this many epochs instead of the family's")
    args = parser.parse_args()
    config = study_config(args.study)
    family = load_family(config["families"][args.family], name=args.family)
    trials = args.trials if args.trials else default_trials(family, int(config.get("trials", 20)))
    train = get_method(family.train_target)
    data_dir = Path(os.environ.get("SYW_DATA_DIR") or REPO / ".data")
    cache_dir = Path(os.environ.get("SYW_CACHE_DIR") or REPO / ".cache")
    ratios = []
    print(f"{args.study}/{args.family}: trials {trials}, one thread each, flush off vs on", flush=True)
    for k, index in enumerate(trials):
        params = family.params(0, index)
        if args.epochs:
            params["epochs"] = args.epochs
        ctx = TrialContext(study="bench", family=args.family, trial_index=index, seed=trial_seed(0, args.family, index),
                           data_dir=data_dir, cache_dir=cache_dir, dataset=config["dataset"])
        seconds = {}
        for flush in ((False, True) if k % 2 == 0 else (True, False)):
            start = time.perf_counter()
            outcome = train({**params, "flush_denormal": flush}, ctx)
            seconds[flush] = time.perf_counter() - start
            epochs = " ".join(f"{s:.1f}" for s in outcome.epoch_seconds)
            print(f"trial {index:3d} lr {params['lr']:.2e} flush {'on ' if flush else 'off'}: {seconds[flush]:7.1f} s "
                  f"(epochs: {epochs}) {outcome.metric:.4f} at epoch {outcome.best_epoch}", flush=True)
        ratios.append(seconds[False] / seconds[True])
        print(f"trial {index:3d}: flushing ran {ratios[-1]:.2f}x as fast", flush=True)
    print(f"kept / flushed seconds: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f} "
          f"over {len(ratios)} trials")


if __name__ == "__main__":
    main()
