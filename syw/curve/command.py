"""``syw curve TRIALS``: expected validation performance (Dodge et al. 2019) of anyone's hyperparameter search.

``syw curve TRIALS`` (also ``python -m syw.curve.command TRIALS``) reads the trials, picks the group,
score and training-time columns, and writes the expected-max table (CSV), a figure (PNG + PDF) and
a Markdown report saying how each number is computed. Bad input is one ``error:`` line naming the
file (and line, column or key) with exit status 2.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from syw.analysis.compare import difference_table
from syw.analysis.curves import Options, band_bounds, cost_table
from syw.analysis.equivalence import equivalence
from syw.analysis.floors import Floor, sway_note
from syw.analysis.forecast import MODELS, VERDICT
from syw.analysis.statistic import MEAN
from syw.core.entry import Parser, check_writable, naming, positive_int, run_main
from syw.core.manifest import OVERRIDE_HELP, allow_unverified
from syw.core.paths import CONF_DIR
from syw.curve import sequential as sequential_option
from syw.curve.api import GROUP, Curves, curves
from syw.curve.arguments import fraction, relabelling, statistic, target
from syw.curve.prepare import Prepared, Reading, check_targets, prepare
from syw.curve.rows import POLICIES
from syw.curve.sources import SOURCES, kinds_help

DESCRIPTION = """\
The expected best validation score after n hyperparameter trials (Eq. 8 of Dodge et al. 2019,
"Show Your Work") for each model family in TRIALS. Writes, in --out: expected_max.csv (Eq. 8, its
SD, the unbiased estimate per group and n), curve.png and curve.pdf (every group's curve, the
+-1 SD shading clipped to the observed scores, optional bands, targets, forecast) and report.md
(budgets to reach the targets, crossovers, and how each number is computed). Bad input is one
'error:' line naming the file and line, column or key, exit status 2."""

EPILOG = f"""\
inputs (the first kind that recognises TRIALS reads it):
{kinds_help()}

columns (when not given): the score is a column named value, else the one numeric column named
like a validation score (val/valid/dev + acc/accuracy/f1/em/score..., best_ first); the groups are
the text column named like a model family (family, group, model, architecture, embedding, ...),
else one curve; the training time is the column named like duration/time_total_s/runtime, else
none. When the choice is not obvious, the error lists the candidates.

examples:
  syw curve trials.csv
  syw curve ~/ray_results/my_exp --target 0.9 --x time
  syw curve sqlite:///study.db --study tuning --bands --forecast 100
  syw curve sst5_cnn_lr_search.tsv --target "0.395=the paper's example" --out fig1/
"""


STUDY_HELP = "the Optuna study's name (default: every study of the storage, each a group); repeatable: each study is read"


def add_reading(p: argparse.ArgumentParser, study_help: str = STUDY_HELP) -> None:
    """The options saying how to read the trials, shared by ``syw curve`` and ``syw report TRIALS`` (``study_help``:
    what ``--study`` names there)."""
    what = p.add_argument_group("what to read")
    what.add_argument("--study", action="append", help=study_help)
    what.add_argument("--group", help="column naming each trial's model family; 'none': one curve of all trials; "
                      "'strategy': one curve per search strategy (random, TPE, ...), the sources its runs")
    what.add_argument("--metric", help="column holding the validation score")
    what.add_argument("--duration", help="column of training seconds per trial; 'none': no time")
    what.add_argument("--test", help="column of each trial's test score (of its selected epoch), for the test score "
                      "of the trial validation picks; default: the one named like test_<score>; 'none': none")
    what.add_argument("--allow-unverified", action="store_true", help=OVERRIDE_HELP)
    what.add_argument("--direction", choices=("max", "min"),
                      help="max: higher is better (default; an Optuna study's own direction when it has one)")
    what.add_argument("--pick", choices=("best", "last"), default="best",
                      help="Ray Tune: each trial's best (default) or last reported score")
    what.add_argument("--failed", choices=POLICIES, default="drop",
                      help="failed trials (a failed status; an empty, NaN or infinite score): left out (drop, "
                           "default), counted as their group's worst observed score (worst) or at --floor (floor); "
                           "the report counts them")
    what.add_argument("--floor", type=float, metavar="X",
                      help="the score of a predictor that learned nothing (chance accuracy; perplexity: the vocabulary "
                           "size): scores beyond it count at X, and the report counts them (docs/syw.md, floors)")


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="syw", description="Expected validation performance (Dodge et al. 2019) "
                                  "of anyone's hyperparameter search. syw curve --help for more.")
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("curve", help="expected-max curves, figure and report of a search's trials",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trials", nargs="+", help=f"a source of any kind below ({', '.join(k.name for k in SOURCES)}); "
                   "several: one figure (a curve per source, or per group)")
    add_reading(p)
    draw = p.add_argument_group("what to draw and compute")
    draw.add_argument("--statistic", type=statistic, default=MEAN, metavar="mean|median|q=Q",
                      help="the curve: mean (Eq. 8, default), median or another quantile of the best of n "
                           "(Lourie et al. 2024), each with its bands")
    draw.add_argument("--compare", nargs=2, metavar=("A", "B"),
                      help="the difference of group A's curve and B's, who leads where at --confidence (a figure "
                           "and difference.csv; done for every pair in the report, and drawn whenever there are two "
                           "groups)")
    draw.add_argument("--at", type=positive_int, nargs="+", metavar="N",
                      help="budgets stated before looking: the comparison tests each at --confidence (pointwise "
                           "claims); without it, the claims hold simultaneously over the budgets shown")
    draw.add_argument("--compare-method", choices=("jackknife", "bands"),
                      help="jackknife (the default for the mean curve): a studentized test of the unbiased estimates "
                           "(docs/syw.md gives its measured error and power); bands (the default with --statistic): "
                           "the crossed simultaneous bands, valid but rarely decisive")
    draw.add_argument("--x", choices=("trials", "time", "cost"), default="trials",
                      help="x axis: trials; training time as the paper draws it (n x the group's mean duration); "
                           "or cost: the expected best within a wall-clock budget, each trial taking its own time "
                           "(simulated; see the report)")
    draw.add_argument("--workers", type=positive_int, default=1,
                      help="--x cost: trials run this many at a time (default 1: one after another)")
    scale = draw.add_mutually_exclusive_group()
    scale.add_argument("--log-x", action="store_true", help="logarithmic x axis (the default with --x time, as the "
                       "paper draws training time)")
    scale.add_argument("--linear-x", action="store_true", help="linear x axis (the default with --x trials)")
    draw.add_argument("--no-sd", dest="sd", action="store_false", help="leave out the ±1 SD shading")
    draw.add_argument("--bands", action="store_true", help="draw simultaneous confidence bands (opda)")
    draw.add_argument("--confidence", type=fraction, default=0.95, help="the level of the bands and of the comparison's claims (default 0.95)")
    draw.add_argument("--bounds", type=float, nargs=2, metavar=("LOW", "HIGH"),
                      help="the score's possible range, which the bands need (default 0 1 when scores lie there)")
    draw.add_argument("--band-method", default="ks", choices=("dkw", "ks", "ld_equal_tailed", "ld_highest_density"),
                      help="opda's CDF band (default ks)")
    draw.add_argument("--target", type=target, action="append", default=[], metavar="VALUE[=WHY]",
                      help="a score to reach, with where it comes from; repeatable. The report gives each "
                           "group's budget to reach it, the figure a line")
    draw.add_argument("--forecast", type=positive_int, metavar="N", help="forecast the expected max up to n = N past "
                      "the trials there are (read docs/forecast_backtest.md first: not recommended)")
    draw.add_argument("--forecast-model", choices=MODELS, default="quadratic", help="default: quadratic (opda)")
    draw.add_argument("--forecast-level", type=fraction, default=0.9, help="the forecast interval's level")
    draw.add_argument("--forecast-resamples", type=int, default=100, help="bootstrap refits for the interval")
    sequential_option.add_options(draw)  # --looks, --boundary (issue 74)
    draw.add_argument("--margin", type=float, metavar="D",
                      help="with --compare A B and --at: certify that A's and B's mean curves are within +-D at each stated "
                           "budget at --confidence (two one-sided tests); where not certified the report says "
                           "'undecided with N trials', never 'tied'")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=Path, help="folder for expected_max.csv, curve.png, curve.pdf, report.md "
                     "(default: <trials>_syw/ beside the trials; for a storage URL, <study>_syw/ here)")
    out.add_argument("--no-figure", dest="figure", action="store_false",
                     help="write the tables and the report only: no curve.png/.pdf (and matplotlib is not imported)")
    out.add_argument("--latex", action="store_true", help="also write tables.tex: the expected-max table (Eq. 8 ± "
                     "SD at n = 1, 5, 10 and each N) and the comparisons, as booktabs LaTeX tabulars")
    out.add_argument("--title", help="the figure's title (default: Expected validation performance: <score>)")
    out.add_argument("--ylabel", help="the y axis label (default: Expected best <score>; an Optuna study's value "
                     "is the validation value)")
    out.add_argument("--label", type=relabelling, action="append", default=[], metavar="OLD=NEW",
                     help="call group OLD NEW in the figure; repeatable")
    out.add_argument("--ylim", type=float, nargs=2, metavar=("LOW", "HIGH"),
                     help="the y axis's range (default: what is drawn), e.g. to show a crossover a weak group squeezes")
    out.add_argument("--size", choices=("column", "page"),
                     help="the figure's width for a paper: column (3.3 in, one column of a two-column template) or "
                          "page (6.9 in, the full text width); fonts are embedded (TrueType)")
    return top


def _check(args: argparse.Namespace, prepared) -> None:
    """Options that contradict each other or the trials, refused before anything is computed."""
    check_targets(args.target, prepared)
    names = [g.name for g in prepared.groups]
    if unknown := [old for old, _ in args.label if old not in names]:
        raise ValueError(f"{prepared.source}: --label names {', '.join(map(repr, unknown))}, not a group here "
                         f"(groups: {', '.join(names)})")
    if args.ylim and not args.ylim[0] < args.ylim[1]:
        raise ValueError(f"{prepared.source}: --ylim {args.ylim[0]:g} {args.ylim[1]:g}: LOW must be below HIGH")
    if args.x == "cost" and not args.statistic.is_mean:
        raise ValueError(f"{prepared.source}: --x cost draws the mean best within a time; leave out --statistic "
                         f"{args.statistic.name} or --x cost")
    if args.forecast and not args.statistic.is_mean:
        raise ValueError(f"{prepared.source}: --forecast forecasts the mean (Eq. 8); leave out --statistic "
                         f"{args.statistic.name} or --forecast")
    if args.compare_method == "jackknife" and not args.statistic.is_mean:
        raise ValueError(f"{prepared.source}: --compare-method jackknife compares the mean curves (Eq. 8); with "
                         f"--statistic {args.statistic.name} use --compare-method bands")
    if args.at and (args.compare_method == "bands" or (args.compare_method is None and not args.statistic.is_mean)):
        raise ValueError(f"{prepared.source}: --at tests the mean curves at stated budgets (the jackknife "
                         "comparison); leave out --statistic and --compare-method bands, or --at")
    if args.x in ("time", "cost") and any(g.durations is None for g in prepared.groups):
        why = next((n for n in prepared.notes if "training time" in n), None)
        raise ValueError(f"{prepared.source}: --x {args.x} needs a training-time column"
                         f"{' (' + why + ')' if why else ''}; pass --duration COLUMN")


def _options(args: argparse.Namespace, maximize: bool) -> Options:
    return Options(maximize=maximize, statistic=args.statistic, confidence=args.confidence if args.bands else None,
                   bounds=tuple(args.bounds) if args.bounds else None, band_method=args.band_method,
                   forecast_to=args.forecast, forecast_model=args.forecast_model, forecast_level=args.forecast_level,
                   forecast_resamples=args.forecast_resamples, workers=args.workers if args.x == "cost" else None,
                   compare_method=args.compare_method or ("jackknife" if args.statistic.is_mean else "bands"),
                   at=tuple(args.at) if args.at else None, compare_confidence=args.confidence)


def _input_path(source: str) -> Path | None:
    """The file or folder a source reads: a storage URL's file, a Hydra multirun's folder (``FOLDER#SCORE_FILE``), a
    storage's (``STORAGE#STUDY``); None for a database server."""
    if source.startswith("sqlite:///"):
        return Path(source[len("sqlite:///"):])
    if source.startswith("journal:///"):
        return Path(source[len("journal://"):])
    if "://" in source:
        return None
    before, hash_, _ = source.rpartition("#")
    return Path(before) if hash_ and Path(before).exists() else Path(source)


def check_apart(folder: Path, sources: list[str]) -> None:
    """Refuse an output folder that is an input, holds one, or lies inside an input folder: writing there could
    replace an input (``syw curve ow/expected_max.csv --out ow``) or change what a folder holds."""
    out = folder.resolve()
    for given in filter(None, map(_input_path, sources)):
        path = given.resolve()
        how = ("is" if out == path else "holds" if path.parent == out
               else "lies inside" if path.is_dir() and out.is_relative_to(path) else None)
        if how:
            raise ValueError(f"{folder}: --out {how} the input {given}, which writing there could replace or change; "
                             "give another folder")


def _equivalence(result: Curves, args: argparse.Namespace) -> str:
    """The report's section for ``--margin``: where A and B are certified within +-D (``syw.analysis.equivalence.equivalence``)."""
    a, b = args.compare
    found = equivalence(result[a].scores, result[b].scores, args.margin, args.at, confidence=args.confidence,
                        names=(a, b), maximize=result.prepared.maximize)
    return (f"\n## Within a margin? (two one-sided tests, {args.confidence:.0%} at each stated budget)\n\n- "
            f"{found.sentence()}.\n")


def folder_for(args: argparse.Namespace, name: str, what: str = "curves") -> Path:
    """``--out``, else ``<trials>_syw`` beside one trial file or folder, else ``<name>_syw`` here (``what``: what
    goes there, for the error when it cannot); never an input's folder (:func:`check_apart`)."""
    where = Path(args.trials[0])
    folder = args.out or (Path(f"{name}_syw") if "://" in args.trials[0] or len(args.trials) > 1
                          else where.parent / f"{where.name if where.is_dir() else where.stem}_syw")
    check_apart(folder, args.trials)
    check_writable(folder, what)
    return folder


def _tables(result: Curves, diffs: list, options: Options, folder: Path) -> list[Path]:
    """The curves (and the differences, the cost curves) as CSV, the groups in column ``group``; returns the
    files written."""
    folder.mkdir(exist_ok=True)
    written = [folder / "expected_max.csv"]
    result.table().to_csv(written[0], index=False, float_format="%.10g")
    if diffs:
        written.append(folder / "difference.csv")
        difference_table(diffs).to_csv(written[-1], index=False, float_format="%.10g")
    if options.workers:
        written.append(folder / "cost_curve.csv")
        cost_table(result.curves, GROUP).to_csv(written[-1], index=False, float_format="%.10g")
    return written


def _figures(args: argparse.Namespace, result: Curves, diffs: list, bounds, folder: Path, cost: bool) -> list[Path]:
    """The curve figure (or the cost figure) and, for two groups or ``--compare``, the difference figure."""
    from syw.curve.figure import draw_cost, draw_curves, draw_difference  # matplotlib only when drawing

    prepared, curves = result.prepared, result.curves
    band_label = (f"dashed: {args.confidence:.0%} simultaneous confidence band (opda, {args.band_method}, "
                  f"scores in [{bounds[0]:g}, {bounds[1]:g}])" if bounds else None)
    forecast_label = (f"dotted: {args.forecast_model} forecast past N, shaded {args.forecast_level:.0%} "
                      "bootstrap interval (not recommended: see report)" if args.forecast else None)
    if cost:
        paths = draw_cost(curves, folder / "curve", title=args.title or result.title(), ylabel=args.ylabel or
                          f"Expected best {result.metric_name()} by then", sd=args.sd, targets=args.target,
                          maximize=prepared.maximize)
    else:
        paths = draw_curves(curves, folder / "curve", title=args.title or result.title(),
                            ylabel=args.ylabel or result.ylabel(), x=args.x,
                            log_x=log_axis(args), sd=args.sd, targets=args.target, maximize=prepared.maximize,
                            band_label=band_label, forecast_label=forecast_label, size=args.size or "default",
                            ylim=tuple(args.ylim) if args.ylim else None, labels=dict(args.label))
    if diffs and (args.compare or len(curves) == 2):
        what = "expected best" if args.statistic.is_mean else f"{args.statistic.name} of the best"
        paths += draw_difference(diffs[0], folder / "difference", ylabel=f"Difference in {what} of n",
                                 maximize=prepared.maximize)
    return paths


def log_axis(args: argparse.Namespace) -> bool:
    """Whether the x axis is logarithmic: ``--log-x`` or ``--linear-x`` as said, else for training time (the
    paper's Figures 2 and 4 draw time on a log axis) and not for trials."""
    return args.log_x or (not args.linear_x and args.x == "time")


def stated_floor(sources: list[str]) -> Floor | None:
    """The floor of the suite's study whose records folder every source is (``results/<study>``, the study's
    ``study.floor`` in conf/study/<study>.yaml, read with PyYAML: the light install has no omegaconf), else None."""
    import yaml

    floors = set()
    for source in sources:
        folder, config = Path(source), CONF_DIR / "study" / f"{Path(source).name}.yaml"
        if not (folder.is_dir() and any(folder.glob("*.jsonl")) and config.is_file()):
            return None
        floor = (yaml.safe_load(config.read_text()).get("study") or {}).get("floor")
        if floor is None:
            return None
        floors.add((float(floor["value"]), f"{floor['rule']}: study.floor of conf/study/{config.name}"))
    return Floor(*floors.pop()) if len(floors) == 1 else None


def reading(args: argparse.Namespace) -> Reading:
    """The options of :func:`add_reading`, as one :class:`syw.curve.prepare.Reading`."""
    return Reading(metric=args.metric, group=args.group, duration=args.duration, direction=args.direction,
                   pick=args.pick, failed=args.failed, test=args.test,
                   floor=Floor(args.floor, "--floor") if args.floor is not None else stated_floor(args.trials),
                   studies=tuple(args.study) if args.study else None)


def read_args(args: argparse.Namespace) -> Prepared:
    """The trials as the options of :func:`add_reading` say to read them (``syw.curve.prepare.prepare``)."""
    with allow_unverified(args.allow_unverified):  # a study's records folder is checked against its manifests
        return prepare(args.trials, reading(args))


def curve(args: argparse.Namespace) -> int:
    """``syw curve``: read the trials, check the options, compute (``syw.curve.api``), write the tables,
    figures and report."""
    if args.out:
        check_apart(args.out, args.trials)  # before reading: a wrong --out costs nothing
    prepared = read_args(args)
    _check(args, prepared)
    looks = sequential_option.from_args(args, prepared)  # refused before anything is written
    if args.margin is not None and not (args.compare and args.at and args.margin > 0 and args.statistic.is_mean):
        raise ValueError(f"{prepared.source}: --margin {args.margin:g} needs --compare A B and --at N ..., a positive "
                         "margin and the mean curve (no --statistic)")
    options = _options(args, prepared.maximize)
    bounds = band_bounds([g.scores for g in prepared.groups], options, prepared.source) if args.bands else None
    folder = folder_for(args, prepared.name)
    if args.forecast:
        print(f"fitting the {args.forecast_model} forecast ({args.forecast_resamples} bootstrap refits per group) ...",
              file=sys.stderr, flush=True)
    result = curves(prepared, options=options)
    swayed = [n for c in result.curves if args.statistic.is_mean and (n := sway_note(c.name, c.scores, c.sway))]
    diffs, notes = result.differences(tuple(args.compare) if args.compare else None)
    notes = swayed + notes
    written = _tables(result, diffs, options, folder)
    if args.latex:
        written.append(folder / "tables.tex")
        written[-1].write_text(result.latex(differences=diffs))
    if looks is not None:
        written.append(folder / "sequential.csv")
        looks.to_csv(written[-1], index=False, float_format="%.10g")
    paths = []
    if args.figure:
        from syw.curve.style import drawable  # matplotlib only when drawing

        notes += [f"group {name!r} is labelled {label!r} in the figure: no installed font draws its characters "
                  "(a font such as Noto Sans CJK would)" for name, label in drawable(result.names)[0].items()
                  if label != name]
        paths = _figures(args, result, diffs, bounds, folder, cost=bool(options.workers))
    files = list(map(str, written + paths)) + [str(folder / "report.md")]
    text = replace(result, notes=notes).report(args.target, differences=diffs, files=files)
    if looks is not None:  # before "How each number", so that it is printed too
        head, sep, tail = text.partition("\n## How each number")
        text = head + sequential_option.section(looks, tuple(args.compare), args.boundary, args.confidence) + sep + tail
    for source in args.trials:  # a suite study with a stopping rule: its verdict is the rule's
        if studied := sequential_option.study_section(Path(source)):
            head, sep, tail = text.partition("\n## How each number")
            text = head + studied + sep + tail
    if args.margin is not None:
        head, sep, tail = text.partition("\n## How each number")
        text = head + _equivalence(result, args) + sep + tail
    (folder / "report.md").write_text(text)
    for note in prepared.notes + notes:
        print(f"note: {prepared.source}: {note}", file=sys.stderr)
    print(text.split("## How each number")[0].rstrip())
    if args.forecast:
        print(f"\nforecast: {VERDICT}", file=sys.stderr)
    print("\nwrote " + "\n      ".join(files))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    with naming(args.trials[0]):
        return curve(args)


if __name__ == "__main__":
    sys.exit(run_main(main))
