"""Cost-aware curves (syw.analysis.cost): the expected best within a wall-clock budget, checked against Eq. 8
where durations are equal and against enumeration where they are not; readable time ticks; time
crossovers without the flips of nearly equal durations; what ``syw curve --x cost`` writes."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from syw.analysis import expected_max, time_crossovers  # noqa: E402
from syw.analysis.cost import cost_curve, round_time_ticks  # noqa: E402
from syw.core.entry import run_main
from syw.curve.command import main  # noqa: E402
from syw.curve.style import duration_label, time_ticks  # noqa: E402


@pytest.mark.parametrize("workers", [1, 3])
def test_equal_durations_give_eq8_at_k_times_floor_t_over_d(workers):
    scores = np.random.default_rng(0).uniform(size=30)
    ns = np.array([1, 2, 5, 9])
    curve = cost_curve(scores, np.full(30, 10.0), ns * 10.0 + 5.0, workers=workers, searches=20000)
    error = curve.sd / np.sqrt(curve.searches)
    assert np.all(np.abs(curve.mean - expected_max(scores, workers * ns)) < 4 * error)
    assert np.all(curve.finished == 1.0) and curve.standard_error == pytest.approx(error.max())


def test_unequal_durations_by_enumeration():
    """A fast bad trial (0, 1 s) and a slow good one (1, 3 s), one worker: by T = 3 s every search has
    finished a trial, and the best is 1 exactly when the first draw was the slow one: E = 1/2. By 2.9 s
    only the searches that began with the fast trial have finished one (P = 1/2), all with best 0. By
    5 s: slow first (1/2); fast then slow (1/4, ends at 4); fast, fast, slow ends at 5 (1/8): E = 7/8."""
    curve = cost_curve([0.0, 1.0], [1.0, 3.0], np.array([2.9, 3.0, 5.0]), searches=40000)
    assert curve.finished.tolist() == pytest.approx([0.5, 1.0, 1.0], abs=0.01)
    assert curve.mean[0] == 0.0
    assert curve.mean[1:] == pytest.approx([0.5, 0.875], abs=4 * 0.5 / np.sqrt(40000))
    lower = cost_curve([0.0, 1.0], [1.0, 3.0], np.array([3.0]), maximize=False, searches=40000)
    assert lower.mean[0] == pytest.approx(0.5, abs=0.01)  # the best is now 0 exactly when the fast came first


def test_time_ticks_read_from_fractions_of_a_second_to_days():
    assert [duration_label(s) for s in (0.25, 42, 90, 3 * 3600, 2.5 * 86400)] == ["0.25s", "42s", "1.5min", "3h", "2.5d"]
    assert list(round_time_ticks(0.1, 3.0)) == ["0.1s", "0.2s", "0.5s", "1s", "2s"]
    assert list(round_time_ticks(50 * 86400, 200 * 86400)) == ["64d", "128d"]
    fig, ax = plt.subplots()
    ax.plot([0.012, 0.045], [0, 1])
    ax.set_xlim(0.012, 0.045)
    time_ticks(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    plt.close(fig)
    assert labels and len(set(labels)) == len(labels) and all(label.endswith("s") for label in labels)
    assert not any(label in ("0s", "0 s") for label in labels)


def test_nearly_equal_durations_do_not_trade_the_lead_at_every_step():
    ns = np.arange(1, 41)
    a = 0.8 - 0.3 / ns  # A is ahead at every n by 0.001
    b = a - 0.001
    steps = time_crossovers(a, 61.0, b, 60.0, ("A", "B"))  # B, a second faster, has a trial more at times
    smooth = time_crossovers(a, 61.0, b, 60.0, ("A", "B"), interpolate=True)
    assert len(steps) > 10  # the lead changes hands at almost every trial
    # drawn through their points, B's speed wins while the curves are steep, A's 0.001 once they flatten
    (once,) = smooth
    assert (once.leader, once.previous) == ("A", "B") and 60 * 5 <= once.at <= 61 * 6


def test_syw_curve_x_cost_writes_the_curve_the_figure_and_the_report(tmp_path, capsys):
    rng = np.random.default_rng(4)
    rows = pd.DataFrame({"model": ["fast"] * 30 + ["slow"] * 30, "val_acc": rng.uniform(0.3, 0.6, 60),
                         "runtime": np.r_[rng.uniform(1, 3, 30), rng.uniform(50, 150, 30)]})
    rows.to_csv(tmp_path / "r.csv", index=False)
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "r.csv"), "--x", "cost", "--workers", "2", "--target", "0.55",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out / "cost_curve.csv")
    fast = table[table.group == "fast"]
    assert set(table.workers) == {2}
    assert fast[fast.expected_best.notna()].seconds.max() <= rows[rows.model == "fast"].runtime.sum() * (1 + 1e-9)
    drawn = fast[fast.drawn]
    assert (drawn.p_finished >= 0.95).all() and drawn.expected_best.is_monotonic_increasing
    report = (out / "report.md").read_text()
    assert "## Within a wall-clock budget (cost-aware, 2 worker(s))" in report and "simulated searches" in report
    assert (out / "curve.png").stat().st_size > 5000
    (tmp_path / "n.csv").write_text("model,val_acc\na,0.5\n")
    assert run_main(main, ["curve", str(tmp_path / "n.csv"), "--x", "cost", "--out", str(tmp_path / "p")]) == 2
    assert "--x cost needs a training-time column" in capsys.readouterr().err
    assert run_main(main, ["curve", str(tmp_path / "r.csv"), "--x", "cost", "--statistic", "median", "--out", str(tmp_path / "q")]) == 2
    assert "--x cost draws the mean best within a time" in capsys.readouterr().err
