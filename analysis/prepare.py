"""From the trials given to ``syw curve`` to the scores of each group: the columns picked, the
direction of the score, the rows that count (``analysis.rows``), and the groups.

Each choice is written down for the report (:attr:`Prepared.columns`, :attr:`Prepared.notes`);
anything ambiguous or wrong is a :class:`data.download.DataError` naming the source.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analysis.columns import looks_like_loss, pick_duration, pick_group, pick_metric
from analysis.inputs import Trials, load_trials, per_trial
from analysis.rows import settle
from analysis.table import split_groups
from data.download import DataError


@dataclass(frozen=True)
class Group:
    """The trials of one group: scores (and seconds per trial) in the order the source lists them."""

    name: str
    scores: np.ndarray
    durations: np.ndarray | None


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


def prepare(source: str, *, study: str | None = None, metric: str | None = None, group: str | None = None,
            duration: str | None = None, given_direction: str | None = None, pick: str = "best",
            failed: str = "drop") -> Prepared:
    """Read ``source`` (``analysis.inputs.load_trials``) and split its trials into groups."""
    trials = load_trials(source, study=study)
    first = given_direction or trials.directions.get(trials.preferred or "", "max")
    column = pick_metric(trials.frame, trials.source, metric, maximize=first == "max", preferred=trials.preferred)
    maximize = direction(trials, column, given_direction)
    if trials.reports:
        trials = per_trial(trials, column, pick=pick, maximize=maximize)
    frame = trials.frame
    group_column = pick_group(frame, trials.source, group)
    seconds, seconds_note = pick_duration(frame, trials.source, duration)
    name_column = group_column or "group"
    if group_column is None:
        frame = frame.assign(group=trials.name)
    frame, notes = settle(frame, column, name_column, policy=failed, maximize=maximize, source=trials.source)
    frame.attrs["source"] = trials.source
    if frame.empty:
        raise DataError(f"{trials.source}: no finished trial with a score ({'; '.join(notes)})")
    split = split_groups(frame, name_column, column, seconds)
    groups = [Group(str(name), scores, durations) for name, (scores, durations) in split.items()]
    columns = {"metric": _picked(column, metric) + (", higher is better" if maximize else ", lower is better"),
               "duration": _picked(seconds, duration) if seconds else "none",
               "group": _picked(group_column, group) if group_column else f"none (one curve, named {trials.name})"}
    return Prepared(groups, trials.source, trials.name, column, maximize, name_column, columns,
                    trials.notes + notes + ([seconds_note] if seconds_note else []))


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
