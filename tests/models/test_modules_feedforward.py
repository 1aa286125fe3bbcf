"""models/modules/feedforward.py: FeedForward, feedforward_from and init_linear_ on hand cases."""
import math
from pathlib import Path

import pytest
import torch
import yaml
from torch import nn

from syw.models.modules import FeedForward, feedforward_from, init_linear_

SEARCH_SPACES = Path(__file__).resolve().parents[2] / "conf" / "search_space"


def best_assignment(name):
    return yaml.safe_load(next(SEARCH_SPACES.glob(f"*/{name}.yaml")).read_text())["reported"]["best_assignment"]


def set_linear(linear, weight, bias):
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(weight))
        linear.bias.copy_(torch.tensor(bias))


def test_two_layers_with_hand_weights():
    ff = FeedForward(2, 2, [2, 1], ["relu", "linear"])
    set_linear(ff.linears[0], [[1.0, -1.0], [2.0, 0.0]], [0.0, -1.0])
    set_linear(ff.linears[1], [[3.0, -2.0]], [0.5])
    # [1,2] -> relu([-1, 1]) = [0, 1] -> -2 + 0.5; [3,1] -> relu([2, 5]) -> 6 - 10 + 0.5
    out = ff(torch.tensor([[1.0, 2.0], [3.0, 1.0]]))
    assert out.tolist() == [[-1.5], [-3.5]]
    assert ff.output_dim == 1


@pytest.mark.parametrize("name, expected", [("relu", 0.0), ("tanh", math.tanh(-2.0)), ("linear", -2.0),
                                            ("sigmoid", 1 / (1 + math.exp(2.0)))])
def test_activations_by_name(name, expected):
    ff = FeedForward(1, 1, 1, name)
    set_linear(ff.linears[0], [[1.0]], [0.0])
    assert ff(torch.tensor([[-2.0]])).item() == pytest.approx(expected, abs=1e-7)


def test_dropout_follows_the_last_layer_too():
    ff = FeedForward(2, 1, 3, "sigmoid", dropout=1.0)  # sigmoid > 0, so only dropout can give 0
    x = torch.randn(4, 2)
    assert ff.train()(x).eq(0).all()
    assert ff.eval()(x).gt(0).all()


def test_scalars_repeat_and_sequences_must_fit():
    ff = FeedForward(4, 3, 5, "tanh", 0.2)
    assert [tuple(linear.weight.shape) for linear in ff.linears] == [(5, 4), (5, 5), (5, 5)]
    assert [type(act) for act in ff.activations] == [nn.Tanh] * 3
    assert [dropout.p for dropout in ff.dropouts] == [0.2] * 3
    with pytest.raises(ValueError, match="2 values for 3 layers"):
        FeedForward(4, 3, [5, 6], "tanh")
    with pytest.raises(ValueError, match="unknown activation"):
        FeedForward(4, 1, 5, "gelu")


def describe(ff):
    return ([tuple(linear.weight.shape) for linear in ff.linears], [type(act) for act in ff.activations],
            [dropout.p for dropout in ff.dropouts])


def test_feedforward_from_the_search_spaces_best_assignments():
    bcn = best_assignment("sst2_bcn_glove")  # 3 layers of 232, tanh, dropout 0.0
    assert describe(feedforward_from(bcn, "pre_encode_ff", 50)) == (
        [(232, 50), (232, 232), (232, 232)], [nn.Tanh] * 3, [0.0] * 3)
    esim = best_assignment("scitail_esim")  # the projection FF has no dropout setting
    assert describe(feedforward_from(esim, "projection_ff", 8 * 253)) == (
        [(85, 2024), (85, 85)], [nn.ReLU] * 2, [0.0] * 2)
    assert describe(feedforward_from(esim, "output_ff", 8)) == ([(432, 8), (432, 432)], [nn.Tanh] * 2, [0.03] * 2)
    dam = best_assignment("scitail_dam")
    assert describe(feedforward_from(dam, "aggregate_ff", 740)) == (
        [(370, 740), (370, 370)], [nn.ReLU] * 2, [0.1] * 2)
    ngram = best_assignment("scitail_ngram")  # unprefixed num_layers / hidden_size
    assert describe(feedforward_from(ngram, "", 3)) == ([(167, 3), (167, 167), (167, 167)], [nn.Tanh] * 3, [0.2] * 3)
    dgem = best_assignment("scitail_dgem")  # ends in the 2 logits; the edge FF has no width
    assert describe(feedforward_from(dgem, "phrase_probability", 400, output_dim=2)) == (
        [(268, 400), (2, 268)], [nn.Tanh] * 2, [0.2] * 2)
    assert describe(feedforward_from(dgem, "edge_probability", 210, output_dim=2)) == ([(2, 210)], [nn.Tanh], [0.2])
    assert describe(feedforward_from(dam, "attend_ff", 78, dropout=0.0))[2] == [0.0]


def test_feedforward_from_names_missing_settings():
    with pytest.raises(KeyError, match="edge_probability_hidden_dims"):
        feedforward_from({"edge_probability_layers": 2, "edge_probability_activation": "relu"},
                         "edge_probability", 10, output_dim=2)


def test_init_linear_schemes():
    torch.manual_seed(0)
    ff = FeedForward(300, 2, 200, "relu")
    default_bias = ff.linears[0].bias.clone()
    init_linear_(ff, "xavier_normal")
    assert ff.linears[0].weight.std().item() == pytest.approx(math.sqrt(2 / 500), rel=0.03)
    assert ff.linears[1].weight.std().item() == pytest.approx(math.sqrt(2 / 400), rel=0.03)
    assert torch.equal(ff.linears[0].bias, default_bias)
    init_linear_(ff, "xavier_uniform", zero_bias=True)
    bound = math.sqrt(6 / 500)
    weight = ff.linears[0].weight
    assert weight.abs().max().item() <= bound and weight.abs().max().item() > 0.99 * bound
    assert weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.03)
    assert all(linear.bias.eq(0).all() for linear in ff.linears)
    with pytest.raises(ValueError):
        init_linear_(ff, "kaiming")
