"""models/modules/attention.py and pooling.py on hand-computed cases."""
import math

import torch

from syw.models.modules import (
    BilinearSimilarity,
    SelfAttentivePooling,
    TrilinearSimilarity,
    dot_similarity,
    masked_log_softmax,
    masked_max,
    masked_mean,
    masked_min,
    masked_softmax,
    replace_masked_values,
    weighted_sum,
)

E = math.e


def test_masked_softmax_formula_and_fully_masked_row():
    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    out = masked_softmax(x, torch.tensor([[True, True, False], [False, False, False]]))
    # softmax([1, 2, 0])·[1, 1, 0] renormalised: [e, e², 0] / (e + e²)
    torch.testing.assert_close(out, torch.tensor([[1 / (1 + E), E / (1 + E), 0.0], [0.0, 0.0, 0.0]]))
    assert out[0, 2].item() == 0.0 and not out.isnan().any()
    # the formula's 1e-13: softmax([0, 0])·[1, 0] = [0.5, 0], divided by 0.5 + 1e-13
    single = masked_softmax(torch.tensor([[0.0, 0.0]], dtype=torch.double), torch.tensor([[True, False]]))
    assert single[0].tolist() == [0.5 / (0.5 + 1e-13), 0.0]


def test_masked_softmax_masks_keys_of_every_query():
    scores = torch.tensor([[[0.0, 0.0, 9.0], [math.log(3.0), 0.0, -9.0]]])  # (B=1, T=2, J=3)
    out = masked_softmax(scores, torch.tensor([[True, True, False]]))
    torch.testing.assert_close(out, torch.tensor([[[0.5, 0.5, 0.0], [0.75, 0.25, 0.0]]]))


def test_masked_log_softmax():
    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    out = masked_log_softmax(x, torch.tensor([[True, True, False], [False, False, False]]))
    torch.testing.assert_close(out[0, :2], torch.tensor([-math.log(1 + E), -math.log(1 + 1 / E)]))
    assert out[0, 2].item() < -100  # shifted by log(1e-45), about -103.3 in float32
    # a fully masked row: every entry gets the same shift, so it is log_softmax(x), not NaN
    torch.testing.assert_close(out[1], torch.tensor([-2.4076059, -1.4076059, -0.4076059]))
    assert not out.isnan().any()


def test_replace_masked_values_and_weighted_sum():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert replace_masked_values(x, torch.tensor([[1, 0], [0, 1]]), -9.0).tolist() == [[1.0, -9.0], [-9.0, 4.0]]
    matrix = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    assert weighted_sum(matrix, torch.tensor([[0.25, 0.75]])).tolist() == [[2.5, 3.5]]
    assert weighted_sum(matrix, torch.tensor([[[1.0, 0.0], [0.5, 0.5]]])).tolist() == [[[1.0, 2.0], [2.0, 3.0]]]


def test_dot_and_bilinear_similarity():
    a = torch.tensor([[[1.0, 2.0]]])
    b = torch.tensor([[[3.0, 4.0], [5.0, 6.0]]])
    assert dot_similarity(a, b).tolist() == [[[11.0, 17.0]]]
    torch.manual_seed(0)
    bilinear = BilinearSimilarity(2, 2)
    assert bilinear.bias.item() == 0.0 and bilinear.weight.abs().max() <= math.sqrt(6 / 4)
    with torch.no_grad():
        bilinear.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
        bilinear.bias.fill_(0.5)
    assert bilinear(a, b).tolist() == [[[1 * 3 + 2 * 2 * 4 + 0.5, 1 * 5 + 2 * 2 * 6 + 0.5]]]  # 19.5, 29.5


def test_trilinear_by_hand_and_against_the_concatenation():
    trilinear = TrilinearSimilarity(2)
    assert trilinear.weight.shape == (6,) and trilinear.bias.item() == 0.0
    assert trilinear.weight.abs().max() <= math.sqrt(6 / 7)
    with torch.no_grad():
        trilinear.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        trilinear.bias.fill_(0.5)
    # h = [1, 2], u = [3, -1]: w_h·h = 5, w_u·u = 5, w_hu·(h⊙u) = 15 - 12 = 3, + 0.5
    assert trilinear(torch.tensor([[[1.0, 2.0]]]), torch.tensor([[[3.0, -1.0]]])).item() == 13.5
    torch.manual_seed(1)
    trilinear = TrilinearSimilarity(4).double()
    with torch.no_grad():
        trilinear.bias.fill_(-0.3)
    h, u = torch.randn(2, 3, 4, dtype=torch.double), torch.randn(2, 5, 4, dtype=torch.double)
    hh, uu = h.unsqueeze(2).expand(2, 3, 5, 4), u.unsqueeze(1).expand(2, 3, 5, 4)
    naive = torch.cat([hh, uu, hh * uu], dim=-1) @ trilinear.weight + trilinear.bias
    torch.testing.assert_close(trilinear(h, u), naive)


def test_poolings_ignore_padding():
    # padding 0 would win the max of column 0 and the min of column 1
    x = torch.tensor([[[-3.0, 5.0], [-2.0, 4.0], [0.0, 0.0]], [[7.0, 8.0], [0.0, 0.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, True, False], [False, False, False]])
    assert masked_max(x, mask).tolist() == [[-2.0, 5.0], [-1e7, -1e7]]
    assert masked_min(x, mask).tolist() == [[-3.0, 4.0], [1e7, 1e7]]
    assert masked_mean(x, mask).tolist() == [[-2.5, 4.5], [0.0, 0.0]]


def test_self_attentive_pooling():
    pooling = SelfAttentivePooling(2)
    with torch.no_grad():
        pooling.projection.weight.copy_(torch.tensor([[1.0, 0.0]]))
        pooling.projection.bias.fill_(0.0)
    x = torch.tensor([[[0.0, 5.0], [math.log(3.0), 7.0], [9.0, 9.0]]])
    # scores [0, ln 3] -> weights [1/4, 3/4]; the padded row (score 9) gets none
    out = pooling(x, torch.tensor([[True, True, False]]))
    torch.testing.assert_close(out, torch.tensor([[0.75 * math.log(3.0), 0.25 * 5 + 0.75 * 7]]))
