"""A study that states its question and a stopping rule, ``study.sequential`` (issue 74).

``study.sequential: {compare: [A, B], at: [1, 5], looks: [20, 40, ...], boundary, adjust, confidence}``: the
two families are run look by look, trials 0..N_k-1 of each (their seeded order) before look k is evaluated by
:func:`syw.analysis.sequential.decide` on the records, so every look sees the same count per family; the run
stops at the first look where every budget is decided, or at the last (its trials per family: ``trials``).
Each look's statistics are appended to ``results/<study>/sequential.ndjson`` (not ``*.jsonl``: that name is a
records file), then one ``stopped`` line. A look is recomputed from the records whenever the study runs again,
and a line already there must equal it: the file is never duplicated, and a record changed since is caught.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from syw.analysis.sequential import Design, SequentialResult, decide, look_statistics
from syw.core.errors import ConfigError, DataError
from syw.core.records import iter_records, latest_per_trial
from syw.curve.sequential import LOG_NAME, read_log

KEYS = {"compare", "at", "looks", "boundary", "adjust", "confidence"}


def sequential_of(cfg: DictConfig, where: str) -> tuple[Design, tuple[str, str]] | None:
    """The study's stopping rule and the two families it compares (None: not a sequential study); a rule that
    contradicts the study raises :class:`ConfigError` naming ``study.sequential`` or the setting."""
    raw = cfg.study.get("sequential")
    if raw is None:
        return None
    key = "study.sequential"
    if not isinstance(raw, DictConfig):
        raise ConfigError(where, key, "must be {compare: [A, B], at: [budgets], looks: [trials per family], ...}")
    spec = OmegaConf.to_container(raw)
    unknown = set(spec) - KEYS
    if unknown:
        raise ConfigError(where, f"{key}.{sorted(unknown)[0]}", f"unknown key (allowed: {', '.join(sorted(KEYS))})")
    for need in ("compare", "at", "looks"):
        if not isinstance(spec.get(need), list):
            raise ConfigError(where, f"{key}.{need}", f"missing or not a list (got {spec.get(need)!r})")
    compare = spec["compare"]
    families = list(cfg.study.families)
    if len(compare) != 2 or len(set(map(str, compare))) != 2 or sorted(map(str, compare)) != sorted(families):
        raise ConfigError(where, f"{key}.compare", f"must name the study's two families (has: {', '.join(families)}), "
                          f"got {compare!r}")
    try:
        design = Design(tuple(spec["looks"]), tuple(spec["at"]), spec.get("confidence", 0.95),
                        spec.get("boundary", "obrien-fleming"), spec.get("adjust", "bonferroni"))
    except (TypeError, ValueError) as err:
        raise ConfigError(where, key, str(err)) from None
    counts = {name: int((cfg.study.get("trials") or {}).get(name, cfg.trials)) for name in families}
    for name, count in counts.items():
        if count != design.looks[-1]:
            raise ConfigError(where, "trials", f"{name} has {count} trials but the last look of study.sequential.looks is "
                              f"{design.looks[-1]}: a sequential study runs at most its last look's trials per family")
    if cfg.get("only") is not None or cfg.get("family") is not None:
        raise ConfigError(where, "only" if cfg.get("only") is not None else "family",
                          "a sequential study runs both families look by look: only and family are for other studies")
    return design, (str(compare[0]), str(compare[1]))


def recorded_scores(path: Path, name: str) -> list[float]:
    """A family's scores in trial order, up to the first trial without a record (a look needs all of 0..N_k-1);
    a failed trial raises :class:`DataError` (the rule needs every score; ``retry_failed=true`` reruns it)."""
    rows = latest_per_trial(iter_records(path)) if path.exists() else []
    scores: list[float] = []
    for index, row in enumerate(rows):
        if row["trial"] != index:
            break
        if row["status"] != "ok":
            raise DataError(f"{path}: trial {index} of {name} failed: a sequential study's looks need every trial's score; "
                            "retry_failed=true reruns it")
        scores.append(float(row["value"]))
    return scores


def evaluate(design: Design, names: tuple[str, str], paths: dict[str, Path], maximize: bool) -> SequentialResult | None:
    """The rule on the looks the records reach (None before the first)."""
    a, b = (recorded_scores(paths[name], name) for name in names)
    reached = sum(min(len(a), len(b)) >= k for k in design.looks)
    if reached == 0:
        return None
    return decide(look_statistics(a, b, design, reached, maximize), design, names)


def _number(x: float) -> float | None:
    return None if not math.isfinite(x) else x  # JSON has no NaN or inf: a look that cannot test a budget


def look_lines(result: SequentialResult) -> list[dict[str, Any]]:
    """One line per look evaluated: its trials per family and, per budget, T, its boundary, the repeated confidence
    interval and the leader (null: not decided); then a ``stopped`` line when the rule has stopped."""
    width = len(result.design.at)
    lines = []
    for start in range(0, len(result.rows), width):
        rows = result.rows[start:start + width]
        lines.append({"look": rows[0].look, "trials_per_family": rows[0].trials_per_group, "compare": list(result.names),
                      "budgets": [{"n": r.n, "estimate": _number(r.estimate), "statistic": _number(r.statistic),
                                   "df": _number(r.df), "boundary": _number(r.boundary),
                                   "rci": [_number(r.low), _number(r.high)], "leader": r.leader, "decided_at": r.decided_at}
                                  for r in rows]})
    if result.stopped_at is not None:
        lines.append({"stopped": True, "look": result.stopped_at, "trials_per_family": result.trials_used,
                      "why": decision_text(result)})
    return lines


def decision_text(result: SequentialResult) -> str:
    """What the rule says so far: "decided at look k (N per family): n = 1: lr leads, ...", or why it stopped
    undecided, or the looks done while it goes on."""
    last = result.decisions()
    said = ", ".join(f"n = {n}: {r.leader + ' leads' if r.leader else 'no leader'}" for n, r in last.items())
    k, size = result.rows[-1].look, result.trials_used
    if result.stopped_at is None:
        return f"still running: {k} of {len(result.design.looks)} looks done ({size} trials per family); {said}"
    if all(r.leader for r in last.values()):
        return f"decided at look {k} ({size} trials per family): {said}"
    return f"last look {k} reached ({size} trials per family) undecided: {said}"


def _same(old: Any, new: Any) -> bool:
    """Equal lines, numbers to 1e-9 relative: a look's boundary is computed beside the later looks' (vectorized),
    which moves its last digits."""
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(x, y) for x, y in zip(old, new))
    if isinstance(old, float) and isinstance(new, float):
        return math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12)
    return old == new


def record_looks(path: Path, result: SequentialResult) -> list[dict[str, Any]]:
    """Append the lines of ``result`` that ``path`` lacks (a cut-off last line is dropped first); a line there that
    differs from the records' evaluation raises :class:`DataError`. Returns the lines appended."""
    have = read_log(path)
    want = look_lines(result)
    for old, new in zip(have, want):
        if not _same(old, json.loads(json.dumps(new))):
            raise DataError(f"{path}: look {old.get('look')}'s line differs from the records' evaluation now "
                            "(were records changed since?)")
    if len(have) > len(want):
        raise DataError(f"{path}: {len(have)} lines, but the records reach {len(want)}")
    fresh = want[len(have):]
    if path.is_symlink():
        raise OSError(f"{path}: a symbolic link: the runner writes no file through a link")
    kept = path.read_bytes().rfind(b"\n") + 1 if path.exists() else 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.ftruncate(fd, kept)  # a line cut off by a kill
        os.lseek(fd, kept, os.SEEK_SET)
        os.write(fd, "".join(json.dumps(line) + "\n" for line in fresh).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return fresh


def provenance_lines(study_dir: Path) -> list[str]:
    """PROVENANCE.md's section on a sequential study: each look's leaders and where the rule stopped."""
    lines = read_log(study_dir / LOG_NAME)
    if not lines:
        return []
    out = ["", f"Sequential rule ({LOG_NAME}): one line per look evaluated from the records:", ""]
    for line in lines:
        if line.get("stopped"):
            out.append(f"- stopped: {line['why']}")
        else:
            said = "; ".join(f"n = {b['n']}: not tested (too few trials)" if b["statistic"] is None else
                             f"n = {b['n']}: T = {b['statistic']:.2f}, boundary {b['boundary']:.2f}, leader {b['leader'] or '-'}"
                             for b in line["budgets"])
            out.append(f"- look {line['look']} ({line['trials_per_family']} trials per family): {said}")
    return out


__all__ = ["decision_text", "evaluate", "look_lines", "provenance_lines", "record_looks", "recorded_scores",
           "sequential_of"]
