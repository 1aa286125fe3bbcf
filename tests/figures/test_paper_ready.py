"""Figures ready for a paper (issue 65, item 2): ``syw curve --size``, ``--ylim``, ``--label``, the default
title and y label from the score's name, the shading's legend swatch in the colours of the groups shaded.
Checked on the drawn figure (its axes, legend and size) and on the PDF written."""
from __future__ import annotations

import re

import matplotlib.colors
import numpy as np
import pandas as pd
import pytest

import syw.curve.style as plot
from syw.core.entry import run_main
from syw.curve import api
from syw.curve.command import main
from syw.curve.figure import plot_on
from syw.curve.style import Swatch, plt


@pytest.fixture
def drawn(monkeypatch) -> list:
    """The figures ``syw curve`` saves, in order, before they are closed."""
    figures, save = [], plot.save
    monkeypatch.setattr(plot, "save", lambda fig, stem, dpi=200: figures.append(fig) or save(fig, stem, dpi))
    return figures


def trials(tmp_path, metric: str = "value"):
    path = tmp_path / "t.csv"
    pd.DataFrame({"model": ["svc"] * 5 + ["logreg"] * 5,
                  metric: [0.62, 0.70, 0.80, 0.75, 0.65, 0.95, 0.96, 0.97, 0.955, 0.965]}).to_csv(path, index=False)
    return path


def test_size_ylim_and_label_change_the_drawn_figure(tmp_path, drawn):
    out = tmp_path / "o"
    assert main(["curve", str(trials(tmp_path)), "--out", str(out), "--size", "column", "--ylim", "0.94", "0.98",
                 "--label", "svc=SVC", "--label", "logreg=Logistic regression"]) == 0
    fig = drawn[0]
    ax = fig.axes[0]
    assert tuple(fig.get_size_inches()) == pytest.approx((3.3, 3.0))
    assert ax.get_ylim() == pytest.approx((0.94, 0.98))
    texts = [t.get_text() for t in fig.legends[0].texts]
    assert texts[:2] == ["Logistic regression (N = 5)", "SVC (N = 5)"]
    # the Optuna-style score column "value" reads as the validation value, not "...: value"
    assert ax.get_ylabel() == "Expected best validation value"
    assert ax.get_title() == "Expected validation performance: validation value"
    pdf = (out / "curve.pdf").read_bytes()
    width = float(re.search(rb"/MediaBox \[ 0 0 ([\d.]+) ", pdf).group(1))
    assert width == pytest.approx(3.3 * 72)
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType fonts embedded (pdf.fonttype 42)


def test_page_size_and_default_look(tmp_path, drawn):
    assert main(["curve", str(trials(tmp_path, "val_acc")), "--out", str(tmp_path / "p"), "--size", "page"]) == 0
    fig = drawn[0]
    assert fig.get_size_inches()[0] == pytest.approx(6.9)
    assert fig.axes[0].get_ylabel() == "Expected best val_acc"
    low, high = fig.axes[0].get_ylim()
    assert low < 0.704 and 0.97 < high  # without --ylim the axes show every curve: svc's n = 1, logreg's best


@pytest.mark.parametrize("args, said", [(["--label", "knn=KNN"], "--label names 'knn', not a group here"),
                                        (["--label", "svc"], "is not a relabelling"),
                                        (["--ylim", "0.9", "0.5"], "LOW must be below HIGH")])
def test_bad_figure_options_are_one_line(tmp_path, capsys, args, said):
    try:
        code = run_main(main, ["curve", str(trials(tmp_path)), "--out", str(tmp_path / "o"), *args])
    except SystemExit as stop:  # argparse's own error: usage, then one error line
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and said in err.strip().splitlines()[-1] and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_the_shading_swatch_has_the_colours_of_the_shaded_groups_only():
    """One group's scores all equal: its ±1 SD is zero, nothing is shaded for it, and the swatch shows one colour."""
    result = api.curves({"flat": [0.5] * 6, "spread": [0.2, 0.4, 0.6, 0.3, 0.5, 0.7]})
    fig, ax = plt.subplots()
    extra = plot_on(ax, result.curves)
    (swatch,) = [h for h in extra if isinstance(h, Swatch)]
    line = {line.get_label().split(" (")[0]: line.get_color() for line in ax.get_lines()}
    assert [matplotlib.colors.to_hex(p.get_facecolor()) for p in swatch.handles] == \
        [matplotlib.colors.to_hex(line["spread"])]
    plt.close(fig)


def test_the_api_draws_on_given_axes_with_ylim_and_labels():
    result = api.curves({"a": [0.1, 0.5, 0.9, 0.4], "b": [0.3, 0.35, 0.4, 0.45]})
    fig, ax = plt.subplots()
    assert result.draw(ax, ylim=(0.2, 0.8), labels={"a": "Model A"}) is ax
    assert ax.get_ylim() == pytest.approx((0.2, 0.8))
    assert [t.get_text() for t in ax.get_legend().texts][:2] == ["Model A (N = 4)", "b (N = 4)"]
    xs, ys = ax.get_lines()[0].get_data()
    assert ys == pytest.approx(result["a"].mean) and list(xs) == [1, 2, 3, 4]
    assert np.all(np.diff(ys) >= 0)
    plt.close(fig)
