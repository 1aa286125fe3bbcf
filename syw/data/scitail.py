"""SciTail readers (Khot et al., 2018), the data of Tables 7-10.

- ``tokenized``: ``<data_dir>/scitail_tokenized/{dev,test}.txt``, one pair per line,
  ``premise<TAB>hypothesis<TAB>label``, tokens separated by spaces, label 0 = entails,
  1 = neutral (a preprocessed release of SciTail v1.1 dev and test; it has no train split).
- the official v1.1 release, unpacked in ``<data_dir>/scitail/SciTailV1.1/`` (downloaded there on
  a machine with internet): ``snli_format`` (JSON lines: sentence1, sentence2, gold_label),
  ``tsv_format`` (premise, hypothesis, label) and ``dgem_format`` (premise, hypothesis, label and
  the hypothesis's structure). Raw text is tokenized with spaCy's rule-based English tokenizer,
  as AllenNLP's readers did (whitespace tokens dropped).

The release publishes no checksum. A ``tsv_format`` file whose md5 is one of :data:`REBUILT_MD5`
is the split rebuilt from a public redistribution (the data folder's README: the official counts,
byte identity with the official file not verified); records name it with a `` (rebuilt)`` suffix,
as they name SQuAD's rebuilt train file by its own name. Every pair is kept, duplicates included
(the rebuilt train split holds 20 exact duplicate rows; the official count, 23,596, implies them).
A malformed line (a wrong field count, an unknown label, an empty sentence, text that is not
UTF-8) is a :class:`DataError` naming the file and line.
"""
from __future__ import annotations

import functools
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import fetch, file_digest
from syw.data.inputs import input_name, note_input
from syw.data.lines import utf8_lines

LABELS = ("entails", "neutral")
TOKENIZED_SPLITS = ("dev", "test")
SPLITS = ("train", "dev", "test")
OFFICIAL_PAIRS = {"snli_format": {"train": 23596, "dev": 1304, "test": 2126},
                  "tsv_format": {"train": 23596, "dev": 1304, "test": 2126},
                  "dgem_format": {"train": 23088, "dev": 1304, "test": 2126}}
URL = "http://data.allenai.org.s3.amazonaws.com/downloads/SciTailV1.1.zip"
# md5 of the rebuilt tsv_format splits (see the module docstring)
REBUILT_MD5 = {"train": "6c7d6590e87a65684668ec5a6e3b5468", "dev": "3b346c37e4d32df5d28af99e3b7c34f6",
               "test": "47c0a25d9c17cfeb8d27c53ba60803a9"}
# each format's label words -> index in LABELS
_GOLD = {"snli_format": {"entailment": 0, "neutral": 1}, "tsv_format": {"entails": 0, "neutral": 1},
         "dgem_format": {"entails": 0, "neutral": 1}}


@dataclass(frozen=True, slots=True)
class PairExample:
    """A premise, a hypothesis (tokens) and the label's index in :data:`LABELS`."""

    premise: tuple[str, ...]
    hypothesis: tuple[str, ...]
    label: int
    structure: str | None = None  # dgem_format: the hypothesis's tuples (``$$$``-joined, fields ``<>``-joined)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line break)`` of each non-blank line of a UTF-8 file."""
    with open(path, "rb") as raw:
        for number, text in utf8_lines(raw, path):
            if text.strip():
                yield number, text


def read_tokenized(data_dir: str | Path, split: str) -> list[PairExample]:
    """One split of the pre-tokenized SciTail release (see the module docstring)."""
    if split not in TOKENIZED_SPLITS:
        raise ValueError(f"the tokenized SciTail release has splits {', '.join(TOKENIZED_SPLITS)}, not {split!r}")
    path = Path(data_dir) / "scitail_tokenized" / f"{split}.txt"
    if not path.is_file():
        raise DataMissingError(f"{path} not found: put the tokenized SciTail {split} file there (premise, hypothesis "
                               "and label 0/1 per line, tab-separated), or set SYW_DATA_DIR to the folder holding "
                               "scitail_tokenized/")
    note_input(input_name(path, data_dir), path)  # before reading: the version noted is the one read
    examples = []
    for number, line in _lines(path):
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataError(f"{path}:{number}: expected premise, hypothesis and label separated by tabs, "
                            f"got {len(fields)} field(s)")
        premise, hypothesis, label = fields
        if label not in ("0", "1"):
            raise DataError(f"{path}:{number}: label must be 0 (entails) or 1 (neutral), got {label!r}")
        if not premise.split() or not hypothesis.split():
            raise DataError(f"{path}:{number}: empty premise or hypothesis")
        examples.append(PairExample(tuple(premise.split()), tuple(hypothesis.split()), int(label)))
    if not examples:
        raise DataError(f"{path}: the file holds no pairs")
    return examples


def _file_name(fmt: str, split: str) -> str:
    if fmt not in OFFICIAL_PAIRS:
        raise ValueError(f"SciTail formats are {', '.join(OFFICIAL_PAIRS)}, not {fmt!r}")
    if split not in SPLITS:
        raise ValueError(f"SciTail has splits {', '.join(SPLITS)}, not {split!r}")
    return {"snli_format": f"scitail_1.0_{split}.txt", "tsv_format": f"scitail_1.0_{split}.tsv",
            "dgem_format": f"scitail_1.0_structure_{split}.tsv"}[fmt]


def official_file(data_dir: str | Path, fmt: str, split: str) -> Path:
    """Where a split of an official v1.1 format lies; downloaded (and unpacked) first when missing."""
    folder = Path(data_dir) / "scitail"
    path = folder / "SciTailV1.1" / fmt / _file_name(fmt, split)
    if not path.is_file():
        archive = folder / Path(URL).name
        if not archive.is_file():
            try:
                fetch(URL, archive)
            except DataMissingError as err:
                raise DataMissingError(f"{path} not found: download {URL} on a machine with internet and unpack it "
                                       f"into {folder}/ (or put the zip at {archive}). {err}") from err
        _unpack(archive, folder)
    return path


def _unpack(archive: Path, folder: Path) -> None:
    """Extract the release after checking that every split of every format has its official row
    count (the release publishes no checksum)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            for fmt, counts in OFFICIAL_PAIRS.items():
                for split, expected in counts.items():
                    member = f"SciTailV1.1/{fmt}/{_file_name(fmt, split)}"
                    try:
                        rows = sum(1 for line in zf.read(member).splitlines() if line.strip())
                    except KeyError:
                        rows = 0
                    if rows != expected:
                        raise DataError(f"{archive}: {member} has {rows} pairs, expected {expected}; not the official "
                                        "SciTail v1.1 release (delete it to download it again)")
            zf.extractall(folder)
    except zipfile.BadZipFile as err:
        raise DataError(f"{archive}: not a zip archive ({err}); delete it to download it again") from err


@functools.lru_cache(maxsize=1)
def _tokenizer():
    import spacy

    return spacy.blank("en")


def tokenize(text: str) -> tuple[str, ...]:
    """spaCy's rule-based English tokens of ``text``, whitespace tokens dropped."""
    return tuple(token.text for token in _tokenizer()(text) if not token.is_space)


def _official_rows(path: Path, fmt: str) -> list[PairExample]:
    examples = []
    for number, line in _lines(path):
        if fmt == "snli_format":
            try:
                row = json.loads(line)
                premise, hypothesis, gold = row["sentence1"], row["sentence2"], row["gold_label"]
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                raise DataError(f"{path}:{number}: not a JSON object with sentence1, sentence2 and gold_label ({err})") from None
            structure = None
            if gold == "-":  # no consensus label: AllenNLP's reader skips the pair
                continue
        else:
            fields = line.split("\t")
            wanted = 4 if fmt == "dgem_format" else 3
            if len(fields) != wanted:
                raise DataError(f"{path}:{number}: expected {wanted} tab-separated fields, got {len(fields)}")
            premise, hypothesis, gold = fields[:3]
            structure = fields[3] if fmt == "dgem_format" else None
        if gold not in _GOLD[fmt]:
            raise DataError(f"{path}:{number}: label must be {' or '.join(_GOLD[fmt])}, got {gold!r}")
        premise_tokens, hypothesis_tokens = tokenize(premise), tokenize(hypothesis)
        if not premise_tokens or not hypothesis_tokens:
            raise DataError(f"{path}:{number}: empty {'premise' if not premise_tokens else 'hypothesis'}")
        examples.append(PairExample(premise_tokens, hypothesis_tokens, _GOLD[fmt][gold], structure))
    if not examples:
        raise DataError(f"{path}: the file holds no pairs")
    return examples


def is_rebuilt(path: Path, fmt: str, split: str) -> bool:
    """Whether ``path`` is the rebuilt ``tsv_format`` file of ``split``, by its md5 (module docstring)."""
    return fmt == "tsv_format" and file_digest(path, "md5") == REBUILT_MD5[split]


def read_official(data_dir: str | Path, split: str, fmt: str = "snli_format") -> list[PairExample]:
    """One split of the official SciTail v1.1 release in format ``fmt`` (see the module docstring);
    the file read is noted for the trial's record (``(rebuilt)`` after the name of a rebuilt one)."""
    path = official_file(data_dir, fmt, split)
    note_input(input_name(path, data_dir) + (" (rebuilt)" if is_rebuilt(path, fmt, split) else ""), path)  # before reading
    return _official_rows(path, fmt)
