"""What the timing benchmarks share: CPU-time clocks (GPU seconds on CUDA), the device's
matrix-product rate, the FLOPs of one forward (and backward) pass, LSTMs included, for an
efficiency estimate, and the command line and assignments of a benchmark that times a study's families."""
from __future__ import annotations

import argparse
import importlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence
from torch.utils.flop_counter import FlopCounterMode

from syw.core.entry import positive_int
from syw.core.paths import REPO
from syw.core.settings import resolve
from syw.core.units import count
from syw.experiments.space import Family, load_family, study_config, trial_seed
from syw.models.trainer import configure_torch


def data_dir() -> Path:
    """The data folder a benchmark reads: ``$SYW_DATA_DIR``, else ``.data`` in the checkout."""
    return Path(os.environ.get("SYW_DATA_DIR") or REPO / ".data")


def family_parser(doc: str, study: str, family: str, trials: int) -> argparse.ArgumentParser:
    """The options of a benchmark of one family of a study (``--study``, ``--family``, ``--trials``),
    described by the first line of the script's ``doc``; the script adds its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--study", default=study)
    parser.add_argument("--family", default=family)
    parser.add_argument("--trials", type=positive_int, default=trials)
    return parser


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


@dataclass(frozen=True)
class Assignment:
    """One of a family's first assignments under the study seed 0, its settings resolved."""

    short: str  # the family's short name in the study
    stem: str  # its family file's name
    family: Family
    module: ModuleType  # the module of the family's training function
    index: int
    params: dict[str, Any]

    @property
    def seed(self) -> int:
        return trial_seed(0, self.short, self.index)


@dataclass(frozen=True)
class StudyTiming:
    """A study timing's command line, the study, the data folder, the device timed and its matrix-product rate."""

    args: argparse.Namespace
    study: dict[str, Any]
    data_dir: Path
    rate: float  # GFLOP/s per CPU second on one thread, or per second on the GPU (:func:`matmul_gflops`)
    device: torch.device = torch.device("cpu")

    def assignments(self) -> Iterator[Assignment]:
        """The first ``--trials`` assignments of each family of the study (or of those ``--family`` names)."""
        for short, stem in self.study["families"].items():
            if self.args.family and short not in self.args.family:
                continue
            family = load_family(stem, short)
            module = importlib.import_module(family.train_target.rpartition(".")[0])
            for index in range(self.args.trials):
                yield Assignment(short, stem, family, module, index, resolve(family.params(0, index), module.SETTINGS))


def study_timing(description: str, study: str, trials: int, batches: int, batches_help: str,
                 argv: list[str] | None = None, with_device: bool = False,
                 options: Callable[[argparse.ArgumentParser], object] | None = None) -> StudyTiming:
    """Parse ``--study``, ``--family``, ``--trials`` and ``--batches`` (with these defaults; ``--device cpu|cuda``
    too when the benchmark can time a GPU; ``options`` adds the script's own), set torch as a trial would on
    that device (one thread), and measure and print the matrix-product rate; the data folder is
    ``$SYW_DATA_DIR`` or ``.data``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--study", default=study)
    parser.add_argument("--family", nargs="*", help="short names of the study's families (default: all)")
    parser.add_argument("--trials", type=positive_int, default=trials, help="assignments per family (the study seed's first)")
    parser.add_argument("--batches", type=positive_int, default=batches, help=batches_help)
    if with_device:
        parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                            help="cuda: GPU seconds on the first GPU (wall time between synchronisations)")
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    device = torch.device(getattr(args, "device", "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no CUDA device (a CPU build of torch, or no GPU here)")
    configure_torch(device, flush_denormal=False)
    config = study_config(args.study)
    if device.type == "cuda":
        rate = matmul_gflops(n=8192, repeat=10, device=device)
        where = f"per second on {torch.cuda.get_device_name(device)} (float32, torch {torch.__version__})"
    else:
        rate, where = matmul_gflops(), f"per CPU second on {count(torch.get_num_threads(), 'thread')}"
    print(f"study {args.study}; matrix products: {rate:,.1f} GFLOP/s {where}", flush=True)
    return StudyTiming(args, config, data_dir(), rate, device)
