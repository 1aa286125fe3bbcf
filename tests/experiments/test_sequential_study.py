"""A study's stopping rule (issue 74) checked before anything runs, and its looks' log written once."""
import json

import numpy as np
import pytest

from syw.analysis.sequential import Design, sequential, sequential_so_far
from syw.core.errors import DataError
from syw.curve.sequential import read_log
from syw.experiments.sequential_study import decision_text, look_lines, provenance_lines, record_looks
from tests.experiments.test_runner_config import _bad
from tests.support.runner_util import run
from tests.support.sequential_toy import sequential_toy


@pytest.mark.parametrize("trials, edit, key, problem", [
    (20, "", "trials", "hi has 20 trials but the last look of study.sequential.looks is 18"),
    (18, ", boundary: linear", "study.sequential", "boundary must be one of"),
    (18, ", at: [1, 9], looks: [6, 12, 18]", "study.sequential", "budget n = 9 cannot be decided by the last look"),
    (18, ", confidence: 1.5", "study.sequential", "confidence must be in (0, 1)"),
    (18, ", stop: early", "study.sequential.stop", "unknown key"),
])
def test_a_rule_that_contradicts_the_study_is_refused(tmp_path, trials, edit, key, problem):
    study = sequential_toy(tmp_path / "conf", trials=trials)
    text = study.read_text()
    if "at:" in edit:
        text = text.replace(", at: [1, 2], looks: [6, 12, 18]", edit)
    else:
        text = text.replace("looks: [6, 12, 18]", "looks: [6, 12, 18]" + edit)
    study.write_text(text)
    msg = _bad(tmp_path, f"study={study}")
    assert msg.startswith(f"error: {study}: {key}: ") and problem in msg, msg


def test_the_rule_names_two_families_of_the_study(tmp_path):
    study = sequential_toy(tmp_path / "conf")
    study.write_text(study.read_text().replace("compare: [hi, lo]", "compare: [hi, mid]"))
    msg = _bad(tmp_path, f"study={study}")
    assert f"{study}: study.sequential.compare: must name the study's two families (has: hi, lo)" in msg


@pytest.mark.parametrize("override, key, problem", [
    ("only=[1]", "only", "a sequential study runs both families look by look"),
    ("family=hi", "family", "a sequential study runs both families look by look"),
    ("strategy=tpe", "strategy", "a sequential study runs seeded random search"),
])
def test_a_run_that_would_break_the_looks_is_refused(tmp_path, override, key, problem):
    study = sequential_toy(tmp_path / "conf")
    msg = _bad(tmp_path, f"study={study}", override)
    assert msg.startswith(f"error: {study}: {key}: ") and problem in msg, msg


def test_a_dry_run_states_the_rule(tmp_path):
    done = run(f"study={sequential_toy(tmp_path / 'conf')}", "dry_run=true", f"paths.results_dir={tmp_path / 'results'}",
               timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("sequential: hi vs lo at n = 1, 2, looks at 6, 12, 18 trials per family, obrien-fleming boundary, "
            "bonferroni over budgets, 95%") in done.stdout
    assert not (tmp_path / "results").exists()


def far_apart(size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.uniform(0.8, 0.9, size), rng.uniform(0.3, 0.4, size)


def test_the_looks_log_is_written_once_and_checked_against_the_records(tmp_path):
    design = Design((6, 12, 18), (1, 2))
    a, b = far_apart(18)
    path = tmp_path / "sequential.ndjson"
    first = sequential_so_far(a[:8], b[:8], design, ("hi", "lo"))  # one look reached
    assert [line["look"] for line in record_looks(path, first)] == [1]
    assert record_looks(path, first) == []  # evaluated again: nothing added
    with path.open("a") as out:
        out.write('{"look": 2, "trials_')  # a line cut off by a kill
    done = sequential(a, b, design, ("hi", "lo"))
    added = record_looks(path, done)
    assert [line.get("stopped", False) for line in added] == [False, True] and added[0]["look"] == 2
    lines = read_log(path)
    assert [line["look"] for line in lines] == [1, 2, 2] and path.read_text().count("\n") == 3
    assert lines[0]["budgets"][1] == {"n": 2, "estimate": pytest.approx(float(np.mean(a[:6]) - np.mean(b[:6])), abs=0.2),
                                      "statistic": None, "df": None, "boundary": None, "rci": [None, None],
                                      "leader": None, "decided_at": None}  # n = 2 is not tested on 6 trials
    assert lines[2]["why"] == decision_text(done) == "decided at look 2 (12 trials per family): n = 1: hi leads, n = 2: hi leads"
    assert record_looks(path, done) == [] and len(read_log(path)) == 3
    changed = sequential(a[::-1].copy(), b, design, ("hi", "lo"))  # other records than the log was written from
    with pytest.raises(DataError, match="look 1's line differs from the records' evaluation"):
        record_looks(path, changed)
    assert [json.loads(l) for l in path.read_text().splitlines()] == lines
    text = "\n".join(provenance_lines(tmp_path))
    assert "- look 1 (6 trials per family): n = 1: T = " in text and "n = 2: not tested (too few trials)" in text
    assert "- stopped: decided at look 2" in text


def test_an_undecided_rule_says_so():
    design = Design((6, 12), (1,))
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=12), rng.normal(size=12)
    result = sequential(a, b, design, ("hi", "lo"))
    assert result.stopped_at == 2 and result.decisions()[1].leader is None
    assert decision_text(result) == "last look 2 reached (12 trials per family) undecided: n = 1: no leader"
    assert look_lines(result)[-1]["stopped"] is True
    going = sequential_so_far(a[:7], b[:7], design, ("hi", "lo"))
    assert decision_text(going) == "still running: 1 of 2 looks done (6 trials per family); n = 1: no leader"


def test_the_sst5_sequential_study_dry_runs(tmp_path):
    done = run("study=sst5_sequential", "dry_run=true", f"paths.results_dir={tmp_path / 'results'}", timeout=180)
    assert done.returncode == 0, done.stderr
    assert ("sequential: lr vs cnn at n = 1, 5, looks at 20, 40, 60, 80, 100, 120, 140, 160, 180, 200 trials per family, "
            "obrien-fleming boundary, bonferroni over budgets, 95%") in done.stdout
    assert "\n   199 " in done.stdout and not (tmp_path / "results").exists()  # 200 assignments per family, nothing written


def test_provenance_lists_the_looks_and_the_stop(tmp_path):
    from syw.experiments.provenance import summary
    from syw.experiments.sequential_study import evaluate
    from tests.support.fake_records import write_study

    folder = write_study(tmp_path, "toy_seq", {"hi": (0.9, 0.01, 1.0), "lo": (0.5, 0.01, 1.0)}, n=12)
    result = evaluate(Design((6, 12, 18), (1, 2)), ("hi", "lo"), {f: folder / f"{f}.jsonl" for f in ("hi", "lo")}, True)
    assert result.stopped_at == 2
    record_looks(folder / "sequential.ndjson", result)
    text = summary(folder, None)
    assert "Sequential rule (sequential.ndjson): one line per look evaluated from the records:" in text
    assert "- stopped: decided at look 2 (12 trials per family): n = 1: hi leads, n = 2: hi leads" in text
    assert "hi: 12 of 12 records" in text and "sequential" not in text.split("Sequential rule")[0]  # not read as records
