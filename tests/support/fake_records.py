"""Generated trial records and published-layout TSV files for figure and report tests."""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from syw.core.manifest import manifest_of, start
from syw.figures import sources
from syw.figures.specs import FIGURES, FigureSpec


def write_study(results: Path, study: str, families: dict[str, tuple[float, float, float]], n: int = 50, seed: int = 0) -> Path:
    """results/<study>/<family>.jsonl with ``n`` ok trials per family: (score mean, score sd, duration), and the
    manifest of each (``syw.core.manifest``)."""
    rng = np.random.default_rng(seed)
    folder = results / study
    folder.mkdir(parents=True, exist_ok=True)
    for family, (mean, sd, duration) in families.items():
        write_records(folder / f"{family}.jsonl", [{
            "study": study, "family": family, "trial": i, "seed": 0, "status": "ok", "metric": "accuracy",
            "value": float(np.clip(rng.normal(mean, sd), 0, 1)), "params": {"x": float(rng.uniform())},
            "duration_seconds": float(duration * rng.uniform(0.5, 1.5)), "best_epoch": 3, "epochs_run": 8,
            "hardware": {"cpu": "Test CPU", "gpu": "none", "cpu_count": 2, "host": "test"},
            "versions": {"python": "3.11", "torch": "2.13.0", "suite_commit": "abc123"},
            "started_at": "2026-01-01T00:00:00.000+00:00", "ended_at": "2026-01-01T00:00:01.000+00:00",
            "command": f"syw run study={study}",
        } for i in range(n)])
    return folder


def write_records(path: Path, records: list[dict]) -> Path:
    """``records`` as the lines of ``path``, with their manifest made afresh, as ``syw run`` leaves them."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    manifest_of(path).unlink(missing_ok=True)
    start(path, "made by tests/support/fake_records.py")
    return path


def write_paper_file(folder: Path, number: int, seed: int = 0, n: int = 50) -> Path:
    """A small TSV in the layout of the authors' published file for figure ``number``."""
    spec = FIGURES[number].paper
    rng = np.random.default_rng(seed)
    rows = []
    for k, value in enumerate(spec.groups):
        for _ in range(n):
            rows.append({spec.group_column: value, spec.metric_column: float(np.clip(rng.normal(0.5 + 0.05 * k, 0.08), 0, 1)),
                         spec.duration_column: 1.0 if value == "DGEM" else float(rng.uniform(100, 5000)),
                         "trainer.optimizer.lr": float(rng.uniform())})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / spec.name
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def spec_for_paper_file(number: int, path: Path) -> FigureSpec:
    """``FIGURES[number]`` whose authors' file is the fake at ``path`` (its sha256 in place of the published one)."""
    spec = FIGURES[number]
    fake = type(spec.paper)(**{**spec.paper.__dict__, "sha256": sources.file_digest(path, "sha256")})
    return type(spec)(**{**spec.__dict__, "paper": fake})


def use_paper_file(monkeypatch, folder: Path, number: int) -> Path:
    """Write a fake authors' file for figure ``number`` into ``folder`` and point the figures at it."""
    path = write_paper_file(folder, number)
    monkeypatch.setitem(FIGURES, number, spec_for_paper_file(number, path))
    monkeypatch.setattr(sources, "PAPER_DIR", folder)
    monkeypatch.setattr(sources.from_paper, "__defaults__", (folder, None))
    return path
