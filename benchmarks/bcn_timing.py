"""Seconds per epoch of the BCN families on this machine (one thread), to size the reduced study.

For each family of the study (default sst2_bcn_reduced; ``--family`` picks files), its first
``--trials`` assignments of seed 0 train for one epoch (or the first ``--fraction`` of its batches,
scaled up) on that study's data (the 6,920 SST-2 training sentences) and validate on the 872 dev
sentences. ELMo families get a randomly initialised biLM of the size the
family's folder holds, else of ``syw.models.elmo.pretrain``'s default size (the time does not depend on
the weights). Prints wall seconds and this process's CPU seconds per epoch (on a busy machine the
CPU seconds are what an idle core would take), and the CPU seconds of the biLM alone over the
training batches (forward; and backward when fine-tuned).

    SYW_DATA_DIR=../shared/data .venv/bin/python -m benchmarks.bcn_timing [--family ...] [--trials N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple

import torch

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.core.settings import resolve
from syw.experiments.space import load_family, study_config, trial_seed
from syw.experiments.timing import data_dir
from syw.models import bcn
from syw.models.elmo.bilm import BiLm
from syw.models.elmo.options import read_options
from syw.models.elmo.pretrain import bilm_options
from syw.models.flops import clock, efficiency, matmul_gflops, pass_flops
from syw.models.tasks import sentence
from syw.models.trainer import build_optimizer, seed_everything

REPO = Path(__file__).resolve().parent.parent

SIZES = ("pre_encode_ff_hidden_dims", "pre_encode_ff_layers", "encoder_hidden_size", "encoder_layers",
         "integrator_hidden_size", "integrator_layers", "use_integrator_output_elmo")


class Trial(NamedTuple):
    """One assignment built on the study's data: the model, its optimizer, the batches and the biLM."""
    params: dict
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    batches: list[dict]
    dev: list[dict]
    bilm: BiLm | None


def build_trial(name: str, family, index: int, config: dict, cache_dir: Path, fraction: float) -> Trial:
    """Trial ``index`` of the family (study seed 0) with the first ``fraction`` of an epoch's batches."""
    params = resolve(family.params(0, index), bcn.SETTINGS)
    ctx = TrialContext(study="bench", family=name, trial_index=index, seed=trial_seed(0, name, index),
                       data_dir=data_dir(), cache_dir=cache_dir, dataset=config["dataset"])
    data = sentence.load(ctx, params)
    bilm = None
    if params["elmo"] is not None:
        data = bcn.prepare(data)
        options = cache_dir / params["elmo"] / "options.json"
        bilm = BiLm(read_options(options) if options.is_file() else bilm_options())
    seed_everything(ctx.seed)
    model = bcn.build(params, data, bilm)
    batches = list(sentence.training_batches(data.train, params, torch.Generator().manual_seed(0)))
    return Trial(params, model, build_optimizer(model, params), batches[:max(1, round(fraction * len(batches)))],
                 sentence.evaluation_batches(data.dev, params), bilm)


def time_epoch(trial: Trial, fraction: float, rate: float) -> str:
    """Train on the trial's batches and validate, timed; the line saying seconds, tokens per second,
    minutes per trial and the share of the matrix-product rate."""
    model, optimizer, batches, params = trial.model, trial.optimizer, trial.batches, trial.params
    model.train()
    per_token = pass_flops(model, lambda: model(**batches[0])["loss"].backward(), backward=True) / tokens(batches[0])
    optimizer.zero_grad()

    def train() -> None:
        for batch in batches:
            optimizer.zero_grad()
            model(**batch)["loss"].backward()
            optimizer.step()

    train_cpu, train_wall = clock(train)
    model.eval()
    with torch.no_grad():
        eval_cpu, eval_wall = clock(lambda: sentence.accuracy(model, trial.dev))
        accuracy = sentence.accuracy(model, trial.dev)["accuracy"]
    cpu, wall = train_cpu / fraction + eval_cpu, train_wall / fraction + eval_wall
    epoch_tokens = sum(tokens(b) for b in batches) / fraction
    flops = per_token * epoch_tokens + per_token / 3 * sum(tokens(b) for b in trial.dev)
    share = "" if trial.bilm is None else f", of which the biLM alone {bilm_seconds(trial.bilm, batches, params) / fraction:.1f}"
    sizes = ", ".join(f"{k}={params[k]}" for k in SIZES if k in params)
    return (f"{wall:.1f} s wall, {cpu:.1f} CPU s per epoch{share}; {epoch_tokens / train_cpu * fraction:,.0f} "
            f"training tokens per CPU s; trial ~{cpu * params['epochs'] / 60:.1f} min ({params['epochs']} epochs); "
            f"~{flops / 1e9:.0f} GFLOP per epoch = {efficiency(flops / 1e9 / cpu, rate)} "
            f"(dev accuracy after {fraction:g} epoch {accuracy:.3f}; {sizes})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default="sst2_bcn_reduced")
    parser.add_argument("--family", nargs="*")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="time this fraction of an epoch's training batches (they come in random order) and scale up")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rate = matmul_gflops()
    print(f"matrix products: {rate:.1f} GFLOP/s on one thread", flush=True)
    config = study_config(args.study)
    cache_dir = Path(os.environ.get("SYW_CACHE_DIR") or REPO / ".cache")
    families = {name: stem for name, stem in config["families"].items() if not args.family or stem in args.family}
    for name, stem in families.items():
        family = load_family(stem, name=name)  # the study's short name: it seeds the assignments
        for index in range(args.trials):
            trial = build_trial(name, family, index, config, cache_dir, args.fraction)
            print(f"{stem} trial {index}: {time_epoch(trial, args.fraction, rate)}", flush=True)
    return 0


def tokens(batch: dict) -> int:
    """The words of a batch (padding excluded)."""
    return int(batch["tokens"].ne(0).sum())


def bilm_seconds(bilm: BiLm, batches: list[dict], params: dict) -> float:
    """CPU seconds of the biLM alone over the training batches: forward, and backward when fine-tuned."""
    start = time.process_time()
    for batch in batches:
        with torch.set_grad_enabled(not params["freeze_elmo"]):
            layers, _ = bilm(batch["chars"])
            if not params["freeze_elmo"]:
                sum(layer.sum() for layer in layers).backward()
    return time.process_time() - start


if __name__ == "__main__":
    sys.exit(run_main(main))
