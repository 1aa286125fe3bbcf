"""The decomposable attention model on SciTail (Table 7 of Dodge et al., 2019; docs/models.md §D).

Frozen GloVe -> linear projection (with bias) of both sentences, each ending in the NULL token;
attend: E = F(a)·F(b)ᵀ with the attend feedforward F on each token; β = softmax over b of E
applied to the *projected* hypothesis, α likewise over a; compare feedforward G on [a; β] and
[b; α], padded positions zeroed, summed over positions; aggregate feedforward on [v1; v2]; a
linear output layer over the two labels. Every feedforward and projection weight xavier-normal.
Adagrad; ``grad_norm`` rescales the gradients' norm (as Table 7 reads), ``grad_clipping``
clamps each element (as the authors ran it).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import RATE, SIZE, resolve
from syw.models.modules import dot_similarity, feedforward_from, masked_softmax, weighted_sum
from syw.models.tasks import pair as TASK
from syw.models.tasks.pair import PAIR_SETTINGS, PairData
from syw.models.trainer import TRAINING_SETTINGS, classification_output

SETTINGS = {
    **TRAINING_SETTINGS,
    **PAIR_SETTINGS,
    "embedding": {"type": "str"},
    "optimizer": {"values": ["adagrad"]},
    "embedding_projection_dim": SIZE,
    **{f"{ff}_ff_{key}": spec for ff in ("attend", "compare", "aggregate") for key, spec in (
        ("layers", SIZE), ("hidden_dims", SIZE), ("activation", {"values": ["relu", "tanh"]}),
        ("dropout", RATE))},
}


class DecomposableAttention(nn.Module):
    """Attend, compare, aggregate over a premise and a hypothesis of token ids (0 = padding)."""

    def __init__(self, vectors: torch.Tensor, params: Mapping[str, Any], n_classes: int):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=True)
        dim = int(params["embedding_projection_dim"])
        self.projection = nn.Linear(vectors.shape[1], dim)
        self.attend = feedforward_from(params, "attend_ff", dim)
        self.compare = feedforward_from(params, "compare_ff", 2 * dim)
        self.aggregate = feedforward_from(params, "aggregate_ff", 2 * self.compare.output_dim)
        self.output = nn.Linear(self.aggregate.output_dim, n_classes)
        for part in (self.projection, self.attend, self.compare, self.aggregate, self.output):
            for linear in (m for m in part.modules() if isinstance(m, nn.Linear)):
                nn.init.xavier_normal_(linear.weight)  # biases keep torch's default, as the authors'

    def forward(self, premise: torch.Tensor, hypothesis: torch.Tensor, label: torch.Tensor | None = None,
                **_: torch.Tensor) -> dict[str, torch.Tensor]:
        """Token ids (B,La), (B,Lb) -> logits (B, classes), and the loss given labels."""
        a_mask, b_mask = premise != 0, hypothesis != 0
        a, b = self.projection(self.embedding(premise)), self.projection(self.embedding(hypothesis))
        scores = dot_similarity(self.attend(a), self.attend(b))  # (B, La, Lb)
        beta = weighted_sum(b, masked_softmax(scores, b_mask))  # b aligned to each premise token
        alpha = weighted_sum(a, masked_softmax(scores.transpose(1, 2), a_mask))
        v1 = (self.compare(torch.cat([a, beta], dim=-1)) * a_mask.unsqueeze(-1)).sum(dim=1)
        v2 = (self.compare(torch.cat([b, alpha], dim=-1)) * b_mask.unsqueeze(-1)).sum(dim=1)
        logits = self.output(self.aggregate(torch.cat([v1, v2], dim=-1)))
        return classification_output(logits, label)


def build(params: Mapping[str, Any], data: PairData) -> DecomposableAttention:
    """The Table 7 model for one assignment, over ``data``'s vocabulary and vectors."""
    return DecomposableAttention(torch.from_numpy(data.vectors), params, data.n_classes)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one DAM trial and return its best dev accuracy."""
    params = resolve(params, SETTINGS)
    data = TASK.load(ctx, params)
    return TASK.run(params, ctx, data, lambda: build(params, data))
