"""Replay ``sst5_as_run_200`` (LR vs the CNN as run, 200 trials each) as if it had been run group-sequentially
(issue 74): ``python -m benchmarks.sequential_replay``.

The rule, stated here after the study ran (so this is a retrospective illustration, not the study's verdict,
which stays the one committed in ``conf/study/sst5_as_run_200.yaml``): the study's three claims, at the budgets
n = 1, 5 and 20 (LR leads at 1 and 5, the CNN at 20), tested two-sided at 95% by
:func:`syw.analysis.sequential.sequential` after every 20 trials per family (20, 40, ..., 200; also every 10),
O'Brien-Fleming-type spending, the trials in the order the tuner drew them (trial index). Two adjustments over
the three budgets: Bonferroni (any wrong leader at most 5%) and none (each claim at 95% on its own, as the
committed rule's pointwise claims). How many of the committed rule's claims came out as it states them is counted at the look
the rule stops at. A claim at n = 20 needs 107 trials per group (``limit_budget``), so n = 20 is tested from
120 (every 20) or 110 (every 10) trials on. Printed: every look of the first design, then for each design
(Pocock-type and the naive rule, every look at 95%, beside) the look at which each claim was decided.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.inference import write_block
from syw.analysis.sequential import Design, SequentialResult, sequential
from syw.core.entry import run_main
from syw.core.paths import REPO
from syw.figures.sources import study_rows
from syw.pages.verdicts_fig1_200 import BUDGETS, EARLY, LATE, STUDY

STEPS = (20, 10)  # trials per family between looks
DOC = REPO / "docs" / "syw.md"


def scores(results: Path) -> dict[str, np.ndarray]:
    """Each family's ok scores in trial-index order (the figures' reader: floors applied, records checked)."""
    parts, failed = study_rows(STUDY, results)
    if failed:
        raise ValueError(f"{results / STUDY}: failed trials ({failed}) would leave gaps in the trial order")
    return {name: part.sort_values("trial")["value"].to_numpy(float) for name, part in parts.items()}


def lines(result: SequentialResult) -> list[str]:
    """A Markdown table of every look and budget, then when each claim was decided."""
    out = ["| look | trials per family | n | LR minus CNN | t | boundary | repeated 95% interval | leader |",
           "|---|---|---|---|---|---|---|---|"]
    for r in result.rows:
        est = "-" if np.isnan(r.estimate) else f"{r.estimate:+.4f}"  # n above the look's trials: not defined
        t = "-" if np.isnan(r.statistic) else f"{r.statistic:+.2f}"
        bound = "-" if not np.isfinite(r.boundary) else f"{r.boundary:.2f}"
        ci = "-" if not np.isfinite(r.low) else f"[{r.low:+.4f}, {r.high:+.4f}]"
        out.append(f"| {r.look} | {r.trials_per_group} | {r.n} | {est} | {t} | {bound} | {ci} | {r.leader or 'none'} |")
    return out


def _when(result: SequentialResult, n: int) -> str:
    r = result.decisions()[n]
    if r.leader is None:
        return f"none by {r.trials_per_group}"
    return f"{r.leader} at {result.design.looks[r.decided_at - 1]}"


def summary(results: list[tuple[str, SequentialResult]]) -> list[str]:
    """Per design: the trials per family at which each claim was decided, the stop, and how many claims of the committed
    rule came out as it states them (its verdict is the study's own, in docs/verdicts.md, not this replay's)."""
    out = ["| design | " + " | ".join(f"n = {n}: leader at trials" for n in BUDGETS) + " | stops at | claims as the rule states |",
           "|---|" + "---|" * (len(BUDGETS) + 2)]
    for name, result in results:
        leaders = {n: r.leader for n, r in result.decisions().items()}
        held = sum(leaders[n] == who for n, who in zip(BUDGETS, (EARLY, EARLY, LATE)))
        out.append(f"| {name} | " + " | ".join(_when(result, n) for n in BUDGETS)
                   + f" | {result.trials_used} | {held} of {len(BUDGETS)} |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sequential_replay", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "results", help="the results folder (default: the repository's)")
    parser.add_argument("--write", action="store_true", help=f"also write the summary into {DOC} (between its sequential-replay markers)")
    args = parser.parse_args(argv)
    data = scores(args.results)
    size = min(x.size for x in data.values())
    results = []
    for step in STEPS:
        for boundary in ("obrien-fleming", "pocock", "naive"):
            for adjust in ("bonferroni", "none"):
                design = Design(tuple(range(step, size + 1, step)), BUDGETS, 0.95, boundary, adjust)
                name = f"every {step}, {boundary}, {adjust} ({design.alpha:.4f} per n)"
                results.append((name, sequential(data[EARLY], data[LATE], design, names=(EARLY, LATE))))
    first_name, first = results[0]
    print(f"## {STUDY} replayed: {first_name}, LR minus CNN\n")
    print("\n".join(lines(first)) + "\n")
    print("## When each claim was decided (trials per family), by design\n")
    table = "\n".join(summary(results))
    print(table)
    if args.write:
        write_block(DOC, table, "python -m benchmarks.sequential_replay", marker="sequential-replay")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
