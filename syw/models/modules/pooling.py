"""Masked poolings over time (docs/models.md §B step 8, §E step 9, §G)."""
from __future__ import annotations

import torch
from torch import nn

from syw.models.modules.attention import masked_softmax, replace_masked_values, weighted_sum


def masked_max(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Max over T of x (B,T,D) with padded positions at -1e7 -> (B,D).

    A fully masked row gives -1e7, as in AllenNLP.
    """
    return replace_masked_values(x, mask.unsqueeze(-1), -1e7).max(dim=1).values


def masked_min(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Min over T of x (B,T,D) with padded positions at +1e7 -> (B,D)."""
    return replace_masked_values(x, mask.unsqueeze(-1), 1e7).min(dim=1).values


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum over the real positions of x (B,T,D) / true length -> (B,D).

    A fully masked row gives 0 (AllenNLP divides 0 by 0 there, giving NaN).
    """
    mask = mask.to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class SelfAttentivePooling(nn.Module):
    """BCN's self-attentive pooling (docs/models.md §B step 8): Linear(D→1) scores, masked softmax, weighted sum."""

    def __init__(self, dim: int):
        super().__init__()
        self.projection = nn.Linear(dim, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (B,T,D), mask (B,T) -> (B,D)."""
        return weighted_sum(x, masked_softmax(self.projection(x).squeeze(-1), mask))
