"""``syw curve --compare A B --at N.. --looks K..``: the group-sequential comparison of anyone's search (issue 74).

The trials of each group are taken in the order they ran (their order column, ``ORDER_COLUMNS`` of
:mod:`syw.curve.prepare`, else file order); at each look, the first K trials per group are compared at each
stated budget n by :func:`syw.analysis.sequential.sequential` (the unbiased expected best of n, Eq. 8 without its
bias, studentized by the jackknife; an alpha-spending boundary per look; Bonferroni over the budgets) and the
rule stops at the first look where every budget has a leader. Writes ``sequential.csv`` and a report section.

A suite study with a stopping rule (``syw run``, :mod:`syw.experiments.sequential_study`) logs each look to
``sequential.ndjson`` beside its records; ``syw curve results/<study>`` reads the log (:func:`study_section`) and
says that the study's verdict is its rule's, at the look the log reached, not the fixed-N comparison of every trial
recorded.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from syw.analysis.sequential import Design, sequential
from syw.analysis.spending import SPENDING
from syw.core.entry import positive_int
from syw.core.errors import DataError
from syw.curve.prepare import Prepared

LOG_NAME = "sequential.ndjson"  # a sequential study's looks, beside its records (not *.jsonl: that is a records file)
COLUMNS = ["look", "trials_per_group", "n", "estimate", "statistic", "df", "boundary", "rci_low", "rci_high", "leader",
           "decided_at", "stopped"]


def ordered_scores(prepared: Prepared, name: str) -> np.ndarray:
    """Group ``name``'s scores in the order its trials ran (its order column, stable: file order breaks ties)."""
    group = next((g for g in prepared.groups if g.name == name), None)
    if group is None:
        raise ValueError(f"{prepared.source}: --compare names {name!r}, not a group here "
                         f"(groups: {', '.join(g.name for g in prepared.groups)})")
    if group.order is None:
        return np.asarray(group.scores, float)
    return np.asarray(group.scores, float)[np.argsort(group.order, kind="stable")]


def sequential_rows(prepared: Prepared, compare: tuple[str, str], at: Sequence[int], looks: Sequence[int],
                    boundary: str = "obrien-fleming", confidence: float = 0.95) -> pd.DataFrame:
    """One row per look evaluated (up to the one the rule stops at) and budget: T and its boundary, the repeated
    confidence interval of V_n^A - V_n^B, the leader (empty: not decided) and ``stopped`` at the look the rule
    stops at. Each group must reach the last look."""
    try:
        design = Design(tuple(looks), tuple(at), confidence, boundary)
    except ValueError as err:
        raise ValueError(f"{prepared.source}: --looks/--at: {err}") from None
    a, b = (ordered_scores(prepared, name) for name in compare)
    for name, scores in zip(compare, (a, b)):
        if scores.size < design.looks[-1]:
            raise ValueError(f"{prepared.source}: group {name!r} has {scores.size} trials, fewer than the last look's "
                             f"{design.looks[-1]}: state looks its trials reach")
    result = sequential(a, b, design, compare, maximize=prepared.maximize)
    frame = pd.DataFrame([{"look": r.look, "trials_per_group": r.trials_per_group, "n": r.n, "estimate": r.estimate,
                           "statistic": r.statistic, "df": r.df, "boundary": r.boundary, "rci_low": r.low,
                           "rci_high": r.high, "leader": r.leader or "", "decided_at": r.decided_at, "stopped": r.stopped}
                          for r in result.rows], columns=COLUMNS)
    frame["decided_at"] = frame["decided_at"].astype("Int64")
    finite = np.isfinite(frame["boundary"].to_numpy(float))
    frame.loc[~finite, ["boundary", "rci_low", "rci_high"]] = np.nan  # a look that cannot test the budget yet
    return frame


def section(rows: pd.DataFrame, compare: tuple[str, str], boundary: str, confidence: float) -> str:
    """The report's words: what was decided at which look."""
    last = rows[rows["look"] == rows["look"].max()]
    size = int(last["trials_per_group"].iloc[0])
    said = "; ".join(f"n = {r.n}: {r.leader + ' leads (look ' + str(r.decided_at) + ')' if r.leader else 'no leader'}"
                     for r in last.itertuples())
    stop = int(last["look"].iloc[0])
    how = ("every budget decided" if (last["leader"] != "").all() else "the last look reached, not every budget decided")
    return "\n".join(["", "## Sequential comparison", "",
                      f"{compare[0]} vs {compare[1]}, trials in the order they ran, looked at after each stated number of "
                      f"trials per group; {boundary} alpha-spending boundary, Bonferroni over the {last.shape[0]} budgets, "
                      f"{confidence:.0%} over all looks and budgets (syw.analysis.sequential).", "",
                      f"Stopped at look {stop} ({size} trials per group; {how}): {said}. Intervals: repeated confidence "
                      "intervals of the difference of the unbiased expected best of n, valid however the looks went "
                      "(sequential.csv).", ""])


def read_log(path: Path) -> list[dict[str, Any]]:
    """The lines of a study's ``sequential.ndjson`` (a line cut off by a kill is not counted)."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    complete = text[:text.rfind("\n") + 1]
    out = []
    for number, line in enumerate(complete.splitlines(), start=1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            raise DataError(f"{path}:{number}: not a JSON line") from None
    return out


def study_section(folder: Path) -> str:
    """The report's section for a records folder of a sequential study (its ``sequential.ndjson``): the rule's
    state at the last look logged, each budget's repeated interval and leader; '' for any other source."""
    lines = read_log(folder / LOG_NAME) if folder.is_dir() else []
    looks = [line for line in lines if not line.get("stopped")]
    if not looks:
        return ""
    last, stopped = looks[-1], next((line for line in lines if line.get("stopped")), None)
    a, b = last["compare"]
    state = (f"Its rule stopped: {stopped['why']}." if stopped else
             f"Its rule is still running: {len(looks)} looks done ({last['trials_per_family']} trials per family).")
    rows = [f"| {x['n']} | {_signed(x['estimate'])} | "
            + ("not tested yet" if x["rci"][0] is None else f"[{x['rci'][0]:+.4f}, {x['rci'][1]:+.4f}]")
            + f" | {x['leader'] or 'none'} | {x['decided_at'] or '-'} |" for x in last["budgets"]]
    return "\n".join(["", "## A sequential study", "",
                      f"{folder} is a study with a stopping rule ({LOG_NAME}): its verdict is the rule's, read at its looks "
                      "with repeated confidence intervals, valid however the looks went. The comparison above is a fixed-N "
                      "reading of every trial recorded, which the rule does not use. " + state, "",
                      f"| n | {a} minus {b} at look {last['look']} | repeated interval | leader | decided at look |",
                      "|---|---|---|---|---|", *rows, ""])


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def add_options(group: argparse._ArgumentGroup) -> None:
    """``--looks`` and ``--boundary`` (with ``--compare`` and ``--at``)."""
    group.add_argument("--looks", type=positive_int, nargs="+", metavar="K",
                       help="compare sequentially: trials per group at each look, increasing (with --compare and "
                            "--at), in the trials' order (their order column, else file order); the rule stops at "
                            "the first look deciding every budget; writes sequential.csv")
    group.add_argument("--boundary", choices=SPENDING, default="obrien-fleming",
                       help="--looks: the alpha-spending boundary (default obrien-fleming: strict early, close to the "
                            "fixed test at the last look; pocock: equal at every look)")


def from_args(args: argparse.Namespace, prepared: Prepared) -> pd.DataFrame | None:
    """The rows of ``--looks`` (None without it), refused when --compare or --at is missing."""
    if not args.looks:
        return None
    if not args.compare or not args.at:
        raise ValueError(f"{prepared.source}: --looks needs --compare A B and --at N ... (the budgets decided)")
    return sequential_rows(prepared, tuple(args.compare), args.at, args.looks, args.boundary, args.confidence)


__all__ = ["COLUMNS", "LOG_NAME", "add_options", "from_args", "ordered_scores", "read_log", "section", "sequential_rows",
           "study_section"]
