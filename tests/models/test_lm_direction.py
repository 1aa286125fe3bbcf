"""A lower-is-better metric (perplexity, direction ``min``) through the trainer, the progress line and the
runner's records: the lowest value is the best everywhere."""
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from syw.experiments.progress import Progress
from syw.models.trainer import fit
from tests.support.runner_util import records, run


class Scripted(nn.Module):
    """A model whose loss is a constant of its one weight; its 'validation' values come from a script."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return {"loss": (self.w * x).sum()}


def fit_scripted(values, patience=None):
    model, script = Scripted(), iter(values)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    return fit(model, lambda epoch: [{"x": torch.ones(1)}], lambda m: {"perplexity": next(script)}, epochs=len(values),
               patience=patience, optimizer=optimizer, scheduler=None, metric="perplexity", maximize=False)


def test_trainer_selects_the_lowest_validation_value():
    result = fit_scripted([90.0, 70.0, 75.0, 65.0, 66.0])
    assert (result.best_metric, result.best_epoch, result.epochs_run) == (65.0, 4, 5)
    assert [m["perplexity"] for m in result.epoch_metrics] == [90.0, 70.0, 75.0, 65.0, 66.0]


def test_trainer_early_stops_on_epochs_without_a_lower_value():
    result = fit_scripted([90.0, 70.0, 70.0, 71.0, 60.0], patience=2)  # an equal value is no improvement
    assert (result.best_metric, result.best_epoch, result.epochs_run) == (70.0, 2, 4)


def test_progress_reports_the_lowest_value_as_best(capsys):
    written = []
    earlier = [{"trial": 0, "status": "ok", "value": 120.5, "duration_seconds": 10.0}]
    progress = Progress(SimpleNamespace(append=written.append), SimpleNamespace(name="lstm"), "perplexity", False,
                        total=3, pending=2, concurrency=1, base={"study": "s", "direction": "min"}, earlier=earlier)
    progress.finish({"trial": 1, "status": "ok", "value": 150.25, "duration_seconds": 10.0})
    progress.finish({"trial": 2, "status": "ok", "value": 99.75, "duration_seconds": 10.0})
    lines = capsys.readouterr().out.splitlines()
    assert "perplexity=150.2500 (10.0 s) best=120.5000" in lines[0] and "perplexity=99.7500 (10.0 s) best=99.7500" in lines[1]
    assert [r["direction"] for r in written] == ["min", "min"]


@pytest.mark.ray
@pytest.mark.slow
def test_a_min_study_records_its_direction_and_prints_the_lowest_as_best(tmp_path):
    out = tmp_path / "results"
    done = run("study=toy", "study.direction=min", "study.metric=loss", "trials=4", f"paths.results_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = records(out / "toy" / "toy.jsonl")
    assert {r["direction"] for r in rows} == {"min"} and {r["metric"] for r in rows} == {"loss"}
    last = [line for line in done.stdout.splitlines() if line.startswith("[toy/toy] trial")][-1]
    assert f"best={min(r['value'] for r in rows):.4f}" in last
