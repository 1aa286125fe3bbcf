"""Biattentive classification network on binary SST (Tables 4-6 of Dodge et al., 2019; docs/models.md §B).

``bcn_modified`` as the authors ran it: trainable GloVe (+ ELMo) -> embedding dropout ->
pre-encode feedforward -> biLSTM encoder -> self biattention -> integrator biLSTM on
[X; X−C; X⊙C] (+ ELMo at its output) -> max, min, mean and self-attentive pooling -> dropout ->
Maxout layers -> logit layer, default init. ELMo (docs/models.md §C) is mixed from a frozen or fine-tuned
biLM (``freeze_elmo``) whose scalar mixes train either way (and normalise each layer first with
``elmo_layer_norm``, off in the authors' config); a frozen biLM runs without a graph on
every batch, its states carried over, unless ``cache_elmo`` keeps each sentence's activations from
their first computation. The ``elmo`` setting names the biLM (:func:`syw.models.elmo.sources.resolve_elmo`):
the official release or one trained by ``syw pretrain-bilm``; its weights' sha256
is recorded with every trial (:class:`ElmoTrialOutcome`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.errors import DataError
from syw.core.settings import RATE, SIZE, resolve
from syw.models.elmo.bilm import BiLm, BiLmOptions
from syw.models.elmo.cached import CachedBiLm
from syw.models.elmo.checkpoint import load_bilm
from syw.models.elmo.checksum import weights_sha256
from syw.models.elmo.elmo import Elmo
from syw.models.elmo.sources import resolve_elmo
from syw.models.modules import (
    LstmEncoder,
    Maxout,
    SelfAttentivePooling,
    dot_similarity,
    feedforward_from,
    masked_max,
    masked_mean,
    masked_min,
    masked_softmax,
    weighted_sum,
)
from syw.models.tasks import sentence as TASK
from syw.models.tasks.sentence import SENTENCE_SETTINGS, SentenceData, with_chars
from syw.models.trainer import TRAINING_SETTINGS

SETTINGS = {
    **TRAINING_SETTINGS,
    **SENTENCE_SETTINGS,
    "optimizer": {"values": ["adam"]},
    # the biLM: syw.models.elmo.sources.OFFICIAL_NAME, or a folder under the cache folder (null: GloVe only)
    "elmo": {"type": "str", "null": True, "default": None},
    # the sha256 the biLM's weights must have (null: any): a study pins the biLM it was run with
    "elmo_sha256": {"type": "str", "null": True, "default": None},
    "freeze_elmo": {"type": "bool", "default": True},
    "use_integrator_output_elmo": {"type": "bool", "default": False},
    "elmo_dropout": {**RATE, "default": 0.0},  # after the scalar mixes; the authors' config: 0.0
    # the scalar mixes normalise each biLM layer before weighing it (AllenNLP's do_layer_norm);
    # the authors' config: off
    "elmo_layer_norm": {"type": "bool", "default": False},
    "cache_elmo": {"type": "bool", "default": False},
    "embedding_dropout": RATE,
    "pre_encode_ff_layers": SIZE,
    "pre_encode_ff_hidden_dims": SIZE,
    "pre_encode_ff_activation": {"values": ["relu", "tanh"]},
    "pre_encode_ff_dropout": RATE,
    "encoder_hidden_size": SIZE,
    "encoder_layers": SIZE,
    "integrator_hidden_size": SIZE,
    "integrator_layers": SIZE,
    "integrator_dropout": RATE,
    "output_layers": SIZE,
    "output_hidden_size": SIZE,
    "output_dropout": RATE,
    "output_pool_sizes": SIZE,
}
# Generated data (the contract tests) has random vectors in place of GloVe and this randomly
# initialised biLM in place of a trained one.
GENERATED_DATA_BILM = BiLmOptions(char_dim=4, filters=((1, 4), (2, 8), (3, 8)), n_highway=1, n_characters=262,
                                  max_characters_per_token=50, cell_dim=16, projection_dim=8, n_layers=2,
                                  cell_clip=3.0, proj_clip=3.0, use_skip_connections=True)


def integrator_input(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Self biattention (docs/models.md §B steps 5-6): A = masked_softmax(X·Xᵀ), C = A·X -> [X; X−C; X⊙C] (B,T,3D)."""
    context = weighted_sum(x, masked_softmax(dot_similarity(x, x), mask))
    return torch.cat([x, x - context, x * context], dim=-1)


def pool(x: torch.Tensor, mask: torch.Tensor, attentive: SelfAttentivePooling) -> torch.Tensor:
    """Max, min, mean and self-attentive pooling over the real positions (docs/models.md §B step 8) -> (B, 4D)."""
    return torch.cat([masked_max(x, mask), masked_min(x, mask), masked_mean(x, mask), attentive(x, mask)], dim=-1)


class Bcn(nn.Module):
    """Token ids (and ELMo character ids) -> logits over the classes (docs/models.md §B)."""

    def __init__(self, vectors: torch.Tensor, n_classes: int, params: Mapping[str, Any], bilm: nn.Module | None = None):
        super().__init__()
        self.use_integrator_output_elmo = bool(params["use_integrator_output_elmo"])
        if self.use_integrator_output_elmo and bilm is None:
            raise ValueError("use_integrator_output_elmo needs a biLM (the elmo setting is null)")
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=False)
        self.elmo = None if bilm is None else Elmo(None, None, 1 + self.use_integrator_output_elmo,
                                                   requires_grad=not params["freeze_elmo"],
                                                   dropout=float(params["elmo_dropout"]),
                                                   do_layer_norm=bool(params["elmo_layer_norm"]), bilm=bilm)
        elmo_dim = 0 if self.elmo is None else self.elmo.output_dim
        self.embedding_dropout = nn.Dropout(float(params["embedding_dropout"]))
        self.pre_encode = feedforward_from(params, "pre_encode_ff", vectors.shape[1] + elmo_dim)
        self.encoder = LstmEncoder(self.pre_encode.output_dim, int(params["encoder_hidden_size"]),
                                   int(params["encoder_layers"]))
        self.integrator = LstmEncoder(3 * self.encoder.output_dim, int(params["integrator_hidden_size"]),
                                      int(params["integrator_layers"]))
        pooled_dim = self.integrator.output_dim + (elmo_dim if self.use_integrator_output_elmo else 0)
        self.attentive_pooling = SelfAttentivePooling(pooled_dim)
        self.integrator_dropout = nn.Dropout(float(params["integrator_dropout"]))
        self.output = Maxout(4 * pooled_dim, int(params["output_layers"]), int(params["output_hidden_size"]),
                             int(params["output_pool_sizes"]), float(params["output_dropout"]))
        self.logits = nn.Linear(self.output.output_dim, n_classes)

    def forward(self, tokens: torch.Tensor, label: torch.Tensor | None = None,
                chars: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """``tokens`` (B,T) ids (0 = padding), ``chars`` (B,T,50) when ELMo is used -> logits (B, classes)."""
        mask = tokens != 0
        x = self.embedding(tokens)
        if self.elmo is not None:
            if chars is None:
                raise ValueError("this BCN mixes ELMo: its batches need chars (models.tasks.sentence.with_chars)")
            elmo = self.elmo(chars)["elmo_representations"]
            x = torch.cat([x, elmo[0]], dim=-1)
        encoded = self.encoder(self.pre_encode(self.embedding_dropout(x)), mask)
        integrated = self.integrator(integrator_input(encoded, mask), mask)
        if self.use_integrator_output_elmo:
            integrated = torch.cat([integrated, elmo[1]], dim=-1)
        pooled = pool(integrated, mask, self.attentive_pooling)
        logits = self.logits(self.output(self.integrator_dropout(pooled)))
        output = {"logits": logits}
        if label is not None:
            output["loss"] = F.cross_entropy(logits, label)
        return output


def prepare(data: SentenceData) -> SentenceData:
    """``data`` whose splits carry ELMo character ids of their tokens as read (batches get ``chars``)."""
    return dataclasses.replace(data, train=with_chars(data.train), dev=with_chars(data.dev))


def build(params: Mapping[str, Any], data: SentenceData, bilm: BiLm | None = None) -> Bcn:
    """The Tables 4-6 model for one assignment over ``data``'s vectors, mixing ``bilm`` when the
    ``elmo`` setting names one (without ``bilm``: a random :data:`GENERATED_DATA_BILM`, for generated data)."""
    if params["elmo"] is not None:
        bilm = bilm if bilm is not None else BiLm(GENERATED_DATA_BILM)
        if params["cache_elmo"] and params["freeze_elmo"]:
            bilm = CachedBiLm(bilm)
    return Bcn(torch.from_numpy(data.vectors), data.n_classes, params, bilm if params["elmo"] is not None else None)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one BCN trial (Tables 4-6) and return its best dev accuracy (with the biLM's sha256)."""
    params = resolve(params, SETTINGS)
    data = TASK.load(ctx, params)
    if params["elmo"] is None:
        return TASK.run(params, ctx, data, lambda: build(params, data))
    options, weights = resolve_elmo(params["elmo"], ctx.data_dir, ctx.cache_dir)
    sha256 = weights_sha256(weights)
    if params["elmo_sha256"] not in (None, sha256):
        raise DataError(f"{weights}: sha256 {sha256}, but the family's elmo_sha256 is {params['elmo_sha256']}: not "
                        "the biLM its trials were run with; rebuild that one with the command in the family file "
                        "(`syw pretrain-bilm` is deterministic on one machine), or change elmo_sha256")
    data = prepare(data)
    outcome = TASK.run(params, ctx, data, lambda: build(params, data, load_bilm(options, weights)))
    return dataclasses.replace(outcome, inputs_sha256={**outcome.inputs_sha256, "elmo_weights": sha256})
