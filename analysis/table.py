"""Read trial records (CSV, TSV or JSONL) and tabulate expected-max curves per group."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.expected_max import expected_max, expected_max_std, expected_max_unbiased
from experiments.records import iter_records


def read_records(path: str | Path) -> pd.DataFrame:
    """Load a records file by extension: .csv, .tsv/.tab, .jsonl/.json (nested fields become ``a.b`` columns).

    Rows with a ``status`` column other than ``ok`` are dropped (the trial records of
    ``experiments.run`` mark failed trials so).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no records file at {path}")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame = pd.read_csv(path)
    elif suffix in (".tsv", ".tab"):
        frame = pd.read_csv(path, sep="\t")
    elif suffix in (".jsonl", ".json"):  # the runner's reader: a torn line from a killed run is skipped
        frame = pd.json_normalize(list(iter_records(path)))
    else:
        raise ValueError(f"{path}: unknown records format {suffix!r} (use .csv, .tsv or .jsonl)")
    if "status" in frame.columns:
        frame = frame[frame["status"] == "ok"]
    return frame.reset_index(drop=True)


def curve_table(
    frame: pd.DataFrame,
    group: str,
    metric: str,
    *,
    duration: str | None = None,
    max_n: int | None = None,
    maximize: bool = True,
) -> pd.DataFrame:
    """One row per (group, n): expected max (Eq. 8), its spread, the unbiased estimate (n <= N) and time."""
    for column in (group, metric) + ((duration,) if duration else ()):
        if column not in frame.columns:
            raise ValueError(f"column {column!r} not in records (have: {', '.join(map(str, frame.columns))})")
    rows = []
    for name, part in frame.groupby(group, sort=True):
        scores = pd.to_numeric(part[metric], errors="raise").to_numpy(dtype=float)
        big_n = scores.size
        ns = np.arange(1, (max_n or big_n) + 1)
        mean, std = expected_max(scores, ns, maximize=maximize), expected_max_std(scores, ns, maximize=maximize)
        unbiased = np.full(ns.size, np.nan)
        inside = ns <= big_n
        unbiased[inside] = expected_max_unbiased(scores, ns[inside], maximize=maximize)
        block = pd.DataFrame(
            {group: name, "n": ns, "N": big_n, "expected_max": mean, "spread_sd": std, "unbiased": unbiased}
        )
        if duration:
            block["seconds"] = ns * pd.to_numeric(part[duration]).mean()
        rows.append(block)
    return pd.concat(rows, ignore_index=True)
