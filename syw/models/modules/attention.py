"""Masked softmaxes, weighted sums and similarity matrices (docs/models.md §0, §B, §D, §E, §H)."""
from __future__ import annotations

import math

import torch
from torch import nn


def _expand_mask(mask: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``mask`` as ``x``'s dtype, with axes added after the batch axis until it has x's rank.

    So a (B,J) key mask covers (B,T,J) scores: queries are never masked (docs/models.md §0).
    """
    mask = mask.to(x.dtype)
    while mask.dim() < x.dim():
        mask = mask.unsqueeze(1)
    return mask


def masked_softmax(x: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """AllenNLP 0.8.5's masked softmax (docs/models.md §0): softmax(x·m)·m / (sum + 1e-13).

    Masked entries are exactly 0; a fully masked row gives zeros, not NaN.
    """
    if mask is None:
        return torch.softmax(x, dim=dim)
    mask = _expand_mask(mask, x)
    probs = torch.softmax(x * mask, dim=dim) * mask
    return probs / (probs.sum(dim=dim, keepdim=True) + 1e-13)


def masked_log_softmax(x: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """log_softmax(x + log(m + 1e-45)), as AllenNLP 0.8.5 (BiDAF's span logits, docs/models.md §H).

    Masked entries are shifted by log(1e-45) (about -103.3 in float32, -103.6 in float64),
    not to -inf; a fully masked row, shifted alike everywhere, gives log_softmax(x), not NaN.
    """
    if mask is not None:
        x = x + (_expand_mask(mask, x) + 1e-45).log()
    return torch.log_softmax(x, dim=dim)


def replace_masked_values(x: torch.Tensor, mask: torch.Tensor, value: float) -> torch.Tensor:
    """``x`` with ``value`` where ``mask`` (broadcastable to x, e.g. (B,T,1)) is false."""
    return x.masked_fill(~mask.bool(), value)


def weighted_sum(matrix: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
    """Rows of ``matrix`` (B,J,D) weighted by ``attention`` (B,J) -> (B,D), or (B,T,J) -> (B,T,D)."""
    if attention.dim() == 2:
        return attention.unsqueeze(1).bmm(matrix).squeeze(1)
    if attention.dim() == 3:
        return attention.bmm(matrix)
    raise ValueError(f"attention must be (B,J) or (B,T,J), got shape {tuple(attention.shape)}")


def dot_similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """S = a·bᵀ: a (B,T,D), b (B,J,D) -> (B,T,J) (BCN, DAM, ESIM; docs/models.md §B, §D, §E)."""
    return a.bmm(b.transpose(1, 2))


class BilinearSimilarity(nn.Module):
    """S_tj = a_t W b_jᵀ + bias, with W xavier-uniform and bias 0 as in AllenNLP 0.8.5."""

    def __init__(self, dim_a: int, dim_b: int):
        super().__init__()
        self.weight = nn.Parameter(nn.init.xavier_uniform_(torch.empty(dim_a, dim_b)))
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """a (B,T,dim_a), b (B,J,dim_b) -> (B,T,J)."""
        return (a @ self.weight).bmm(b.transpose(1, 2)) + self.bias


class TrilinearSimilarity(nn.Module):
    """BiDAF's S_tj = w·[h_t ; u_j ; h_t⊙u_j] + b (docs/models.md §H step 4).

    w (3d) is uniform ±sqrt(6/(3d+1)), b = 0. Computed as three products, never building
    the (B,T,J,3d) concatenation.
    """

    def __init__(self, dim: int):
        super().__init__()
        bound = math.sqrt(6.0 / (3 * dim + 1))
        self.weight = nn.Parameter(torch.empty(3 * dim).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, h: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """h (B,T,d), u (B,J,d) -> (B,T,J)."""
        w_h, w_u, w_hu = self.weight.chunk(3)
        return ((h @ w_h).unsqueeze(2) + (u @ w_u).unsqueeze(1)
                + (h * w_hu).bmm(u.transpose(1, 2)) + self.bias)
