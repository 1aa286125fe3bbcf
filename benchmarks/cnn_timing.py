"""CNN timing of a finished study, read from its trial records (no training).

    python -m benchmarks.cnn_timing [results/sst5/cnn.jsonl]     # (or: make bench-cnn)

Prints seconds per epoch and per trial, the study's wall time (first trial start
to last trial end, and the whole command from the run log if given), and what
dominates: time by learning-rate range and by model size (filters x widths).
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

import numpy as np

from syw.core.entry import run_main

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="?", type=Path, default=REPO / "results" / "sst5" / "cnn.jsonl")
    path = parser.parse_args(argv).records
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    ok = [r for r in rows if r["status"] == "ok"]
    per_epoch = np.concatenate([r["epoch_seconds"] for r in ok])
    durations = np.array([r["duration_seconds"] for r in ok])
    epochs = np.array([r["epochs_run"] for r in ok])
    start = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in rows)
    end = max(datetime.fromisoformat(r["ended_at"]).timestamp() for r in rows)
    print(f"{path}: {len(ok)} ok, {len(rows) - len(ok)} failed; hardware {ok[0]['hardware']['cpu']} x{ok[0]['hardware']['cpu_count']}")
    print(f"seconds per epoch   mean {per_epoch.mean():.2f}  median {np.median(per_epoch):.2f}  max {per_epoch.max():.2f}")
    print(f"seconds per trial   mean {durations.mean():.1f}  median {np.median(durations):.1f}  max {durations.max():.1f}")
    print(f"epochs per trial    mean {epochs.mean():.1f}  (min {epochs.min()}, max {epochs.max()})")
    print(f"study wall time     {(end - start) / 60:.1f} min (first trial start to last trial end); "
          f"sum of trial times {durations.sum() / 60:.1f} min")
    lr = np.array([r["params"]["lr"] for r in ok])
    size = np.array([r["params"]["num_filters"] * r["params"]["max_filter_size"] * (r["params"]["max_filter_size"] + 1) / 2 for r in ok])
    total = durations.sum()
    for name, mask in (("lr < 5e-4", lr < 5e-4), ("lr >= 5e-4", lr >= 5e-4)):
        print(f"  {name:<12} {mask.sum():>3} trials, {durations[mask].sum() / total:5.1%} of trial time, "
              f"mean {epochs[mask].mean() if mask.any() else 0:.1f} epochs")
    big = size >= np.median(size)
    print(f"  larger half of models (filters x sum of widths >= {np.median(size):.0f}): {durations[big].sum() / total:5.1%} of trial time")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
