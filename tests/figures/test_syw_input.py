"""``syw curve`` forgives what is routine in trial files and says what it did (issue 37, item 5).

CASES is the specification, one row an input case: the files written, the arguments, and either
what the curve must then be (each group's N, Eq. 8 at n = 1, a note in the report) or the one
``error:`` line with exit status 2 and nothing written.
"""
from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from syw.core.entry import run_main
from syw.curve.command import main

Content = str | Callable[[Path], str]


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, Content]
    argv: list[str]
    sizes: dict[str, int] = field(default_factory=dict)  # group -> N of the curve
    first: dict[str, float] = field(default_factory=dict)  # group -> Eq. 8 at n = 1 (the mean score)
    note: str = ""  # a substring of the report
    error: str = ""  # else: the one error line's pattern ({t}: the test folder)


def optuna_export(t: Path) -> str:
    """A real ``study.trials_dataframe()`` CSV: 3 complete trials, 1 failed, 1 pruned."""
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
    for x in (0.2, 0.4, 0.9):
        study.enqueue_trial({"x": x})
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=3)
    study.optimize(lambda trial: float("nan"), n_trials=1)  # Optuna marks a NaN objective FAIL

    def pruned(trial):
        raise optuna.TrialPruned()

    study.optimize(pruned, n_trials=1)
    return study.trials_dataframe().to_csv(index=False)


def ray_folder(files: dict[str, str]) -> dict[str, str]:
    return files


FAILED_CSV = "model,status,val_acc\na,ok,0.2\na,ok,0.4\na,failed,\nb,OK,0.5\nb,Error,0.1\nb,ok,nan\n"
CASES = [
    Case("status-and-empty-scores-dropped-and-counted", {"r.csv": FAILED_CSV}, ["r.csv"],
         sizes={"a": 2, "b": 1}, first={"a": 0.3, "b": 0.5}, note="1 failed trial(s) are left out"),
    Case("empty-score-counted-apart", {"r.csv": FAILED_CSV}, ["r.csv"],
         sizes={"a": 2}, note="1 trial(s) with an empty, NaN or infinite score are left out"),
    Case("failed-worst-counts-them-as-the-group-worst", {"r.csv": FAILED_CSV}, ["r.csv", "--failed", "worst"],
         sizes={"a": 3, "b": 3}, first={"a": (0.2 + 0.4 + 0.2) / 3, "b": (0.5 + 0.5 + 0.5) / 3},
         note="3 failed trial(s) (1 Error trial(s); 1 failed trial(s); 1 trial(s) with an empty, NaN or infinite "
              "score) count as the worst score their group observed"),
    Case("failed-floor-counts-them-at-the-floor", {"r.csv": FAILED_CSV}, ["r.csv", "--failed", "floor", "--floor", "0.25"],
         sizes={"a": 3, "b": 3}, first={"a": (0.25 + 0.4 + 0.25) / 3, "b": (0.5 + 0.25 + 0.25) / 3},
         note="3 failed trial(s) (1 Error trial(s); 1 failed trial(s); 1 trial(s) with an empty, NaN or infinite "
              "score) count at the floor 0.25 (--floor; --failed floor)"),
    Case("scores-beyond-the-floor-count-at-it", {"r.csv": FAILED_CSV}, ["r.csv", "--floor", "0.25"],
         sizes={"a": 2, "b": 1}, first={"a": (0.25 + 0.4) / 2, "b": 0.5},
         note="1 trial(s) scored beyond the floor: scores below 0.25 (--floor) count at 0.25"),
    Case("perplexity-above-the-floor-counts-at-it", {"r.csv": "model,val_ppl\na,100\na,1e34\n"},
         ["r.csv", "--direction", "min", "--floor", "10000"], sizes={"a": 2}, first={"a": (100 + 10000) / 2},
         note="1 trial(s) scored beyond the floor: scores above 10000 (--floor) count at 10000"),
    Case("one-trial-sways-the-mean-the-median-is-drawn", {"r.csv": "model,val_ppl\na,100\na,120\na,130\na,1e34\n"},
         ["r.csv", "--direction", "min"], sizes={"a": 4},
         note="group 'a': one trial (score 1e+34) moves the mean curve by up to 2.5e+33, more than the range of the "
              "other trials' scores (30): the median best of n is drawn beside the mean"),
    Case("status-values-any-case", {"r.csv": "model,status,val_acc\na,COMPLETED,0.1\na,Success,0.3\na,finished,0.5\n"
                                             "a,COMPLETE,0.7\na,PRUNED,0.9\na,running,0.9\n"}, ["r.csv"],
         sizes={"a": 4}, first={"a": 0.4}, note="1 pruned trial(s) are left out (they did not finish)"),
    Case("an-infinite-score-is-a-failed-trial", {"r.csv": "val_acc\n0.5\ninf\n0.7\n"}, ["r.csv"],
         sizes={"r": 2}, first={"r": 0.6}),
    Case("optuna-csv-export", {"e.csv": optuna_export}, ["e.csv"], sizes={"e": 3}, first={"e": 0.5},
         note="read as Optuna's trials_dataframe() export"),
    Case("optuna-csv-export-counts-fail-and-pruned", {"e.csv": optuna_export}, ["e.csv"],
         note="1 FAIL trial(s) are left out"),
    Case("semicolon-delimiter-with-decimal-commas", {"r.csv": "model;val_acc\na;0,25\na;0,75\nb;0,5\n"}, ["r.csv"],
         sizes={"a": 2, "b": 1}, first={"a": 0.5, "b": 0.5}),
    Case("tab-separated-named-csv", {"r.csv": "model\tval_acc\na\t0.25\na\t0.75\n"}, ["r.csv"],
         sizes={"a": 2}, first={"a": 0.5}),
    Case("our-records-minimize-by-their-direction",
         {"r.jsonl": "".join(json.dumps({"family": "lm", "trial": i, "status": "ok", "value": v, "direction": "min"}) + "\n"
                             for i, v in enumerate((120.0, 80.0)))}, ["r.jsonl"],
         sizes={"lm": 2}, first={"lm": 100.0}, note="lower is better"),
    Case("ray-failed-trial-counted-as-worst", {
        "exp/t1/result.json": json.dumps({"val_acc": 0.6}) + "\n",
        "exp/t2/result.json": json.dumps({"val_acc": 0.8}) + "\n",
        "exp/t3/error.txt": "Traceback: boom\n"}, ["exp", "--failed", "worst"],
         sizes={"exp": 3}, first={"exp": (0.6 + 0.8 + 0.6) / 3}, note="1 error trial(s)"),
    Case("ray-failed-trial-dropped", {
        "exp/t1/result.json": json.dumps({"val_acc": 0.6}) + "\n",
        "exp/t3/error.txt": "Traceback: boom\n"}, ["exp"], sizes={"exp": 1}, note="1 error trial(s) are left out"),
    Case("unicode-group-names-render-or-fall-back", {"r.csv": "model,val_acc\n名前,0.2\n名前,0.4\nÉté,0.5\n🚀,0.3\n"},
         ["r.csv"], sizes={"名前": 2, "Été": 1, "🚀": 1}, note="is labelled 'group"),
    # --- one clear line, exit 2 ---
    Case("loss-column-needs-a-direction", {"r.csv": "model,val_loss\na,0.5\n"}, ["r.csv"],
         error=r"^error: {t}/r\.csv: no numeric column is named like a validation score .*; val_loss look\(s\) like "
               r"a loss \(lower is better\): pass --direction min"),
    Case("perplexity-metric-given-without-a-direction", {"r.csv": "model,val_perplexity\na,90\n"},
         ["r.csv", "--metric", "val_perplexity"],
         error=r"^error: {t}/r\.csv: the score column 'val_perplexity' looks like a loss \(lower is better\): pass "
               r"--direction min"),
    Case("target-on-another-scale", {"r.csv": "model,val_acc\na,20\na,85\n"}, ["r.csv", "--target", "0.83"],
         error=r"^error: {t}/r\.csv: --target 0\.83 lies below every score, so every group reaches it at n = 1 "
               r"\(scores from 20 to 85 in column 'val_acc'\)"),
    Case("percentage-target-for-fractions", {"r.csv": "model,val_acc\na,0.2\na,0.85\n"}, ["r.csv", "--target", "83"],
         error=r"^error: {t}/r\.csv: --target 83 lies outside \[0, 1\], where every score lies"),
    Case("every-trial-failed", {"r.csv": "model,status,val_acc\na,failed,\na,ok,\n"}, ["r.csv", "--metric", "val_acc"],
         error=r"^error: {t}/r\.csv: no finished trial with a score \(1 failed trial\(s\) are left out; 1 trial\(s\) "
               r"with an empty"),
    Case("worst-of-a-group-that-never-finished", {"r.csv": "model,status,val_acc\na,ok,0.5\nb,failed,\n"},
         ["r.csv", "--failed", "worst"],
         error=r"^error: {t}/r\.csv: group 'b': every trial failed, so none has a worst observed score"),
    Case("failed-floor-without-a-floor", {"r.csv": FAILED_CSV}, ["r.csv", "--failed", "floor"],
         error=r"^error: --failed floor needs a floor: pass --floor X"),
    Case("text-score-is-still-an-error", {"r.csv": "model,val_acc\na,0.5\na,high\n"}, ["r.csv", "--metric", "val_acc"],
         error=r"^error: {t}/r\.csv: line 3: column 'val_acc' holds 'high', not a finite number"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_input_case(case: Case, tmp_path: Path, capsys):
    for relative, content in case.files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content(tmp_path) if callable(content) else content, encoding="utf-8")
    out = tmp_path / "out"
    argv = ["curve", str(tmp_path / case.argv[0]), *case.argv[1:], "--out", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a missing glyph would warn once per character
        status = run_main(main, argv)
    err = capsys.readouterr().err
    if case.error:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert status == 2 and len(errors) == 1, err
        assert re.search(case.error.replace("{t}", re.escape(str(tmp_path))), errors[0]), errors[0]
        assert not out.exists() and "Traceback" not in err
        return
    assert status == 0, err
    table = pd.read_csv(out / "expected_max.csv", keep_default_na=False)
    group = table.columns[0]
    for name, size in case.sizes.items():
        assert (table[table[group].astype(str) == name].N == size).all() and (table[group].astype(str) == name).any()
    for name, value in case.first.items():
        rows = table[(table[group].astype(str) == name) & (table.n == 1)]
        assert rows.expected_max.iloc[0] == pytest.approx(value), name
    assert case.note in (out / "report.md").read_text()


def test_a_name_no_font_draws_is_labelled_by_its_place():
    from syw.curve.style import drawable

    shown, families = drawable(["lr", "Été", "名前"])
    assert shown["lr"] == "lr" and shown["Été"] == "Été" and families[0] == "DejaVu Sans"
    assert shown["名前"] in ("名前", "group 3")  # as it is where a CJK font is installed
    assert np.all([isinstance(f, str) for f in families])
