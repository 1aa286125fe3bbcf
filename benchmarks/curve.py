"""``syw curve`` wall time against the number of trials (issue 61, item 3): two groups of N normal scores
each, N = 50 to 10,000, the whole command as a user runs it (start-up, reading, Eq. 8 at every budget, the
comparison, both figures, the report), in ``--repeat`` rounds in which the sizes take turns; the ratio to N = 50
is the median over rounds of the two times in one round.
At N = 50 it also splits the time: the libraries' imports alone, matplotlib writing the figure files, and
the rest (syw's own reading, computing and importing). As a user's Python does, the commands cache each
module's compiled bytecode on a first run, which is not counted: an environment with PYTHONDONTWRITEBYTECODE
set (as on this project's machines) would otherwise compile every module of syw on every run, about 0.4 s.

It then times start-up at N = 50 with and without figures (``--no-figure`` imports no matplotlib, which it
checks), and ``syw curve --no-figure`` on ``--million`` trials in 2 groups (default 1,000,000): its wall time
and peak memory (issue 72: at most 10 s and 1 GB here), beside opda's ``average_tuning_curve`` on one group of
the same size at 233 budgets.

    python -m benchmarks.curve [--sizes 50 1000 10000] [--repeat 3] [--million 1000000]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from syw.core.entry import positive_int, run_main


def trials_file(folder: Path, size: int) -> Path:
    """Two groups (a, b) of ``size`` scores each, drawn from normals 0.01 apart (seed 0)."""
    rng = np.random.default_rng(0)
    path = folder / f"trials_{size}.csv"
    lines = ["family,value"] + [f"{g},{x:.6f}" for g, mu in (("a", 0.50), ("b", 0.51)) for x in rng.normal(mu, 0.05, size)]
    path.write_text("\n".join(lines) + "\n")
    return path


# What syw curve needs before it reads a trial: its libraries' import time is a floor no change to syw removes.
LIBRARIES = "import numpy, pandas, matplotlib; matplotlib.use('agg'); import matplotlib.pyplot"
# The same command in one process, with the seconds matplotlib spends writing the figure files (syw.curve.style.save)
# counted apart: what is left is syw's own reading, computing and importing.
SAVING = """
import sys, time
from syw.curve import style as plot
from syw.curve.command import main
spent, save = [0.0], plot.save
def timed(*args, **kwargs):
    start = time.perf_counter()
    paths = save(*args, **kwargs)
    spent[0] += time.perf_counter() - start
    return paths
plot.save = timed
main(["curve", sys.argv[1], "--out", sys.argv[2]])
print(spent[0])
"""


# --no-figure in one process: whether matplotlib was imported.
NO_FIGURE = """
import sys
from syw.curve.command import main
main(["curve", sys.argv[1], "--out", sys.argv[2], "--no-figure"])
print("matplotlib imported" if any(m.split(".")[0] == "matplotlib" for m in sys.modules) else "no matplotlib")
"""
# A large table in one process: its wall time (start-up included) and this process's peak memory.
LARGE = """
import resource, sys, time
start = time.perf_counter()
from syw.curve.command import main
main(["curve", sys.argv[1], "--out", sys.argv[2], "--no-figure"])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""
OPDA = """
import sys, time
import numpy as np
from opda.nonparametric import EmpiricalDistribution
ys = np.random.default_rng(0).normal(0.5, 0.05, int(sys.argv[1]))
start = time.perf_counter()
EmpiricalDistribution(ys).average_tuning_curve(np.unique(np.geomspace(1, ys.size, 233).round().astype(int)))
print(time.perf_counter() - start)
"""


# Python's default: bytecode written once, read on every later run (see the module docstring).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def rounds(commands: dict[object, list[str]], repeat: int) -> dict[object, list[float]]:
    """Each command's wall seconds in ``repeat`` rounds, the commands taking turns within a round (so that a drift
    in the machine's speed moves a round's times alike), after one uncounted round that caches their bytecode."""
    out: dict[object, list[float]] = {key: [] for key in commands}
    for k in range(repeat + 1):
        for key, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=ENV)
            if k:
                out[key].append(time.perf_counter() - start)
    return out


def split_seconds(trials: Path, repeat: int) -> tuple[float, float]:
    """Of the quickest of ``repeat`` runs of ``syw curve trials``: its wall time and the part spent writing figure files."""
    runs = []
    for _ in range(repeat):  # after rounds(): the bytecode is cached
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", SAVING, str(trials), str(trials.with_suffix(""))], check=True,
                             capture_output=True, text=True, env=ENV).stdout
        runs.append((time.perf_counter() - start, float(out.split()[-1])))
    return min(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.curve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=positive_int, nargs="+", default=[50, 200, 1000, 10000])
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument("--million", type=positive_int, default=1_000_000, help="trials in all for the large run (2 groups)")
    args = parser.parse_args(argv)
    sizes = sorted(set(args.sizes) | {50})
    with tempfile.TemporaryDirectory() as tmp:
        commands: dict[object, list[str]] = {n: [sys.executable, "-m", "syw", "curve", str(trials_file(Path(tmp), n))]
                                             for n in sizes}
        commands["libraries"] = [sys.executable, "-c", LIBRARIES]
        small = trials_file(Path(tmp), 50)
        commands["no figure"] = [sys.executable, "-m", "syw", "curve", str(small), "--no-figure", "--out", f"{tmp}/nf"]
        runs = rounds(commands, args.repeat)
        whole, saving = split_seconds(small, args.repeat)
        imported = subprocess.run([sys.executable, "-c", NO_FIGURE, str(small), f"{tmp}/nf2"], check=True,
                                  capture_output=True, text=True, env=ENV).stdout.split("\n")[-2]
        large = trials_file(Path(tmp), args.million // 2)
        seconds, megabytes = map(float, subprocess.run([sys.executable, "-c", LARGE, str(large), f"{tmp}/large"],
                                                       check=True, capture_output=True, text=True,
                                                       env=ENV).stdout.split()[-2:])
        opda = float(subprocess.run([sys.executable, "-c", OPDA, str(args.million)], check=True, capture_output=True,
                                    text=True, env=ENV).stdout.split()[-1])
    best = {key: min(times) for key, times in runs.items()}
    ratio = {n: float(np.median([t / t50 for t, t50 in zip(runs[n], runs[50])])) for n in sizes}
    floor = best["libraries"]
    print(f"syw curve, 2 groups x N trials, {args.repeat} rounds (seconds, including start-up; the ratio is the median "
          "over rounds of N's time to N = 50's in the same round):\n")
    print("| N per group | best | median | ratio to N = 50 |\n|---|---|---|---|")
    for n in sizes:
        print(f"| {n:,} | {best[n]:.2f} | {np.median(runs[n]):.2f} | {ratio[n]:.2f} |")
    print(f"\nimporting numpy, pandas and matplotlib alone: {floor:.2f} s ({floor / best[50]:.0%} of N = 50's best)")
    print(f"N = 50 split (one run of {whole:.2f} s): matplotlib writing the figure files (PDF and PNG of each) "
          f"{saving:.2f} s; the rest beyond the libraries' imports (syw's own reading, computing and importing) "
          f"{max(0.0, whole - floor - saving):.2f} s")
    print(f"goals (issue 61): N = 50 in at most 1.5 s: {'met' if best[50] <= 1.5 else 'missed'} (best run); "
          f"the largest N within twice N = 50: {'met' if ratio[sizes[-1]] <= 2 else 'missed'}")
    print(f"\nstart-up at N = 50 (best of {args.repeat}): with figures {best[50]:.2f} s, --no-figure "
          f"{best['no figure']:.2f} s ({imported})")
    print(f"{args.million:,} trials in 2 groups, --no-figure: {seconds:.1f} s, peak memory {megabytes:,.0f} MB"
          + (f" (issue 72, at 1,000,000: at most 10 s and 1 GB: {'met' if seconds <= 10 and megabytes <= 1024 else 'missed'}); "
             if args.million == 1_000_000 else "; ")
          + f"opda's average_tuning_curve on one group of {args.million:,} at 233 budgets: {opda:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
