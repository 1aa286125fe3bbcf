"""Two runs of one study compared trial by trial, against hand-computed numbers."""
import json

from syw.core.entry import run_main
from syw.experiments.compare import main


def write_run(folder, values, extra=None, cpu="CPU A"):
    """``values``: {family: [score of trial 0, 1, ...]}; trial i runs from second 10 i to 10 i + 5."""
    folder.mkdir(parents=True)
    for family, scores in values.items():
        with (folder / f"{family}.jsonl").open("w") as out:
            for i, value in enumerate(scores):
                out.write(json.dumps({
                    "family": family, "trial": i, "status": "ok", "value": value,
                    "params": {"lr": 0.1 * (i + 1), **(extra or {})}, "duration_seconds": 5.0,
                    "started_at": f"2026-01-01T00:00:{10 * i:02d}+00:00", "ended_at": f"2026-01-01T00:00:{10 * i + 5:02d}+00:00",
                    "hardware": {"cpu": cpu, "cpu_count": 2}, "versions": {"suite_commit": "abcdef0123"},
                }) + "\n")
    return folder


def test_compare_two_runs(tmp_path, capsys):
    first = write_run(tmp_path / "a", {"cnn": [0.1, 0.2, 0.3, 0.4], "lr": [0.3] * 4})
    second = write_run(tmp_path / "b", {"cnn": [0.1, 0.3, 0.3, 0.4], "lr": [0.3] * 4}, extra={"batching": "bucket"}, cpu="CPU B")
    assert main([str(first), str(second), "--names", "one", "two"]) == 0
    text = capsys.readouterr().out
    cnn = text.split("## cnn")[1].split("## lr")[0]
    assert "the same assignment in 4, the same score in 3 (settings batching only in two)" in cnn
    assert "two scores higher in 1, lower in 0, the same in 3; difference (two - one) mean +0.0250" in cnn
    # Eq. 8 with N = 4: n = 1 is the mean; n = 4 is sum v_i ((i/4)^4 - ((i-1)/4)^4) = 92.6/256 and 94.1/256
    assert "one 0.250 / 0.362; two 0.275 / 0.368" in cnn
    assert "largest gap over n = 1..4: +0.0250 at n = 1" in cnn
    assert "one: wall 0.6 min (first start to last end), sum of trial time 0.3 min; CPU A, 2 cores; commit abcdef0" in cnn
    assert "the same assignment in 4, the same score in 4 (settings" in text.split("## lr")[1]
    # CNN at n = 2: 5.0/16 = 0.3125 and 5.3/16 = 0.33125 against LR's 0.3; LR leads only at n = 1
    assert "- one: cnn overtakes lr for good from n = 2 (of 4)." in text
    assert "- two: cnn overtakes lr for good from n = 2 (of 4)." in text
    assert "lr overtakes cnn" not in text


def test_compare_without_common_family(tmp_path, capsys):
    first = write_run(tmp_path / "a", {"cnn": [0.1]})
    second = write_run(tmp_path / "b", {"lr": [0.1]})
    assert run_main(main, [str(first), str(second)]) == 2
    assert "no family has records in both" in capsys.readouterr().err
