"""models/modules/padded_lstm.py: the unpacked biLSTM gives the packed encoder's outputs."""
import torch

from syw.models.modules import LstmEncoder
from syw.models.modules.padded_lstm import PaddedLstmEncoder, reverse_within


def test_reverse_within_each_rows_length():
    x = torch.arange(8.0).view(2, 4, 1)
    assert reverse_within(x, torch.tensor([3, 0]))[..., 0].tolist() == [[2.0, 1.0, 0.0, 3.0], [4.0, 5.0, 6.0, 7.0]]


def test_same_outputs_as_the_packed_encoder_with_the_same_weights():
    torch.manual_seed(0)
    packed = LstmEncoder(3, 4, num_layers=2).double()
    padded = PaddedLstmEncoder(3, 4, num_layers=2).double()
    with torch.no_grad():
        for layer in range(2):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(padded.forward_layers[layer], f"{name}_l0").copy_(getattr(packed.lstm, f"{name}_l{layer}"))
                getattr(padded.backward_layers[layer], f"{name}_l0").copy_(getattr(packed.lstm, f"{name}_l{layer}_reverse"))
    lengths = torch.tensor([5, 2, 0, 3])
    x = torch.randn(4, 6, 3, dtype=torch.double)
    mask = torch.arange(6) < lengths.unsqueeze(1)
    out = padded(x, mask)
    assert out.shape == (4, 6, 8) and out[~mask].eq(0).all()  # exactly zero, the empty row included
    torch.testing.assert_close(out, packed(x, mask))


def test_dropout_between_layers_only():
    encoder = PaddedLstmEncoder(2, 3, num_layers=1, dropout=0.9).train()
    x, mask = torch.randn(2, 4, 2), torch.ones(2, 4, dtype=torch.bool)
    torch.testing.assert_close(encoder(x, mask), encoder.eval()(x, mask))  # one layer: no dropout at all
    deep = PaddedLstmEncoder(2, 3, num_layers=2, dropout=0.9).train()
    assert not torch.allclose(deep(x, mask), deep.eval()(x, mask))
