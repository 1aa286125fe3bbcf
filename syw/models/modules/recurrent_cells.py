"""The three recurrent cells of Melis et al. (2018, section 2): the LSTM with a capped input gate (and its
untied and tied variants), the recurrent highway network and the NAS cell, each run over a whole
time-major window with the state dropouts of the paper's figure 1.

Every cell maps inputs (T, B, in) and a state to outputs (T, B, hidden) and the final state. The input
projection of all T steps is one matrix product; each step then multiplies the (dropped-out) recurrent
state once by the cell's state matrix, so a state-dropout mask multiplies the state before that product:
one mask for all gates, the parameterisation of the paper's footnote 1 (Gal and Ghahramani's with masks
shared between gates). ``state_mask`` (B, hidden) is drawn once per window by the caller and reused at
every step (variational dropout); ``update_mask`` (B, hidden), likewise, multiplies the proposed update
instead (recurrent dropout, Semeniuta et al.; the paper shares its mask between time steps too).
Weights are truncated normals of std 1/sqrt(fan-in) (fan-in: input plus state width), biases zero except
the LSTM forget gate's (``forget_bias``) and the RHN transform gate's (``transform_bias``): the suite's
choices, after the authors' later code (lamb) and Zilly et al.'s PTB configuration.
"""
from __future__ import annotations

import math

import torch
from torch import nn

State = tuple[torch.Tensor, ...]
LSTM_GATES = ("capped", "untied", "tied")


def _truncated_normal(shape: tuple[int, ...], fan_in: int) -> torch.Tensor:
    std = 1.0 / math.sqrt(fan_in)
    return nn.init.trunc_normal_(torch.empty(shape), std=std, a=-2 * std, b=2 * std)


def _weight(rows: int, columns: int, fan_in: int) -> nn.Parameter:
    return nn.Parameter(_truncated_normal((rows, columns), fan_in))


def _masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return x if mask is None else x * mask


class CappedLstmCell(nn.Module):
    """LSTM in Sak et al.'s formulation without peepholes or projection, Eq. (1)-(3) of Melis et al.:

    i, f, o = σ(·), j = tanh(·) of x·W_x + h·W_h + b (gate blocks in the order i, j, f, o);
    capped (Eq. 3): c' = f⊙c + min(1 − f, i)⊙j; untied (Eq. 1): c' = f⊙c + i⊙j;
    tied (Eq. 2, no input gate: blocks j, f, o): c' = f⊙c + (1 − f)⊙j; then h' = o⊙tanh(c').
    """

    def __init__(self, input_size: int, hidden_size: int, gates: str = "capped", forget_bias: float = 1.0):
        super().__init__()
        if gates not in LSTM_GATES:
            raise ValueError(f"gates must be one of {', '.join(LSTM_GATES)}, got {gates!r}")
        self.input_size, self.hidden_size, self.gates = input_size, hidden_size, gates
        blocks = 3 if gates == "tied" else 4
        fan_in = input_size + hidden_size
        self.weight_input = _weight(input_size, blocks * hidden_size, fan_in)
        self.weight_state = _weight(hidden_size, blocks * hidden_size, fan_in)
        self.bias = nn.Parameter(torch.zeros(blocks * hidden_size))
        forget = 1 if gates == "tied" else 2  # the f block's index
        with torch.no_grad():
            self.bias[forget * hidden_size:(forget + 1) * hidden_size] = forget_bias

    def zero_state(self, batch: int, like: torch.Tensor) -> State:
        """(h, c), both zero."""
        zeros = like.new_zeros(batch, self.hidden_size)
        return zeros, zeros

    def step(self, gates: torch.Tensor, c: torch.Tensor, update_mask: torch.Tensor | None) -> State:
        """One step from the pre-activations (B, blocks·hidden) and the cell state: (h', c')."""
        if self.gates == "tied":
            j, f, o = gates.chunk(3, dim=1)
            f = torch.sigmoid(f)
            admit = 1 - f
        else:
            i, j, f, o = gates.chunk(4, dim=1)
            f, i = torch.sigmoid(f), torch.sigmoid(i)
            admit = torch.minimum(1 - f, i) if self.gates == "capped" else i
        c = f * c + admit * _masked(torch.tanh(j), update_mask)
        return torch.sigmoid(o) * torch.tanh(c), c

    def forward(self, inputs: torch.Tensor, state: State, state_mask: torch.Tensor | None = None,
                update_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, State]:
        """(T, B, input_size), (h, c) -> outputs h (T, B, hidden) and the last (h, c)."""
        steps, batch, _ = inputs.shape
        projected = torch.addmm(self.bias, inputs.reshape(steps * batch, -1), self.weight_input).view(steps, batch, -1)
        h, c = state
        outputs = []
        for x in projected.unbind(0):  # one backward op for all steps (indexing would zero-fill T full-size grads)
            h, c = self.step(torch.addmm(x, _masked(h, state_mask), self.weight_state), c, update_mask)
            outputs.append(h)
        return torch.stack(outputs), (h, c)


class RhnCell(nn.Module):
    """Recurrent highway network of Zilly et al. (2017), their code's coupled carry gate: ``depth`` micro-steps
    per input, the state passing from the last micro-step of one time step to the first of the next.

    Micro-step l: [ĥ, t̂] = 1[l = 0]·x·W_x + s·W_l + b_l; h = tanh(ĥ), t = σ(t̂); s ← h⊙t + s⊙(1 − t).
    The output is s after the last micro-step; the state mask multiplies s at every micro-step.
    """

    def __init__(self, input_size: int, hidden_size: int, depth: int, transform_bias: float = -2.0):
        super().__init__()
        if depth < 1:
            raise ValueError(f"an RHN needs at least one micro-step, got depth {depth}")
        self.input_size, self.hidden_size, self.depth = input_size, hidden_size, depth
        self.weight_input = _weight(input_size, 2 * hidden_size, input_size + hidden_size)
        fan_ins = [input_size + hidden_size] + [hidden_size] * (depth - 1)  # only micro-step 0 reads x
        self.weight_state = nn.Parameter(torch.stack([_truncated_normal((hidden_size, 2 * hidden_size), n) for n in fan_ins]))
        self.bias = nn.Parameter(torch.zeros(depth, 2 * hidden_size))
        with torch.no_grad():
            self.bias[:, hidden_size:] = transform_bias

    def zero_state(self, batch: int, like: torch.Tensor) -> State:
        """(s,), zero."""
        return (like.new_zeros(batch, self.hidden_size),)

    @staticmethod
    def micro_step(pre: torch.Tensor, s: torch.Tensor, update_mask: torch.Tensor | None) -> torch.Tensor:
        """The state after one micro-step from its pre-activations (B, 2·hidden)."""
        h, t = pre.chunk(2, dim=1)
        h, t = _masked(torch.tanh(h), update_mask), torch.sigmoid(t)
        return torch.addcmul(s, t, h - s)  # h⊙t + s⊙(1 − t)

    def forward(self, inputs: torch.Tensor, state: State, state_mask: torch.Tensor | None = None,
                update_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, State]:
        """(T, B, input_size), (s,) -> outputs s (T, B, hidden) and the last (s,)."""
        steps, batch, _ = inputs.shape
        projected = (inputs.reshape(steps * batch, -1) @ self.weight_input).view(steps, batch, -1)
        (s,) = state
        outputs = []
        weights, biases = self.weight_state.unbind(0), self.bias.unbind(0)
        for x in projected.unbind(0):
            for level in range(self.depth):
                pre = torch.addmm(biases[level], _masked(s, state_mask), weights[level])
                s = self.micro_step(pre + x if level == 0 else pre, s, update_mask)
            outputs.append(s)
        return torch.stack(outputs), (s,)


class NasCell(nn.Module):
    """The NAS cell of Zoph and Le (2017) as TensorFlow's NASCell defines it (no bias, no projection):
    eight input and eight recurrent projections x_k, m_k of (x, m_prev), then

    l1 = [σ(x0+m0), relu(x1+m1), σ(x2+m2), relu(x3⊙m3), tanh(x4+m4), σ(x5+m5), tanh(x6+m6), σ(x7+m7)];
    a = tanh(tanh(l1_0⊙l1_1) + c_prev), b = tanh(l1_2 + l1_3), d = tanh(l1_4⊙l1_5), g = σ(l1_6 + l1_7);
    c' = a⊙b, m' = tanh(c'⊙tanh(d + g)). The state is (c, m); the state mask multiplies m_prev.
    """

    BLOCKS = 8

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        fan_in = input_size + hidden_size
        self.weight_input = _weight(input_size, self.BLOCKS * hidden_size, fan_in)
        self.weight_state = _weight(hidden_size, self.BLOCKS * hidden_size, fan_in)

    def zero_state(self, batch: int, like: torch.Tensor) -> State:
        """(c, m), both zero."""
        zeros = like.new_zeros(batch, self.hidden_size)
        return zeros, zeros

    @staticmethod
    def step(x: torch.Tensor, m: torch.Tensor, c: torch.Tensor) -> State:
        """(c', m') from the input and recurrent projections (B, 8·hidden) and the cell state."""
        sums = (x + m).chunk(8, dim=1)
        x3, m3 = x.chunk(8, dim=1)[3], m.chunk(8, dim=1)[3]
        sig, tanh, relu = torch.sigmoid, torch.tanh, torch.relu
        a = tanh(tanh(sig(sums[0]) * relu(sums[1])) + c)
        b = tanh(sig(sums[2]) + relu(x3 * m3))
        d = tanh(tanh(sums[4]) * sig(sums[5]))
        g = sig(tanh(sums[6]) + sig(sums[7]))
        c = a * b
        return c, tanh(c * tanh(d + g))

    def forward(self, inputs: torch.Tensor, state: State, state_mask: torch.Tensor | None = None,
                update_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, State]:
        """(T, B, input_size), (c, m) -> outputs m (T, B, hidden) and the last (c, m)."""
        if update_mask is not None:
            raise ValueError("the NAS cell has no single proposed update for recurrent dropout; use state dropout")
        steps, batch, _ = inputs.shape
        projected = (inputs.reshape(steps * batch, -1) @ self.weight_input).view(steps, batch, -1)
        c, m = state
        outputs = []
        for x in projected.unbind(0):
            c, m = self.step(x, _masked(m, state_mask) @ self.weight_state, c)
            outputs.append(m)
        return torch.stack(outputs), (c, m)


def build_cell(cell: str, input_size: int, hidden_size: int, *, depth: int = 1, lstm_gates: str = "capped",
               forget_bias: float = 1.0, transform_bias: float = -2.0) -> nn.Module:
    """One cell by name: ``lstm`` (``lstm_gates``), ``rhn`` (``depth`` micro-steps) or ``nas``."""
    if cell == "lstm":
        return CappedLstmCell(input_size, hidden_size, lstm_gates, forget_bias)
    if cell == "rhn":
        return RhnCell(input_size, hidden_size, depth, transform_bias)
    if cell == "nas":
        return NasCell(input_size, hidden_size)
    raise ValueError(f"cell must be lstm, rhn or nas, got {cell!r}")
