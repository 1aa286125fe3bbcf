"""A record names the version of each file its trial read: a file that changes or goes while a study
runs stops it (naming the file) before any record names a version its trial did not read."""
import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from syw.core.errors import DataError, DataMissingError
from syw.data.inputs import cache_noting_inputs, note_input, recording, sha256_of
from syw.experiments.same_inputs import RunInputs
from tests.experiments.test_provenance import trials_in_process
from tests.support.fixtures_sst import write_sst_fixture

SETTINGS: dict = {}  # the training function below reads no settings


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def loader(tmp_path: Path):
    """A per-process cached loader of ``tmp_path/a.txt`` and the list of the calls that read the file."""
    opened = []

    @cache_noting_inputs(maxsize=2)
    def load() -> str:
        note_input("a.txt", tmp_path / "a.txt")
        opened.append(1)
        return (tmp_path / "a.txt").read_text()

    return load, opened


def test_a_cache_hit_on_a_changed_file_raises_and_the_next_call_reads_it_again(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    load, opened = loader(tmp_path)
    assert load() == "one" and load() == "one" and len(opened) == 1
    (tmp_path / "a.txt").write_text("two!")
    with pytest.raises(DataError, match=f"^{tmp_path}/a.txt: changed since this study read it \\(sha256 "
                                        f"{hashlib.sha256(b'one').hexdigest()} then, {hashlib.sha256(b'two!').hexdigest()} now\\)"):
        load()
    with recording() as seen:
        assert load() == "two!" and len(opened) == 2
    assert sha256_of(seen) == {"a.txt": hashlib.sha256(b"two!").hexdigest()}


def test_a_cache_hit_on_a_file_gone_raises_naming_it(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    load, _ = loader(tmp_path)
    load()
    (tmp_path / "a.txt").unlink()
    with pytest.raises(DataMissingError, match=f"^{tmp_path}/a.txt: gone since this study read it \\(as a.txt\\)"):
        load()


def test_the_same_bytes_under_a_new_inode_are_the_same_version(tmp_path):
    """A cache file another worker published again (atomic replace, same content) is what was read."""
    (tmp_path / "a.txt").write_text("one")
    with recording() as seen:
        note_input("a.txt", tmp_path / "a.txt")
    (tmp_path / "b.txt").write_text("one")
    (tmp_path / "b.txt").replace(tmp_path / "a.txt")
    assert sha256_of(seen) == {"a.txt": hashlib.sha256(b"one").hexdigest()}


def rewriting_train(params, ctx):
    """Reads its data file, then the file changes before the trial ends (as another writer would)."""
    from syw.core.context import TrialOutcome

    path = Path(ctx.data_dir) / "d.txt"
    note_input("d.txt", path)
    path.read_text()
    path.write_text("changed while the trial ran\n")
    return TrialOutcome(metric=0.5)


@pytest.mark.slow
def test_a_file_changed_during_a_trial_stops_the_study_unrecorded(tmp_path, monkeypatch):
    from syw.experiments.space import load_family
    from syw.experiments.trial import DATA_PROBLEM

    (tmp_path / "d.txt").write_text("as read\n")
    (tmp_path / "rewriting.yaml").write_text(f"inherits: toy\ntrain: {{_target_: {__name__}.rewriting_train}}\n")
    family = load_family("rewriting", name="toy", dirs=[tmp_path])
    paths = {"data_dir": str(tmp_path), "cache_dir": str(tmp_path / "cache")}
    [record] = trials_in_process(monkeypatch, family, "toy", {"name": "toy"}, paths, [0])
    assert record["status"] == DATA_PROBLEM and record["inputs_sha256"] == {}
    assert record["error"].startswith(f"{tmp_path}/d.txt: changed since this study read it")


@pytest.mark.slow
def test_lr_trials_of_one_worker_stop_once_sst_train_changes(tmp_path, monkeypatch):
    """The issue's probe: trees appended to sst/train.txt after an LR trial; the next trial of the same
    worker (every loader's cache would hit) stops the study instead of naming the new file's checksum."""
    from syw.experiments.space import load_family, study_config
    from syw.experiments.trial import DATA_PROBLEM

    data = write_sst_fixture(tmp_path / "data")
    paths = {"data_dir": str(data), "cache_dir": str(tmp_path / "cache")}
    family, dataset = load_family("sst5_lr", name="lr"), study_config("sst5")["dataset"]
    train = data / "sst" / "train.txt"
    before = sha256(train)
    [first] = trials_in_process(monkeypatch, family, "sst5", dataset, paths, [0])
    assert first["status"] == "ok" and first["inputs_sha256"]["sst/train.txt"] == before
    with train.open("a") as handle:
        handle.write(train.read_text().splitlines()[0] + "\n")
    [second] = trials_in_process(monkeypatch, family, "sst5", dataset, paths, [1])
    assert second["status"] == DATA_PROBLEM and second["error"].startswith(f"{train}: changed since this study read it")
    [third] = trials_in_process(monkeypatch, family, "sst5", dataset, paths, [2])  # a later call reads the file anew
    assert third["status"] == "ok" and third["inputs_sha256"]["sst/train.txt"] == sha256(train) != before


def test_the_driver_refuses_a_record_of_another_version_than_the_runs_earlier_trials():
    inputs = RunInputs()
    assert inputs.changed({"trial": 0, "family": "lr", "inputs_sha256": {"sst/train.txt": "aaa", "sst/dev.txt": "ddd"}}) is None
    assert inputs.changed({"trial": 1, "family": "cnn", "inputs_sha256": {"sst/dev.txt": "ddd"}}) is None
    assert inputs.changed({"trial": 2, "family": "cnn", "inputs_sha256": {"sst/train.txt": "bbb"}}) == (
        "sst/train.txt: changed during the study (sha256 aaa when trial 0 of lr read it, bbb when trial 2 of cnn did): a "
        "study reads one version of its data; put the file back, or run the study in a new paths.results_dir")
    assert inputs.first["sst/train.txt"] == ("aaa", "trial 0 of lr")  # the refused version is not taken up
    for trial, weights in ((3, "w1"), (4, "w2")):  # what a training function names itself may differ by assignment
        assert inputs.changed({"trial": trial, "family": "bcn", "inputs_sha256": {"elmo_weights": weights}}) is None


def test_progress_writes_no_record_of_a_changed_file_and_stops(monkeypatch, capsys):
    import syw.experiments.progress as progress_module
    from syw.experiments.progress import Progress

    monkeypatch.setattr(progress_module, "READ_THIS_RUN", RunInputs())
    written = []
    progress = Progress(SimpleNamespace(append=written.append), SimpleNamespace(name="lr"), "accuracy", True, 3, 3, 1,
                        {"study": "sst5", "family": "lr"})
    ok = {"trial": 0, "params": {}, "status": "ok", "value": 0.4, "duration_seconds": 1.0, "inputs_sha256": {"s/t": "a"}}
    progress.finish(ok)
    progress.finish({**ok, "trial": 1, "inputs_sha256": {"s/t": "b"}})
    assert [r["trial"] for r in written] == [0]
    assert progress.data_problem.startswith("s/t: changed during the study (sha256 a when trial 0 of lr read it, b when")
    assert "trial   1 found a data file missing, malformed or changed; stopping the study (no record written)" in capsys.readouterr().out


def test_a_resumed_study_refuses_a_trial_that_read_a_file_changed_since_its_records(monkeypatch, capsys):
    import syw.experiments.progress as progress_module
    from syw.experiments.progress import Progress

    monkeypatch.setattr(progress_module, "READ_THIS_RUN", RunInputs())
    earlier = [{"trial": 0, "family": "lr", "status": "ok", "value": 0.4, "inputs_sha256": {"s/t": "a"}}]
    written = []
    progress = Progress(SimpleNamespace(append=written.append), SimpleNamespace(name="lr"), "accuracy", True, 3, 2, 1,
                        {"study": "sst5", "family": "lr"}, earlier=earlier)
    progress.finish({"trial": 1, "params": {}, "status": "ok", "value": 0.5, "duration_seconds": 1.0,
                     "inputs_sha256": {"s/t": "b"}})
    assert written == [] and progress.data_problem.startswith(
        "s/t: changed during the study (sha256 a when trial 0 of lr read it, b when trial 1 of lr did)")


def test_records_that_read_two_versions_of_a_file_are_refused(tmp_path):
    from syw.core.records import RecordError
    from syw.experiments.same_inputs import check_one_version

    path = tmp_path / "lr.jsonl"
    rows = [{"trial": t, "family": "lr", "params": {}, "status": "ok", "value": 0.4, "inputs_sha256": {"sst/train.txt": d}}
            for t, d in ((0, "a" * 64), (1, "a" * 64), (2, "b" * 64))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    check_one_version(path)  # one version: nothing to say
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RecordError) as err:
        check_one_version(path)
    assert str(err.value) == (f"{path}: trial 0 of lr read sst/train.txt with sha256 aaaaaaaaaaaa..., trial 2 of lr with "
                              "bbbbbbbbbbbb...: the records mix two versions of the data; move them away, or put one "
                              "version back and rerun the trials of the other (syw run ... only=[...])")
