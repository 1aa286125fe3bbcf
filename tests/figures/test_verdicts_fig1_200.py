"""The committed verdict rule of ``sst5_as_run_200`` (issue 62 item 6), as ``docs/verdicts.md`` applies it."""
import json

import numpy as np
import pytest

from syw.analysis.inference import compare
from syw.pages.verdict_rules import verdict
from syw.pages.verdicts_fig1_200 import BUDGETS, decide, section
from tests.support.fake_records import write_study

STUDY = "sst5_as_run_200"


@pytest.mark.parametrize(("leaders", "verdict"), [
    ({1: "lr", 5: "lr", 20: "cnn"}, "supports"),
    ({1: "lr", 5: None, 20: "cnn"}, "undecided"),
    ({1: None, 5: None, 20: None}, "undecided"),
    ({1: "cnn", 5: "lr", 20: "cnn"}, "contradicts"),
    ({1: "lr", 5: "cnn", 20: "cnn"}, "contradicts"),
    ({1: "lr", 5: "lr", 20: "lr"}, "contradicts"),
    ({1: "lr", 5: "lr", 20: None}, "undecided"),
])
def test_the_rule_committed_with_the_study(leaders, verdict):
    assert decide(leaders) == verdict


def test_no_verdict_until_every_family_has_its_200_trials(tmp_path):
    write_study(tmp_path, STUDY, {"lr": (0.38, 0.01, 2.0), "cnn": (0.36, 0.05, 100.0)}, n=120)
    lines = section(tmp_path)
    assert lines[-1].startswith("Verdict: pending. Trials recorded so far: lr 120 of 200, cnn 120 of 200;")
    with (tmp_path / STUDY / "cnn.jsonl").open("a") as out:  # a failed trial is recorded, and counts as run
        out.write(json.dumps({"study": STUDY, "family": "cnn", "trial": 120, "status": "failed", "value": None}) + "\n")
    assert "cnn 121 of 200" in section(tmp_path)[-1]


def test_on_200_trials_the_table_and_verdict_come_from_the_pointwise_comparison(tmp_path):
    folder = write_study(tmp_path, STUDY, {"lr": (0.40, 0.004, 2.0), "cnn": (0.30, 0.06, 100.0)}, n=200, seed=3)
    scores = {f: np.array([json.loads(line)["value"] for line in (folder / f"{f}.jsonl").open()]) for f in ("lr", "cnn")}
    diff = compare(scores["lr"], scores["cnn"], ("lr", "cnn"), at=BUDGETS)
    lines = section(tmp_path)
    rows = [line for line in lines if line.startswith("| 1 |") or line.startswith("| 5 |") or line.startswith("| 20 |")]
    assert [row.split("|")[2].strip() for row in rows] == [f"{e:+.4f}" for e in diff.estimate]
    expected = verdict(decide(dict(zip(BUDGETS, diff.leader(), strict=True))), {"lr": 200, "cnn": 200})
    assert lines[-1].startswith(f"Verdict: **{expected}** (200 LR and 200 CNN trials; claims are possible up to n = 37")
    assert diff.leader()[0] == "lr"  # LR's mean is far above: named at n = 1
