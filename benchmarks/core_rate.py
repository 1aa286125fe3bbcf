"""One thread's float32 matrix-product rate with 1, 2, ... processes computing at once: whether the
trials a study runs side by side (one per core, one thread each) slow each other down.

    python -m benchmarks.core_rate [--processes 1 2] [--rounds 5]    # (or: make bench-core-rate)

Each round starts every count of processes in turn, each process a fresh interpreter on one torch
thread timing :func:`benchmarks.flops.matmul_gflops` (GFLOP per CPU second) after a go signal that
reaches all of them at once. On cores of their own every process keeps the one-process rate; on
cores that share execution units (SMT siblings behind a hypervisor's vCPUs, say) or memory
bandwidth, each process's rate falls. Run it with nothing else busy: a study beside it is one more
process at once.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from syw.core.entry import positive_int, run_main
from syw.core.units import count

REPO = Path(__file__).resolve().parent.parent

# One process: import torch, say ready, wait for the go line on stdin, then time the products.
ONE = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from syw.models.flops import matmul_gflops
torch.set_num_threads(1)
matmul_gflops(n=256, repeat=2)
print("ready", flush=True)
sys.stdin.readline()
print(matmul_gflops(n=512, repeat=int(sys.argv[2])), flush=True)
"""


def rates_at_once(processes: int, repeat: int) -> list[float]:
    """The rate each of ``processes`` fresh interpreters measures, all released at the same moment."""
    children = [subprocess.Popen([sys.executable, "-c", ONE, str(REPO), str(repeat)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    for child in children:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"a timing process ended before it was ready (exit status {child.wait()})")
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    rates = [float(child.communicate()[0]) for child in children]
    failed = [child.returncode for child in children if child.returncode]
    if failed:
        raise RuntimeError(f"a timing process failed (exit status {failed[0]})")
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=positive_int, nargs="+", default=[1, os.cpu_count() or 1],
                        help="how many processes compute at once, each count in turn (default: 1 and the CPU count)")
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--repeat", type=positive_int, default=200, help="512 x 512 products each process times")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs; float32 512 x 512 matrix products, GFLOP per CPU second of one thread", flush=True)
    seen: dict[int, list[float]] = {k: [] for k in args.processes}
    for round_ in range(1, args.rounds + 1):
        for k in args.processes:
            rates = rates_at_once(k, args.repeat)
            seen[k] += rates
            print(f"round {round_}, {k} at once: " + ", ".join(f"{r:.1f}" for r in rates), flush=True)
    alone = statistics.median(seen[args.processes[0]])
    for k, rates in seen.items():
        print(f"{k} at once: median {statistics.median(rates):.1f} (min {min(rates):.1f}, max {max(rates):.1f}) over "
              f"{count(len(rates), 'timing')} = {statistics.median(rates) / alone:.2f} of {args.processes[0]} at once", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
