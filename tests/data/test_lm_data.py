"""PTB and Wikitext-2 readers (Melis et al., 2018, section 3): token streams, vocabulary, checksums,
downloads from file:// sources, and one clear line for a missing or malformed file."""
import dataclasses
import hashlib
import os
import zipfile
from pathlib import Path

import pytest

import syw.data.lm as lm
from syw.cli import main as syw
from syw.core.errors import DataError, DataMissingError
from syw.data.inputs import recording

TEXT = " the cat sat \n\n a dog <unk> \n"
REAL = Path(os.environ["SYW_DATA_DIR"]) if os.environ.get("SYW_DATA_DIR") else None


def digest(data: bytes, algorithm: str) -> str:
    return hashlib.new(algorithm, data).hexdigest()


def fake_corpus(tmp_path: Path, texts: dict[str, str], *, archive: bool = False) -> lm.Corpus:
    """A corpus like PTB (per-file URLs, md5) or Wikitext-2 (a zip, sha256) served from file:// URLs."""
    source = tmp_path / "source"
    source.mkdir()
    algorithm = "sha256" if archive else "md5"
    files = {split: f"f.{split}.txt" for split in texts}
    digests = {split: digest(text.encode(), algorithm) for split, text in texts.items()}
    if archive:
        with zipfile.ZipFile(source / "c.zip", "w") as zf:
            for split, text in texts.items():
                zf.writestr(f"c/{files[split]}", text)
        return lm.Corpus("fake", "fake", files, algorithm, digests, {}, 0, archive=(source / "c.zip").as_uri(),
                         archive_folder="c")
    for split, text in texts.items():
        (source / files[split]).write_text(text)
    return lm.Corpus("fake", "fake", files, algorithm, digests, {}, 0,
                     urls={split: (source / file).as_uri() for split, file in files.items()})


def test_each_line_ends_with_eos_and_a_blank_line_is_a_lone_eos(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(TEXT)
    assert lm.read_tokens(path) == ["the", "cat", "sat", "<eos>", "<eos>", "a", "dog", "<unk>", "<eos>"]


def test_vocabulary_most_frequent_first_ties_in_order_of_appearance():
    assert lm.vocabulary(["b", "a", "<eos>", "a", "c", "<eos>"]) == ["a", "<eos>", "b", "c"]


@pytest.mark.parametrize("content, message", [
    (b"ok line\ncaf\xe9 au lait\n", r"^{p}:2: not UTF-8 text"),
    (b"one\ntwo <eos> three\n", r"^{p}:2: the word <eos> inside a line"),
    (b"", r"^{p}: the file is empty$"),
])
def test_malformed_file_is_one_line_naming_file_and_line(tmp_path, content, message):
    path = tmp_path / "t.txt"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message.format(p=str(path).replace(".", r"\."))):
        lm.read_tokens(path)


def test_a_word_outside_the_vocabulary_names_its_line():
    tokens = ["a", "<eos>", "b", "<eos>", "a", "zebra", "<eos>"]
    with pytest.raises(DataError, match=r"^v\.txt:3: the word 'zebra' is not in the training split's vocabulary"):
        lm.token_ids(tokens, {"a": 0, "b": 1, "<eos>": 2}, "v.txt")
    assert lm.token_ids(tokens[:4], {"a": 0, "b": 1, "<eos>": 2}, "v.txt") == [0, 2, 1, 2]


@pytest.mark.parametrize("archive", [False, True], ids=["files-md5", "zip-sha256"])
def test_missing_files_are_downloaded_checked_and_read(tmp_path, monkeypatch, archive):
    texts = {"train": "a b\nb\n", "valid": "b a\n", "test": "a\n"}
    monkeypatch.setitem(lm.CORPORA, "fake", fake_corpus(tmp_path, texts, archive=archive))
    data_dir = tmp_path / "data"
    with recording() as seen:
        assert lm.read_split(data_dir, "fake", "valid") == ["b", "a", "<eos>"]
    assert sorted(p.name for p in (data_dir / "fake").iterdir() if p.suffix == ".txt") == ["f.test.txt", "f.train.txt", "f.valid.txt"]
    assert seen == {"fake/f.valid.txt": str((data_dir / "fake" / "f.valid.txt").resolve())}
    assert not list((data_dir / "fake").glob("*.part"))


def test_a_download_with_the_wrong_checksum_is_refused_and_not_kept(tmp_path, monkeypatch):
    corpus = fake_corpus(tmp_path, {"train": "a\n", "valid": "a\n", "test": "a\n"}, archive=True)
    monkeypatch.setitem(lm.CORPORA, "fake", dataclasses.replace(corpus, digests={**corpus.digests, "test": "0" * 64}))
    with pytest.raises(DataError, match=r"f\.test\.txt: sha256 \w+, expected 0{64} \(the published fake test file\)"):
        lm.read_split(tmp_path / "data", "fake", "train")
    assert not (tmp_path / "data" / "fake" / "f.test.txt").exists()
    assert not list((tmp_path / "data" / "fake").glob("*.part"))


def test_an_altered_file_in_place_is_a_checksum_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setitem(lm.CORPORA, "fake", fake_corpus(tmp_path, {"train": "a\n", "valid": "a\n", "test": "a\n"}))
    data_dir = tmp_path / "data"
    lm.ensure(data_dir, "fake")
    path = data_dir / "fake" / "f.train.txt"
    path.write_text("a\nb\n")
    altered = digest(b"a\nb\n", "md5")
    with pytest.raises(DataError, match=rf"^{path}: md5 {altered}, expected \w+ \(the published fake train file\); "
                                        "it is truncated or altered"):
        lm.read_split(data_dir, "fake", "train")


def test_no_network_and_no_files_is_data_missing_naming_the_files(tmp_path, monkeypatch):
    corpus = fake_corpus(tmp_path, {"train": "a\n", "valid": "a\n", "test": "a\n"})
    gone = {split: (tmp_path / "nowhere" / split).as_uri() for split in corpus.urls}
    monkeypatch.setitem(lm.CORPORA, "fake", dataclasses.replace(corpus, urls=gone))
    with pytest.raises(DataMissingError, match=r"^fake files missing: .*f\.train\.txt.*syw download fake --data-dir"):
        lm.read_split(tmp_path / "data", "fake", "train")


def test_syw_download_counts_each_split_and_a_bad_one_is_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(lm.CORPORA, "fake", fake_corpus(tmp_path, {"train": "a\n", "valid": "a b\n\n", "test": "a\n"}))
    data_dir = tmp_path / "data"
    assert syw(["download", "fake", "--data-dir", str(data_dir)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{split}: {data_dir / 'fake' / f'f.{split}.txt'} {n} tokens, md5 ok" for split, n in (("train", 2), ("valid", 4), ("test", 2))]
    (data_dir / "fake" / "f.valid.txt").write_bytes(b"\xff\n")
    assert syw(["download", "fake", "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {data_dir / 'fake' / 'f.valid.txt'}: md5 ")


PUBLISHED = [  # corpus, tokens per split, vocabulary size and first words, a split whose every word is in train's
    pytest.param("ptb", {"train": 929_589, "valid": 73_760, "test": 82_430}, 10_000, ["the", "<unk>", "<eos>"], "test"),
    pytest.param("wikitext-2", {"train": 2_088_628, "valid": 217_646, "test": 245_569}, 33_278, ["the", ",", "."],
                 "valid", marks=pytest.mark.slow),
]


@pytest.mark.realdata
@pytest.mark.parametrize("corpus, tokens, vocab_size, first_words, covered", PUBLISHED)
def test_published_counts(corpus, tokens, vocab_size, first_words, covered):
    if REAL is None or not (REAL / corpus).is_dir():
        pytest.skip(f"set SYW_DATA_DIR to a folder with {corpus}/")
    splits = {split: lm.read_split(REAL, corpus, split, download=False) for split in lm.SPLITS}
    assert {split: len(words) for split, words in splits.items()} == tokens
    vocab = lm.vocabulary(splits["train"])
    assert len(vocab) == vocab_size and vocab[:3] == first_words
    ids = {word: i for i, word in enumerate(vocab)}
    assert len(lm.token_ids(splits[covered], ids, covered)) == tokens[covered]
