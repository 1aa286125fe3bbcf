"""The sst5 study through the runner: on generated SST files, and (marked) 2 LR trials on the real SST."""
import pytest

from tests.support.fixtures_sst import real_data_dir, requires_real_sst, write_sst_fixture
from tests.support.runner_util import records, run

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_two_trial_sst5_study_on_generated_data(tmp_path):
    data = write_sst_fixture(tmp_path / "data")
    out = tmp_path / "results"
    done = run("study=sst5", "trials=2", f"paths.data_dir={data}", f"paths.results_dir={out}",
               f"paths.cache_dir={tmp_path / 'cache'}", timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    for family in ("lr", "cnn"):
        rows = records(out / "sst5" / f"{family}.jsonl")
        assert sorted(r["trial"] for r in rows) == [0, 1]
        assert all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
        assert max(r["value"] for r in rows) > 0.5  # 5 classes: chance is 0.2; the fixture is learnable
    cnn = records(out / "sst5" / "cnn.jsonl")
    assert all(1 <= r["best_epoch"] <= r["epochs_run"] <= 50 and len(r["epoch_seconds"]) == r["epochs_run"] for r in cnn)


@pytest.mark.realdata
@requires_real_sst
def test_two_lr_trials_on_real_sst(tmp_path):
    data = real_data_dir()
    out = tmp_path / "results"
    done = run("study=sst5", "family=lr", "trials=2", f"paths.data_dir={data}", f"paths.results_dir={out}", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = records(out / "sst5" / "lr.jsonl")
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    assert all(0.2 < r["value"] < 0.45 for r in rows), [r["value"] for r in rows]
    assert not (out / "sst5" / "cnn.jsonl").exists()
