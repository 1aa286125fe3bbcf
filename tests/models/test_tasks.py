"""Task adapters on hand-made and generated data: sentence pairs, spans, the SQuAD metric."""
import re

import pytest
import torch

from syw.core.errors import DataError, DataMissingError
from syw.data.scitail import PairExample, read_tokenized
from syw.models.tasks import pair, span
from syw.models.tasks.squad_metric import exact_match, f1, normalize_answer, score
from tests.support.fixtures_sst import real_data_dir, requires_real


@pytest.mark.parametrize("text, normalized", [
    ("The Cat", "cat"),                       # lowercase, article dropped
    ("a  cat,  an owl!", "cat owl"),          # punctuation deleted, articles dropped, whitespace collapsed
    ("theory of the atom", "theory of atom"), # only whole words: "theory" keeps its "the"
    ("U.S.-based", "usbased"),                # punctuation deleted, not replaced by a space
    ("\tAn\napple ", "apple"),
])
def test_normalize_answer_rules(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_f1_and_score():
    assert exact_match("the Denver Broncos", "Denver Broncos!") == 1.0
    assert f1("Denver Broncos won", "the Denver Broncos") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert f1("a", "the") == 0.0  # both normalise to nothing
    assert f1("cat cat dog", "cat dog dog") == pytest.approx(2 / 3)  # multiset intersection: cat, dog
    result = score({"1": "Broncos", "2": "nothing"}, {"1": ["Denver Broncos", "Broncos"], "2": ["x y"], "3": ["z"]})
    assert result == {"exact_match": pytest.approx(1 / 3), "f1": pytest.approx(1 / 3)}


def test_best_span_has_no_length_limit_and_start_before_end():
    start = torch.tensor([[0.0, 5.0, 0.0, 0.0, -1e7], [3.0, 0.0, 0.0, 0.0, 0.0]])
    end = torch.tensor([[8.0, 0.0, 0.0, 4.0, -1e7], [0.0, 0.0, 0.0, 0.0, 6.0]])
    # row 0: the best end (0) precedes the best start (1): 5 + 4 at (1, 3) beats 0 + 8 at (0, 0)
    assert span.best_span(start, end).tolist() == [[1, 3], [0, 4]]


def test_span_evaluation_with_a_model_that_points_at_the_target():
    data = span.synthetic(n=12)

    spans = {tuple(row[row > 0].tolist()): (s, e) for row, s, e in zip(data.dev.passage, data.dev.span_start, data.dev.span_end)}

    class Oracle(torch.nn.Module):  # scores the target span's tokens highest
        def forward(self, passage, question):
            start, end = torch.zeros(passage.shape), torch.zeros(passage.shape)
            for i, row in enumerate(passage):
                s, e = spans[tuple(row[row > 0].tolist())]
                start[i, s], end[i, e] = 1.0, 1.0
            return {"span_start_logits": start, "span_end_logits": end}

    assert span.evaluate(Oracle(), data.dev) == {"exact_match": 1.0, "f1": 1.0}
    example = data.dev.examples[0]
    assert span.answer_text(example, example.span) == example.answers[0]


def test_span_batches_cover_every_question_once():
    data = span.synthetic(n=20)
    seen = [i for b in span.training_batches(data.train, {"batch_size": 6}, torch.Generator().manual_seed(0))
            for i in b["rows"].tolist()]
    assert sorted(seen) == list(range(20))


def test_pair_indexing_with_end_token_and_batches():
    examples = [PairExample(("A", "cat", "sat"), ("cat",), 0), PairExample(("dogs",), ("A", "dog", "ran"), 1)]
    token_ids = {"@@PADDING@@": 0, "@@UNKNOWN@@": 1, "a": 2, "cat": 3, "@@null@@": 4}
    indexed = pair.index_pairs(examples, token_ids, end_token="@@NULL@@")
    assert indexed.premise.tolist() == [[2, 3, 1, 4], [1, 4, 0, 0]]
    assert indexed.hypothesis.tolist() == [[3, 4, 0, 0], [2, 1, 1, 4]]
    assert indexed.premise_lengths.tolist() == [4, 2] and indexed.labels.tolist() == [0, 1]
    data = pair.synthetic(n_train=50)
    rows = [b["label"].shape[0] for b in pair.training_batches(data.train, {"batch_size": 8}, torch.Generator().manual_seed(1))]
    assert sum(rows) == 50 and max(rows) == 8


@pytest.mark.parametrize("line, message", [
    ("premise only\n", "expected premise, hypothesis and label separated by tabs, got 1 field"),
    ("p\th\t2\n", "label must be 0 (entails) or 1 (neutral), got '2'"),
    ("p\t \t0\n", "empty premise or hypothesis"),
])
def test_tokenized_scitail_rejects_malformed_lines(tmp_path, line, message):
    folder = tmp_path / "scitail_tokenized"
    folder.mkdir()
    (folder / "dev.txt").write_text("a b\tc\t0\n" + line)
    with pytest.raises(DataError, match=re.escape(f"dev.txt:2: {message}")):
        read_tokenized(tmp_path, "dev")


def test_tokenized_scitail_missing_and_empty(tmp_path):
    with pytest.raises(DataMissingError, match="scitail_tokenized/dev.txt not found"):
        read_tokenized(tmp_path, "dev")
    (tmp_path / "scitail_tokenized").mkdir()
    (tmp_path / "scitail_tokenized" / "test.txt").write_text("\n")
    with pytest.raises(DataError, match="holds no pairs"):
        read_tokenized(tmp_path, "test")


@pytest.mark.realdata
@requires_real("scitail_tokenized/dev.txt", "scitail_tokenized/test.txt")
def test_real_tokenized_scitail_counts():
    dev, test = read_tokenized(real_data_dir(), "dev"), read_tokenized(real_data_dir(), "test")
    assert (len(dev), sum(ex.label == 0 for ex in dev)) == (1304, 657)
    assert (len(test), sum(ex.label == 0 for ex in test)) == (2126, 842)


def _official(tmp_path, fmt, name, text):
    folder = tmp_path / "scitail" / "SciTailV1.1" / fmt
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def test_official_scitail_formats_tokenized_with_spacy(tmp_path):
    from syw.data.scitail import read_official

    _official(tmp_path, "snli_format", "scitail_1.0_dev.txt",
              '{"sentence1": "The U.S.-based plant isn\'t green.", "sentence2": "Plants are  green.", "gold_label": "neutral"}\n'
              '{"sentence1": "a", "sentence2": "b", "gold_label": "-"}\n'
              '{"sentence1": "Cells divide.", "sentence2": "Cells split.", "gold_label": "entailment"}\n')
    dev = read_official(tmp_path, "dev")
    assert [ex.label for ex in dev] == [1, 0]  # the "-" pair is skipped, as AllenNLP's reader did
    assert dev[0].premise == ("The", "U.S.-based", "plant", "is", "n't", "green", ".")
    assert dev[0].hypothesis == ("Plants", "are", "green", ".")  # the whitespace token is dropped
    _official(tmp_path, "dgem_format", "scitail_1.0_structure_test.tsv",
              "Cells divide.\tCells split.\tentails\tCells<>split<>L:in two\n")
    (test,) = read_official(tmp_path, "test", "dgem_format")
    assert test.label == 0 and test.structure == "Cells<>split<>L:in two"


@pytest.mark.parametrize("fmt, name, text, message", [
    ("snli_format", "scitail_1.0_dev.txt", '{"sentence1": "a"}\n', "dev.txt:1: not a JSON object with sentence1"),
    ("tsv_format", "scitail_1.0_dev.tsv", "a\tb\tentails\nc\td\n", "dev.tsv:2: expected 3 tab-separated fields, got 2"),
    ("tsv_format", "scitail_1.0_dev.tsv", "a\tb\tcontradiction\n", "dev.tsv:1: label must be entails or neutral, got 'contradiction'"),
    ("dgem_format", "scitail_1.0_structure_dev.tsv", "a\tb\tentails\n", "dev.tsv:1: expected 4 tab-separated fields, got 3"),
])
def test_official_scitail_rejects_malformed_lines(tmp_path, fmt, name, text, message):
    from syw.data.scitail import read_official

    _official(tmp_path, fmt, name, text)
    with pytest.raises(DataError, match=re.escape(message)):
        read_official(tmp_path, "dev", fmt)


def test_official_scitail_missing_says_where_to_put_the_release(tmp_path, monkeypatch):
    import syw.data.scitail as scitail

    def offline(url, dest, **_):
        raise DataMissingError(f"could not download {url}")

    monkeypatch.setattr(scitail, "fetch", offline)
    with pytest.raises(DataMissingError, match=r"SciTailV1\.1/snli_format/scitail_1\.0_train\.txt not found: download "
                                               r"http://data\.allenai\.org\.s3\.amazonaws\.com/downloads/SciTailV1\.1\.zip"):
        scitail.read_official(tmp_path, "train")
