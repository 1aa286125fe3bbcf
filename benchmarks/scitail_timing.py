"""Seconds per epoch and per trial of the SciTail families on this machine (one thread), to size a study.

For each family of ``--study`` (default ``scitail_cpu``, on the full 23,596-pair train split; or the
families named with ``--family``), the first ``--trials`` assignments of the study seed are built on
the study's data, and ``--batches`` training batches (bucketed, as trials draw them) plus one pass
over dev (and test, when the study scores it) are timed in CPU seconds of this process, the time a
trial with a core to itself takes. Printed per assignment: seconds per epoch (the timed batches
scaled to the whole train split), seconds per trial at the family's epochs, pairs per second, and
the work per epoch in GFLOP (multiply-adds of the matrix products and LSTMs, counted with torch's
FLOP counter on the timed batches) against this core's measured fp32 matrix-product rate.

    SYW_DATA_DIR=../shared/data python -m benchmarks.scitail_timing [--study scitail_cpu] [--family esim ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.experiments.timing import study_timing
from syw.models.flops import clock, efficiency, pass_flops
from syw.models.tasks import pair
from syw.models.trainer import build_optimizer, seed_everything, update

REPO = Path(__file__).resolve().parent.parent


def time_assignment(module, params: dict, ctx: TrialContext, batches: int) -> dict[str, float]:
    """CPU seconds of ``batches`` training steps and of the evaluation passes, and their FLOPs."""
    data = module.TASK.load(ctx, params)
    if hasattr(module, "prepare"):  # per-pair tensors (n-gram features, DGEM graphs) as the trial derives them
        data = module.prepare(data, params["structures"]) if "structures" in params else module.prepare(data)
    seed_everything(ctx.seed)
    model = module.build(params, data)
    optimizer = build_optimizer(model, params)
    train = list(pair.training_batches(data.train, params, torch.Generator().manual_seed(ctx.seed)))
    timed = train[:batches]
    model.train()
    flops = sum(pass_flops(model, lambda b=b: model(**b)["loss"].backward(), backward=True) for b in timed)
    optimizer.zero_grad(set_to_none=True)

    def steps() -> None:
        for batch in timed:
            update(model, model(**batch)["loss"], optimizer, grad_norm=params.get("grad_norm"),
                   grad_clipping=params.get("grad_clipping"))

    train_cpu, _ = clock(steps)
    splits = [data.dev] + ([data.test] if data.test is not None else [])
    model.eval()
    with torch.no_grad():
        eval_cpu, _ = clock(lambda: [pair.accuracy(model, pair.evaluation_batches(s)) for s in splits])
    scale = len(train) / len(timed)
    eval_pairs = sum(len(s.labels) for s in splits)
    # evaluation: a forward pass, a third of a training step's work per pair
    epoch_flops = flops * scale + flops / 3 / sum(len(b["label"]) for b in timed) * eval_pairs
    return {"epoch_seconds": train_cpu * scale + eval_cpu, "train_pairs": len(data.train.labels),
            "epoch_gflop": epoch_flops / 1e9}


def main(argv: list[str] | None = None) -> int:
    timing = study_timing(__doc__.splitlines()[0], "scitail_cpu", trials=3, batches=40,
                          batches_help="training batches timed per assignment", argv=argv)
    for a in timing.assignments():
        params = a.params
        ctx = TrialContext(study="bench", family=a.short, trial_index=a.index, seed=a.seed,
                           data_dir=timing.data_dir, cache_dir=REPO / ".cache", dataset=timing.study["dataset"])
        t = time_assignment(a.module, params, ctx, timing.args.batches)
        sizes = ", ".join(f"{k}={v}" for k, v in params.items()
                          if k in a.family.search and ("hidden" in k or k.endswith("layers")))
        epoch, gflop = t["epoch_seconds"], t["epoch_gflop"]
        share = efficiency(gflop / epoch, timing.rate)
        print(f"{a.stem} trial {a.index}: {epoch:.0f} s per epoch, {epoch * params['epochs'] / 60:.1f} min per trial at {params['epochs']} "
              f"epochs ({t['train_pairs'] / epoch:.0f} train pairs/s); ~{gflop:.0f} GFLOP per epoch = {share} ({sizes})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
