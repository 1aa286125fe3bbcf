"""The figure of ``syw curve --x time`` (issue 75, item 6): a log time axis by default, as the paper draws
training time (its Figures 2 and 4), so that round durations (2, 5, 10, 20 min) do not print over each other;
``--linear-x`` (``log_x=False``) keeps a linear one; and the bands stay inside the axes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from syw.curve.api import curves
from syw.curve.command import parser
from syw.curve.style import plt


def trials() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(g, float(np.clip(rng.normal(m, 0.05), 0.01, 0.99)), float(rng.uniform(30, 90)))
            for g, m in (("a", 0.7), ("b", 0.65)) for _ in range(40)]
    return pd.DataFrame(rows, columns=["model", "val_acc", "train_time_s"])


def overlapping_labels(ax) -> list[tuple[str, str]]:
    ax.figure.canvas.draw()
    boxes = [(t.get_text(), t.get_window_extent()) for t in ax.get_xticklabels() if t.get_text() and t.get_visible()
             and ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
    return [(a, b) for (a, box_a), (b, box_b) in zip(boxes, boxes[1:]) if box_a.x1 > box_b.x0]


@pytest.fixture(scope="module")
def result():
    return curves(trials(), confidence=0.95)


def test_a_time_axis_is_logarithmic_by_default_and_its_labels_do_not_overlap(result):
    ax = result.draw(x="time")
    assert ax.get_xscale() == "log"
    assert overlapping_labels(ax) == []
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2min", "5min", "10min", "20min"]
    plt.close(ax.figure)


def test_linear_time_stays_possible_and_trials_stay_linear(result):
    ax = result.draw(x="time", log_x=False)
    assert ax.get_xscale() == "linear"
    plt.close(ax.figure)
    ax = result.draw()
    assert ax.get_xscale() == "linear"
    plt.close(ax.figure)


def test_the_command_draws_time_on_a_log_axis_unless_told_linear():
    from syw.curve.command import log_axis

    def parse(*extra: str):
        return parser().parse_args(["curve", "t.csv", *extra])

    assert log_axis(parse("--x", "time")) is True
    assert log_axis(parse("--x", "time", "--linear-x")) is False
    assert log_axis(parse()) is False and log_axis(parse("--log-x")) is True
    with pytest.raises(SystemExit):
        parse("--log-x", "--linear-x")


def test_the_bands_are_clipped_to_the_axes(result):
    ax = result.draw(x="time")
    low, high = ax.get_ylim()
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--" and len(line.get_ydata()) > 2]
    assert len(dashed) == 4  # two edges per group
    for line in dashed:
        y = np.asarray(line.get_ydata(), float)
        assert np.all(y[np.isfinite(y)] >= low) and np.all(y[np.isfinite(y)] <= high)
    assert max(np.nanmax(line.get_ydata()) for line in dashed) == pytest.approx(high)  # the upper edge runs off: clipped
    plt.close(ax.figure)


def test_a_time_axis_is_labelled_at_its_left_end():
    """Issue 75 item 8: Figure 4's axis ran from 20 min with its first label at 1 h; the left end now has its own."""
    from syw.curve.style import plt, time_ticks

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_xlim(1210, 20000)
    time_ticks(ax)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert labels[0] == "20.2min" and labels[1:] == ["1h", "2h", "4h"]
