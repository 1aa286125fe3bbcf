"""Issue 64: Lightning CSVLogger folders written by Lightning's own logger."""
from __future__ import annotations

import pytest

from tests.support.readers import GROUPS, STEPS, XS, check_curve, one_error_line, score

pytest.importorskip("lightning")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from lightning.pytorch.loggers import CSVLogger

    root = tmp_path_factory.mktemp("lightning")
    for group in GROUPS:
        for x in XS:
            logger = CSVLogger(str(root), name="lightning_logs")
            logger.log_hyperparams({"x": x, "model": group, "optimizer": {"name": "adam"}})
            for step in range(STEPS):
                logger.log_metrics({"val_acc": score(x, group, step), "epoch": step}, step=step)
                logger.log_metrics({"train_loss": 1 - x}, step=step)  # a row of its own, merged by step
            logger.save()
            logger.finalize("success")
    return root / "lightning_logs"


def test_eq8_of_csvlogger_versions_for_both_picks(logs, tmp_path):
    check_curve(str(logs), tmp_path, "hparams.model", "--metric", "val_acc")


def test_versions_are_trials_in_version_order(logs):
    from syw.curve.prepare import Reading, prepare

    prepared = prepare(str(logs), Reading(metric="val_acc", group="none"))
    (group,) = prepared.groups
    assert group.order.tolist() == list(range(1, 11))


def test_lightning_bad_input_is_one_line(logs, tmp_path, capsys):
    import shutil

    copy = tmp_path / "lightning_logs"
    shutil.copytree(logs, copy)
    metrics = copy / "version_3" / "metrics.csv"
    metrics.write_text(metrics.read_text() + "3,3,0.1,high\n")  # wrong type
    one_error_line(["curve", str(copy), "--metric", "val_acc"], capsys,
                   r"version_3/metrics\.csv, step 4: 'val_acc' holds 'high', not a number$")
    metrics.write_text(metrics.read_text().splitlines()[0] + "\n0.5,3\n1,2,3,4,5,6\n")  # truncated, then ragged
    one_error_line(["curve", str(copy), "--metric", "val_acc"], capsys, r"version_3/metrics\.csv: Error tokenizing data")
    metrics.unlink()
    (copy / "version_3" / "hparams.yaml").write_text("x: [1\n")
    one_error_line(["curve", str(copy), "--metric", "val_acc"], capsys, r"version_3/hparams\.yaml: not YAML")
