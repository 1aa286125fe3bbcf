"""``syw curve --latex`` (issue 65, item 2): the expected-max table (Eq. 8 ± its SD) and the comparisons as
booktabs tabulars, their numbers those of expected_max.csv, names escaped; compiled by pdflatex where installed."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from syw.curve import api
from syw.curve.command import main
from syw.curve.latex import escape
from tests.support.latex import compiles, needs_pdflatex

SCORES = {"svc_random": [0.62, 0.70, 0.80, 0.75, 0.65], "logreg": [0.95, 0.96, 0.97, 0.955, 0.965, 0.90]}


def rows(tex: str) -> dict[str, list[str]]:
    """The body rows of the first tabular: first cell -> the others."""
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in line.removesuffix(r" \\").split(" & ")]
                                             for line in body.strip().splitlines())}


def test_the_expected_max_table_holds_eq8_and_its_sd_at_each_budget():
    result = api.curves(SCORES)
    tex = result.latex(budgets=[1, 5, 6])
    table = result.table().set_index(["group", "n"])
    got = rows(tex)
    assert set(got) == {"logreg", r"svc\_random"}
    for group, cells in (("logreg", got["logreg"]), ("svc_random", got[r"svc\_random"])):
        assert cells[0] == str(len(SCORES[group]))
        for n, cell in zip([1, 5, 6], cells[1:]):
            if n > len(SCORES[group]):
                assert cell == "--"
                continue
            mean, sd = map(float, re.fullmatch(r"([\d.]+) \$\\pm\$ ([\d.]+)", cell).groups())
            assert mean == pytest.approx(table.loc[(group, n), "expected_max"], abs=5e-4)
            assert sd == pytest.approx(table.loc[(group, n), "spread_sd"], abs=5e-4)
    assert tex.count("\\toprule") == tex.count("\\bottomrule") == 2  # and the comparison's table
    assert (r"logreg vs svc\_random & $1$--$5$ & 95\% intervals of simultaneous claims & logreg for $n \in [1, 1]$; "
            r"undecided with 6 and 5 trials for $n \in [2, 5]$ \\") in tex


def test_escape_prints_every_special_character_literally():
    assert escape("a_b&c%d$e#f{g}h~i^j\\k") == (r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j"
                                                 r"\textbackslash{}k")


def test_syw_curve_latex_writes_tables_tex(tmp_path):
    trials = tmp_path / "t.csv"
    pd.DataFrame([(g, s) for g, scores in SCORES.items() for s in scores], columns=["model", "val_acc"]).to_csv(
        trials, index=False)
    assert main(["curve", str(trials), "--out", str(tmp_path / "o"), "--latex"]) == 0
    tex = (tmp_path / "o" / "tables.tex").read_text()
    assert rows(tex)["logreg"][0] == "6" and "Who leads" in tex
    assert main(["curve", str(trials), "--out", str(tmp_path / "p")]) == 0
    assert not (tmp_path / "p" / "tables.tex").exists()


@needs_pdflatex
def test_the_tables_compile_with_pdflatex(tmp_path):
    compiles(tmp_path, api.curves(SCORES).latex())
