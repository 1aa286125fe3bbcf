"""Seed reruns: which assignments are rerun, resuming, the records, and the spread report."""
import math
import subprocess
import sys

import numpy as np
import pytest
from omegaconf import OmegaConf

from syw.core.errors import ConfigError
from syw.core.records import RecordError, RecordsWriter
from syw.experiments.reseed import best_trials, jobs_for, rerun_progress, reseed_path
from syw.experiments.space import load_family
from syw.figures.seeds import MELIS_RATIO, gap_rows, markdown, seed_rows
from tests.support.runner_util import REPO, records, run, runner_env

TOY = load_family("toy")


def write(path, rows):
    with RecordsWriter(path) as writer:
        for row in rows:
            writer.append(row)


def source(trial, value, status="ok", **kw):
    params = {**TOY.fixed, "x": 0.1 * trial, "width": 2, "lr": 0.01, "kind": "a"}
    return {"trial": trial, "status": status, "value": value if status == "ok" else None, "params": params, "seed": 0,
            "family": "toy", "direction": "max", "strategy": "random", "tuner_seed": 0, **kw}


def test_the_best_trials_by_direction_ties_by_index(tmp_path):
    path = tmp_path / "toy.jsonl"
    write(path, [source(0, 0.5), source(1, 0.9), source(2, 0.2), source(3, 0.9), source(4, None, "failed"),
                 source(2, 0.95)])  # a retried trial: its latest record counts
    assert [r["trial"] for r in best_trials(path, 3, maximize=True)] == [2, 1, 3]
    assert [r["trial"] for r in best_trials(path, 2, maximize=False)] == [0, 1]
    assert [r["trial"] for r in best_trials(path, 10, maximize=True)] == [2, 1, 3, 0]
    write(tmp_path / "failed.jsonl", [source(0, None, "failed")])
    with pytest.raises(RecordError, match="failed.jsonl: no ok trial to rerun"):
        best_trials(tmp_path / "failed.jsonl", 1, True)


def test_reseed_paths():
    assert str(reseed_path("r/ptb", "r/ptb/lstm.jsonl")) == "r/ptb/reseed/lstm.jsonl"
    assert str(reseed_path("r/ptb", "r/ptb/gp/lstm.tuner_seed2.jsonl")) == "r/ptb/reseed/gp.lstm.tuner_seed2.jsonl"


def cfg(results, best=2, seeds=3, **kw):
    return OmegaConf.create({"study": {"name": "toy", "direction": "max"}, "paths": {"results_dir": str(results)},
                             "reseed": {"best": best, "seeds": seeds}, "seed": 0, "strategy": None,
                             "tuner": {"seed": 0, "concurrency": 1, "startup_trials": 10}, **kw})


def test_jobs_resume_without_repeating_and_refuse_other_assignments(tmp_path):
    write(tmp_path / "toy" / "toy.jsonl", [source(0, 0.5), source(1, 0.9), source(2, 0.7)])
    src, path, jobs = jobs_for(cfg(tmp_path), TOY)
    assert path == tmp_path / "toy" / "reseed" / "toy.jsonl" and src == tmp_path / "toy" / "toy.jsonl"
    assert [(j["trial"], j["rerun"]) for j in jobs] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    assert jobs[0]["params"] == {"kind": "a", "lr": 0.01, "width": 2, "x": 0.1} and jobs[0]["value"] == 0.9
    write(path, [{**source(1, 0.8), "rerun": 0}, {**source(2, 0.6), "rerun": 2}])
    assert [(j["trial"], j["rerun"]) for j in jobs_for(cfg(tmp_path), TOY)[2]] == [(1, 1), (1, 2), (2, 0), (2, 1)]
    assert [(j["trial"], j["rerun"]) for j in jobs_for(cfg(tmp_path, best=1, seeds=1), TOY)[2]] == []
    write(path, [{**source(2, 0.6), "rerun": 1, "params": {**source(2, 0)["params"], "x": 0.9}}])
    with pytest.raises(ConfigError, match="reseed/toy.jsonl: trial 2 rerun 1: reran another assignment"):
        jobs_for(cfg(tmp_path), TOY)


def test_a_resumed_reseed_counts_the_reruns_already_recorded(tmp_path, capsys):
    write(tmp_path / "toy" / "toy.jsonl", [source(0, 0.5), source(1, 0.9), source(2, 0.7)])
    conf = cfg(tmp_path, study={"name": "toy", "direction": "max", "metric": "accuracy"})
    src, path, _ = jobs_for(conf, TOY)
    write(path, [{**source(1, 0.8), "rerun": 0}, {**source(2, 0.6), "rerun": 2}])
    jobs = jobs_for(conf, TOY)[2]
    with RecordsWriter(path) as writer:
        progress = rerun_progress(conf, TOY, writer, src, len(jobs), 1, "syw reseed study=toy")
        progress.finish({"trial": 1, "rerun": 1, "status": "ok", "value": 0.85, "duration_seconds": 1.0})
    assert "| 3 of 6 recorded; this run: 3 left" in capsys.readouterr().out  # best 2 x seeds 3


def rerun(group_trial, value, original, rerun_index, family="lstm", status="ok", direction="min", **kw):
    return {"trial": group_trial, "rerun": rerun_index, "status": status, "value": value if status == "ok" else None,
            "source_value": original, "family": family, "direction": direction, "strategy": "random", "tuner_seed": 0,
            "params": {}, **kw}


def test_the_seed_report_by_hand(tmp_path):
    study = tmp_path / "ptb"
    write(study / "reseed" / "lstm.jsonl", [rerun(7, v, 60.0, i) for i, v in enumerate([61.0, 62.0, 63.0])]
          + [rerun(3, 64.0, 61.0, 0), rerun(3, None, 61.0, 1, status="failed")])
    write(study / "reseed" / "nas.jsonl", [rerun(2, v, 64.0, i, family="nas") for i, v in enumerate([64.0, 66.0])])
    write(study / "reseed" / "gp.lstm.tuner_seed1.jsonl",
          [rerun(5, v, 61.5, i, strategy="gp", tuner_seed=1) for i, v in enumerate([62.5, 62.5])])
    rows = seed_rows(study).set_index(["group", "trial"])
    lstm = rows.loc[("lstm", 7)]
    assert (lstm.reruns, lstm["mean"], lstm.sd, lstm["min"], lstm["max"]) == (3, 62.0, 1.0, 61.0, 63.0)
    assert lstm.original_in_sds == -2.0
    assert (rows.loc[("lstm", 3)].reruns, rows.loc[("lstm", 3)].failed) == (1, 1) and math.isnan(rows.loc[("lstm", 3)].sd)
    assert rows.loc[("nas", 2)].sd == pytest.approx(math.sqrt(2))
    gaps = gap_rows(seed_rows(study)).set_index(["ahead", "behind"])
    # best assignments: lstm trial 7 (original 60, mean 62, SD 1); gp trial 5 (62.5, SD 0); nas trial 2 (65, SD sqrt 2)
    assert list(gaps.index) == [("lstm", "lstm (gp, tuner seed 1)"), ("lstm", "nas"), ("lstm (gp, tuner seed 1)", "nas")]
    nas = gaps.loc[("lstm", "nas")]
    assert (nas.gap, nas.pooled_sd) == (3.0, pytest.approx(math.sqrt(1.5)))
    assert nas.ratio == pytest.approx(3 / math.sqrt(1.5)) and nas.robust == (3 / math.sqrt(1.5) >= MELIS_RATIO)
    assert not gaps.loc[("lstm", "lstm (gp, tuner seed 1)")].robust  # 0.5 over a pooled SD of sqrt(0.5)
    text = markdown("ptb", seed_rows(study), gap_rows(seed_rows(study)))
    assert "| lstm | 7 | 60 | 3 | 0 | 62 | 1 | 61 | 63 | -2 |" in text
    assert "| lstm (trial 7) | nas (trial 2) | 3 | 1.225 | 2.449 | no |" in text


def test_bad_reseed_settings_exit_2(tmp_path):
    for override, says in (("reseed.best=0", "reseed.best: must be a positive whole number"),
                           ("reseed.seeds=two", "reseed.seeds: must be a positive whole number")):
        done = subprocess.run([sys.executable, "-m", "syw", "reseed", "study=toy", override, f"paths.results_dir={tmp_path}"],
                              cwd=REPO, env=runner_env(), capture_output=True, text=True, timeout=120)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1 and says in lines[0], done.stderr


@pytest.mark.ray
@pytest.mark.slow
def test_reruns_on_ray_train_with_the_seeds_they_record(tmp_path):
    two = ["study=toy", "+study.families.later=toy"]  # two families: their reruns share one Tune run, each its own file
    assert run(*two, "trials=4", f"paths.results_dir={tmp_path}").returncode == 0
    command = [sys.executable, "-m", "syw", "reseed", *two, "reseed.best=2", "reseed.seeds=2", f"paths.results_dir={tmp_path}"]
    done = subprocess.run(command, cwd=REPO, env=runner_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("4 of 4 recorded; this run: 0 left") == 2  # best 2 x seeds 2, per family
    rows = records(tmp_path / "toy" / "reseed" / "toy.jsonl")
    originals = sorted(records(tmp_path / "toy" / "toy.jsonl"), key=lambda r: -r["value"])[:2]
    assert sorted((r["trial"], r["rerun"]) for r in rows) == sorted((o["trial"], j) for o in originals for j in range(2))
    assert len({r["train_seed"] for r in rows}) == 4
    for r in rows:  # the toy's score is closed-form in its assignment and training seed
        p = r["params"]
        expect = (0.9 - (p["x"] - 0.7) ** 2 - 0.01 * abs(p["width"] - 6) - 0.02 * abs(math.log10(p["lr"]) + 2)
                  - {"a": 0.05, "b": 0.0, "c": 0.1}[p["kind"]] + p["noise"] * np.random.default_rng(r["train_seed"]).standard_normal())
        assert r["value"] == pytest.approx(expect, abs=1e-12) and r["source_file"] == "toy.jsonl"
        assert r["source_value"] == next(o["value"] for o in originals if o["trial"] == r["trial"])
        assert p == next(o["params"] for o in originals if o["trial"] == r["trial"])
    later = records(tmp_path / "toy" / "reseed" / "later.jsonl")
    assert len(later) == 4 and {r["family"] for r in later} == {"later"} and not {r["train_seed"] for r in later} & {r["train_seed"] for r in rows}
    again = subprocess.run(command, cwd=REPO, env=runner_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout.count("0 reruns to run: none") == 2
