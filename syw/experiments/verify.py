"""``syw verify results/<study>``: each records file against its manifest of chained hashes
(:mod:`syw.core.manifest`), one line per file, naming the first line that does not match."""
from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from syw.core.entry import Parser, run_main
from syw.core.manifest import SUFFIX, Check, check, check_folder

DESCRIPTION = """\
Check each trial records file (every <family>.jsonl under the folders given, subfolders too) against its
manifest, <family>.jsonl.sha256 beside it: line i of the manifest is the SHA-256 of the hash before it and of
the records file's line i, which syw run writes with every record. Prints OK for a file whose lines all match,
or MISMATCH with the file and the first line that does not (a record edited, removed, inserted or appended by
hand, or a file cut short), or NO MANIFEST for a file written before syw kept one. Writes nothing."""
EPILOG = """\
exit status: 0 when every file matches its manifest; 1 when one does not or has no manifest (a finding about the
records, not bad input); 2 for bad input: a folder that is missing or unreadable, or holds no records file."""


def checks_of(target: Path) -> list[Check]:
    """The checks of a records folder (or one records file); bad input raises (:func:`syw.core.entry.run_main`)."""
    if target.is_file() and target.suffix == ".jsonl":
        return [check(target)]
    if not target.exists():
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(target))
    if not target.is_dir():
        raise ValueError(f"{target}: neither a folder of trial records nor a records file (.jsonl)")
    os.listdir(target)  # an unreadable folder is an error naming it, not a folder without records
    found = check_folder(target)
    if not found:
        raise FileNotFoundError(errno.ENOENT, f"no trial records (*.jsonl, or their *.jsonl{SUFFIX}) there", str(target))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="syw verify", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER",
                        help="a study's records folder, e.g. results/sst5 (or results/, or one records file)")
    args = parser.parse_args(argv)
    found = [c for folder in args.folders for c in checks_of(folder)]  # every input checked before a line is printed
    for one in found:
        print(one.text())
    bad = [c for c in found if not c.ok]
    if len(found) > 1:
        print(f"{len(found)} records files: " + (f"{len(bad)} not verified" if bad else "all OK"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
