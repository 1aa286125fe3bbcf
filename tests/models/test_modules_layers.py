"""models/modules/layers.py: Highway, Maxout and ScalarMix with weights set by hand."""
import math

import pytest
import torch

from syw.models.modules import Highway, Maxout, ScalarMix


def test_highway_gate_bias_starts_at_one_and_mixes_by_hand():
    highway = Highway(1, num_layers=1)
    assert highway.layers[0].bias[1].item() == 1.0  # the gate half
    with torch.no_grad():
        highway.layers[0].weight.copy_(torch.tensor([[2.0], [0.0]]))  # t = 2x, gate logit = 0·x + 1
        highway.layers[0].bias[0] = 0.0
    g = 1 / (1 + math.exp(-1.0))  # 0.7310586
    out = highway(torch.tensor([[1.5], [-1.0]]))
    # x = 1.5: g·1.5 + (1-g)·relu(3) = 1.9034121; x = -1: relu(-2) = 0, so g·(-1)
    torch.testing.assert_close(out, torch.tensor([[1.9034121], [-0.7310586]]))
    assert out[0].item() == pytest.approx(g * 1.5 + (1 - g) * 3.0)


def test_highway_layers_chain_and_gate_biases():
    highway = Highway(3, num_layers=2, activation="tanh")
    for layer in highway.layers:
        assert layer.bias[3:].tolist() == [1.0, 1.0, 1.0]
    with torch.no_grad():
        for layer in highway.layers:
            layer.weight.zero_()
            layer.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 100.0, 100.0, 100.0]))  # gates fully open
    x = torch.tensor([[0.3, -2.0, 5.0]])
    torch.testing.assert_close(highway(x), x)  # carry everything through both layers


def test_maxout_pools_contiguous_units():
    maxout = Maxout(1, 1, output_dims=2, pool_sizes=3)
    with torch.no_grad():
        maxout.linears[0].weight.copy_(torch.tensor([[1.0], [2.0], [3.0], [-1.0], [-2.0], [-3.0]]))
        maxout.linears[0].bias.zero_()
    # unit 0 = max(x, 2x, 3x), unit 1 = max(-x, -2x, -3x); strided pools would give [3, 2] at x = 1
    assert maxout(torch.tensor([[1.0], [-2.0]])).tolist() == [[3.0, -1.0], [-2.0, 6.0]]
    assert maxout.output_dim == 2


def test_maxout_layers_and_dropout():
    maxout = Maxout(8, 3, output_dims=[5, 4, 2], pool_sizes=[2, 3, 4], dropout=1.0)
    assert [tuple(linear.weight.shape) for linear in maxout.linears] == [(10, 8), (12, 5), (8, 4)]
    x = torch.randn(6, 8)
    assert maxout.train()(x).eq(0).all()  # dropout after the last layer too
    assert maxout.eval()(x).shape == (6, 2)


def test_scalar_mix_by_hand():
    mix = ScalarMix(3, initial_scalar_parameters=[0.0, math.log(2.0), math.log(5.0)])
    layers = [torch.full((1, 2, 3), value) for value in (8.0, 16.0, 0.0)]
    # softmax(w) = [1/8, 2/8, 5/8]: 1 + 4 + 0
    torch.testing.assert_close(mix(layers), torch.full((1, 2, 3), 5.0))
    with torch.no_grad():
        mix.gamma.fill_(2.0)
    torch.testing.assert_close(mix(layers), torch.full((1, 2, 3), 10.0))
    assert mix.scalar_parameters.requires_grad and mix.gamma.requires_grad
    frozen = ScalarMix(2, trainable=False)
    assert frozen.scalar_parameters.tolist() == [0.0, 0.0] and not frozen.gamma.requires_grad
    with pytest.raises(ValueError):
        frozen(layers)


def test_scalar_mix_masked_layer_norm():
    mix = ScalarMix(1, do_layer_norm=True)
    layer = torch.tensor([[[1.0, 3.0], [100.0, 100.0]]])
    # mean and variance over the real elements 1 and 3 only: μ = 2, σ² = 1
    out = mix([layer], torch.tensor([[True, False]]))
    torch.testing.assert_close(out, torch.tensor([[[-1.0, 1.0], [98.0, 98.0]]]))
