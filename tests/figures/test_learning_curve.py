"""The flattening epoch (the rule that sets a study's epochs) and the learning-curve files."""
import json

import pytest

from syw.core.entry import run_main
from syw.experiments.study import Study
from syw.figures.learning_curve import curves, flattening_epoch, main


@pytest.mark.parametrize("dev, tolerance, maximize, expected", [
    ([0.5, 0.6, 0.7, 0.705, 0.71], 0.01, True, 4),   # 0.705 is within 0.01 of 0.71
    ([0.5, 0.6, 0.7, 0.705, 0.71], 0.0, True, 5),
    ([0.5, 0.6, 0.7, 0.705, 0.71], 0.2, True, 2),   # 0.71 - 0.5 > 0.2
    ([0.7, 0.5, 0.5, 0.72], 0.03, True, 1),           # the best so far, not the epoch's own score
    ([0.7, 0.5, 0.5, 0.75], 0.03, True, 4),
    ([120.0, 90.0, 85.0, 84.0], 2.0, False, 3),       # perplexity: lower is better
])
def test_flattening_epoch(dev, tolerance, maximize, expected):
    assert flattening_epoch(dev, tolerance, maximize) == expected


@pytest.mark.parametrize("dev, tolerance", [([], 0.01), ([0.5], -0.1)])
def test_flattening_epoch_rejects(dev, tolerance):
    with pytest.raises(ValueError):
        flattening_epoch(dev, tolerance)


def test_the_files_come_from_the_records(tmp_path, monkeypatch):
    import syw.figures.learning_curve as lc

    monkeypatch.setattr(lc, "load_study", lambda study: Study.from_config(study, {"families": {"dam": "x", "esim": "y"}, "metric": "accuracy"}))
    folder = tmp_path / "s"
    folder.mkdir()
    metrics = [{"accuracy": a, "test_accuracy": t} for a, t in ((0.6, 0.55), (0.7, 0.66), (0.69, 0.7))]
    record = {"trial": 0, "status": "ok", "metric": "accuracy", "direction": "max", "value": 0.7, "epoch_metrics": metrics,
              "epoch_seconds": [10.0, 11.0, 12.0]}
    (folder / "dam.jsonl").write_text(json.dumps(record) + "\n")
    [curve] = curves("s", tmp_path)
    assert curve.dev == [0.6, 0.7, 0.69] and curve.test == [0.55, 0.66, 0.7]
    assert main(["--study", "s", "--results", str(tmp_path)]) == 0
    text = (folder / "learning_curve.md").read_text()
    assert "Best accuracy 0.7000 at epoch 2 of 3; flattened at epoch 2" in text
    assert "| 3 | 0.6900 | 0.7000 | 0.7000 | 12 |" in text
    assert (folder / "learning_curve.png").stat().st_size > 10_000


def test_no_curve_is_one_error(tmp_path, monkeypatch, capsys):
    import syw.figures.learning_curve as lc

    monkeypatch.setattr(lc, "load_study", lambda study: Study.from_config(study, {"families": {"dam": "x"}, "metric": "accuracy"}))
    assert run_main(main, ["--study", "s", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {tmp_path / 's'}: no ok record")
