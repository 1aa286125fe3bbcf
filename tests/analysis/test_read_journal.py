"""Issue 64: an Optuna journal file written by Optuna's JournalFileBackend, read without Optuna."""
from __future__ import annotations

import json

import numpy as np
import pytest

from syw.curve.prepare import Reading, prepare
from tests.support.readers import check_curve, one_error_line

optuna = pytest.importorskip("optuna")


def objective(trial) -> float:
    model = trial.suggest_categorical("model", ["a", "b"])
    x = trial.suggest_float("x", 0.0, 1.0)
    trial.suggest_int("layers", 1, 4)
    if x > 0.95:
        raise optuna.TrialPruned()
    return (1.0 if model == "a" else 0.8) * (1 - (x - 0.6) ** 2)


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = tmp_path_factory.mktemp("journal") / "optuna_journal.log"
    storage = JournalStorage(JournalFileBackend(str(path)))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(study_name="scratch", storage=storage).optimize(lambda t: t.suggest_float("y", 0, 1), n_trials=2)
    optuna.delete_study(study_name="scratch", storage=storage)
    study = optuna.create_study(study_name="sweep", storage=storage, direction="maximize",
                                sampler=optuna.samplers.RandomSampler(seed=3))
    study.optimize(objective, n_trials=16)
    return path, study


def test_eq8_of_a_journal_study_against_optunas_own_trials(journal, tmp_path):
    path, study = journal
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    groups = {g: [t.value for t in complete if t.params["model"] == g] for g in ("a", "b")}
    for source in (str(path), f"journal://{path}"):
        check_curve(source, tmp_path, "params.model", groups={"best": groups, "last": groups}, pick_note=False)
    prepared = prepare(str(path))
    assert prepared.maximize and prepared.columns["metric"].startswith("`value`")
    mine = {g.name: sorted(g.scores) for g in prepare(str(path), Reading(group="params.model")).groups}
    assert mine == {g: sorted(v) for g, v in groups.items()}
    frame = __import__("syw.curve.readers.journal", fromlist=["x"]).read_journal(path).frame
    theirs = study.trials_dataframe()
    assert frame["params.layers"].tolist() == theirs["params_layers"].tolist()
    assert frame["status"].tolist() == [s.lower() for s in theirs["state"]]
    np.testing.assert_allclose(frame["duration_seconds"], theirs["duration"].dt.total_seconds(), atol=1e-6)


def test_journal_bad_input_is_one_line(journal, tmp_path, capsys):
    path, _ = journal
    lines = path.read_text().splitlines()
    bad = tmp_path / "j.log"
    bad.write_text("\n".join(lines[:5] + ["{not json"] + lines[5:]) + "\n")
    one_error_line(["curve", str(bad)], capsys, r"j\.log: line 6: not a JSON journal operation$")
    bad.write_text("\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2])  # torn last line: skipped
    assert prepare(str(bad)).groups[0].scores.size > 0
    record = json.loads(lines[0])
    bad.write_text(json.dumps({**record, "directions": 2}) + "\n")  # wrong type
    one_error_line(["curve", str(bad)], capsys, r"j\.log: line 1: operation 0 lacks or mistypes a field")
    one_error_line(["curve", f"journal://{tmp_path}/nope.log"], capsys, r"nope\.log: no such Optuna journal file$")
    one_error_line(["curve", str(path), "--study", "scratch"], capsys, r"no study named 'scratch' \(studies: sweep\)$")
