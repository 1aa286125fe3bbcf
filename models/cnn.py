"""CNN sentence classifier on SST (Table 2 of Dodge et al., 2019).

The model follows AllenNLP's ``BasicClassifier`` with a ``CnnEncoder``: trainable
GloVe 50d embeddings of lowercased tokens -> one convolution per filter width
1..``max_filter_size`` with ``num_filters`` filters, ReLU and max over time ->
concatenation -> optional linear projection to ``projection_dim`` (no activation)
-> dropout -> linear layer to the classes, trained with cross-entropy. As in the
AllenNLP 0.8 encoder the paper used, padded positions are zero vectors and are not
masked out of the max. ``batching`` chooses the batches: "bucket" (sentences of
similar length together, little padding) or "random" (random batches padded to their
longest sentence, as the authors' AllenNLP iterator drew them; see
:func:`padded_pieces` for how that is computed without the padding's cost).
"""
from __future__ import annotations

import functools
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import torch
import torch.nn.functional as F
from torch import nn

from data.glove import PADDING, load_embeddings
from data.sst import Example, n_classes, read_sst
from experiments.context import TrialContext, TrialOutcome
from models.trainer import build_scheduler, choose_device, fit, seed_everything

UNKNOWN = "@@UNKNOWN@@"
# Dev batches: sorted by length, as small as the training batches. Padding windows are not
# masked, so less padding keeps evaluation like training; larger batches were no faster on CPU.
EVAL_BATCH_SIZE = 64
EMBEDDING_SEED = 0  # random vectors of words missing from GloVe: shared by all trials (one cache file)
# A random batch is encoded in this many length-sorted pieces: the same logits, fewer padded
# windows, more (smaller) matrix products; `make bench-cnn-batching` times 1, 2, 4 and 8.
RANDOM_BATCH_PIECES = 4


@dataclass(frozen=True)
class IndexedSplit:
    """A split as tensors: token ids (0-padded to the longest sentence), lengths and labels."""

    tokens: torch.Tensor  # [n, max_len] int64
    lengths: torch.Tensor  # [n] int64
    labels: torch.Tensor  # [n] int64


@dataclass(frozen=True)
class IndexedSst:
    """Vocabulary (row order of the embedding matrix) and the indexed train and dev splits."""

    vocab: list[str]
    train: IndexedSplit
    dev: IndexedSplit


def build_vocab(sentences: list[list[str]]) -> list[str]:
    """Padding, unknown, then every token by decreasing count (ties alphabetical)."""
    counts = Counter(token for sentence in sentences for token in sentence)
    return [PADDING, UNKNOWN] + sorted(counts, key=lambda token: (-counts[token], token))


def index_split(examples: list[Example], token_ids: Mapping[str, int]) -> IndexedSplit:
    """Lowercase, map tokens to ids (unknown -> 1) and pad with 0."""
    lengths = torch.tensor([len(ex.tokens) for ex in examples])
    tokens = torch.zeros(len(examples), int(lengths.max()), dtype=torch.long)
    for i, ex in enumerate(examples):
        ids = [token_ids.get(token.lower(), 1) for token in ex.tokens]
        tokens[i, : len(ids)] = torch.tensor(ids)
    return IndexedSplit(tokens, lengths, torch.tensor([ex.label for ex in examples]))


@functools.lru_cache(maxsize=4)
def load_indexed_sst(data_dir: Path, granularity: str, subtrees: bool, vocabulary: str) -> IndexedSst:
    """SST train (all phrases when ``subtrees``) and dev (sentences), indexed; cached per process.

    ``vocabulary`` is "train" (Table 2) or "train_dev_test" (the as-run variant:
    AllenNLP built its vocabulary from every data set it read).
    """
    if vocabulary not in ("train", "train_dev_test"):
        raise ValueError(f"vocabulary must be 'train' or 'train_dev_test', got {vocabulary!r}")
    train = read_sst(data_dir, "train", granularity, subtrees)
    dev = read_sst(data_dir, "dev", granularity)
    vocab_examples = train
    if vocabulary == "train_dev_test":
        vocab_examples = train + dev + read_sst(data_dir, "test", granularity)
    vocab = build_vocab([[token.lower() for token in ex.tokens] for ex in vocab_examples])
    token_ids = {token: i for i, token in enumerate(vocab)}
    return IndexedSst(vocab, index_split(train, token_ids), index_split(dev, token_ids))


class MaxOverTime(torch.autograd.Function):
    """``y.amax(dim=1)`` for [batch, time, filters] with a cheaper backward.

    Like amax, the gradient is split evenly among tied maxima; on one CPU thread
    this backward takes about half the time of amax's (no broadcast comparison).
    """

    @staticmethod
    def forward(ctx: Any, y: torch.Tensor) -> torch.Tensor:
        values = y.amax(dim=1)
        ctx.save_for_backward(y, values)
        return values

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        y, values = ctx.saved_tensors
        is_max = torch.sub(y, values.unsqueeze(1)).ge_(0)  # 1.0 at maxima, else 0.0
        return is_max.div_(is_max.sum(dim=1, keepdim=True)).mul_(grad.unsqueeze(1))


def conv_max_relu(x: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
    """``relu(conv(x)).max(time)`` for ``x`` [batch, time, dim], as one matrix product.

    Same result as ``conv(x.transpose(1, 2)).relu().amax(2)``: each window's
    vectors are concatenated into a row and multiplied by the filters flattened in
    the same (position, dim) order; the bias and ReLU are applied after the max
    (both commute with it). On one CPU thread this is ~30% faster than ``nn.Conv1d``.
    """
    batch, time, dim = x.shape
    width = conv.kernel_size[0]
    n_windows = time - width + 1
    windows = torch.cat([x[:, k : k + n_windows] for k in range(width)], dim=2)
    filters = conv.weight.transpose(1, 2).reshape(conv.out_channels, width * dim)
    y = windows.view(batch * n_windows, width * dim) @ filters.t()
    return (MaxOverTime.apply(y.view(batch, n_windows, -1)) + conv.bias).relu()


class CnnClassifier(nn.Module):
    """Embedding -> CNN encoder (max-pooled ReLU convolutions) -> [projection] -> dropout -> linear."""

    def __init__(self, embedding: torch.Tensor, n_classes: int, max_filter_size: int,
                 num_filters: int, dropout: float, projection_dim: int | None = None):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(embedding, freeze=False, padding_idx=0)
        dim = embedding.shape[1]
        self.convs = nn.ModuleList(nn.Conv1d(dim, num_filters, width)
                                   for width in range(1, max_filter_size + 1))
        encoded_dim = num_filters * max_filter_size
        self.projection = None if projection_dim is None else nn.Linear(encoded_dim, projection_dim)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(encoded_dim if projection_dim is None else projection_dim, n_classes)
        self.min_length = max_filter_size

    def forward(self, tokens: torch.Tensor, label: torch.Tensor | None = None,
                pieces: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """``tokens``: [batch, time] ids (0 = padding) -> logits [batch, classes] (and loss given labels).

        ``pieces`` ([n, 2]: rows, length) encodes consecutive rows trimmed to their
        own length, as :func:`padded_pieces` lays them out; by default all rows at once.
        """
        if tokens.shape[1] < self.min_length:
            tokens = F.pad(tokens, (0, self.min_length - tokens.shape[1]))
        x = self.embedding(tokens)  # [batch, time, dim]
        if pieces is None:
            encoded = self.encode(x)
        else:
            rows, lengths = zip(*pieces.tolist())
            encoded = torch.cat([self.encode(part[:, :length]) for part, length in zip(x.split(rows), lengths)])
        if self.projection is not None:
            encoded = self.projection(encoded)
        logits = self.classifier(self.dropout(encoded))
        output = {"logits": logits}
        if label is not None:
            output["loss"] = F.cross_entropy(logits, label)
        return output

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Embedded tokens [batch, time, dim] -> max-pooled features of every filter width."""
        return torch.cat([conv_max_relu(x, conv) for conv in self.convs], dim=1)


def bucket_batches(lengths: torch.Tensor, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Batches of example indices sorted by length (equal lengths in random order), in random order.

    The paper's config drew random batches (2.3x the tokens of SST train after
    padding; ``batching: random``); this keeps padding to ~1.5% while batch contents
    still vary by epoch.
    """
    tie_break = torch.rand(len(lengths), generator=generator)
    batches = torch.argsort(lengths + tie_break).split(batch_size)
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def random_batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Batches of example indices drawn at random, as AllenNLP's shuffling basic iterator did."""
    return list(torch.randperm(n, generator=generator).split(batch_size))


def batch_of(split: IndexedSplit, indices: torch.Tensor, length: int | None = None) -> dict[str, torch.Tensor]:
    """The rows ``indices`` of ``split``, trimmed (or zero-padded) to ``length`` (default: their longest)."""
    length = int(split.lengths[indices].max()) if length is None else length
    tokens = split.tokens[indices, :length]
    if tokens.shape[1] < length:
        tokens = F.pad(tokens, (0, length - tokens.shape[1]))
    return {"tokens": tokens, "label": split.labels[indices]}


def padded_pieces(split: IndexedSplit, indices: torch.Tensor, max_filter_size: int,
                  pieces: int = RANDOM_BATCH_PIECES) -> dict[str, torch.Tensor]:
    """The batch ``indices`` padded to its longest sentence, encoded in up to ``pieces`` shorter parts.

    Padded to length T, a sentence of length L takes the max over its real windows,
    the windows running into the padding up to position T, and, when T >= L + k for
    filter width k, all-zero windows. Sorted by length, each part is padded to
    min(T, its longest + ``max_filter_size``): every one of those windows is still
    there (all-zero windows all score the bias) and no window past T is added, so
    the logits equal those of the padded batch, for a fraction of its windows.
    Returns the sorted batch with ``pieces`` [n_parts, 2]: each part's rows and length.
    """
    longest = max(int(split.lengths[indices].max()), max_filter_size)
    by_length = indices[torch.argsort(split.lengths[indices], stable=True)]
    parts = by_length.tensor_split(min(pieces, len(indices)))
    shape = [[len(part), min(longest, int(split.lengths[part].max()) + max_filter_size)] for part in parts]
    return {**batch_of(split, by_length), "pieces": torch.tensor(shape)}


def accuracy(model: nn.Module, batches: list[dict[str, torch.Tensor]], device: torch.device) -> float:
    """Fraction of examples whose highest-scoring class is the label."""
    correct = total = 0
    for batch in batches:
        logits = model(**{k: v.to(device) for k, v in batch.items() if k != "label"})["logits"]
        correct += int((logits.argmax(dim=1) == batch["label"].to(device)).sum())
        total += len(batch["label"])
    return correct / total


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one CNN trial (Table 2) and return its best dev accuracy.

    Uses one torch thread unless ``SYW_TORCH_THREADS`` says otherwise, because
    trials run side by side, one per core.
    """
    torch.set_num_threads(max(1, int(os.environ.get("SYW_TORCH_THREADS", 1))))
    if params["optimizer"] != "adam":
        raise ValueError(f"the CNN family supports optimizer 'adam' only, got {params['optimizer']!r}")
    granularity = ctx.dataset.get("granularity", "fine")
    data = load_indexed_sst(Path(ctx.data_dir), granularity, bool(ctx.dataset.get("subtrees", False)),
                            params["vocabulary"])
    vectors, _ = load_embeddings(data.vocab, params["embedding"], ctx.cache_dir, seed=EMBEDDING_SEED)
    device = choose_device(ctx.device)
    seed_everything(ctx.seed)
    max_filter_size = int(params["max_filter_size"])
    projection_dim = params["projection_dim"]
    model = CnnClassifier(torch.from_numpy(vectors), n_classes(granularity), max_filter_size,
                          int(params["num_filters"]), float(params["dropout"]),
                          None if projection_dim is None else int(projection_dim))
    # fused Adam: one kernel over all parameters, ~4x faster than the default on CPU
    optimizer = torch.optim.Adam(model.parameters(), lr=float(params["lr"]), fused=True)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    if params["batching"] == "bucket":
        dev_batches = [batch_of(data.dev, idx)
                       for idx in torch.argsort(data.dev.lengths).split(EVAL_BATCH_SIZE)]

        def train_batches(epoch: int) -> Iterator[dict[str, torch.Tensor]]:
            for indices in bucket_batches(data.train.lengths, params["batch_size"], shuffle):
                yield batch_of(data.train, indices)
    elif params["batching"] == "random":  # dev batches in file order, as AllenNLP validated
        dev_batches = [padded_pieces(data.dev, idx, max_filter_size)
                       for idx in torch.arange(len(data.dev.labels)).split(EVAL_BATCH_SIZE)]

        def train_batches(epoch: int) -> Iterator[dict[str, torch.Tensor]]:
            for indices in random_batches(len(data.train.labels), params["batch_size"], shuffle):
                yield padded_pieces(data.train, indices, max_filter_size)
    else:
        raise ValueError(f"batching must be 'bucket' or 'random', got {params['batching']!r}")

    result = fit(model, train_batches, lambda m: accuracy(m, dev_batches, device),
                 epochs=params["epochs"], patience=params["patience"], optimizer=optimizer,
                 scheduler=build_scheduler(optimizer, params), device=device, seed=ctx.seed)
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch,
                        epochs_run=result.epochs_run, epoch_seconds=result.epoch_seconds)
