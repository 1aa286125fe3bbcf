"""DGEM's hypothesis graphs (docs/models.md §G): from a ``dgem_format`` structure string, or approximated.

A structure is tuples joined by ``$$$``, each of fields joined by ``<>``: subject, predicate,
objects; an object may start with ``L:`` (location), ``T:`` (time) or a preposition. The graph
follows allenai/scitail's ``entailment_tuple`` reader: nodes are the subject S, the predicate R
and the whole first object O1; edges R -subj-> S and S -subj-obj-> O1; and for each object a chain
from R through its pieces, split at every preposition of :data:`PREPOSITIONS` (the first piece
labelled by its prefix or leading preposition, else ``obj``; later pieces by the splitting
preposition). Nodes are deduplicated by their token string; only the last 30 tuples count.

Where no structure file exists (the tokenized SciTail release here), :func:`approximate_structure`
derives one tuple per hypothesis with a rule-based split (subject / predicate / object) around
the first auxiliary or verb-like token: DGEM on such graphs is "DGEM (approximate structures)".
:func:`approximate_structures` caches a split's structures in the cache folder, in a file named
by the rules' version (:data:`APPROXIMATE_VERSION`) and keyed by the hypotheses, which a trial's
record names among the files it read.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

from syw.data.inputs import note_input

PREPOSITIONS = ("with", "at", "from", "into", "during", "including", "until", "against", "among", "throughout",
                "despite", "towards", "upon", "concerning", "of", "to", "in", "for", "on", "by", "about", "like",
                "through", "over", "before", "between", "after", "since", "without", "under", "within", "along",
                "following", "across", "behind", "beyond", "plus", "except", "but", "up", "out", "around", "down",
                "off", "above", "near")
EDGE_LABELS = ("subj", "subj-obj", "obj", "L", "T") + PREPOSITIONS
MAX_TUPLES = 30

Graph = tuple[list[tuple[str, ...]], list[tuple[int, str, int]]]  # nodes (tokens), edges (source, label, target)


def _object_pieces(field: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
    """An object's tokens split at prepositions, each piece with its edge label."""
    tokens, label = list(field), "obj"
    if tokens and tokens[0][:2] in ("L:", "T:"):
        label, first = tokens[0][0], tokens[0][2:]
        tokens = ([first] if first else []) + tokens[1:]
    elif len(tokens) > 1 and tokens[0] in PREPOSITIONS:
        label, tokens = tokens[0], tokens[1:]
    pieces, current = [], []
    for token in tokens:
        if token in PREPOSITIONS and current:
            pieces.append((tuple(current), label))
            current, label = [], token
        else:
            current.append(token)
    if current:
        pieces.append((tuple(current), label))
    return pieces


def parse_structure(structure: str, tokenize=str.split) -> Graph:
    """The graph of a ``dgem_format`` structure string (see the module docstring)."""
    nodes: list[tuple[str, ...]] = []
    edges: list[tuple[int, str, int]] = []

    def node(tokens: tuple[str, ...]) -> int:
        if tokens not in nodes:
            nodes.append(tokens)
        return nodes.index(tokens)

    for fields in (t.split("<>") for t in structure.split("$$$")[-MAX_TUPLES:]):
        subject, predicate = tuple(tokenize(fields[0].strip())), tuple(tokenize(fields[1].strip())) if len(fields) > 1 else ()
        s = node(subject) if subject else None
        r = node(predicate) if predicate else None
        if s is not None and r is not None:
            edges.append((r, "subj", s))
        if len(fields) > 2 and (first := tuple(tokenize(fields[2].strip())) ):
            o = node(first)
            if s is not None:
                edges.append((s, "subj-obj", o))
        for field in fields[2:]:
            last = r
            for piece, label in _object_pieces(tokenize(field.strip())):
                target = node(piece)
                if last is not None:
                    edges.append((last, label, target))
                last = target
    return nodes, edges


AUXILIARIES = {"is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "can", "could",
               "will", "would", "may", "might", "must", "shall", "should", "do", "does", "did"}
_CARRIED = AUXILIARIES | {"not", "also", "often", "usually", "always", "never", "only", "called", "known"}
APPROXIMATE_VERSION = 1  # of approximate_structure's rules: bump it with any change, so cached structures rebuild
_BEFORE_NOUNS = {"the", "a", "an", "this", "that", "these", "those", "its", "their", "his", "her", "our", "your",
                 "some", "many", "most", "all", "each", "every", "no", "of"}


def approximate_structure(hypothesis: Sequence[str]) -> str:
    """One ``subject<>predicate<>object`` tuple for a tokenized hypothesis, by rule.

    The predicate starts at the first auxiliary (is, can, has, ...) after the first token, or
    else at the first later token ending in -s or -ed that does not follow a determiner or "of";
    it extends over following auxiliaries, adverbs of a closed list and -ed/-ing forms. The
    subject is what precedes it, the object what follows (no object field when nothing does).
    """
    words = [w.lower() for w in hypothesis]
    start = next((i for i in range(1, len(words)) if words[i] in AUXILIARIES), None)
    if start is None:
        start = next((i for i in range(1, len(words)) if words[i].endswith(("s", "ed")) and len(words[i]) > 3
                      and words[i - 1] not in _BEFORE_NOUNS), None)
    if start is None:  # one token, or no verb-like token: split in the middle
        start = max(1, len(words) // 2) if len(words) > 1 else 0
    end = start + 1
    while end < len(words) and (words[end] in _CARRIED or words[end].endswith(("ed", "ing"))):
        end += 1
    fields = [" ".join(hypothesis[:start]), " ".join(hypothesis[start:end])]
    if end < len(hypothesis):
        fields.append(" ".join(hypothesis[end:]))
    return "<>".join(fields)


def approximate_structures(hypotheses: Sequence[Sequence[str]], cache_dir: str | Path | None = None) -> list[str]:
    """:func:`approximate_structure` of each hypothesis; with ``cache_dir``, cached there as
    ``dgem-approximate-v<APPROXIMATE_VERSION>-<key>.json`` (key: the version and the hypotheses)."""
    if cache_dir is None:
        return [approximate_structure(hypothesis) for hypothesis in hypotheses]
    listed = [list(hypothesis) for hypothesis in hypotheses]
    key = hashlib.sha256(json.dumps([APPROXIMATE_VERSION, listed]).encode()).hexdigest()[:24]
    path = Path(cache_dir) / f"dgem-approximate-v{APPROXIMATE_VERSION}-{key}.json"
    structures = _cached(path, len(listed))
    if structures is None:
        structures = [approximate_structure(hypothesis) for hypothesis in listed]
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.stem}.{os.getpid()}.part")  # atomic publish: workers share the file
        part.write_text(json.dumps(structures), encoding="utf-8")
        part.replace(path)
    note_input(path.name, path)
    return structures


def _cached(path: Path, n: int) -> list[str] | None:
    """The ``n`` structures cached in ``path``, or None (absent; unreadable: a warning, then rebuilt)."""
    if not path.is_file():
        return None
    try:
        structures = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(structures, list) and len(structures) == n and all(isinstance(s, str) for s in structures):
            return structures
        problem = f"not a list of {n} structures"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        problem = str(err)
    warnings.warn(f"{path}: unreadable DGEM structure cache ({problem}); building it again")
    return None
