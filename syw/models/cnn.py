"""CNN sentence classifier on SST (Table 2 of Dodge et al., 2019; docs/models.md §A).

AllenNLP's ``BasicClassifier`` with a ``CnnEncoder``: trainable GloVe 50d embeddings of
lowercased tokens -> one convolution per filter width 1..``max_filter_size`` with ``num_filters``
filters, ReLU and max over time -> concatenation -> optional linear projection to
``projection_dim`` (no activation) -> dropout -> linear layer to the classes, trained with
cross-entropy. As in the AllenNLP 0.8 encoder the paper used, padded positions are zero vectors
and are not masked out of the max, so with ``batching: random`` a sentence's score depends on its
batch's padding; :func:`padded_pieces` computes exactly that without the padding's cost.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import RATE, SIZE, resolve
from syw.models.modules import CnnEncoder
from syw.models.tasks import sentence as TASK
from syw.models.tasks.sentence import SENTENCE_SETTINGS, IndexedSplit, SentenceData, batch_of
from syw.models.trainer import TRAINING_SETTINGS, classification_output

# A random batch is encoded in this many length-sorted pieces: the same logits, fewer padded
# windows, more (smaller) matrix products; `make bench-cnn-batching` times 1, 2, 4 and 8.
RANDOM_BATCH_PIECES = 4

SETTINGS = {
    **TRAINING_SETTINGS,
    **SENTENCE_SETTINGS,
    "optimizer": {"values": ["adam"]},
    "encoder": {"values": ["convnet"], "default": "convnet"},  # Table 2's "ConvNet": the only encoder here
    "max_filter_size": SIZE,
    "num_filters": SIZE,
    "dropout": RATE,
    "projection_dim": {"type": "int", "min": 1, "null": True, "default": None},
}


class CnnClassifier(nn.Module):
    """Embedding -> CNN encoder (max-pooled ReLU convolutions) -> [projection] -> dropout -> linear."""

    def __init__(self, embedding: torch.Tensor, n_classes: int, max_filter_size: int,
                 num_filters: int, dropout: float, projection_dim: int | None = None):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(embedding, freeze=False, padding_idx=0)
        self.encoder = CnnEncoder(embedding.shape[1], num_filters, range(1, max_filter_size + 1))
        self.projection = None if projection_dim is None else nn.Linear(self.encoder.output_dim, projection_dim)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(self.encoder.output_dim if projection_dim is None else projection_dim, n_classes)
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
            encoded = self.encoder(x)
        else:
            rows, lengths = zip(*pieces.tolist())
            encoded = torch.cat([self.encoder(part[:, :length]) for part, length in zip(x.split(rows), lengths)])
        if self.projection is not None:
            encoded = self.projection(encoded)
        logits = self.classifier(self.dropout(encoded))
        return classification_output(logits, label)


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


def build(params: Mapping[str, Any], data: SentenceData) -> CnnClassifier:
    """The Table 2 classifier for one assignment, over ``data``'s vocabulary and vectors."""
    projection_dim = params.get("projection_dim")
    return CnnClassifier(torch.from_numpy(data.vectors), data.n_classes, int(params["max_filter_size"]),
                         int(params["num_filters"]), float(params["dropout"]),
                         None if projection_dim is None else int(projection_dim))


def layout(params: Mapping[str, Any]) -> TASK.Layout:
    """How a batch is laid out: random batches in length-sorted pieces (:func:`padded_pieces`)."""
    if params["batching"] == "random":
        return functools.partial(padded_pieces, max_filter_size=int(params["max_filter_size"]))
    return batch_of


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one CNN trial (Table 2) and return its best dev accuracy."""
    params = resolve(params, SETTINGS)
    data = TASK.load(ctx, params)
    return TASK.run(params, ctx, data, lambda: build(params, data), layout(params))
