"""From the trials given to ``syw curve`` to the scores of each group: the columns picked, the
direction of the score, the rows that count (``syw.curve.rows``), the search strategy of each trial
(``syw.analysis.adaptive``), and the groups, over one source or several (files, folders, studies).

Groups: the group column's values (the same column in every source), else one group per source (a storage
of several studies read without ``--study``: each study a source, so a group per study);
``--group strategy`` groups by search strategy. A group's runs (of an adaptive search) are its ``run``
(or ``tuner_seed``) values, else its sources. Each choice is written down for the report
(:attr:`Prepared.columns`, :attr:`Prepared.notes`); anything ambiguous or wrong is a
:class:`syw.core.errors.DataError` naming the source.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.adaptive import is_random, strategy_column
from syw.analysis.floors import Floor
from syw.analysis.group import Group
from syw.core.errors import DataError
from syw.curve.columns import duration_unit, looks_like_loss, pick_duration, pick_group, pick_metric, pick_test
from syw.curve.readers.journal import is_journal
from syw.curve.readers.mlflow import is_mlflow_folder
from syw.curve.rows import POLICIES, per_trial, settle
from syw.curve.sources import DATABASE_SUFFIXES, Trials, load_trials
from syw.curve.table import duration_column
from syw.curve.trials import SeveralStudies

ORDER_COLUMNS = ("number", "trial_number", "trial", "trial_index", "iteration")  # trial order, when numeric
RUN_COLUMNS = ("run", "run_id", "tuner_seed")
STRATEGY = "strategy"  # --group strategy: the groups are the search strategies


@dataclass(frozen=True)
class Reading:
    """How trials are read into groups, made once (``syw curve``'s reading options; :func:`syw.curve.api.read`'s
    keywords): the score, group, duration and test columns (None: picked as docs/syw.md says), the direction
    ("max", "min"; None: the source's own), each trial's ``pick`` of its logged steps (best, last), failed trials
    (``syw.curve.rows.POLICIES``), the floor scores beyond which count at it, and the studies of a storage."""

    metric: str | None = None
    group: str | None = None
    duration: str | None = None
    direction: str | None = None
    pick: str = "best"
    failed: str = "drop"
    test: str | None = None
    floor: Floor | None = None
    studies: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for key, value, allowed in (("direction", self.direction, (None, "max", "min")),
                                    ("pick", self.pick, ("best", "last")), ("failed", self.failed, POLICIES)):
            if value not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(map(str, allowed))}, got {value!r}")


@dataclass
class Prepared:
    """What ``syw curve`` draws and reports, and how each column was chosen."""

    groups: list[Group]
    source: str  # the sources, as messages name them
    name: str  # the default title and output folder name
    metric: str
    maximize: bool
    group_column: str  # the table's column naming the groups
    columns: dict[str, str] = field(default_factory=dict)  # metric/group/duration -> how it was chosen
    notes: list[str] = field(default_factory=list)
    rows: dict[str, pd.DataFrame] = field(default_factory=dict)  # each group's counted trials, every column as read,
    # in the order of its scores (the reporting checklist reads their hyperparameters)


def direction(trials: Trials, metric: str, given: str | None) -> bool:
    """True when higher is better: ``--direction``, else the source's own (an Optuna study's, our records'
    ``direction`` column), else higher; a column named like a loss needs ``--direction`` said."""
    if given:
        return given == "max"
    if metric in trials.directions:
        return trials.directions[metric] == "max"
    declared = trials.frame.get("direction")
    if metric == "value" and declared is not None and set(declared.dropna().astype(str)) in ({"max"}, {"min"}):
        return declared.dropna().iloc[0] == "max"
    if looks_like_loss(metric):
        raise DataError(f"{trials.source}: the score column {metric!r} looks like a loss (lower is better): pass "
                        "--direction min (or --direction max if higher is better)")
    return True


def _picked(name: str, given: str | None) -> str:
    return f"`{name}`" + ("" if given else " (picked)")


def _unit(column: str) -> str:
    factor, unit = duration_unit(column)
    return "" if factor == 1.0 else f", in {unit} (times {factor:g} for seconds)"


def _first(frame: pd.DataFrame, names: tuple[str, ...], numeric: bool) -> str | None:
    by_name = {str(c).lower().split(".")[-1]: c for c in frame.columns}
    for name in names:
        column = by_name.get(name)
        if column is not None and (not numeric or pd.api.types.is_numeric_dtype(frame[column])):
            return column
    return None


def _standard(trials: Trials, options: Reading) -> tuple[pd.DataFrame, dict]:
    """One source's rows that count, as columns ``group score seconds order run strategy``, and how
    each was chosen (``metric``, ``maximize``, ``group``, ``duration``, ``notes``)."""
    given = options.direction
    first = given or trials.directions.get(trials.preferred or "", "max")
    metric = pick_metric(trials.frame, trials.source, options.metric, maximize=first == "max",
                         preferred=trials.preferred)
    maximize = direction(trials, metric, given)
    if trials.reports:
        trials = per_trial(trials, metric, pick=options.pick, maximize=maximize)
        other = "last" if options.pick == "best" else "best"
        trials.notes.append(f"each trial counts with its {options.pick} {metric} over its logged steps "
                            f"(--pick {other}: its {other})")
    frame = trials.frame
    group = None if options.group == STRATEGY else pick_group(frame, trials.source, options.group)
    seconds, seconds_note = pick_duration(frame, trials.source, options.duration)
    frame = frame.assign(_group=frame[group].astype(str) if group else trials.name)
    frame, notes = settle(frame, metric, "_group", policy=options.failed, maximize=maximize, source=trials.source,
                          floor=options.floor)
    if frame.empty:
        raise DataError(f"{trials.source}: no finished trial with a score ({'; '.join(notes)})")
    if group and frame[group].isna().any():
        raise DataError(f"{trials.source}: {frame.index[frame[group].isna()][0]}: column {group!r} is empty")
    order, run, strategy = (_first(frame, ORDER_COLUMNS, True), _first(frame, RUN_COLUMNS, False),
                            strategy_column(frame))
    test = pick_test(frame, trials.source, metric, options.test, maximize=maximize)
    labels = frame[strategy].map(lambda v: None if is_random(v) else str(v)) if strategy else trials.strategy
    out = pd.DataFrame({"group": frame["_group"], "score": frame[metric],
                        "seconds": duration_column(frame, seconds, trials.source) * duration_unit(seconds)[0] if seconds else np.nan,
                        "order": frame[order].to_numpy(float) if order else np.arange(len(frame), dtype=float),
                        "run": frame[run].astype(str) if run else trials.name,
                        "strategy": labels, "source": trials.name,
                        "test": pd.to_numeric(frame[test], errors="coerce") if test else np.nan}, index=frame.index)
    info = dict(metric=metric, maximize=maximize, group=group, duration=seconds, order=order, run=run, test=test,
                notes=trials.notes + notes + ([seconds_note] if seconds_note else []), frame=frame.drop(columns="_group"))
    return out, info


def prepare(sources: list[str | Trials] | str | Trials, reading: Reading = Reading()) -> Prepared:
    """Read every source (``syw.curve.sources.load_trials``; each study of a storage; a :class:`Trials`
    as it is, e.g. a DataFrame of the Python API) and form the groups as ``reading`` says (its ``floor``: scores
    beyond it count at it, :mod:`syw.analysis.floors`)."""
    sources = [sources] if isinstance(sources, (str, Trials)) else list(sources)
    studies, group = list(reading.studies) if reading.studies else None, reading.group
    loaded, whole = [], []
    given = [s for s in sources if isinstance(s, Trials)]  # already read (a DataFrame of the Python API)
    for source, named in _studies_of([s for s in sources if not isinstance(s, Trials)], studies):
        for study in named:
            try:
                loaded.append(load_trials(source, study=study))
            except SeveralStudies as several:  # a storage of one study per model: each study a group
                loaded += [load_trials(source, study=name) for name in several.names]
                whole.append(f"{source}: {len(several.names)} studies ({', '.join(several.names)}) and no --study: "
                             "each is read, a group named by its study; --study NAME reads one")
    loaded = given + loaded
    parts = [(t, *_standard(t, reading)) for t in loaded]
    where = ", ".join(t.source for t in loaded)
    if len({info["maximize"] for _, _, info in parts}) > 1:
        raise DataError(f"{where}: the sources disagree on whether higher is better; pass --direction"
                        + (" (or name one study with --study)" if whole else ""))
    several = len(parts) > 1
    if several and {info["group"] for _, _, info in parts} != {parts[0][2]["group"]}:
        raise DataError(f"{where}: the sources name their groups in different columns "
                        f"({', '.join(str(info['group']) for _, _, info in parts)}); pass --group COLUMN or --group none")
    rows = pd.concat([frame for _, frame, _ in parts])
    if several and parts[0][2]["run"] is None:
        rows["run"] = rows["source"]  # a group spanning several sources: each source is a run
    if several and parts[0][2]["group"] is None and group != STRATEGY:
        rows["group"] = rows["source"]
    if group == STRATEGY:
        rows["group"] = rows["strategy"].fillna("random")
    names = rows["group"].astype(str)
    rows["group"] = names.map({name: printable(name) for name in names.unique()})  # every output shows the same, escaped, name
    info = parts[0][2]
    groups = [_group(str(name), part, info["duration"] is not None, where) for name, part in rows.groupby("group", sort=True)]
    read_as = pd.concat([i["frame"] for _, _, i in parts], ignore_index=True)  # positions match rows'
    by_group = {str(name): read_as.iloc[at].reset_index(drop=True)
                for name, at in pd.RangeIndex(len(rows)).to_series().groupby(rows["group"].to_numpy(), sort=True)}
    maximize = info["maximize"]
    columns = {"metric": _picked(info["metric"], reading.metric) + (", higher is better" if maximize else ", lower is better"),
               "duration": _picked(info["duration"], reading.duration) + _unit(info["duration"]) if info["duration"] else "none",
               "group": ("the search strategy (--group strategy)" if group == STRATEGY
                         else _picked(info["group"], group) if info["group"]
                         else "the source" if several else f"none (one curve, named {loaded[0].name})"),
               "test": _picked(info["test"], reading.test) if info["test"] else "none"}
    notes = whole + [f"{t.name}: {n}" if several else n for t, _, i in parts for n in i["notes"]]
    if info["test"]:
        notes += [f"group {name}: {int(missing.sum())} trial(s) have no test score, so no test curve is drawn for it"
                  for name, missing in rows["test"].isna().groupby(rows["group"]) if missing.any()]
    name = loaded[0].name if not several else "_".join(t.name for t in loaded)[:60]
    return Prepared(groups, where, name, info["metric"], maximize,
                    "group" if group == STRATEGY else info["group"] or "group", columns, notes, by_group)


def printable(name: str) -> str:
    """``name`` with each control character (C0 and C1, DEL, the line and paragraph separators) written as Python
    writes it in a repr, ``\\x1b``, ``\\n``, ``\\u2028``: an ESC sequence or a newline in a group's name would
    otherwise reach the terminal and break the report's table. ``--label`` and ``--compare`` name groups this way."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in name)


def _studies_of(sources: list[str], studies: list[str] | None) -> list[tuple[str, list[str | None]]]:
    """Each source with the studies to read from it: ``storage#study`` names its own; else, of several
    storages and as many ``--study`` names, the i-th name is the i-th storage's; else every name is read
    from each storage (one storage: each of its studies)."""
    split = [(s.rsplit("#", 1) if "#" in s and _storage(s.rsplit("#", 1)[0]) else [s, None]) for s in sources]
    storages = [i for i, (s, own) in enumerate(split) if _storage(s) and own is None]
    paired = len(storages) > 1 and studies and len(studies) > 1
    if paired and len(studies) != len(storages):
        raise DataError(f"{', '.join(sources[i] for i in storages)}: {len(storages)} storages and {len(studies)} --study "
                        "names: give one --study per storage, in order, or name each one's study as STORAGE#STUDY")
    out = []
    for i, (source, own) in enumerate(split):
        if own is not None:
            out.append((source, [own]))
        elif i in storages:
            out.append((source, [studies[storages.index(i)]] if paired else list(studies or [None])))
        else:
            out.append((source, [None]))
    return out


def _storage(source: str) -> bool:
    """A source holding several studies (``--study`` picks one): an Optuna storage or journal, an MLflow store."""
    path = Path(source)
    return ("://" in source or source.lower().endswith(DATABASE_SUFFIXES) or (path.is_file() and is_journal(path))
            or (path.is_dir() and is_mlflow_folder(path)))


def _group(name: str, part: pd.DataFrame, timed: bool, where: str) -> Group:
    strategies = set(part["strategy"].dropna())
    if len(strategies) > 1 or (strategies and part["strategy"].isna().any()):
        found = ", ".join(sorted(map(str, strategies)) + (["random"] if part["strategy"].isna().any() else []))
        raise DataError(f"{where}: group {name!r} mixes search strategies ({found}); pass --group strategy")
    tests = part["test"].to_numpy(float)
    return Group(name, part["score"].to_numpy(float), part["seconds"].to_numpy(float) if timed else None,
                 order=part["order"].to_numpy(float), runs=part["run"].to_numpy(str),
                 strategy=next(iter(strategies), None), tests=tests if np.isfinite(tests).all() else None)


def check_targets(targets: list[tuple[float, str]], prepared: Prepared) -> None:
    """A target must lie on the scores' scale: not on the far side of every score (each group would
    reach it at n = 1: 0.83 against scores from 20 to 85, a fraction for a percentage), and not above 1
    when every score is a fraction in [0, 1] (83 for 0.83)."""
    scores = np.concatenate([g.scores for g in prepared.groups])
    low, high = float(scores.min()), float(scores.max())
    fractions = 0.0 <= low and high <= 1.0
    for target, _ in targets:
        trivial = target < low if prepared.maximize else target > high
        if trivial or (fractions and not 0.0 <= target <= 1.0):
            where = (f"{'below' if target < low else 'above'} every score, so every group reaches it at n = 1" if trivial
                     else "outside [0, 1], where every score lies")
            raise DataError(f"{prepared.source}: --target {target:g} lies {where} (scores from {low:g} to {high:g} in "
                            f"column {prepared.metric!r}): give the target on the scores' scale")
