"""Span extraction (SQuAD: BiDAF): indexing, batching, best-span decoding and the official exact
match and F1, and one trial's run on the shared trainer (exact match selects, F1 is kept beside).

A reader turns a data set into :class:`SpanExample` s: a passage's tokens with their character
offsets, a question's tokens, the target token span and every gold answer text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from experiments.context import TrialContext, TrialOutcome
from models.tasks.sentence import EVAL_BATCH_SIZE
from models.tasks.squad_metric import score
from models.trainer import choose_device, train_model

@dataclass(frozen=True)
class SpanExample:
    """One question about one passage; ``span`` is the target's first and last token (inclusive)."""

    qid: str
    passage: str
    passage_tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]  # each passage token's [start, end) in ``passage``
    question_tokens: tuple[str, ...]
    span: tuple[int, int]
    answers: tuple[str, ...]


@dataclass(frozen=True)
class IndexedSpans:
    """Passage and question token ids (0-padded) with lengths, the target spans, and the examples."""

    passage: torch.Tensor
    passage_lengths: torch.Tensor
    question: torch.Tensor
    question_lengths: torch.Tensor
    span_start: torch.Tensor
    span_end: torch.Tensor
    examples: Sequence[SpanExample]


def index_spans(examples: Sequence[SpanExample], token_ids: Mapping[str, int]) -> IndexedSpans:
    """Lowercase, map tokens to ids (unknown -> 1) and pad with 0."""
    def pad(rows: list[tuple[str, ...]]) -> tuple[torch.Tensor, torch.Tensor]:
        lengths = torch.tensor([len(row) for row in rows])
        ids = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor([token_ids.get(token.lower(), 1) for token in row])
        return ids, lengths

    passage, passage_lengths = pad([ex.passage_tokens for ex in examples])
    question, question_lengths = pad([ex.question_tokens for ex in examples])
    return IndexedSpans(passage, passage_lengths, question, question_lengths, torch.tensor([ex.span[0] for ex in examples]),
                        torch.tensor([ex.span[1] for ex in examples]), list(examples))


def batch_of(spans: IndexedSpans, indices: torch.Tensor) -> dict[str, torch.Tensor]:
    """The rows ``indices``, passages and questions trimmed to their longest in the batch."""
    p, q = int(spans.passage_lengths[indices].max()), int(spans.question_lengths[indices].max())
    return {"passage": spans.passage[indices, :p], "question": spans.question[indices, :q],
            "span_start": spans.span_start[indices], "span_end": spans.span_end[indices], "rows": indices}


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


def predict(model: nn.Module, spans: IndexedSpans, device: torch.device | str = "cpu") -> dict[str, str]:
    """Question id -> predicted answer text; ``model(**batch)`` returns ``span_start_logits`` and ``span_end_logits``."""
    predictions = {}
    for indices in bucket_order(spans, EVAL_BATCH_SIZE, None):
        batch = batch_of(spans, indices)
        out = model(**{k: v.to(device) for k, v in batch.items() if k in ("passage", "question")})
        for row, span in zip(indices.tolist(), best_span(out["span_start_logits"], out["span_end_logits"]).tolist()):
            example = spans.examples[row]
            predictions[example.qid] = answer_text(example, span)
    return predictions


def evaluate(model: nn.Module, spans: IndexedSpans, device: torch.device | str = "cpu") -> dict[str, float]:
    """Exact match and F1 (fractions) of the model's best spans against every gold answer."""
    return score(predict(model, spans, device), {ex.qid: list(ex.answers) for ex in spans.examples})


def run(params: Mapping[str, Any], ctx: TrialContext, train: IndexedSpans, dev: IndexedSpans,
        build: Callable[[], nn.Module]) -> TrialOutcome:
    """Train the model ``build()`` returns; the best dev exact match, with F1 kept beside it."""
    device = choose_device(ctx.device)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    result = train_model(build, lambda epoch: training_batches(train, params, shuffle),
                         lambda model: evaluate(model, dev, device), params, seed=ctx.seed, device=device,
                         metric="exact_match")
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch, epochs_run=result.epochs_run,
                        epoch_seconds=result.epoch_seconds,
                        extra_metrics={k: v for k, v in result.best_metrics.items() if k != "exact_match"})


@dataclass(frozen=True)
class SpanData:
    """Vocabulary (row order of ``vectors``) and the indexed train and dev questions."""

    vocab: list[str]
    train: IndexedSpans
    dev: IndexedSpans
    vectors: np.ndarray | None = None


def synthetic(n: int = 48, vocab_size: int = 30, dim: int = 8, seed: int = 0) -> SpanData:
    """Generated passages whose answer is the token after the question's cue word (contract tests)."""
    rng = np.random.default_rng(seed)
    vocab = ["@@PADDING@@", "@@UNKNOWN@@"] + [f"w{i}" for i in range(vocab_size - 2)]
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
