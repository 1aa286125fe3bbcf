"""A frozen biLM that keeps each sentence's activations (the BCN's ``cache_elmo``, docs/models.md §B, §C)."""
from __future__ import annotations

import torch
from torch import nn

from syw.models.elmo.bilm import BiLm


class CachedBiLm(nn.Module):
    """A frozen biLM that computes each sentence's activations once: the first batch holding a
    sentence computes them (with the states that batch carries), later batches reuse them.
    Memory: 4 bytes x (1 + layers) x 2·projection_dim per token, e.g. 3 KB at projection 128."""

    def __init__(self, bilm: BiLm):
        super().__init__()
        self.bilm, self.options = bilm, bilm.options
        self.cache: dict[bytes, torch.Tensor] = {}  # a sentence's char ids -> its (T+2, layers, D) activations

    def forward(self, char_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """As :class:`syw.models.elmo.bilm.BiLm`: (B,T,50) -> ([activations (B,T+2,D)] * layers, mask (B,T+2))."""
        lengths = (char_ids > 0).any(dim=-1).sum(dim=1).tolist()
        keys = [char_ids[row, :length].cpu().numpy().tobytes() for row, length in enumerate(lengths)]
        new = [row for row, key in enumerate(keys) if key not in self.cache]
        if new:
            layers, mask = self.bilm(char_ids[new])
            stacked = torch.stack(layers, dim=2)
            for i, row in enumerate(new):
                self.cache[keys[row]] = stacked[i, :lengths[row] + 2].clone()
        out = char_ids.new_zeros(len(keys), char_ids.shape[1] + 2, self.options.n_layers + 1,
                                 2 * self.options.projection_dim, dtype=torch.float32)
        for row, key in enumerate(keys):
            out[row, :lengths[row] + 2] = self.cache[key]
        mask = torch.arange(out.shape[1], device=out.device) < torch.tensor(lengths, device=out.device).unsqueeze(1) + 2
        return list(out.unbind(dim=2)), mask

    def reset_states(self) -> None:
        self.bilm.reset_states()
