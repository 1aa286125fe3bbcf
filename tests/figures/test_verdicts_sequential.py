"""The verdict of the sequential study ``sst5_sequential`` (issue 74) in ``docs/verdicts.md``: the stopping rule's
own repeated confidence intervals, the look it stopped at, and "still running" on the records of some looks."""
import json

import numpy as np

from syw.analysis.sequential import sequential_so_far
from syw.pages.verdicts import build, study_verdicts
from syw.pages.verdicts_sequential import STUDY, rule_of, section, verdict
from tests.support.fake_records import write_records, write_study


def scores_of(folder, family):
    return np.array([json.loads(line)["value"] for line in (folder / f"{family}.jsonl").open()])


def test_without_records_the_section_says_what_runs_it(tmp_path):
    lines = section(tmp_path)
    assert lines[-1] == ("Verdict: pending. No look reached yet (the first needs 20 trials per family): "
                         "`syw run study=sst5_sequential` runs and resumes it.")
    assert verdict(tmp_path) is None


def test_some_looks_done_the_rule_is_still_running(tmp_path):
    # two families of one law: no leader at 50 trials per family (2 looks)
    folder = write_study(tmp_path, STUDY, {"lr": (0.38, 0.01, 2.0), "cnn": (0.38, 0.01, 100.0)}, n=50, seed=4)
    lines = section(tmp_path)
    assert lines[-1] == ("Verdict: pending (sequential; still running: 2 of 10 looks done, 40 trials per family; "
                         "`syw run study=sst5_sequential` resumes it).")
    design, names = rule_of()
    expected = sequential_so_far(scores_of(folder, "lr"), scores_of(folder, "cnn"), design, names).decisions()
    row = next(line for line in lines if line.startswith("| 5 |"))
    assert row.split("|")[3].strip() == f"[{expected[5].low:+.4f}, {expected[5].high:+.4f}]"  # the rule's own interval
    assert verdict(tmp_path) is None and STUDY not in study_verdicts.__wrapped__(tmp_path)


def test_lr_far_ahead_supports_at_the_second_look(tmp_path):
    write_study(tmp_path, STUDY, {"lr": (0.40, 0.004, 2.0), "cnn": (0.30, 0.01, 100.0)}, n=45, seed=3)
    lines = section(tmp_path)
    assert lines[-1] == ("Verdict: **supports at 95%** (sequential; stopped at look 2 of 10, 40 trials per family of at "
                         "most 200: 160 per family (320 in all) fewer than the fixed design's 200).")
    rows = {line.split("|")[1].strip(): line.split("|") for line in lines if line.startswith(("| 1 |", "| 5 |"))}
    assert rows["1"][6].strip() == "lr" and rows["1"][7].strip() == "1" and rows["5"][7].strip() == "2"
    low, high = (float(x) for x in rows["5"][3].strip(" []").split(","))
    assert 0 < low < float(rows["5"][2]) < high
    assert verdict(tmp_path) == "supports at 95%" and study_verdicts.__wrapped__(tmp_path)[STUDY] == "supports at 95%"
    assert "## Figure 1, decided sequentially: `sst5_sequential`" in build(tmp_path)


def test_the_cnn_ahead_contradicts(tmp_path):
    write_study(tmp_path, STUDY, {"lr": (0.30, 0.01, 2.0), "cnn": (0.40, 0.004, 100.0)}, n=40, seed=3)
    assert verdict(tmp_path) == "contradicts at 95%"
    assert section(tmp_path)[-1].startswith("Verdict: **contradicts at 95%** (sequential; stopped at look 2 of 10")


def test_a_failed_trial_within_the_looks_is_said(tmp_path):
    folder = write_study(tmp_path, STUDY, {"lr": (0.40, 0.004, 2.0), "cnn": (0.30, 0.01, 100.0)}, n=40, seed=3)
    rows = [json.loads(line) for line in (folder / "cnn.jsonl").open()]
    rows[7] = {**rows[7], "status": "failed", "value": None}
    write_records(folder / "cnn.jsonl", rows)
    assert "trial 7 of cnn failed" in section(tmp_path)[-1] and verdict(tmp_path) is None


def test_one_law_runs_to_the_last_look_undecided(tmp_path):
    """Two families of one law: no leader at any of the 10 looks; the rule stops at the last, saving nothing."""
    write_study(tmp_path, STUDY, {"lr": (0.38, 0.01, 2.0), "cnn": (0.38, 0.01, 100.0)}, n=200, seed=4)
    assert verdict(tmp_path) == "undecided with 200 trials per family"
    assert section(tmp_path)[-1] == ("Verdict: **undecided with 200 trials per family** (sequential; stopped at look 10 of 10, 200 trials per "
                                     "family of at most 200: as many as the fixed design's 200).")
