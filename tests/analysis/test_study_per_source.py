"""Issue 64, item 5: several storages, each with its own study (``--study`` per storage, in order, or
``STORAGE#STUDY``)."""
from __future__ import annotations

import numpy as np
import pytest

from syw.core.entry import run_main
from syw.curve.prepare import Reading, prepare

optuna = pytest.importorskip("optuna")


def make_study(path, name: str, seed: int, other: str) -> list[float]:
    """A storage holding ``name`` (8 random-search trials of a toy objective) and a decoy study ``other``."""
    url = f"sqlite:///{path}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=url, direction="maximize",
                                sampler=optuna.samplers.RandomSampler(seed=seed))
    study.optimize(lambda t: 1 - (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=8)
    optuna.create_study(study_name=other, storage=url, direction="maximize").optimize(lambda t: t.suggest_float("y", 0, 1), n_trials=2)
    return [t.value for t in study.trials]


@pytest.fixture
def storages(tmp_path):
    values = {"svc-random": make_study(tmp_path / "random.db", "svc-random", 0, "scratch"),
              "svc-other": make_study(tmp_path / "other.db", "svc-other", 1, "scratch")}
    return tmp_path, values


def scores(prepared) -> dict[str, list[float]]:
    return {g.name: sorted(g.scores.tolist()) for g in prepared.groups}


def test_one_study_per_storage_by_order_or_by_name(storages):
    folder, values = storages
    urls = [f"sqlite:///{folder / 'random.db'}", f"sqlite:///{folder / 'other.db'}"]
    expected = {name: sorted(v) for name, v in values.items()}
    assert scores(prepare(urls, Reading(studies=("svc-random", "svc-other")))) == expected
    assert scores(prepare([f"{urls[0]}#svc-random", f"{urls[1]}#svc-other"])) == expected
    assert scores(prepare([f"{folder / 'random.db'}#svc-random", f"{urls[1]}#svc-other"])) == expected
    mixed = prepare([f"{urls[0]}#svc-random", urls[1]], Reading(studies=("svc-other",)))  # a name of its own, and --study
    assert scores(mixed) == expected
    assert np.isfinite(np.concatenate([g.scores for g in mixed.groups])).all()


def test_one_storage_reads_each_study_named(storages):
    folder, values = storages
    both = prepare(f"sqlite:///{folder / 'random.db'}", Reading(studies=("svc-random", "scratch")))
    assert sorted(g.name for g in both.groups) == ["scratch", "svc-random"]


def test_as_many_study_names_as_storages_or_an_error(storages, capsys):
    from syw.cli import main

    folder, _ = storages
    urls = [f"sqlite:///{folder / 'random.db'}", f"sqlite:///{folder / 'other.db'}", f"sqlite:///{folder / 'random.db'}"]
    code = run_main(main, ["curve", *urls, "--study", "svc-random", "--study", "svc-other", "--out", str(folder / "o")])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("3 storages and 2 --study names: give one --study per storage, in order, or name each one's "
                         "study as STORAGE#STUDY")
    assert not (folder / "o").exists()
    assert run_main(main, ["curve", f"{urls[0]}#nope", "--out", str(folder / "o")]) == 2
    assert "no study named 'nope'" in capsys.readouterr().err
