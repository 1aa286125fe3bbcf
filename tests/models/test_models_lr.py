"""Logistic regression of Table 3 on generated SST fixtures."""
import warnings
from pathlib import Path

import numpy as np
import pytest

import syw.models.logistic_regression as lr
from syw.core.context import TrialContext
from syw.models.tasks.sentence import dataset_key, load_texts
from tests.support.fixtures_sst import real_data_dir, requires_real_sst, write_sst_fixture

SST5 = dataset_key({"name": "sst", "granularity": "fine"})
BEST = {"penalty": "l2", "max_iter": 100, "solver": "liblinear", "C": 0.13, "ngram_range": [1, 2],
        "stopwords": True, "weight": "binary", "tol": 0.00014}  # Table 3's best assignment


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_sst_fixture(tmp_path_factory.mktemp("lr"))


def context(data_dir, cache_dir=None, **dataset):
    return TrialContext(study="test", family="lr", trial_index=0, seed=5, data_dir=Path(data_dir),
                        cache_dir=Path(cache_dir or Path(data_dir) / "cache"),
                        dataset={"name": "sst", "granularity": "fine", **dataset})


def test_weights():
    docs = ["good good film", "bad film"]
    tf = lr.make_vectorizer((1, 1), False, "tf").fit(docs)
    assert tf.transform(["good good film"]).toarray().max() == 2
    binary = lr.make_vectorizer((1, 1), False, "binary").fit(docs)
    assert binary.transform(["good good film"]).toarray().max() == 1
    tfidf = lr.make_vectorizer((1, 1), False, "tfidf").fit(docs)
    assert np.linalg.norm(tfidf.transform(["good good film"]).toarray()) == pytest.approx(1)
    bigrams = lr.make_vectorizer((2, 3), True, "tf").fit(["the good film was very good"])
    assert "good film" in bigrams.vocabulary_ and "the good" not in bigrams.vocabulary_
    with pytest.raises(ValueError, match="weight must be"):
        lr.make_vectorizer((1, 2), False, "tf-idf")


def test_classifier_penalties_and_zero_c():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 30))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)
    l1 = lr.make_classifier("l1", 0.05, 1e-4, 100, "liblinear", seed=0).fit(x, y)
    l2 = lr.make_classifier("l2", 0.05, 1e-4, 100, "liblinear", seed=0).fit(x, y)
    assert len(l1.estimators_) == 3  # one-vs-rest
    assert sum((e.coef_ == 0).sum() for e in l1.estimators_) > 40
    assert sum((e.coef_ == 0).sum() for e in l2.estimators_) == 0
    zero = lr.make_classifier("l2", 0.0, 1e-4, 100, "liblinear", seed=0)
    assert zero.estimator.C == lr.MIN_C
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zero.fit(x, y)  # C = 0 (a valid Table 3 draw) still trains
    with pytest.raises(ValueError, match="penalty must be"):
        lr.make_classifier("elasticnet", 0.5, 1e-4, 100, "liblinear", seed=0)


@pytest.mark.parametrize("assignment", [
    BEST,
    BEST | {"penalty": "l1", "C": 0.9, "ngram_range": [1, 3], "stopwords": False, "weight": "tfidf"},
    BEST | {"C": 0.5, "weight": "tf", "stopwords": False, "tol": 0.01},
])
def test_trains_above_chance_on_fixture(data_dir, assignment):
    outcome = lr.train(assignment, context(data_dir))
    assert outcome.metric >= 0.8  # chance is 0.2 on five balanced classes
    assert outcome.best_epoch is None and outcome.epochs_run is None


def test_bigrams_only_and_binary_granularity(data_dir):
    assert lr.train(BEST | {"ngram_range": [2, 3], "stopwords": False}, context(data_dir)).metric >= 0.5
    assert lr.train(BEST, context(data_dir, granularity="binary")).metric >= 0.9


def test_features_cached_across_trials(data_dir):
    lr.train(BEST, context(data_dir))
    hits = lr.load_features.cache_info().hits
    lr.train(BEST | {"C": 0.7, "penalty": "l1"}, context(data_dir))
    assert lr.load_features.cache_info().hits == hits + 1


def fresh_features(data_dir, ngram_range, stopwords, weight):
    """What the authors' script does: fit the vectorizer on train + dev text, transform each."""
    train_text, _, dev_text, _ = load_texts(Path(data_dir), SST5)
    vectorizer = lr.make_vectorizer(ngram_range, stopwords, weight).fit(train_text + dev_text)
    return vectorizer.transform(train_text), vectorizer.transform(dev_text)


@pytest.mark.parametrize("ngram_range", [(1, 2), (1, 3), (2, 3)])
@pytest.mark.parametrize("stopwords", [False, True])
@pytest.mark.parametrize("weight", ["tf", "binary", "tfidf"])
def test_features_equal_a_fresh_vectorizer_for_every_table3_setting(data_dir, tmp_path, ngram_range, stopwords, weight):
    got = lr.load_features(Path(data_dir), SST5, ngram_range, stopwords, weight, tmp_path)
    for ours, theirs in zip(got, fresh_features(data_dir, ngram_range, stopwords, weight)):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype and ours.has_sorted_indices
        assert (ours.indptr == theirs.indptr).all() and (ours.indices == theirs.indices).all()
        assert np.array_equal(ours.data, theirs.data)  # bit for bit, so liblinear sees the same problem


def test_weigh_rejects_unknown_weight():
    counts, orders = lr.count_ngrams(["good film", "bad film"], False, 2)
    assert list(orders) == [1, 2, 1, 1, 2]  # bad, bad film, film, good, good film
    with pytest.raises(ValueError, match="weight must be"):
        lr.weigh(counts, orders, (1, 2), "idf")


def test_counts_shared_on_disk_by_worker_processes(data_dir, tmp_path):
    ctx = context(data_dir, cache_dir=tmp_path)
    first = lr.train(BEST | {"weight": "tfidf"}, ctx)
    files = sorted((Path(ctx.cache_dir) / "lr_counts").glob("*.npz"))
    assert len(files) == 1  # another worker process would load this instead of tokenizing again
    lr.train(BEST | {"weight": "tf", "ngram_range": [1, 3]}, ctx)
    assert sorted((Path(ctx.cache_dir) / "lr_counts").glob("*.npz")) == files  # same stop words: same counts
    lr.load_features.cache_clear()  # as in a fresh worker: read from disk
    lr.load_counts.cache_clear()
    assert lr.train(BEST | {"weight": "tfidf"}, ctx).metric == first.metric


@pytest.mark.realdata
@requires_real_sst
def test_two_real_trials(tmp_path):
    for assignment in (BEST, BEST | {"stopwords": False, "weight": "tfidf", "C": 0.8}):
        outcome = lr.train(assignment, context(real_data_dir(), cache_dir=tmp_path))  # the data folder is read-only
        assert 0.30 <= outcome.metric <= 0.45
