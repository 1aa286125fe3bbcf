"""One CNN training epoch on SST-5 train under each way of batching, in one run.

    SYW_DATA_DIR=... python -m benchmarks.cnn_batching     # (or: make bench-cnn-batching)

Times an epoch of a mid-sized as-run model (filter widths 1-4, 288 filters, projection 256,
one thread) with length-bucketed batches, and with the authors' random batches computed
plainly padded (1 piece) and in 2-8 length-sorted pieces (`models.cnn.padded_pieces`), and
prints each as a ratio to the bucketed epoch. Bucketed epochs run first and last, to show drift.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

import syw.models.cnn as cnn
import syw.models.tasks.sentence as sentence
from syw.core.entry import run_main
from syw.data.glove import load_embeddings

REPO = Path(__file__).resolve().parent.parent
MAX_FILTER_SIZE, FILTERS, PROJECTION = 4, 288, 256


def epoch_seconds(vectors: torch.Tensor, steps: list[dict[str, torch.Tensor]]) -> float:
    torch.manual_seed(0)
    model = cnn.CnnClassifier(vectors, 5, MAX_FILTER_SIZE, FILTERS, 0.2, PROJECTION)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    start = time.perf_counter()
    for step in steps:
        optimizer.zero_grad(set_to_none=True)
        model(**step)["loss"].backward()
        optimizer.step()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    torch.set_num_threads(1)
    data_dir = Path(os.environ.get("SYW_DATA_DIR", REPO / ".data"))
    vocab, train, _ = sentence.load_indexed(data_dir, sentence.dataset_key({"name": "sst", "granularity": "fine"}), "train_dev_test")
    cache = Path(os.environ.get("SYW_CACHE_DIR", REPO / ".cache"))
    vectors, _ = load_embeddings(vocab, "glove_6b_50d", cache, seed=sentence.EMBEDDING_SEED)
    vectors = torch.from_numpy(vectors)
    n, lengths = len(train.labels), train.lengths

    def bucketed() -> float:
        generator = torch.Generator().manual_seed(0)
        return epoch_seconds(vectors, [sentence.batch_of(train, i) for i in sentence.bucket_batches(lengths, 64, generator)])

    first = bucketed()
    results = {}
    for pieces in (1, 2, 4, 8):
        generator = torch.Generator().manual_seed(0)
        steps = [cnn.padded_pieces(train, i, MAX_FILTER_SIZE, pieces) for i in sentence.random_batches(n, 64, generator)]
        windows = sum(int((s["pieces"][:, 0] * s["pieces"][:, 1]).sum()) for s in steps)
        results[pieces] = (epoch_seconds(vectors, steps), windows / int(lengths.sum()))
    last = bucketed()
    base = (first + last) / 2
    print(f"bucketed batches: {first:.2f} s and {last:.2f} s per epoch (first and last run)")
    for pieces, (seconds, tokens) in results.items():
        print(f"random batches, {pieces} piece(s): {seconds:.2f} s per epoch = {seconds / base:.2f}x bucketed "
              f"({tokens:.2f}x the sentences' tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
