"""``syw report TRIALS`` (issue 65, item 3): the checklist of someone's trials written as checklist.md (and
.tex), naming what is missing; bad input is one line, exit status 2, nothing written."""
from __future__ import annotations

import pytest

from syw.cli import main

CSV = ("model,lr,dropout,val_acc,runtime\n"
       "cnn,0.01,0.1,0.80,10\ncnn,0.001,0.5,0.85,12\ncnn,0.1,0.3,0.70,11\n"
       "lr,0.5,0,0.75,1\nlr,0.05,0,0.78,2\n")


def test_report_of_a_csv_writes_the_checklist_naming_what_is_missing(tmp_path, capsys):
    (tmp_path / "sweep.csv").write_text(CSV)
    assert main(["report", str(tmp_path / "sweep.csv"), "--latex"]) == 0
    folder = tmp_path / "sweep_syw"
    assert sorted(p.name for p in folder.iterdir()) == ["checklist.md", "checklist.tex"]
    text = (folder / "checklist.md").read_text()
    assert "- [x] Number of hyperparameter search trials: cnn: 3; lr: 2" in text
    assert ("- [x] Hyperparameter configurations for best-performing models: cnn: lr = 0.001, dropout = 0.5 "
            "(val_acc 0.8500); lr: lr = 0.05, dropout = 0 (val_acc 0.7800)") in text
    assert "| dropout | [0.1, 0.5], values {0.1, 0.3, 0.5} | 0.5 |" in text
    assert "- [x] Average runtime for each approach: cnn: 11 s per trial, 33 s in all; lr: 2 s per trial, 3 s in all" in text
    assert "| 1 | 0.7833 ± " in text and "| 3 | " in text
    assert "- Description of computing infrastructure: the hardware each group ran on" in \
        text.split("## What you must still state")[1]
    assert r"\item[$\square$] Details of train/validation/test splits: missing." in (folder / "checklist.tex").read_text()
    assert capsys.readouterr().out.startswith(f"# Reporting checklist: {tmp_path / 'sweep.csv'}")


@pytest.mark.parametrize("extra, message", [
    (["--param", "momentum"], "sweep.csv: --param 'momentum' is not a column here (columns: model, lr, dropout, "),
    (["--metric", "val_f1"], "sweep.csv: "),
    (["--variant", "as_run"], "syw report: --variant: only for the suite's studies, without TRIALS"),
])
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, capsys, extra, message):
    (tmp_path / "sweep.csv").write_text(CSV)
    assert main(["report", str(tmp_path / "sweep.csv"), *extra]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.csv"]


def test_a_missing_file_and_trials_options_without_trials_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.csv")]) == 2
    assert main(["report", "--latex"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and str(tmp_path / "none.csv") in lines[0]
    assert lines[1] == "error: syw report: --param and --latex are for TRIALS (the suite's report always writes " \
                       "Markdown and LaTeX)"
    assert list(tmp_path.iterdir()) == []


def test_report_of_trials_runs_in_the_light_install(tmp_path):
    from tests.support.light import run_light

    (tmp_path / "sweep.csv").write_text(CSV)
    done = run_light(f"from syw.cli import main\nsys.exit(main(['report', {str(tmp_path / 'sweep.csv')!r}, '--latex']))\n",
                     tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "- [x] Number of hyperparameter search trials: cnn: 3; lr: 2" in (tmp_path / "sweep_syw" / "checklist.md").read_text()
