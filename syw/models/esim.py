"""ESIM on SciTail (Table 8 of Dodge et al., 2019; docs/models.md §E).

Trainable GloVe -> variational dropout -> shared biLSTM encoder -> soft alignment of premise and
hypothesis (E = a·bᵀ, masked softmaxes) -> enhancement [x; x̃; x−x̃; x⊙x̃] -> projection
feedforward (no dropout) -> variational dropout -> shared inference biLSTM -> masked mean and max
pooling of both -> dropout -> output feedforward -> linear logits. Every feedforward and logit
weight xavier-uniform with zero bias; LSTMs with ESIM's initialisation (orthogonal recurrent
weights, forget-gate bias 1). Table 8 reports two logits; the authors' config kept SNLI's three
(``num_logits: 3``; class 2 is never a target and counts as an error when predicted).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import RATE, SIZE, resolve
from syw.models.modules import (
    LstmEncoder,
    VariationalDropout,
    dot_similarity,
    feedforward_from,
    init_linear_,
    masked_max,
    masked_mean,
    masked_softmax,
    weighted_sum,
)
from syw.models.tasks import pair as TASK
from syw.models.tasks.pair import PAIR_SETTINGS, PairData
from syw.models.trainer import TRAINING_SETTINGS, classification_output

_ACTIVATION = {"values": ["relu", "tanh"]}
SETTINGS = {
    **TRAINING_SETTINGS,
    **PAIR_SETTINGS,
    "embedding": {"type": "str"},
    "encoder_hidden_size": SIZE,
    "encoder_layers": SIZE,
    "dropout": RATE,
    "projection_ff_layers": SIZE,
    "projection_ff_hidden_dims": SIZE,
    "projection_ff_activation": _ACTIVATION,
    "inference_encoder_layers": SIZE,
    # not in Table 8; the authors sampled it apart from the encoder's size (null: the encoder's)
    "inference_encoder_hidden_size": {"type": "int", "min": 1, "null": True, "default": None},
    "output_ff_layers": SIZE,
    "output_ff_hidden_dims": SIZE,
    "output_ff_activation": _ACTIVATION,
    "output_ff_dropout": RATE,
    "num_logits": {"values": [2, 3], "default": 2},
}


class Esim(nn.Module):
    """Encode, align, enhance, compose and pool a premise and a hypothesis of token ids (0 = padding)."""

    def __init__(self, vectors: torch.Tensor, params: Mapping[str, Any]):
        super().__init__()
        hidden = int(params["encoder_hidden_size"])
        inference = int(params["inference_encoder_hidden_size"] or hidden)
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=False)
        self.variational = VariationalDropout(float(params["dropout"]))
        self.encoder = LstmEncoder(vectors.shape[1], hidden, int(params["encoder_layers"]), esim_init=True)
        self.projection = feedforward_from(params, "projection_ff", 4 * self.encoder.output_dim, dropout=0.0)
        self.inference = LstmEncoder(self.projection.output_dim, inference, int(params["inference_encoder_layers"]),
                                     esim_init=True)
        self.dropout = nn.Dropout(float(params["dropout"]))
        self.output = feedforward_from(params, "output_ff", 4 * self.inference.output_dim)
        self.logits = nn.Linear(self.output.output_dim, int(params["num_logits"]))
        for part in (self.projection, self.output, self.logits):
            init_linear_(part, "xavier_uniform", zero_bias=True)

    def forward(self, premise: torch.Tensor, hypothesis: torch.Tensor, label: torch.Tensor | None = None,
                **_: torch.Tensor) -> dict[str, torch.Tensor]:
        """Token ids (B,La), (B,Lb) -> logits (B, num_logits), and the loss given labels."""
        a_mask, b_mask = premise != 0, hypothesis != 0
        a = self.encoder(self.variational(self.embedding(premise)), a_mask)
        b = self.encoder(self.variational(self.embedding(hypothesis)), b_mask)
        scores = dot_similarity(a, b)
        a_aligned = weighted_sum(b, masked_softmax(scores, b_mask))
        b_aligned = weighted_sum(a, masked_softmax(scores.transpose(1, 2), a_mask))
        pooled = []
        for x, aligned, mask in ((a, a_aligned, a_mask), (b, b_aligned, b_mask)):
            enhanced = torch.cat([x, aligned, x - aligned, x * aligned], dim=-1)
            composed = self.inference(self.variational(self.projection(enhanced)), mask)
            pooled += [masked_mean(composed, mask), masked_max(composed, mask)]
        logits = self.logits(self.output(self.dropout(torch.cat(pooled, dim=-1))))
        return classification_output(logits, label)


def build(params: Mapping[str, Any], data: PairData) -> Esim:
    """The Table 8 model for one assignment, over ``data``'s vocabulary and vectors."""
    return Esim(torch.from_numpy(data.vectors), params)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one ESIM trial and return its best dev accuracy."""
    params = resolve(params, SETTINGS)
    data = TASK.load(ctx, params)
    return TASK.run(params, ctx, data, lambda: build(params, data))
