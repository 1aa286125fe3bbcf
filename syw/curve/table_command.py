"""``syw table RECORDS [--group COL] [--metric COL] [--duration COL]``: print and write the curve table.

The group and score columns are picked as ``syw curve`` picks them (``syw.curve.columns``) when not
given: ``family`` and ``value`` where the file has them, else the obvious one (the authors' TSVs: ``model``
and ``best_validation_accuracy``), said on stderr; a file with no group column is one group.

For a figure, a report and any input (Ray Tune folders, Optuna studies): ``syw curve``.

Bad input (a missing or malformed records file, an unknown column, a metric that is not a
number, an output folder that does not exist) is one ``error: <file>: ...`` line on stderr
and exit status 2; nothing is written then.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from syw.core.entry import Parser, naming, positive_int, run_main, write_output
from syw.curve.columns import pick_group, pick_metric
from syw.curve.table import curve_table, read_records


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    parser = Parser(
        prog="syw table",
        description="Expected maximum validation performance (Dodge et al. 2019, Eq. 8) per group of trial records. "
                    "For a figure, a report, Ray Tune folders and Optuna studies: syw curve --help.",
    )
    parser.add_argument("records", type=Path, help="a .csv, .tsv or .jsonl file of trial records")
    parser.add_argument("--group", default=None, help="column naming the model family (default: family, else picked as "
                        "syw curve picks it; 'none': one group)")
    parser.add_argument("--metric", default=None, help="column holding the validation score (default: value, else picked "
                        "as syw curve picks it)")
    parser.add_argument("--duration", default=None, help="column of training durations in seconds (optional)")
    parser.add_argument("--max-n", type=positive_int, default=None, help="largest budget n, at least 1 (default: each group's N)")
    parser.add_argument("--direction", choices=("max", "min"), default="max", help="max: higher is better")
    parser.add_argument("--out", type=Path, default=None, help="write the table here (.csv or .tsv); default: next to the records")
    args = parser.parse_args(args)
    out = args.out or args.records.with_name(args.records.stem + "_expected_max.csv")
    if out.resolve() == args.records.resolve():
        raise ValueError(f"{out}: --out is the records file itself; it would be overwritten")
    with naming(args.records):
        frame = read_records(args.records)
    maximize = args.direction == "max"
    frame, group, metric = _columns(frame, str(args.records), args.group, args.metric, maximize)
    table = curve_table(frame, group, metric, duration=args.duration, max_n=args.max_n, maximize=maximize)
    if frame.attrs.get("dropped"):
        print(f"note: {args.records}: {frame.attrs['dropped']} record(s) whose status is not ok are left out", file=sys.stderr)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n")
    write_output(out, lambda path: table.to_csv(path, sep="\t" if path.suffix == ".tsv" else ",", index=False,
                                                float_format="%.10g"), "table")
    return 0


def _columns(frame: pd.DataFrame, source: str, group: str | None, metric: str | None,
             maximize: bool) -> tuple[pd.DataFrame, str, str]:
    """The group and score columns: given, else ``family`` and ``value``, else picked as ``syw curve`` picks them."""
    picked = []
    if metric is None:
        metric = "value" if "value" in frame.columns else pick_metric(frame, source, maximize=maximize)
        picked += [f"score {metric!r}"] if metric != "value" else []
    if group is None and "family" in frame.columns:
        group = "family"
    elif group is None or group == "none":
        found = None if group == "none" else pick_group(frame, source)
        picked += [f"groups {found!r}" if found else "one group (no column names the groups)"]
        group = found or "group"
        if found is None:
            frame = frame.assign(group=Path(source).stem)
    if picked:
        print(f"note: {source}: {', '.join(picked)} (picked as syw curve picks them; --group, --metric to choose)",
              file=sys.stderr)
    return frame, group, metric


if __name__ == "__main__":
    sys.exit(run_main(main))
