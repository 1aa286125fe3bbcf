"""``syw report``: the reporting checklist of Dodge et al. (2019), section 5, for anyone's trials or the suite's studies.

``syw report TRIALS`` reads the trials as ``syw curve`` does (the same sources and reading options) and writes
the checklist filled from them (``syw.curve.checklist``) as checklist.md, and with --latex checklist.tex,
in the folder ``syw curve`` would use. Without TRIALS it is the suite's own report of a study from its
records and configs (``syw.figures.report``, the full suite, which ``syw.cli`` hands in as ``suite``). Bad input
is one ``error:`` line, exit status 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from syw.core.entry import Parser, naming, run_main
from syw.curve.api import curves
from syw.curve.command import add_reading, check_apart, folder_for, read_args

DESCRIPTION = """\
The reporting checklist of Dodge et al. (2019), section 5, filled from the trials in TRIALS: the number of
trials per group, the bounds of each hyperparameter as seen, the best assignment per group, the expected
best validation score at n = 1, 5, 10 and N (Eq. 8), the search strategy as read and the time per trial;
and the list of what only you can state (hardware, the search space as specified, the splits, the code).
TRIALS are any sources syw curve reads. Writes checklist.md (and with --latex checklist.tex) in --out.
Without TRIALS, the suite's own report of one of its studies, from its records (the full suite)."""

EPILOG = """\
examples:
  syw report trials.csv --latex
  syw report sqlite:///study.db --study tuning --param params.lr --param params.layers
  syw report --study sst5_as_run        (the suite's study, from results/)
"""
SUITE = ("source", "variant", "results")  # options of the suite's report only


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="syw report", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trials", nargs="*", metavar="TRIALS", help="a .csv/.tsv/.jsonl file, a Ray Tune experiment folder or an Optuna "
                   "storage, as for syw curve; none: the suite's report of --study")
    add_reading(p, study_help="with TRIALS, an Optuna study of the storage (default: every study, each a group; "
                "repeatable), as for syw curve; without TRIALS, the suite's study whose report is written (e.g. sst5, "
                "sst5_as_run; default: Figure 1's)")
    out = p.add_argument_group("output")
    out.add_argument("--param", action="append", metavar="COLUMN", help="a column holding a hyperparameter; "
                     "repeatable (default: the params.*/config.* columns, else every column not named like a score, "
                     "a time or bookkeeping)")
    out.add_argument("--out", type=Path, help="folder for checklist.md (default: <trials>_syw/ beside the trials, as "
                     "syw curve; the suite's report: figures/)")
    out.add_argument("--latex", action="store_true", help="also write checklist.tex (the items, the hyperparameter "
                     "tables and the expected-max table, booktabs)")
    suite = p.add_argument_group("the suite's studies (without TRIALS; --study names the study)")
    suite.add_argument("--source", choices=["ours", "paper"], help="our trial records (default) or the authors' "
                       "published trials")
    suite.add_argument("--variant", help="a search-space variant, e.g. as_run (the study <study>_<variant>)")
    suite.add_argument("--results", type=Path, help="the folder of our trial records")
    return p


def _suite(args: argparse.Namespace, suite: Callable[[list[str]], int] | None) -> int:
    """The suite's report of a study (``syw.figures.__main__ report``, handed in by ``syw.cli``), with the options given."""
    if suite is None:
        raise ValueError("syw report: without TRIALS this is the suite's report of a study: run it as `syw report "
                         "--study NAME` with the full suite (pip install '.[suite]')")
    given = [("--study", args.study[0] if args.study else None), *((f"--{k}", getattr(args, k)) for k in SUITE),
             ("--out", args.out)]
    if args.study and len(args.study) > 1:
        raise ValueError("syw report: the suite's report is of one study: give --study once")
    return suite([str(part) for key, value in given if value is not None for part in (key, value)])


def report(args: argparse.Namespace) -> int:
    """Read the trials, fill the checklist, write it (and print it)."""
    if given := [f"--{k}" for k in SUITE if getattr(args, k) is not None]:
        raise ValueError(f"syw report: {', '.join(given)}: only for the suite's studies, without TRIALS "
                         f"({args.trials[0]} was given)")
    if args.out:
        check_apart(args.out, args.trials)  # before reading: a wrong --out costs nothing
    prepared = read_args(args)
    folder = folder_for(args, prepared.name, "checklist")
    checklist = curves(prepared).checklist(args.param)
    folder.mkdir(exist_ok=True)
    written = [folder / "checklist.md"]
    written[0].write_text(checklist.markdown())
    if args.latex:
        written.append(folder / "checklist.tex")
        written[-1].write_text(checklist.latex())
    print(checklist.markdown().rstrip())
    print("\nwrote " + "\n      ".join(map(str, written)))
    return 0


def main(argv: list[str] | None = None, suite: Callable[[list[str]], int] | None = None) -> int:
    """``syw report [TRIALS] ...``: the checklist of TRIALS, or without them the suite's report of a study
    (``suite``: the suite's report command, given the options)."""
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not args.trials:
        if args.param or args.latex:
            raise ValueError("syw report: --param and --latex are for TRIALS (the suite's report always writes "
                             "Markdown and LaTeX)")
        return _suite(args, suite)
    with naming(args.trials[0]):
        return report(args)


if __name__ == "__main__":
    sys.exit(run_main(main))
