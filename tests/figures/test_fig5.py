"""Figure 5 and its budgets (case study 5, Melis et al. 2018) on synthetic records in the runner's layout:
Eq. 8 with direction min, the GP tuner's mean best-so-far, the trials it saves and the leader by n, by hand."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from syw.core.entry import run_main
from syw.experiments.study import load_study
from syw.figures import __main__ as cli
from syw.figures import fig5
from syw.figures.sources import study_with_records
from tests.support.fake_records import write_records, write_study
from tests.support.figure_util import kept, legend_texts

STUDY = "ptb_melis_reduced"
LSTM = [130.0, 100.0, None, 160.0, 110.0]  # trial 2 failed: N = 4 ok trials, sorted 100, 110, 130, 160
GP_RUNS = [[150.0, 130.0, 140.0, 110.0], [120.0, None, 100.0, 105.0], [160.0, 60.0, 95.0, 99.0]]
GP_MEAN = [(150 + 120 + 160) / 3, (130 + 120 + 60) / 3, (130 + 100 + 60) / 3, (110 + 100 + 60) / 3]  # best so far, by hand
# Eq. 8, direction min, N = 4 without ties: P(min of n = i-th smallest) = ((5 - i) / 4)^n - ((4 - i) / 4)^n
EQ8_AT_4 = 100 * (1 - 0.75 ** 4) + 110 * (0.75 ** 4 - 0.5 ** 4) + 130 * (0.5 ** 4 - 0.25 ** 4) + 160 * 0.25 ** 4


def write_family(folder: Path, family: str, values: list, duration: float, *, strategy: str = "random",
                 tuner_seed: int = 0) -> Path:
    """Records as the runner writes them; None is a failed trial."""
    name = f"{family}.jsonl" if strategy == "random" else f"{strategy}/{family}.tuner_seed{tuner_seed}.jsonl"
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_records(path, [{
        "study": folder.name, "family": family, "trial": trial, "seed": trial, "status": "failed" if value is None else "ok",
        "metric": "perplexity", "direction": "min", "value": value, "params": {"dropout": 0.1 * trial},
        "duration_seconds": duration, "strategy": strategy, "tuner_seed": tuner_seed,
        "tuner": {"concurrency": 1, "startup_trials": 2}, "command": f"syw run study={folder.name}"}
        for trial, value in enumerate(values)])


def write_melis(results: Path, *, gp: list | None = None, study: str = STUDY) -> Path:
    """LSTM as above; RHN 50 above it and NAS 30 below it at every trial (NAS leads at every n)."""
    folder = results / study
    write_family(folder, "lstm", LSTM, 60.0)
    ok = [v for v in LSTM if v is not None]
    write_family(folder, "rhn", [v + 50 for v in ok], 120.0)
    write_family(folder, "nas", [v - 30 for v in ok], 90.0)
    for seed, run in enumerate(gp or []):
        write_family(folder, "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    return folder


def row(text: str, first: str) -> list[str]:
    """The cells of the Markdown table row starting with ``| first |``."""
    line = next(line for line in text.splitlines() if line.startswith(f"| {first} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_eq8_with_direction_min_by_hand(tmp_path):
    study, cells = fig5.cells(write_melis(tmp_path / "results").parent)
    lstm = cells[0]
    assert study == STUDY and [c.group.name for c in cells] == ["lstm", "rhn", "nas"]
    assert lstm.trials.tolist() == [0, 1, 3, 4] and lstm.failed == 1
    ns, mean, sd = lstm.curve()
    assert mean[0] == pytest.approx(np.mean([130, 100, 160, 110]))  # the expected minimum of one draw: the mean
    assert sd[0] == pytest.approx(np.sqrt(525.0))
    assert mean[-1] == pytest.approx(EQ8_AT_4) and 100 < mean[-1] < mean[0]  # towards the minimum, 100
    assert np.all(np.diff(mean) < 0)  # lower is better: the curve falls with n
    assert cells[2].curve()[1] == pytest.approx(mean - 30)


def test_gp_mean_best_so_far_and_the_trials_it_saves(tmp_path):
    results = tmp_path / "results"
    write_melis(results, gp=GP_RUNS)
    _, cells = fig5.cells(results)
    tuner = cells[0].tuner
    assert tuner.runs == 3 and tuner.lengths == (4, 4, 4) and cells[1].tuner is None
    assert tuner.mean == pytest.approx(GP_MEAN)  # the failed trial keeps its run's best so far
    assert tuner.sd[0] == pytest.approx(np.std([150, 120, 160], ddof=1))
    text = fig5.budget_markdown(STUDY, cells)
    assert row(text, "4 (N)") == ["4 (N)", f"{EQ8_AT_4:.2f}", f"{EQ8_AT_4 + 50:.2f}", f"{EQ8_AT_4 - 30:.2f}",
                                  f"{GP_MEAN[3]:.2f} ± {np.std([110, 100, 60], ddof=1):.2f} (3 runs)", "nas"]
    # GP means 143.33, 103.33, ...: 103.33 is the first at or below random search's 104.53 at N = 4
    assert f"expected best at N = 4 is {EQ8_AT_4:.2f}; the GP runs' mean best-so-far reaches it at n = 2: " \
           "the GP tuner saves 2 of 4 trials." in text


def test_the_gp_tuner_that_never_reaches_random_search_saves_nothing(tmp_path):
    results = tmp_path / "results"
    write_melis(results, gp=[[150.0, 140.0, 130.0, 120.0], [200.0, 110.0, 105.0, 105.0]])
    text = fig5.budget_markdown(*fig5.cells(results))
    assert "does not reach it within 4 trials: not within N." in text


def test_gp_runs_shorter_than_random_search_that_have_not_reached_it_leave_the_saving_unknown(tmp_path):
    results = tmp_path / "results"
    write_melis(results, gp=[[150.0, 140.0], [200.0, 110.0, 105.0]])
    text = fig5.budget_markdown(*fig5.cells(results))
    assert "does not reach it within 2 trials, where the shortest run ends: not known yet." in text


def test_the_cell_with_uniformly_lower_perplexity_leads_and_the_table_is_the_records(tmp_path):
    text = fig5.budget_markdown(*fig5.cells(write_melis(tmp_path / "results").parent))
    assert row(text, "1") == ["1", "125.00", "175.00", "95.00", "nas"]
    assert "Leader by n (lowest expected best, random search, n = 1 to the smallest N): nas at n = 1-4." in text
    assert row(text, "lstm: LSTM (Melis et al. 2018; REDUCED to 2M weights, 2 epochs)")[1:] == ["4", "1", "0", "1.0 min", "100.00 (trial 1)"]
    assert row(text, "nas: NAS (Melis et al. 2018; REDUCED to 2M weights, 2 epochs)")[5] == "70.00 (trial 1)"
    assert "No GP-tuner runs with a finished trial in `ptb_melis_reduced/gp/`" in text
    # NAS is the LSTM's trials less 30: at n = 1 Welch's t on 4 trials each (SD 26.5), t = 1.6, no leader at 95%
    assert "- Mean curves, lstm vs nas (n = 1 to 4, simultaneous claims): undecided with 4 and 4 trials for n in [1, 4]" in text


def test_fig5_draws_both_panels_falling_and_says_what_it_shows(tmp_path, monkeypatch):
    results, out = tmp_path / "results", tmp_path / "out"
    write_melis(results, gp=GP_RUNS)
    drawn = kept(monkeypatch)
    assert cli.main(["fig5", "--results", str(results), "--out", str(out)]) == 0
    for name in ("fig5.png", "fig5.pdf", "fig5_caption.md"):
        assert (out / name).stat().st_size > 500, name
    fig = drawn[-1]
    by_n, by_time = fig.axes
    curves = [line for line in by_n.get_lines() if line.get_drawstyle() == "default"]
    assert len(curves) == 3 and all(np.all(np.diff(line.get_ydata()) < 0) for line in curves)
    gp = next(line for line in by_n.get_lines() if line.get_drawstyle() == "steps-post")
    assert list(gp.get_ydata()) == pytest.approx(GP_MEAN)
    # where the trials end, with room left of the first budget so that its shading is not on the spine
    assert by_n.get_xlim() == (0.5, 4) and by_time.get_xlim() == pytest.approx((60 / 1.15, 4 * 120))
    (inset,) = by_n.child_axes  # from n = 2 (no leader changes here), linear, the curves within its range
    assert inset.get_xlim() == (2, 4) and inset.get_yscale() == "linear" and len(inset.get_lines()) == 4
    low, high = inset.get_ylim()
    assert all(low <= y <= high for line in inset.get_lines() for y in line.get_ydata())
    steps = [line for line in by_time.get_lines() if line.get_drawstyle() == "steps-post"]
    assert len(steps) == 3  # against time, each curve in steps (n trials' value holds until the next trial ends)
    title = fig._suptitle.get_text()
    assert "(ptb_melis_reduced)" in title and "lstm N = 4, rhn N = 4, nas N = 4" in title and "2M weights" in title
    assert "LSTM, GP tuner: best-so-far, mean of 3 runs (not Eq. 8)" in legend_texts(fig)
    caption = (out / "fig5_caption.md").read_text()
    assert "REDUCED: 2M weights" in caption and "lstm: 1 failed trial(s)" in caption and "mean of 3 independent runs" in caption


def test_a_diverged_trial_counts_at_the_floor_and_every_cell_is_drawn(tmp_path, monkeypatch):
    results, out = tmp_path / "results", tmp_path / "out"
    folder = write_melis(results)
    write_family(folder, "rhn", [180.0, 150.0, 210.0, 1e34], 120.0)  # RHN's trial 3 diverged: 10,000 (ptb's floor)
    drawn = kept(monkeypatch)
    assert cli.main(["fig5", "--results", str(results), "--out", str(out)]) == 0
    by_n, by_time = drawn[-1].axes
    first = (10000 + 180 + 150 + 210) / 4  # Eq. 8 at n = 1: the mean, the diverged trial at the floor
    rhn = next(line for line in by_n.get_lines() if line.get_label().startswith("RHN") and line.get_linestyle() == "-")
    assert rhn.get_ydata()[0] == pytest.approx(first) and not by_n.texts and not by_time.texts
    assert by_n.get_ylim()[1] >= first and by_n.get_yscale() == "log"  # 2,635 over NAS's 70: more than LOG_SPAN
    # Leaving out the floored trial moves the mean at n = 1 by 2,635 - 180, more than the range of the rest (60):
    # the median is drawn too; at n = 1 it is the median trial (the lower of the middle two, 180: F(180) = 0.5).
    median = next(line for line in by_n.get_lines() if line.get_linestyle() == ":")
    assert median.get_ydata()[0] == 180 and median.get_ydata()[-1] == 150 and "median best of n" in median.get_label()
    caption = (out / "fig5_caption.md").read_text()
    assert "count at 10000; trials counted at it: rhn 1." in caption and "Dotted: rhn." in caption
    text = fig5.budget_markdown(*fig5.cells(results))
    assert row(text, "rhn: RHN (Melis et al. 2018, depth 5; REDUCED to 2M weights, 2 epochs)")[1:4] == ["4", "0", "1"]
    assert f"| 1 | 125.00 | {first:.2f} | " in text


def test_without_a_floor_a_diverged_trial_is_named_above_the_axis(tmp_path, monkeypatch):
    from syw.figures import sources
    for module in (fig5, sources):
        monkeypatch.setattr(module, "load_study", lambda study: replace(load_study(study), floor=None))
    results, out = tmp_path / "results", tmp_path / "out"
    folder = write_melis(results)
    write_family(folder, "rhn", [180.0, 150.0, 210.0, 1e34], 120.0)  # RHN's trial 3 diverged
    drawn = kept(monkeypatch)
    assert cli.main(["fig5", "--results", str(results), "--out", str(out)]) == 0
    by_n, by_time = drawn[-1].axes
    # Eq. 8 at n = 1 is the mean; at n = N = 4 the diverged trial still weighs (1/4)^4, with 210 at (2/4)^4 - (1/4)^4 and so on.
    first, last = (1e34 + 180 + 150 + 210) / 4, 1e34 / 4 ** 4 + 210 * (2 ** 4 - 1) / 4 ** 4 + 180 * (3 ** 4 - 2 ** 4) / 4 ** 4 \
        + 150 * (4 ** 4 - 3 ** 4) / 4 ** 4
    assert by_n.get_yscale() == by_time.get_yscale() == "linear"
    # The ceiling is 10 x NAS's curve at N; below it: from NAS's best, 70, to the RHN's median at n = 1 (180, drawn:
    # the diverged trial sways the mean), padded by 5% of the span each way.
    low, high = 70, 180
    pad = 0.05 * (high - low)
    assert by_n.get_ylim() == pytest.approx((low - pad, high + pad)) and by_time.get_ylim() == pytest.approx((low - pad, high + pad))
    named = f"↑ rhn above the axis at n = 1-4 ({fig5.score(first)} to {fig5.score(last)})"
    assert [t.get_text() for t in by_n.texts] == [t.get_text() for t in by_time.texts] == [named]
    # the off-scale RHN gets no ±1 SD shading (clipped to 150..1e34 it would cover both panels): the LSTM's and NAS's only
    shaded = [c for c in by_n.collections if any(len(path.vertices) for path in c.get_paths())]
    assert len(shaded) == 2 and len([c for c in by_time.collections if any(len(p.vertices) for p in c.get_paths())]) == 2
    caption = (out / "fig5_caption.md").read_text()
    assert f"at most 10 times the lowest point of any curve ({fig5.score(10 * (EQ8_AT_4 - 30))}): rhn at n = 1-4, " \
           f"from {fig5.score(first)} to {fig5.score(last)}." in caption
    # The table writes the diverged curve with an exponent, not as 35 digits; the LSTM at n = 1: the mean, 125.
    assert f"| 1 | 125.00 | {first:.3e} | " in fig5.budget_markdown(*fig5.cells(results))


def test_curves_below_the_ceiling_are_all_drawn_to_scale(tmp_path, monkeypatch):
    write_melis(tmp_path / "results")
    drawn = kept(monkeypatch)
    assert cli.main(["fig5", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out")]) == 0
    assert all(ax.get_yscale() == "linear" and not ax.texts for ax in drawn[-1].axes)
    assert "Above the axis" not in (tmp_path / "out" / "fig5_caption.md").read_text()


def test_without_gp_runs_the_caption_says_so(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    write_melis(results, gp=[[None, None]])  # a run whose trials all failed draws nothing
    assert cli.main(["fig5", "--results", str(results), "--out", str(out)]) == 0
    caption = (out / "fig5_caption.md").read_text()
    assert "no GP-tuner runs" in caption and "the figure shows random search only" in caption


def test_no_records_is_one_line_and_exit_2_writing_nothing(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "out"
    write_family(results / STUDY, "lstm", GP_RUNS[0], 60.0, strategy="gp")  # a tuner run alone is no random search
    assert run_main(cli.main, ["fig5", "--results", str(results), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{results / STUDY}" in err[0] and "`syw run study=ptb_melis_reduced`" in err[0]
    assert not out.exists()
    assert run_main(cli.main, ["fig5", "--source", "paper", "--results", str(results), "--out", str(out)]) == 2


def test_the_full_study_is_drawn_once_it_has_records(tmp_path):
    results = tmp_path / "results"
    write_melis(results)
    assert study_with_records(results, fig5.STUDY, fig5.REDUCED) == STUDY
    write_family(results / "ptb_melis", "lstm", [70.0], 600.0)
    assert study_with_records(results, fig5.STUDY, fig5.REDUCED) == "ptb_melis"


def test_budgets_include_case_study_5_and_say_when_it_has_no_records(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    write_study(results, "scitail_cpu", {"ngram": (0.62, 0.05, 2.0), "dam": (0.66, 0.05, 60.0),
                                             "esim": (0.64, 0.06, 300.0), "dgem": (0.6, 0.05, 100.0)}, n=10)
    assert cli.main(["budgets", "--results", str(results), "--out", str(out)]) == 0
    text = (out / "budgets_fig5.md").read_text()
    assert "no table yet" in text and "syw run study=ptb_melis_reduced" in text
    write_melis(results, gp=GP_RUNS)
    assert cli.main(["budgets", "--results", str(results), "--out", str(out)]) == 0
    assert "the GP tuner saves 2 of 4 trials" in (out / "budgets_fig5.md").read_text()


def test_one_gp_run_is_one_run(tmp_path):
    results = tmp_path / "results"
    write_melis(results, gp=[[150.0, 140.0]])
    study, cells_ = fig5.cells(results)
    assert "GP tuner: lstm 1 run of 2 trials" in fig5.title(study, cells_)
    assert "| 150.00 ± - (1 run) |" in fig5.budget_markdown(study, cells_)
