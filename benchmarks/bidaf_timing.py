"""Seconds per batch and per epoch of BiDAF trials on this machine (one thread), to size the reduced
SQuAD study.

The first ``--trials`` assignments of the family (study seed 0) are built on the study's data
(``--study``, default squad_reduced); a few training batches (``--batches``, after one untimed) and
about ``--dev-questions`` dev questions (batches of median passage length) are timed in CPU seconds
of this process: what a trial with a core to itself takes (the wall time, longer while other work
shares the cores, is shown beside). Printed per trial: seconds per training batch, training and
evaluation questions per second, the estimated seconds per epoch and per trial (the family's
epochs), and the rate reached in GFLOP/s against this core's fp32 matrix-product rate. torch's
FLOP counter misses the LSTMs, so their products are added from their sizes (8·H·(I+H) per token
and direction forward; training is counted as 3x the forward).
With ``--estimate N`` the first N assignments are only counted, not timed: each trial's seconds
from its FLOPs at the rate the timed trials reached, and the study's wall time at 2 trials at once.

    SYW_DATA_DIR=../shared/data python -m benchmarks.bidaf_timing [--trials 3 --batches 4 --dev-questions 128 --estimate 16]
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.core.settings import resolve
from syw.experiments.space import load_family, study_config, trial_seed
from syw.experiments.timing import data_dir, family_parser
from syw.models import bidaf
from syw.models.flops import clock, efficiency, matmul_gflops, pass_flops
from syw.models.tasks import span
from syw.models.trainer import build_optimizer, seed_everything

REPO = Path(__file__).resolve().parent.parent

LSTMS = (("phrase", "phrase_layer", "phrase_layers"), ("modeling", "modeling_layer", "modeling_layers"),
         ("span end", "span_end_encoder", "span_end_encoder_layers"))


def flops(model: nn.Module, batch: dict, train: bool) -> float:
    """FLOPs of one forward (and, with ``train``, backward) pass over ``batch``."""
    model.train(train)

    def work() -> None:
        with torch.set_grad_enabled(train):
            out = model(**batch)
            if train:
                out["loss"].backward()

    return pass_flops(model, work, train)


def tokens(batch: dict) -> int:
    return batch["passage"].numel()


def inputs(batch: dict) -> dict:
    """A batch without its targets (what evaluation feeds the model)."""
    return {k: v for k, v in batch.items() if k not in ("span_start", "span_end", "rows")}


class Trial(NamedTuple):
    """One assignment built on the study's data, with its batches and FLOPs per token."""
    head: str
    params: dict
    model: nn.Module
    batches: list[dict]
    dev: list[dict]
    train_per_token: float
    eval_per_token: float

    @property
    def train_flops(self) -> float:
        return self.train_per_token * sum(tokens(b) for b in self.batches)

    @property
    def eval_flops(self) -> float:
        return self.eval_per_token * sum(tokens(b) for b in self.dev)


def build_trial(family, index: int, data_root: Path, dataset: dict) -> Trial:
    """Trial ``index`` of the family (study seed 0): its model, training batches, dev batches and FLOPs."""
    params = resolve(family.params(0, index), bidaf.SETTINGS)
    ctx = TrialContext(study="bench", family="bidaf", trial_index=index, seed=trial_seed(0, "bidaf", index),
                       data_dir=data_root, cache_dir=REPO / ".cache", dataset=dataset)
    data = bidaf.prepare(span.load(ctx, params))
    seed_everything(ctx.seed)
    model = bidaf.build(params, data)
    batches = list(span.training_batches(data.train, params, torch.Generator().manual_seed(0)))
    dev = [inputs(span.batch_of(data.dev, rows)) for rows in span.bucket_order(data.dev, span.EVAL_BATCH_SIZE, None)]
    sizes = ", ".join(f"{name} {params[f'{key}_hidden_size']}x{params[layers]}" for name, key, layers in LSTMS)
    head = f"trial {index} ({sizes}; filters {params['num_character_filters']}x{params['max_character_filter_size']})"
    return Trial(head, params, model, batches, dev, flops(model, batches[0], True) / tokens(batches[0]),
                 flops(model, dev[0], False) / tokens(dev[0]))


def time_trial(trial: Trial, batches: int, dev_questions: int, rate: float) -> tuple[float, float]:
    """Time ``batches`` training steps and ``dev_questions`` dev questions in CPU seconds; print the
    rates and the epoch and trial estimates; return the training and evaluation FLOP rates."""
    model, params = trial.model, trial.params
    optimizer = build_optimizer(model, params)
    model.train()

    def step(batch: dict) -> None:
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()

    step(trial.batches[0])  # untimed: allocations
    timed = trial.batches[1: batches + 1]
    train_cpu, train_wall = clock(lambda: [step(b) for b in timed])
    model.eval()
    middle = len(trial.dev) // 2  # batches of median passage length
    evaluated = trial.dev[middle: middle + max(1, dev_questions // span.EVAL_BATCH_SIZE)]
    with torch.no_grad():
        eval_cpu, eval_wall = clock(lambda: [model(**b) for b in evaluated])
    n_eval = sum(len(b["passage"]) for b in evaluated)
    train_rate = trial.train_per_token * sum(tokens(b) for b in timed) / train_cpu
    eval_rate = trial.eval_per_token * sum(tokens(b) for b in evaluated) / eval_cpu
    epoch = trial.train_flops / train_rate + trial.eval_flops / eval_rate
    print(f"{trial.head}: {train_cpu / len(timed):.2f} s CPU ({train_wall / len(timed):.2f} s wall) per batch of "
          f"{params['batch_size']} = {params['batch_size'] * len(timed) / train_cpu:.1f} train questions/s, "
          f"{train_rate / 1e9:.1f} GFLOP/s ({efficiency(train_rate / 1e9, rate)}); eval "
          f"{n_eval / eval_cpu:.1f} questions/s ({eval_rate / 1e9:.1f} GFLOP/s; {eval_wall / eval_cpu:.1f}x in wall "
          f"time); epoch ~{epoch:.0f} s ({len(trial.batches)} batches, {sum(len(b['passage']) for b in trial.dev)} dev "
          f"questions), trial ~{epoch * params['epochs'] / 60:.1f} min ({params['epochs']} epochs)", flush=True)
    return train_rate, eval_rate


def estimate(rows: list[tuple[str, float, float, int]], reached: list[tuple[float, float]]) -> None:
    """Each counted trial's minutes at the mean rates the timed trials reached, and the study's hours."""
    train_rate = sum(r[0] for r in reached) / len(reached)
    eval_rate = sum(r[1] for r in reached) / len(reached)
    total = 0.0
    for head, train_flops, eval_flops, epochs in rows:
        seconds = epochs * (train_flops / train_rate + eval_flops / eval_rate)
        total += seconds
        print(f"  estimate {head}: {train_flops / 1e12:.2f} + {eval_flops / 1e12:.2f} TFLOP per epoch, ~{seconds / 60:.0f} min")
    print(f"first {len(rows)} trials: ~{total / 3600:.1f} core-hours, ~{total / 2 / 3600:.1f} h wall at 2 trials at once "
          f"(at {train_rate / 1e9:.1f} GFLOP/s training, {eval_rate / 1e9:.1f} evaluating)")


def main(argv: list[str] | None = None) -> int:
    parser = family_parser(__doc__, "squad_reduced", "squad_bidaf_reduced", trials=2)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--dev-questions", type=int, default=64)
    parser.add_argument("--estimate", type=int, default=0)
    args = parser.parse_args(argv)
    if args.estimate and args.trials < 1:
        parser.error("--estimate needs at least one timed trial (--trials) for its rates")
    torch.set_num_threads(1)
    dataset = study_config(args.study)["dataset"]
    family = load_family(args.family, name="bidaf")
    rate = matmul_gflops()
    print(f"matrix products: {rate:.1f} GFLOP/s on one thread; data: {dataset}")
    reached, rows = [], []
    for index in range(max(args.trials, args.estimate)):
        trial = build_trial(family, index, data_dir(), dataset)
        if index < args.trials:
            reached.append(time_trial(trial, args.batches, args.dev_questions, rate))
        rows.append((trial.head, trial.train_flops, trial.eval_flops, trial.params["epochs"]))
    if args.estimate:
        estimate(rows[: args.estimate], reached)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
