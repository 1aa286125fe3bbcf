"""The SciTail n-gram overlap baseline (Table 9 of Dodge et al., 2019; docs/models.md §F).

Three features per pair, in this order: the share of the hypothesis's 1-skip trigrams, 1-skip
bigrams and unigrams that also occur in the premise, over *sets* of token tuples, case kept (an
empty hypothesis set gives 0.0, where the original code divided by zero). A feedforward
classifier (num_layers x hidden_size, activation, dropout after every layer) and a linear output
layer over the two labels; every linear weight xavier-normal.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import RATE, SIZE, resolve
from syw.models.modules import feedforward_from, init_linear_
from syw.models.tasks import pair as TASK
from syw.models.tasks.pair import PAIR_SETTINGS, IndexedPairs, PairData
from syw.models.trainer import TRAINING_SETTINGS, classification_output

SETTINGS = {
    **TRAINING_SETTINGS,
    **PAIR_SETTINGS,
    "num_layers": SIZE,
    "hidden_size": SIZE,
    "activation": {"values": ["relu", "tanh"]},
    "dropout": RATE,
}


def skip_grams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The set of 1-skip n-grams (n = 1, 2, 3): tokens i < j (< k) spanning at most n + 1 positions."""
    if n == 1:
        return {(token,) for token in tokens}
    out = set()
    for i in range(len(tokens)):
        window = range(i + 1, min(len(tokens), i + n + 1))
        if n == 2:
            out.update((tokens[i], tokens[j]) for j in window)
        else:
            out.update((tokens[i], tokens[j], tokens[k]) for j in window for k in window if j < k)
    return out


def overlap_features(premise: Sequence[str], hypothesis: Sequence[str]) -> list[float]:
    """[trigram, bigram, unigram] overlap: |S(P) & S(H)| / |S(H)| for 1-skip n-gram sets S."""
    features = []
    for n in (3, 2, 1):
        ours = skip_grams(hypothesis, n)
        features.append(len(skip_grams(premise, n) & ours) / len(ours) if ours else 0.0)
    return features


def prepare(data: PairData) -> PairData:
    """``data`` with each split's overlap features computed once from its examples' tokens."""
    def featurize(pairs: IndexedPairs) -> IndexedPairs:
        rows = [overlap_features(ex.premise, ex.hypothesis) for ex in pairs.examples]
        return dataclasses.replace(pairs, extras={"features": torch.tensor(rows, dtype=torch.float32)})

    return data.map_splits(featurize)


class NgramClassifier(nn.Module):
    """Overlap features (B, 3) -> feedforward -> linear logits over the labels."""

    def __init__(self, params: Mapping[str, Any], n_classes: int):
        super().__init__()
        self.feedforward = feedforward_from(params, "", 3)
        self.output = nn.Linear(self.feedforward.output_dim, n_classes)
        init_linear_(self, "xavier_normal")

    def forward(self, features: torch.Tensor, label: torch.Tensor | None = None, **_: torch.Tensor) -> dict[str, torch.Tensor]:
        """``features`` (B, 3) -> logits (B, classes), and the loss given labels (token ids are not used)."""
        logits = self.output(self.feedforward(features))
        return classification_output(logits, label)


def build(params: Mapping[str, Any], data: PairData) -> NgramClassifier:
    """The Table 9 classifier for one assignment."""
    return NgramClassifier(params, data.n_classes)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one n-gram baseline trial and return its best dev accuracy."""
    params = resolve(params, SETTINGS)
    data = prepare(TASK.load(ctx, params))
    return TASK.run(params, ctx, data, lambda: build(params, data))
