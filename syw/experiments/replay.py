"""Replayed assignments: a family that reruns the hyperparameters of a published trial file.

A family file's ``replay`` block names a tab-separated trial file (e.g. the authors'
``sst5_cnn_lr_search.tsv``), the rows to take and, for every searched hyperparameter,
the column that holds its value::

    replay:
      file: results/paper/sst5_cnn_lr_search.tsv     # relative to the repository, or absolute
      url: https://...                                # fetched there when the file is missing
      sha256: 3cbe...                                 # checked before any row is read
      rows: {model.encoder.architecture.type: CNN}   # column == value, all must hold
      columns:
        lr: trainer.optimizer.lr
        max_filter_size: {column: model.encoder.architecture.ngram_filter_sizes, reduce: max}
        weight: {column: weight, values: {tf-idf: tfidf}}

Trial ``i`` gets the ``i``-th selected row, in file order. A cell's text is looked up in
``values`` (``""`` is an empty cell), or else read as a number or as YAML (so ``[1, 3]``
is a list and an empty cell is null); the value is then reduced
with ``reduce`` (``max`` or ``min`` of a list), converted to the search entry's type and
checked against its distribution: a replayed assignment always lies in the family's space.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPLAY_KEYS = {"file", "url", "sha256", "rows", "columns"}
COLUMN_KEYS = {"column", "values", "reduce"}
REDUCERS = {"max": max, "min": min}


class ReplayError(ValueError):
    """A replay block or trial file that cannot give a valid assignment (the message says which row and key)."""


@dataclass(frozen=True)
class Column:
    """Where one hyperparameter comes from in the trial file."""

    column: str
    values: tuple[tuple[str, Any], ...] = ()  # cell text -> value, instead of reading the text
    reduce: str | None = None


@dataclass(frozen=True)
class Replay:
    """Validated ``replay`` block of a family file; the file is read (and checked) when an assignment is asked for."""

    file: Path
    url: str | None
    sha256: str | None
    rows: tuple[tuple[str, str], ...]
    columns: tuple[tuple[str, Column], ...]

    def assignment(self, index: int, search: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """Row ``index`` of the selection as an assignment of every key of ``search``."""
        table = _selected_rows(self)
        if not 0 <= index < len(table):
            raise ReplayError(f"{self.file}: trial {index} asked for, but only {len(table)} rows match {dict(self.rows)}")
        row = table[index]
        out = {}
        for key, col in self.columns:
            try:
                out[key] = within(convert(row.get(col.column), col), search[key])
            except ReplayError as err:
                raise ReplayError(f"{self.file}: row {index} of {dict(self.rows)}, column {col.column} ({key}): {err}") from None
        return out


def read_cell(raw: str | None) -> Any:
    """A cell's text as a value: a number, else YAML (``[1, 3]`` is a list); empty is None."""
    if raw is None or raw == "":
        return None
    try:
        return float(raw)  # YAML 1.1 reads "1e-05" as text
    except ValueError:
        return yaml.safe_load(raw)


def convert(text: str | None, col: Column) -> Any:
    """A cell's value: its text mapped through ``values`` or else read by ``read_cell``, then ``reduce``d."""
    mapped = dict(col.values)
    value = mapped[text or ""] if (text or "") in mapped else read_cell(text)
    if col.reduce is not None:
        if not isinstance(value, list) or not value:
            raise ReplayError(f"column {col.column}: reduce {col.reduce} needs a non-empty list, got {value!r}")
        value = REDUCERS[col.reduce](value)
    return value


def within(value: Any, spec: Mapping[str, Any]) -> Any:
    """``value`` as the type of the search entry ``spec``, or an error if it lies outside the distribution."""
    kind = spec["distribution"]
    if kind == "choice":
        if value not in spec["values"]:
            raise ReplayError(f"{value!r} is not one of {spec['values']}")
        return spec["values"][spec["values"].index(value)]
    if kind == "constant":
        if value != spec["value"]:
            raise ReplayError(f"{value!r} is not the constant {spec['value']!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReplayError(f"{value!r} is not a number")
    if kind == "uniform_int":
        if value != int(value):
            raise ReplayError(f"{value!r} is not an integer")
        value = int(value)
    else:
        value = float(value)
    low, high = spec["low"], spec["high"]
    above = value >= high if spec.get("exclusive_high") else value > high
    if value < low or above:
        bound = ")" if spec.get("exclusive_high") else "]"
        raise ReplayError(f"{value!r} is outside [{low}, {high}{bound}")
    return value


def parse_replay(raw: Any, search: Mapping[str, Any], repo: Path) -> Replay:
    """Validate a family file's ``replay`` block against its searched keys (raises ReplayError)."""
    if not isinstance(raw, dict):
        raise ReplayError("must be a mapping with file, rows and columns")
    unknown = set(raw) - REPLAY_KEYS
    if unknown:
        raise ReplayError(f"unknown key {sorted(unknown)[0]!r} (allowed: {', '.join(sorted(REPLAY_KEYS))})")
    if not isinstance(raw.get("file"), str):
        raise ReplayError("file: missing, the path of the trial file")
    columns = raw.get("columns")
    if not isinstance(columns, dict) or set(columns) != set(search):
        have = set(columns) if isinstance(columns, dict) else set()
        raise ReplayError(f"columns must name a column for every searched key: missing {sorted(set(search) - have)}, "
                          f"not searched {sorted(have - set(search))}")
    parsed = []
    for key, col in sorted(columns.items()):
        col = {"column": col} if isinstance(col, str) else col
        if not isinstance(col, dict) or not isinstance(col.get("column"), str) or set(col) - COLUMN_KEYS:
            raise ReplayError(f"columns.{key}: a column name, or a mapping with column and optional values, reduce")
        if col.get("reduce") not in (None, *REDUCERS):
            raise ReplayError(f"columns.{key}.reduce: {col['reduce']!r} is not one of {', '.join(REDUCERS)}")
        values = col.get("values") or {}
        if not isinstance(values, dict):
            raise ReplayError(f"columns.{key}.values: must map cells to values")
        parsed.append((key, Column(col["column"], tuple((str(k), v) for k, v in values.items()), col.get("reduce"))))
    rows = raw.get("rows") or {}
    if not isinstance(rows, dict):
        raise ReplayError("rows: must map column names to the value a row must have")
    for key in ("url", "sha256"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ReplayError(f"{key}: must be text (quote a checksum), got {raw[key]!r}")
    path = Path(raw["file"])
    return Replay(file=path if path.is_absolute() else repo / path, url=raw.get("url"), sha256=raw.get("sha256"),
                  rows=tuple((str(k), str(v)) for k, v in rows.items()), columns=tuple(parsed))


def _selected_rows(replay: Replay) -> list[dict[str, str]]:
    """The file's rows (cells as text) that match ``replay.rows``, downloaded and checked first."""
    import csv

    from syw.core.errors import DataMissingError
    from syw.data.fetch import fetch, file_digest

    if not replay.file.is_file():
        if replay.url is None:
            raise DataMissingError(f"replay file {replay.file} is missing; put the trial file there")
        fetch(replay.url, replay.file, sha256=replay.sha256)
    if replay.sha256 is not None and (digest := file_digest(replay.file, "sha256")) != replay.sha256:
        raise ReplayError(f"{replay.file} has sha256 {digest}, expected {replay.sha256}: not the file the family replays")
    with open(replay.file, newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        missing = {c for c, _ in replay.rows} | {c.column for _, c in replay.columns}
        missing -= set(reader.fieldnames or ())
        if missing:
            raise ReplayError(f"{replay.file} has no column {sorted(missing)[0]!r}")
        return [row for row in reader if all(row[c] == v for c, v in replay.rows)]
