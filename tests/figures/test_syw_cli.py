"""``syw curve`` (figures.curve_command) on every input it reads: CSV, TSV in the authors' layout, nested JSONL,
allentune's results.jsonl, a real Ray Tune run, a real Optuna study; the files it writes; the columns
it picks or refuses; the forecast on a known distribution; the authors' four files."""
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from syw.analysis.forecast import forecast
from syw.core.entry import run_main
from syw.curve.command import main
from syw.figures.specs import FIGURES
from tests.support import oracle


def run(tmp_path: Path, *argv: str) -> tuple[pd.DataFrame, str]:
    out = tmp_path / "out"
    assert main(["curve", *argv, "--out", str(out)]) == 0
    return pd.read_csv(out / "expected_max.csv"), (out / "report.md").read_text()


def test_csv_table_figure_and_report(tmp_path, capsys):
    path = tmp_path / "trials.csv"
    pd.DataFrame({"model": ["a"] * 5 + ["b"] * 4, "val_acc": [0, 25, 50, 75, 100, 1, 1, 2, 3],
                  "train_acc": [9] * 9, "runtime": [1] * 5 + [2, 2, 4, 4]}).to_csv(path, index=False)
    table, report = run(tmp_path, str(path), "--target", "80=a made-up bar", "--bounds", "0", "100", "--bands")
    a, b = table[table.group == "a"], table[table.group == "b"]
    assert a.expected_max.round(4).tolist() == [50, 70, 80, 85.84, 89.6]  # Eq. 8, by hand
    assert a.spread_sd.round(4).tolist() == [35.3553, 29.1548, 23.6643, 19.6340, 16.6084]
    assert b.unbiased.round(6).tolist() == [1.75, 2.333333, 2.75, 3.0]
    assert b.seconds.tolist() == [3, 6, 9, 12]  # runtime picked: n x mean duration
    assert (a.band_low <= a.expected_max).all() and (a.expected_max <= a.band_high).all()
    assert "| a | 80 | a made-up bar | 3 | 3 | 3 s | - |" in report  # 80 reached at n = 3
    assert "| b | 80 | a made-up bar | not within N |" in report
    for words in ("Eq. 8", "rounds both sides to 3 decimals", "Tang et al. 2020", "95% simultaneous confidence band",
                  "clips the shading", "`val_acc` (picked)", "`model` (picked)", "`runtime` (picked)"):
        assert words in report, words
    for suffix in ("png", "pdf"):
        assert (tmp_path / "out" / f"curve.{suffix}").stat().st_size > 5000
    with Image.open(tmp_path / "out" / "curve.png") as image:
        assert image.size[0] >= 1000 and (np.asarray(image.convert("L")) < 128).mean() > 0.005
    assert "wrote" in capsys.readouterr().out


def test_authors_layout_tsv_picks_the_columns_the_paper_used(tmp_path):
    rng = np.random.default_rng(0)
    rows = pd.DataFrame({"model.encoder.architecture.type": ["LR"] * 6 + ["CNN"] * 6,
                         "best_validation_accuracy": rng.uniform(0.2, 0.4, 12), "validation_accuracy": 0.1,
                         "accuracy": 0.1, "training_accuracy": 0.9, "best_validation_loss": 1.0,
                         "embedding": [None] * 6 + ["glove"] * 6, "training_duration": [2.0] * 6 + [40.0] * 6,
                         "trainer.optimizer.lr": 0.01})
    rows.to_csv(tmp_path / "search.tsv", sep="\t", index=False)
    table, report = run(tmp_path, str(tmp_path / "search.tsv"))
    lr = rows[rows["model.encoder.architecture.type"] == "LR"].best_validation_accuracy
    first = table[(table.group == "LR") & (table.n == 1)]
    assert first.expected_max.iloc[0] == pytest.approx(lr.mean()) and first.seconds.iloc[0] == 2.0
    assert "`best_validation_accuracy` (picked)" in report and "`training_duration` (picked)" in report


def test_nested_jsonl_and_allentune_results(tmp_path):
    nested = tmp_path / "runs.jsonl"
    nested.write_text("".join(json.dumps({"model": {"name": m}, "metrics": {"dev_f1": v}}) + "\n"
                              for m, v in [("x", 0.2), ("x", 0.6), ("y", 0.5)]))
    table, report = run(tmp_path, str(nested))
    assert table.groupby("group").expected_max.first().to_dict() == pytest.approx({"x": 0.4, "y": 0.5})
    allentune = tmp_path / "results.jsonl"  # allentune report: metrics.json + flattened config, durations in seconds
    allentune.write_text("".join(json.dumps(
        {"best_epoch": 3, "best_validation_accuracy": v, "best_validation_loss": 1.2, "training_duration": d,
         "training_accuracy": 0.9, "validation_accuracy": v - 0.01, "model": "cnn", "trainer.optimizer.lr": 0.1,
         "random_seed": "5", "directory": "/x/run_1/trial/"}) + "\n" for v, d in [(0.3, 10.0), (0.5, 30.0)]))
    table, report = run(tmp_path, str(allentune))
    assert table.expected_max.tolist() == pytest.approx([0.4, 0.45]) and table.seconds.tolist() == [20.0, 40.0]
    assert "`model` (picked)" in report and "`best_validation_accuracy` (picked)" in report


def test_the_suites_own_records_with_list_valued_fields(tmp_path):
    """A suite record carries lists (the epoch curve, a searched range): they name no group and must not
    stop the column search (pandas cannot count distinct lists)."""
    records = tmp_path / "dam.jsonl"
    records.write_text("".join(json.dumps(
        {"family": "dam", "trial": i, "status": "ok", "value": v, "duration_seconds": 60.0 * (i + 1),
         "epoch_metrics": [{"epoch": 1, "accuracy": v}], "params": {"ngram_range": [1, 2], "model_type": ["a"]}}) + "\n"
        for i, v in enumerate([0.5, 0.7, 0.6])))
    table, report = run(tmp_path, str(records))
    assert table.expected_max.tolist() == pytest.approx([0.6, 5.8 / 9, 18 / 27])  # Eq. 8: (k/N)^n - ((k-1)/N)^n weights
    assert "`family` (picked)" in report


def test_column_errors_list_what_was_found(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("model,val_acc,val_f1,secs\na,0.5,0.4,1\n")
    assert run_main(main, ["curve", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "several columns could hold the validation score: val_acc, val_f1; pass --metric" in capsys.readouterr().err
    table, _ = run(tmp_path, str(path), "--metric", "val_f1", "--duration", "secs")
    assert table.expected_max.tolist() == [0.4]
    assert not (tmp_path / "o").exists()


def test_help_is_enough_to_use_it(capsys):
    with pytest.raises(SystemExit):
        main(["curve", "--help"])
    text = capsys.readouterr().out
    for words in ("Ray Tune experiment folder", "sqlite:///", "--study", "--target VALUE[=WHY]", "--bands",
                  "--forecast N", "--x {trials,time,cost}", "examples:", "--pick {best,last}", "allentune"):
        assert words in text, words


def test_entry_points(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("family,value\na,1\na,2\n")
    done = subprocess.run([sys.executable, "-m", "syw", "curve", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1.5000" in done.stdout and (tmp_path / "r_syw" / "report.md").is_file()
    script = Path(sys.executable).with_name("syw")  # [project.scripts] in pyproject.toml
    assert script.is_file() or shutil.which("syw"), "pip install -e . installs the syw command"
    listed = subprocess.run([str(script) if script.is_file() else "syw", "--help"], capture_output=True, text=True)
    assert listed.returncode == 0 and all(f"  {name} " in listed.stdout for name in ("curve", "run", "fig", "download"))


def test_forecast_of_uniform_scores_is_n_over_n_plus_1():
    """Uniform scores are opda's quadratic distribution with c = 2: E[max of n] = n / (n + 1)."""
    scores = np.random.default_rng(0).uniform(size=300)
    ns = np.array([1, 10, 100, 1000])
    f = forecast(scores, ns, resamples=30)
    assert f.mean == pytest.approx(ns / (ns + 1), abs=0.01)
    assert np.all(f.low <= f.mean + 1e-12) and np.all(f.mean <= f.high + 1e-12)
    low = forecast(-scores, ns, maximize=False, resamples=0)  # minimizing: the mirror image
    assert low.mean == pytest.approx(-(ns / (ns + 1)), abs=0.01) and np.isnan(low.low).all()
    normal = forecast([0.0, 1.0, 2.0, 3.0, 4.0], [1, 2], model="normal", resamples=0)
    assert normal.mean == pytest.approx([2.0, 2.0 + np.sqrt(2.5) / np.sqrt(np.pi)], abs=1e-6)  # E[max of 2 N(0,1)] = 1/sqrt(pi)


def test_cli_forecast_columns_and_verdict(tmp_path, capsys):
    path = tmp_path / "u.csv"
    pd.DataFrame({"val_acc": np.random.default_rng(1).uniform(size=40)}).to_csv(path, index=False)
    table, report = run(tmp_path, str(path), "--forecast", "100", "--forecast-resamples", "10")
    assert table.n.max() == 100 and table.expected_max.notna().sum() == 40  # Eq. 8 stops at N
    assert table.forecast.iloc[-1] == pytest.approx(100 / 101, abs=0.03)
    assert "Not recommended" in report and "Not recommended" in capsys.readouterr().err


RAY_SCRIPT = """
import os, sys
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
import ray
from ray import tune

def trainable(config):
    for factor in (1.0, 0.5, 0.8):  # the best result is the first, the last is 0.8 of it
        tune.report({"val_acc": config["x"] * factor, "loss": 1 - config["x"]})

ray.init(address="local", include_dashboard=False, num_cpus=1, log_to_driver=False)
try:
    tune.Tuner(trainable, param_space={"x": tune.grid_search([0.2, 0.5, 0.9])},
               run_config=tune.RunConfig(name="exp", storage_path=sys.argv[1], verbose=0)).fit()
finally:
    ray.shutdown()
"""


@pytest.mark.ray
@pytest.mark.slow
def test_a_real_ray_tune_run(tmp_path):
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(RAY_SCRIPT), str(tmp_path / "ray")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    folder = tmp_path / "ray" / "exp"
    best, report = run(tmp_path, str(folder), "--x", "time")
    assert best.expected_max.tolist() == pytest.approx([1.6 / 3, (0.2 + 3 * 0.5 + 5 * 0.9) / 9, 0.9 * 19 / 27 + 0.5 * 7 / 27 + 0.2 / 27])
    assert best.unbiased.iloc[-1] == pytest.approx(0.9) and (best.seconds > 0).all()
    assert "`val_acc` (picked)" in report and "`time_total_s` (picked)" in report and "one curve, named exp" in report
    last, _ = run(tmp_path, str(folder), "--pick", "last")
    assert last.expected_max.iloc[0] == pytest.approx(0.8 * 1.6 / 3)


def optuna_study(storage: str, name: str, direction: str, values: list[float], fail: bool = False):
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=storage, direction=direction,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    for v in values:
        study.enqueue_trial({"x": v})

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        trial.set_user_attr("val_acc", 1 - x)  # a user attribute named like a score: value still wins
        return x

    study.optimize(objective, n_trials=len(values))
    if fail:
        study.optimize(lambda trial: float("nan"), n_trials=1)  # a NaN objective: a FAIL trial
    return study


def test_a_real_optuna_study(tmp_path, capsys):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    optuna_study(storage, "up", "maximize", [0.1, 0.4, 0.7, 0.2, 0.9], fail=True)
    table, report = run(tmp_path, storage, "--study", "up")
    assert table.expected_max.iloc[0] == pytest.approx(0.46) and table.unbiased.iloc[-1] == pytest.approx(0.9)
    assert "`value` (picked), higher is better" in report and "1 fail trial(s) are left out" in report
    assert (table.seconds > 0).all()
    optuna_study(storage, "down", "minimize", [0.1, 0.4, 0.7, 0.2, 0.9])
    assert run_main(main, ["curve", storage, "--out", str(tmp_path / "o")]) == 2
    assert ("the sources disagree on whether higher is better; pass --direction (or name one study with --study)"
            in capsys.readouterr().err)  # both studies read (one group each), but one maximizes and one minimizes
    table, report = run(tmp_path, storage, "--study", "down")
    assert table.unbiased.iloc[-1] == pytest.approx(0.1) and "lower is better" in report  # the study's direction


def test_optuna_not_installed_says_how_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    assert run_main(main, ["curve", f"sqlite:///{tmp_path}/x.db", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: sqlite:///{tmp_path}/x.db: reading an Optuna study needs optuna: "
                          "pip install 'optuna>=3' (in a checkout: pip install '.[optuna]')") and "Traceback" not in err


def trial_axis_changes(names: tuple[str, str], a: list[float], b: list[float]) -> list[str]:
    """Where one of two groups overtakes the other on the trial axis (a tie keeps the leader), from tests/support/oracle.py."""
    out, current = [], None
    for n in range(1, min(len(a), len(b)) + 1):
        x, y = oracle.eq8(a, n), oracle.eq8(b, n)
        leader = names[0] if x > y else names[1] if y > x else None
        if leader and current and leader != current:
            out.append(f"{leader} overtakes {current} at n = {n} trials")
        current = leader or current
    return out


@pytest.mark.paperdata
@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_syw_curve_on_the_authors_files(tmp_path, number):
    """`syw curve` on each of the authors' files: every group's Eq. 8, SD and unbiased columns, the budgets
    to reach the paper's targets (the reported numbers of Figs. 3 and 4, Fig. 1's 0.395) and where one
    group overtakes another, against tests/support/oracle.py over the rows read with the csv module."""
    spec = FIGURES[number]
    theirs = oracle.authors_trials(spec.paper)
    targets = sorted(set(spec.references.values()) | ({spec.guide[1]} if spec.guide else set()))
    args = [str(oracle.authors_path(spec.paper)), "--metric", spec.paper.metric_column, "--group", spec.paper.group_column]
    table, report = run(tmp_path, *args, *(a for t in targets for a in ("--target", f"{t:g}")))
    for value, family in spec.paper.groups.items():
        scores = theirs[family]["scores"]
        ns = list(range(1, len(scores) + 1))
        mine = table[table.group.astype(str) == value].set_index("n")  # the group column is "group", whatever the source's
        assert mine.index.tolist() == ns, value
        # the table keeps 10 significant digits
        assert mine.expected_max.tolist() == pytest.approx([oracle.eq8(scores, n) for n in ns], abs=1e-9), value
        assert mine.spread_sd.tolist() == pytest.approx([oracle.eq8_sd(scores, n) for n in ns], abs=1e-9), value
        assert mine.unbiased.tolist() == pytest.approx([oracle.unbiased(scores, n) for n in ns], abs=1e-9), value
        for target in targets:
            line = next(line for line in report.splitlines() if line.startswith(f"| {value} | {target:g} |"))
            cells = [c.strip() for c in line.strip("|").split("|")]
            for cell, decimals in ((cells[3], None), (cells[4], 3)):
                n = oracle.first_reaching(scores, target, len(scores), decimals=decimals)
                assert cell == (str(n) if n else "not within N"), (value, target, line)
    expected = set()
    for (a, fa), (b, fb) in itertools.combinations(spec.paper.groups.items(), 2):
        expected |= set(trial_axis_changes((a, b), theirs[fa]["scores"], theirs[fb]["scores"]))
    found = {line[2:] for line in report.splitlines() if line.startswith("- ") and line.endswith(" trials")}
    assert found == expected
