"""The language models of Melis et al. (2018, section 2, figure 1; docs/models.md §I): LSTM (capped input
gate, or its untied and tied variants), RHN and NAS cells under a parameter budget.

Embedding lookup -> input dropout -> recurrent cells (LSTM, NAS: ``depth`` stacked layers, intra-layer
dropout between them; RHN: one cell of ``depth`` micro-steps) -> the SUM of every layer's outputs
(additive skip connections) -> output dropout -> optional down-projection (no bias) -> output dropout
-> softmax, whose weights are the input embedding when ``tied_embeddings`` (the paper's default). Input,
intra-layer and output dropout draw their masks independently at every time step; state dropout draws
one mask per window and layer, reused at every step and shared between gates (variational, the paper's
footnote 1), or, with ``state_dropout_kind: recurrent``, masks the proposed update instead (Semeniuta et
al.; not defined for NAS). Sizes follow from ``parameter_budget`` (:mod:`syw.models.lm_budget`).

The training loss is the negative log-likelihood summed over a window's steps and averaged over its
rows, plus ``weight_decay``·½·Σw² over all weights (the paper tunes "weight decay"; the authors' later
code, lamb, reads it as this L2 penalty). Embeddings are N(0, 1/e) truncated at 2 SD, the down-projection
orthogonal, an untied softmax N(0, 1/o), its bias zero: the suite's choices after lamb's initialisers.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import SIZE, resolve
from syw.models.lm_budget import CELLS, LSTM_GATES, LmShape, solve
from syw.models.modules.recurrent_cells import State, build_cell
from syw.models.tasks import lm as TASK
from syw.models.tasks.lm import LM_SETTINGS, LmData

_DROPOUT = {"type": "float", "min": 0.0, "max": 0.99}
SETTINGS = {
    **LM_SETTINGS,
    "cell": {"values": list(CELLS)},
    "lstm_gates": {"values": list(LSTM_GATES), "default": "capped"},  # Eq. (3), (1), (2)
    "depth": SIZE,  # layers (LSTM, NAS) or micro-steps (RHN)
    "parameter_budget": SIZE,
    "input_embedding_ratio": {"type": "float", "min": 0.001, "max": 1.0},
    "down_projection": {"type": "bool"},
    "tied_embeddings": {"type": "bool", "default": True},
    "input_dropout": _DROPOUT,
    "intra_layer_dropout": {**_DROPOUT, "default": 0.0},
    "state_dropout": _DROPOUT,
    "state_dropout_kind": {"values": ["variational", "recurrent"], "default": "variational"},
    "output_dropout": _DROPOUT,
    "forget_bias": {"type": "float", "default": 1.0},  # LSTM forget-gate bias at initialisation (lamb's)
    "rhn_transform_bias": {"type": "float", "default": -2.0},  # Zilly et al.'s PTB initial transform-gate bias
}


def variational_mask(batch: int, size: int, p: float, like: torch.Tensor) -> torch.Tensor:
    """Bernoulli(1 − p) / (1 − p) of shape (batch, size): one mask for a whole window (Gal and Ghahramani)."""
    return like.new_empty(batch, size).bernoulli_(1.0 - p).div_(1.0 - p)


class LanguageModel(nn.Module):
    """Figure 1's model of ``shape`` (module docstring). ``forward`` is the training step's loss, carrying the
    state from window to window in training mode; ``nll`` scores a window from a given state."""

    def __init__(self, shape: LmShape, *, input_dropout: float = 0.0, intra_layer_dropout: float = 0.0,
                 state_dropout: float = 0.0, output_dropout: float = 0.0, state_dropout_kind: str = "variational",
                 weight_decay: float = 0.0, forget_bias: float = 1.0, rhn_transform_bias: float = -2.0):
        super().__init__()
        if shape.cell == "nas" and state_dropout_kind == "recurrent" and state_dropout > 0:
            raise ValueError("state_dropout_kind recurrent is not defined for the NAS cell (no single proposed update)")
        self.shape, self.weight_decay, self.state_dropout_kind = shape, weight_decay, state_dropout_kind
        self.dropout = {"input": input_dropout, "intra": intra_layer_dropout, "state": state_dropout, "output": output_dropout}
        self.embedding = nn.Embedding(shape.vocab, shape.embedding)
        std = 1.0 / math.sqrt(shape.embedding)
        nn.init.trunc_normal_(self.embedding.weight, std=std, a=-2 * std, b=2 * std)
        h, layers = shape.hidden, 1 if shape.cell == "rhn" else shape.depth
        self.layers = nn.ModuleList(
            build_cell(shape.cell, shape.embedding if k == 0 else h, h, depth=shape.depth, lstm_gates=shape.lstm_gates,
                       forget_bias=forget_bias, transform_bias=rhn_transform_bias) for k in range(layers))
        self.projection = nn.Linear(h, shape.output, bias=False) if shape.down_projection else None
        if self.projection is not None:
            nn.init.orthogonal_(self.projection.weight)
        self.softmax_weight = None
        if not shape.tied:
            std = 1.0 / math.sqrt(shape.output)
            self.softmax_weight = nn.Parameter(nn.init.trunc_normal_(torch.empty(shape.vocab, shape.output), std=std,
                                                                     a=-2 * std, b=2 * std))
        self.softmax_bias = nn.Parameter(torch.zeros(shape.vocab))
        self.carry: list[State] | None = None  # the training state between windows (not a weight)

    @property
    def output_weight(self) -> torch.Tensor:
        """The softmax's (V, o) weights: the embedding itself when tied."""
        return self.embedding.weight if self.softmax_weight is None else self.softmax_weight

    def zero_state(self, batch: int) -> list[State]:
        """Every layer's zero state for ``batch`` rows."""
        return [layer.zero_state(batch, self.softmax_bias) for layer in self.layers]

    def _drop(self, x: torch.Tensor, which: str) -> torch.Tensor:
        return F.dropout(x, self.dropout[which], self.training) if self.dropout[which] > 0 else x

    def _masks(self, batch: int) -> list[tuple[torch.Tensor | None, torch.Tensor | None]]:
        """Each layer's (state mask, update mask) for one window: drawn only in training mode."""
        p = self.dropout["state"]
        if not self.training or p == 0:
            return [(None, None)] * len(self.layers)
        masks = [variational_mask(batch, self.shape.hidden, p, self.softmax_bias) for _ in self.layers]
        return [(None, m) if self.state_dropout_kind == "recurrent" else (m, None) for m in masks]

    def nll(self, inputs: torch.Tensor, targets: torch.Tensor, state: list[State] | None = None) -> tuple[torch.Tensor, list[State]]:
        """Per-token negative log-likelihood (B, T) of ``targets`` after ``inputs`` (B, T ids) from ``state``
        (None: zero), and the state after the window."""
        batch, steps = inputs.shape
        state = self.zero_state(batch) if state is None else state
        x = self._drop(self.embedding(inputs.t()), "input")  # (T, B, e)
        total, after = None, []
        for k, (layer, (state_mask, update_mask)) in enumerate(zip(self.layers, self._masks(batch))):
            out, layer_state = layer(self._drop(x, "intra") if k > 0 else x, state[k], state_mask, update_mask)
            after.append(layer_state)
            total, x = (out if total is None else total + out), out
        y = self._drop(total, "output")
        if self.projection is not None:
            y = self._drop(self.projection(y), "output")
        logits = torch.addmm(self.softmax_bias, y.reshape(steps * batch, -1), self.output_weight.t())
        nll = F.cross_entropy(logits, targets.t().reshape(-1), reduction="none")
        return nll.view(steps, batch).t(), after

    def forward(self, inputs: torch.Tensor, targets: torch.Tensor, reset: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """The training loss of one window (module docstring) and its mean NLL. In training mode the window
        starts from the carried state unless ``reset``; in eval mode from a zero state, carrying nothing."""
        fresh = not self.training or self.carry is None or bool(reset) or self.carry[0][0].shape[0] != inputs.shape[0]
        nll, after = self.nll(inputs, targets, None if fresh else self.carry)
        if self.training:
            self.carry = [tuple(t.detach() for t in layer_state) for layer_state in after]
        loss = nll.sum() / inputs.shape[0]
        if self.weight_decay > 0:
            loss = loss + self.weight_decay * 0.5 * sum(p.pow(2).sum() for p in self.parameters())
        return {"loss": loss, "nll": nll.mean().detach()}


def shape_of(params: Mapping[str, Any], vocab_size: int) -> LmShape:
    """The sizes an assignment's budget, cell, depth, ratio, projection and tying give (:func:`syw.models.lm_budget.solve`)."""
    return solve(int(params["parameter_budget"]), cell=params["cell"], vocab=vocab_size, depth=int(params["depth"]),
                 ratio=float(params["input_embedding_ratio"]), down_projection=bool(params["down_projection"]),
                 tied=bool(params["tied_embeddings"]), lstm_gates=params["lstm_gates"])


def build(params: Mapping[str, Any], data: LmData) -> LanguageModel:
    """The model of one assignment over ``data``'s vocabulary."""
    return LanguageModel(shape_of(params, len(data.vocab)), input_dropout=float(params["input_dropout"]),
                         intra_layer_dropout=float(params["intra_layer_dropout"]), state_dropout=float(params["state_dropout"]),
                         output_dropout=float(params["output_dropout"]), state_dropout_kind=params["state_dropout_kind"],
                         weight_decay=float(params["weight_decay"]), forget_bias=float(params["forget_bias"]),
                         rhn_transform_bias=float(params["rhn_transform_bias"]))


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one language-model trial and return its best validation perplexity (direction min)."""
    params = resolve(params, SETTINGS)
    data = TASK.load(ctx, params)
    return TASK.run(params, ctx, data, lambda: build(params, data))
