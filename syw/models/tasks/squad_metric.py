"""The official SQuAD v1.1 metric: exact match and bag-of-tokens F1 (docs/models.md §H, "Metrics").

Answers are normalised (lowercase, every ``string.punctuation`` character deleted, the whole
words a/an/the replaced by a space, whitespace collapsed); each score is the maximum over the
gold answers. The official script reports the averages times 100; these functions return
fractions.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation, drop articles, collapse whitespace (in the official order)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall over the multiset intersection."""
    predicted, truth = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(truth)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(truth)
    return 2 * precision * recall / (precision + recall)


def best_over(metric, prediction: str, golds: Iterable[str]) -> float:
    """``metric`` of ``prediction`` against the best-matching gold answer."""
    return max(metric(prediction, gold) for gold in golds)


def score(predictions: dict[str, str], answers: dict[str, list[str]]) -> dict[str, float]:
    """Mean exact match and F1 of ``predictions`` (question id -> text) over the questions of ``answers``."""
    if not answers:
        raise ValueError("no questions to score")
    em = [best_over(exact_match, predictions.get(qid, ""), golds) for qid, golds in answers.items()]
    f = [best_over(f1, predictions.get(qid, ""), golds) for qid, golds in answers.items()]
    return {"exact_match": sum(em) / len(em), "f1": sum(f) / len(f)}
