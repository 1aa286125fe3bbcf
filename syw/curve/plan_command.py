"""``syw plan TRIALS --compare A B --at N ...``: how many trials per group would decide A against B at budget n.

The trials at hand are a pilot: for each pre-stated budget n, the fewest trials per group at which the pointwise
comparison of ``syw curve --compare A B --at n`` (95%, two-sided) names the leader with the stated power (80%),
simulated from the pilot (``syw.analysis.power``: bootstrap resamples of each group's trials by default; its
calibration on public searches is in docs/syw.md). Bad input is one ``error:`` line, exit status 2.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from syw.analysis.power import CAP, DRAWS, METHODS
from syw.core.entry import Parser, check_writable, naming, positive_int, run_main
from syw.curve.api import curves
from syw.curve.arguments import fraction
from syw.curve.command import add_reading, read_args
from syw.curve.sources import SOURCES

DESCRIPTION = """\
How many trials per group would decide group A against group B at each budget n you state (--at): the
fewest K at which the pointwise comparison of `syw curve --compare A B --at n` names the leader with
probability --power (default 0.8) at --confidence (default 0.95), simulated from TRIALS as a pilot.
Also the largest budget the pilot itself can speak for. Writes plan.csv with --out."""


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="syw plan", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="example:\n  syw plan pilot.csv --compare cnn lr --at 1 5 20 --out plan/")
    p.add_argument("trials", nargs="+", help=f"the pilot's trials: a source of any kind syw curve reads "
                   f"({', '.join(k.name for k in SOURCES)})")
    add_reading(p)
    what = p.add_argument_group("the comparison to plan")
    what.add_argument("--compare", nargs=2, metavar=("A", "B"), required=True, help="the two groups")
    what.add_argument("--at", type=positive_int, nargs="+", metavar="N", required=True,
                      help="the budgets stated before the search, each tested at --confidence")
    what.add_argument("--power", type=fraction, default=0.8, help="the chance of deciding to plan for (default 0.8)")
    what.add_argument("--confidence", type=fraction, default=0.95, help="the level of each claim (default 0.95)")
    what.add_argument("--method", choices=METHODS, default="bootstrap",
                      help="bootstrap (default): each simulated search drawn from a bootstrap resample of the pilot, "
                           "averaging over its uncertainty; resample: the pilot taken as the truth (optimistic)")
    what.add_argument("--cap", type=positive_int, default=CAP, help=f"the most trials per group tried (default {CAP})")
    what.add_argument("--draws", type=positive_int, default=DRAWS, help=f"simulated searches per size (default {DRAWS})")
    what.add_argument("--seed", type=int, default=0, help="the simulation's seed (default 0)")
    p.add_argument("--out", type=Path, help="folder for plan.csv (default: print only)")
    return p


def _line(row) -> str:
    if row.trials_per_group is None or (isinstance(row.trials_per_group, float) and math.isnan(row.trials_per_group)):
        why = (f"past the {row.pilot_limit} the pilot speaks for" if row.n > row.pilot_limit
               else "no size up to the cap reaches the power (the pilot is not sure of its leader)")
        return f"n = {row.n}: undecidable by plan ({why})"
    return (f"n = {row.n}: about {int(row.trials_per_group)} trials per group for {row.leader} to be named "
            f"(power {row.power:.2f})")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    with naming(args.trials[0]):
        if args.out is not None:
            check_writable(args.out, "plan")
        result = curves(read_args(args))
        if unknown := [name for name in args.compare if name not in result.names]:
            raise ValueError(f"{result.prepared.source}: --compare names {', '.join(map(repr, unknown))}, not a group "
                             f"here (groups: {', '.join(result.names)})")
        if args.compare[0] == args.compare[1]:
            raise ValueError(f"{result.prepared.source}: --compare needs two different groups")
        table = result.plan(*args.compare, args.at, power=args.power, cap=args.cap, method=args.method,
                            draws=args.draws, seed=args.seed)
        print(f"To decide {args.compare[0]} against {args.compare[1]} at {args.confidence:.0%} with power "
              f"{args.power:.0%}; simulated searches {table.method.iloc[0]}:")
        for row in table.itertuples():
            print("  " + _line(row))
        if args.out is not None:
            args.out.mkdir(exist_ok=True)
            table.to_csv(args.out / "plan.csv", index=False, float_format="%.6g")
            print(f"\nwrote {args.out / 'plan.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
