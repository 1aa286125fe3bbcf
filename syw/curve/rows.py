"""Which rows of someone's trials count, and as what: finished, failed, or left out.

A trial table may say how each trial ended in a ``status`` (or Optuna's ``state``) column, and a
finished trial may still lack its score. The rules, the same for every input format:

- a status is read case-insensitively: :data:`OK` names a finished trial (``ok``, ``COMPLETE``,
  ``success``, ...), :data:`FAILED` one that crashed (``failed``, ``FAIL``, ``error``, ...); any
  other value (``pruned``, ``running``, ...) is a trial that did not finish and is left out;
- a finished trial whose score is empty, NaN or infinite (a diverged run) failed too;
- failed trials are left out by default (``drop``), or count as the worst score their group
  observed (``worst``) or as the metric's floor (``floor``, :mod:`syw.analysis.floors`): a crashed
  configuration is then a draw that gained nothing (section 3.1's draws include every assignment
  tried). Either way the report counts them;
- with a floor, a finished trial's score beyond it counts at the floor, and the report counts those.

A score that is text and not a number is an error, not a failed trial: it says the column is wrong.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from syw.analysis.floors import Floor, apply_floor
from syw.core.errors import DataError
from syw.curve.trials import Trials

OK = frozenset({"ok", "complete", "completed", "success", "succeeded", "successful", "finished", "done",
                "terminated"})
FAILED = frozenset({"failed", "fail", "failure", "error", "errored", "crashed", "diverged", "killed", "exception"})
STATUS_COLUMNS = ("status", "state")
POLICIES = ("drop", "worst", "floor")
EMPTY = "trial(s) with an empty, NaN or infinite score"
FAILED_RULE = {
    "drop": "Failed trials (a failed status, or an empty, NaN or infinite score) are left out of every curve.",
    "worst": "Failed trials (a failed status, or an empty, NaN or infinite score) count as the worst score their "
             "group observed among its finished trials (`--failed worst`): a crashed assignment is a draw that "
             "gained nothing.",
    "floor": "Failed trials (a failed status, or an empty, NaN or infinite score) count at the metric's floor "
             "(`--failed floor`): a crashed assignment is a draw that learned nothing.",
}


def status_column(frame: pd.DataFrame) -> str | None:
    """The column saying how each trial ended: ``status`` or ``state`` (any case), else None."""
    by_name = {str(c).lower(): c for c in frame.columns}
    return next((by_name[name] for name in STATUS_COLUMNS if name in by_name), None)


def finished(frame: pd.DataFrame) -> pd.Series:
    """Per row: ``"ok"``, ``"failed"`` or the lower-case status of a trial that did not finish."""
    column = status_column(frame)
    if column is None:
        return pd.Series("ok", index=frame.index)
    raw = frame[column].astype(str).str.strip().str.lower()
    raw = raw.where(frame[column].notna(), "ok")  # no status written: as a table without the column
    return raw.map(lambda s: "ok" if s in OK else "failed" if s in FAILED else s)


LARGEST = 1e50  # the comparison's degrees of freedom square variances, so scores to the 4th power: 1e200 stays finite


def check_size(values: pd.Series, column: str, source: str, hint: str = "") -> None:
    """Refuse a finite number too large to compute with (:data:`LARGEST`: 1.7e308 is a float but its square is not, and
    the curves, their spread and the figure's axes would be infinite), naming the first row that holds one."""
    big = np.isfinite(values.to_numpy(float)) & (np.abs(values.to_numpy(float)) > LARGEST)
    if big.any():
        label = values.index[big][0]
        raise DataError(f"{source}: {label}: column {column!r} holds {values[label]:g}, too large to compute with (the "
                        f"curves need numbers of at most {LARGEST:g}){hint}")


def _score(raw: pd.Series, column: str, source: str) -> pd.Series:
    """Floats; empty cells and the texts ``nan``/``inf`` as NaN/inf; any other text is an error."""
    values = pd.to_numeric(raw, errors="coerce").astype(float)
    text = raw[values.isna() & raw.notna()]
    for label, value in text.items():
        try:
            values[label] = float(str(value).strip() or "nan")
        except ValueError:
            raise DataError(f"{source}: {label}: column {column!r} holds {value!r}, not a finite number") from None
    return values


def settle(frame: pd.DataFrame, metric: str, group: str, *, policy: str = "drop", maximize: bool = True,
           source: str = "trials", floor: Floor | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The rows that make the curves (the module doc's rules) and the notes that count the rest.

    ``group`` is the column naming each row's group; the result's ``metric`` column is float.
    """
    if policy not in POLICIES:
        raise ValueError(f"--failed must be one of {', '.join(POLICIES)}, got {policy!r}")
    if policy == "floor" and floor is None:
        raise ValueError("--failed floor needs a floor: pass --floor X (chance accuracy, a vocabulary's size for perplexity)")
    if floor is not None:
        scores = _score(frame[metric], metric, source)
        check_floor(scores[(finished(frame) == "ok").to_numpy() & np.isfinite(scores.to_numpy())], floor,
                    maximize=maximize, metric=metric, source=source)
    kept, notes = _settle(frame, metric, group, policy, maximize, source, floor)
    if floor is not None:
        values, count = apply_floor(kept[metric], floor.value, maximize=maximize)
        kept = kept.assign(**{metric: values})
        if count:
            notes.append(f"{count} trial(s) scored beyond the floor: {floor.describe(maximize)}")
    # after the floor, which a diverged run's score (a perplexity of 1e60) may count at
    check_size(kept[metric], metric, source, "" if floor is not None else "; a diverged run? --floor X counts it at X")
    return kept, notes


def check_floor(scores: pd.Series, floor: Floor, *, maximize: bool, metric: str, source: str) -> None:
    """A floor must lie on the scores' scale, as a target must (``syw.curve.prepare.check_targets``): not
    beyond every finished score (each would count at it: ``--floor 80`` against scores from 50 to 70), and
    not outside [0, 1] when every score is a fraction there (``--floor 2`` for accuracies)."""
    if scores.empty:
        return
    low, high = float(scores.min()), float(scores.max())
    every = (floor.value > high) if maximize else (floor.value < low)
    off_scale = 0.0 <= low and high <= 1.0 and not 0.0 <= floor.value <= 1.0
    if not every and not off_scale:
        return
    where = ("outside [0, 1], where every score lies" if off_scale
             else f"{'above' if maximize else 'below'} every score, so every trial would count at {floor.value:g}")
    name = f"--floor {floor.value:g}" if floor.rule == "--floor" else f"the floor {floor.value:g} ({floor.rule})"
    raise DataError(f"{source}: {name} lies {where} (scores from {low:g} to {high:g} in column {metric!r}): give the "
                    "floor on the scores' scale")


def _settle(frame: pd.DataFrame, metric: str, group: str, policy: str, maximize: bool, source: str,
            floor: Floor | None) -> tuple[pd.DataFrame, list[str]]:
    state = finished(frame)
    values = _score(frame[metric], metric, source)
    empty = (state == "ok") & ~np.isfinite(values.to_numpy())
    state = state.mask(empty, "empty")
    notes = []
    others = state[~state.isin(["ok", "failed", "empty"])]
    for value, count in others.value_counts().sort_index().items():
        notes.append(f"{count} {value} trial(s) are left out (they did not finish)")
    failed = state.isin(["failed", "empty"])
    kept = frame[state.isin(["ok", "failed", "empty"])].assign(**{metric: values})
    if failed.any():
        column = status_column(frame)
        kinds = pd.Series("empty", index=state.index[failed])
        if column is not None:
            kinds = kinds.mask(state[failed] == "failed", frame.loc[failed, column].astype(str).str.strip())
        counts = kinds.value_counts()
        counts = counts[sorted(counts.index, key=lambda k: (k == "empty", k.lower()))]  # statuses, then empty scores
        described = "; ".join(f"{n} {EMPTY if k == 'empty' else k + ' trial(s)'}" for k, n in counts.items())
        if policy == "drop":
            notes += [f"{n} {EMPTY if k == 'empty' else k + ' trial(s)'} are left out" for k, n in counts.items()]
            left = kept[~failed[kept.index]]
            notes += [f"group {name!r} has no finished trial with a score ({n} failed or empty), so it has no curve"
                      for name, n in kept.loc[failed[kept.index], group].value_counts().sort_index().items()
                      if name not in set(left[group])]
            return left, notes
        if policy == "floor":
            kept.loc[failed[kept.index].to_numpy(), metric] = floor.value
            notes.append(f"{int(failed.sum())} failed trial(s) ({described}) count at the floor {floor.value:g} "
                         f"({floor.rule}; --failed floor)")
            return kept, notes
        kept = _as_worst(kept, failed[kept.index], metric, group, maximize, source)
        notes.append(f"{int(failed.sum())} failed trial(s) ({described}) count as the worst score their group "
                     "observed (--failed worst)")
    return kept, notes


def _as_worst(frame: pd.DataFrame, failed: pd.Series, metric: str, group: str, maximize: bool,
              source: str) -> pd.DataFrame:
    """``frame`` with each failed row's score replaced by its group's worst finished score."""
    frame = frame.copy()
    for name, part in frame.groupby(group, sort=False):
        ok = part.loc[~failed[part.index], metric]
        bad = part.index[failed[part.index].to_numpy()]
        if bad.empty:
            continue
        if ok.empty:
            raise DataError(f"{source}: group {name!r}: every trial failed, so none has a worst observed score "
                            "(--failed worst); leave it out with --failed drop")
        frame.loc[bad, metric] = ok.min() if maximize else ok.max()
    return frame


def per_trial(trials: Trials, metric: str, *, pick: str = "best", maximize: bool = True) -> Trials:
    """One row per trial of a source that logs every step (Ray Tune, MLflow, W&B, Lightning, TensorBoard):
    its report with the best (or the last) ``metric``, with the trial's whole training time
    (``time_total_s`` of its last report)."""
    frame = trials.frame
    if metric not in frame.columns:
        raise DataError(f"{trials.source}: no trial reported {metric!r}")
    values = pd.to_numeric(frame[metric], errors="coerce")
    text = frame[metric][values.isna() & frame[metric].notna()]
    text = text[~text.map(lambda v: isinstance(v, (int, float)))]
    if not text.empty:  # a score that is text says the column is wrong (syw.curve.rows)
        raise DataError(f"{trials.source}: {text.index[0]}: {metric!r} holds {text.iloc[0]!r}, not a number")
    state = finished(frame)
    out, labels = [], []
    for trial, part in frame.groupby("trial", sort=True):
        if state[part.index].ne("ok").all():  # a trial that raised or reported nothing: one failed row
            out.append(part.iloc[-1])
            labels.append(part.index[-1])
            continue
        scores = values[part.index]
        ok = scores[np.isfinite(scores.to_numpy(float))]
        if ok.empty:
            where = str(part.index[0]).rsplit(", ", 1)[0]
            raise DataError(f"{trials.source}/{where}: no result holds a number under {metric!r}" if where.endswith(
                "result.json") else f"{trials.source}: {where}: no logged step holds a number under {metric!r}")
        chosen = ok.index[-1] if pick == "last" else (ok.idxmax() if maximize else ok.idxmin())
        row = part.loc[chosen].copy()
        if "time_total_s" in part:
            row["time_total_s"] = pd.to_numeric(part["time_total_s"], errors="coerce").max()
        out.append(row)
        labels.append(chosen)
    return Trials(pd.DataFrame(out, index=labels), trials.source, trials.name, trials.directions,
                  trials.preferred, trials.notes, strategy=trials.strategy)
