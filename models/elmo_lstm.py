"""ELMo's stateful biLSTM: LSTM cells with projection and clipping (model spec §C "biLM", "Statefulness").

Both directions of a layer run in one time loop, stacked on a leading axis of 2 (0 forward,
1 backward). The backward direction reads each row reversed within its true length, so it
is a left-to-right scan too and padding stays at the end of every row; positions past a
row's length are computed but never feed a valid one, and their outputs are zeroed. Matrices
are stored (in, out), TF's layout, which is also the fast one for ``x @ W`` on CPU.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn


def _scan(zin: torch.Tensor, w_state: torch.Tensor, w_proj: torch.Tensor, h: torch.Tensor,
          c: torch.Tensor, cell_clip: float, proj_clip: float, keep: bool) -> tuple[torch.Tensor, ...]:
    """Run the cells over time; zin (2,T,B,4C) is W_in·x + b for every step, gates i, f, g, o.

    Returns the clipped outputs h (2,T,B,H) and clipped cells c (2,T,B,C); with ``keep``
    also the gate activations, the raw cells, σ(o)⊙tanh(c) and the raw projections, which
    the backward pass needs.
    """
    _, steps, batch, four_cell = zin.shape
    cell = four_cell // 4
    out = zin.new_empty(2, steps, batch, w_proj.shape[2])
    cells = zin.new_empty(2, steps, batch, cell)
    if keep:
        gates, cells_raw = torch.empty_like(zin), torch.empty_like(cells)
        pre_proj, proj_raw = torch.empty_like(cells), torch.empty_like(out)
    for t in range(steps):
        z = torch.baddbmm(zin[:, t], h, w_state, out=gates[:, t] if keep else None)
        z[..., :2 * cell].sigmoid_()
        z[..., 2 * cell:3 * cell].tanh_()
        z[..., 3 * cell:].sigmoid_()
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.addcmul(f * c, i, g, out=cells_raw[:, t] if keep else None)
        c = torch.clamp(c, -cell_clip, cell_clip, out=cells[:, t])
        m = torch.mul(o, c.tanh(), out=pre_proj[:, t] if keep else None)
        h = torch.bmm(m, w_proj, out=proj_raw[:, t] if keep else None)
        h = torch.clamp(h, -proj_clip, proj_clip, out=out[:, t])
    if keep:
        return out, cells, gates, cells_raw, pre_proj, proj_raw
    return out, cells


class _ProjectedLstmScan(torch.autograd.Function):
    """:func:`_scan` with a hand-written backward through time.

    Autograd would record ~10 nodes per step and compute the weight gradients step by step;
    here each step costs two small matrix products, and the weight gradients are one product
    over all steps at the end. Clipping passes the gradient where the raw value lies within
    the bounds, inclusive, as ``torch.clamp`` does.
    """

    @staticmethod
    def forward(ctx: Any, zin: torch.Tensor, w_state: torch.Tensor, w_proj: torch.Tensor, h0: torch.Tensor,
                c0: torch.Tensor, cell_clip: float, proj_clip: float) -> tuple[torch.Tensor, torch.Tensor]:
        out, cells, gates, cells_raw, pre_proj, proj_raw = _scan(zin, w_state, w_proj, h0, c0,
                                                                 cell_clip, proj_clip, keep=True)
        ctx.save_for_backward(w_state, w_proj, h0, c0, out, cells, gates, cells_raw, pre_proj, proj_raw)
        ctx.clips = (cell_clip, proj_clip)
        ctx.mark_non_differentiable(cells)
        return out, cells

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor, _grad_cells: Any) -> tuple[torch.Tensor | None, ...]:
        w_state, w_proj, h0, c0, out, cells, gates, cells_raw, pre_proj, proj_raw = ctx.saved_tensors
        cell_clip, proj_clip = ctx.clips
        _, steps, batch, four_cell = gates.shape
        cell = four_cell // 4
        i, f, g, o = gates.chunk(4, dim=-1)
        tanh_c = cells.tanh()
        cell_pass = cells_raw.abs().le_(cell_clip).to(cells.dtype)
        proj_pass = proj_raw.abs().le_(proj_clip).to(out.dtype)
        c_prev = torch.cat([c0.unsqueeze(1), cells[:, :-1]], dim=1)
        # dz = [dc, dc, dc, dm] ⊙ factors, where dc is the gradient of the raw cell and dm of σ(o)⊙tanh(c)
        factors = torch.cat([g * i * (1 - i), c_prev * f * (1 - f), i * (1 - g * g), tanh_c * o * (1 - o)], dim=-1)
        to_cell = o * (1 - tanh_c * tanh_c) * cell_pass  # dm -> dc through tanh(c) and the clip
        w_state_t, w_proj_t = w_state.transpose(1, 2).contiguous(), w_proj.transpose(1, 2).contiguous()
        grad_z, grad_p = torch.empty_like(gates), torch.empty_like(out)
        dh, dc = out.new_zeros(2, batch, out.shape[3]), cells.new_zeros(2, batch, cell)
        for t in range(steps - 1, -1, -1):
            dp = torch.mul(grad_out[:, t] + dh, proj_pass[:, t], out=grad_p[:, t])
            dm = torch.bmm(dp, w_proj_t)
            dc = torch.addcmul(dc * cell_pass[:, t], dm, to_cell[:, t])
            dz = torch.mul(torch.cat([dc, dc, dc, dm], dim=-1), factors[:, t], out=grad_z[:, t])
            dh = torch.bmm(dz, w_state_t)
            dc = dc * f[:, t]
        h_prev = torch.cat([h0.unsqueeze(1), out[:, :-1]], dim=1).reshape(2, steps * batch, -1)
        grad_w_state = torch.bmm(h_prev.transpose(1, 2), grad_z.view(2, steps * batch, four_cell))
        grad_w_proj = torch.bmm(pre_proj.view(2, steps * batch, cell).transpose(1, 2),
                                grad_p.view(2, steps * batch, -1))
        return grad_z, grad_w_state, grad_w_proj, dh, dc, None, None


class BiProjectedLstmLayer(nn.Module):
    """One biLM layer: a forward and a backward LSTM cell with projection (spec §C "biLM").

    z = x·W_in + h·W_state + b (gates i, f, g, o); c = clip(σ(i)⊙tanh(g) + σ(f)⊙c_prev);
    h = clip((σ(o)⊙tanh(c))·W_proj). Weights carry a leading direction axis of 2.
    """

    def __init__(self, input_dim: int, cell_dim: int, hidden_dim: int, cell_clip: float, proj_clip: float):
        super().__init__()
        self.input_weight = nn.Parameter(torch.empty(2, input_dim, 4 * cell_dim))
        self.state_weight = nn.Parameter(torch.empty(2, hidden_dim, 4 * cell_dim))
        self.bias = nn.Parameter(torch.empty(2, 4 * cell_dim))
        self.proj_weight = nn.Parameter(torch.empty(2, cell_dim, hidden_dim))
        self.cell_clip, self.proj_clip = float(cell_clip), float(proj_clip)
        bound = cell_dim ** -0.5  # torch.nn.LSTM's init; pretrained weights are loaded over it
        for param in self.parameters():
            nn.init.uniform_(param, -bound, bound)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (2,T,B,in), initial h0 (2,B,H) and c0 (2,B,C) -> outputs h (2,T,B,H), cells c (2,T,B,C)."""
        _, steps, batch, input_dim = x.shape
        zin = torch.baddbmm(self.bias.unsqueeze(1), x.reshape(2, steps * batch, input_dim), self.input_weight)
        zin = zin.view(2, steps, batch, -1)
        if torch.is_grad_enabled() and (zin.requires_grad or self.state_weight.requires_grad
                                        or self.proj_weight.requires_grad):
            return _ProjectedLstmScan.apply(zin, self.state_weight, self.proj_weight, h0, c0,
                                            self.cell_clip, self.proj_clip)
        return _scan(zin, self.state_weight, self.proj_weight, h0, c0, self.cell_clip, self.proj_clip, keep=False)


class ElmoLstm(nn.Module):
    """Stacked :class:`BiProjectedLstmLayer`s, stateful across batches (spec §C "Statefulness").

    Every layer after the first adds its input to its output, per direction, when
    ``use_skip_connections``. After each batch, the final (h, c) of each row that has a
    token becomes the initial state of the same row index in the next batch; rows without
    a token, and rows beyond a smaller batch, keep theirs. A larger batch starts its extra
    rows at zero. :meth:`reset_states` forgets everything.
    """

    def __init__(self, input_dim: int, cell_dim: int, hidden_dim: int, num_layers: int,
                 cell_clip: float, proj_clip: float, use_skip_connections: bool = True):
        super().__init__()
        self.layers = nn.ModuleList(
            BiProjectedLstmLayer(input_dim if k == 0 else hidden_dim, cell_dim, hidden_dim, cell_clip, proj_clip)
            for k in range(num_layers))
        self.use_skip_connections = use_skip_connections
        self._states: tuple[torch.Tensor, torch.Tensor] | None = None  # h (L,2,rows,H), c (L,2,rows,C)

    def reset_states(self) -> None:
        """Forget the stored states: the next batch starts from zeros."""
        self._states = None

    def _initial_states(self, x: torch.Tensor, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored states of the first ``batch`` rows, first growing the store with zero rows if needed."""
        layer = self.layers[0]
        shapes = [(len(self.layers), 2, batch, layer.proj_weight.shape[2]),
                  (len(self.layers), 2, batch, layer.proj_weight.shape[1])]
        if self._states is None:
            self._states = tuple(x.new_zeros(shape) for shape in shapes)
        elif self._states[0].shape[2] < batch:
            self._states = tuple(torch.cat([state, state.new_zeros(shape[:2] + (batch - state.shape[2],) + shape[3:])],
                                           dim=2) for state, shape in zip(self._states, shapes))
        return self._states[0][:, :, :batch], self._states[1][:, :, :batch]

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """x (B,T,in), mask (B,T) true on each row's leading positions -> per layer (B,T,2H) [fwd; bwd].

        Padded positions are 0.
        """
        batch, steps, _ = x.shape
        lengths = mask.sum(dim=1)
        positions = torch.arange(steps, device=x.device).unsqueeze(0)
        reverse = torch.where(positions < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - positions, positions)
        rows = torch.arange(batch, device=x.device).unsqueeze(1)
        stream = torch.stack([x, x[rows, reverse]]).transpose(1, 2)  # (2,T,B,in)
        h0, c0 = self._initial_states(x, batch)
        last = (lengths - 1).clamp(min=0)
        keep_mask = mask.unsqueeze(-1).to(x.dtype)
        outputs, final_h, final_c = [], [], []
        for k, layer in enumerate(self.layers):
            hs, cells = layer(stream, h0[k], c0[k])
            final_h.append(hs[:, last, rows.squeeze(1)].detach())
            final_c.append(cells[:, last, rows.squeeze(1)].detach())
            if k > 0 and self.use_skip_connections:
                hs = hs + stream
            stream = hs
            hs = hs.transpose(1, 2)  # (2,B,T,H)
            outputs.append(torch.cat([hs[0], hs[1][rows, reverse]], dim=-1) * keep_mask)
        self._store(torch.stack(final_h), torch.stack(final_c), lengths > 0)
        return outputs

    def _store(self, h: torch.Tensor, c: torch.Tensor, used: torch.Tensor) -> None:
        """Keep the new final states of the ``used`` rows; every other stored row is unchanged."""
        batch = used.shape[0]
        used = used.view(1, 1, batch, 1)
        self._states = tuple(torch.cat([torch.where(used, new, old[:, :, :batch]), old[:, :, batch:]], dim=2)
                             for new, old in zip((h, c), self._states))
