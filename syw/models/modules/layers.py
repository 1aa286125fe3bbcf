"""Highway, Maxout and ScalarMix layers (docs/models.md §0, §B, §C, §H)."""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from syw.models.modules.feedforward import get_activation, per_layer


class Highway(nn.Module):
    """``num_layers`` highway layers: out = g⊙x + (1−g)⊙act(t) (docs/models.md §C step 4, §H step 2).

    Each layer is one Linear(dim → 2·dim) whose first half is t and second half the gate
    logits; g = sigmoid(gate logits), and the gate biases start at 1.
    """

    def __init__(self, dim: int, num_layers: int = 1, activation: str = "relu"):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(num_layers))
        with torch.no_grad():
            for layer in self.layers:
                layer.bias[dim:] = 1.0
        self.activation = get_activation(activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., dim) -> (..., dim)."""
        for layer in self.layers:
            transform, gate = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            x = gate * x + (1 - gate) * self.activation(transform)
        return x


class Maxout(nn.Module):
    """BCN's output layers (docs/models.md §0, §B step 10): each is Dropout(max over k of Linear(x)).

    The affine outputs are read as (output_dim, k): unit u pools outputs u·k … u·k+k−1.
    A scalar width, pool size or dropout is repeated for every layer.
    """

    def __init__(self, input_dim: int, num_layers: int, output_dims: int | Sequence[int],
                 pool_sizes: int | Sequence[int], dropout: float | Sequence[float] = 0.0):
        super().__init__()
        widths = [int(w) for w in per_layer(output_dims, num_layers, "output_dims")]
        self.pool_sizes = [int(k) for k in per_layer(pool_sizes, num_layers, "pool_sizes")]
        self.linears = nn.ModuleList(nn.Linear(n_in, n_out * k) for n_in, n_out, k
                                     in zip([input_dim] + widths[:-1], widths, self.pool_sizes))
        self.dropouts = nn.ModuleList(nn.Dropout(float(p)) for p in per_layer(dropout, num_layers, "dropout"))
        self.output_dim = widths[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., input_dim) -> (..., output_dim)."""
        for linear, k, dropout in zip(self.linears, self.pool_sizes, self.dropouts):
            affine = linear(x)
            x = dropout(affine.view(*affine.shape[:-1], -1, k).max(dim=-1).values)
        return x


class ScalarMix(nn.Module):
    """γ·Σ_k softmax(w)_k·layer_k over ``num_layers`` same-shaped tensors (ELMo, docs/models.md §C).

    w starts at 0 (or ``initial_scalar_parameters``) and γ at 1; both are frozen when not
    ``trainable``. ``do_layer_norm`` first normalises each layer with one mean and variance
    taken over all its unmasked elements.
    """

    def __init__(self, num_layers: int, do_layer_norm: bool = False,
                 initial_scalar_parameters: Sequence[float] | None = None, trainable: bool = True):
        super().__init__()
        initial = [0.0] * num_layers if initial_scalar_parameters is None else list(initial_scalar_parameters)
        if len(initial) != num_layers:
            raise ValueError(f"{len(initial)} initial scalar parameters for {num_layers} layers")
        self.do_layer_norm = do_layer_norm
        self.scalar_parameters = nn.Parameter(torch.tensor(initial), requires_grad=trainable)
        self.gamma = nn.Parameter(torch.tensor(1.0), requires_grad=trainable)

    def forward(self, layers: Sequence[torch.Tensor], mask: torch.Tensor | None = None) -> torch.Tensor:
        """``num_layers`` tensors (B,T,D) (and mask (B,T) for layer norm) -> (B,T,D)."""
        if len(layers) != len(self.scalar_parameters):
            raise ValueError(f"{len(layers)} layers given to a mix of {len(self.scalar_parameters)}")
        if self.do_layer_norm:
            if mask is None:
                raise ValueError("layer norm needs the mask")
            layers = [_masked_layer_norm(layer, mask) for layer in layers]
        weights = torch.softmax(self.scalar_parameters, dim=0)
        return self.gamma * sum(w * layer for w, layer in zip(weights, layers))


def _masked_layer_norm(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(x − μ)/sqrt(σ² + 1e-12), with μ and σ² over the unmasked elements of x (B,T,D)."""
    mask = mask.to(x.dtype).unsqueeze(-1)
    count = mask.sum() * x.shape[-1]
    mean = (x * mask).sum() / count
    variance = (((x - mean) * mask) ** 2).sum() / count
    return (x - mean) / torch.sqrt(variance + 1e-12)
