"""Which columns of someone's trials hold the group, the validation score and the training time.

A column given by name is used as is (a missing one is an error listing the columns there are).
Otherwise a default is taken only when it is obvious, else the error lists the candidates:

- score: a column named ``value`` (this suite's records, Optuna) or the source's own; else the
  numeric columns named like a score (acc, accuracy, f1, em, score, ...; with ``min``: loss, error,
  perplexity, ...) and not like training, test, time or a hyperparameter; among them those that
  also say validation (val, valid, dev, eval) and best rank first; a tie goes to the one whose
  name is nothing but those words (``best_validation_accuracy`` over ``best_validation_span_acc``).
- group: ``family``, ``group`` or ``model`` (allentune's); else a text column filled on every row, with 2 or
  more values, named like a model family (architecture, embedding, method, ... or ``<model...>.type``);
  none: one curve.
- duration: the numeric column named like a training time: a word of its name is or holds ``time``
  (``train_time_s``, ``fit_time``, ``runtime``, ``walltime``), or is ``duration``, ``elapsed``,
  ``seconds``/``secs``, or the name ends in ``_s`` (``time_total_s``); not a point in time or a part
  of a trial (``timestamp``, ``start_time``, ``time_this_iter_s``, ``epoch_time``). A unit in the name
  (its last word: ``Train time (ms)``, ``fit_minutes``) converts it to seconds (:func:`duration_unit`). Of several,
  the one that says training or total; else none, with a note; none: no time axis.

A score or time column is numeric; when none is, a column named like one whose cells are mostly numbers
is taken, so that its stray word (``high``, ``10 min``) is an error naming its line, as when it is given.
"""
from __future__ import annotations

import numbers
import re

import pandas as pd

from syw.core.errors import DataError

SCORE_WORDS = {"acc", "accuracy", "f1", "em", "score", "auc", "auroc", "bleu", "rouge", "map", "mrr", "ndcg",
               "precision", "recall", "mcc", "r2", "spearman", "pearson", "correlation", "reward", "objective"}
LOSS_WORDS = {"loss", "error", "err", "perplexity", "ppl", "wer", "cer", "mse", "mae", "rmse", "nll"}
VALID_WORDS = {"val", "valid", "validation", "dev", "eval", "development", "heldout"}
BEST_WORDS = {"best", "max", "min", "final", "mean", "avg"}
NOT_SCORE = {"train", "training", "test", "time", "duration", "seconds", "memory", "mb", "epoch", "epochs",
             "iteration", "iterations", "step", "steps", "lr", "seed", "trial", "id", "timestamp", "pid",
             "number", "num", "dim", "size", "batch", "dropout", "peak", "gpu", "cpu", "runtime"}
HYPERPARAMETER_PREFIXES = ("config.", "params.", "config/", "hparams.", "hyperparameters.")
GROUP_WORDS = ("family", "group", "model", "model_name", "model_type", "arch", "architecture", "method",
               "algorithm", "system", "embedding", "encoder", "variant")
DURATION_WORDS = {"duration", "elapsed", "seconds", "secs", "sec", "runtime", "walltime"}
# a point in time, or the time of a part of a trial (one report, one epoch), not a trial's training time
NOT_DURATION = {"timestamp", "datetime", "date", "timezone", "start", "end", "begin", "finish", "started", "ended",
                "created", "updated", "this", "since", "restore", "per", "iter", "step", "epoch", "batch", "eta",
                "remaining", "left", "timeout", "limit", "budget"}
TRAINING_WORDS = {"train", "training", "fit", "total", "trial"}
UNITS = {"ms": (1e-3, "milliseconds"), "millis": (1e-3, "milliseconds"), "milliseconds": (1e-3, "milliseconds"),
         "min": (60.0, "minutes"), "mins": (60.0, "minutes"), "minutes": (60.0, "minutes"),
         "h": (3600.0, "hours"), "hr": (3600.0, "hours"), "hrs": (3600.0, "hours"), "hours": (3600.0, "hours")}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", str(name).lower()) if t]


def _numeric(frame: pd.DataFrame, column: str) -> bool:
    values = frame[column].dropna()
    if values.empty or pd.api.types.is_bool_dtype(values):
        return False
    if pd.api.types.is_numeric_dtype(values):
        return True
    kind = pd.api.types.infer_dtype(values, skipna=True)  # one pass in C: a million rows of text need no loop
    if kind in ("string", "bytes", "boolean", "datetime", "date", "timedelta", "period", "interval"):
        return False
    if kind in ("integer", "floating", "mixed-integer-float"):
        return True
    return bool(values.map(lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)).all())


def _mostly_numeric(frame: pd.DataFrame, column: str) -> bool:
    """Whether a text column holds numbers in most cells: a score or time column with a stray word
    (``high``, ``10 min``), picked by its name so that the reading names the bad cell's line."""
    values = frame[column].dropna()
    if values.empty or _nested(values) or pd.api.types.is_bool_dtype(values):
        return False
    parsed = pd.to_numeric(values.map(lambda v: str(v).strip()), errors="coerce")
    return int(parsed.notna().sum()) * 2 > len(values)


def _listing(columns) -> str:
    return ", ".join(map(str, columns))


def _known(frame: pd.DataFrame, column: str, source: str, what: str) -> str:
    if column not in frame.columns:
        raise DataError(f"{source}: no column {column!r} for the {what} (have: {_listing(frame.columns)})")
    return column


def pick_metric(frame: pd.DataFrame, source: str, metric: str | None = None, *, maximize: bool = True,
                preferred: str | None = None) -> str:
    """The score column (see the module doc)."""
    if metric:
        return _known(frame, metric, source, "score")
    for name in (preferred, "value"):
        if name and name in frame.columns and _numeric(frame, name):
            return name
    words = SCORE_WORDS if maximize else LOSS_WORDS
    named = [c for c in frame.columns if not str(c).startswith(HYPERPARAMETER_PREFIXES)
             and words & set(_tokens(c)) and not NOT_SCORE & set(_tokens(c))]
    ranked = []
    # numeric columns first; else one whose cells are mostly numbers: the score with a stray word, whose line
    # the reading then names (syw.curve.rows)
    for column in [c for c in named if _numeric(frame, c)] or [c for c in named if _mostly_numeric(frame, c)]:
        tokens = _tokens(column)
        level = bool(VALID_WORDS & set(tokens)) + bool({"best"} & set(tokens))
        bare = set(tokens) <= words | VALID_WORDS | BEST_WORDS
        ranked.append(((level, bare), column))
    if not ranked:
        kind = "a validation score (acc, accuracy, f1, em, score, ...)" if maximize else "a loss or error"
        losses = [c for c in frame.columns if maximize and looks_like_loss(c) and _numeric(frame, c)
                  and not str(c).startswith(HYPERPARAMETER_PREFIXES) and not NOT_SCORE & set(_tokens(c))]
        hint = (f"; {_listing(losses)} look(s) like a loss (lower is better): pass --direction min"
                if losses else "; pass --metric COLUMN")
        raise DataError(f"{source}: no numeric column is named like {kind}{hint} (columns: {_listing(frame.columns)})")
    top = max(rank for rank, _ in ranked)
    best = [column for rank, column in ranked if rank == top]
    if len(best) > 1:
        raise DataError(f"{source}: several columns could hold the validation score: {_listing(best)}; "
                        "pass --metric COLUMN")
    return best[0]


def pick_test(frame: pd.DataFrame, source: str, metric: str, test: str | None = None, *,
              maximize: bool = True) -> str | None:
    """The column of each trial's test score (of its selected epoch), or None: a column given by name
    (``none``: none); else the one numeric column named like a test score (``test_accuracy``,
    ``extra_metrics.test_accuracy``, ``test_perplexity`` when lower is better), preferring the one whose
    other words are the score column's other words (``test_accuracy`` for ``best_validation_accuracy``)."""
    if test == "none":
        return None
    if test:
        return _known(frame, test, source, "test score")
    words = SCORE_WORDS if maximize else LOSS_WORDS
    found = [c for c in frame.columns if "test" in _tokens(c) and words & set(_tokens(c)) and _numeric(frame, c)
             and not str(c).startswith(HYPERPARAMETER_PREFIXES)]
    stem = set(_tokens(metric)) - VALID_WORDS - BEST_WORDS
    same = [c for c in found if set(_tokens(c)) - {"test", "extra", "metrics"} - BEST_WORDS == stem]
    return (same or found)[0] if len(same) == 1 or (not same and len(found) == 1) else None


def looks_like_loss(column: str) -> bool:
    """Whether a column's name says lower is better (loss, error, perplexity, ...) and not a score."""
    tokens = set(_tokens(column))
    return bool(LOSS_WORDS & tokens) and not SCORE_WORDS & tokens


def _group_like(column: str) -> bool:
    parts = str(column).lower().replace("/", ".").split(".")
    if parts[0] in ("params", "config", "user_attrs"):
        parts = parts[1:]
    return bool(parts) and (parts[-1] in GROUP_WORDS or (parts[-1] in ("type", "name") and any(
        p in GROUP_WORDS for p in parts[:-1])))


def _nested(values: pd.Series) -> bool:
    """Whether a column holds lists or mappings (a record's epoch curve, say): no group names, and unhashable."""
    if values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) in ("string", "bytes"):
        return False
    return bool(values.map(lambda v: isinstance(v, (list, dict, tuple))).any())


def pick_group(frame: pd.DataFrame, source: str, group: str | None = None) -> str | None:
    """The group column, or None for one curve of all trials (see the module doc); ``"none"`` asks for one curve."""
    if group == "none":
        return None
    if group:
        return _known(frame, group, source, "group")
    found = []
    for column in frame.columns:
        values = frame[column]
        if not _group_like(column) or values.isna().any() or _numeric(frame, column) or _nested(values):
            continue
        if values.nunique() >= (1 if column in ("family", "group", "model") else 2):
            found.append(column)
    for name in ("family", "group", "model"):
        if name in found:
            return name
    if len(found) > 1:
        described = "; ".join(f"{c} ({_listing(sorted(frame[c].astype(str).unique())[:4])})" for c in found)
        raise DataError(f"{source}: several columns could name the groups: {described}; "
                        "pass --group COLUMN (or --group none for one curve)")
    return found[0] if found else None


def _duration_like(column: str) -> bool:
    tokens = _tokens(column)
    if (not tokens or (NOT_DURATION | SCORE_WORDS | LOSS_WORDS) & set(tokens)
            or str(column).startswith(HYPERPARAMETER_PREFIXES)):
        return False
    return (any("time" in t for t in tokens) or bool(DURATION_WORDS & set(tokens))
            or (len(tokens) > 1 and (tokens[-1] == "s" or tokens[-1] in UNITS and bool(TRAINING_WORDS & set(tokens)))))


def duration_unit(column: str) -> tuple[float, str]:
    """Seconds per unit of a duration column, by the unit its name ends with (``(ms)``, ``_min``, ``hours``),
    and the unit's name; seconds when it states none."""
    tokens = _tokens(column)
    return UNITS[tokens[-1]] if len(tokens) > 1 and tokens[-1] in UNITS else (1.0, "seconds")


def pick_duration(frame: pd.DataFrame, source: str, duration: str | None = None) -> tuple[str | None, str | None]:
    """The training-time column (see the module doc), or None; and a note when several names fit and none was taken."""
    if duration == "none":
        return None, None
    if duration:
        return _known(frame, duration, source, "training time"), None
    found = ([c for c in frame.columns if _duration_like(c) and _numeric(frame, c)]
             or [c for c in frame.columns if _duration_like(c) and _mostly_numeric(frame, c)])  # its reading names the stray cell
    training = [c for c in found if TRAINING_WORDS & set(_tokens(c))]
    if len(found) > 1 and len(training) == 1:
        return training[0], None
    if len(found) > 1:
        return None, f"several columns could be the training time ({_listing(found)}): none taken; pass --duration"
    return (found[0] if found else None), None
