"""One version of each input file per study, checked on the driver as records arrive.

A worker checks that the files its trials read did not change while it used them
(:mod:`syw.data.inputs`), but a fresh worker reads a file as it is now: were the file changed
since earlier trials read it, the study would mix two data sets. So the driver compares each
finished trial's ``inputs_sha256`` with the versions the study's earlier trials read: the entries
named by a path (readers name a file by its path under the data folder, or in full), not the ones a
training function names itself (``elmo_weights``: the biLM an assignment chose, which may differ
from trial to trial). A resumed run starts from the versions its records read (:meth:`RunInputs.resume`),
so a trial that read a file changed since stops the study unrecorded; records that already disagree
are refused before Ray starts (:func:`check_one_version`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from syw.core.records import RecordError, iter_records


class RunInputs:
    """The first version (sha256) of each file name the trials of one study read, and which trial read it."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[str, str]] = {}

    def conflict(self, record: dict[str, Any]) -> tuple[str, str, str, str, str] | None:
        """The first file ``record``'s trial read in another version than an earlier trial did: (file, earlier
        sha256, earlier trial, this sha256, this trial); None when there is none, and its versions are kept."""
        trial = f"trial {record.get('trial')} of {record.get('family')}"
        digests = {name: digest for name, digest in (record.get("inputs_sha256") or {}).items() if "/" in name}
        for name, digest in digests.items():
            first, by = self.first.get(name, (digest, trial))
            if digest != first:
                return name, first, by, digest, trial
        for name, digest in digests.items():
            self.first.setdefault(name, (digest, trial))
        return None

    def changed(self, record: dict[str, Any]) -> str | None:
        """Why ``record``'s trial read another version of a file than an earlier trial (None: it did not)."""
        found = self.conflict(record)
        if found is None:
            return None
        name, first, by, digest, trial = found
        return (f"{name}: changed during the study (sha256 {first} when {by} read it, {digest} when {trial} "
                "did): a study reads one version of its data; put the file back, or run the study in a new "
                "paths.results_dir")

    def resume(self, earlier: list[dict[str, Any]]) -> None:
        """Take the versions the ``earlier`` records' trials read as the study's own (the first of each file)."""
        for record in earlier:
            self.conflict(record)


def check_one_version(path: Path) -> None:
    """A records file whose trials read two versions of one input file holds no study of one data set:
    :class:`RecordError` naming the records, the input and both trials."""
    seen = RunInputs()
    for record in iter_records(path):
        found = seen.conflict(record)
        if found is not None:
            name, first, by, digest, trial = found
            raise RecordError(f"{path}: {by} read {name} with sha256 {first[:12]}..., {trial} with {digest[:12]}...: "
                              "the records mix two versions of the data; move them away, or put one version back "
                              "and rerun the trials of the other (syw run ... only=[...])")


READ_THIS_RUN = RunInputs()  # the driver's: a process runs one study
