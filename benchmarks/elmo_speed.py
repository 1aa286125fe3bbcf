"""Tokens per second of the ELMo biLM (models/elmo/bilm.py) on one CPU thread, forward and forward+backward.

A biLM of cell 512, projection 128 and 2 layers, with the official char CNN's widths at a
quarter of its filters (512, as the LSTM is scaled down; the full 2048 filters and their
2048-wide highway layers alone would take ~10x the LSTM's time), on random character ids,
batch 32 x 20 tokens (22 positions with the boundary tokens). Each line also times the
biLSTM alone, the hot path. Usage:
``.venv/bin/python -m benchmarks.elmo_speed [--repeats N]``.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import torch

from syw.core.entry import run_main
from syw.models.elmo.bilm import BiLm, BiLmOptions
from syw.models.elmo.chars import add_sentence_boundaries

OPTIONS = BiLmOptions(char_dim=16, filters=((1, 8), (2, 8), (3, 16), (4, 32), (5, 64), (6, 128), (7, 256)),
                      n_highway=2, n_characters=262, max_characters_per_token=50, cell_dim=512,
                      projection_dim=128, n_layers=2, cell_clip=3.0, proj_clip=3.0, use_skip_connections=True)
BATCH, TOKENS = 32, 20


def seconds_per_call(run: Callable[[], None], repeats: int) -> float:
    """The fastest of ``repeats`` timed calls, after one warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    """Print tokens per second of the whole biLM and of its biLSTM, forward and forward+backward."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    bilm = BiLm(OPTIONS)
    # words of 3-12 random bytes (ids 1-256 are the shifted bytes), every row 20 words long
    char_ids = torch.zeros(BATCH, TOKENS, 50, dtype=torch.long)
    lengths = torch.randint(3, 13, (BATCH, TOKENS))
    for row in range(BATCH):
        for token in range(TOKENS):
            word = torch.randint(1, 257, (int(lengths[row, token]),))
            char_ids[row, token, :len(word) + 2] = torch.cat([torch.tensor([259]), word, torch.tensor([260])])
    tokens = bilm.token_embedder(add_sentence_boundaries(char_ids)[0]).detach().requires_grad_()
    mask = torch.ones(BATCH, TOKENS + 2, dtype=torch.bool)

    def forward_backward(run: Callable[[], list[torch.Tensor]]) -> Callable[[], None]:
        return lambda: sum(layer.sum() for layer in run()).backward()

    def no_grad(run: Callable[[], list[torch.Tensor]]) -> Callable[[], None]:
        def call() -> None:
            with torch.no_grad():
                run()
        return call

    whole, lstm = (lambda: bilm(char_ids)[0]), (lambda: bilm.lstm(tokens, mask))
    print(f"biLM cell {OPTIONS.cell_dim}, projection {OPTIONS.projection_dim}, {OPTIONS.n_layers} layers, "
          f"{OPTIONS.n_filters} char filters; batch {BATCH} x {TOKENS} tokens; 1 thread; best of {args.repeats}")
    for name, make in [("forward", no_grad), ("forward+backward", forward_backward)]:
        rates = [BATCH * TOKENS / seconds_per_call(make(run), args.repeats) for run in (whole, lstm)]
        print(f"{name:>17}: {rates[0]:8.0f} tokens/s whole biLM, {rates[1]:8.0f} tokens/s biLSTM alone")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
