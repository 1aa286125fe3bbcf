"""SST reader and downloader (the data of Tables 2 and 3) on generated fixtures."""
import hashlib
import io
import urllib.error
import urllib.request
import zipfile
from collections import Counter

import pytest

import syw.data.download as download
import syw.data.sst as sst
from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import fetch
from syw.data.sst import Example, parse_tree, read_sst
from tests.support.fixtures_sst import real_data_dir, requires_real_sst, write_sst_fixture

TREES = [
    "(3 (2 It) (4 (2 's) (3 great)))",
    "(1 (2 -LRB-) (0 (0 awful) (2 -RRB-)))",
    "(2 (2 just) (2 fine))",
    "(4 (4 brilliant) (2 .))",
]


@pytest.fixture
def hand_dir(tmp_path):
    (tmp_path / "sst").mkdir()
    for split in ("train", "dev", "test"):
        (tmp_path / "sst" / f"{split}.txt").write_text("\n".join(TREES) + "\n")
    return tmp_path


def test_parse_tree_leaves_and_nodes_in_preorder():
    leaves, nodes = parse_tree(TREES[0])
    assert leaves == ["It", "'s", "great"]
    assert nodes == [(3, 0, 3), (2, 0, 1), (4, 1, 3), (2, 1, 2), (3, 2, 3)]


@pytest.mark.parametrize("line, problem", [
    ("(3 (2 It) (4 (2 's) (3 great))", "left open"),
    ("(3 (2 It)) (2 x)", "after the end"),
    ("(x (2 It))", "integer label"),
    (")(3 (2 It))", "without a matching"),
    ("(3 (2 It)))", "after the end"),
    ("(3 )", "no words"),
])
def test_parse_tree_rejects_malformed(line, problem):
    with pytest.raises(ValueError, match=problem):
        parse_tree(line)


def test_sentences_fine_labels_and_tokens_as_written(hand_dir):
    examples = read_sst(hand_dir, "train", download=False)
    assert examples == [
        Example(("It", "'s", "great"), 3),
        Example(("-LRB-", "awful", "-RRB-"), 1),
        Example(("just", "fine"), 2),
        Example(("brilliant", "."), 4),
    ]


def test_subtrees_yield_every_labelled_node_root_first(hand_dir):
    examples = read_sst(hand_dir, "dev", subtrees=True, download=False)
    assert len(examples) == 5 + 5 + 3 + 3
    assert examples[:5] == [Example(("It", "'s", "great"), 3), Example(("It",), 2),
                            Example(("'s", "great"), 4), Example(("'s",), 2), Example(("great",), 3)]


def test_binary_drops_neutral_and_maps_labels(hand_dir):
    assert [ex.label for ex in read_sst(hand_dir, "test", "binary", download=False)] == [1, 0, 1]
    phrases = read_sst(hand_dir, "test", "binary", subtrees=True, download=False)
    assert Counter(ex.label for ex in phrases) == {1: 5, 0: 3}
    assert all(ex.tokens != ("just", "fine") for ex in phrases)


def test_generated_fixture_reads_back(tmp_path):
    data_dir = write_sst_fixture(tmp_path, n_train=50, n_dev=20, n_test=10)
    assert [len(read_sst(data_dir, s, download=False)) for s in ("train", "dev", "test")] == [50, 20, 10]


def test_unbalanced_line_names_file_and_line(hand_dir):
    path = hand_dir / "sst" / "train.txt"
    path.write_text(TREES[0] + "\n" + TREES[1][:-3] + "\n")
    with pytest.raises(DataError, match=rf"{path}:2: unbalanced parentheses"):
        read_sst(hand_dir, "train", download=False)


def test_a_file_without_trees_is_an_error_naming_it(hand_dir):
    path = hand_dir / "sst" / "dev.txt"
    path.write_text("")
    with pytest.raises(DataError, match=rf"^{path}: the file is empty, no tree"):
        read_sst(hand_dir, "dev", download=False)
    path.write_text("\n  \n\n")
    with pytest.raises(DataError, match=rf"^{path}:3: the file holds only blank lines, no tree"):
        read_sst(hand_dir, "dev", download=False)


def test_blank_lines_between_trees_are_passed_over(hand_dir):
    path = hand_dir / "sst" / "dev.txt"
    path.write_text("\n" + TREES[0] + "\n\n" + TREES[1] + "\n\n")
    assert [ex.label for ex in read_sst(hand_dir, "dev", download=False)] == [3, 1]


def test_truncated_official_file_is_detected(hand_dir, monkeypatch):
    # A file that starts like the official train.txt but has fewer trees is a truncated copy.
    first = hashlib.md5(TREES[0].encode()).hexdigest()
    monkeypatch.setitem(sst._OFFICIAL_FIRST_LINE_MD5, "train", first)
    with pytest.raises(DataError, match=r"train.txt:5: file ends after 4 trees .* 8544"):
        read_sst(hand_dir, "train", download=False)


def test_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"sst/train.txt not found. Set SYW_DATA_DIR"):
        read_sst(tmp_path, "train", download=False)


def test_missing_file_without_network_names_url_and_folder(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DataMissingError) as err:
        read_sst(tmp_path, "dev")
    message = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    assert download.SST_URL in message and str(tmp_path / "sst") in message
    assert "SYW_DATA_DIR" in message and "syw download sst" in message
    assert not list((tmp_path / "sst").iterdir())  # no partial files left behind


def _serve(payload: bytes):
    def urlopen(url, timeout):
        return io.BytesIO(payload)
    return urlopen


def test_download_extracts_trees_flat_and_verifies_md5(tmp_path, monkeypatch):
    source = write_sst_fixture(tmp_path / "source", n_train=20, n_dev=5, n_test=5) / "sst"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for split in ("train", "dev", "test"):
            zf.write(source / f"{split}.txt", f"trainDevTestTrees_PTB/trees/{split}.txt")
    monkeypatch.setattr(urllib.request, "urlopen", _serve(archive.getvalue()))
    md5s = {s: download.file_digest(source / f"{s}.txt", "md5") for s in ("train", "dev", "test")}
    monkeypatch.setattr(download, "SST_MD5", md5s)
    paths = download.ensure_sst(tmp_path / "data")
    assert sorted(p.name for p in (tmp_path / "data" / "sst").iterdir()) == [
        "dev.txt", "test.txt", "train.txt", "trainDevTestTrees_PTB.zip"]
    assert paths["train"].read_bytes() == (source / "train.txt").read_bytes()
    assert len(read_sst(tmp_path / "data", "train")) == 20

    # a zip copied in by hand is extracted without the network
    (tmp_path / "data" / "sst" / "dev.txt").unlink()
    monkeypatch.setattr(urllib.request, "urlopen", None)
    assert len(read_sst(tmp_path / "data", "dev")) == 5

    md5s["dev"] = "0" * 32
    with pytest.raises(DataError, match="has md5"):
        download.download_sst(tmp_path / "data")
    assert not (tmp_path / "data" / "sst" / "dev.txt.part").exists()


def test_fetch_rejects_bad_checksum_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _serve(b"hello"))
    dest = tmp_path / "f.bin"
    assert fetch("http://x/f.bin", dest, sha256=hashlib.sha256(b"hello").hexdigest()).read_bytes() == b"hello"
    with pytest.raises(DataError, match="sha256"):
        fetch("http://x/f.bin", tmp_path / "g.bin", sha256="0" * 64)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]


@pytest.mark.realdata
@requires_real_sst
def test_real_sst_counts():
    data_dir = real_data_dir()
    sizes = {s: len(read_sst(data_dir, s, download=False)) for s in ("train", "dev", "test")}
    assert sizes == {"train": 8544, "dev": 1101, "test": 2210}
    train = read_sst(data_dir, "train", download=False)
    assert [Counter(ex.label for ex in train)[k] for k in range(5)] == [1092, 2218, 1624, 2322, 1288]
    binary = [len(read_sst(data_dir, s, "binary", download=False)) for s in ("train", "dev", "test")]
    assert binary == [6920, 872, 1821]
