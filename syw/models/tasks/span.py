"""Span extraction (SQuAD: BiDAF): reading, vocabulary, indexing (word and character ids),
batching, best-span decoding, the official exact match and F1, and one trial's run on the shared
trainer (exact match selects, F1 is kept beside).

The study's ``dataset`` block names the data set and the subset read (``{name: squad}``: all of
it; ``train_articles``, ``dev_questions`` and ``train_window`` read the first articles of train,
the first questions of dev, and training passages cut to a window around the answer; see
:mod:`syw.data.squad`). The vocabulary is lowercased, over the training questions or over train and
dev (``vocabulary: all_splits``, as AllenNLP built it). Each distinct passage is stored once.
A model that reads characters asks for their ids with :func:`with_chars`; its batches then carry
``passage_chars`` and ``question_chars`` beside the word ids.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.data.glove import PADDING, load_embeddings, resolve_source
from syw.data.inputs import cache_noting_inputs, note_input
from syw.data.squad import SpanExample, read_file, split_file
from syw.models.tasks.sentence import EMBEDDING_SEED, EVAL_BATCH_SIZE, UNKNOWN, build_vocab, dataset_key
from syw.models.tasks.squad_metric import score
from syw.models.trainer import choose_device, train_model

SPAN_SETTINGS = {
    "embedding": {"type": "str"},
    "vocabulary": {"values": ["train", "all_splits"], "default": "train"},
}
# A study's dataset block: the data set and the subset read (data.squad.read_file's options).
DATASET_KEYS = {"name", "version", "train_articles", "dev_questions", "train_window"}
# AllenNLP's character indexer for BiDAF (docs/models.md §H): UTF-8 bytes + 1, every token wrapped in these
# two ids, padded with 0 to its batch's longest token and to at least MIN_CHARS.
BEGIN_TOKEN, END_TOKEN, MIN_CHARS = 259, 260, 5


@dataclass(frozen=True)
class CharIds:
    """Character ids: row ``passage[k, t]`` (``question[i, t]``) of ``table`` spells token t of
    passage k (question i); row 0 is padding, ``lengths`` counts each row's ids."""

    passage: torch.Tensor  # [n_passages, Tp]
    question: torch.Tensor  # [n, Tq]
    table: torch.Tensor  # [distinct tokens + 1, longest]
    lengths: torch.Tensor  # [distinct tokens + 1]


@dataclass(frozen=True)
class IndexedSpans:
    """Word ids (0-padded) of each distinct passage and of each question, which passage each
    question reads, lengths, the target spans, the examples, and character ids when asked for."""

    passages: torch.Tensor  # [n_passages, Tp]
    passage_of: torch.Tensor  # [n]
    passage_lengths: torch.Tensor  # [n], of the passage question i reads
    question: torch.Tensor  # [n, Tq]
    question_lengths: torch.Tensor  # [n]
    span_start: torch.Tensor
    span_end: torch.Tensor
    examples: Sequence[SpanExample]
    chars: CharIds | None = None

    @property
    def passage(self) -> torch.Tensor:
        """[n, Tp] the passage of every question (a copy per question)."""
        return self.passages[self.passage_of]


@dataclass(frozen=True)
class SpanData:
    """Vocabulary (row order of ``vectors``) and the indexed train and dev questions."""

    vocab: list[str]
    train: IndexedSpans
    dev: IndexedSpans
    vectors: np.ndarray | None = None


def _pad(rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(row) for row in rows])
    ids = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return ids, lengths


def _passage_key(example: SpanExample) -> tuple:
    return example.passage, example.offsets[0], len(example.offsets)


def index_spans(examples: Sequence[SpanExample], token_ids: Mapping[str, int]) -> IndexedSpans:
    """Lowercase, map tokens to ids (unknown -> 1) and pad with 0; each distinct passage once."""
    def ids(tokens: Sequence[str]) -> list[int]:
        return [token_ids.get(token.lower(), 1) for token in tokens]

    rows: dict[tuple, int] = {}
    passage_of = [rows.setdefault(_passage_key(ex), len(rows)) for ex in examples]
    first = {row: ex for ex, row in reversed(list(zip(examples, passage_of)))}
    passages, lengths = _pad([ids(first[row].passage_tokens) for row in range(len(rows))])
    question, question_lengths = _pad([ids(ex.question_tokens) for ex in examples])
    passage_of = torch.tensor(passage_of)
    return IndexedSpans(passages, passage_of, lengths[passage_of], question, question_lengths,
                        torch.tensor([ex.span[0] for ex in examples]), torch.tensor([ex.span[1] for ex in examples]),
                        list(examples))


def char_ids(token: str) -> list[int]:
    """The character ids of one token (docs/models.md §H): begin, UTF-8 bytes + 1, end."""
    return [BEGIN_TOKEN, *(byte + 1 for byte in token.encode("utf-8")), END_TOKEN]


def with_chars(data: SpanData) -> SpanData:
    """``data`` with the character ids of its tokens as read (case kept), one table for both splits:
    its batches carry ``passage_chars`` (B, Tp, C) and ``question_chars`` (B, Tq, C)."""
    spellings: dict[str, int] = {}

    def rows(token_lists: Sequence[Sequence[str]]) -> torch.Tensor:
        return _pad([[spellings.setdefault(token, len(spellings) + 1) for token in tokens] for tokens in token_lists])[0]

    def split_chars(spans: IndexedSpans) -> tuple[torch.Tensor, torch.Tensor]:
        first = {int(row): ex for ex, row in reversed(list(zip(spans.examples, spans.passage_of)))}
        passages = [first[k].passage_tokens for k in range(len(spans.passages))]
        return rows(passages), rows([ex.question_tokens for ex in spans.examples])

    train, dev = split_chars(data.train), split_chars(data.dev)
    table, lengths = _pad([[]] + [char_ids(token) for token in spellings])
    return dataclasses.replace(data, train=dataclasses.replace(data.train, chars=CharIds(*train, table, lengths)),
                               dev=dataclasses.replace(data.dev, chars=CharIds(*dev, table, lengths)))


@cache_noting_inputs(maxsize=2)
def load_indexed(data_dir: Path, dataset_items: tuple, vocabulary: str) -> tuple[list[str], IndexedSpans, IndexedSpans]:
    """Train and dev questions, indexed with a vocabulary over ``vocabulary``'s splits; cached per process, the
    files read noted as ``squad/<name>`` (which train file, official or rebuilt) for the trial's record."""
    dataset = dict(dataset_items)
    if dataset.get("name") != "squad":
        raise ValueError(f"no span reader for data set {dataset.get('name')!r} (have: squad)")
    unknown = sorted(set(dataset) - DATASET_KEYS)
    if unknown:
        raise ValueError(f"dataset.{unknown[0]}: not a SQuAD reader option (have: {', '.join(sorted(DATASET_KEYS))})")
    files = {split: split_file(data_dir, split)[0] for split in ("train", "dev")}
    for path in files.values():  # before reading: the version noted is the one read
        note_input(f"squad/{path.name}", path)
    train = read_file(files["train"], articles=dataset.get("train_articles"), window_tokens=dataset.get("train_window"))
    dev = read_file(files["dev"], questions=dataset.get("dev_questions"))
    over = train + dev if vocabulary == "all_splits" else train
    passages = {_passage_key(ex): ex.passage_tokens for ex in over}.values()
    vocab = build_vocab([[t.lower() for t in tokens] for tokens in [*passages, *(ex.question_tokens for ex in over)]])
    token_ids = {token: i for i, token in enumerate(vocab)}
    return vocab, index_spans(train, token_ids), index_spans(dev, token_ids)


def load(ctx: TrialContext, params: Mapping[str, Any]) -> SpanData:
    """The study's questions indexed as the assignment says, with its ``embedding`` vectors."""
    vocab, train, dev = load_indexed(Path(ctx.data_dir), dataset_key(ctx.dataset), params["vocabulary"])
    vectors, _ = load_embeddings(vocab, resolve_source(params["embedding"], ctx.data_dir), ctx.cache_dir, seed=EMBEDDING_SEED)
    return SpanData(vocab, train, dev, vectors)


def batch_of(spans: IndexedSpans, indices: torch.Tensor) -> dict[str, torch.Tensor]:
    """The rows ``indices``, passages and questions trimmed to their longest in the batch (and each
    token's characters to the longest token's, at least :data:`MIN_CHARS`)."""
    p, q = int(spans.passage_lengths[indices].max()), int(spans.question_lengths[indices].max())
    rows = spans.passage_of[indices]
    batch = {"passage": spans.passages[rows, :p], "question": spans.question[indices, :q],
             "span_start": spans.span_start[indices], "span_end": spans.span_end[indices], "rows": indices}
    if spans.chars is not None:
        fields = (("passage_chars", spans.chars.passage[rows, :p]), ("question_chars", spans.chars.question[indices, :q]))
        for name, spellings in fields:
            width = max(MIN_CHARS, int(spans.chars.lengths[spellings].max()))
            batch[name] = spans.chars.table[spellings][:, :, :width]
    return batch


def bucket_order(spans: IndexedSpans, batch_size: int, generator: torch.Generator | None) -> list[torch.Tensor]:
    """Batches sorted by passage, then question length (ties at random when a generator is given)."""
    noise = torch.rand(len(spans.span_start), generator=generator) if generator is not None else 0
    batches = torch.argsort(spans.passage_lengths * 10_000 + spans.question_lengths + noise).split(batch_size)
    if generator is None:
        return list(batches)
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def training_batches(spans: IndexedSpans, params: Mapping[str, Any], generator: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch of bucketed training batches."""
    for indices in bucket_order(spans, params["batch_size"], generator):
        yield batch_of(spans, indices)


def best_span(start_logits: torch.Tensor, end_logits: torch.Tensor) -> torch.Tensor:
    """(B, 2) first and last token of the span maximising start_i + end_j with i <= j, no length limit.

    Padded positions must already hold a very negative value.
    """
    best_start, where = torch.cummax(start_logits, dim=1)  # best start at or before each end
    end = (best_start + end_logits).argmax(dim=1)
    return torch.stack([where.gather(1, end[:, None]).squeeze(1), end], dim=1)


def answer_text(example: SpanExample, span: Sequence[int]) -> str:
    """The passage text from the span's first token's start to its last token's end."""
    return example.passage[example.offsets[span[0]][0]: example.offsets[span[1]][1]]


def predict(model: nn.Module, spans: IndexedSpans, device: torch.device | str = "cpu",
            progress: Callable[[int, int], object] | None = None) -> dict[str, str]:
    """Question id -> predicted answer text; ``model(**inputs)`` returns ``span_start_logits`` and
    ``span_end_logits`` (the inputs: a batch without its targets). ``progress(done, total)`` is
    called after each batch."""
    predictions = {}
    for indices in bucket_order(spans, EVAL_BATCH_SIZE, None):
        batch = batch_of(spans, indices)
        out = model(**{k: v.to(device) for k, v in batch.items() if k not in ("span_start", "span_end", "rows")})
        for row, span in zip(indices.tolist(), best_span(out["span_start_logits"], out["span_end_logits"]).tolist()):
            example = spans.examples[row]
            predictions[example.qid] = answer_text(example, span)
        if progress is not None:
            progress(len(predictions), len(spans.examples))
    return predictions


def evaluate(model: nn.Module, spans: IndexedSpans, device: torch.device | str = "cpu") -> dict[str, float]:
    """Exact match and F1 (fractions) of the model's best spans against every gold answer."""
    return score(predict(model, spans, device), {ex.qid: list(ex.answers) for ex in spans.examples})


def _publish(path: str | Path, write: Callable[[Path], object]) -> Path:
    """``write`` a file beside ``path``, then rename it there: readers never see a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    write(part)
    part.replace(path)
    return path


def write_predictions(predictions: Mapping[str, str], path: str | Path) -> Path:
    """Write question id -> answer text as JSON (the official evaluation script's prediction file),
    atomically, gzip-compressed (with a fixed timestamp: the same predictions, the same bytes) when
    ``path`` ends in ``.gz``; return the path."""
    data = (json.dumps(dict(predictions), ensure_ascii=False, indent=0) + "\n").encode("utf-8")
    if Path(path).suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    return _publish(path, lambda part: part.write_bytes(data))


def save_checkpoint(state: Mapping[str, torch.Tensor], vocab: Sequence[str], params: Mapping[str, Any], path: Path) -> Path:
    """Write a model's weights with the vocabulary its word ids index (read by
    :mod:`syw.experiments.rescore`), atomically; return the path."""
    return _publish(path, lambda part: torch.save({"state": dict(state), "vocab": list(vocab), "params": dict(params)}, part))


def run(params: Mapping[str, Any], ctx: TrialContext, data: SpanData, build: Callable[[], nn.Module]) -> TrialOutcome:
    """Train the model ``build()`` returns; the best dev exact match, with F1 kept beside it. When
    the runner gives an output folder, the best epoch's dev predictions (question id -> answer
    text) and weights are written there, under ``predictions/`` and ``checkpoints/``."""
    device = choose_device(ctx.device)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    keep_state = ctx.output_dir is not None  # the weights are copied only to be written
    best: dict[str, Any] = {"exact_match": -1.0, "predictions": {}, "state": {}}

    def validate(model: nn.Module) -> dict[str, float]:
        predictions = predict(model, data.dev, device)
        metrics = score(predictions, {ex.qid: list(ex.answers) for ex in data.dev.examples})
        if metrics["exact_match"] > best["exact_match"]:  # the trainer's rule: strictly better
            best.update(exact_match=metrics["exact_match"], predictions=predictions)
            if keep_state:
                best["state"] = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        return metrics

    result = train_model(build, lambda epoch: training_batches(data.train, params, shuffle), validate, params,
                         seed=ctx.seed, device=device, metric="exact_match")
    outputs = {}
    if keep_state:
        predictions_path, checkpoint_path = ctx.output_path("predictions", "json"), ctx.output_path("checkpoints", "pt")
        write_predictions(best["predictions"], predictions_path)
        save_checkpoint(best["state"], data.vocab, params, checkpoint_path)
        outputs = {kind: str(path.relative_to(ctx.output_dir)) for kind, path in
                   (("predictions", predictions_path), ("checkpoint", checkpoint_path))}
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch, epochs_run=result.epochs_run,
                        epoch_seconds=result.epoch_seconds,
                        extra_metrics={k: v for k, v in result.best_metrics.items() if k != "exact_match"},
                        outputs=outputs)


def synthetic(n: int = 48, vocab_size: int = 30, dim: int = 8, seed: int = 0) -> SpanData:
    """Generated passages whose answer is the token after the question's cue word (contract tests)."""
    rng = np.random.default_rng(seed)
    vocab = [PADDING, UNKNOWN] + [f"w{i}" for i in range(vocab_size - 2)]
    examples = []
    for i in range(n):
        tokens = [vocab[k] for k in rng.integers(2, vocab_size, size=rng.integers(6, 14))]
        cue = int(rng.integers(len(tokens) - 1))
        text, offsets = "", []
        for token in tokens:
            offsets.append((len(text), len(text) + len(token)))
            text += token + " "
        examples.append(SpanExample(f"q{i}", text.strip(), tuple(tokens), tuple(offsets), ("where", tokens[cue]),
                                    (cue + 1, cue + 1), (tokens[cue + 1],)))
    token_ids = {token: k for k, token in enumerate(vocab)}
    spans = index_spans(examples, token_ids)
    return SpanData(vocab, spans, spans, rng.normal(0, 0.5, size=(vocab_size, dim)).astype(np.float32))
