"""The recurrent cells of Melis et al. (2018) against hand computation: the LSTM's capped, untied and tied
gates (Eq. 1-3) on 2 units, one RHN time step of two micro-steps (Zilly et al.), the NAS cell against
TensorFlow's NASCell definition, and state dropout: one mask for every gate and every time step."""
import math

import numpy as np
import pytest
import torch

from syw.models.modules.recurrent_cells import CappedLstmCell, NasCell, RhnCell


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def t(value) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.float64)


def set_weights(cell, **values) -> None:
    """Cast ``cell`` to double precision (hand computations in floats) and set its weights."""
    cell.double()
    with torch.no_grad():
        for name, value in values.items():
            getattr(cell, name).copy_(t(value))


# 2 units, input width 1; pre-activations per gate chosen so that the capped gate takes 1 - f for unit 0
# (1 - σ(0) = 0.5 < σ(2)) and i for unit 1 (σ(-2) = 0.119 < 1 - σ(1.5) = 0.182)
PRE = {"i": [2.0, -2.0], "j": [0.5, -0.3], "f": [0.0, 1.5], "o": [1.0, -2.0]}
C0, H0, X = [0.4, -0.6], [0.3, -0.1], 0.7
W_X = {"i": [0.1, -0.2], "j": [0.3, 0.0], "f": [-0.1, 0.2], "o": [0.0, 0.1]}  # input weight of each gate and unit
W_H = {g: [[0.2 * (k + 1), -0.1], [0.05, 0.3 * (k - 1)]] for k, g in enumerate("ijfo")}  # [from unit][to unit]


def hand_lstm(gates: str, update_mask=(1.0, 1.0)) -> tuple[list[float], list[float]]:
    """h1, c1 for each unit, written out from Eq. (1)-(3) in plain floats."""
    h1, c1 = [], []
    for u in range(2):
        pre = {g: PRE[g][u] + X * W_X[g][u] + sum(H0[k] * W_H[g][k][u] for k in range(2)) for g in "ijfo"}
        f, i, j, o = sigmoid(pre["f"]), sigmoid(pre["i"]), math.tanh(pre["j"]) * update_mask[u], sigmoid(pre["o"])
        admit = {"capped": min(1 - f, i), "untied": i, "tied": 1 - f}[gates]
        c = f * C0[u] + admit * j
        c1.append(c)
        h1.append(o * math.tanh(c))
    return h1, c1


def lstm_cell(gates: str) -> CappedLstmCell:
    cell = CappedLstmCell(1, 2, gates, forget_bias=0.0)
    order = "jfo" if gates == "tied" else "ijfo"
    set_weights(cell, bias=sum((PRE[g] for g in order), []), weight_input=[sum((W_X[g] for g in order), [])],
                weight_state=[sum((W_H[g][k] for g in order), []) for k in range(2)])
    return cell


@pytest.mark.parametrize("gates", ["capped", "untied", "tied"])
def test_lstm_gates_on_two_units_against_eq_1_to_3(gates):
    cell = lstm_cell(gates)
    out, (h, c) = cell(t([[[X]]]), (t([H0]), t([C0])))
    h1, c1 = hand_lstm(gates)
    np.testing.assert_allclose(c[0].tolist(), c1, rtol=1e-12)
    np.testing.assert_allclose(h[0].tolist(), h1, rtol=1e-12)
    np.testing.assert_allclose(out[0, 0].tolist(), h1, rtol=1e-12)


def test_the_capped_gate_takes_each_branch_of_the_min_here():
    capped, untied, tied = (hand_lstm(g)[1] for g in ("capped", "untied", "tied"))
    assert capped[0] == pytest.approx(tied[0]) and capped[0] != pytest.approx(untied[0])  # 1 - f chosen
    assert capped[1] == pytest.approx(untied[1]) and capped[1] != pytest.approx(tied[1])  # i chosen


def test_lstm_recurrent_dropout_masks_the_proposed_update():
    cell = lstm_cell("capped")
    _, (h, c) = cell(t([[[X]]]), (t([H0]), t([C0])), update_mask=t([[2.0, 0.0]]))
    np.testing.assert_allclose(c[0].tolist(), hand_lstm("capped", (2.0, 0.0))[1], rtol=1e-12)


def test_forget_bias_sits_in_the_forget_block():
    assert CappedLstmCell(3, 2, "capped", forget_bias=1.0).bias.tolist() == [0, 0, 0, 0, 1, 1, 0, 0]
    assert CappedLstmCell(3, 2, "tied", forget_bias=1.0).bias.tolist() == [0, 0, 1, 1, 0, 0]
    assert RhnCell(3, 2, depth=2, transform_bias=-2.0).bias.tolist() == [[0, 0, -2, -2]] * 2


def test_one_rhn_time_step_of_two_micro_steps_by_hand():
    cell = RhnCell(1, 2, depth=2, transform_bias=0.0)
    w_x = [[0.5, -0.4, 0.3, 0.2]]  # [ĥ0, ĥ1, t̂0, t̂1]
    w = [[[0.1, 0.2, -0.3, 0.4], [0.0, -0.5, 0.6, 0.1]], [[0.3, -0.1, 0.2, 0.0], [0.4, 0.2, -0.2, 0.5]]]
    b = [[0.1, 0.0, -1.0, 0.5], [0.0, 0.2, 0.3, -0.4]]
    set_weights(cell, weight_input=w_x, weight_state=w, bias=b)
    x, s = 0.8, [0.25, -0.5]
    for level in range(2):
        pre = [b[level][k] + sum(s[u] * w[level][u][k] for u in range(2)) + (x * w_x[0][k] if level == 0 else 0.0)
               for k in range(4)]
        s = [math.tanh(pre[u]) * sigmoid(pre[2 + u]) + s[u] * (1 - sigmoid(pre[2 + u])) for u in range(2)]
    out, (state,) = cell(t([[[x]]]), (t([[0.25, -0.5]]),))
    np.testing.assert_allclose(state[0].tolist(), s, rtol=1e-12)
    np.testing.assert_allclose(out[0, 0].tolist(), s, rtol=1e-12)


def tf_nas_step(x, c_prev, m_prev, kernel, recurrent_kernel):
    """TensorFlow's NASCell.call (tensorflow_addons/rnn/nas_cell.py, use_bias False, no projection), in NumPy."""
    sig, relu = (lambda v: 1 / (1 + np.exp(-v))), (lambda v: np.maximum(v, 0))
    ms, xs = np.split(m_prev @ recurrent_kernel, 8, axis=1), np.split(x @ kernel, 8, axis=1)
    layer1 = [sig(xs[0] + ms[0]), relu(xs[1] + ms[1]), sig(xs[2] + ms[2]), relu(xs[3] * ms[3]),
              np.tanh(xs[4] + ms[4]), sig(xs[5] + ms[5]), np.tanh(xs[6] + ms[6]), sig(xs[7] + ms[7])]
    l2_0, l2_1 = np.tanh(layer1[0] * layer1[1]), np.tanh(layer1[2] + layer1[3])
    l2_2, l2_3 = np.tanh(layer1[4] * layer1[5]), sig(layer1[6] + layer1[7])
    l2_0 = np.tanh(l2_0 + c_prev)
    new_c = l2_0 * l2_1
    new_m = np.tanh(new_c * np.tanh(l2_2 + l2_3))
    return new_c, new_m


def test_nas_cell_against_tensorflows_definition_over_three_steps():
    rng = np.random.default_rng(5)
    cell = NasCell(2, 3)
    kernel, recurrent = rng.normal(0, 0.8, (2, 24)), rng.normal(0, 0.8, (3, 24))
    set_weights(cell, weight_input=kernel, weight_state=recurrent)
    xs, c, m = rng.normal(size=(3, 4, 2)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    with torch.no_grad():
        out, (c_out, m_out) = cell(t(xs), (t(c), t(m)))
    for step in range(3):
        c, m = tf_nas_step(xs[step], c, m, kernel, recurrent)
        np.testing.assert_allclose(out[step].numpy(), m, rtol=1e-12)
    np.testing.assert_allclose(c_out.numpy(), c, rtol=1e-12)
    np.testing.assert_allclose(m_out.numpy(), m, rtol=1e-12)
    assert sum(p.numel() for p in cell.parameters()) == 8 * 3 * (2 + 3)  # no bias, as TensorFlow's default


@pytest.mark.parametrize("make", [lambda: CappedLstmCell(3, 4, "capped"), lambda: RhnCell(3, 4, depth=3), lambda: NasCell(3, 4)],
                         ids=["lstm", "rhn", "nas"])
def test_state_mask_multiplies_the_state_for_every_gate_and_every_step(make):
    """The masked run equals an unmasked run of the same cell whose state matrix rows are scaled by the mask:
    h·diag(m)·W = (m⊙h)·W for every gate's columns at once, at every step (and micro-step)."""
    torch.manual_seed(0)
    cell = make().double()
    inputs, mask = torch.randn(5, 1, 3, dtype=torch.float64), t([[0.0, 2.0, 2.0, 0.0]])
    state = tuple(torch.randn_like(s) for s in cell.zero_state(1, inputs))
    masked, _ = cell(inputs, state, state_mask=mask)
    unmasked, _ = cell(inputs, state)
    with torch.no_grad():
        cell.weight_state.mul_(mask[0].view(1, -1, 1) if isinstance(cell, RhnCell) else mask[0].view(-1, 1))
    scaled, _ = cell(inputs, state)
    torch.testing.assert_close(masked, scaled, rtol=1e-12, atol=1e-12)
    assert (masked - unmasked).abs().max() > 1e-3  # the mask does change the outputs


def test_nas_refuses_recurrent_dropout():
    with pytest.raises(ValueError, match="NAS cell has no single proposed update"):
        NasCell(2, 3)(torch.zeros(1, 1, 2), (torch.zeros(1, 3), torch.zeros(1, 3)), update_mask=torch.ones(1, 3))
