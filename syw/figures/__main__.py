"""``syw fig 1|2|3|4|5``, ``syw budgets|report [--source ours|paper] [--variant as_run]``;
``syw sensitivity|seeds --study S [--family F]`` (the score against each searched
hyperparameter, :mod:`syw.figures.sensitivity`; seed reruns' spread beside family gaps, :mod:`syw.figures.seeds`).
``fig5`` is case study 5 (Melis et al. 2018, :mod:`syw.figures.fig5`): our records only, no variant.

Missing or malformed records (a study or family without records, an empty family file, a
trial file with the wrong checksum, a line of a records file that is not JSON, a record that does not
match its manifest, :mod:`syw.core.manifest`) are one ``error: <file>: ...`` line on stderr and exit
status 2; nothing is drawn or written then.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from syw.core.entry import Parser, naming, run_main
from syw.core.errors import DataError, DataMissingError
from syw.core.manifest import OVERRIDE_HELP, require_verified
from syw.core.paths import REPO
from syw.core.records import check_complete
from syw.experiments.study import load_study
from syw.figures import budgets, fig5, report, seeds, sensitivity
from syw.figures.as_run import compare_fig1
from syw.figures.plot import draw
from syw.figures.sources import (
    floor_text,
    floored_counts,
    from_paper,
    from_records,
    has_records,
    paper_floor_text,
    study_rows,
    study_with_records,
)
from syw.figures.specs import FIGURES, FigureSpec

TITLE_WIDTH = 60  # characters of a title line that fit over the plot at its 9-point title font

OUT = REPO / "figures"
# Wall time of a full study on the 2-core machines measured, AMD EPYC to Intel Xeon, shown before
# `make fig1` runs one (docs/performance.md; the as-run studies' lower ends are scaled from sst5's).
STUDY_MINUTES = {"sst5": "35-65", "sst5_as_run": "35-65", "sst5_as_run_random": "35-70", "sst5_as_run_replay": "25-45"}


def study_of(spec: FigureSpec, variant: str | None, results: Path | None = None) -> str:
    """The study a figure draws: ``<study>_<variant>``, else the full study, else (when the full
    study has no records in ``results`` and the reduced one has) the reduced study."""
    if variant:
        return f"{spec.study}_{variant}"
    if results is not None and spec.reduced and not has_records(results, spec.study) and has_records(results, spec.reduced):
        return spec.reduced
    return spec.study


def groups_for(spec: FigureSpec, source: str, variant: str | None, results: Path, run_missing: bool):
    if source == "paper":
        return from_paper(spec, labels=spec.labels)
    study = study_of(spec, variant, results)
    if run_missing:  # the runner runs the trials without a record (all of them, or the rest of a stopped run)
        if not has_records(results, study):
            minutes = STUDY_MINUTES.get(study)
            eta = f"{minutes} minutes on a 2-core CPU machine, depending on the CPU" if minutes else "a long time on a CPU"
            print(f"No trial records in {results / study}: running the study first ({eta}).\n"
                  f"  syw run study={study}", flush=True)
        done = subprocess.run([sys.executable, "-m", "syw", "run", f"study={study}", f"paths.results_dir={results}"], cwd=REPO)
        if done.returncode:  # the runner has said why (e.g. which data file to fetch, and where)
            raise SystemExit(done.returncode)
    if not variant:  # neither the full nor the reduced study has records: say so, naming both
        study_with_records(results, spec.study, spec.reduced)
    return from_records(study, results, labels=spec.labels)


def paper_or_why(spec: FigureSpec) -> list | str:
    """The authors' groups of a figure, or why they cannot be read (their files are not committed)."""
    try:
        return from_paper(spec)
    except (DataMissingError, DataError, FileNotFoundError) as err:
        return str(err).replace(f"{REPO}/", "")


WORDS = {
    "fig": "Draw a figure of the paper (1 to 5) from our trial records or, with --source paper, from the authors' "
           "published trials, as PDF and PNG in --out.",
    "budgets": "Write the budget tables of Figures 1-5: the trials (and training time) each family needs to reach the "
               "scores the paper reports, from our records or, with --source paper, the authors' trials.",
    "report": "Write a study's reporting checklist (section 5 of the paper: the search, its budget and the expected "
              "validation performance) in Markdown and LaTeX from its records.",
    "sensitivity": "Draw a study's validation score against each hyperparameter it searched, a figure per family.",
    "seeds": "Write the spread of a study's seed reruns (syw reseed) beside the gaps between its families.",
}
FIGURE_WORDS = ("fig1", "fig2", "fig3", "fig4", "fig5")


def _figure_number(text: str) -> str:
    """``1`` or ``fig1`` -> ``fig1``; anything else is an error listing the figures."""
    name = f"fig{text.removeprefix('fig')}"
    if name in FIGURE_WORDS:
        return name
    listing = ", ".join([f"{n} ({spec.dataset})" for n, spec in FIGURES.items()] + ["5 (PTB, Melis et al. 2018)"])
    raise argparse.ArgumentTypeError(f"there is no figure {text!r}; the figures are {listing}")


def parser(what: str) -> argparse.ArgumentParser:
    """The options of ``syw <what>`` (``fig``, ``budgets``, ...), each saying what it is for."""
    p = Parser(prog=f"syw {what}", description=WORDS[what])
    p.set_defaults(study=None, family=None, check=False, source="ours", variant=None, out=OUT, run_missing=False)
    if what == "fig":
        p.add_argument("figure", type=_figure_number, metavar="N", help="the figure: 1, 2, 3, 4 or 5")
    if what in ("report", "sensitivity", "seeds"):
        p.add_argument("--study", required=what in ("sensitivity", "seeds"),
                       help={"report": "the study (default: Figure 1's, or its variant's)"}.get(what, "the study"))
    if what == "sensitivity":
        p.add_argument("--family", help="only this family of the study")
    if what in ("fig", "budgets", "report"):
        p.add_argument("--source", choices=["ours", "paper"], default="ours",
                       help="our trial records (default) or the authors' published trials")
        p.add_argument("--variant", help="a search-space variant, e.g. as_run (the study <study>_<variant>)")
    p.add_argument("--results", type=Path, default=REPO / "results", help="the folder of our trial records")
    p.add_argument("--out", type=Path, default=OUT, help="the folder written to (default: figures/)")
    if what == "fig":
        p.add_argument("--run-missing", action="store_true", help="run the study first when it has no records")
    p.add_argument("--allow-unverified", action="store_true", help=OVERRIDE_HELP)
    return p


def main(argv: list[str] | None = None) -> int:
    """``syw fig N``, ``syw budgets``, ... (also ``python -m syw.figures fig1``): draw or write what is asked."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("fig") and argv[0] != "fig":
        argv = ["fig", *argv]  # fig1 is fig 1
    if argv[:1] == ["fig"] and len(argv) > 1 and argv[1] in WORDS:
        argv = argv[1:]  # syw fig budgets is syw budgets
    if not argv or argv[0] not in WORDS:
        top = Parser(prog="python -m syw.figures", description="The paper's figures, budget tables, "
                                      "reporting checklist and READMEs' numbers, from trial records.")
        top.add_argument("what", choices=list(WORDS), help="; ".join(f"{w}: {d}" for w, d in WORDS.items()))
        top.parse_args(argv[:1])  # no word, or an unknown one: argparse's usage and error line, exit status 2
    args = parser(argv[0]).parse_args(argv[1:])
    args.what = args.figure if argv[0] == "fig" else argv[0]
    check_complete(args.results)  # what is drawn or written counts every record: one that does not parse stops it
    require_verified(args.results, allow=args.allow_unverified)  # and every record as written: an edited one stops it
    with naming(args.out):  # an OS error that names no file is about what is written there
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Draw or write what ``args.what`` names; bad input raises (:func:`syw.core.entry.run_main`)."""
    if args.what == "sensitivity":
        written = sensitivity.write(args.study, args.results, args.out, args.family)
    elif args.what == "seeds":
        written = [seeds.write(args.study, args.results, args.out)]
    elif args.what == "report":
        written = _report(args)
    elif args.what == "budgets":
        written = _budgets(args)
    elif args.what == "fig5":
        written = _fig5(args)
    else:
        written = _figure(args)
    for path in written:
        print(f"wrote {path}")
    return 0


def _tag(args: argparse.Namespace) -> str:
    return args.source if not args.variant else f"{args.source}_{args.variant}"


def _report(args: argparse.Namespace) -> list[Path]:
    """A study's reporting checklist, Markdown and LaTeX."""
    study = args.study or study_of(FIGURES[1], args.variant)
    md, tex = report.build(study, args.source, args.results)
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix, text in ((".md", md), (".tex", tex)):
        path = args.out / f"report_{study}_{args.source}{suffix}"
        path.write_text(text)
        written.append(path)
    return written


def _budgets(args: argparse.Namespace) -> list[Path]:
    """The budget tables of every figure with records; a figure without them is skipped, saying why."""
    sections, skipped, theirs, floors = [], {}, {}, {}
    for spec in FIGURES.values():
        try:
            groups = groups_for(spec, args.source, args.variant, args.results, False)
            ours = args.results if args.source == "ours" else None  # the authors' trials are the full study's
            study = study_of(spec, args.variant, ours)
            sections.append((replace(spec, study=study), groups))
            if args.source == "paper":  # the authors' scores count at our study's floor too: said, as for ours
                floor = paper_floor_text(spec)
                floor = floor and f"The authors' published scores are floored by our study's rule. {floor}"
            else:
                floor = floor_text(study, floored_counts(study_rows(study, args.results)[0]))
            if floor:
                floors[spec.number] = floor
            if args.source == "ours":
                theirs[spec.number] = paper_or_why(spec)
        except FileNotFoundError as err:
            skipped[spec.number] = str(err).replace(f"{REPO}/", "")  # committed tables name repo paths
            print(f"skipping figure {spec.number}: {err}", file=sys.stderr)
    case5 = args.source == "ours" and not args.variant  # Melis et al. published no trials; ptb_melis has no variants
    if not sections and not (case5 and any(has_records(args.results, s) for s in fig5.STUDIES)):
        raise FileNotFoundError(f"{args.results}: no records for any figure ({args.source})")
    written = list(budgets.write(sections, _tag(args), args.out, skipped, theirs, floors)) if sections else []
    return written + ([fig5.write_budgets(args.results, args.out)] if case5 else [])


def _fig5(args: argparse.Namespace) -> list[Path]:
    """Case study 5 from our records: Melis et al. published no trials, and the study has no variants."""
    if args.source != "ours" or args.variant:
        raise ValueError("fig5: Melis et al. (2018) published no trial records and ptb_melis has no variants: "
                         "draw it from our records (no --source paper, no --variant)")
    return fig5.write(args.results, args.out)


def _figure(args: argparse.Namespace) -> list[Path]:
    """One figure of the paper (``args.what`` is ``fig<n>``) from our records or the authors' trials."""
    spec = FIGURES[int(args.what[3:])]
    groups = groups_for(spec, args.source, args.variant, args.results, args.run_missing)
    written = []
    if args.what == "fig1" and args.variant == "as_run" and args.source == "ours":
        written += compare_fig1(args.results, args.out)
    study = study_of(spec, args.variant, args.results)
    who = "the authors' published trials" if args.source == "paper" else f"our records ({study})"
    tag = _tag(args)
    stem = args.what if tag == "ours" else f"{args.what}_{tag.removeprefix('ours_')}"
    title = f"{spec.dataset}: Figure {spec.number} from {who}"
    reduced = load_study(study).reduced if args.source == "ours" else None
    if reduced:  # what was reduced, in the figure itself
        title += "\n" + "\n".join(textwrap.wrap(reduced, TITLE_WIDTH))
    if args.source == "ours" and study == spec.reduced:  # the paper's axes span GPU days; a reduced study's, CPU minutes to hours
        spec = spec.on_own_axes()
    written += draw(spec, groups, title, args.out / stem)
    if args.source == "ours":
        floor = floor_text(study, floored_counts(study_rows(study, args.results)[0]))
    else:
        floor = paper_floor_text(spec)
    if floor:  # which trials count at the metric's floor, in the caption
        with (args.out / f"{stem}_caption.md").open("a") as caption:
            caption.write(f"- {floor}\n")
    return written

if __name__ == "__main__":
    sys.exit(run_main(main))
