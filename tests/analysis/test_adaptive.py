"""Adaptive searches (syw.analysis.adaptive, issue 37 item 4): recognised from Optuna studies, Ray Tune
folders and a strategy column, drawn as the best score so far in trial order (several runs: their mean
and spread), never as Eq. 8; several studies or files in one figure."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from syw.analysis.adaptive import mean_best_so_far, optuna_strategy, ray_strategy, reaches_random, trials_saved
from syw.core.entry import run_main
from syw.curve.command import main
from syw.figures import plot
from tests.support import oracle


def kept(monkeypatch) -> list:
    """The figures drawn from now on, kept open instead of closed after saving."""
    drawn = []
    monkeypatch.setattr(plot.plt, "close", drawn.append)
    return drawn


def sklearn_studies(storage: str, names_samplers: dict, trials: int = 24) -> dict:
    """Optuna studies tuning a logistic regression's C on a split of scikit-learn's breast cancer data:
    validation accuracy per trial. Returns each study's values in trial-number order."""
    optuna = pytest.importorskip("optuna")
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    x, y = load_breast_cancer(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(StandardScaler().fit_transform(x), y, test_size=0.4,
                                                      random_state=0)

    def objective(trial):
        c = trial.suggest_float("C", 1e-5, 1e2, log=True)
        return LogisticRegression(C=c, max_iter=200).fit(x_train, y_train).score(x_val, y_val)

    values = {}
    for name, sampler in names_samplers.items():
        study = optuna.create_study(study_name=name, storage=storage, direction="maximize", sampler=sampler)
        study.optimize(objective, n_trials=trials)
        values[name] = [t.value for t in sorted(study.trials, key=lambda t: t.number)]
    return values


def test_a_tpe_study_is_labelled_adaptive_and_drawn_as_best_so_far(tmp_path, monkeypatch):
    optuna = pytest.importorskip("optuna")
    storage = f"sqlite:///{tmp_path / 'search.db'}"
    values = sklearn_studies(storage, {"random": optuna.samplers.RandomSampler(seed=0),
                                       "tpe": optuna.samplers.TPESampler(seed=0, n_startup_trials=5)})
    drawn = kept(monkeypatch)
    out = tmp_path / "o"
    assert main(["curve", storage, "--study", "random", "--study", "tpe", "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    tpe, random = table[table.group == "tpe"], table[table.group == "random"]
    assert set(tpe.strategy) == {"Optuna TPESampler"} and tpe.expected_max.isna().all()
    np.testing.assert_allclose(tpe.best_so_far, np.maximum.accumulate(values["tpe"]))
    assert random.best_so_far.isna().all()
    np.testing.assert_allclose(random.expected_max, [oracle.eq8(values["random"], n) for n in range(1, 25)])
    report = (out / "report.md").read_text()
    assert "## Adaptive searches: Eq. 8 does not apply" in report and "- tpe: Optuna TPESampler, 1 run(s)" in report
    ax = drawn[0].axes[0]
    (step,) = [line for line in ax.lines if line.get_label().startswith("tpe: best so far (Optuna TPESampler")]
    assert step.get_drawstyle() == "steps-post"
    np.testing.assert_allclose(step.get_ydata(), np.maximum.accumulate(values["tpe"]))
    (smooth,) = [line for line in ax.lines if line.get_label() == "random (N = 24)"]
    np.testing.assert_allclose(smooth.get_ydata(), [oracle.eq8(values["random"], n) for n in range(1, 25)])
    assert not (out / "difference.csv").exists()  # one random group: nothing to compare with


def test_several_runs_of_a_search_are_averaged_with_their_spread(tmp_path):
    optuna = pytest.importorskip("optuna")
    storage = f"sqlite:///{tmp_path / 'runs.db'}"
    values = sklearn_studies(storage, {f"tpe{seed}": optuna.samplers.TPESampler(seed=seed, n_startup_trials=4)
                                       for seed in (0, 1, 2)} | {"random": optuna.samplers.RandomSampler(seed=5)},
                             trials=12)
    out = tmp_path / "o"
    studies = [a for name in ("tpe0", "tpe1", "tpe2", "random") for a in ("--study", name)]
    assert main(["curve", str(tmp_path / "runs.db"), *studies, "--group", "strategy", "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    tpe = table[table.strategy == "Optuna TPESampler"]
    runs = np.vstack([np.maximum.accumulate(values[f"tpe{s}"]) for s in (0, 1, 2)])
    np.testing.assert_allclose(tpe.best_so_far, runs.mean(axis=0))
    np.testing.assert_allclose(tpe.best_so_far_sd, runs.std(axis=0, ddof=1))
    assert set(tpe.runs) == {3} and set(tpe.group) == {"Optuna TPESampler"}
    random = table[table.group == "random"]
    np.testing.assert_allclose(random.expected_max, [oracle.eq8(values["random"], n) for n in range(1, 13)])


def records(strategy: str, seed: int, values: list[float]) -> str:
    return "".join(json.dumps({"family": "lstm", "trial": i, "status": "ok", "value": v, "direction": "min",
                               "strategy": strategy, "tuner_seed": seed}) + "\n" for i, v in enumerate(values))


def test_a_strategy_column_and_tuner_seeds_make_runs(tmp_path):
    (tmp_path / "gp").mkdir()
    (tmp_path / "gp" / "lstm.tuner_seed0.jsonl").write_text(records("gp", 0, [90.0, 95.0, 80.0, 85.0]))
    (tmp_path / "gp" / "lstm.tuner_seed1.jsonl").write_text(records("gp", 1, [100.0, 70.0, 75.0]))
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "gp" / "lstm.tuner_seed0.jsonl"), str(tmp_path / "gp" / "lstm.tuner_seed1.jsonl"),
                 "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    assert set(table.group) == {"lstm"} and set(table.strategy) == {"gp"} and set(table.runs) == {2}
    np.testing.assert_allclose(table.best_so_far, [95.0, 80.0, 75.0])  # lowest so far: (90, 100), (90, 70), (80, 70)
    curve = mean_best_so_far([[90, 95, 80, 85], [100, 70, 75]], maximize=False)
    np.testing.assert_allclose(table.best_so_far_sd, curve.sd)


def test_a_group_mixing_strategies_is_one_error_line(tmp_path, capsys):
    (tmp_path / "mixed.jsonl").write_text(records("random", 0, [1.0, 2.0]) + records("tpe", 0, [3.0]))
    assert run_main(main, ["curve", str(tmp_path / "mixed.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path}/mixed.jsonl: group 'lstm' mixes search strategies (tpe, random); "
                          "pass --group strategy") and not (tmp_path / "o").exists()
    assert main(["curve", str(tmp_path / "mixed.jsonl"), "--group", "strategy", "--out", str(tmp_path / "o")]) == 0
    assert set(pd.read_csv(tmp_path / "o" / "expected_max.csv").group) == {"random", "tpe"}


def test_optuna_marks_and_ray_searcher_files(tmp_path):
    assert optuna_strategy({"tpe:relative_params:0"}, set(), {}) == "Optuna TPESampler"
    assert optuna_strategy({"gp:x"}, set(), {}) == "Optuna GPSampler"
    assert optuna_strategy(set(), {"NSGAIISampler:parent:1"}, {}) == "Optuna NSGAIISampler"
    assert optuna_strategy(set(), set(), {}) is None and optuna_strategy({"grid_id"}, set(), {}) is None
    assert optuna_strategy(set(), set(), {"sampler": "RandomSampler"}) is None
    assert optuna_strategy(set(), set(), {"sampler": "BoTorchSampler"}) == "Optuna BoTorchSampler"
    assert ray_strategy(tmp_path) is None
    (tmp_path / "basic-variant-state-2024.json").write_text("{}")
    assert ray_strategy(tmp_path) is None
    (tmp_path / "searcher-state-2024.pkl").write_bytes(b"\x80\x04\x95ray.tune.search.optuna\x94\x8c\x0cOptunaSearch\x94.")
    assert ray_strategy(tmp_path) == "Ray Tune OptunaSearch"


def test_a_ray_experiment_with_a_searcher_is_adaptive(tmp_path):
    for i, acc in enumerate((0.5, 0.4, 0.7)):
        trial = tmp_path / "exp" / f"trainable_{i:05d}"
        trial.mkdir(parents=True)
        (trial / "result.json").write_text(json.dumps({"val_acc": acc, "time_total_s": 1.0}) + "\n")
    (tmp_path / "exp" / "search_gen_state-2024.json").write_text(json.dumps({"name:HyperOptSearch": {}}))
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "exp"), "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    assert set(table.strategy) == {"Ray Tune HyperOptSearch"}
    np.testing.assert_allclose(table.best_so_far, [0.5, 0.5, 0.7])


def test_compare_refuses_an_adaptive_group(tmp_path, capsys):
    (tmp_path / "a.jsonl").write_text(records("tpe", 0, [3.0, 2.0]).replace('"lstm"', '"x"'))
    (tmp_path / "b.jsonl").write_text(records("random", 0, [3.0, 1.0]).replace('"lstm"', '"y"'))
    argv = ["curve", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "o")]
    assert run_main(main, argv + ["--compare", "x", "y"]) == 2
    assert "--compare: x is an adaptive search" in capsys.readouterr().err
    assert main(argv) == 0 and not (tmp_path / "o" / "difference.csv").exists()


def test_trials_saved_against_random_search_by_hand():
    random = np.array([150.0, 120.0, 110.0, 105.0])  # Eq. 8 at n = 1..N = 4 (lower is better): the target is 105
    reached = mean_best_so_far([np.array([130.0, 100.0, 90.0, 90.0]), np.array([120.0, 110.0, 104.0, 101.0])], maximize=False)
    # mean best-so-far 125, 105, 97, 95.5: at 105 at n = 2, saving 4 - 2
    assert reaches_random(reached, random, maximize=False) == 2 and trials_saved(reached, random, maximize=False) == 2
    never = mean_best_so_far([np.array([130.0, 120.0, 110.0, 106.0])], maximize=False)
    assert trials_saved(never, random, maximize=False) == 0  # N trials and never at 105
    short = mean_best_so_far([np.array([130.0, 120.0])], maximize=False)
    assert reaches_random(short, random, maximize=False) is None and trials_saved(short, random, maximize=False) is None
