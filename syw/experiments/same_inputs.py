"""One version of each input file per study run, checked on the driver as records arrive.

A worker checks that the files its trials read did not change while it used them
(:mod:`syw.data.inputs`), but a fresh worker reads a file as it is now: were the file changed
since earlier trials read it, the run would mix two data sets under one study. So the driver
compares each finished trial's ``inputs_sha256`` with the versions the run's earlier trials read: the
entries named by a path (readers name a file by its path under the data folder, or in full), not the
ones a training function names itself (``elmo_weights``: the biLM an assignment chose, which may
differ from trial to trial).
"""
from __future__ import annotations

from typing import Any


class RunInputs:
    """The first version (sha256) of each file name the trials of one run read, and which trial read it."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[str, str]] = {}

    def changed(self, record: dict[str, Any]) -> str | None:
        """Why ``record``'s trial read another version of a file than an earlier trial of the run (None: it
        did not, and its versions are kept for the trials after it)."""
        trial = f"trial {record.get('trial')} of {record.get('family')}"
        digests = {name: digest for name, digest in (record.get("inputs_sha256") or {}).items() if "/" in name}
        for name, digest in digests.items():
            first, by = self.first.get(name, (digest, trial))
            if digest != first:
                return (f"{name}: changed during the study (sha256 {first} when {by} read it, {digest} when {trial} "
                        "did): a study reads one version of its data; put the file back, or run the study in a new "
                        "paths.results_dir")
        for name, digest in digests.items():
            self.first.setdefault(name, (digest, trial))
        return None


READ_THIS_RUN = RunInputs()  # the driver's: a process runs one study
