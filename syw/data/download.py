"""Download and verify the canonical data files: SST (Tables 2 and 3) and the language-model
corpora of Section 5 (Penn Treebank, Wikitext-2; :mod:`syw.data.lm`).

``syw download sst --data-dir DIR`` fetches the official ``trainDevTestTrees_PTB.zip`` and
extracts ``trees/{train,dev,test}.txt`` into ``DIR/sst/``; ``syw download ptb|wikitext-2 --data-dir
DIR`` fetches the corpus's missing splits. Each split is then checked against its published
checksum (and a corpus's tokens counted). Readers call :func:`ensure_sst` or
:func:`syw.data.lm.ensure`, which download only when files are missing.
"""
from __future__ import annotations

import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

from syw.core.entry import Parser, naming, run_main
from syw.core.errors import DataError, DataMissingError
from syw.data import lm
from syw.data.fetch import CHUNK, fetch, file_digest, promote

SST_URL = "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip"
SST_SPLITS = ("train", "dev", "test")
SST_MD5 = {
    "train": "b12d531b1b913a3bb49719ba5cc1f67a",
    "dev": "c405f1d724964e6f72314b5a51fea691",
    "test": "97b75f6ca1ae58b4d52fbf9381dc6f8c",
}


def sst_paths(data_dir: Path) -> dict[str, Path]:
    """Where the SST PTB-tree files live under the data root: ``<data_dir>/sst/<split>.txt``."""
    return {split: Path(data_dir) / "sst" / f"{split}.txt" for split in SST_SPLITS}


def download_sst(data_dir: Path) -> dict[str, Path]:
    """Extract the three tree files of the official SST zip flat into ``<data_dir>/sst/``.

    The zip is fetched to ``<data_dir>/sst/trainDevTestTrees_PTB.zip`` unless it
    is already there (e.g. copied from a machine with internet).
    """
    paths = sst_paths(data_dir)
    archive = paths["train"].parent / Path(SST_URL).name
    if not archive.is_file():
        fetch(SST_URL, archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            members = {Path(name).name: name for name in zf.namelist() if "/trees/" in f"/{name}"}
            for split, path in paths.items():
                if f"{split}.txt" not in members:
                    raise DataError(f"{archive}: has no trees/{split}.txt; it holds {sorted(zf.namelist())}")
                part = path.with_name(path.name + ".part")
                try:
                    with zf.open(members[f"{split}.txt"]) as src, open(part, "wb") as dst:
                        shutil.copyfileobj(src, dst, CHUNK)
                except (zipfile.BadZipFile, EOFError, OSError):
                    part.unlink(missing_ok=True)
                    raise
                promote(part, path, {"md5": SST_MD5[split]}, str(archive))
    except (zipfile.BadZipFile, EOFError) as err:
        raise DataError(f"{archive}: not a readable zip archive ({err}); delete it to download it again, "
                        f"or put a good copy of {SST_URL} there") from err
    return paths


def ensure_sst(data_dir: Path) -> dict[str, Path]:
    """Return the SST split paths, downloading them first if any is missing."""
    paths = sst_paths(data_dir)
    missing = [p for p in paths.values() if not p.is_file()]
    if not missing:
        return paths
    try:
        return download_sst(data_dir)
    except DataMissingError as err:
        sst_dir = paths["train"].parent
        raise DataMissingError(
            f"SST files missing: {', '.join(map(str, missing))}. Set SYW_DATA_DIR (or the Hydra "
            f"setting paths.data_dir) to a folder that contains sst/{{train,dev,test}}.txt; or run "
            f"`syw download sst --data-dir {data_dir}` on a machine with internet; or "
            f"download {SST_URL} yourself and put it at {sst_dir / Path(SST_URL).name} (it is "
            f"extracted on the next run) or extract its trees/train.txt, dev.txt and test.txt into "
            f"{sst_dir}/. Download attempt: {err}") from err


def check(data_dir: Path, dataset: str) -> Iterator[str]:
    """Download what is missing of ``dataset`` (``sst`` or a corpus of :data:`syw.data.lm.CORPORA`),
    then a line for each split: its checksum (a corpus's checked against the published one) and, for
    a corpus, its tokens."""
    if dataset == "sst":
        for split, path in ensure_sst(data_dir).items():
            yield f"{split}: {path} md5 {file_digest(path, 'md5')}"
        return
    algorithm = lm.corpus(dataset).algorithm
    for split, path in lm.ensure(data_dir, dataset).items():
        tokens = lm.read_split(data_dir, dataset, split, download=False)
        yield f"{split}: {path} {len(tokens):,} tokens, {algorithm} ok"


DESCRIPTION = """\
Download a data set into --data-dir and verify its files: sst (the Stanford Sentiment Treebank of
Figures 1 and 2) or the language-model corpora of case study 5, ptb (Penn Treebank) and wikitext-2."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    """``syw download DATASET --data-dir DIR``; bad input raises (:func:`syw.core.entry.run_main`)."""
    parser = Parser(prog="syw download", description=DESCRIPTION)
    parser.add_argument("dataset", choices=["sst", *lm.CORPORA], help="the data set: sst, ptb or wikitext-2")
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="the folder the data set goes to, in a folder of its own name (the suite reads "
                             "$SYW_DATA_DIR)")
    args = parser.parse_args(argv)
    with naming(args.data_dir):  # e.g. a full disk while copying names no file
        for line in check(args.data_dir, args.dataset):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
