"""The command line and assignments of a benchmark that times a study's families
(``python -m benchmarks.<name>``): the data folder it reads, its options, and the first assignments
of each family under the study seed 0 with their settings resolved."""
from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from syw.core.entry import Parser, positive_int
from syw.core.paths import REPO
from syw.core.settings import resolve
from syw.core.units import count
from syw.experiments.space import Family, load_family, study_config, trial_seed
from syw.models.flops import matmul_gflops
from syw.models.trainer import configure_torch


def data_dir() -> Path:
    """The data folder a benchmark reads: ``$SYW_DATA_DIR``, else ``.data`` in the checkout."""
    return Path(os.environ.get("SYW_DATA_DIR") or REPO / ".data")


def family_parser(doc: str, study: str, family: str, trials: int) -> argparse.ArgumentParser:
    """The options of a benchmark of one family of a study (``--study``, ``--family``, ``--trials``),
    described by the first line of the script's ``doc``; the script adds its own."""
    parser = Parser(description=doc.splitlines()[0])
    parser.add_argument("--study", default=study)
    parser.add_argument("--family", default=family)
    parser.add_argument("--trials", type=positive_int, default=trials)
    return parser


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
    parser = Parser(description=description)
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
