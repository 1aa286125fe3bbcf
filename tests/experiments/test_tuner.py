"""The adaptive tuner without Ray: its searcher driven by hand, resumed from records, and its checks."""
import json
import math

import numpy as np
import pytest

from syw.analysis.adaptive import best_so_far, mean_best_so_far
from syw.core.errors import ConfigError
from syw.core.records import RecordError, RecordsWriter, adaptive_runs, load_study
from syw.experiments.space import load_family
from syw.experiments.tuner import (
    Told,
    Tuner,
    check_adaptive,
    from_optuna,
    history_from,
    optuna_space,
    searcher,
    suggest,
    to_optuna,
)
from tests.support.runner_util import run

TOY = load_family("toy")


def objective(params: dict, index: int) -> float | None:
    """The toy family's score without its noise, plus a fixed wobble per index; trial 6 fails."""
    if index == 6:
        return None
    return (0.9 - (params["x"] - 0.7) ** 2 - 0.01 * abs(params["width"] - 6) - 0.02 * abs(math.log10(params["lr"]) + 2)
            - {"a": 0.05, "b": 0.0, "c": 0.1}[params["kind"]] + 0.01 * math.sin(index))


def drive(tuner: Tuner, history: dict, pending: list[int], rng=None, stop_after=None, maximize=True):
    """Run the searcher as Tune would: ask until it waits, then finish a trial in flight (the oldest,
    or one drawn by ``rng``); stop once ``stop_after`` trials finished (a kill: those in flight are lost).
    Returns the finished trials as records, in the order they finished, and the most in flight at once."""
    s = searcher(TOY, tuner, maximize, history, pending)
    in_flight, finished, most, n = {}, [], 0, 0
    while stop_after is None or len(finished) < stop_after:
        config = s.suggest(f"t{n}")
        if isinstance(config, dict):
            in_flight[f"t{n}"], n = config, n + 1
            most = max(most, len(in_flight))
            continue
        if not in_flight:
            assert config == "FINISHED", "the searcher waits with nothing in flight"
            break
        tid = list(in_flight)[int(rng.integers(len(in_flight))) if rng is not None else 0]
        config = in_flight.pop(tid)
        value = objective(config["params"], config["trial_index"])
        status = "failed" if value is None else "ok"
        s.on_trial_complete(tid, {"record/status": status, "record/value": value})
        finished.append({"trial": config["trial_index"], "status": status, "value": value, "seed": 0,
                         "params": {**TOY.fixed, **config["params"]}, **tuner.fields()})
    return finished, most


def write(path, records):
    with RecordsWriter(path) as writer:
        for record in records:
            writer.append(record)


def sequence(records):
    return [(r["trial"], r["params"], r["value"]) for r in sorted(records, key=lambda r: r["trial"])]


@pytest.mark.slow
def test_a_killed_gp_search_resumed_from_its_records_equals_the_uninterrupted_one(tmp_path):
    tuner = Tuner("gp", seed=3, startup_trials=3)
    whole, _ = drive(tuner, {}, list(range(7)))
    assert [r["trial"] for r in whole] == list(range(7))
    assert [r["status"] for r in whole].count("failed") == 1
    path = tmp_path / "gp" / "toy.tuner_seed3.jsonl"
    first, _ = drive(tuner, {}, list(range(7)), stop_after=5)  # the kill: trials 0-4 recorded (4 failed)
    write(path, first)
    history = check_adaptive(TOY, tuner, 0, path, False, "<study>")
    rest, _ = drive(tuner, history, [i for i in range(7) if i not in history])
    assert [r["trial"] for r in rest] == [5, 6]  # nothing repeated, nothing lost
    assert sequence(first + rest) == sequence(whole)
    # past its 3 startup trials the GP chose, not the random draw its sampler's seed gives in startup
    startup = suggest(TOY, Tuner("gp", seed=3, startup_trials=10), True, history_from(path, TOY), 5)
    assert {k: whole[5]["params"][k] for k in TOY.search} != startup


def test_concurrent_suggestions_do_not_depend_on_which_trial_finishes_first(tmp_path):
    tuner = Tuner("tpe", seed=1, concurrency=3, startup_trials=3)
    oldest, most = drive(tuner, {}, list(range(12)))
    shuffled, most_shuffled = drive(tuner, {}, list(range(12)), rng=np.random.default_rng(7))
    assert most == most_shuffled == 3
    assert [r["trial"] for r in shuffled] != list(range(12))  # they did finish in another order
    assert sequence(shuffled) == sequence(oldest)
    # killed with trial 7 lost in flight and 8 recorded; 6 failed and its record is a crashed
    # worker's, without the assignment that trial 7 must be told: recomputed from the trials before it
    first, _ = drive(tuner, {}, list(range(12)), rng=np.random.default_rng(2), stop_after=8)
    assert sorted(r["trial"] for r in first) == [0, 1, 2, 3, 4, 5, 6, 8]
    kept = [{**r, "params": None} if r["trial"] == 6 else r for r in first]
    write(tmp_path / "t.jsonl", kept)
    history = history_from(tmp_path / "t.jsonl", TOY)
    rest, _ = drive(tuner, history, [i for i in range(12) if i not in history])
    assert sorted(r["trial"] for r in first + rest) == list(range(12))
    assert sequence(first + rest) == sequence(oldest)


@pytest.mark.slow
def test_a_gp_told_minus_the_values_to_minimise_suggests_what_it_does_to_maximise():
    """Direction min (perplexity): the GP standardises sign x value, so min on -v is max on v."""
    tuner = Tuner("gp", seed=0, startup_trials=3)
    draws = {i: {k: v for k, v in TOY.params(5, i).items() if k in TOY.search} for i in range(5)}
    up = {i: Told(p, objective(p, i) or 0.0, True) for i, p in draws.items()}
    down = {i: Told(p, -(objective(p, i) or 0.0), True) for i, p in draws.items()}
    assert suggest(TOY, tuner, True, up, 5) == suggest(TOY, tuner, False, down, 5)
    assert suggest(TOY, tuner, True, up, 5) != suggest(TOY, tuner, True, down, 5)


def test_the_toy_space_in_optuna_and_back():
    space = optuna_space(TOY.search)
    assert sorted(space) == ["kind", "lr", "width", "x"]
    assert space["lr"].log and (space["lr"].low, space["lr"].high) == (1e-4, 1e-1)
    assert (space["width"].low, space["width"].high) == (1, 10) and space["kind"].choices == (0, 1, 2)
    assignment = {"x": 0.25, "width": 3, "lr": 0.01, "kind": "c"}
    assert to_optuna(TOY.search, assignment) == {**assignment, "kind": 2}
    assert from_optuna(TOY.search, to_optuna(TOY.search, assignment)) == assignment
    for bad in ({**assignment, "x": 1.5}, {**assignment, "kind": "d"}, {**assignment, "width": 2.5}):
        with pytest.raises(ValueError):
            to_optuna(TOY.search, bad)


def test_an_exclusive_high_and_a_constant():
    search = {"n": {"distribution": "uniform_int", "low": 2, "high": 5, "exclusive_high": True},
              "c": {"distribution": "constant", "value": 7}}
    assert optuna_space(search)["n"].high == 4 and "c" not in optuna_space(search)
    assert from_optuna(search, {"n": 3}) == {"n": 3, "c": 7}


def test_records_paths_and_fields():
    gp = Tuner("gp", 2, concurrency=4, startup_trials=10)
    assert str(gp.records_path("r/ptb", "lstm")) == "r/ptb/gp/lstm.tuner_seed2.jsonl"
    assert str(Tuner("random", 0).records_path("r/ptb", "lstm")) == "r/ptb/lstm.jsonl"
    assert gp.fields() == {"strategy": "gp", "tuner_seed": 2, "tuner": {"concurrency": 4, "startup_trials": 10}}
    assert Tuner("random", 5).fields() == {"strategy": "random", "tuner_seed": 5}
    assert gp.run_name("lstm") == "lstm.gp.2" and Tuner("random", 0).run_name("lstm") == "lstm"


def _record(**kw):
    return {"trial": 0, "status": "ok", "value": 0.5, "seed": 0, "strategy": "gp", "tuner_seed": 0,
            "tuner": {"concurrency": 1, "startup_trials": 10}, "params": {**TOY.fixed, "x": 0.5, "width": 2, "lr": 0.01, "kind": "a"}, **kw}


@pytest.mark.parametrize("record, says", [
    (_record(tuner_seed=1), "tuner_seed=1 there, 0 now"),
    (_record(seed=4), "seed=4 there, 0 now"),
    (_record(tuner={"concurrency": 2, "startup_trials": 10}), "tuner="),
    (_record(params={**TOY.fixed, "x": 2.0, "width": 2, "lr": 0.01, "kind": "a"}), "x=2.0 lies outside"),
    (_record(params={**TOY.fixed, "x": 0.5, "width": 2, "kind": "a"}), "'lr'"),
    (_record(params={**TOY.fixed, "noise": 0.3, "x": 0.5, "width": 2, "lr": 0.01, "kind": "a"}), "noise=0.3"),
])
def test_records_of_another_search_are_refused(tmp_path, record, says):
    path = tmp_path / "toy.tuner_seed0.jsonl"
    write(path, [record])
    with pytest.raises(ConfigError, match="trial 0") as err:
        check_adaptive(TOY, Tuner("gp", 0), 0, path, False, "<study>")
    assert str(path) in str(err.value) and says in str(err.value)


def test_retry_failed_and_a_replayed_family_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="retry_failed: an adaptive search"):
        check_adaptive(TOY, Tuner("tpe", 0), 0, tmp_path / "none.jsonl", True, "<study>")
    replayed = load_family("sst5_lr_replay")
    with pytest.raises(ConfigError, match="replay: a replayed family"):
        check_adaptive(replayed, Tuner("gp", 0), 0, tmp_path / "none.jsonl", False, "<study>")


def test_best_so_far_by_hand():
    assert np.array_equal(best_so_far([0.3, np.nan, 0.5, 0.4, 0.7]), [0.3, 0.3, 0.5, 0.5, 0.7])
    np.testing.assert_array_equal(best_so_far([np.nan, 90.0, 95.0, 80.0], maximize=False), [np.nan, 90, 90, 80])
    curve = mean_best_so_far([[3.0, 1.0, 2.0], [2.0, 2.0, 0.5, 9.0]], maximize=False)
    assert curve.runs == 2 and list(curve.budgets) == [1, 2, 3]
    np.testing.assert_allclose(curve.mean, [2.5, 1.5, 0.75])
    np.testing.assert_allclose(curve.sd, [math.sqrt(0.5), math.sqrt(0.5), math.sqrt(0.125)])
    np.testing.assert_allclose(curve.low, [3.0, 2.0, 1.0])  # the worst run's best-so-far (min: the higher)
    np.testing.assert_allclose(curve.high, [2.0, 1.0, 0.5])
    assert np.isnan(mean_best_so_far([[1.0, 2.0]]).sd).all()


def test_adaptive_runs_read_each_run_up_to_its_first_gap_and_eq8_refuses_them(tmp_path):
    study = tmp_path / "toy"
    write(study / "gp" / "toy.tuner_seed0.jsonl", [_record(trial=0, value=0.2), _record(trial=1, status="failed", value=None),
                                                   _record(trial=3, value=0.9)])
    write(study / "gp" / "toy.tuner_seed1.jsonl", [_record(trial=i, tuner_seed=1, value=0.1 * i) for i in range(3)])
    runs = adaptive_runs(study, "toy")
    assert sorted(runs) == [("gp", 0), ("gp", 1)]
    np.testing.assert_array_equal(runs[("gp", 0)], [0.2, np.nan])
    np.testing.assert_allclose(runs[("gp", 1)], [0.0, 0.1, 0.2])
    write(study / "toy.jsonl", [_record(family="toy")])  # an adaptive record where Eq. 8 reads
    with pytest.raises(RecordError, match="adaptive search \\(gp\\)"):
        load_study(study)


@pytest.mark.parametrize("override, key", [("strategy=grid", "strategy"), ("tuner.concurrency=0", "tuner.concurrency"),
                                           ("tuner.startup_trials=0", "tuner.startup_trials")])
def test_bad_tuner_settings_exit_2(tmp_path, override, key):
    done = run("study=toy", override, "dry_run=true", f"paths.results_dir={tmp_path / 'r'}", timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and f": {key}: " in lines[0], done.stderr
    assert not (tmp_path / "r").exists()


def test_a_family_file_names_its_strategy_and_the_dry_run_says_so(tmp_path):
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "toy_gp.yaml").write_text("inherits: toy\nstrategy: gp\n")
    (tmp_path / "fam" / "toy_bad.yaml").write_text("inherits: toy\nstrategy: bayes\n")
    with pytest.raises(ConfigError, match="toy_bad.yaml: strategy: must be one of random, gp, tpe"):
        load_family("toy_bad", dirs=[tmp_path / "fam"])
    out = tmp_path / "r"
    write(out / "toy" / "gp" / "toy.tuner_seed0.jsonl", [_record(trial=0)])
    done = run("study=toy", f"paths.family_dirs=[{tmp_path / 'fam'}]", "study.families={toy: toy_gp}", "trials=4",
               "dry_run=true", f"paths.results_dir={out}", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "toy/toy: strategy gp, tuner seed 0, concurrency 1, 10 random startup trials; 1 recorded, the other 3" in done.stdout
    assert json.loads((out / "toy" / "gp" / "toy.tuner_seed0.jsonl").read_text())["trial"] == 0
