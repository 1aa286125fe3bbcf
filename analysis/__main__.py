"""``python -m analysis RECORDS --group COL --metric COL [--duration COL]``: print and write the curve table."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.table import curve_table, read_records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m analysis",
        description="Expected maximum validation performance (Dodge et al. 2019, Eq. 8) per group of trial records.",
    )
    parser.add_argument("records", type=Path, help="a .csv, .tsv or .jsonl file of trial records")
    parser.add_argument("--group", default="family", help="column naming the model family (default: family)")
    parser.add_argument("--metric", default="value", help="column holding the validation score (default: value)")
    parser.add_argument("--duration", default=None, help="column of training durations in seconds (optional)")
    parser.add_argument("--max-n", type=int, default=None, help="largest budget n (default: each group's N)")
    parser.add_argument("--direction", choices=("max", "min"), default="max", help="max: higher is better")
    parser.add_argument("--out", type=Path, default=None, help="write the table here (.csv or .tsv); default: next to the records")
    args = parser.parse_args(argv)
    try:
        frame = read_records(args.records)
        table = curve_table(
            frame, args.group, args.metric, duration=args.duration, max_n=args.max_n, maximize=args.direction == "max"
        )
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = args.out or args.records.with_name(args.records.stem + "_expected_max.csv")
    table.to_csv(out, sep="\t" if out.suffix == ".tsv" else ",", index=False, float_format="%.10g")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
