"""Control characters in group names (issue 75, item 21): an ESC sequence or a newline in a name is written as
Python writes it in a repr (``\\x1b``, ``\\n``), at reading, so the terminal, report.md, its table and
expected_max.csv all show the same escaped name, and nothing raw reaches them."""
from __future__ import annotations

import csv

import pandas as pd
import pytest

from syw.cli import main

NAMES = {"a\x1b[31mred": "a\\x1b[31mred", "b\nnext": "b\\nnext", "c\u2028sep\x7f": "c\\u2028sep\\x7f"}
RAW = ("\x1b", "\u2028", "\x7f")


@pytest.fixture
def trials(tmp_path):
    path = tmp_path / "t.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "val_acc"])
        for k, name in enumerate(NAMES):
            writer.writerows([name, 0.5 + 0.1 * k + 0.01 * j] for j in range(4))
    return path


def test_group_names_are_escaped_everywhere_they_are_written(trials, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["curve", str(trials), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    report = (out / "report.md").read_text()
    table = pd.read_csv(out / "expected_max.csv")
    assert sorted(table["group"].unique()) == sorted(NAMES.values())
    for text in (printed.out, printed.err, report, (out / "expected_max.csv").read_text()):
        assert not any(c in text for c in RAW)
    assert all(f"| {shown} | 4 |" in report for shown in NAMES.values())  # one table row each, not broken by a newline
    rows = [line for line in report.split("## Expected best")[1].split("\n\n")[1].splitlines() if line.startswith("|")]
    assert len(rows) == 2 + len(NAMES)  # header, rule and a row per group


def test_the_checklist_escapes_them_alike(trials, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(trials), "--out", str(out)]) == 0
    text = (out / "checklist.md").read_text() + capsys.readouterr().out
    assert not any(c in text for c in RAW) and all(shown in text for shown in NAMES.values())
