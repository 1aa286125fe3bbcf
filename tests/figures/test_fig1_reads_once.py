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
