"""Logistic regression on n-gram features for SST (Table 3 of Dodge et al., 2019).

Follows the paper's ``scripts/sklearn_lr.py``: sentences are the tree leaves
joined by spaces, vectorized with scikit-learn's default lowercasing analyzer
(``tf`` counts, ``tfidf`` or ``binary`` indicators; optional English stop words),
the vectorizer is fitted on train + dev text (never labels), and a liblinear
logistic regression is trained one-vs-rest (what liblinear does for
multiclass; scikit-learn >= 1.8 requires the explicit wrapper). The trial's
seed is liblinear's ``random_state``.
"""
from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse
import sklearn
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from syw.core.context import TrialContext, TrialOutcome
from syw.core.settings import SIZE, resolve
from syw.data.inputs import cache_noting_inputs
from syw.models.tasks import sentence as TASK

SETTINGS = {
    "penalty": {"values": ["l1", "l2"]},
    "C": {"type": "float", "min": 0.0},  # "regularization"; 0 is clamped to MIN_C
    "ngram_range": {"type": "list", "items": "int", "length": 2, "min": 1},
    "stopwords": {"type": "bool"},
    "weight": {"values": ["tf", "tfidf", "binary"]},
    "tol": {"type": "float", "min": 0.0},
    "max_iter": SIZE,
    "solver": {"values": ["liblinear", "saga"]},  # the two that fit both penalties
}
MIN_C = 1e-12  # Table 3 samples C from [0, 1]; liblinear needs C > 0
BASE_MAX_N = 3  # Table 3's n-gram ranges are (1, 2), (1, 3) and (2, 3): one count matrix up to trigrams serves all
_SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])


def make_vectorizer(ngram_range: tuple[int, int], stopwords: bool, weight: str) -> CountVectorizer:
    """The Table 3 feature weighting: ``tf`` counts, ``tfidf`` or ``binary`` indicators."""
    options = {"ngram_range": ngram_range, "stop_words": "english" if stopwords else None,
               "lowercase": True}
    if weight == "tfidf":
        return TfidfVectorizer(**options)
    if weight in ("tf", "binary"):
        return CountVectorizer(binary=weight == "binary", **options)
    raise ValueError(f"weight must be 'tf', 'tfidf' or 'binary', got {weight!r}")


def count_ngrams(texts: list[str], stopwords: bool, max_n: int) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """Counts of every 1..``max_n``-gram (columns in scikit-learn's sorted order) and each column's n."""
    vectorizer = make_vectorizer((1, max_n), stopwords, "tf")
    counts = vectorizer.fit_transform(texts).tocsr()
    orders = np.char.count(vectorizer.get_feature_names_out().astype(str), " ") + 1
    return counts, orders


def weigh(counts: scipy.sparse.csr_matrix, orders: np.ndarray, ngram_range: tuple[int, int],
          weight: str) -> scipy.sparse.csr_matrix:
    """The features ``make_vectorizer(ngram_range, ., weight)`` would fit on the same texts.

    A vectorizer's vocabulary is every n-gram of the texts in sorted order, so the
    columns of ``counts`` with n in ``ngram_range`` are exactly its count features;
    binary and tf-idf weights are computed from those counts as the vectorizer does.
    """
    matrix = counts[:, (orders >= ngram_range[0]) & (orders <= ngram_range[1])]
    matrix.sort_indices()  # as the vectorizer's (liblinear reads each row's features in this order)
    if weight == "tf":
        return matrix
    if weight == "binary":
        matrix.data[:] = 1
        return matrix
    if weight == "tfidf":
        return TfidfTransformer().fit_transform(matrix)
    raise ValueError(f"weight must be 'tf', 'tfidf' or 'binary', got {weight!r}")


@cache_noting_inputs(maxsize=4)
def load_counts(data_dir: Path, dataset: tuple, stopwords: bool, max_n: int, cache_dir: Path) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """n-gram counts of train + dev text (see :func:`count_ngrams`), cached per process and on disk.

    Every Table 3 vectorizer setting with the same stop-word choice is a column
    subset and re-weighting of one such matrix, so 50 trials tokenize the texts
    twice instead of 18 times. The disk cache (keyed by the texts and the setting,
    built under a lock) lets worker processes share the two matrices.
    """
    train_text, _, dev_text, _ = TASK.load_texts(data_dir, dataset)
    key = hashlib.sha256(repr((train_text, dev_text, stopwords, max_n)).encode()).hexdigest()[:20]
    folder = Path(cache_dir) / "lr_counts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.npz"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds, the others wait and load
        if not path.is_file():
            counts, orders = count_ngrams(train_text + dev_text, stopwords, max_n)
            part = path.with_name(path.name + ".part.npz")
            np.savez(part, data=counts.data, indices=counts.indices, indptr=counts.indptr,
                     shape=counts.shape, orders=orders)
            part.replace(path)
    with np.load(path) as saved:
        counts = scipy.sparse.csr_matrix((saved["data"], saved["indices"], saved["indptr"]), shape=tuple(saved["shape"]))
        return counts, saved["orders"]


@cache_noting_inputs(maxsize=24)
def load_features(data_dir: Path, dataset: tuple, ngram_range: tuple[int, int],
                  stopwords: bool, weight: str, cache_dir: Path) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """Train and dev rows of one vectorizer setting fitted on train + dev text, cached per process."""
    counts, orders = load_counts(data_dir, dataset, stopwords, max(BASE_MAX_N, ngram_range[1]), cache_dir)
    matrix = weigh(counts, orders, ngram_range, weight)
    n_train = len(TASK.load_texts(data_dir, dataset)[0])
    return matrix[:n_train], matrix[n_train:]


def make_classifier(penalty: str, C: float, tol: float, max_iter: int, solver: str,
                    seed: int) -> OneVsRestClassifier:
    """One-vs-rest liblinear logistic regression; ``C`` is clamped to at least ``MIN_C``."""
    if penalty not in ("l1", "l2"):
        raise ValueError(f"penalty must be 'l1' or 'l2', got {penalty!r}")
    # scikit-learn 1.8 deprecated `penalty`: l1_ratio=1 is L1 and 0 is L2.
    regularization = ({"l1_ratio": float(penalty == "l1")} if _SKLEARN_VERSION >= (1, 8)
                      else {"penalty": penalty})
    return OneVsRestClassifier(LogisticRegression(
        solver=solver, C=max(float(C), MIN_C), tol=float(tol), max_iter=int(max_iter),
        random_state=seed % 2**32, **regularization))


def build(params: Mapping[str, Any], data: object = None, seed: int = 0) -> OneVsRestClassifier:
    """The Table 3 classifier of one assignment (the features are the vectorizer's, not the model's)."""
    return make_classifier(params["penalty"], params["C"], params["tol"], params["max_iter"], params["solver"], seed)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Fit one Table 3 trial and return its dev accuracy (no epochs)."""
    params = resolve(params, SETTINGS)
    data_key = (Path(ctx.data_dir), TASK.dataset_key(ctx.dataset))
    ngram_range = tuple(int(n) for n in params["ngram_range"])
    if not 1 <= ngram_range[0] <= ngram_range[1]:
        raise ValueError(f"ngram_range must be [min_n, max_n] with 1 <= min_n <= max_n, got {params['ngram_range']!r}")
    x_train, x_dev = load_features(*data_key, ngram_range, bool(params["stopwords"]), params["weight"], Path(ctx.cache_dir))
    _, y_train, _, y_dev = TASK.load_texts(*data_key)
    classifier = build(params, seed=ctx.seed)
    classifier.fit(x_train, y_train)
    return TrialOutcome(metric=float(classifier.score(x_dev, y_dev)))
