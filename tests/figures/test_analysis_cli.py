"""`syw table` on small records files."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from syw.core.entry import run_main
from syw.curve.table_command import main


def test_cli_tsv_table(tmp_path, capsys):
    path = tmp_path / "trials.tsv"
    pd.DataFrame(
        {"model": ["a"] * 5 + ["b"] * 4, "acc": [0, 25, 50, 75, 100, 1, 1, 2, 3], "secs": [1] * 5 + [2, 2, 4, 4]}
    ).to_csv(path, sep="\t", index=False)
    assert main([str(path), "--group", "model", "--metric", "acc", "--duration", "secs"]) == 0
    out = pd.read_csv(tmp_path / "trials_expected_max.csv")
    a = out[out.model == "a"]
    assert a.expected_max.round(4).tolist() == [50, 70, 80, 85.84, 89.6]
    assert a.spread_sd.round(4).tolist() == [35.3553, 29.1548, 23.6643, 19.6340, 16.6084]
    b = out[out.model == "b"]
    assert b.unbiased.round(6).tolist() == [1.75, 2.333333, 2.75, 3.0]
    assert b.seconds.tolist() == [3, 6, 9, 12]
    assert "85.8400" in capsys.readouterr().out


def test_cli_jsonl_records_skip_failed(tmp_path):
    path = tmp_path / "toy.jsonl"
    rows = [{"family": "toy", "trial": i, "value": v, "status": "ok", "params": {"x": v}} for i, v in enumerate((0.1, 0.2))]
    rows.append({"family": "toy", "trial": 2, "value": None, "status": "failed", "params": {"x": 0.3}, "error": "boom"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "t.tsv"
    assert main([str(path), "--max-n", "3", "--out", str(out)]) == 0
    table = pd.read_csv(out, sep="\t")
    assert table.N.tolist() == [2, 2, 2]
    assert table.expected_max.tolist()[0] == pytest.approx(0.15)


def test_cli_errors_exit_2(tmp_path):
    assert run_main(main, [str(tmp_path / "missing.csv")]) == 2
    bad = tmp_path / "x.csv"
    bad.write_text("family,value\na,oops\n")
    assert run_main(main, [str(bad)]) == 2
    assert run_main(main, [str(bad), "--metric", "nope"]) == 2


def test_module_entry_point(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("family,value\na,1\na,2\n")
    done = subprocess.run([sys.executable, "-m", "syw", "table", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1.7500" in done.stdout


def test_cli_reads_records_with_a_torn_line(tmp_path, capsys):
    """A records file with a damaged line (another tool's, or a suite's before writers removed cut-off lines):
    the CLI reads past it, saying so."""
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps({"family": "toy", "trial": 0, "value": 0.5, "status": "ok", "params": {}}) + "\n"
                    + '{"family": "toy", "trial": 1, "val\n'
                    + json.dumps({"family": "toy", "trial": 1, "value": 0.7, "status": "ok", "params": {}}) + "\n")
    assert main([str(path), "--out", str(tmp_path / "o.csv")]) == 0
    assert f"warning: {path}:2: skipping a line that is not JSON" in capsys.readouterr().err
    assert pd.read_csv(tmp_path / "o.csv").expected_max.tolist() == pytest.approx([0.6, 0.65])


@pytest.mark.paperdata
def test_syw_table_reads_the_authors_tsv_as_syw_curve_does(tmp_path, capsys):
    """Issue 64: `syw table` on the authors' camera-ready TSV picks the group and score columns as `syw curve`
    does, and its Eq. 8 column is `syw curve`'s."""
    from syw.cli import main as syw
    from tests.support.oracle import authors_file

    path = authors_file("sst5_cnn_lr_search.tsv")
    assert main([str(path), "--out", str(tmp_path / "t.csv")]) == 0
    assert "score 'best_validation_accuracy'" in capsys.readouterr().err
    assert syw(["curve", str(path), "--out", str(tmp_path / "c")]) == 0
    table, curve = pd.read_csv(tmp_path / "t.csv"), pd.read_csv(tmp_path / "c" / "expected_max.csv")
    column = table.columns[0]  # syw table names it after the file's column; syw curve's is always `group`
    assert set(table[column]) == set(curve["group"]) == {"CNN", "LR"}
    merged = table.merge(curve.rename(columns={"group": column}), on=[column, "n"], suffixes=("", "_curve"))
    assert len(merged) == len(table) == len(curve)
    assert merged.expected_max.to_numpy() == pytest.approx(merged.expected_max_curve.to_numpy(), abs=1e-12)


def test_syw_table_without_a_group_column_is_one_group(tmp_path, capsys):
    path = tmp_path / "sweep.csv"
    path.write_text("lr,val_acc\n0.1,0.5\n0.01,0.7\n")
    assert main([str(path)]) == 0
    out = pd.read_csv(tmp_path / "sweep_expected_max.csv")
    assert out.group.tolist() == ["sweep", "sweep"] and out.expected_max.tolist() == pytest.approx([0.6, 0.65])  # Eq. 8: 0.7 (3/4) + 0.5 (1/4)
    assert "one group" in capsys.readouterr().err
