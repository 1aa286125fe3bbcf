"""SciTail's tsv_format reader: the rebuilt splits recognised by md5 and named so in records, every
pair kept, malformed lines named by file and line, and a study that meets one stops (exit 2)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import syw.data.scitail as scitail
from syw.core.errors import DataError
from syw.core.records import iter_records
from syw.data.inputs import recording, sha256_of
from tests.support.runner_util import run

TSV = "scitail/SciTailV1.1/tsv_format"
GOOD = "Cells divide in two.\tCells split.\tentails\nPlants are green.\tPlants are blue.\tneutral\n"


def real_scitail_dir() -> Path | None:
    """``SYW_DATA_DIR`` when it holds the tsv_format splits, else None."""
    root = os.environ.get("SYW_DATA_DIR")
    return Path(root) if root and (Path(root) / TSV / "scitail_1.0_train.tsv").is_file() else None


def write_split(data_dir: Path, split: str, content: str | bytes) -> Path:
    path = data_dir / TSV / f"scitail_1.0_{split}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_every_pair_is_kept_duplicates_included(tmp_path):
    write_split(tmp_path, "train", GOOD + GOOD.splitlines(keepends=True)[0] + "\n")
    pairs = scitail.read_official(tmp_path, "train", "tsv_format")
    assert [ex.label for ex in pairs] == [0, 1, 0]
    assert pairs[0] == pairs[2] and pairs[0].hypothesis == ("Cells", "split", ".")


def test_a_file_with_a_rebuilt_md5_is_named_rebuilt_in_records(tmp_path, monkeypatch):
    path = write_split(tmp_path, "dev", GOOD)
    name = f"{TSV}/scitail_1.0_dev.tsv"
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    with recording() as seen:
        scitail.read_official(tmp_path, "dev", "tsv_format")
    assert sha256_of(seen) == {name: sha256}  # an md5 of no rebuilt split: read as the release it claims to be
    monkeypatch.setitem(scitail.REBUILT_MD5, "dev", hashlib.md5(path.read_bytes()).hexdigest())
    with recording() as seen:
        scitail.read_official(tmp_path, "dev", "tsv_format")
    assert sha256_of(seen) == {f"{name} (rebuilt)": sha256}


@pytest.mark.parametrize("content, message", [
    (GOOD + "A premise.\tA hypothesis.\n", r":3: expected 3 tab-separated fields, got 2$"),
    (GOOD + "A premise.\tA hypothesis.\tentailment\n", r":3: label must be entails or neutral, got 'entailment'$"),
    (GOOD.encode() + b"Caf\xe9s sell coffee.\tCafes sell tea.\tneutral\n", r":3: not UTF-8 text \(invalid continuation byte at byte 3\)$"),
    (GOOD + "A premise.\t \tneutral\n", r":3: empty hypothesis$"),
], ids=["field-count", "label", "encoding", "empty-hypothesis"])
def test_a_malformed_line_is_a_data_error_naming_file_and_line(tmp_path, content, message):
    path = write_split(tmp_path, "train", content)
    with pytest.raises(DataError, match="^" + str(path).replace(".", r"\.") + message):
        scitail.read_official(tmp_path, "train", "tsv_format")


MALFORMED = {
    "field-count": (GOOD + "A premise.\tA hypothesis.\n", "expected 3 tab-separated fields, got 2"),
    "label": (GOOD + "A premise.\tA hypothesis.\tcontradiction\n", "label must be entails or neutral, got 'contradiction'"),
    "encoding": (GOOD.encode() + b"Caf\xe9s sell coffee.\tCafes sell tea.\tneutral\n",
                 "not UTF-8 text (invalid continuation byte at byte 3)"),
}


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_train_file_stops_the_study_naming_file_and_line(tmp_path, case):
    """The n-gram family of scitail_reduced on the tsv_format splits: exit 2, the reader's line, no record."""
    content, message = MALFORMED[case]
    data = tmp_path / "data"
    train = write_split(data, "train", content)
    write_split(data, "dev", GOOD)
    results = tmp_path / "results"
    done = run("study=scitail_reduced", "family=ngram", "trials=2", "study.dataset.name=scitail",
               "+study.dataset.format=tsv_format", "study.dataset.train=train", f"paths.data_dir={data}",
               f"paths.results_dir={results}", f"paths.cache_dir={tmp_path / 'cache'}")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == f"error: {train}:3: {message}"
    assert "Traceback" not in done.stderr
    assert not list(iter_records(results / "scitail_reduced" / "ngram.jsonl"))


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(real_scitail_dir() is None, reason=f"set SYW_DATA_DIR to a folder with {TSV}/")
def test_the_rebuilt_train_split_reads_23596_pairs_and_is_named_rebuilt():
    data = real_scitail_dir()
    path = data / TSV / "scitail_1.0_train.tsv"
    with recording() as seen:
        pairs = scitail.read_official(data, "train", "tsv_format")
    assert (len(pairs), sum(ex.label == 0 for ex in pairs)) == (23596, 8602)  # the official counts
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) - len(set(rows)) == 20  # the exact duplicate rows, kept
    assert sha256_of(seen) == {f"{TSV}/scitail_1.0_train.tsv (rebuilt)": hashlib.sha256(path.read_bytes()).hexdigest()}
    for split in ("dev", "test"):
        assert scitail.is_rebuilt(data / TSV / f"scitail_1.0_{split}.tsv", "tsv_format", split)


# --- DGEM's approximate structures, cached by the rules' version (syw.data.dgem_structure) ---

HYPOTHESES = [("Cells", "divide", "in", "two", "."), ("Plants", "are", "green", "."), ("Water",)]


def test_approximate_structures_are_cached_under_the_rules_version(tmp_path, monkeypatch):
    import syw.data.dgem_structure as dgem_structure

    direct = [dgem_structure.approximate_structure(h) for h in HYPOTHESES]
    assert direct[1] == "Plants<>are<>green ."
    with recording() as seen:
        assert dgem_structure.approximate_structures(HYPOTHESES, tmp_path) == direct
    (cached,) = tmp_path.glob("dgem-approximate-v1-*.json")
    assert list(seen) == [cached.name]
    monkeypatch.setattr(dgem_structure, "approximate_structure", lambda hypothesis: 1 / 0)  # a hit derives nothing
    assert dgem_structure.approximate_structures(HYPOTHESES, tmp_path) == direct
    monkeypatch.setattr(dgem_structure, "APPROXIMATE_VERSION", 2)  # new rules: new structures, another file
    monkeypatch.setattr(dgem_structure, "approximate_structure", lambda hypothesis: "x<>y")
    assert dgem_structure.approximate_structures(HYPOTHESES, tmp_path) == ["x<>y"] * 3
    assert len(list(tmp_path.glob("dgem-approximate-v2-*.json"))) == 1 and cached.is_file()


def test_an_unreadable_structure_cache_is_built_again(tmp_path):
    from syw.data.dgem_structure import approximate_structure, approximate_structures

    approximate_structures(HYPOTHESES, tmp_path)
    (cached,) = tmp_path.glob("dgem-approximate-v1-*.json")
    cached.write_text('["only one"]')
    with pytest.warns(UserWarning, match=r"unreadable DGEM structure cache \(not a list of 3 structures\)"):
        assert approximate_structures(HYPOTHESES, tmp_path) == [approximate_structure(h) for h in HYPOTHESES]
    assert len(cached.read_text()) > len('["only one"]')


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(real_scitail_dir() is None, reason=f"set SYW_DATA_DIR to a folder with {TSV}/")
def test_every_train_hypothesis_gets_an_approximate_structure(tmp_path):
    from syw.data.dgem_structure import approximate_structures, parse_structure

    pairs = scitail.read_official(real_scitail_dir(), "train", "tsv_format")
    structures = approximate_structures([ex.hypothesis for ex in pairs], tmp_path)
    assert len(structures) == 23596 and all(parse_structure(s)[0] for s in structures)  # every graph has a node
    assert approximate_structures([ex.hypothesis for ex in pairs], tmp_path) == structures
