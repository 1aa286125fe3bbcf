"""Issue 64: a Hydra multirun folder written by Hydra itself, the score from the file each job wrote."""
from __future__ import annotations

import json

import pytest

from tests.support.readers import GROUPS, XS, check_curve, one_error_line, run_script

pytest.importorskip("hydra")
pytestmark = pytest.mark.slow

APP = """
import json, sys
sys.path.insert(0, {repo!r})
import hydra
from tests.support.readers import STEPS, score

@hydra.main(version_base=None, config_path=".", config_name="config")
def main(cfg):
    series = [score(cfg.x, cfg.model, step) for step in range(STEPS)]
    if cfg.x > 0.95:
        raise RuntimeError("diverged")  # a job that fails before writing its score
    with open("score.json", "w") as out:
        json.dump({{"val_acc": max(series), "last": series[-1], "meta": {{"seconds": 2.0}}}}, out)

if __name__ == "__main__":
    main()
"""


@pytest.fixture(scope="module")
def multirun(tmp_path_factory):
    from syw.core.paths import REPO

    root = tmp_path_factory.mktemp("hydra")
    (root / "config.yaml").write_text("x: 0.5\nmodel: a\n")
    (root / "app.py").write_text(APP.format(repo=str(REPO)))
    grid = ",".join(map(str, XS))
    run_script(f"import subprocess, sys; subprocess.run([sys.executable, 'app.py', '--multirun', 'model={','.join(GROUPS)}', "
               f"'x={grid},0.99', 'hydra.sweep.dir=multirun/sweep', 'hydra.job.chdir=True'])", root)
    return root / "multirun" / "sweep"


def test_eq8_of_a_hydra_multirun_with_a_score_file(multirun, tmp_path):
    from tests.support.readers import expected

    best = expected("best")
    check_curve(f"{multirun}#score.json", tmp_path, "overrides.model", "--metric", "val_acc",
                groups={"best": best, "last": best}, pick_note=False)
    lasts = expected("last")
    check_curve(f"{multirun}#score.json", tmp_path, "overrides.model", "--metric", "last",
                groups={"best": lasts, "last": lasts}, pick_note=False)


def test_failed_jobs_are_counted_and_the_time_is_read(multirun):
    from syw.curve.prepare import Reading, prepare

    prepared = prepare(f"{multirun}#score.json", Reading(metric="val_acc", group="overrides.model"))
    assert sorted(g.scores.size for g in prepared.groups) == [5, 5]
    assert any("2 failed" in n for n in prepared.notes), prepared.notes
    assert prepared.columns["duration"] == "`meta.seconds` (picked)"


def test_hydra_bad_input_is_one_line(multirun, tmp_path, capsys):
    import shutil

    one_error_line(["curve", str(multirun)], capsys, r"a Hydra multirun folder keeps no score: name the file each job "
                   r"wrote it to, as .*#FILE \(files in job 0: score\.json\)$")
    copy = tmp_path / "sweep"
    shutil.copytree(multirun, copy)
    (copy / "0" / "score.json").write_text('{"val_acc": 0.')  # truncated
    one_error_line(["curve", f"{copy}#score.json"], capsys, r"0/score\.json: not JSON")
    (copy / "0" / "score.json").write_text(json.dumps(["val_acc", 0.5]))  # wrong type
    one_error_line(["curve", f"{copy}#score.json"], capsys, r"0/score\.json: a score file holds a mapping of numbers or one number, not list$")
    (copy / "0" / ".hydra" / "overrides.yaml").write_text("model: a\n")
    one_error_line(["curve", f"{copy}#score.json"], capsys, r"0/\.hydra/overrides\.yaml: not a list of Hydra overrides")
    shutil.copy(multirun / "0" / ".hydra" / "overrides.yaml", copy / "0" / ".hydra" / "overrides.yaml")
    one_error_line(["curve", f"{copy}#nope.json"], capsys, r"sweep: no job wrote nope\.json \(12 job folder\(s\)\)$")
