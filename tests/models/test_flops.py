"""syw/models/flops.py: the FLOP counts behind the benchmarks' efficiency estimates, by hand."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from syw.models.flops import device_seconds, efficiency, lstm_flops, matmul_gflops, pass_flops


def test_lstm_flops_count_every_layer_and_direction_by_hand():
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, batch_first=True)
    x = torch.randn(3, 7, 10)
    per_position = 2 * (8 * 20 * (10 + 20) + 8 * 20 * (40 + 20))  # layer 2 reads both directions' 40
    assert lstm_flops(lstm, x) == 21 * per_position
    assert lstm_flops(lstm, pack_padded_sequence(x, [7, 5, 2], batch_first=True)) == 14 * per_position


def test_pass_flops_add_the_lstms_the_counter_misses():
    torch.manual_seed(0)
    model = nn.Sequential(nn.LSTM(4, 6, batch_first=True))
    head = nn.Linear(6, 2)
    x = torch.randn(5, 3, 4)
    lstm = 8 * 6 * (4 + 6) * 15
    assert pass_flops(model, lambda: head(model(x)[0]), backward=False) == lstm + 2 * 6 * 2 * 15
    # backward: the linear layer's two products (input and weight gradients), the LSTM's twice its forward
    assert pass_flops(model, lambda: head(model(x)[0]).sum().backward(), backward=True) == 3 * lstm + 3 * 2 * 6 * 2 * 15
    assert matmul_gflops(n=64, repeat=2) > 0


def test_efficiency_is_the_work_rate_over_the_matrix_product_rate():
    # 120 GFLOP in 4 CPU seconds = 30 GFLOP/s; against 100 GFLOP/s that is 30%
    assert efficiency(120.0 / 4.0, 100.0) == "30% of the matrix-product rate"
    assert efficiency(1.0, 3.0) == "33% of the matrix-product rate"


def test_device_seconds_on_a_cpu_is_the_cpu_clock():
    seconds = device_seconds(lambda: sum(i * i for i in range(200_000)), torch.device("cpu"))
    assert 0 < seconds < 5
