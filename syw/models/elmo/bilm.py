"""ELMo's biLM: character CNN token encoder and stateful biLSTM (docs/models.md §C).

Built from :class:`BiLmOptions`, the content of the official ``options.json``; the weights
come from :func:`syw.models.elmo.checkpoint.load_bilm`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from syw.models.elmo.chars import add_sentence_boundaries
from syw.models.elmo.lstm import ElmoLstm
from syw.models.modules import Highway, conv_max_relu


@dataclass(frozen=True)
class BiLmOptions:
    """The sizes ``options.json`` gives (docs/models.md §C "Options"); the char CNN activation is relu."""

    char_dim: int
    filters: tuple[tuple[int, int], ...]  # (width, number of filters)
    n_highway: int
    n_characters: int
    max_characters_per_token: int
    cell_dim: int
    projection_dim: int
    n_layers: int
    cell_clip: float
    proj_clip: float
    use_skip_connections: bool

    @property
    def n_filters(self) -> int:
        """Width of the concatenated CNN output."""
        return sum(n for _, n in self.filters)


class CharCnnEmbedder(nn.Module):
    """Context-insensitive token representations from character ids (docs/models.md §C "Char encoder").

    Embedding (row 0 zeros when loaded; like the original it has no padding index, so
    fine-tuning may move it), one convolution per (width, filters) with max over the
    positions then ReLU, highway layers, and a linear projection.
    """

    def __init__(self, options: BiLmOptions):
        super().__init__()
        self.char_embedding = nn.Parameter(torch.randn(options.n_characters, options.char_dim))
        self.convs = nn.ModuleList(nn.Conv1d(options.char_dim, n, width) for width, n in options.filters)
        self.highway = Highway(options.n_filters, options.n_highway, activation="relu")
        self.projection = nn.Linear(options.n_filters, options.projection_dim)

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """(B, T, chars) -> (B, T, projection_dim)."""
        batch, steps, chars = char_ids.shape
        chars_embedded = F.embedding(char_ids.reshape(batch * steps, chars), self.char_embedding)
        features = torch.cat([conv_max_relu(chars_embedded, conv) for conv in self.convs], dim=-1)
        return self.projection(self.highway(features)).view(batch, steps, -1)


class BiLm(nn.Module):
    """Character ids -> ELMo's three layer activations (docs/models.md §C "biLM").

    The sentence boundary tokens are added here; the activations keep them, with T+2
    positions: [r; r]·mask for the token layer r, then one (B,T+2,2·projection_dim) per
    LSTM layer. The LSTM is stateful (:class:`syw.models.elmo.lstm.ElmoLstm`).
    """

    def __init__(self, options: BiLmOptions):
        super().__init__()
        self.options = options
        self.token_embedder = CharCnnEmbedder(options)
        self.lstm = ElmoLstm(options.projection_dim, options.cell_dim, options.projection_dim, options.n_layers,
                             options.cell_clip, options.proj_clip, options.use_skip_connections)

    def forward(self, char_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(B, T, chars) -> ([activations (B,T+2,2·projection_dim)] * (1 + n_layers), mask (B,T+2))."""
        char_ids, mask = add_sentence_boundaries(char_ids)
        tokens = self.token_embedder(char_ids)
        token_layer = torch.cat([tokens, tokens], dim=-1) * mask.unsqueeze(-1).to(tokens.dtype)
        return [token_layer, *self.lstm(tokens, mask)], mask

    def reset_states(self) -> None:
        """Forget the LSTM states carried over from earlier batches."""
        self.lstm.reset_states()
