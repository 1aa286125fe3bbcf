"""Stanford Sentiment Treebank reader (PTB-tree files), the data of Tables 2 and 3.

Each line of ``<data_dir>/sst/{train,dev,test}.txt`` is one labelled tree, e.g.
``(3 (2 It) (4 (2 's) (3 great)))``. Tokens are the leaves exactly as they appear
(``-LRB-`` stays ``-LRB-``). Like AllenNLP's ``StanfordSentimentTreeBankDatasetReader``:
"fine" keeps the five labels 0-4; "binary" drops neutral (2) and maps 0,1 -> 0 and
3,4 -> 1; ``subtrees=True`` yields every labelled node (phrase), root first.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from syw.core.errors import DataError
from syw.data.download import SST_MD5, ensure_sst, sst_paths
from syw.data.inputs import input_name, note_input

OFFICIAL_TREES = {"train": 8544, "dev": 1101, "test": 2210}
# md5 of the first (stripped) line of each official file: a file that starts like the
# official one but holds fewer trees is a truncated copy, not a custom data set.
_OFFICIAL_FIRST_LINE_MD5 = {
    "train": "448793de9819c901cbaf809b0ae556ab",
    "dev": "6bb32fae75052fb49249c07fb6fa29b2",
    "test": "88897b9ec55b0c383c039639fa352557",
}
GRANULARITIES = ("fine", "binary")
FINE_LABELS = 5


@dataclass(frozen=True, slots=True)
class Example:
    """One sentence (or phrase) and its sentiment label."""

    tokens: tuple[str, ...]
    label: int


def parse_tree(line: str) -> tuple[list[str], list[tuple[int, int, int]]]:
    """Parse one PTB tree into its leaves and its labelled nodes.

    Returns ``(leaves, nodes)`` where each node is ``(label, start, end)``, the
    span ``leaves[start:end]`` it covers; nodes are in preorder (root first).
    Raises ``ValueError`` on malformed input (unbalanced parentheses, a
    non-integer label, a node without children).
    """
    leaves: list[str] = []
    nodes: list[list[int]] = []
    open_nodes: list[int] = []  # indices into `nodes` of the nodes still open
    expect_label = False
    closed_root = False
    for token in line.replace("(", " ( ").replace(")", " ) ").split():
        if closed_root:
            raise ValueError(f"text after the end of the tree: {token!r}")
        if expect_label:
            if not token.isdigit():
                raise ValueError(f"expected an integer label after '(', got {token!r}")
            nodes.append([int(token), len(leaves), -1])
            open_nodes.append(len(nodes) - 1)
            expect_label = False
        elif token == "(":
            expect_label = True
        elif token == ")":
            if not open_nodes:
                raise ValueError("unbalanced parentheses: ')' without a matching '('")
            node = nodes[open_nodes.pop()]
            if node[1] == len(leaves):
                raise ValueError(f"node with label {node[0]} has no words")
            node[2] = len(leaves)
            closed_root = not open_nodes
        else:
            if not open_nodes:
                raise ValueError(f"word {token!r} outside any node")
            leaves.append(token)
    if open_nodes or expect_label or not nodes:
        raise ValueError(f"unbalanced parentheses: {len(open_nodes) + expect_label} node(s) left open")
    return leaves, [(label, start, end) for label, start, end in nodes]


def map_label(label: int, granularity: str) -> int | None:
    """Fine labels stay 0-4; binary maps 0,1 -> 0 and 3,4 -> 1 and drops 2 (None)."""
    if not 0 <= label < FINE_LABELS:
        raise ValueError(f"SST label {label} is not in 0..4")
    if granularity == "fine":
        return label
    return None if label == 2 else int(label > 2)


def _iter_trees(path: Path) -> Iterator[tuple[int, str, list[str], list[tuple[int, int, int]]]]:
    """``(line number, stripped line, leaves, nodes)`` per tree; blank lines are passed over.

    Raises :class:`DataError` naming ``path`` and the line on a malformed tree, a line
    that is not UTF-8, or a file that holds no tree at all.
    """
    lineno, n_trees = 0, 0
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataError(f"{path}:{lineno}: not UTF-8 text ({err.reason} at byte {err.start}); "
                                "is this the PTB tree file? re-download it with `syw download sst`") from err
            if not line.strip():
                continue
            try:
                leaves, nodes = parse_tree(line)
            except ValueError as err:
                raise DataError(f"{path}:{lineno}: {err} (truncated or corrupt file? "
                                "re-download it with `syw download sst`)") from err
            n_trees += 1
            yield lineno, line.strip(), leaves, nodes
    if not n_trees:
        what = f"{path}:{lineno}: the file holds only blank lines" if lineno else f"{path}: the file is empty"
        raise DataError(f"{what}, no tree; re-download it with `syw download sst`")


def _check_complete(path: Path, split: str, first_line: str, n_trees: int) -> None:
    """Raise if ``path`` is a truncated copy of an official SST file."""
    official = OFFICIAL_TREES.get(split)
    if official is None or n_trees >= official:
        return
    if hashlib.md5(first_line.encode("utf-8")).hexdigest() != _OFFICIAL_FIRST_LINE_MD5[split]:
        return  # a custom (e.g. test fixture) file, not the official one
    raise DataError(f"{path}:{n_trees + 1}: file ends after {n_trees} trees but the official "
                    f"{split} split has {official} (md5 should be {SST_MD5[split]}); it looks "
                    "truncated, re-download it with `syw download sst`")


def read_sst(data_dir: str | Path, split: str, granularity: str = "fine",
             subtrees: bool = False, download: bool = True) -> list[Example]:
    """Read one SST split as a list of examples (Tables 2 and 3 use fine, sentences).

    With ``download=True`` missing files are fetched first (see
    :func:`syw.data.download.ensure_sst`); otherwise a missing file raises
    ``FileNotFoundError`` with instructions. A malformed, truncated or empty file
    raises :class:`syw.core.errors.DataError` naming the file and line.
    """
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
    if split not in OFFICIAL_TREES:
        raise ValueError(f"split must be one of {tuple(OFFICIAL_TREES)}, got {split!r}")
    paths = ensure_sst(Path(data_dir)) if download else sst_paths(Path(data_dir))
    path = paths[split]
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found. Set SYW_DATA_DIR (or paths.data_dir) to a folder containing "
            f"sst/{{train,dev,test}}.txt, or run `syw download sst --data-dir {data_dir}` "
            "on a machine with internet, or place the official PTB tree files there.")
    note_input(input_name(path, data_dir), path)  # before reading: the version noted is the one read
    examples: list[Example] = []
    n_trees, first_line = 0, ""
    for lineno, line, leaves, nodes in _iter_trees(path):
        n_trees += 1
        first_line = first_line or line
        for label, start, end in nodes if subtrees else nodes[:1]:
            try:
                mapped = map_label(label, granularity)
            except ValueError as err:
                raise DataError(f"{path}:{lineno}: {err}") from err
            if mapped is not None:
                examples.append(Example(tuple(leaves[start:end]), mapped))
    _check_complete(path, split, first_line, n_trees)
    return examples


def n_classes(granularity: str) -> int:
    """Number of labels: 5 for "fine", 2 for "binary"."""
    return FINE_LABELS if granularity == "fine" else 2
