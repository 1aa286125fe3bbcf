"""Issue 72: ``make fig1`` parses its study config once and reads each records file (and its manifest) once."""
import builtins
import collections
import io
import os

from syw.core import snapshot
from syw.core.paths import REPO
from syw.experiments import space, study
from syw.figures.__main__ import main


def test_fig1_reads_its_config_and_each_records_file_once(tmp_path, monkeypatch):
    space._parsed_config.cache_clear()
    study._loaded.cache_clear()
    snapshot._SNAPSHOTS.clear()
    counts = collections.Counter()
    watched = {REPO / "syw" / "conf" / "study" / "sst5.yaml"} | {
        p for p in (REPO / "results" / "sst5").iterdir() if p.suffix in (".jsonl", ".sha256")}
    real_open, real_os_open = builtins.open, os.open

    def counted(opener):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and os.path.abspath(file) in {str(p) for p in watched}:
                counts[os.path.basename(file)] += 1
            return opener(file, *args, **kwargs)
        return open_

    monkeypatch.setattr(builtins, "open", counted(real_open))
    monkeypatch.setattr(io, "open", counted(real_open))
    monkeypatch.setattr(os, "open", counted(real_os_open))
    assert main(["fig", "1", "--out", str(tmp_path)]) == 0
    assert counts == {"sst5.yaml": 1, "lr.jsonl": 1, "cnn.jsonl": 1, "lr.jsonl.sha256": 1, "cnn.jsonl.sha256": 1}


def test_a_study_s_rows_are_read_and_floored_once_while_its_records_stay_the_same(tmp_path, monkeypatch):
    from syw.core import records
    from syw.figures import sources
    from tests.support.fake_records import write_study

    write_study(tmp_path, "sst5", {"lr": (0.34, 0.03, 1.5), "cnn": (0.1, 0.01, 40)}, n=6)  # the CNN's below the floor, 0.2
    parses = collections.Counter()
    real = records.load_study
    monkeypatch.setattr(sources, "load_records", lambda folder: parses.update([folder]) or real(folder))
    first, failed = sources.study_rows("sst5", tmp_path)
    assert set(first["cnn"]["value"]) == {0.2} and (first["cnn"]["raw_value"] < 0.2).all() and failed == {}
    first["cnn"].loc[:, "value"] = -1.0  # a caller's change stays in its own copy
    again, _ = sources.study_rows("sst5", tmp_path)
    assert set(again["cnn"]["value"]) == {0.2} and again["lr"].equals(first["lr"]) and sum(parses.values()) == 1
    write_study(tmp_path, "sst5", {"lr": (0.34, 0.03, 1.5), "cnn": (0.1, 0.01, 40)}, n=7)  # the records grow: read anew
    assert len(sources.study_rows("sst5", tmp_path)[0]["lr"]) == 7 and sum(parses.values()) == 2
