"""SQuAD v1.1 reader (Rajpurkar et al., 2016), the data of Table 11 and Figure 4 (docs/models.md §H "Reader").

Files, under ``<data_dir>/squad/``: ``dev-v1.1.json`` and, for training, the official
``train-v1.1.json`` or, when it is absent, ``train-v1.1.reconstructed.json`` (the train set rebuilt
from the SQuAD explorer's pages: same texts, synthetic question ids, answer starts inferred as an
occurrence of the answer text). Each file is accepted by its own md5; a missing official file is
downloaded on a machine with internet.

As AllenNLP's ``squad`` reader: each paragraph is tokenized once, keeping every token's character
offsets (spaCy's rule-based English tokenizer, whitespace tokens dropped); questions are stripped
and lose their newlines; each answer's character span becomes a token span, and the training
target is the most frequent of those spans. Options read a fixed subset: the first ``articles``
articles, the first ``questions`` questions, and a training window of ``window`` tokens around the
target (placed at a fixed, per-question random offset, so the answer's place in the window
carries no signal).
"""
from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import fetch, file_digest
from syw.data.scitail import _tokenizer

URLS = {"train": "https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json",
        "dev": "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json"}
# Per split, the files accepted, in order of preference, with their md5.
FILES = {"train": (("train-v1.1.json", "981b29407e0affa3b1b156f72073b945"),
                   ("train-v1.1.reconstructed.json", "b047d8b800019a222d1cb1e7476f9b10")),
         "dev": (("dev-v1.1.json", "3e85deb501d4e538b6bc56f786231552"),)}

Offsets = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SpanExample:
    """One question about one passage; ``span`` is the target's first and last token (inclusive).

    ``passage`` is the whole paragraph; ``passage_tokens`` may be a window of it, and ``offsets``
    are those tokens' [start, end) in ``passage``.
    """

    qid: str
    passage: str
    passage_tokens: tuple[str, ...]
    offsets: Offsets
    question_tokens: tuple[str, ...]
    span: tuple[int, int]
    answers: tuple[str, ...]


def tokenize_with_offsets(text: str) -> tuple[tuple[str, ...], Offsets]:
    """spaCy's rule-based tokens of ``text`` (whitespace tokens dropped) and their [start, end) offsets."""
    tokens = [token for token in _tokenizer()(text) if not token.is_space]
    return tuple(t.text for t in tokens), tuple((t.idx, t.idx + len(t.text)) for t in tokens)


def char_span_to_token_span(offsets: Offsets, start: int, end: int) -> tuple[int, int] | None:
    """The tokens covering characters [start, end), as AllenNLP mapped an answer (docs/models.md §H).

    First token: the first whose start is at or after ``start``, backed off by one when it starts
    after it (the last token when none starts that late; never before the first). Last token: the first from there on
    whose end is at or after ``end``. None when the answer ends after the last token.
    """
    first = next((i for i, (s, _) in enumerate(offsets) if s >= start), len(offsets))
    if first == len(offsets) or offsets[first][0] > start:
        first = max(first - 1, 0)
    last = next((i for i in range(first, len(offsets)) if offsets[i][1] >= end), None)
    return None if last is None else (first, last)


def target_span(spans: Sequence[tuple[int, int]], n_tokens: int) -> tuple[int, int]:
    """The most frequent span (ties: the first seen); (last, last) when there is none."""
    if not spans:
        return (n_tokens - 1, n_tokens - 1)
    return Counter(spans).most_common(1)[0][0]


def window(example: SpanExample, size: int) -> SpanExample:
    """``example`` cut to ``size`` tokens holding its target span (all of it when the span is longer),
    the span placed at a random offset fixed by the question id."""
    start, end = example.span
    n = len(example.passage_tokens)
    if n <= size:
        return example
    low, high = max(0, end - size + 1), min(start, n - size)
    first = start if high < low else random.Random(zlib.crc32(example.qid.encode())).randint(low, high)
    last = max(first + size, end + 1)
    return SpanExample(example.qid, example.passage, example.passage_tokens[first:last], example.offsets[first:last],
                       example.question_tokens, (start - first, end - first), example.answers)


def split_file(data_dir: str | Path, split: str, download: bool = True) -> tuple[Path, str]:
    """The file ``split`` is read from and its md5, checked (see the module docstring)."""
    if split not in FILES:
        raise ValueError(f"SQuAD v1.1 has splits {', '.join(FILES)}, not {split!r}")
    folder = Path(data_dir) / "squad"
    candidates = [(folder / name, md5) for name, md5 in FILES[split]]
    present = next(((path, md5) for path, md5 in candidates if path.is_file()), None)
    if present is None:
        path, md5 = candidates[0]
        if not download:
            raise DataMissingError(f"{path} not found: download {URLS[split]} there (md5 {md5})")
        try:
            fetch(URLS[split], path, md5=md5)
        except DataMissingError as err:
            others = "".join(f" or {p} (md5 {m})" for p, m in candidates[1:])
            raise DataMissingError(f"{path} not found: download {URLS[split]} (md5 {md5}) on a machine with internet "
                                   f"and put it there{others}, or set SYW_DATA_DIR to the folder holding squad/. "
                                   f"{err}") from err
        present = path, md5
    path, md5 = present
    actual = file_digest(path, "md5")
    if actual != md5:
        raise DataError(f"{path}: md5 {actual}, expected {md5} ({path.name} of SQuAD v1.1); the file is damaged or "
                        "another version: delete it to download it again")
    return path, md5


def _get(mapping: Any, key: str, kind: type, path: Path, where: str) -> Any:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        got = "missing" if not isinstance(mapping, dict) or key not in mapping else f"{type(value).__name__} {value!r:.60}"
        raise DataError(f"{path}: {where}: '{key}' must be {'an' if kind is int else 'a'} {kind.__name__}, got {got}")
    return value


def _load_json(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not valid JSON ({err.msg}, column {err.colno})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("data"), list):
        raise DataError(f"{path}: not a SQuAD file: expected an object whose 'data' is a list of articles")
    return raw


def read_file(path: str | Path, *, articles: int | None = None, questions: int | None = None,
              window_tokens: int | None = None) -> list[SpanExample]:
    """The questions of a SQuAD v1.1 JSON file, in file order (see the module docstring)."""
    path = Path(path)
    examples: list[SpanExample] = []
    for a, article in enumerate(_load_json(path)["data"][:articles]):
        for p, paragraph in enumerate(_get(article, "paragraphs", list, path, f"article {a}")):
            where = f"article {a}, paragraph {p}"
            context = _get(paragraph, "context", str, path, where)
            qas = _get(paragraph, "qas", list, path, where)
            tokens, offsets = tokenize_with_offsets(context)
            for q, qa in enumerate(qas):
                qid = _get(qa, "id", str, path, f"{where}, question {q}")
                example = _example(path, qid, qa, context, tokens, offsets)
                examples.append(window(example, window_tokens) if window_tokens else example)
                if questions is not None and len(examples) >= questions:
                    return examples
    if not examples:
        raise DataError(f"{path}: the file holds no questions")
    return examples


def _example(path: Path, qid: str, qa: dict, context: str, tokens: tuple[str, ...], offsets: Offsets) -> SpanExample:
    where = f"question {qid}"
    question = _get(qa, "question", str, path, where).strip().replace("\n", "")
    question_tokens = tokenize_with_offsets(question)[0]
    if not tokens or not question_tokens:
        raise DataError(f"{path}: {where}: empty {'passage' if not tokens else 'question'}")
    texts, spans = [], []
    for answer in _get(qa, "answers", list, path, where):
        text = _get(answer, "text", str, path, f"{where}, answer {len(texts)}")
        start = _get(answer, "answer_start", int, path, f"{where}, answer {len(texts)}")
        if start < 0 or context[start:start + len(text)] != text:
            raise DataError(f"{path}: {where}: answer {text!r:.60} is not the passage's text at answer_start {start} "
                            f"({context[start:start + len(text)]!r:.60})")
        texts.append(text)
        span = char_span_to_token_span(offsets, start, start + len(text))
        if span is not None:
            spans.append(span)
    if not texts:
        raise DataError(f"{path}: {where}: no answer")
    return SpanExample(qid, context, tokens, offsets, question_tokens, target_span(spans, len(tokens)), tuple(texts))


def read_split(data_dir: str | Path, split: str, *, articles: int | None = None, questions: int | None = None,
               window_tokens: int | None = None, download: bool = True) -> list[SpanExample]:
    """One split's questions from its checked file (:func:`split_file`), subset as the options say."""
    return read_file(split_file(data_dir, split, download)[0], articles=articles, questions=questions,
                     window_tokens=window_tokens)
