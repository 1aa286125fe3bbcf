"""BiDAF on SQuAD v1.1 (Table 11 of Dodge et al., 2019; docs/models.md §H).

Character CNN (per-token vector dropped out) beside frozen GloVe -> highway layers -> shared phrase
biLSTM -> trilinear similarity -> context-to-query and query-to-context attention -> modeling
biLSTM -> start logits; a span-end biLSTM over the start-weighted modeling vectors -> end logits.
Loss: the negative log-likelihoods of the target's first and last token under masked
log-softmaxes; decoding takes the best span with no length limit. Adam with sampled betas and
reduce-on-plateau on exact match (mode max) come from the shared trainer. The biLSTMs run unpacked
(:class:`PaddedLstmEncoder`: the packed encoder's outputs at about half its time on a CPU).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import RATE, SIZE, resolve
from syw.models.modules import (
    CnnEncoder,
    Highway,
    TrilinearSimilarity,
    masked_log_softmax,
    masked_softmax,
    replace_masked_values,
    weighted_sum,
)
from syw.models.modules.padded_lstm import PaddedLstmEncoder
from syw.models.tasks import span as TASK
from syw.models.tasks.span import SPAN_SETTINGS, SpanData, best_span, with_chars
from syw.models.trainer import TRAINING_SETTINGS

SETTINGS = {
    **TRAINING_SETTINGS,
    **SPAN_SETTINGS,
    "optimizer": {"values": ["adam"]},
    "dropout": RATE,
    "character_embedding_dim": SIZE,
    "max_character_filter_size": SIZE,
    "num_character_filters": SIZE,
    "character_embedding_dropout": RATE,
    "highway_layers": {"type": "int", "min": 0},
    "phrase_layer_hidden_size": SIZE,
    "phrase_layers": SIZE,
    "phrase_layer_dropout": RATE,
    "modeling_layer_hidden_size": SIZE,
    "modeling_layers": SIZE,
    "modeling_layer_dropout": RATE,
    "span_end_encoder_hidden_size": SIZE,
    "span_end_encoder_layers": SIZE,
    "span_end_encoder_dropout": RATE,
}
N_CHARACTERS = 262  # AllenNLP's character embedding rows: bytes + 1, begin 259, end 260
MASKED = -1e7


class CharacterEncoder(nn.Module):
    """Step 1: character embedding (xavier-uniform) -> CNN of widths 1..K, ReLU, max over characters
    (padding characters zeroed, as AllenNLP's mask did) -> dropout of the per-token vector."""

    def __init__(self, dim: int, num_filters: int, max_width: int, dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(N_CHARACTERS, dim)
        nn.init.xavier_uniform_(self.embedding.weight)
        self.cnn = CnnEncoder(dim, num_filters, range(1, max_width + 1))
        self.max_width, self.output_dim = max_width, self.cnn.output_dim
        self.dropout = nn.Dropout(dropout)

    def forward(self, chars: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """chars (B,T,C), token mask (B,T) -> (B,T,output_dim); padded tokens are not encoded (zeros)."""
        if chars.shape[-1] < self.max_width:  # a batch of short tokens and a wide filter (Table 11's K = 6)
            chars = F.pad(chars, (0, self.max_width - chars.shape[-1]))
        tokens = chars[mask]
        encoded = chars.new_zeros(*mask.shape, self.output_dim, dtype=self.embedding.weight.dtype)
        encoded[mask] = self.cnn(self.embedding(tokens), tokens != 0)
        return self.dropout(encoded)


class BiDAF(nn.Module):
    """Passage and question of word ids (0 = padding) and character ids -> span start and end logits."""

    def __init__(self, vectors: torch.Tensor, params: Mapping[str, Any]):
        super().__init__()
        self.words = nn.Embedding.from_pretrained(vectors, freeze=True)
        self.chars = CharacterEncoder(int(params["character_embedding_dim"]), int(params["num_character_filters"]),
                                      int(params["max_character_filter_size"]), float(params["character_embedding_dropout"]))
        dim = self.chars.output_dim + vectors.shape[1]
        self.highway = Highway(dim, int(params["highway_layers"]))
        self.phrase = PaddedLstmEncoder(dim, int(params["phrase_layer_hidden_size"]), int(params["phrase_layers"]),
                                        dropout=float(params["phrase_layer_dropout"]))
        encoding = self.phrase.output_dim
        self.similarity = TrilinearSimilarity(encoding)
        self.modeling = PaddedLstmEncoder(4 * encoding, int(params["modeling_layer_hidden_size"]),
                                          int(params["modeling_layers"]), dropout=float(params["modeling_layer_dropout"]))
        modeling = self.modeling.output_dim
        self.span_end_encoder = PaddedLstmEncoder(4 * encoding + 3 * modeling, int(params["span_end_encoder_hidden_size"]),
                                                  int(params["span_end_encoder_layers"]),
                                                  dropout=float(params["span_end_encoder_dropout"]))
        self.span_start = nn.Linear(4 * encoding + modeling, 1)
        self.span_end = nn.Linear(4 * encoding + self.span_end_encoder.output_dim, 1)
        self.dropout = nn.Dropout(float(params["dropout"]))

    def embed(self, words: torch.Tensor, chars: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Step 2: [characters ; words] (AllenNLP's embedder order) through the highway layers."""
        return self.highway(torch.cat([self.chars(chars, mask), self.words(words)], dim=-1))

    def forward(self, passage: torch.Tensor, question: torch.Tensor, passage_chars: torch.Tensor,
                question_chars: torch.Tensor, span_start: torch.Tensor | None = None,
                span_end: torch.Tensor | None = None, **_: torch.Tensor) -> dict[str, torch.Tensor]:
        """Word ids (B,T), (B,J) and character ids (B,T,C), (B,J,C) -> start and end logits (B,T),
        padded positions at -1e7, the best spans, and the loss given the targets."""
        p_mask, q_mask = passage != 0, question != 0
        h = self.dropout(self.phrase(self.embed(passage, passage_chars, p_mask), p_mask))  # step 3
        u = self.dropout(self.phrase(self.embed(question, question_chars, q_mask), q_mask))
        similarity = self.similarity(h, u)  # step 4: (B,T,J)
        c2q = weighted_sum(u, masked_softmax(similarity, q_mask))  # step 5
        q2c_scores = replace_masked_values(similarity, q_mask.unsqueeze(1), MASKED).max(dim=-1).values  # step 6
        q2c = weighted_sum(h, masked_softmax(q2c_scores, p_mask)).unsqueeze(1).expand_as(h)
        g = torch.cat([h, c2q, h * c2q, h * q2c], dim=-1)  # step 7
        m = self.dropout(self.modeling(g, p_mask))  # step 8
        start_logits = self.span_start(self.dropout(torch.cat([g, m], dim=-1))).squeeze(-1)  # step 9
        s = weighted_sum(m, masked_softmax(start_logits, p_mask)).unsqueeze(1).expand_as(m)  # step 10
        m2 = self.dropout(self.span_end_encoder(torch.cat([g, m, s, m * s], dim=-1), p_mask))
        end_logits = self.span_end(self.dropout(torch.cat([g, m2], dim=-1))).squeeze(-1)  # step 11
        start_logits = replace_masked_values(start_logits, p_mask, MASKED)
        end_logits = replace_masked_values(end_logits, p_mask, MASKED)
        output = {"span_start_logits": start_logits, "span_end_logits": end_logits,
                  "best_span": best_span(start_logits, end_logits)}
        if span_start is not None and span_end is not None:  # step 12
            output["loss"] = (F.nll_loss(masked_log_softmax(start_logits, p_mask), span_start)
                              + F.nll_loss(masked_log_softmax(end_logits, p_mask), span_end))
        return output


def prepare(data: SpanData) -> SpanData:
    """The data with the character ids BiDAF reads."""
    return with_chars(data)


def build(params: Mapping[str, Any], data: SpanData) -> BiDAF:
    """The Table 11 model for one assignment, over ``data``'s vocabulary and (frozen) vectors."""
    return BiDAF(torch.from_numpy(data.vectors), params)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one BiDAF trial and return its best dev exact match (F1 beside it)."""
    params = resolve(params, SETTINGS)
    data = prepare(TASK.load(ctx, params))
    return TASK.run(params, ctx, data, lambda: build(params, data))
