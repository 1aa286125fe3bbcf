"""Issue 64: TensorBoard HParams logs written by torch's SummaryWriter (the tensorboard package's writer)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.readers import GROUPS, STEPS, XS, check_curve, expected, one_error_line, run_script

pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow

SWEEP = """
import sys
sys.path.insert(0, {repo!r})
from torch.utils.tensorboard import SummaryWriter
from tests.support.readers import GROUPS, STEPS, XS, score
for i, (group, x) in enumerate((g, x) for g in GROUPS for x in XS):
    writer = SummaryWriter(f"runs/trial_{{i}}")
    for step in range(STEPS):
        writer.add_scalar("val_acc", score(x, group, step), step)
    writer.add_hparams({{"x": x, "model": group}}, {{"hparam/best_val_acc": max(score(x, group, s) for s in range(STEPS))}},
                       run_name=".")
    writer.close()
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from syw.core.paths import REPO

    root = tmp_path_factory.mktemp("tensorboard")
    run_script(SWEEP.format(repo=str(REPO)), root)
    return root / "runs"


def test_eq8_of_hparams_runs_for_both_picks(runs, tmp_path):
    """TensorBoard stores a scalar as a 32-bit float: the independent Eq. 8 is of the scores so rounded."""
    rounded = {pick: {g: [float(np.float32(v)) for v in values] for g, values in expected(pick).items()}
               for pick in ("best", "last")}
    check_curve(str(runs), tmp_path, "hparams.model", "--metric", "val_acc", groups=rounded)


def test_runs_are_trials_in_the_order_they_were_written(runs):
    from syw.curve.readers.tensorboard import read_tensorboard

    frame = read_tensorboard(runs).frame
    firsts = frame.groupby("trial_index", sort=True).first()
    assert firsts["hparams.x"].tolist() == list(XS) * len(GROUPS)
    assert len(frame) == len(XS) * len(GROUPS) * STEPS  # add_hparams' metric is merged into step 0


def test_tensorboard_bad_input_is_one_line(runs, tmp_path, capsys):
    import shutil

    copy = tmp_path / "runs"
    shutil.copytree(runs, copy)
    event = sorted((copy / "trial_0").glob("events.out.tfevents.*"))[0]
    event.write_bytes(event.read_bytes()[:-7])  # truncated
    from syw.curve.readers.tensorboard import read_tensorboard

    read_tensorboard(copy)  # a torn last event is skipped, as TensorBoard itself does
    bare = tmp_path / "bare" / "r"
    bare.mkdir(parents=True)
    shutil.copy(event, bare / event.name)
    for other in (copy / "trial_0").glob("events.out.tfevents.*"):
        if other != event:
            other.unlink()
    one_error_line(["curve", str(tmp_path / "bare")], capsys, r"bare: TensorBoard event files without HParams")


def test_event_files_without_tensorboard_say_how_to_read_them(runs, capsys, monkeypatch):
    import sys

    for name in ("tensorboard", "tensorboard.backend.event_processing.event_file_loader"):
        monkeypatch.setitem(sys.modules, name, None)
    one_error_line(["curve", str(runs)], capsys, r"runs: TensorBoard event files, read with tensorboard: pip install "
                   r"tensorboard \(or export the HParams table as CSV from TensorBoard\)$")
