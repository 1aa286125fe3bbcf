"""The sensitivity figure by what it draws: a panel per searched hyperparameter, every ok trial a point, the best starred."""
import json

import numpy as np
import pytest

from syw.core.entry import run_main
from syw.core.errors import DataError
from syw.core.paths import REPO
from syw.experiments.space import load_family
from syw.figures.__main__ import main
from syw.figures.sensitivity import JITTER, ceiling, family_records, figure, searched, write

TOY = load_family("toy")


def toy_records(folder, rows, strategy="random", tuner_seed=0):
    folder.parent.mkdir(parents=True, exist_ok=True)
    with folder.open("w") as out:
        for trial, (x, width, lr, kind, value) in enumerate(rows):
            out.write(json.dumps({"trial": trial, "status": "ok" if value is not None else "failed", "value": value,
                                  "strategy": strategy, "tuner_seed": tuner_seed, "family": "toy",
                                  "params": {**TOY.fixed, "x": x, "width": width, "lr": lr, "kind": kind}}) + "\n")


def points(ax):
    """(x, y) of each scatter on a panel, in drawing order."""
    return [c.get_offsets() for c in ax.collections]


@pytest.mark.parametrize("maximize", [True, False])
def test_points_and_the_best_on_each_panel(tmp_path, maximize):
    study = tmp_path / "toy"
    toy_records(study / "toy.jsonl", [(0.1, 2, 1e-3, "a", 0.5), (0.7, 6, 1e-2, "b", 0.9), (0.4, 9, 1e-4, "c", None)])
    toy_records(study / "gp" / "toy.tuner_seed1.jsonl", [(0.2, 3, 0.05, "c", 0.3), (0.6, 5, 2e-2, "b", 0.8)], "gp", 1)
    frame = family_records(study, "toy")
    assert sorted(frame["search"].unique()) == ["gp (tuner seed 1)", "random"] and len(frame) == 5
    fig = figure(TOY, frame, "score", maximize, "toy")
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel()]
    assert [ax.get_xlabel() for ax in panels] == searched(TOY) == ["kind", "lr", "width", "x"]
    by_key = {ax.get_xlabel(): ax for ax in panels}
    gp, random, star = points(by_key["x"])
    np.testing.assert_array_equal(gp, [[0.2, 0.3], [0.6, 0.8]])
    np.testing.assert_array_equal(random, [[0.1, 0.5], [0.7, 0.9]])  # the failed trial is not drawn
    np.testing.assert_array_equal(star, [[0.7, 0.9]] if maximize else [[0.2, 0.3]])
    assert by_key["lr"].get_xscale() == "log" and by_key["x"].get_xscale() == "linear"
    kind = np.concatenate(points(by_key["kind"])[:2])
    assert [t.get_text() for t in by_key["kind"].get_xticklabels()] == ["a", "b", "c"]
    np.testing.assert_allclose(kind[:, 0], [2, 1, 0, 1], atol=JITTER)  # gp: c, b; random: a, b
    assert "1 failed trial(s) not drawn" in fig._suptitle.get_text()
    assert f"best score {0.9 if maximize else 0.3:.4g}" in fig._suptitle.get_text()


def test_a_diverged_trial_is_drawn_at_the_top_edge_of_a_lower_is_better_axis(tmp_path):
    values = [150.0, 300.0, 1499.0, 1.0e34, 2000.0]
    toy_records(tmp_path / "toy" / "toy.jsonl", [(0.1 * k, 2 + k, 1e-3, "a", v) for k, v in enumerate(values)])
    frame = family_records(tmp_path / "toy", "toy")
    assert ceiling(frame["value"], maximize=False) == 1500.0  # 10 times the best
    assert ceiling(frame["value"], maximize=True) is None and ceiling(frame["value"].head(3), maximize=False) is None
    fig = figure(TOY, frame, "perplexity", False, "toy")
    x = next(ax for ax in fig.axes if ax.get_xlabel() == "x")
    below, above, star = points(x)
    np.testing.assert_allclose(below, [[0.0, 150.0], [0.1, 300.0], [0.2, 1499.0]])
    np.testing.assert_allclose(above, [[0.3, 1500.0], [0.4, 1500.0]])
    assert x.get_ylim()[1] == 1500.0 and star.tolist() == [[0.0, 150.0]]
    assert "2 trial(s) above the axis, which ends at 10 times the best (1500): 2000 to 1e+34" in fig._suptitle.get_text()
    higher = figure(TOY, frame, "score", True, "toy")  # higher is better: every point to scale
    assert next(ax for ax in higher.axes if ax.get_xlabel() == "x").get_ylim()[1] > 1e34


def test_a_recorded_choice_off_the_family_file_names_the_key(tmp_path):
    toy_records(tmp_path / "toy" / "toy.jsonl", [(0.1, 2, 1e-3, "z", 0.5)])
    with pytest.raises(DataError, match="toy.yaml: search.kind: a trial of family 'toy' ran kind='z'"):
        figure(TOY, family_records(tmp_path / "toy", "toy"), "score", True, "toy")


@pytest.mark.slow
def test_the_committed_sst5_cnn_and_scitail_reduced_records(tmp_path):
    rows = [json.loads(line) for line in (REPO / "results" / "sst5" / "cnn.jsonl").read_text().splitlines()]
    ok = [r for r in rows if r["status"] == "ok"]
    best = max(ok, key=lambda r: r["value"])
    cnn = load_family("sst5_cnn", name="cnn")
    fig = figure(cnn, family_records(REPO / "results" / "sst5", "cnn"), "accuracy", True, "sst5")
    panels = {ax.get_xlabel(): ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel()}
    assert sorted(panels) == ["dropout", "lr", "max_filter_size", "num_filters"]
    drawn, star = points(panels["lr"])
    assert len(drawn) == len(ok) and star.tolist() == [[best["params"]["lr"], best["value"]]]
    written = write("scitail_reduced", REPO / "results", tmp_path)
    assert sorted(p.name for p in written) == sorted(f"sensitivity_scitail_reduced_{f}.{s}"
                                                     for f in ("ngram", "dam", "esim", "dgem") for s in ("png", "pdf"))


def test_the_command_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sensitivity"])
    assert exit_.value.code == 2 and "error: syw sensitivity: the following arguments are required: --study" in \
        capsys.readouterr().err
    assert run_main(main, ["sensitivity", "--study", "toy", "--results", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "toy.jsonl: no records of family 'toy'" in err[0]
    assert not (tmp_path / "out").exists()
    assert main(["sensitivity", "--study", "sst5", "--family", "cnn", "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["sensitivity_sst5_cnn.pdf", "sensitivity_sst5_cnn.png"]
