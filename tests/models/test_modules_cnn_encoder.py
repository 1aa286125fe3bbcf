"""models/modules/cnn_encoder.py: CnnEncoder by hand and against nn.Conv1d."""
import pytest
import torch
from torch import nn

from syw.models.modules import CnnEncoder


def hand_encoder():
    encoder = CnnEncoder(1, 1, [1, 2])
    with torch.no_grad():
        encoder.convs[0].weight.fill_(2.0)
        encoder.convs[0].bias.fill_(-1.0)
        encoder.convs[1].weight.copy_(torch.tensor([[[1.0, -1.0]]]))
        encoder.convs[1].bias.fill_(0.0)
    return encoder


def test_hand_case_and_mask_zeroes_padded_rows_that_still_count():
    encoder = hand_encoder()
    x = torch.tensor([[[1.0], [3.0], [2.0]]])
    # width 1: 2x - 1 = [1, 5, 3] -> 5; width 2: x_t - x_t+1 = [-2, 1] -> 1
    assert encoder(x).tolist() == [[5.0, 1.0]]
    # masked, x = [1, 3, 0]: the zeroed row still forms the window [3, 0] -> 3
    assert encoder(x, torch.tensor([[True, True, False]])).tolist() == [[5.0, 3.0]]
    assert encoder.output_dim == 2


@pytest.mark.parametrize("sizes", [[1, 2, 3], [4, 2]])
def test_equals_conv1d_relu_max_with_amax_gradient(sizes):
    torch.manual_seed(0)
    encoder = CnnEncoder(5, 3, sizes).double()
    x = torch.randn(4, 7, 5, dtype=torch.double, requires_grad=True)  # continuous: no tied maxima
    ours = encoder(x)
    reference = torch.cat([conv(x.transpose(1, 2)).relu().amax(dim=2) for conv in encoder.convs], dim=1)
    torch.testing.assert_close(ours, reference)
    weights = torch.randn_like(ours)  # a loss that tells the outputs apart
    params = [x, *encoder.parameters()]
    for got, want in zip(torch.autograd.grad((ours * weights).sum(), params),
                         torch.autograd.grad((reference * weights).sum(), params)):
        torch.testing.assert_close(got, want)


def test_creation_order_matches_the_cnn_classifiers_former_convs():
    """models/cnn.py built ``nn.ModuleList(nn.Conv1d(dim, F, w) for w in 1..M)``; trials must not change."""
    torch.manual_seed(3)
    former = nn.ModuleList(nn.Conv1d(6, 4, width) for width in range(1, 4))
    torch.manual_seed(3)
    encoder = CnnEncoder(6, 4, range(1, 4))
    for ours, theirs in zip(encoder.parameters(), former.parameters(), strict=True):
        assert torch.equal(ours, theirs)
    assert [conv.kernel_size for conv in encoder.convs] == [(1,), (2,), (3,)] and encoder.output_dim == 12
