"""Masked (bi)LSTM encoder and variational dropout (docs/models.md §0 "lstm" encoder, §E)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def init_lstm_esim_(lstm: nn.LSTM) -> None:
    """ESIM's LSTM init (docs/models.md §E), every layer and direction.

    W_ih xavier-uniform; W_hh orthogonal as one 4H×H matrix (its columns are orthonormal,
    not each gate's block); b_ih = 0; b_hh = 0 except the forget block (second quarter) = 1.
    """
    hidden = lstm.hidden_size
    with torch.no_grad():
        for name, param in lstm.named_parameters():
            if name.startswith("weight_ih"):
                nn.init.xavier_uniform_(param)
            elif name.startswith("weight_hh"):
                nn.init.orthogonal_(param)
            elif name.startswith("bias"):
                param.zero_()
                if name.startswith("bias_hh"):
                    param[hidden:2 * hidden] = 1.0


class LstmEncoder(nn.Module):
    """Stacked (bi)LSTM run on each row's unpadded prefix (docs/models.md §0).

    ``dropout`` is torch's between-layers dropout, so it does nothing with one layer.
    ``esim_init`` applies :func:`init_lstm_esim_`.
    """

    def __init__(self, input_dim: int, hidden_size: int, num_layers: int = 1,
                 bidirectional: bool = True, dropout: float = 0.0, esim_init: bool = False):
        super().__init__()
        # torch warns about dropout with one layer, where it has no effect anyway
        self.lstm = nn.LSTM(input_dim, hidden_size, num_layers, batch_first=True,
                            dropout=dropout if num_layers > 1 else 0.0, bidirectional=bidirectional)
        self.output_dim = hidden_size * (2 if bidirectional else 1)
        if esim_init:
            init_lstm_esim_(self.lstm)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (B,T,D), mask (B,T) true on each row's leading tokens -> (B,T,output_dim).

        Padded positions are exactly 0. A row with no tokens gives zeros: packing needs
        length ≥ 1, so it is run on one (padding) step whose output is then zeroed.
        """
        mask = mask.bool()
        lengths = mask.sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        output, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=x.shape[1])
        return output.masked_fill(~mask.unsqueeze(-1), 0.0)


class VariationalDropout(nn.Dropout):
    """Dropout with one mask per sequence, shared by all time steps (ESIM, docs/models.md §E).

    For x (B,T,D) the mask is (B,1,D), scaled by 1/(1-p) like ordinary dropout.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B,T,D) -> (B,T,D); the identity in eval mode."""
        mask = F.dropout(x.new_ones(x.shape[0], 1, x.shape[-1]), self.p, self.training)
        return x * mask
