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
import functools
import hashlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import scipy.sparse
import sklearn
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from data.sst import read_sst
from experiments.context import TrialContext, TrialOutcome

MIN_C = 1e-12  # Table 3 samples C from [0, 1]; liblinear needs C > 0
_SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])


@functools.lru_cache(maxsize=4)
def load_texts(data_dir: Path, granularity: str, subtrees: bool) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Train and dev sentences (train phrases too when ``subtrees``) and labels; cached per process."""
    train = read_sst(data_dir, "train", granularity, subtrees)
    dev = read_sst(data_dir, "dev", granularity)
    return ([" ".join(ex.tokens) for ex in train], np.array([ex.label for ex in train]),
            [" ".join(ex.tokens) for ex in dev], np.array([ex.label for ex in dev]))


def make_vectorizer(ngram_range: tuple[int, int], stopwords: bool, weight: str) -> CountVectorizer:
    """The Table 3 feature weighting: ``tf`` counts, ``tfidf`` or ``binary`` indicators."""
    options = {"ngram_range": ngram_range, "stop_words": "english" if stopwords else None,
               "lowercase": True}
    if weight == "tfidf":
        return TfidfVectorizer(**options)
    if weight in ("tf", "binary"):
        return CountVectorizer(binary=weight == "binary", **options)
    raise ValueError(f"weight must be 'tf', 'tfidf' or 'binary', got {weight!r}")


def featurize(train_text: list[str], dev_text: list[str], ngram_range: tuple[int, int], stopwords: bool,
              weight: str) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """Fit the vectorizer on train + dev text in one pass and split the rows back into train and dev."""
    matrix = make_vectorizer(ngram_range, stopwords, weight).fit_transform(train_text + dev_text).tocsr()
    return matrix[: len(train_text)], matrix[len(train_text):]


@functools.lru_cache(maxsize=24)
def load_features(data_dir: Path, granularity: str, subtrees: bool, ngram_range: tuple[int, int],
                  stopwords: bool, weight: str, cache_dir: Path) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """Train and dev feature matrices, cached per process and on disk.

    The 18 vectorizer settings of Table 3 recur across the 50 trials; the disk cache
    (keyed by the texts and the setting, built under a lock) lets trials running in
    different worker processes share each setting's features instead of each
    building them.
    """
    train_text, _, dev_text, _ = load_texts(data_dir, granularity, subtrees)
    key = hashlib.sha256(repr((train_text, dev_text, ngram_range, stopwords, weight)).encode()).hexdigest()[:20]
    folder = Path(cache_dir) / "lr_features"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.npz"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds, the others wait and load
        if not path.is_file():
            x_train, x_dev = featurize(train_text, dev_text, ngram_range, stopwords, weight)
            part = path.with_name(path.name + ".part.npz")
            scipy.sparse.save_npz(part, scipy.sparse.vstack([x_train, x_dev]).tocsr(), compressed=False)
            part.replace(path)
    matrix = scipy.sparse.load_npz(path).tocsr()
    return matrix[: len(train_text)], matrix[len(train_text):]


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


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Fit one Table 3 trial and return its dev accuracy (no epochs)."""
    data_key = (Path(ctx.data_dir), ctx.dataset.get("granularity", "fine"),
                bool(ctx.dataset.get("subtrees", False)))
    ngram_range = tuple(int(n) for n in params["ngram_range"])
    if len(ngram_range) != 2 or not 1 <= ngram_range[0] <= ngram_range[1]:
        raise ValueError(f"ngram_range must be [min_n, max_n], got {params['ngram_range']!r}")
    x_train, x_dev = load_features(*data_key, ngram_range, bool(params["stopwords"]), params["weight"], Path(ctx.cache_dir))
    _, y_train, _, y_dev = load_texts(*data_key)
    classifier = make_classifier(params["penalty"], params["C"], params["tol"], params["max_iter"],
                                 params["solver"], ctx.seed)
    classifier.fit(x_train, y_train)
    return TrialOutcome(metric=float(classifier.score(x_dev, y_dev)))
