"""What each figure draws, read off the figure objects (not its pixels): every curve's points are Eq. 8
of its group's scores at each budget (tests/support/oracle.py, over scores read here with json or csv), the
shading is the ±1 SD clipped to the group's observed scores (section 3.3), the reported numbers and
targets are lines at their values, and the axes and legend name what is drawn. For Figures 1-4 from
our records and from the authors' files, and for `syw curve`."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.colors import to_hex

from syw.analysis.inference import budget_interval
from syw.core.paths import CONF_DIR
from syw.curve.command import main as syw
from syw.figures import plot, sources
from syw.figures.__main__ import main
from syw.figures.specs import FIGURES
from tests.support import oracle
from tests.support.fake_records import write_study
from tests.support.figure_util import kept, legend_texts

STUDIES = {  # family: (score mean, score sd, seconds per trial) of the generated records
    1: {"lr": (0.34, 0.03, 1.5), "cnn": (0.29, 0.06, 40)},
    2: {"glove": (0.85, 0.02, 1600), "elmo_frozen": (0.88, 0.03, 6800), "elmo_finetuned": (0.87, 0.05, 16000)},
    3: {"ngram": (0.70, 0.03, 130), "dam": (0.72, 0.08, 340), "esim": (0.74, 0.08, 370), "dgem": (0.70, 0.1, 1000)},
    4: {"bidaf": (0.55, 0.1, 31617)},
}


def line_labelled(ax, label: str):
    (line,) = [line for line in ax.lines if line.get_label() == label]
    return line


def bands(ax) -> list[tuple[str, dict[float, tuple[float, float]]]]:
    """Each shaded area: its colour and, at each x of its outline, the lowest and highest y."""
    out = []
    for collection in ax.collections:
        edges: dict[float, list[float]] = {}
        for x, y in collection.get_paths()[0].vertices:
            edges.setdefault(float(x), []).append(float(y))
        out.append((to_hex(collection.get_facecolor()[0], keep_alpha=False), {x: (min(y), max(y)) for x, y in edges.items()}))
    return out


def check_curve_and_band(ax, label: str, scores: list[float], xs: np.ndarray, shaded: bool, steps: bool = False) -> str:
    """The curve ``label`` is Eq. 8 of ``scores`` at n = 1..len(xs), drawn at ``xs``; with ``shaded``, one
    area of its colour spans the ±1 SD clipped to [min, max] of the scores at each x. With ``steps`` (a time axis)
    both are steps: the value at n holds from its x to the next, so at x_n the outline spans n - 1's and n's.
    Returns its colour."""
    line = line_labelled(ax, label)
    ns = range(1, len(xs) + 1)
    assert line.get_drawstyle() == ("steps-post" if steps else "default"), label
    np.testing.assert_allclose(line.get_xdata(), xs, rtol=1e-12)
    np.testing.assert_allclose(line.get_ydata(), [oracle.eq8(scores, n) for n in ns], atol=1e-12)
    colour = to_hex(line.get_color())
    mine = [edges for c, edges in bands(ax) if c == colour]
    assert len(mine) == (1 if shaded else 0), label
    if shaded:
        band = sorted(mine[0].items())
        np.testing.assert_allclose([x for x, _ in band], xs, rtol=1e-12)
        clipped = []
        for n in ns:
            mean, sd = oracle.eq8(scores, n), oracle.eq8_sd(scores, n)
            clipped.append((max(mean - sd, min(scores)), min(mean + sd, max(scores))))
        for k, (_, drawn) in enumerate(band):
            held = clipped[max(k - 1, 0):k + 1] if steps else clipped[k:k + 1]
            expected = (min(lo for lo, _ in held), max(hi for _, hi in held))
            assert drawn == pytest.approx(expected, abs=1e-12), (label, k + 1)
    return colour


def check_figure(fig, spec, trials: dict[str, dict[str, list[float]]], labels: dict[str, str]) -> None:
    """Everything Figure ``spec.number`` draws, given each family's scores and durations read independently."""
    ax = fig.axes[0]
    colours = {}
    for family, part in trials.items():
        n = len(part["scores"]) if spec.x == "time" or not spec.xlim else min(len(part["scores"]), int(spec.xlim[1]))
        mean_duration = sum(part["durations"]) / len(part["durations"])
        xs = np.arange(1, n + 1) * (mean_duration if spec.x == "time" else 1)
        colours[family] = check_curve_and_band(ax, labels[family], part["scores"], xs, spec.shade, steps=spec.x == "time")
    assert len(bands(ax)) == (len(trials) if spec.shade else 0)
    (left, right), (bottom, top) = ax.get_xlim(), ax.get_ylim()
    for _, edges in bands(ax):  # no shading is cut by the axes, nor drawn on the spine at the first budget
        assert all(left < x <= right * (1 + 1e-12) and bottom <= lo and hi <= top for x, (lo, hi) in edges.items())
    for family, value in spec.references.items():  # the number first published: a horizontal line at it
        (line,) = [line for line in ax.lines if list(line.get_ydata()) == [value, value]]
        assert to_hex(line.get_color()) == colours[family] and f"{value:g}" in line.get_label()
        assert line.get_label() in legend_texts(fig)
    if spec.guide:  # the budget to reach the target: its 95% interval as a bar, and the point budget where located
        family, target = spec.guide
        scores = trials[family]["scores"]
        n = oracle.first_reaching(scores, target, len(scores))
        found = budget_interval(scores, target)
        dotted = [(list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines if line.get_linestyle() == ":"]
        bars = [list(line.get_xdata()) for line in ax.lines if line.get_linewidth() == 3.5 and list(line.get_ydata()) == [target] * 2]
        words = [text.get_text() for text in ax.texts]
        if found.high is not None:  # located: dotted lines to n, the bar over [low, high]
            assert any(x[-1] == n and y == [target, target] for x, y in dotted), dotted
            assert any(x == [n, n] and y[-1] == target for x, y in dotted), dotted
            assert bars == [[found.low, found.high]]
            assert any(f"reaches {target:g} at n = {n}, 95% interval {found.low}-{found.high}" in text for text in words)
        else:  # not located: no point budget marked, the bar from low to the limit
            assert dotted == [] and bars == [[min(found.low, found.limit), found.limit]]
            assert any(f"reaches {target:g} " in text and f"beyond {found.limit}" in text for text in words), words
    assert ax.get_ylabel() == spec.ylabel
    assert ax.get_xscale() == ("log" if spec.log_x else "linear")
    assert ("duration" if spec.x == "time" else "assignments") in ax.get_xlabel().lower()
    texts = legend_texts(fig)
    assert all(labels[family] in texts for family in trials)
    assert (plot.SD_LABEL in texts) == spec.shade


def read_records(folder, floor: float | None = None) -> dict[str, dict[str, list[float]]]:
    """Each family's ok scores and durations in file order, from ``<folder>/<family>.jsonl``; with ``floor`` (higher
    is better) a score below it counts at it, as the study's ``floor`` says."""
    out = {}
    for path in sorted(folder.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        ok = [r for r in rows if r["status"] == "ok"]
        scores = [r["value"] if floor is None else max(r["value"], floor) for r in ok]
        out[path.stem] = {"scores": scores, "durations": [r["duration_seconds"] for r in ok]}
    return out


def stated_floor(study: str) -> float:
    """``study.floor.value`` of conf/study/<study>.yaml, read with PyYAML (not the suite's reader)."""
    return float(yaml.safe_load((CONF_DIR / "study" / f"{study}.yaml").read_text())["study"]["floor"]["value"])


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_each_figure_from_our_records_draws_eq8_its_band_and_its_targets(tmp_path, monkeypatch, number):
    spec = FIGURES[number]
    write_study(tmp_path / "results", spec.study, STUDIES[number], n=40)
    drawn = kept(monkeypatch)
    assert main([f"fig{number}", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out")]) == 0
    labels = {g.name: g.label for g in sources.from_records(spec.study, tmp_path / "results", labels=spec.labels)}
    floor = stated_floor(spec.study)
    check_figure(drawn[0], spec, read_records(tmp_path / "results" / spec.study, floor), labels)
    below = sum(s < floor for part in read_records(tmp_path / "results" / spec.study).values() for s in part["scores"])
    assert f"trials counted at it: {'none' if not below else ''}" in (tmp_path / "out" / f"fig{number}_caption.md").read_text()


@pytest.mark.paperdata
@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_each_figure_from_the_authors_files_draws_eq8_its_band_and_its_targets(tmp_path, monkeypatch, number):
    spec = FIGURES[number]
    trials = oracle.authors_trials(spec.paper, oracle.study_floor(spec.study))  # floored as our trials are
    drawn = kept(monkeypatch)
    assert main([f"fig{number}", "--source", "paper", "--out", str(tmp_path / "out")]) == 0
    labels = {g.name: g.label for g in sources.from_paper(spec, labels=spec.labels)}
    if spec.x == "time":  # DGEM's placeholder durations give no time axis; Figures 2 and 4 have none
        assert all(len(set(part["durations"])) > 1 for part in trials.values())
    check_figure(drawn[0], spec, trials, labels)


def test_the_figure_test_sees_a_band_of_2_sd_unclipped(tmp_path, monkeypatch):
    """The band check is not vacuous: a figure shaded ±2 SD without clipping fails it."""
    def wide(ax, xs, mean, sd, scores, color, step=None):
        ax.fill_between(xs, mean - 2 * sd, mean + 2 * sd, color=color, alpha=0.18, lw=0)

    spec = FIGURES[1]
    write_study(tmp_path / "results", spec.study, STUDIES[1], n=40)
    drawn = kept(monkeypatch)
    monkeypatch.setattr(plot, "shade_sd", wide)
    assert main(["fig1", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out")]) == 0
    labels = {g.name: g.label for g in sources.from_records(spec.study, tmp_path / "results")}
    with pytest.raises(AssertionError):
        check_figure(drawn[0], spec, read_records(tmp_path / "results" / spec.study), labels)


@pytest.mark.parametrize("x", ["trials", "time"])
def test_syw_curve_draws_eq8_the_clipped_band_the_confidence_bands_and_the_target(tmp_path, monkeypatch, x):
    trials = {"a": {"scores": [0, 25, 50, 75, 100], "durations": [1, 1, 1, 1, 1]},
              "b": {"scores": [1, 1, 2, 3], "durations": [2, 2, 4, 4]}}
    path = tmp_path / "trials.csv"
    pd.DataFrame([{"model": g, "val_acc": s, "runtime": d} for g, part in trials.items()
                  for s, d in zip(part["scores"], part["durations"])]).to_csv(path, index=False)
    drawn = kept(monkeypatch)
    assert syw(["curve", str(path), "--target", "80=a made-up bar", "--bounds", "0", "100", "--bands", "--x", x,
                "--out", str(tmp_path / "out")]) == 0
    ax = drawn[0].axes[0]
    table = pd.read_csv(tmp_path / "out" / "expected_max.csv")
    colours = {}
    for name, part in trials.items():
        size = len(part["scores"])
        xs = np.arange(1, size + 1) * (np.mean(part["durations"]) if x == "time" else 1)
        colours[name] = check_curve_and_band(ax, f"{name} (N = {size})", part["scores"], xs, shaded=True)
        # the confidence band: two dashed lines of the group's colour, the table's band columns, around the curve
        edges = [line for line in ax.lines if to_hex(line.get_color()) == colours[name] and line.get_linestyle() == "--"]
        rows = table[table.group == name]
        assert len(edges) == 2
        np.testing.assert_allclose(edges[0].get_ydata(), rows.band_low, atol=1e-9)
        np.testing.assert_allclose(edges[1].get_ydata(), rows.band_high, atol=1e-9)
        assert (rows.band_low <= rows.expected_max + 1e-12).all() and (rows.expected_max <= rows.band_high + 1e-12).all()
    assert len(bands(ax)) == 2
    # the target: a horizontal line at 80; a reaches it at n = 3 (Eq. 8: 50, 70, 80), b never does
    n = oracle.first_reaching(trials["a"]["scores"], 80, 5)
    assert n == 3
    assert any(list(line.get_ydata()) == [80, 80] for line in ax.lines)
    at = n * (np.mean(trials["a"]["durations"]) if x == "time" else 1)
    verticals = [line for line in ax.lines if list(line.get_xdata()) == [at, at]]
    assert [to_hex(line.get_color()) for line in verticals] == [colours["a"]]
    texts = legend_texts(drawn[0])
    assert {"a (N = 5)", "b (N = 4)", "target 80: a made-up bar", plot.SD_LABEL} <= set(texts)
    assert any(t.startswith("a reaches 80 at n = 3") for t in texts) and not any(t.startswith("b reaches") for t in texts)
    assert any(t.startswith("dashed: 95% simultaneous confidence band") for t in texts)
    assert ("time" if x == "time" else "assignments") in ax.get_xlabel().lower()


def test_syw_curve_draws_the_median_beside_a_mean_that_one_trial_sways(tmp_path, monkeypatch):
    path = tmp_path / "trials.csv"
    pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "val_ppl": [100, 120, 130, 1e34, 110, 115, 140, 150]}).to_csv(path, index=False)
    drawn = kept(monkeypatch)
    assert syw(["curve", str(path), "--direction", "min", "--out", str(tmp_path / "out")]) == 0
    ax = drawn[0].axes[0]
    (median,) = [line for line in ax.lines if line.get_label() == "a: median best of n (one trial sways its mean)"]
    # the median best of n of 100, 120, 130, 1e34, lower is better: the least v with F(v) >= 1 - 0.5^(1/n), F(v) in
    # quarters: 0.5 (n = 1) and 0.29 (n = 2) need two trials, 120; 0.21 (n = 3) and 0.16 (n = 4) one, 100
    assert list(median.get_ydata()) == [120, 120, 100, 100]
    assert not any("b: median" in line.get_label() for line in ax.lines)  # b's trials sway nothing


def test_a_figure_drawn_without_shading_says_so_and_an_unlocated_budget_is_its_interval(tmp_path, monkeypatch):
    """Issue 73 item 5: curves drawn without their uncertainty say so in the legend and caption; a budget the trials
    cannot locate is drawn as its 95% interval (a bar from its lower end to the limit, an arrow past it), not as a point."""
    from dataclasses import replace

    from syw.analysis.group import Group

    drawn = kept(monkeypatch)
    rng = np.random.default_rng(5)
    cnn = Group("cnn", np.clip(rng.normal(0.34, 0.04, 50), 0.2, 1.0), label="CNN")  # 0.395 reached late, if at all
    found = budget_interval(cnn.scores, 0.395)
    assert found.high is None and found.low <= found.limit == 9
    plot.draw(replace(FIGURES[1], shade=False), [Group("lr", np.full(50, 0.3) + np.linspace(0, 0.05, 50), label="LR"), cnn],
              "plain", tmp_path / "plain")
    ax = drawn[-1].axes[0]
    assert plot.UNSHADED in [" ".join(t.replace("\n", " ").split()) for t in legend_texts(drawn[-1])] and not ax.collections
    caption = (tmp_path / "plain_caption.md").read_text()
    assert "- No shading: the curves are drawn without their uncertainty" in caption
    assert "the 95% interval of the budget at which cnn first reaches 0.395" in caption and "no point budget is marked" in caption
    assert not [line for line in ax.lines if line.get_linestyle() == ":"]  # no point budget
    (bar,) = [line for line in ax.lines if line.get_linewidth() == 3.5]
    assert list(bar.get_xdata()) == [found.low, found.limit] and list(bar.get_ydata()) == [0.395, 0.395]
    assert any(text.get_text().startswith(f"CNN reaches 0.395 at n = {found.low} to beyond 9") for text in ax.texts)
