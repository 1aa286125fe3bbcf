"""Seconds per epoch of the SciTail families on this machine (one thread), to size the reduced study.

For each family file named (default: the three reduced ones), the first ``--trials`` assignments of
the study seed are trained for ``--epochs`` epochs on the reduced study's data (train on the 2,126
released test pairs, validate on the 1,304 dev pairs). Prints seconds per epoch (training and
validation), examples per second, and the work per epoch in GFLOP (multiply-adds of the matrix
products, counted with torch's FLOP counter on one training batch and scaled) against this core's
measured fp32 matrix-product rate.

    SYW_DATA_DIR=../shared/data python benchmarks/scitail_timing.py [--family scitail_esim_reduced ...]
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.flops import matmul_gflops, pass_flops  # noqa: E402
from experiments.context import TrialContext  # noqa: E402
from experiments.settings import resolve  # noqa: E402
from experiments.space import load_family, study_config, trial_seed  # noqa: E402
from models.tasks import pair  # noqa: E402
from models.trainer import build_optimizer, seed_everything  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", nargs="*", default=["scitail_ngram_reduced", "scitail_dam_reduced", "scitail_esim_reduced"])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data_dir = Path(os.environ.get("SYW_DATA_DIR", REPO / ".data"))
    dataset = study_config("scitail_reduced")["dataset"]
    rate = matmul_gflops()
    print(f"matrix products: {rate:.1f} GFLOP/s on one thread")
    for stem in args.family:
        family = load_family(stem)
        module = importlib.import_module(family.train_target.rpartition(".")[0])
        short = stem.split("_")[1]
        for index in range(args.trials):
            params = resolve(family.params(0, index), module.SETTINGS)
            ctx = TrialContext(study="bench", family=short, trial_index=index, seed=trial_seed(0, short, index),
                               data_dir=data_dir, cache_dir=REPO / ".cache", dataset=dataset)
            data = module.TASK.load(ctx, params)
            data = module.prepare(data) if hasattr(module, "prepare") else data
            seed_everything(ctx.seed)
            model = module.build(params, data)
            optimizer = build_optimizer(model, params)
            batches = list(pair.training_batches(data.train, params, torch.Generator().manual_seed(0)))
            step = pass_flops(model, lambda: model(**batches[0])["loss"].backward(), backward=True)
            flops = step * len(batches) + step / 3 * len(data.dev.labels) / len(batches[0]["label"])
            start = time.perf_counter()
            for _ in range(args.epochs):
                model.train()
                for batch in batches:
                    optimizer.zero_grad()
                    model(**batch)["loss"].backward()
                    optimizer.step()
                model.eval()
                with torch.no_grad():
                    pair.accuracy(model, pair.evaluation_batches(data.dev))
            seconds = (time.perf_counter() - start) / args.epochs
            sizes = ", ".join(f"{k}={v}" for k, v in params.items() if k in family.search and "hidden" in k or k.endswith("layers"))
            print(f"{stem} trial {index}: {seconds:.1f} s per epoch ({len(data.train.labels) / seconds:.0f} train pairs/s); "
                  f"~{flops / 1e9:.1f} GFLOP per epoch = {flops / 1e9 / seconds / rate:.0%} of the matrix-product rate "
                  f"(epochs {params['epochs']}, patience {params['patience']}; {sizes})", flush=True)


if __name__ == "__main__":
    main()
