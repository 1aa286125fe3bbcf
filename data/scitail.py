"""SciTail readers (Khot et al., 2018), the data of Tables 7-10.

``tokenized``: ``<data_dir>/scitail_tokenized/{dev,test}.txt``, one pair per line,
``premise<TAB>hypothesis<TAB>label``, tokens separated by spaces, label 0 = entails, 1 = neutral
(a preprocessed release of SciTail v1.1 dev and test; it has no train split). The official
v1.1 formats are read by the readers of the SciTail case study.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from data.download import DataError, DataMissingError

LABELS = ("entails", "neutral")
TOKENIZED_SPLITS = ("dev", "test")


@dataclass(frozen=True, slots=True)
class PairExample:
    """A premise, a hypothesis (tokens) and the label's index in :data:`LABELS`."""

    premise: tuple[str, ...]
    hypothesis: tuple[str, ...]
    label: int


def read_tokenized(data_dir: str | Path, split: str) -> list[PairExample]:
    """One split of the pre-tokenized SciTail release (see the module docstring)."""
    if split not in TOKENIZED_SPLITS:
        raise ValueError(f"the tokenized SciTail release has splits {', '.join(TOKENIZED_SPLITS)}, not {split!r}")
    path = Path(data_dir) / "scitail_tokenized" / f"{split}.txt"
    if not path.is_file():
        raise DataMissingError(f"{path} not found: put the tokenized SciTail {split} file there (premise, hypothesis "
                               "and label 0/1 per line, tab-separated), or set SYW_DATA_DIR to the folder holding "
                               "scitail_tokenized/")
    examples = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
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
