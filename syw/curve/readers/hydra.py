"""A Hydra multirun folder (``multirun/<date>/<time>/``): each numbered job folder one trial, its overrides
(``.hydra/overrides.yaml``, ``lr=0.1``) as ``overrides.*`` columns, its score from the file each job wrote
that the user names, ``FOLDER#FILE`` (a JSON or YAML mapping, whose numbers become columns, or a file
holding one number, the column ``value``). Hydra keeps no score of its own: without ``#FILE`` the error
lists the files the first job holds. Jobs are in job-number order; a job without the file failed.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from syw.core.errors import DataError
from syw.core.records import unreadable
from syw.curve.trials import Trials, read_yaml


def jobs(path: Path) -> list[Path]:
    """The job folders (``<n>/.hydra/overrides.yaml``) of a multirun folder, by job number."""
    found = [p.parent.parent for p in path.glob("*/.hydra/overrides.yaml") if p.parent.parent.name.isdigit()]
    return sorted(found, key=lambda p: int(p.name))


def _overrides(path: Path) -> dict:
    listed = read_yaml(path) or []
    if not isinstance(listed, list) or not all(isinstance(o, str) and "=" in o for o in listed):
        raise DataError(f"{path}: not a list of Hydra overrides (key=value)")
    out = {}
    for item in listed:
        key, value = item.split("=", 1)
        parsed = _yaml_text(value)
        out[f"overrides.{key.lstrip('+~')}"] = parsed if isinstance(parsed, (int, float, str, bool)) else value
    return out


def _yaml_text(text: str):
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _score(path: Path) -> dict:
    """A job's score file: a mapping (JSON or YAML, nested keys as ``a.b``) or one number (``value``)."""
    text = path.read_text(errors="replace")
    try:
        loaded = json.loads(text) if path.suffix.lower() == ".json" else read_yaml(path)
    except (ValueError, RecursionError) as err:
        raise DataError(f"{path}: not JSON ({unreadable(err) or err})") from None
    if isinstance(loaded, (int, float)) and not isinstance(loaded, bool):
        return {"value": float(loaded)}
    if not isinstance(loaded, dict):
        raise DataError(f"{path}: a score file holds a mapping of numbers or one number, not {type(loaded).__name__}")
    return pd.json_normalize(loaded).iloc[0].to_dict()


def read_hydra(path: Path, score_file: str | None) -> Trials:
    """Every job of a Hydra multirun folder with its score from ``score_file`` (module doc)."""
    found = jobs(path)
    if not found:
        raise FileNotFoundError(f"{path}: no job folder with .hydra/overrides.yaml (a Hydra multirun folder)")
    if not score_file:
        held = sorted(p.relative_to(found[0]).as_posix() for p in found[0].rglob("*") if p.is_file()
                      and ".hydra" not in p.parts and p.suffix != ".log")
        raise DataError(f"{path}: a Hydra multirun folder keeps no score: name the file each job wrote it to, as "
                        f"{path}#FILE (files in job {found[0].name}: {', '.join(held) or 'none'})")
    rows, labels = [], []
    for job in found:
        row = {**_overrides(job / ".hydra" / "overrides.yaml"), "trial_index": int(job.name)}
        score = job / score_file
        if score.is_file():
            row.update(_score(score), status="ok")
        else:
            row["status"] = "failed"  # a job that raised before writing its score
        rows.append(row)
        labels.append(f"{job.name}/{score_file}")
    frame = pd.DataFrame(rows, index=labels)
    if frame["status"].ne("ok").all():
        raise DataError(f"{path}: no job wrote {score_file} ({len(found)} job folder(s))")
    return Trials(frame, str(path), path.name, notes=[f"each job's score read from its {score_file}"])
