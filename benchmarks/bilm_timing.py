"""Pretraining speed of models/elmo/pretrain.py's biLM at a few sizes: tokens per second of whole
training steps (forward, backward, Adam) on 64 sentences of 25 words from a 20,000-word
vocabulary with 1,024 sampled softmax candidates, by wall clock and per CPU second of this process
(on a busy machine, one thread's CPU time is what an idle core would take; with 2 threads an idle
machine's wall rate lies between the CPU-second rate and twice it), and the FLOPs per token (torch's
counter over the character CNN, the LSTM's products and the sampled softmax, forward and backward)
against this core's matrix-product rate. Usage:

    .venv/bin/python -m benchmarks.bilm_timing [--steps N] [--threads 1 2]
"""
from __future__ import annotations

import argparse
import random
import sys

import torch

from syw.core.entry import run_main
from syw.models.elmo.lm import Encoded, LanguageModel
from syw.models.elmo.pretrain import bilm_options
from syw.models.flops import clock, efficiency, matmul_gflops, pass_flops

SIZES = [(512, 128, 4), (256, 64, 8), (128, 32, 16)]  # cell, projection, filter divisor
VOCAB, BATCH, LENGTH, SAMPLES = 20_000, 64, 25, 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    args = parser.parse_args(argv)
    rng = random.Random(0)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10))) for _ in range(VOCAB)]
    sentences = [[rng.choice(words) for _ in range(LENGTH)] for _ in range(BATCH)]
    data = Encoded(sentences, {w: i for i, w in enumerate(words)})
    rate = matmul_gflops()
    for cell, projection, divisor in SIZES:
        for threads in args.threads:
            torch.set_num_threads(threads)
            torch.manual_seed(0)
            options = bilm_options(cell, projection, divisor)
            model = LanguageModel(options, VOCAB)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

            def step() -> None:
                loss = model.loss(*data.batch(list(range(BATCH))), SAMPLES)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

            flops = pass_flops(model, lambda: model.loss(*data.batch(list(range(BATCH))), SAMPLES).backward(), backward=True)
            step()
            cpu, wall = clock(lambda: [step() for _ in range(args.steps)])
            tokens, weights = BATCH * LENGTH * args.steps, sum(p.numel() for p in model.bilm.parameters())
            share = efficiency(flops * args.steps / 1e9 / cpu, rate)
            per_token = f"{flops / BATCH / LENGTH / 1e6:.1f} MFLOP per token = {share} ({rate:.0f} GFLOP/s)"
            print(f"cell {cell}, projection {projection}, {options.n_filters} char filters, {threads} thread(s): {tokens / wall:,.0f} tokens/s wall, "
                  f"{tokens / cpu:,.0f} tokens per CPU second ({weights:,} biLM weights); {per_token}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
