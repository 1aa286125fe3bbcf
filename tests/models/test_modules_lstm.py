"""models/modules/lstm.py: the masked LSTM encoder, ESIM's init and variational dropout."""
import math

import torch

from syw.models.modules import LstmEncoder, VariationalDropout


def one_unit_encoder(bidirectional):
    """H = 1, D = 1: gates i, f, o see nothing (0.5 each); the cell candidate is tanh(x)."""
    encoder = LstmEncoder(1, 1, bidirectional=bidirectional)
    with torch.no_grad():
        for name, param in encoder.lstm.named_parameters():
            param.zero_()
            if name.startswith("weight_ih"):
                param[2, 0] = 1.0
    return encoder


def test_one_unit_lstm_by_hand_skips_padding_in_both_directions():
    encoder = one_unit_encoder(bidirectional=True)
    x = torch.tensor([[[1.0], [0.0], [5.0]]])  # the 5.0 is padding: it must not be read
    out = encoder(x, torch.tensor([[True, True, False]]))
    # forward: c1 = 0.5·tanh(1), h1 = 0.5·tanh(c1); then x = 0 adds nothing: c2 = 0.5·c1
    expected_forward = [0.1816997, 0.0940653, 0.0]
    # backward starts at the last real token (x = 0, so c = 0), then reads x = 1
    expected_backward = [0.1816997, 0.0, 0.0]
    assert out.shape == (1, 3, 2)
    torch.testing.assert_close(out[0, :, 0], torch.tensor(expected_forward))
    torch.testing.assert_close(out[0, :, 1], torch.tensor(expected_backward))
    assert out[0, 2].eq(0).all()


def test_padded_batch_equals_each_row_alone_and_empty_rows_are_zero():
    torch.manual_seed(0)
    encoder = LstmEncoder(3, 4, num_layers=2, bidirectional=True).double()
    lengths = [5, 2, 0, 3]
    x = torch.randn(4, 6, 3, dtype=torch.double)
    mask = torch.arange(6) < torch.tensor(lengths).unsqueeze(1)
    out = encoder(x, mask)
    assert out.shape == (4, 6, 8)
    assert out[~mask].eq(0).all()  # exactly zero, the empty row included
    for row, length in enumerate(lengths):
        if length:
            alone, _ = encoder.lstm(x[row : row + 1, :length])
            torch.testing.assert_close(out[row, :length], alone[0])


def test_dropout_is_between_layers_only():
    assert LstmEncoder(3, 4, num_layers=1, dropout=0.5).lstm.dropout == 0.0
    assert LstmEncoder(3, 4, num_layers=2, dropout=0.5).lstm.dropout == 0.5
    assert LstmEncoder(3, 4, bidirectional=False).output_dim == 4


def test_esim_init():
    torch.manual_seed(0)
    hidden = 6
    lstm = LstmEncoder(5, hidden, num_layers=2, bidirectional=True, esim_init=True).lstm
    for suffix in ["l0", "l0_reverse", "l1", "l1_reverse"]:
        w_hh = getattr(lstm, f"weight_hh_{suffix}")
        # orthogonal as one 4H×H matrix: orthonormal columns, while a gate's block alone is not
        torch.testing.assert_close(w_hh.t() @ w_hh, torch.eye(hidden), atol=1e-5, rtol=0)
        forget = w_hh[hidden : 2 * hidden]
        assert not torch.allclose(forget.t() @ forget, torch.eye(hidden), atol=0.1)
        w_ih = getattr(lstm, f"weight_ih_{suffix}")
        bound = math.sqrt(6 / (w_ih.shape[1] + 4 * hidden))
        assert 0.9 * bound < w_ih.abs().max().item() <= bound
        assert getattr(lstm, f"bias_ih_{suffix}").eq(0).all()
        expected = torch.tensor([0.0] * hidden + [1.0] * hidden + [0.0] * 2 * hidden)
        assert torch.equal(getattr(lstm, f"bias_hh_{suffix}"), expected)


def test_variational_dropout_shares_one_mask_over_time():
    torch.manual_seed(0)
    dropout = VariationalDropout(0.5)
    x = torch.ones(3, 7, 40)
    out = dropout(x)
    assert torch.equal(out, out[:, :1].expand_as(out))  # the same mask at every step
    assert set(out.unique().tolist()) == {0.0, 2.0}  # kept units scaled by 1/(1-p)
    assert not torch.equal(out[0, 0], out[1, 0])  # one mask per sequence
    assert torch.equal(dropout.eval()(x), x)
