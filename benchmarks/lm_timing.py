"""Seconds per epoch, tokens per second and FLOP efficiency of the Melis et al. (2018) language models: on one
thread in CPU seconds (the time a trial with a core to itself takes), or on a GPU.

For each family of ``--study`` (default ``ptb_melis_reduced``; or those named with ``--family``), the first
``--trials`` assignments of the study seed are built on the study's corpus and ``--batches`` training
windows are timed as the trainer takes them (each moved to the device, forward, backward, the norm clip,
Adam; after one untimed window), then one validation pass at ``eval_batch_size`` and one test pass at
``test_batch_size`` (its first ``--test-windows`` windows scaled to the split, when given: at batch 1 every
window costs the same). An epoch is the timed windows scaled to a pass over the training split plus a
validation at every checkpoint in it; a trial adds one test pass. Each family ends with its mean minutes
per trial and the study's trials at that pace, one trial after another on one device. FLOPs are the matrix
products torch's counter sees in one training window (forward and backward) and one validation window;
efficiency is the epoch's FLOPs per second against the device's float32 matrix-product rate
(:func:`benchmarks.flops.matmul_gflops`). ``--device cuda`` times the first GPU in wall seconds between
synchronisations, float32 kept IEEE as in a trial (``syw.models.trainer.configure_torch``).

    nice -n 19 .venv/bin/python -m benchmarks.lm_timing [--study ptb_melis_reduced] [--family lstm ...]
        [--device cuda] [--test-windows N]
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import torch

from syw.core.entry import positive_int, run_main
from syw.core.units import count
from syw.experiments.timing import study_timing
from syw.models.flops import device_seconds, efficiency, pass_flops
from syw.models.lm_budget import parameter_count
from syw.models.tasks import lm as task
from syw.models.trainer import seed_everything, update

REPO = Path(__file__).resolve().parent.parent


def prefix(stream: task.TokenStream, batch_size: int, bptt: int, windows: int | None) -> tuple[task.TokenStream, float]:
    """The first ``windows`` evaluation windows of ``stream`` (all when None) and the factor that scales
    their time to the whole split."""
    total = task.steps_per_epoch(stream, batch_size, bptt)
    if windows is None or windows >= total:
        return stream, 1.0
    tokens = windows * bptt * batch_size
    return task.TokenStream(stream.inputs[:tokens], stream.targets[:tokens]), total / windows


def time_assignment(module, params: dict, data: task.LmData, seed: int, batches: int, device: torch.device,
                    test_windows: int | None = None) -> dict[str, float]:
    """Seconds (CPU seconds, or GPU seconds on CUDA) and FLOPs of ``batches`` training windows, one
    validation pass and one test pass."""
    seed_everything(seed)
    model = module.build(params, data).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=params["lr"], eps=params["adam_eps"],
                                 betas=(params["adam_beta1"], params["adam_beta2"]), fused=True)
    windows = list(itertools.islice(task.training_batches(data.train, params, torch.Generator().manual_seed(seed)), batches + 1))

    def step(batch: dict[str, torch.Tensor]) -> None:
        update(model, model(**{k: v.to(device) for k, v in batch.items()})["loss"], optimizer, grad_norm=params["grad_norm"])

    model.train()
    window_flops = pass_flops(model, lambda: model(**{k: v.to(device) for k, v in windows[0].items()})["loss"].backward(),
                              backward=True)
    step(windows[0])
    train = device_seconds(lambda: [step(batch) for batch in windows[1:]], device)
    test, test_scale = prefix(data.test, params["test_batch_size"], params["bptt"], test_windows)
    model.eval()
    with torch.no_grad():
        def validate() -> float:
            return task.perplexity(model, data.dev, params["eval_batch_size"], params["bptt"], device)
        eval_flops = pass_flops(model, validate, backward=False)
        valid = device_seconds(validate, device)
        test_seconds = device_seconds(lambda: task.perplexity(model, test, params["test_batch_size"], params["bptt"], device),
                                      device) * test_scale
    per_epoch = task.steps_per_epoch(data.train, params["batch_size"], params["bptt"])
    checkpoints = per_epoch / params["checkpoint_every"]
    seconds = train / batches * per_epoch + valid * checkpoints
    flops = window_flops * per_epoch + eval_flops * checkpoints
    return {"epoch_seconds": seconds, "train_seconds": train / batches * per_epoch, "valid_seconds": valid,
            "checkpoints": checkpoints, "test_seconds": test_seconds, "epoch_gflop": flops / 1e9,
            "train_efficiency_gflops": window_flops / (train / batches) / 1e9, "tokens": len(data.train)}


def main(argv: list[str] | None = None) -> int:
    timing = study_timing(__doc__.splitlines()[0], "ptb_melis_reduced", trials=2, batches=10,
                          batches_help="training windows timed per assignment", argv=argv, with_device=True,
                          options=lambda parser: parser.add_argument(
                              "--test-windows", type=positive_int, help="time this many test windows and scale to the split (default: all)"))
    data = task.load_corpus(timing.data_dir, timing.study["dataset"]["name"])
    rate, device, minutes_of = timing.rate, timing.device, {}
    for a in timing.assignments():
        params = a.params
        shape = a.module.shape_of(params, len(data.vocab))
        t = time_assignment(a.module, params, data, a.seed, timing.args.batches, device, timing.args.test_windows)
        epoch, minutes = t["epoch_seconds"], (t["epoch_seconds"] * params["epochs"] + t["test_seconds"]) / 60
        minutes_of.setdefault(a.stem, []).append(minutes)
        model = f"hidden {shape.hidden}, embedding {shape.embedding}, down-projection {shape.down_projection}, depth {shape.depth}"
        test = f"test at batch {params['test_batch_size']}: {t['test_seconds']:.0f} s once per trial"
        print(f"{a.stem} trial {a.index}: {epoch:.0f} s per epoch (training {t['train_seconds']:.0f} s + {t['checkpoints']:.2f} validations of "
              f"{t['valid_seconds']:.1f} s), {t['tokens'] / epoch:,.0f} training tokens/s; {t['epoch_gflop']:,.0f} GFLOP per epoch = "
              f"{efficiency(t['epoch_gflop'] / epoch, rate)} (training windows alone {t['train_efficiency_gflops'] / rate:.0%}); {test}; "
              f"{params['epochs']} epochs = {minutes:.0f} min per trial ({model}, {parameter_count(shape):,} weights)", flush=True)
    trials = timing.study["trials"]
    for stem, minutes in minutes_of.items():
        mean = sum(minutes) / len(minutes)
        print(f"{stem}: {mean:.0f} min per trial (mean of {count(len(minutes), 'assignment')}); the study's {count(trials, 'trial')} "
              f"= {mean * trials / 60:,.1f} h ({mean * trials / 1440:,.1f} days) one after another on one {device.type.upper()} device", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
