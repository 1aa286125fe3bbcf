"""Shared by the tests of the per-tool readers (issue 64): a toy sweep's scores, the closed form of Eq. 8
written out independently of syw.analysis, and `syw curve` run on a source with both picks."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from syw.core.entry import run_main

XS = (0.1, 0.35, 0.5, 0.72, 0.9)
GROUPS = ("a", "b")
STEPS = 3


def score(x: float, group: str, step: int) -> float:
    """The toy sweep's validation score of a trial at a step: its best at step 1, its last at step 2."""
    return (1.0 if group == "a" else 0.8) * (1 - (x - 0.6) ** 2) * (1 - 0.1 * (step - 1) ** 2 + 0.01 * step)


def expected(pick: str) -> dict[str, list[float]]:
    """Each group's per-trial scores under ``--pick``."""
    out = {}
    for group in GROUPS:
        series = [[score(x, group, s) for s in range(STEPS)] for x in XS]
        out[group] = [max(s) if pick == "best" else s[-1] for s in series]
    return out


def closed_form(scores, n: int) -> float:
    """E[max of n draws with replacement] = sum_i v_(i) [(i/N)^n - ((i-1)/N)^n] over the sorted scores."""
    v = sorted(scores)
    big_n = len(v)
    return sum(v[i - 1] * ((i / big_n) ** n - ((i - 1) / big_n) ** n) for i in range(1, big_n + 1))


def run_script(script: str, cwd: Path, **env) -> None:
    """A library's own client in a child process (its global state and logging stay out of the tests')."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def check_curve(source: str, tmp_path: Path, column: str, *extra: str, groups: dict | None = None,
                pick_note: bool = True) -> None:
    """`syw curve SOURCE --group COLUMN` with --pick best and last: Eq. 8 within 1e-9 of :func:`closed_form`."""
    from syw.cli import main

    for pick in ("best", "last"):
        out = tmp_path / f"out_{pick}"
        assert main(["curve", source, "--group", column, "--pick", pick, "--out", str(out), *extra]) == 0
        table = pd.read_csv(out / "expected_max.csv")
        want = groups[pick] if groups else expected(pick)
        assert sorted(table["group"].astype(str).unique()) == sorted(want)  # the table's group column is fixed
        for group, scores in want.items():
            mine = table[table["group"].astype(str) == group].sort_values("n")
            assert mine.n.tolist() == list(range(1, len(scores) + 1))
            assert mine.expected_max.tolist() == pytest.approx([closed_form(scores, n) for n in mine.n], abs=1e-9)
        assert (f"each trial counts with its {pick}" in (out / "report.md").read_text()) == pick_note


def one_error_line(argv: list[str], capsys, pattern: str) -> None:
    """Bad input through the CLI: exit status 2 and one line on stderr matching ``pattern``."""
    import re

    from syw.cli import main

    capsys.readouterr()
    assert run_main(main, argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]), lines
