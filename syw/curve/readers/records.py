"""This suite's study records: ``results/<study>/<family>.jsonl``, as ``syw run`` writes them."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from syw.core.errors import DataError
from syw.core.manifest import require_verified
from syw.core.records import study_records
from syw.curve.trials import Trials


def is_records_folder(path: Path) -> bool:
    """A folder holding ``<family>.jsonl`` records files."""
    return any(path.glob("*.jsonl"))


def read_study(folder: Path) -> Trials:
    """A study's records folder, ``results/<study>/`` (``syw run``'s ``<family>.jsonl``, one record per trial,
    the latest of each index): one row per trial with its family's label from the family file the records
    name, its validation score, training seconds and status; the direction is the records' own. The tuner
    runs and seed reruns in subfolders are not random search and are left out (``syw fig 5`` draws them). Records
    that do not match their manifest are refused (:func:`syw.core.manifest.require_verified`)."""
    require_verified(folder, recursive=False)
    rows, labels, directions = [], [], set()
    for stem, records in study_records(folder).items():
        labels_of = {}  # one family file read per file, not per record
        for record in records:
            directions.add(record.get("direction", "max"))
            key = (record.get("family_file"), record["family"])
            if key not in labels_of:
                labels_of[key] = _label(folder, record)
            rows.append({"family": labels_of[key], "value": record.get("value"), "status": record.get("status"),
                         "duration_seconds": record.get("duration_seconds"), "trial": record["trial"]})
            labels.append(f"{stem}.jsonl, trial {record['trial']}")
    if not rows:
        raise FileNotFoundError(f"{folder}: no trial records (<family>.jsonl, as syw run writes them)")
    if len(directions) > 1:
        raise DataError(f"{folder}: its records disagree on the direction ({', '.join(sorted(directions))})")
    return Trials(pd.DataFrame(rows, index=labels), str(folder), folder.name, directions={"value": directions.pop()},
                  preferred="value")


def _label(folder: Path, record: dict) -> str:
    """The family's label (its family file's ``label``, as the paper's figures name it), else its short name."""
    import yaml

    family_file = record.get("family_file")
    for root in (folder.parent.parent, Path.cwd()):  # results/<study> sits in the repository root
        path = root / family_file if family_file else None
        if path is not None and not path.is_file():  # records older than the case-study folders name it flat
            path = next(iter(sorted(path.parent.glob(f"*/{path.name}"))), path)
        if path is not None and path.is_file():
            try:
                label = (yaml.safe_load(path.read_text()) or {}).get("label")
            except yaml.YAMLError:
                label = None
            return str(label or record["family"])
    return str(record["family"])
