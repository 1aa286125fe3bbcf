"""Seconds per epoch, tokens per second and FLOP efficiency of the Melis et al. (2018) language models at
the reduced study's sizes, on one thread in CPU seconds (the time a trial with a core to itself takes).

For each family of ``--study`` (default ``ptb_melis_reduced``; or those named with ``--family``), the first
``--trials`` assignments of the study seed are built on the study's corpus and ``--batches`` training
windows are timed as the trainer takes them (forward, backward, the norm clip, Adam), then one validation
pass at ``eval_batch_size`` and one test pass at ``test_batch_size``. An epoch is the timed windows scaled
to a pass over the training split plus a validation at every checkpoint in it; a trial adds one test pass.
FLOPs are the matrix products torch's counter sees in one training window (forward and backward) and one
validation window; efficiency is the epoch's FLOPs per CPU second against this core's fp32
matrix-product rate (:func:`benchmarks.flops.matmul_gflops`).

    nice -n 19 .venv/bin/python benchmarks/lm_timing.py [--study ptb_melis_reduced] [--family lstm ...]
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.flops import clock, efficiency, pass_flops, study_timing  # noqa: E402
from syw.entry import run_main  # noqa: E402
from syw.models.lm_budget import parameter_count  # noqa: E402
from syw.models.tasks import lm as task  # noqa: E402
from syw.models.trainer import seed_everything, update  # noqa: E402


def time_assignment(module, params: dict, data: task.LmData, seed: int, batches: int) -> dict[str, float]:
    """CPU seconds and FLOPs of ``batches`` training windows, one validation pass and one test pass."""
    seed_everything(seed)
    model = module.build(params, data)
    optimizer = torch.optim.Adam(model.parameters(), lr=params["lr"], eps=params["adam_eps"],
                                 betas=(params["adam_beta1"], params["adam_beta2"]), fused=True)
    windows = list(itertools.islice(task.training_batches(data.train, params, torch.Generator().manual_seed(seed)), batches + 1))
    model.train()
    window_flops = pass_flops(model, lambda: model(**windows[0])["loss"].backward(), backward=True)
    optimizer.zero_grad(set_to_none=True)

    def steps() -> None:
        for batch in windows[1:]:
            update(model, model(**batch)["loss"], optimizer, grad_norm=params["grad_norm"])

    train_cpu, _ = clock(steps)
    model.eval()
    with torch.no_grad():
        eval_flops = pass_flops(model, lambda: task.perplexity(model, data.dev, params["eval_batch_size"], params["bptt"]),
                                backward=False)
        valid_cpu, _ = clock(lambda: task.perplexity(model, data.dev, params["eval_batch_size"], params["bptt"]))
        test_cpu, _ = clock(lambda: task.perplexity(model, data.test, params["test_batch_size"], params["bptt"]))
    per_epoch = task.steps_per_epoch(data.train, params["batch_size"], params["bptt"])
    checkpoints = per_epoch / params["checkpoint_every"]
    seconds = train_cpu / batches * per_epoch + valid_cpu * checkpoints
    flops = window_flops * per_epoch + eval_flops * checkpoints
    return {"epoch_seconds": seconds, "train_seconds": train_cpu / batches * per_epoch, "valid_seconds": valid_cpu,
            "checkpoints": checkpoints, "test_seconds": test_cpu, "epoch_gflop": flops / 1e9,
            "train_efficiency_gflops": window_flops / (train_cpu / batches) / 1e9, "tokens": len(data.train)}


def main(argv: list[str] | None = None) -> int:
    timing = study_timing(__doc__.splitlines()[0], "ptb_melis_reduced", trials=2, batches=10,
                          batches_help="training windows timed per assignment", argv=argv)
    data = task.load_corpus(timing.data_dir, timing.study["dataset"]["name"])
    rate = timing.rate
    for a in timing.assignments():
        params = a.params
        shape = a.module.shape_of(params, len(data.vocab))
        t = time_assignment(a.module, params, data, a.seed, timing.args.batches)
        epoch, minutes = t["epoch_seconds"], (t["epoch_seconds"] * params["epochs"] + t["test_seconds"]) / 60
        model = f"hidden {shape.hidden}, embedding {shape.embedding}, down-projection {shape.down_projection}, depth {shape.depth}"
        test = f"test at batch {params['test_batch_size']}: {t['test_seconds']:.0f} s once per trial"
        print(f"{a.stem} trial {a.index}: {epoch:.0f} s per epoch (training {t['train_seconds']:.0f} s + {t['checkpoints']:.2f} validations of "
              f"{t['valid_seconds']:.1f} s), {t['tokens'] / epoch:,.0f} training tokens/s; {t['epoch_gflop']:,.0f} GFLOP per epoch = "
              f"{efficiency(t['epoch_gflop'] / epoch, rate)} (training windows alone {t['train_efficiency_gflops'] / rate:.0%}); {test}; "
              f"{params['epochs']} epochs = {minutes:.0f} min per trial ({model}, {parameter_count(shape):,} weights)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
