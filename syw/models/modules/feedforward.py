"""Feedforward stacks, built by hand or from a search space's settings (docs/models.md §0, §B, §D-§G)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import torch
from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU, "tanh": nn.Tanh, "linear": nn.Identity, "sigmoid": nn.Sigmoid,
}
T = TypeVar("T")
_REQUIRED = object()


def get_activation(name: str) -> nn.Module:
    """The activation called ``name``: "relu", "tanh", "linear" (identity) or "sigmoid"."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]()


def per_layer(value: T | Sequence[T], num_layers: int, what: str) -> list[T]:
    """One value per layer: a scalar (or string) is repeated, a sequence must have one entry a layer."""
    if num_layers < 1:
        raise ValueError(f"{what}: need at least one layer, got {num_layers}")
    if isinstance(value, str) or not isinstance(value, Sequence):
        return [value] * num_layers
    if len(value) != num_layers:
        raise ValueError(f"{what}: {len(value)} values for {num_layers} layers")
    return list(value)


class FeedForward(nn.Module):
    """``num_layers`` layers, each Dropout(act(Linear(x))), the last layer included (docs/models.md §0)."""

    def __init__(self, input_dim: int, num_layers: int, hidden_dims: int | Sequence[int],
                 activations: str | Sequence[str], dropout: float | Sequence[float] = 0.0):
        super().__init__()
        widths = [int(w) for w in per_layer(hidden_dims, num_layers, "hidden_dims")]
        self.linears = nn.ModuleList(nn.Linear(n_in, n_out)
                                     for n_in, n_out in zip([input_dim] + widths[:-1], widths))
        self.activations = nn.ModuleList(get_activation(name)
                                         for name in per_layer(activations, num_layers, "activations"))
        self.dropouts = nn.ModuleList(nn.Dropout(float(p)) for p in per_layer(dropout, num_layers, "dropout"))
        self.output_dim = widths[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., input_dim) -> (..., output_dim)."""
        for linear, act, dropout in zip(self.linears, self.activations, self.dropouts):
            x = dropout(act(linear(x)))
        return x


def _setting(params: Mapping[str, Any], prefix: str, names: Sequence[str], default: Any = _REQUIRED) -> Any:
    """The first of ``<prefix>_<name>`` (``<name>`` for the empty prefix) that ``params`` holds."""
    keys = [f"{prefix}_{name}" if prefix else name for name in names]
    for key in keys:
        if key in params:
            return params[key]
    if default is _REQUIRED:
        raise KeyError(f"params hold none of {keys}")
    return default


def feedforward_from(params: Mapping[str, Any], prefix: str, input_dim: int,
                     dropout: float | None = None, output_dim: int | None = None) -> FeedForward:
    """The FeedForward that a trial's ``<prefix>_*`` settings describe (appendix Tables 4-10).

    Reads ``<prefix>_layers`` (or ``_num_layers``), ``<prefix>_hidden_dims`` (or
    ``_hidden_size``), ``<prefix>_activation`` and ``<prefix>_dropout`` (0.0 when absent, as
    for ESIM's projection FF, §E). The empty prefix reads the n-gram baseline's unprefixed
    ``num_layers``, ``hidden_size``, ``activation`` and ``dropout`` (§F). ``dropout``, when
    given, replaces the setting. ``output_dim`` sets the last layer's width: DGEM's FFs end
    in its 2 logits (§G), and its edge FF has no width setting, so with one layer none is read.
    """
    num_layers = int(_setting(params, prefix, ["layers", "num_layers"]))
    n_hidden = num_layers if output_dim is None else num_layers - 1
    widths = [int(_setting(params, prefix, ["hidden_dims", "hidden_size"]))] * n_hidden if n_hidden else []
    if output_dim is not None:
        widths.append(output_dim)
    if dropout is None:
        dropout = float(_setting(params, prefix, ["dropout"], default=0.0))
    return FeedForward(input_dim, num_layers, widths, _setting(params, prefix, ["activation"]), dropout)


def init_linear_(module: nn.Module, weight: str = "xavier_uniform", zero_bias: bool = False) -> nn.Module:
    """Re-initialise every ``nn.Linear`` in ``module`` in place; returns ``module``.

    ``weight`` is "xavier_normal" (DAM and n-gram, §D, §F) or "xavier_uniform" (ESIM's FFs,
    with ``zero_bias``, §E). Biases keep torch's default init unless ``zero_bias``.
    """
    schemes = {"xavier_uniform": nn.init.xavier_uniform_, "xavier_normal": nn.init.xavier_normal_}
    if weight not in schemes:
        raise ValueError(f"weight init must be one of {sorted(schemes)}, got {weight!r}")
    for linear in (m for m in module.modules() if isinstance(m, nn.Linear)):
        schemes[weight](linear.weight)
        if zero_bias and linear.bias is not None:
            nn.init.zeros_(linear.bias)
    return module
