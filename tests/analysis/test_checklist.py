"""The reporting checklist of the paper's section 5 for anyone's trials (issue 65, item 3): each item the trials
can fill is filled with their numbers (trials per group, bounds seen, best assignment, Eq. 8 at n = 1, 5, 10, N,
time per trial), and what only the author knows is listed as still to state."""
from __future__ import annotations

import pandas as pd
import pytest

from syw.core.errors import DataError
from syw.curve import api
from syw.curve.checklist import ITEMS, Entry, bounds, checklist_lines, expected_table
from tests.support.latex import compiles, needs_pdflatex
from tests.support.oracle import eq8, eq8_sd

TRIALS = pd.DataFrame({
    "model": ["cnn"] * 4 + ["lr"] * 3,
    "lr": [0.01, 0.001, 0.1, 0.003, 0.5, 0.05, 0.005],
    "layers": [2, 3, 2, 4, 1, 1, 1],
    "optimizer": ["adam", "sgd", "adam", "adam", "sgd", "adam", "adam"],
    "val_acc": [0.80, 0.85, 0.70, 0.82, 0.75, 0.78, 0.77],
    "test_acc": [0.79, 0.83, 0.69, 0.80, 0.74, 0.76, 0.77],
    "duration": [10.0, 12.0, 11.0, 7.0, 1.0, 2.0, 1.5],
})


@pytest.fixture(scope="module")
def checklist():
    return api.curves(TRIALS, name="sweep.csv").checklist()


def test_counts_bounds_and_best_assignment_per_group(checklist):
    cnn, lr = checklist.groups
    assert (cnn.name, cnn.trials, lr.name, lr.trials) == ("cnn", 4, "lr", 3)
    assert cnn.bounds == {"lr": "[0.001, 0.1], values {0.001, 0.003, 0.01, 0.1}",
                          "layers": "integers in [2, 4], values {2, 3, 4}", "optimizer": "{adam, sgd}"}
    assert lr.bounds["layers"] == "1 (fixed)"
    assert (cnn.best_score, cnn.best) == (0.85, {"lr": "0.001", "layers": "3", "optimizer": "sgd"})
    assert (lr.best_score, lr.best) == (0.78, {"lr": "0.05", "layers": "1", "optimizer": "adam"})
    assert cnn.mean_seconds == pytest.approx(10.0) and cnn.total_seconds == pytest.approx(40.0)
    assert (cnn.best_test, lr.best_test) == (0.83, 0.76)


def test_the_items_say_the_numbers_and_what_is_still_to_state(checklist):
    entries = checklist.entries
    assert entries["trials"] == Entry("cnn: 4; lr: 3")
    assert entries["best"].value == ("cnn: lr = 0.001, layers = 3, optimizer = sgd (val_acc 0.8500); "
                                     "lr: lr = 0.05, layers = 1, optimizer = adam (val_acc 0.7800)")
    assert entries["runtime"].value == "cnn: 10 s per trial, 40 s in all; lr: 2 s per trial, 4 s in all"
    assert entries["validation"].value.startswith("cnn: the best-validation trial scores 0.8500 on validation, "
                                                  "0.8300 on test")
    assert entries["method"].value == ("every group: random search, assumed: the trials do not record how they were "
                                       "chosen; selected by the best validation val_acc (higher is better)")
    done = {key for key, entry in entries.items() if entry.done}
    assert done == {"runtime", "validation", "best", "trials", "expected"}
    text = checklist.markdown()
    still = text.split("## What you must still state\n\n")[1].split("\n\n")[0].splitlines()
    assert [line.split(":")[0] for line in still] == [
        "- Description of computing infrastructure", "- Details of train/validation/test splits",
        "- A link to implemented code", "- Bounds for each hyperparameter",
        "- The method of choosing hyperparameter values and the criterion used to select among them"]
    assert "| layers | integers in [2, 4], values {2, 3, 4} | 3 |" in text


def test_the_expected_max_table_is_eq8_at_1_5_10_and_each_n(checklist):
    assert checklist.budgets() == [1, 3, 4]
    table = checklist.markdown().split("section 3.3)\n\n")[1].splitlines()
    assert table[0] == "| n | cnn | lr |"
    cnn = sorted(TRIALS.val_acc[:4])
    lr = sorted(TRIALS.val_acc[4:])
    assert table[2].startswith(f"| 1 | {sum(cnn) / 4:.4f} ± ")
    assert table[3].split(" | ")[1].startswith(f"{eq8(cnn, 3):.4f} ± ")
    assert table[4] == f"| 4 | {eq8(cnn, 4):.4f} ± {eq8_sd(cnn, 4):.4f} | - |"
    assert table[3].split(" | ")[2].startswith(f"{eq8(lr, 3):.4f} ± ")


def test_lower_is_better_picks_the_lowest_trial():
    frame = pd.DataFrame({"model": ["a", "a", "a"], "dropout": [0.1, 0.5, 0.3], "val_loss": [0.9, 0.4, 0.6]})
    result = api.curves(frame, maximize=False).checklist()
    assert (result.groups[0].best_score, result.groups[0].best) == (0.4, {"dropout": "0.5"})
    assert "(lower is better)" in result.entries["method"].value


def test_prefixed_columns_are_the_hyperparameters_and_param_chooses_them():
    frame = pd.DataFrame({"config.lr": [0.1, 0.2], "config.seed": [1, 2], "extra": ["x", "y"], "val_acc": [0.5, 0.6]})
    result = api.curves(frame)
    assert list(result.checklist().groups[0].bounds) == ["config.lr", "config.seed"]
    assert result.checklist(["extra"]).groups[0].best == {"extra": "y"}
    with pytest.raises(DataError, match=r"trials: --param 'nope' is not a column here \(columns: config.lr, "):
        result.checklist(["nope"])


def test_a_strategy_column_and_hardware_columns_fill_their_items():
    frame = pd.DataFrame({"strategy": ["random"] * 3, "gpu": ["A100", "A100", "V100"], "lr": [1, 2, 3],
                          "val_acc": [0.1, 0.3, 0.2]})
    entries = api.curves(frame).checklist().entries
    assert entries["method"] == Entry("trials: random search (column 'strategy'); selected by the best validation "
                                      "val_acc (higher is better)")
    assert entries["infrastructure"] == Entry("the trials record gpu: A100; gpu: V100")


def test_bounds_of_one_column():
    assert bounds(pd.Series([0.5, 0.25, None])) == "[0.25, 0.5], values {0.25, 0.5}"
    assert bounds(pd.Series(range(20))) == "integers in [0, 19]"
    assert bounds(pd.Series([True, False])) == "{False, True}"
    assert bounds(pd.Series(["relu"])) == "relu (fixed)"
    assert bounds(pd.Series([None], dtype=object)) == "never set"


def test_every_item_of_text_box_1_is_rendered_ticked_or_not():
    entries = {key: Entry("given") for key, _, _ in ITEMS} | {"code": Entry(None, "the link")}
    lines = checklist_lines(entries)
    items = [line for line in lines if line.startswith("- [")]
    assert len(items) == len(ITEMS) == 10
    assert "- [ ] A link to implemented code: **missing**. Still to state: the link" in items
    assert lines[-1] == "- A link to implemented code: the link"
    assert expected_table({"a": (pd.Series([0.5, 0.6]).to_numpy(), pd.Series([0.1, 0.05]).to_numpy())}, [1, 2, 3]) == [
        "| n | a |", "|---|---|", "| 1 | 0.5000 ± 0.1000 |", "| 2 | 0.6000 ± 0.0500 |", "| 3 | - |"]


def test_latex_holds_the_items_the_bounds_and_the_table(checklist):
    tex = checklist.latex()
    assert r"\item[$\boxtimes$] Number of hyperparameter search trials: cnn: 4; lr: 3" in tex
    assert r"\item[$\square$] A link to implemented code: missing. Still to state: a link to the code" in tex
    assert r"layers & integers in [2, 4], values \{2, 3, 4\} & 3 \\" in tex
    assert r"cnn & 4 & " in tex and tex.count(r"\begin{tabular}") == 3


@needs_pdflatex
def test_the_latex_checklist_compiles_with_pdflatex(checklist, tmp_path):
    compiles(tmp_path, checklist.latex(), ("booktabs", "amssymb"))


def test_an_optuna_study_reads_its_params(tmp_path):
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="tuning", storage=url, direction="maximize",
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: t.suggest_int("layers", 1, 4) / 10 + 0.01 * t.suggest_float("lr", 0.0, 1.0), n_trials=6)
    result = api.curves(url).checklist()
    (group,) = result.groups
    layers = [t.params["layers"] for t in study.trials]
    best = max(study.trials, key=lambda t: t.value)
    assert group.trials == 6 and list(group.bounds) == ["params.layers", "params.lr"]
    assert group.bounds["params.layers"].startswith(f"integers in [{min(layers)}, {max(layers)}]")
    assert group.best["params.layers"] == str(best.params["layers"]) and group.best_score == pytest.approx(best.value)
