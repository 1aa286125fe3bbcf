"""Issue 64: an MLflow sweep (file store and SQLite backend) logged by MLflow itself, read without it."""
from __future__ import annotations

import pytest

from tests.support.readers import check_curve, one_error_line, run_script

pytest.importorskip("mlflow")
pytestmark = pytest.mark.slow

SWEEP = """
import mlflow, sys
sys.path.insert(0, {repo!r})
from tests.support.readers import GROUPS, STEPS, XS, score
mlflow.set_tracking_uri({uri!r})
mlflow.set_experiment("sweep")
mlflow.set_experiment("other")  # an experiment without runs
mlflow.set_experiment("sweep")
with mlflow.start_run(run_name="parent"):  # a sweep's container: its runs are nested in it
    for group in GROUPS:
        for x in XS:
            with mlflow.start_run(nested=True):
                mlflow.log_params({{"x": x, "model": group}})
                for step in range(STEPS):
                    mlflow.log_metric("val_acc", score(x, group, step), step=step)
                    mlflow.log_metric("loss", 1 - score(x, group, step), step=step)
    with mlflow.start_run(nested=True):  # a trial that crashed: failed, counted, not drawn
        mlflow.log_params({{"x": 0.99, "model": "a"}})
        mlflow.log_metric("val_acc", 0.999, step=0)
        mlflow.end_run(status="FAILED")
"""


@pytest.fixture(scope="module", params=["file", "sqlite"])
def store(request, tmp_path_factory):
    from syw.core.paths import REPO

    folder = tmp_path_factory.mktemp(f"mlflow_{request.param}")
    uri = "file:./mlruns" if request.param == "file" else "sqlite:///mlflow.db"
    run_script(SWEEP.format(repo=str(REPO), uri=uri), folder, MLFLOW_ALLOW_FILE_STORE="true")
    return folder, request.param


def test_eq8_of_an_mlflow_sweep_for_both_picks(store, tmp_path):
    folder, kind = store
    sources = [str(folder / "mlruns")] if kind == "file" else [f"sqlite:///{folder / 'mlflow.db'}", str(folder / "mlflow.db")]
    for source in sources:
        check_curve(source, tmp_path, "params.model", "--metric", "val_acc")


def test_the_parent_run_and_the_failed_run_are_counted(store, tmp_path):
    from syw.curve.prepare import Reading, prepare

    folder, kind = store
    source = str(folder / "mlruns") if kind == "file" else str(folder / "mlflow.db")
    prepared = prepare(source, Reading(metric="val_acc", group="params.model"))
    assert sorted(g.scores.size for g in prepared.groups) == [5, 5]
    assert any("1 parent run(s) left out" in n for n in prepared.notes)
    assert any("1 failed" in n for n in prepared.notes), prepared.notes
    assert prepare(source, Reading(metric="val_acc", group="params.model", studies=("sweep",))).groups[0].scores.size == 5


def test_mlflow_bad_input_is_one_line(store, tmp_path, capsys):
    import shutil

    folder, kind = store
    if kind == "sqlite":
        one_error_line(["curve", str(folder / "mlflow.db"), "--study", "nope"], capsys,
                       r"mlflow\.db: no MLflow experiment named 'nope' \(experiments: Default, other, sweep\)")
        return
    copy = tmp_path / "mlruns"
    shutil.copytree(folder / "mlruns", copy)
    metric = next(p for p in copy.glob("*/*/metrics/val_acc"))  # any run's: the failed one logs a single step
    logged = metric.read_text().splitlines()
    metric.write_text("\n".join(logged) + "\n1796172560295 high 3\n")  # wrong type
    one_error_line(["curve", str(copy)], capsys, rf"metrics/val_acc: line {len(logged) + 1}: 'high' is not a number$")
    metric.write_text("1796172560295 0.5 1\n17961725\n")  # truncated
    one_error_line(["curve", str(copy)], capsys, r"metrics/val_acc: line 2: '17961725' is not 'timestamp value step'$")
    metric.write_text("1796172560295 0.5 1\n")
    meta = metric.parent.parent / "meta.yaml"
    meta.write_text("artifact_uri: x\nrun_name: r\n")  # a meta.yaml without its run fields
    one_error_line(["curve", str(copy)], capsys, r"meta\.yaml: no 'run_id' \(an MLflow run's meta\.yaml has run_id")
    meta.write_text("run_id: [unclosed\n")
    one_error_line(["curve", str(copy)], capsys, r"meta\.yaml: not YAML")
