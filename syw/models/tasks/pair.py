"""Sentence-pair classification (SciTail: the n-gram baseline, DAM, ESIM, DGEM): reading,
vocabulary, indexing, batching, accuracy, and one trial's run on the shared trainer.

The study's ``dataset`` block names the reader and which file serves as training and as
validation split (``{name: scitail_tokenized, train: test, dev: dev}`` trains on the released
test pairs where no train split exists). The vocabulary is lowercased and built over the training
split, or over every split read (``vocabulary: all_splits``, as AllenNLP did); an ``end_token``
(DAM's ``@@NULL@@``) is appended to both sentences. When the block names a ``test`` split too,
every epoch is also scored on it (``test_accuracy``, never used for selection), so a record holds the
test accuracy of the epoch validation selected.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.data.glove import PADDING, load_embeddings, resolve_source
from syw.data.inputs import cache_noting_inputs
from syw.data.scitail import LABELS, PairExample, read_official, read_tokenized
from syw.models.resume import trial_state
from syw.models.tasks.sentence import EMBEDDING_SEED, EVAL_BATCH_SIZE, UNKNOWN, accuracy, dataset_key
from syw.models.trainer import choose_device, train_model

# A study's dataset block names the reader; its other keys are the reader's options.
READERS: dict[str, Callable[[Path, str, Mapping[str, Any]], list[PairExample]]] = {
    "scitail_tokenized": lambda data_dir, split, dataset: read_tokenized(data_dir, split),
    "scitail": lambda data_dir, split, dataset: read_official(data_dir, split, dataset.get("format", "snli_format")),
}

PAIR_SETTINGS = {
    "embedding": {"type": "str", "null": True, "default": None},  # none for the n-gram baseline
    "vocabulary": {"values": ["train", "all_splits"], "default": "train"},
    "end_token": {"type": "str", "null": True, "default": None},
    "batching": {"values": ["bucket", "random"], "default": "bucket"},  # random: AllenNLP's basic iterator
}


@dataclass(frozen=True)
class IndexedPairs:
    """Premise and hypothesis token ids (0-padded), their lengths, the labels, the examples they
    came from, and per-pair tensors a model derives once (the n-gram's overlap features, DGEM's
    graphs), which batches carry under their names."""

    premise: torch.Tensor
    premise_lengths: torch.Tensor
    hypothesis: torch.Tensor
    hypothesis_lengths: torch.Tensor
    labels: torch.Tensor
    examples: Sequence[PairExample] = ()
    extras: Mapping[str, torch.Tensor] = field(default_factory=dict)


@dataclass(frozen=True)
class PairData:
    """Vocabulary (row order of ``vectors``), the indexed train and dev splits, the class count, and
    the indexed test split when the study scores one."""

    vocab: list[str]
    train: IndexedPairs
    dev: IndexedPairs
    n_classes: int
    vectors: np.ndarray | None = None
    test: IndexedPairs | None = None

    def map_splits(self, fn: Callable[[IndexedPairs], IndexedPairs]) -> PairData:
        """This data with ``fn`` applied to each split it holds (per-pair tensors a model derives)."""
        test = None if self.test is None else fn(self.test)
        return dataclasses.replace(self, train=fn(self.train), dev=fn(self.dev), test=test)


def read(data_dir: Path, dataset: Mapping[str, Any], role: str) -> list[PairExample]:
    """The split that plays ``role`` ("train", "dev" or "test") in the study's ``dataset`` block."""
    name = dataset.get("name")
    if name not in READERS:
        raise ValueError(f"no sentence-pair reader for data set {name!r} (have: {', '.join(READERS)})")
    return READERS[name](data_dir, dataset.get(role, role), dataset)


def _pad(rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(row) for row in rows])
    ids = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
    return ids, lengths


def index_pairs(examples: list[PairExample], token_ids: Mapping[str, int], end_token: str | None = None) -> IndexedPairs:
    """Lowercase, append ``end_token`` to both sentences, map tokens to ids (unknown -> 1), pad with 0."""
    def ids(tokens: tuple[str, ...]) -> list[int]:
        words = [token.lower() for token in tokens] + ([end_token.lower()] if end_token else [])
        return [token_ids.get(word, 1) for word in words]

    premise, premise_lengths = _pad([ids(ex.premise) for ex in examples])
    hypothesis, hypothesis_lengths = _pad([ids(ex.hypothesis) for ex in examples])
    return IndexedPairs(premise, premise_lengths, hypothesis, hypothesis_lengths,
                        torch.tensor([ex.label for ex in examples]), list(examples))


@cache_noting_inputs(maxsize=4)
def load_indexed(data_dir: Path, dataset_items: tuple, vocabulary: str,
                 end_token: str | None) -> tuple[list[str], IndexedPairs, IndexedPairs, IndexedPairs | None]:
    """Train, dev and (when the block names one) test pairs, indexed with a vocabulary over
    ``vocabulary``'s splits; cached per process."""
    dataset = dict(dataset_items)
    train, dev = read(data_dir, dataset, "train"), read(data_dir, dataset, "dev")
    test = read(data_dir, dataset, "test") if "test" in dataset else None
    over = train + dev + (test or read(data_dir, dataset, "test")) if vocabulary == "all_splits" else train
    counts = Counter(token.lower() for ex in over for token in ex.premise + ex.hypothesis)
    vocab = [PADDING, UNKNOWN] + sorted(counts, key=lambda token: (-counts[token], token))
    if end_token and end_token.lower() not in counts:
        vocab.append(end_token.lower())
    token_ids = {token: i for i, token in enumerate(vocab)}
    indexed_test = index_pairs(test, token_ids, end_token) if test is not None else None
    return vocab, index_pairs(train, token_ids, end_token), index_pairs(dev, token_ids, end_token), indexed_test


def load(ctx: TrialContext, params: Mapping[str, Any]) -> PairData:
    """The study's pairs indexed as the assignment says, with its ``embedding`` vectors."""
    vocab, train, dev, test = load_indexed(Path(ctx.data_dir), dataset_key(ctx.dataset), params["vocabulary"], params["end_token"])
    vectors = None
    if params["embedding"] is not None:
        vectors, _ = load_embeddings(vocab, resolve_source(params["embedding"], ctx.data_dir), ctx.cache_dir, seed=EMBEDDING_SEED)
    return PairData(vocab, train, dev, len(LABELS), vectors, test)


def batch_of(pairs: IndexedPairs, indices: torch.Tensor) -> dict[str, torch.Tensor]:
    """The rows ``indices``, each sentence trimmed to its longest in the batch."""
    p, h = int(pairs.premise_lengths[indices].max()), int(pairs.hypothesis_lengths[indices].max())
    batch = {"premise": pairs.premise[indices, :p], "hypothesis": pairs.hypothesis[indices, :h], "label": pairs.labels[indices]}
    return batch | {name: tensor[indices] for name, tensor in pairs.extras.items()}


def bucket_order(pairs: IndexedPairs, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Batches sorted by premise, then hypothesis length (ties at random), in random order."""
    key = pairs.premise_lengths * 10_000 + pairs.hypothesis_lengths + torch.rand(len(pairs.labels), generator=generator)
    batches = torch.argsort(key).split(batch_size)
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def training_batches(pairs: IndexedPairs, params: Mapping[str, Any], generator: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch of training batches: bucketed, or drawn at random (``batching: random``)."""
    if params.get("batching", "bucket") == "random":
        order = list(torch.randperm(len(pairs.labels), generator=generator).split(params["batch_size"]))
    else:
        order = bucket_order(pairs, params["batch_size"], generator)
    for indices in order:
        yield batch_of(pairs, indices)


def evaluation_batches(pairs: IndexedPairs) -> list[dict[str, torch.Tensor]]:
    """Dev batches sorted by premise length."""
    return [batch_of(pairs, indices) for indices in torch.argsort(pairs.premise_lengths).split(EVAL_BATCH_SIZE)]


def run(params: Mapping[str, Any], ctx: TrialContext, data: PairData, build: Callable[[], nn.Module]) -> TrialOutcome:
    """Train the model ``build()`` returns on ``data`` (shared trainer) and return its best dev accuracy."""
    device = choose_device(ctx.device)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    dev_batches = evaluation_batches(data.dev)
    test_batches = evaluation_batches(data.test) if data.test is not None else None

    def evaluate(model: nn.Module) -> dict[str, float]:
        metrics = accuracy(model, dev_batches, device)
        if test_batches is not None:
            metrics["test_accuracy"] = accuracy(model, test_batches, device)["accuracy"]
        return metrics

    result = train_model(build, lambda epoch: training_batches(data.train, params, shuffle), evaluate, params,
                         seed=ctx.seed, device=device, state=trial_state(ctx, params, shuffle))
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch, epochs_run=result.epochs_run,
                        epoch_seconds=result.epoch_seconds, epoch_metrics=result.epoch_metrics,
                        extra_metrics={k: v for k, v in result.best_metrics.items() if k != "accuracy"},
                        resumed_after_epochs=result.resumed_after)


def synthetic(n_train: int = 96, n_dev: int = 32, vocab_size: int = 40, dim: int = 8, seed: int = 0) -> PairData:
    """Generated pairs whose label is whether the hypothesis's words occur in the premise (contract tests)."""
    rng = np.random.default_rng(seed)
    words = [PADDING, UNKNOWN] + [f"w{i}" for i in range(vocab_size - 2)]
    token_ids = {word: i for i, word in enumerate(words)}

    def split(n: int) -> IndexedPairs:
        examples = []
        for label in rng.integers(2, size=n):
            premise = rng.integers(2, vocab_size, size=rng.integers(4, 10))
            hypothesis = rng.choice(premise, size=3) if label == 0 else rng.integers(2, vocab_size, size=3)
            examples.append(PairExample(tuple(words[i] for i in premise), tuple(words[i] for i in hypothesis), int(label)))
        return index_pairs(examples, token_ids)

    vectors = rng.normal(0, 0.5, size=(vocab_size, dim)).astype(np.float32)
    return PairData(words, split(n_train), split(n_dev), 2, vectors)
