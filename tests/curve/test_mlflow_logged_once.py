"""An MLflow sweep that logs the score at every step and the training time once (issue 75, item 9):
``mlflow.log_metric("train_time_s", t)`` is a property of the run, read with the step each run counts
with, in the file store and in the SQLite store. Logged by MLflow itself (mlflow-skinny)."""
from __future__ import annotations

import pandas as pd
import pytest

from syw.cli import main
from tests.support.readers import GROUPS, XS, closed_form, run_script, score

pytest.importorskip("mlflow")
pytestmark = pytest.mark.slow

SWEEP = """
import mlflow, sys
sys.path.insert(0, {repo!r})
from tests.support.readers import GROUPS, STEPS, XS, score
mlflow.set_tracking_uri({uri!r})
mlflow.set_experiment("sweep")
for group in GROUPS:
    for k, x in enumerate(XS):
        with mlflow.start_run():
            mlflow.log_params({{"x": x, "model": group}})
            for step in range(STEPS):
                mlflow.log_metric("val_acc", score(x, group, step), step=step)
            mlflow.log_metric("train_time_s", 60.0 * (k + 1) * (2 if group == "b" else 1))
"""


def seconds(group: str) -> list[float]:
    return [60.0 * (k + 1) * (2 if group == "b" else 1) for k in range(len(XS))]


@pytest.fixture(scope="module", params=["file", "sqlite"])
def store(request, tmp_path_factory):
    from syw.core.paths import REPO

    folder = tmp_path_factory.mktemp(f"mlflow_once_{request.param}")
    uri = "file:./mlruns" if request.param == "file" else "sqlite:///mlflow.db"
    run_script(SWEEP.format(repo=str(REPO), uri=uri), folder, MLFLOW_ALLOW_FILE_STORE="true")
    return str(folder / ("mlruns" if request.param == "file" else "mlflow.db"))


@pytest.mark.parametrize("pick", ["best", "last"])
def test_a_time_logged_once_is_the_runs_time_at_the_step_it_counts_with(store, pick, tmp_path):
    out = tmp_path / "out"
    assert main(["curve", store, "--pick", pick, "--x", "time", "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    for group in GROUPS:
        scores = [max(score(x, group, s) for s in range(3)) if pick == "best" else score(x, group, 2) for x in XS]
        mine = table[table["group"].astype(str) == group].sort_values("n")
        assert mine.expected_max.tolist() == pytest.approx([closed_form(scores, n) for n in mine.n], abs=1e-9)
        mean = sum(seconds(group)) / len(XS)
        assert mine.seconds.tolist() == pytest.approx([n * mean for n in mine.n], rel=1e-12)
    report = (out / "report.md").read_text()
    assert "`train_time_s` (picked)" in report
    assert "train_time_s: logged once per run (10 runs), read as the run's" in report
