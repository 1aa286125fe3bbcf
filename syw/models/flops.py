"""Compute measured for the timing benchmarks and the GPU check: CPU-time clocks (GPU seconds on
CUDA), the device's matrix-product rate, and the FLOPs of one forward (and backward) pass, LSTMs
included, for an efficiency estimate."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence
from torch.utils.flop_counter import FlopCounterMode


def clock(work: Callable[[], object]) -> tuple[float, float]:
    """CPU seconds of this process (the time a trial with a core to itself would take) and wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def device_seconds(work: Callable[[], object], device: torch.device) -> float:
    """The seconds ``work()`` takes on ``device``: CPU seconds of this process on a CPU (:func:`clock`),
    wall seconds from an idle GPU until it has finished the work on CUDA (kernels run asynchronously)."""
    if device.type != "cuda":
        return clock(work)[0]
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    work()
    torch.cuda.synchronize(device)
    return time.perf_counter() - start


def matmul_gflops(n: int = 512, repeat: int = 20, device: torch.device | str = "cpu") -> float:
    """The fp32 matrix-product rate in GFLOP/s (2 FLOP per multiply-add): per CPU second on one core,
    per second on a GPU (n x n products, the first one untimed; float32 as ``configure_torch`` sets it)."""
    device = torch.device(device)
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    a @ b
    return 2 * n**3 * repeat / device_seconds(lambda: [a @ b for _ in range(repeat)], device) / 1e9


def efficiency(gflops: float, rate: float) -> str:
    """The efficiency estimate every timing prints: the work rate reached, ``gflops`` (GFLOP per CPU
    second, or per GPU second), as a share of the device's matrix-product ``rate`` (:func:`matmul_gflops`)."""
    return f"{gflops / rate:.0%} of the matrix-product rate"


def lstm_flops(module: nn.LSTM, x: torch.Tensor | PackedSequence) -> float:
    """Forward FLOPs of a torch LSTM over ``x``: 8·H·(in + H) per token, layer and direction (4 gates,
    2 FLOP per multiply-add), padded positions included unless ``x`` is packed."""
    positions = x.data.shape[0] if isinstance(x, PackedSequence) else x.shape[0] * x.shape[1]
    hidden, directions = module.hidden_size, 2 if module.bidirectional else 1
    sizes = [module.input_size] + [hidden * directions] * (module.num_layers - 1)
    return sum(8 * hidden * (size + hidden) * positions * directions for size in sizes)


def pass_flops(model: nn.Module, work: Callable[[], object], backward: bool) -> float:
    """FLOPs of ``work()`` (one forward pass of ``model``, and its backward when ``backward``):
    torch's counter (matrix products, convolutions) plus the fused LSTMs it does not see (their
    backward counted as twice their forward)."""
    lstm = [0.0]
    hooks = [m.register_forward_hook(lambda mod, args, _out: lstm.__setitem__(0, lstm[0] + lstm_flops(mod, args[0])))
             for m in model.modules() if isinstance(m, nn.LSTM)]
    try:
        with FlopCounterMode(display=False) as counter:
            work()
    finally:
        for hook in hooks:
            hook.remove()
    return counter.get_total_flops() + lstm[0] * (3 if backward else 1)

