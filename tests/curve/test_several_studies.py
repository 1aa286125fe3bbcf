"""An Optuna journal or storage holding several studies, one per model (issue 75, item 10): without --study
every study is read, each a group named by its study, and a note says so; --study still reads one."""
from __future__ import annotations

import pandas as pd
import pytest

from syw.cli import main
from tests.support.readers import closed_form

optuna = pytest.importorskip("optuna")

SCORES = {"logreg": [0.61, 0.64, 0.58, 0.66, 0.63], "svc": [0.7, 0.55, 0.68, 0.72, 0.6]}


def fill(storage) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for name, scores in SCORES.items():
        study = optuna.create_study(study_name=name, storage=storage, direction="maximize",
                                    sampler=optuna.samplers.RandomSampler(seed=0))
        study.optimize(lambda trial, s=scores: s[trial.number] + 0 * trial.suggest_float("c", 0.1, 1.0), n_trials=len(scores))


@pytest.fixture(scope="module", params=["journal", "sqlite"])
def source(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"studies_{request.param}")
    if request.param == "journal":
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        path = folder / "optuna.journal"
        fill(JournalStorage(JournalFileBackend(str(path))))
        return str(path)
    path = folder / "optuna.db"
    fill(f"sqlite:///{path}")
    return str(path)


def test_every_study_is_read_as_a_group_named_by_it(source, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["curve", source, "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    assert sorted(table["group"].unique()) == ["logreg", "svc"]
    for name, scores in SCORES.items():
        mine = table[table["group"] == name].sort_values("n")
        assert mine.expected_max.tolist() == pytest.approx([closed_form(scores, n) for n in range(1, 6)], abs=1e-12)
    note = "2 studies (logreg, svc) and no --study: each is read, a group named by its study; --study NAME reads one"
    assert note in (out / "report.md").read_text() and note in capsys.readouterr().err


def test_study_still_reads_one(source, tmp_path):
    out = tmp_path / "one"
    assert main(["curve", source, "--study", "svc", "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    assert table["group"].unique().tolist() == ["svc"] and table.expected_max.iloc[-1] == pytest.approx(
        closed_form(SCORES["svc"], 5), abs=1e-12)
