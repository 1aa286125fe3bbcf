"""Single-sentence classification (SST: the LR, the CNN and the BCN): reading, vocabulary,
indexing, batching, accuracy, and one trial's run on the shared trainer.

Splits keep their examples' tokens as read; a model that reads characters (ELMo) asks for their
character ids with :func:`with_chars`, and its batches then carry ``chars`` beside ``tokens``.

Batches are sentences of similar length (``batching: bucket``: little padding, contents vary by
epoch) or random (``batching: random``: as AllenNLP's shuffling iterator drew them, each padded
to its longest sentence; a model may lay such a batch out its own way, see ``layout``).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.data.glove import PADDING, load_embeddings, resolve_source
from syw.data.inputs import cache_noting_inputs
from syw.data.sst import Example, n_classes, read_sst
from syw.models.elmo.chars import MAX_WORD_LENGTH, word_to_char_ids
from syw.models.resume import trial_state
from syw.models.trainer import choose_device, train_model

UNKNOWN = "@@UNKNOWN@@"
# Dev batches: as small as the training batches. Padding is not masked by every model (the CNN),
# so less padding keeps evaluation like training; larger batches were no faster on CPU.
EVAL_BATCH_SIZE = 64
EMBEDDING_SEED = 0  # random vectors of words missing from GloVe: shared by all trials (one cache file)
READERS = {"sst": read_sst}

SENTENCE_SETTINGS = {
    "embedding": {"type": "str"},
    "vocabulary": {"values": ["train", "train_dev_test"], "default": "train"},
    "batching": {"values": ["bucket", "random"], "default": "bucket"},
    # token ids (vocabulary and GloVe lookup) of lowercased tokens: the CNN's config lowercased
    # (docs/models.md §A), the BCN's kept case (§B)
    "lowercase": {"type": "bool", "default": True},
}


@dataclass(frozen=True)
class CharIds:
    """ELMo character ids of a split (docs/models.md §C), stored once per distinct token: row ``spellings[i, t]``
    of ``table`` holds the ids of example i's token t (row 0, all zeros, is padding)."""

    spellings: torch.Tensor  # [n, max_len] int64
    table: torch.Tensor  # [distinct tokens + 1, 50] int64


@dataclass(frozen=True)
class IndexedSplit:
    """A split as tensors: token ids (0-padded to the longest sentence), lengths and labels; the
    examples' tokens as read (case kept), and their character ids when a model asked for them."""

    tokens: torch.Tensor  # [n, max_len] int64
    lengths: torch.Tensor  # [n] int64
    labels: torch.Tensor  # [n] int64
    words: tuple[tuple[str, ...], ...] = ()
    chars: CharIds | None = None


@dataclass(frozen=True)
class SentenceData:
    """Vocabulary (row order of ``vectors``), the indexed train and dev splits, the class count."""

    vocab: list[str]
    train: IndexedSplit
    dev: IndexedSplit
    n_classes: int
    vectors: np.ndarray | None = None  # [len(vocab), dim] pretrained embeddings


Layout = Callable[[IndexedSplit, torch.Tensor], dict[str, torch.Tensor]]


def dataset_key(dataset: Mapping[str, Any]) -> tuple:
    """A study's ``dataset`` block as a hashable key of the per-process caches below."""
    return tuple(sorted(dict(dataset).items()))


def read(data_dir: Path, dataset: Mapping[str, Any], split: str, subtrees: bool = False) -> list[Example]:
    """One split of the study's data set (its ``dataset`` block names the reader and its options)."""
    name = dataset.get("name")
    if name not in READERS:
        raise ValueError(f"no single-sentence reader for data set {name!r} (have: {', '.join(READERS)})")
    return READERS[name](data_dir, split, dataset.get("granularity", "fine"), subtrees)


def build_vocab(sentences: list[list[str]]) -> list[str]:
    """Padding, unknown, then every token by decreasing count (ties alphabetical)."""
    counts = Counter(token for sentence in sentences for token in sentence)
    return [PADDING, UNKNOWN] + sorted(counts, key=lambda token: (-counts[token], token))


def index_split(examples: list[Example], token_ids: Mapping[str, int], lowercase: bool = True) -> IndexedSplit:
    """Map tokens (lowercased unless ``lowercase`` is false) to ids (unknown -> 1) and pad with 0."""
    lengths = torch.tensor([len(ex.tokens) for ex in examples])
    tokens = torch.zeros(len(examples), int(lengths.max()), dtype=torch.long)
    for i, ex in enumerate(examples):
        ids = [token_ids.get(token.lower() if lowercase else token, 1) for token in ex.tokens]
        tokens[i, : len(ids)] = torch.tensor(ids)
    return IndexedSplit(tokens, lengths, torch.tensor([ex.label for ex in examples]), tuple(ex.tokens for ex in examples))


@cache_noting_inputs(maxsize=4)
def load_indexed(data_dir: Path, dataset_items: tuple, vocabulary: str,
                 lowercase: bool = True) -> tuple[list[str], IndexedSplit, IndexedSplit]:
    """Train (all phrases when the data set says ``subtrees``) and dev (sentences), indexed; cached
    per process. ``vocabulary`` is "train" or "train_dev_test" (AllenNLP built its vocabulary
    from every data set it read)."""
    if vocabulary not in ("train", "train_dev_test"):
        raise ValueError(f"vocabulary must be 'train' or 'train_dev_test', got {vocabulary!r}")
    dataset = dict(dataset_items)
    train = read(data_dir, dataset, "train", bool(dataset.get("subtrees", False)))
    dev = read(data_dir, dataset, "dev")
    vocab_examples = train + dev + read(data_dir, dataset, "test") if vocabulary == "train_dev_test" else train
    vocab = build_vocab([[token.lower() if lowercase else token for token in ex.tokens] for ex in vocab_examples])
    token_ids = {token: i for i, token in enumerate(vocab)}
    return vocab, index_split(train, token_ids, lowercase), index_split(dev, token_ids, lowercase)


def load(ctx: TrialContext, params: Mapping[str, Any]) -> SentenceData:
    """The study's data indexed with the assignment's vocabulary, and its ``embedding`` vectors."""
    vocab, train, dev = load_indexed(Path(ctx.data_dir), dataset_key(ctx.dataset), params["vocabulary"],
                                     params["lowercase"])
    vectors, _ = load_embeddings(vocab, resolve_source(params["embedding"], ctx.data_dir), ctx.cache_dir, seed=EMBEDDING_SEED)
    return SentenceData(vocab, train, dev, n_classes(ctx.dataset.get("granularity", "fine")), vectors)


@cache_noting_inputs(maxsize=4)
def load_texts(data_dir: Path, dataset_items: tuple) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Train and dev sentences as text (tokens joined by spaces) with their labels; cached per process."""
    dataset = dict(dataset_items)
    train = read(data_dir, dataset, "train", bool(dataset.get("subtrees", False)))
    dev = read(data_dir, dataset, "dev")
    return ([" ".join(ex.tokens) for ex in train], np.array([ex.label for ex in train]),
            [" ".join(ex.tokens) for ex in dev], np.array([ex.label for ex in dev]))


def bucket_batches(lengths: torch.Tensor, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Batches of example indices sorted by length (equal lengths in random order), in random order."""
    tie_break = torch.rand(len(lengths), generator=generator)
    batches = torch.argsort(lengths + tie_break).split(batch_size)
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def random_batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Batches of example indices drawn at random, as AllenNLP's shuffling basic iterator did."""
    return list(torch.randperm(n, generator=generator).split(batch_size))


def with_chars(split: IndexedSplit) -> IndexedSplit:
    """``split`` with the character ids of its tokens as read (:class:`CharIds`): its batches carry
    ``chars`` (B, T, 50) beside ``tokens``."""
    if len(split.words) != len(split.labels):
        raise ValueError(f"the split keeps the tokens of {len(split.words)} of its {len(split.labels)} examples")
    rows: dict[str, int] = {}
    spellings = torch.zeros_like(split.tokens)
    for i, words in enumerate(split.words):
        spellings[i, :len(words)] = torch.tensor([rows.setdefault(word, len(rows) + 1) for word in words])
    table = torch.zeros(len(rows) + 1, MAX_WORD_LENGTH, dtype=torch.long)
    for word, row in rows.items():
        table[row] = torch.tensor(word_to_char_ids(word))
    return dataclasses.replace(split, chars=CharIds(spellings, table))


def _rows(x: torch.Tensor, indices: torch.Tensor, length: int) -> torch.Tensor:
    """The rows ``indices`` of ``x`` [n, T], cut or zero-padded to ``length`` columns."""
    x = x[indices, :length]
    return F.pad(x, (0, length - x.shape[1])) if x.shape[1] < length else x


def batch_of(split: IndexedSplit, indices: torch.Tensor, length: int | None = None) -> dict[str, torch.Tensor]:
    """The rows ``indices`` of ``split``, trimmed (or zero-padded) to ``length`` (default: their longest);
    with ``chars`` when the split has character ids."""
    length = int(split.lengths[indices].max()) if length is None else length
    batch = {"tokens": _rows(split.tokens, indices, length), "label": split.labels[indices]}
    if split.chars is not None:
        batch["chars"] = split.chars.table[_rows(split.chars.spellings, indices, length)]
    return batch


def training_batches(split: IndexedSplit, params: Mapping[str, Any], generator: torch.Generator,
                     layout: Layout = batch_of) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch of training batches, drawn with ``generator`` as ``params["batching"]`` says."""
    if params["batching"] == "bucket":
        order = bucket_batches(split.lengths, params["batch_size"], generator)
    else:
        order = random_batches(len(split.labels), params["batch_size"], generator)
    for indices in order:
        yield layout(split, indices)


def evaluation_batches(split: IndexedSplit, params: Mapping[str, Any], layout: Layout = batch_of) -> list[dict[str, torch.Tensor]]:
    """Dev batches: sorted by length when bucketing, else in file order (as AllenNLP validated)."""
    order = torch.argsort(split.lengths) if params["batching"] == "bucket" else torch.arange(len(split.labels))
    return [layout(split, indices) for indices in order.split(EVAL_BATCH_SIZE)]


def accuracy(model: nn.Module, batches: list[dict[str, torch.Tensor]], device: torch.device | str = "cpu") -> dict[str, float]:
    """Fraction of examples whose highest-scoring class is the label."""
    correct = total = 0
    for batch in batches:
        logits = model(**{k: v.to(device) for k, v in batch.items() if k != "label"})["logits"]
        correct += int((logits.argmax(dim=1) == batch["label"].to(device)).sum())
        total += len(batch["label"])
    return {"accuracy": correct / total}


def run(params: Mapping[str, Any], ctx: TrialContext, data: SentenceData, build: Callable[[], nn.Module],
        layout: Layout = batch_of) -> TrialOutcome:
    """Train the model ``build()`` returns on ``data`` (shared trainer) and return its best dev accuracy."""
    device = choose_device(ctx.device)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    dev_batches = evaluation_batches(data.dev, params, layout)
    result = train_model(build, lambda epoch: training_batches(data.train, params, shuffle, layout),
                         lambda model: accuracy(model, dev_batches, device), params, seed=ctx.seed, device=device,
                         state=trial_state(ctx, params, shuffle))
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch, epochs_run=result.epochs_run,
                        epoch_seconds=result.epoch_seconds, resumed_after_epochs=result.resumed_after)


def synthetic(n_train: int = 96, n_dev: int = 32, n_classes: int = 2, vocab_size: int = 40, dim: int = 8,
              seed: int = 0) -> SentenceData:
    """Generated data of the real data's shape whose label is learnable from its tokens (contract tests)."""
    rng = np.random.default_rng(seed)
    words = [PADDING, UNKNOWN] + [f"w{i}" for i in range(vocab_size - 2)]

    def split(n: int) -> IndexedSplit:
        labels = rng.integers(n_classes, size=n)
        lengths = rng.integers(2, 9, size=n)
        tokens = np.zeros((n, int(lengths.max())), dtype=np.int64)
        for i, (label, length) in enumerate(zip(labels, lengths)):
            # the label's own words are likelier: 2 + label, 2 + label + n_classes, ...
            cue = 2 + label + n_classes * rng.integers((vocab_size - 2 - label) // n_classes, size=length)
            tokens[i, :length] = np.where(rng.random(length) < 0.6, cue, rng.integers(2, vocab_size, size=length))
        return IndexedSplit(torch.from_numpy(tokens), torch.from_numpy(lengths), torch.from_numpy(labels),
                            tuple(tuple(words[t] for t in row[:length]) for row, length in zip(tokens, lengths)))

    vectors = rng.normal(0, 0.5, size=(vocab_size, dim)).astype(np.float32)
    vectors[0] = 0.0
    return SentenceData(words, split(n_train), split(n_dev), n_classes, vectors)
