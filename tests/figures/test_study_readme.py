"""figures/study_readme.py: README numbers regenerated from the records.

Every committed README must regenerate unchanged (its numbers are what the records give, rounded
once); a tampered number is caught by ``--check``; each fact is checked on a small generated study
against its closed form (Eq. 8 of n draws from four distinct values), and a bad marker is one
error line naming the README and line, exit status 2.
"""
import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from syw.core.entry import run_main
from syw.core.manifest import start
from syw.core.paths import REPO
from syw.experiments.provenance import summary
from syw.pages.study_readme import ReadmeError, main, readmes, regenerate, run

RESULTS = REPO / "results"


def test_every_committed_readme_regenerates_unchanged():
    paths = readmes(RESULTS, None)
    assert REPO / "README.md" in paths and RESULTS / "scitail_reduced" / "README.md" in paths
    assert REPO / "docs" / "figure1_reproduction.md" in paths and REPO / "docs" / "performance.md" in paths
    for path in paths:
        outcome = regenerate(path)
        assert outcome.changes == [], f"{path}: `make readmes` would change {outcome.changes[:3]}"


def _data_at_hand() -> bool:
    root = os.environ.get("SYW_DATA_DIR")
    return bool(root) and (Path(root) / "authors_trials").is_dir() and (Path(root) / "squad" / "dev-v1.1.json").is_file()


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.paperdata
@pytest.mark.skipif(not _data_at_hand(), reason="set SYW_DATA_DIR to a folder with authors_trials/ and squad/dev-v1.1.json")
def test_with_the_data_every_marker_is_checked():
    for path in readmes(RESULTS, None):
        outcome = regenerate(path)
        assert outcome.unchecked == [] and outcome.changes == [], path


def test_a_tampered_number_is_found_by_check_and_rewritten(tmp_path, capsys):
    study = tmp_path / "scitail_reduced"
    shutil.copytree(RESULTS / "scitail_reduced", study)
    readme = study / "README.md"
    good = readme.read_text()
    tampered = good.replace("<!-- syw: overtakes family=dam over=ngram -->9<!-- /syw -->",
                            "<!-- syw: overtakes family=dam over=ngram -->8<!-- /syw -->", 1)
    assert tampered != good
    readme.write_text(tampered)
    assert main(["--study", "scitail_reduced", "--results", str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "overtakes family=dam over=ngram: differs from the records: '8' -> '9'" in out
    assert readme.read_text() == tampered  # --check writes nothing
    assert main(["--study", "scitail_reduced", "--results", str(tmp_path)]) == 0
    assert readme.read_text() == good


def test_a_tampered_number_in_docs_is_found_by_check(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    page = tmp_path / "docs" / "figure1_reproduction.md"
    good = (REPO / "docs" / "figure1_reproduction.md").read_text()
    marker = "<!-- syw: count study=sst5 family=lr -->"
    assert f"{marker}50<!-- /syw -->" in good
    page.write_text(good.replace(f"{marker}50<!-- /syw -->", f"{marker}49<!-- /syw -->", 1))
    assert run(RESULTS, None, check=True, root=tmp_path) == 1
    assert "figure1_reproduction.md:22: count study=sst5 family=lr: differs from the records: '49' -> '50'" in capsys.readouterr().out
    assert run(RESULTS, None, check=False, root=tmp_path) == 0
    assert page.read_text() == good


def _record(study, family, trial, value, seconds, start, **extra):
    return {"study": study, "family": family, "trial": trial, "status": "ok", "value": value, "direction": "max",
            "params": {"lr": 10.0 ** -(trial + 1), "epochs": 3, **extra}, "best_epoch": 3 - trial % 2,
            "duration_seconds": seconds, "started_at": f"2026-01-01T00:{start:02d}:00+00:00",
            "ended_at": f"2026-01-01T00:{start + 5:02d}:00+00:00",
            "versions": {"suite_commit": f"{'abc' if trial < 2 else 'def'}1234567", "python": "3.11", "torch": "2"},
            "command": "syw run study=synth", "hardware": {"cpu": "cpu", "cpu_count": 2, "gpu": "none", "host": "h"},
            "extra_metrics": {"f1": value + 0.05}}


@pytest.fixture
def study(tmp_path):
    """results/synth/: family a with values 0.1..0.4 (trials 0-3), family b at 0.35 four times."""
    folder = tmp_path / "synth"
    folder.mkdir()
    rows = {"a": [_record("synth", "a", i, v, 60.0 * (i + 1), 10 * i) for i, v in enumerate([0.1, 0.2, 0.3, 0.4])],
            "b": [_record("synth", "b", i, 0.35, 30.0, 10 * i + 1) for i in range(4)]}
    for family, records in rows.items():
        (folder / f"{family}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        start(folder / f"{family}.jsonl", "made by this test")  # as syw run leaves them
    (folder / "run.log").write_text(
        "=== started Thu Jan  1 00:00:00 UTC 2026 at commit abc1234\n...\nreal\t1m30.000s\nThu Jan  1 00:01:31 UTC 2026\n"
        "=== resumed Thu Jan  1 01:00:00 UTC 2026 at commit def1234\n...\n=== stopped Thu Jan  1 01:10:00 UTC 2026 by hand\n")
    return log(folder)


def log(folder: Path, text: str | None = None) -> Path:
    """``text`` as the study's run.log (when given), and its PROVENANCE.md written again, as `syw provenance` does."""
    if text is not None:
        (folder / "run.log").write_text(text)
    (folder / "PROVENANCE.md").write_text(summary(folder, None))
    return folder


def facts(folder: Path, *markers: str) -> list[str]:
    readme = folder / "README.md"
    readme.write_text("".join(f"<!-- syw: {m} -->?<!-- /syw -->\n" for m in markers))
    return regenerate(readme, folder.parent).text.replace("<!-- /syw -->", "").split("\n")[:-1]


def values(folder: Path, *markers: str) -> list[str]:
    return [line.split("-->", 1)[1] for line in facts(folder, *markers)]


def test_expected_max_and_budgets_are_eq8_on_four_distinct_values(study):
    # Eq. 8 with N = 4 distinct values v_i (sorted): E[max of n] = sum v_i ((i/4)^n - ((i-1)/4)^n).
    assert values(study, "emax family=a n=1 fmt=.4f", "emax family=a n=2 fmt=.4f", "emax family=a n=3 fmt=.5f",
                  "emax family=a fmt=.6f") == ["0.2500", "0.3125", "0.34375", f"{92.6 / 256:.6f}"]
    # The trial the values select among n = 2: P(best = v_i) = (2i - 1) / 16 (i = 1..4); its params.lr
    # (0.1, 0.01, 0.001, 0.0001 for the values 0.1..0.4) averaged with those weights; at n = 1 the plain mean.
    assert values(study, "emax family=a n=2 test=params.lr fmt=.8f", "emax family=a n=1 test=extra.f1 fmt=.4f") == \
        [f"{(1 * 0.1 + 3 * 0.01 + 5 * 0.001 + 7 * 0.0001) / 16:.8f}", "0.3000"]
    assert values(study, "reach family=a target=0.3", "reach family=a target=0.39", "reach family=a target=0.3 time=yes fmt=hm") == \
        ["2", "more than 4", "5 min"]  # 2 trials of a mean 150 s
    # b stays at 0.35: a is ahead from n = 4 (0.3617) and behind before (0.34375 at n = 3).
    assert values(study, "overtakes family=a over=b", "overtakes family=b over=a", "behind family=a fmt=.4f") == \
        ["4", "never", f"{0.35 - 0.25:.4f}"]
    # On the log scale a at n = 4 is exp(sum ln v_i ((i/4)^4 - ((i-1)/4)^4)) = 0.3551 > 0.35 as well; at n = 3 0.3331.
    assert values(study, "leaders", "leaders scale=log") == ["b at n = 1-3; a at n = 4"] * 2


def test_eq8_on_the_log_scale_is_written_back_with_exp(study):
    # scale=log: Eq. 8 of ln v, then exp. At n = 1 the geometric mean of 0.1..0.4; at n = 2 the weights (2i - 1) / 16.
    log_two = (1 * math.log(0.1) + 3 * math.log(0.2) + 5 * math.log(0.3) + 7 * math.log(0.4)) / 16
    assert values(study, "emax family=a n=1 scale=log fmt=.5f", "emax family=a n=2 scale=log fmt=.5f", "emax family=b scale=log") == \
        [f"{(0.1 * 0.2 * 0.3 * 0.4) ** 0.25:.5f}", f"{math.exp(log_two):.5f}", "0.350"]
    text = "\n".join(facts(study, "table results n=1,2 scale=log"))
    assert "| family | ok trials | best (trial) | exp E[max log] n=1 | n=2 | mean trial time |" in text
    assert f"| a | 4 | 0.400 (trial 3) | {(0.1 * 0.2 * 0.3 * 0.4) ** 0.25:.3f} | {math.exp(log_two):.3f} | 2.5 min |" in text


def test_the_log_scale_refuses_a_value_at_or_below_zero(study):
    (study / "c.jsonl").write_text("".join(json.dumps(_record("synth", "c", i, v, 60.0, 10 * i + 2)) + "\n" for i, v in enumerate([0.3, 0.0])))
    assert_bad_marker(study, "emax family=c scale=log", "scale=log: c has a value of 0; the logarithm needs values above 0")


def test_counts_fields_filters_and_pairing(study):
    assert values(study, "count", "count family=a", "each", "count family=a where=value>0.15", "which family=a where=value>=0.3",
                  "count family=a where=best_epoch==params.epochs", "count family=a where=\"commit=='def1234'\"",
                  "count family=a where=value>9") == ["8", "4", "4", "3", "2 and 3", "2", "2", "0"]
    assert values(study, "best family=a", "best family=a of=trial", "best family=a of=params.lr", "best family=a of=extra.f1",
                  "best family=a times=1000", "mean family=a of=minutes", "sum family=a of=seconds fmt=hm",
                  "min family=a of=params.lr where=value>0.15 fmt=.0e") == \
        ["0.400", "3", "1.0e-4", "0.450", "400", "2.5", "10 min", "1e-04"]
    assert values(study, "ratio family=a over=b", "max family=a with=synth of=value-with.value fmt=.1f",
                  "count family=b with=synth where=value<with.value") == ["5.0", "0.0", "0"]
    assert values(study, "provenance of=parallel", "min family=a of=started fmt=%Y-%m-%d") == ["2", "2026-01-01"]
    # sample SD of 0.1..0.4: sqrt(0.05 / 3); trials 2 and 3 take (180 + 240) of the 600 s; |lr - value| is largest at trial 3.
    assert values(study, "sd family=a fmt=.4f", "share family=a where=value>=0.3", "max family=a of=|params.lr-value| fmt=.4f",
                  "min family=a of=params.lr-value fmt=.4f") == [f"{(0.05 / 3) ** 0.5:.4f}", "70%", "0.3999", "-0.3999"]
    # a's first three (0.1, 0.2, 0.3) against all four: Eq. 8 at n = 3 is 7.2 / 27 against 0.34375, the widest gap.
    assert values(study, "gap family=a with=synth where=value<=0.3 fmt=.4f", "gap family=a with=synth fmt=.4f") == \
        [f"{0.34375 - 7.2 / 27:.4f}", "0.0000"]


def test_provenance_facts_read_the_provenance_file(study):
    (study / "PROVENANCE.md").write_text(summary(study, None))
    # a's trials run 00:00-00:35, b's 00:01-00:36; trials 0-1 at abc1234, 2-3 at def1234.
    assert values(study, "provenance of=span family=a fmt=hm", "provenance of=span fmt=hm", "provenance of=commits",
                  "provenance of=commits k=2") == ["35 min", "36 min", "`abc1234` and `def1234`", "`def1234`"]
    assert_bad_marker(study, "provenance of=commits k=3", "k=3: ")
    assert_bad_marker(study, "provenance of=span family=c", "family='c': ")
    (study / "PROVENANCE.md").unlink()
    assert_bad_marker(study, "provenance of=span", "does not exist: run `syw provenance")


def test_run_log_segments(study):
    # The first command's `real` line (90 s) wins over its stamps; the second runs stamp to stamp (10 min).
    assert values(study, "provenance of=wall fmt=hms", "provenance of=wall segment=1 fmt=hms", "provenance of=wall segment=2 fmt=h",
                  "provenance of=start segment=2", "provenance of=end segment=2") == ["11 min 30 s", "1 min 30 s", "0.2 h", "01:00", "01:10"]
    assert "| 1 | 2026-01-01T00:00:00+00:00 | 2026-01-01T00:01:31+00:00 | 90.000 |" in (study / "PROVENANCE.md").read_text()


def test_run_log_iso_stamps(study):
    # `date -u '+%F %T'` stamps as the background wrapper writes them; Ray's own log line (no UTC) is not one.
    log(study,
        "=== started 2026-01-01 00:00:00 UTC: syw run study=synth  (commit abc1234)\n"
        "[2026-01-01 05:00:00,123 E 1 1] logging.cc:474: *** SIGTERM received ***\n"
        "=== stopped 2026-01-01 00:20:00 UTC (exit 130)\n=== note: restarted after the session's end\n"
        "=== started 2026-01-01 01:00:00 UTC: syw run study=synth  (commit abc1234)\n=== stopped 2026-01-01 01:05:30 UTC (exit 0)\n")
    assert values(study, "provenance of=wall fmt=hms", "provenance of=wall segment=1 fmt=hm", "provenance of=end segment=2") == \
        ["25 min 30 s", "20 min", "01:05"]


def test_a_running_command_is_left_out_of_the_wall_time_and_a_cut_one_is_an_error(study):
    ended = "=== started 2026-01-01 00:00:00 UTC: syw run study=synth\n=== stopped 2026-01-01 00:20:00 UTC (exit 130)\n"
    running = "=== started 2026-01-01 01:00:00 UTC: syw run study=synth\n[synth/a] trial 0 value=0.1 (60.0 s)\n"
    log(study, ended + running)
    assert values(study, "provenance of=wall fmt=hms") == ["20 min"]
    with pytest.raises(ReadmeError, match="a command without an end stamp"):
        values(study, "provenance of=wall segment=2")
    log(study, running + ended)  # the cut command is no longer the last
    with pytest.raises(ReadmeError, match="a command without an end stamp"):
        values(study, "provenance of=wall")


def test_a_family_with_fewer_trials_than_a_budget_shows_a_dash(study):
    """A family still running (c: 2 trials) beside finished ones (a, b: 4); a budget beyond every family is an error."""
    (study / "c.jsonl").write_text("".join(json.dumps(_record("synth", "c", i, 0.3, 60.0, 10 * i + 2)) + "\n" for i in range(2)))
    text = "\n".join(facts(study, "table results n=1,3,N"))
    assert "| c | 2 | 0.300 (trial 0) | 0.300 | - | 0.300 | 1.0 min |" in text and "| a | 4 | 0.400 (trial 3) | 0.250 | 0.344 | 0.362 |" in text
    with pytest.raises(ReadmeError, match=re.escape("n='5': a budget from 1 to the 4 trials of the largest family, or N")):
        facts(study, "table results n=1,5")


def test_tables(study):
    lines = facts(study, "table results n=1,2,N below=0.2")
    text = "\n".join(lines)
    assert "| family | ok trials | best (trial) | E[max] n=1 | n=2 | n=4 | mean trial time | at 0.200 or below |" in text
    assert "| a | 4 | 0.400 (trial 3) | 0.250 | 0.312 | 0.362 | 2.5 min | 2 |" in text  # 0.3125 is written 0.312 (half to even)
    assert "| b | 4 | 0.350 (trial 0) | 0.350 | 0.350 | 0.350 | 30 s | 0 |" in text
    text = "\n".join(facts(study, 'table trials family=a with=synth columns=trial,value,with.value,minutes:.0f headers="t|v|w|m"'))
    assert "| t | v | w | m |" in text and "| 3 | 0.400 | 0.400 | 4 |" in text


@pytest.mark.parametrize("marker, message", [
    ("nosuch family=a", "unknown fact 'nosuch'"),
    ("best family=a colour=red", "unknown key 'colour'"),
    ("best family=z", "family='z': not a family of synth"),
    ("best", "missing family="),
    ("emax family=a n=5", "n='5': a budget from 1 to the 4 trials of a"),
    ("count family=a where=params.lrr<1", "no trial of a has 'params.lrr'"),
    ("best family=a where=value>9", "no trial of a meets"),
    ("best family=a fmt=.3q", "fmt='.3q' cannot write"),
    ("table nosuch", "unknown table 'nosuch'"),
    ("emax family=a source=paper", "reproduces none of Figures 1-4"),
    ("mean family=a with=paper of=value-with.value", "reproduces none of Figures 1-4"),
    ("provenance of=start segment=3", "lists 2 command(s)"),
    ("provenance of=end", "of=end: needs segment=K"),
    ("emax family=a scale=lin", "scale='lin': log (Eq. 8 of the values' logarithms, written back as exp) or none"),
    ("emax family=a scale=log test=extra.f1", "scale= and test= together"),
])
def test_a_bad_marker_is_one_error_naming_the_readme_and_line(study, marker, message):
    assert_bad_marker(study, marker, message)


def assert_bad_marker(folder: Path, marker: str, message: str) -> None:
    """A README in ``folder`` with ``marker`` on its line 3 fails with one error naming that line and ``message``."""
    readme = folder / "README.md"
    readme.write_text(f"# study\n\nbest <!-- syw: {marker} -->?<!-- /syw -->\n")
    with pytest.raises(ReadmeError, match=f"README.md:3: .*{re.escape(message)}"):
        regenerate(readme, folder.parent)


def test_bad_markers_exit_2_with_one_line(study, capsys):
    for text, where in [("<!-- syw: best family=a -->0.4\n", "README.md:1: marker 'best family=a' has no closing"),
                        ("a\n<!-- /syw -->\n", "README.md:2: <!-- /syw --> without an opening"),
                        ("<!-- syw: best family=a -->x<!-- syw: count -->1<!-- /syw -->\n",
                         "README.md:1: marker 'best family=a' has no <!-- /syw -->"),
                        ("<!-- syw: best family=a -->0.4\n0.4<!-- /syw -->\n", "an inline marker closes on its own line")]:
        (study / "README.md").write_text(text)
        assert run_main(main, ["--study", "synth", "--results", str(study.parent)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and where in err and "Traceback" not in err


def test_a_fact_needing_a_file_outside_the_repository_is_left_as_written(study, monkeypatch):
    monkeypatch.delenv("SYW_DATA_DIR", raising=False)
    (study / "README.md").write_text("<!-- syw: squad_dev file=p.json of=f1 -->0.5<!-- /syw -->\n")
    outcome = regenerate(study / "README.md", study.parent)
    assert outcome.text == (study / "README.md").read_text() and outcome.changes == []
    assert [why for _, _, why in outcome.unchecked] == ["SQuAD v1.1 dev ($SYW_DATA_DIR/squad/dev-v1.1.json)"]


def test_a_records_file_error_names_the_file(study):
    (study / "b.jsonl").write_text('{"trial": -1, "status": "ok", "params": {}, "value": 0.1}\n')
    (study / "README.md").write_text("<!-- syw: count -->8<!-- /syw -->\n")
    with pytest.raises(ReadmeError, match=r"README.md:1: .*b.jsonl:1: trial must be a non-negative integer"):
        regenerate(study / "README.md", study.parent)


def test_the_authors_trials_carry_their_columns_as_params(tmp_path, monkeypatch):
    """``params.<column>`` of the authors' trials is their TSV's column (``where=`` filters on it)."""
    import pandas as pd

    from syw.figures.specs import FIGURES
    from syw.pages import readme_data
    from tests.support.fake_records import use_paper_file, write_study

    path = use_paper_file(monkeypatch, tmp_path / "paper", 3)
    spec = FIGURES[3].paper
    rows = pd.read_csv(path, sep="\t")
    esim = rows[rows[spec.group_column] == next(v for v, name in spec.groups.items() if name == "esim")]
    lr, metric = esim["trainer.optimizer.lr"], esim[spec.metric_column]
    assert 0 < (lr > 0.5).sum() < len(esim) and 0 < ((metric <= 0.5) & (lr < 0.25)).sum()
    study = write_study(tmp_path / "results", "scitail_cpu", {"esim": (0.7, 0.02, 60.0)}, n=3)
    readme_data._paper.cache_clear()
    try:
        assert values(study, "count family=esim where=params.trainer.optimizer.lr>0.5 source=paper",
                      "count family=esim where=value<=0.5,params.trainer.optimizer.lr<0.25 source=paper") == \
            [str((lr > 0.5).sum()), str(((metric <= 0.5) & (lr < 0.25)).sum())]
    finally:
        readme_data._paper.cache_clear()


def test_a_use_tag_gives_its_keys_to_the_markers_of_its_paragraph(tmp_path, study):
    other = tmp_path / "other"
    shutil.copytree(study, other)  # the same trials under another name: its counts are synth's
    (other / "a.jsonl").write_text((study / "a.jsonl").read_text().splitlines()[0] + "\n")  # a: 1 trial there
    readme = study / "README.md"
    readme.write_text("x <!-- syw: count -->?<!-- /syw --> <!-- syw: use study=other family=a -->"
                      "<!-- syw: count -->?<!-- /syw --> <!-- syw: count family=b -->?<!-- /syw --> "
                      "<!-- syw: provenance of=wall fmt=hms -->?<!-- /syw -->\n\n<!-- syw: count -->?<!-- /syw -->\n")
    found = re.findall(r"<!-- syw: (?!use)[^>]*-->([^<]*)<!-- /syw -->", regenerate(readme, tmp_path).text)
    # before the tag: synth's 8 trials; after it: other's a (1) and b (4), other's run.log; past the blank line: synth again
    assert found == ["8", "1", "4", "11 min 30 s", "8"]


def test_a_bad_use_tag_is_one_error_naming_its_line(study):
    for spec, message in (("use", "`use` takes keys only"), ("use study=x best", "`use` takes keys only"),
                          ("use colour=red", "`use` takes keys only, of these:")):
        readme = study / "README.md"
        readme.write_text(f"# study\n\n<!-- syw: {spec} --> <!-- syw: count -->?<!-- /syw -->\n")
        with pytest.raises(ReadmeError, match=f"README.md:3: .*{re.escape(message)}"):
            regenerate(readme, study.parent)
