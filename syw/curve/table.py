"""Read trial records (CSV, TSV or JSONL) and tabulate expected-max curves per group."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.core.errors import DataError
from syw.core.manifest import manifest_of, require_verified
from syw.core.records import iter_records
from syw.curve.rows import check_size, finished

DELIMITERS = ",\t;|"


def sniff(path: Path, default: str) -> tuple[str, str]:
    """The field delimiter and decimal mark of a delimited text file: the one of ``,``, tab, ``;``, ``|``
    that splits the first lines alike (``default``, the extension's, when several do); a ``;`` file
    whose numbers are written ``0,83`` has the decimal comma of a European spreadsheet."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        sample = "".join(line for _, line in zip(range(50), handle) if line.strip())
    try:
        found = csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        found = default
    lines = sample.splitlines()
    counts = {d: {line.count(d) for line in lines} for d in DELIMITERS}
    if len(counts[default]) == 1 and counts[default] != {0}:  # the extension's delimiter splits every line alike
        found = default
    decimal = "," if found == ";" and re.search(r"(^|;)\s*-?\d+,\d+\s*(;|$)", sample, re.M) else "."
    return found, decimal


def _check_header(path: Path, sep: str) -> None:
    """Refuse a header naming two columns alike: pandas would rename the second (``accuracy.1``) and a score picked
    by name would silently be the first."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        header = next(csv.reader(handle, delimiter=sep), [])
    seen: dict[str, int] = {}
    for position, name in enumerate((n.strip() for n in header), start=1):
        if name and name in seen:  # unnamed columns (trailing separators) are pandas' "Unnamed: k", each its own
            raise DataError(f"{path}: line 1: columns {seen[name]} and {position} are both named {name!r}; rename one")
        seen[name] = position


def read_table(path: str | Path) -> pd.DataFrame:
    """Every row of a records file, by extension: .csv, .tsv, .tab (the delimiter sniffed:
    ``,``, tab, ``;`` or ``|``) or .jsonl/.json (nested fields become ``a.b`` columns).

    ``frame.attrs["source"]`` is the path; the index says where each row is in the file:
    ``"line 3"`` (delimited text: one row a line) or ``"record 3"`` (the third complete JSON record).
    A file that cannot be parsed or holds no record raises :class:`DataError` naming it (a JSONL
    line that is not a trial record: ``syw.core.records.RecordError``, naming file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such records file")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".tab"):
        try:  # blank lines kept (as empty rows, dropped below) so that row i is line i + 2
            sep, decimal = sniff(path, "," if suffix == ".csv" else "\t")
            _check_header(path, sep)
            frame = pd.read_csv(path, sep=sep, decimal=decimal, skip_blank_lines=False)
        except pd.errors.EmptyDataError as err:
            raise DataError(f"{path}: the file is empty, not even a header line") from err
        except UnicodeDecodeError as err:
            raise DataError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from err
        except pd.errors.ParserError as err:  # "Error tokenizing data. C error: Expected 2 fields in line 3, saw 3"
            raise DataError(f"{path}: {err}".strip()) from err
        frame.index = [f"line {i + 2}" for i in range(len(frame))]
        frame = frame.dropna(how="all")
    elif suffix in (".jsonl", ".json"):  # the runner's reader: a torn line from a killed run is skipped
        if manifest_of(path).exists():  # a records file of the suite: it must match its manifest
            require_verified(path)
        frame = pd.json_normalize(list(iter_records(path, schema=False)))  # anyone's trials, not only ours
        frame.index = [f"record {i + 1}" for i in range(len(frame))]
    else:
        raise ValueError(f"{path}: unknown records format {suffix!r} (use .csv, .tsv or .jsonl)")
    if frame.empty:
        raise DataError(f"{path}: no record in the file (a header only, or only blank or torn lines)")
    frame.attrs["source"] = str(path)
    return frame


def read_records(path: str | Path) -> pd.DataFrame:
    """:func:`read_table`'s rows of finished trials: a ``status`` (or ``state``) column, read
    case-insensitively, must name a finished trial (``ok``, ``COMPLETE``, ...: ``syw.curve.rows.OK``).
    ``frame.attrs`` holds the ``source`` path and how many rows were ``dropped``.
    """
    frame = read_table(path)
    kept = frame[finished(frame) == "ok"]
    kept.attrs.update(source=str(path), dropped=len(frame) - len(kept))
    return kept


def finite_column(frame: pd.DataFrame, column: str, source: str) -> pd.Series:
    """``frame[column]`` as finite floats (none too large to compute with: ``syw.curve.rows.check_size``), or a
    DataError naming ``source``, the column and the first bad row (by its index label, e.g. ``"line 3"``)."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").astype(float)
    bad = ~np.isfinite(values.to_numpy())
    if bad.any():
        where = raw.index[bad]
        value = raw[where[0]]
        what = "is empty or NaN" if pd.isna(value) else f"holds {value!r}, not a finite number"
        more = f" ({bad.sum()} such rows: {', '.join(map(str, where[:5]))}{', ...' if bad.sum() > 5 else ''})" if bad.sum() > 1 else ""
        raise DataError(f"{source}: {where[0]}: column {column!r} {what}{more}")
    check_size(values, column, source)
    return values


def duration_column(frame: pd.DataFrame, column: str, source: str) -> pd.Series:
    """:func:`finite_column` for training times, which are never negative: a negative one is a
    DataError naming the row (a clock difference taken the wrong way round, say)."""
    values = finite_column(frame, column, source)
    negative = values < 0
    if negative.any():
        label = values.index[negative.to_numpy()][0]
        raise DataError(f"{source}: {label}: column {column!r} holds {values[label]:g}, a negative training time")
    return values


def split_groups(
    frame: pd.DataFrame, group: str, metric: str, duration: str | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Scores (and durations) of each group, sorted by group name.

    Every row needs a group, a finite metric (and duration): a bad one raises :class:`DataError`
    naming the file (``frame.attrs["source"]``, as :func:`read_records` sets it) and the row.
    """
    source = frame.attrs.get("source", "records")
    if frame.empty:
        raise DataError(f"{source}: no ok record")
    for column in (group, metric) + ((duration,) if duration else ()):
        if column not in frame.columns:
            raise DataError(f"{source}: no column {column!r} (have: {', '.join(map(str, frame.columns))})")
    missing = frame[group].isna()
    if missing.any():
        raise DataError(f"{source}: {frame.index[missing][0]}: column {group!r} is empty ({missing.sum()} such rows)")
    frame = frame.assign(**{metric: finite_column(frame, metric, source)})
    if duration:
        frame = frame.assign(**{duration: duration_column(frame, duration, source)})
    return {name: (part[metric].to_numpy(dtype=float), part[duration].to_numpy(dtype=float) if duration else None)
            for name, part in frame.groupby(group, sort=True)}


def curve_table(
    frame: pd.DataFrame,
    group: str,
    metric: str,
    *,
    duration: str | None = None,
    max_n: int | None = None,
    maximize: bool = True,
) -> pd.DataFrame:
    """One row per (group, n): expected max (Eq. 8), its spread, the unbiased estimate (n <= N) and time.

    Rows are checked by :func:`split_groups`.
    """
    if max_n is not None and max_n < 1:
        raise ValueError(f"the largest budget n must be at least 1, got {max_n}")
    rows = []
    for name, (scores, durations) in split_groups(frame, group, metric, duration).items():
        c = curve_of(Group(str(name), scores, durations), maximize, max_n)
        block = pd.DataFrame({group: name, "n": c.ns, "N": scores.size, "expected_max": c.mean, "spread_sd": c.sd,
                              "unbiased": c.unbiased})
        if duration:
            block["seconds"] = c.ns * c.mean_duration
        rows.append(block)
    return pd.concat(rows, ignore_index=True)
