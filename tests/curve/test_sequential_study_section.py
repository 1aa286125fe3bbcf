"""``syw curve results/<study>`` on a study with a stopping rule (issue 74): the report says its verdict is the rule's,
at the look its log reached, beside the fixed-N reading of every trial recorded."""
import json

import numpy as np

from syw.analysis.sequential import Design, sequential_so_far
from syw.core.entry import run_main
from syw.curve.command import main
from syw.curve.sequential import LOG_NAME, study_section
from syw.experiments.sequential_study import look_lines
from tests.support.fake_records import write_study


def _scores(folder, family):
    return np.array([json.loads(line)["value"] for line in (folder / f"{family}.jsonl").open()])


APART = {"lr": (0.40, 0.004, 2.0), "cnn": (0.30, 0.01, 100.0)}
ONE_LAW = {"lr": (0.38, 0.01, 2.0), "cnn": (0.38, 0.01, 100.0)}


def _logged(tmp_path, looks, families=APART):
    folder = write_study(tmp_path, "seq", families, n=45, seed=3)
    result = sequential_so_far(_scores(folder, "lr"), _scores(folder, "cnn"), Design(looks, (1, 5)), ("lr", "cnn"))
    (folder / LOG_NAME).write_text("".join(json.dumps(line) + "\n" for line in look_lines(result)))
    return folder, result


def test_the_report_reads_the_rule_where_it_stopped(tmp_path, capsys):
    folder, result = _logged(tmp_path, (20, 40, 60))
    assert result.stopped_at == 2
    assert run_main(main, ["curve", str(folder), "--no-figure", "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text()
    section = report.split("## A sequential study")[1].split("## How each number")[0]
    assert "Its rule stopped: decided at look 2 (40 trials per family): n = 1: lr leads, n = 5: lr leads." in section
    five = result.decisions()[5]
    assert f"| 5 | {five.estimate:+.4f} | [{five.low:+.4f}, {five.high:+.4f}] | lr | 2 |" in section
    assert "## A sequential study" in capsys.readouterr().out  # printed too, before the rules


def test_a_rule_still_running_and_other_folders(tmp_path):
    folder, _ = _logged(tmp_path, (20, 40, 60, 80), ONE_LAW)  # 45 trials: two looks logged, the rule goes on
    lines = [json.loads(line) for line in (folder / LOG_NAME).open()]
    assert len(lines) == 2 and not any(line.get("stopped") for line in lines)
    assert "Its rule is still running: 2 looks done (40 trials per family)." in study_section(folder)
    (folder / LOG_NAME).unlink()
    assert study_section(folder) == "" and study_section(tmp_path / "none.csv") == ""
