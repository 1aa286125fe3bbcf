"""ELMo's stateful biLSTM: LSTM cells with projection and clipping (docs/models.md §C "biLM", "Statefulness").

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


def _layer_forward(x: torch.Tensor, w_in: torch.Tensor, bias: torch.Tensor, w_state: torch.Tensor,
                   w_proj: torch.Tensor, h: torch.Tensor, c: torch.Tensor, cell_clip: float, proj_clip: float,
                   keep: bool) -> tuple[torch.Tensor, ...]:
    """Run one layer's cells over x (2,T,B,in) from states h (2,B,H), c (2,B,C); gates i, f, g, o.

    Returns the clipped outputs h (2,T,B,H) and clipped cells c (2,T,B,C); with ``keep``
    also what the backward pass needs: the gate activations, the raw cells, σ(o)⊙tanh(c)
    and the raw projections. Every step works in place on slices of these buffers.
    """
    _, steps, batch, input_dim = x.shape
    cell, hidden = w_proj.shape[1:]
    # x·W_in + b for all steps in one product; each step adds h·W_state in place, then activates
    gates = torch.bmm(x.reshape(2, steps * batch, input_dim), w_in).add_(bias.unsqueeze(1))
    gates = gates.view(2, steps, batch, 4 * cell)
    out, cells = x.new_empty(2, steps, batch, hidden), x.new_empty(2, steps, batch, cell)
    cells_raw, pre_proj, proj_raw = ((torch.empty_like(cells), torch.empty_like(cells), torch.empty_like(out))
                                     if keep else (cells, cells.new_empty(2, batch, cell), out))
    for t in range(steps):
        z = gates[:, t].baddbmm_(h, w_state)
        i, f, g, o = z.chunk(4, dim=-1)
        z[..., :2 * cell].sigmoid_()
        g.tanh_()
        o.sigmoid_()
        c = torch.mul(f, c, out=cells_raw[:, t]).addcmul_(i, g)
        c = torch.clamp(c, -cell_clip, cell_clip, out=cells[:, t])
        m = torch.tanh(c, out=pre_proj[:, t] if keep else pre_proj).mul_(o)
        h = torch.bmm(m, w_proj, out=proj_raw[:, t])
        h = torch.clamp(h, -proj_clip, proj_clip, out=out[:, t])
    if keep:
        return out, cells, gates, cells_raw, pre_proj, proj_raw
    return out, cells


class _ProjectedLstmLayer(torch.autograd.Function):
    """:func:`_layer_forward` with a hand-written backward through time.

    Autograd would record ~10 nodes per step and compute the weight gradients step by step;
    here each step costs two small matrix products and a few in-place products, and the
    gradients of x and of the weights are one product each over all steps at the end.
    Clipping passes the gradient where the raw value lies within the bounds, inclusive, as
    ``torch.clamp`` does.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w_in: torch.Tensor, bias: torch.Tensor, w_state: torch.Tensor,
                w_proj: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor, cell_clip: float,
                proj_clip: float) -> tuple[torch.Tensor, torch.Tensor]:
        out, cells, gates, cells_raw, pre_proj, proj_raw = _layer_forward(x, w_in, bias, w_state, w_proj, h0, c0,
                                                                          cell_clip, proj_clip, keep=True)
        ctx.save_for_backward(x, w_in, w_state, w_proj, h0, c0, out, cells, gates, cells_raw, pre_proj, proj_raw)
        ctx.clips = (cell_clip, proj_clip)
        ctx.mark_non_differentiable(cells)
        return out, cells

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor, _grad_cells: Any) -> tuple[torch.Tensor | None, ...]:
        x, w_in, w_state, w_proj, h0, c0, out, cells, gates, cells_raw, pre_proj, proj_raw = ctx.saved_tensors
        cell_clip, proj_clip = ctx.clips
        _, steps, batch, four_cell = gates.shape
        one = gates.new_ones(())
        cell_pass, proj_pass = cells_raw.abs().le_(cell_clip), proj_raw.abs().le_(proj_clip)
        w_state_t, w_proj_t = w_state.transpose(1, 2).contiguous(), w_proj.transpose(1, 2).contiguous()
        grad_z, grad_p = torch.empty_like(gates), torch.empty_like(out)
        dh, dc = out.new_zeros(2, batch, out.shape[3]), cells.new_zeros(2, batch, cells.shape[3])
        # step by step on cache-sized slices: precomputing factors for all steps costs more memory traffic
        for t in range(steps - 1, -1, -1):
            i, f, g, o = gates[:, t].chunk(4, dim=-1)
            dz_i, dz_f, dz_g, dz_o = grad_z[:, t].chunk(4, dim=-1)
            dp = torch.add(grad_out[:, t], dh, out=grad_p[:, t]).mul_(proj_pass[:, t])
            dm = torch.bmm(dp, w_proj_t)  # gradient of σ(o)⊙tanh(c)
            tanh_c = cells[:, t].tanh()
            torch.mul(dm, tanh_c, out=dz_o).mul_(torch.addcmul(o, o, o, value=-1))  # σ' = σ - σ²
            # the raw cell's gradient: the one carried from t+1 plus the one through tanh(c), where the clip passed
            dc = torch.addcmul(dc, dm.mul_(o), torch.addcmul(one, tanh_c, tanh_c, value=-1)).mul_(cell_pass[:, t])
            torch.mul(dc, g, out=dz_i).mul_(torch.addcmul(i, i, i, value=-1))
            torch.mul(dc, cells[:, t - 1] if t else c0, out=dz_f).mul_(torch.addcmul(f, f, f, value=-1))
            torch.mul(dc, i, out=dz_g).mul_(torch.addcmul(one, g, g, value=-1))
            dh = torch.bmm(grad_z[:, t], w_state_t)
            dc = dc * f
        flat_z = grad_z.view(2, steps * batch, four_cell)
        grads: list[torch.Tensor | None] = [None] * 5
        needs = ctx.needs_input_grad
        if needs[0]:
            grads[0] = torch.bmm(flat_z, w_in.transpose(1, 2).contiguous()).view(x.shape)
        if needs[1] or needs[3]:  # both weight gradients in one product
            inputs = torch.cat([x, torch.cat([h0.unsqueeze(1), out[:, :-1]], dim=1)], dim=-1)
            grad_w = torch.bmm(inputs.view(2, steps * batch, -1).transpose(1, 2), flat_z)
            grads[1], grads[3] = grad_w[:, :x.shape[3]], grad_w[:, x.shape[3]:]
        if needs[2]:
            grads[2] = flat_z.sum(dim=1)
        if needs[4]:
            grads[4] = torch.bmm(pre_proj.view(2, steps * batch, -1).transpose(1, 2), grad_p.view(2, steps * batch, -1))
        return (*grads, dh, dc, None, None)


class BiProjectedLstmLayer(nn.Module):
    """One biLM layer: a forward and a backward LSTM cell with projection (docs/models.md §C "biLM").

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
        weights = (self.input_weight, self.bias, self.state_weight, self.proj_weight)
        if torch.is_grad_enabled() and any(tensor.requires_grad for tensor in (x, *weights)):
            return _ProjectedLstmLayer.apply(x, *weights, h0, c0, self.cell_clip, self.proj_clip)
        return _layer_forward(x, *weights, h0, c0, self.cell_clip, self.proj_clip, keep=False)


class ElmoLstm(nn.Module):
    """Stacked :class:`BiProjectedLstmLayer`s, stateful across batches (docs/models.md §C "Statefulness").

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

    def carried_states(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The stored (h, c), each (layers, 2, rows, dim), or None before the first batch."""
        return self._states

    def restore_states(self, states: tuple[torch.Tensor, torch.Tensor] | None) -> None:
        """Carry ``states`` (from :meth:`carried_states`) into the next batch."""
        self._states = states

    def _initial_states(self, x: torch.Tensor, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored states of the first ``batch`` rows, first growing the store with zero rows if needed."""
        if self._states is None:
            cell, hidden = self.layers[0].proj_weight.shape[1:]
            self._states = (x.new_zeros(len(self.layers), 2, 0, hidden), x.new_zeros(len(self.layers), 2, 0, cell))
        missing = batch - self._states[0].shape[2]
        if missing > 0:
            self._states = tuple(torch.cat([state, state.new_zeros(*state.shape[:2], missing, state.shape[3])], dim=2)
                                 for state in self._states)
        return self._states[0][:, :, :batch], self._states[1][:, :, :batch]

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """x (B,T,in), mask (B,T) true on each row's leading positions -> per layer (B,T,2H) [fwd; bwd].

        Padded positions are 0.
        """
        batch, steps, _ = x.shape
        lengths = mask.sum(dim=1)
        positions = torch.arange(steps, device=x.device).unsqueeze(0)
        reverse = torch.where(positions < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - positions, positions)
        row_index = torch.arange(batch, device=x.device)
        rows = row_index.unsqueeze(1)
        stream = torch.stack([x, x[rows, reverse]]).transpose(1, 2)  # (2,T,B,in)
        h0, c0 = self._initial_states(x, batch)
        last = (lengths - 1).clamp(min=0)
        keep_mask = mask.unsqueeze(-1).to(x.dtype)
        outputs, final_h, final_c = [], [], []
        for k, layer in enumerate(self.layers):
            hs, cells = layer(stream, h0[k], c0[k])
            final_h.append(hs[:, last, row_index].detach())
            final_c.append(cells[:, last, row_index].detach())
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
