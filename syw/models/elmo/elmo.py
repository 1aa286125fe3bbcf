"""ELMo: scalar mixes of a pretrained biLM's layers, as AllenNLP's ``Elmo`` (docs/models.md §C, §B).

Usage: ``Elmo(options_file, weight_file, 1)(batch_to_ids(sentences))["elmo_representations"][0]``.
"""
from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from syw.models.elmo.chars import batch_to_ids, remove_sentence_boundaries
from syw.models.elmo.checkpoint import load_bilm
from syw.models.modules import ScalarMix

__all__ = ["Elmo", "batch_to_ids"]


class Elmo(nn.Module):
    """``num_output_representations`` independent :class:`ScalarMix`es over one stateful biLM.

    Each mix weighs the token layer [r; r] and the LSTM layers (docs/models.md §C "ScalarMix"); then
    the boundary tokens are removed and dropout applied. ``requires_grad=False`` freezes
    the biLM's weights only: the mixes' weights and γ stay trainable, as in show-your-work's
    BCN. A frozen biLM runs without building a graph, still on every batch, so that its
    LSTM states carry over as in the original.
    """

    def __init__(self, options_file: str | Path | None, weight_file: str | Path | None, num_output_representations: int,
                 requires_grad: bool = False, dropout: float = 0.0, do_layer_norm: bool = False, *,
                 bilm: nn.Module | None = None):
        """The biLM is read from ``options_file`` and ``weight_file``, or, with both None, is ``bilm``
        (a :class:`syw.models.elmo.bilm.BiLm` or a module with its call signature and ``options``)."""
        super().__init__()
        if num_output_representations < 1:
            raise ValueError(f"num_output_representations is {num_output_representations}, needs at least 1")
        if (bilm is None) == (options_file is None and weight_file is None):
            raise ValueError("give either the options and weight files or a biLM")
        self.bilm = load_bilm(options_file, weight_file, requires_grad=requires_grad) if bilm is None else bilm
        self.bilm.requires_grad_(requires_grad)
        self.requires_grad = requires_grad
        self.scalar_mixes = nn.ModuleList(ScalarMix(self.bilm.options.n_layers + 1, do_layer_norm=do_layer_norm)
                                          for _ in range(num_output_representations))
        self.dropout = nn.Dropout(dropout)
        self.output_dim = 2 * self.bilm.options.projection_dim

    def forward(self, char_ids: torch.Tensor) -> dict[str, torch.Tensor | list[torch.Tensor]]:
        """Character ids (B, T, 50) -> {"elmo_representations": [(B, T, output_dim)] * n, "mask": (B, T)}."""
        with torch.set_grad_enabled(torch.is_grad_enabled() and self.requires_grad):
            layers, mask = self.bilm(char_ids)
        mixed = [remove_sentence_boundaries(mix(layers, mask), mask) for mix in self.scalar_mixes]
        return {"elmo_representations": [self.dropout(x) for x, _ in mixed], "mask": mixed[0][1]}

    def reset_states(self) -> None:
        """Forget the biLM's LSTM states carried over from earlier batches."""
        self.bilm.reset_states()
