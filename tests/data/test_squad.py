"""SQuAD v1.1 and BiDAF (docs/models.md §H): the reader's spans and targets, character ids and batches, the
metric against an independent implementation, BiDAF's forward, overfitting, prediction files, the
reduced study's dry run, and the real files' counts."""
import dataclasses
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from syw.core.context import TrialContext
from syw.core.errors import DataError, DataMissingError
from syw.core.settings import resolve
from syw.data.squad import (
    FILES,
    SpanExample,
    char_span_to_token_span,
    read_file,
    read_split,
    split_file,
    target_span,
    tokenize_with_offsets,
    window,
)
from syw.experiments import rescore as span_rescore
from syw.experiments.space import load_family
from syw.models import bidaf
from syw.models.tasks import span
from syw.models.tasks.squad_metric import score
from tests.support.runner_util import run

PASSAGE = "The U.S.-based firm, Acme (est. 1999), won."  # The|U.S.-based|firm|,|Acme|(|est|.|1999|)|,|won|.
UNICODE = "Café Müller opened in Zürich — in the 1920’s."  # Café|Müller|opened|in|Zürich|—|in|the|1920|’s|.


def real_squad_dir() -> Path | None:
    root = os.environ.get("SYW_DATA_DIR")
    return Path(root) if root and (Path(root) / "squad" / "dev-v1.1.json").is_file() else None


@pytest.mark.parametrize("passage, answer, start, span_", [
    (PASSAGE, "The", 0, (0, 0)),                      # at the passage's start
    (PASSAGE, "Acme", 21, (4, 4)),
    (PASSAGE, "est. 1999", 27, (6, 8)),               # across punctuation tokens
    (PASSAGE, "based", 9, (1, 1)),                    # starts inside a token: backed off to it
    (PASSAGE, " firm", 14, (1, 2)),                   # starts on a space: backed off to the token before
    (PASSAGE, "firm, Acm", 15, (2, 4)),               # ends inside a token: that token is the last
    (PASSAGE, "won.", 39, (11, 12)),                  # ends at the passage's end
    (UNICODE, "Zürich", 22, (4, 4)),                  # offsets count characters, not bytes
    (UNICODE, "—", 29, (5, 5)),
    (UNICODE, "1920’s", 38, (8, 9)),
    ("Two  spaces\nand\n\na newline.", "and\n\na newline", 12, (2, 4)),  # whitespace tokens dropped
])
def test_answer_char_span_to_token_span(passage, answer, start, span_):
    assert passage[start:start + len(answer)] == answer
    tokens, offsets = tokenize_with_offsets(passage)
    assert all(passage[s:e] == token for token, (s, e) in zip(tokens, offsets))
    assert char_span_to_token_span(offsets, start, start + len(answer)) == span_


def test_answers_ending_after_the_last_token_are_dropped():
    _, offsets = tokenize_with_offsets(PASSAGE + "  ")
    assert char_span_to_token_span(offsets, 39, 44) is None  # "won. " ends on the trailing space
    assert char_span_to_token_span(offsets, 44, 45) is None  # starts after the last token too


def test_target_is_the_most_frequent_span_ties_first_none_last_token():
    assert target_span([(1, 2), (3, 4), (3, 4)], 9) == (3, 4)
    assert target_span([(5, 6), (1, 2), (1, 2), (5, 6)], 9) == (5, 6)
    assert target_span([], 9) == (8, 8)


def squad_json(paragraphs_per_article: list[list[tuple[str, list[tuple[str, str, list[tuple[str, int]]]]]]]) -> str:
    return json.dumps({"version": "1.1", "data": [
        {"title": f"a{a}", "paragraphs": [{"context": context, "qas": [
            {"id": qid, "question": question, "answers": [{"text": t, "answer_start": s} for t, s in answers]}
            for qid, question, answers in qas]} for context, qas in paragraphs]}
        for a, paragraphs in enumerate(paragraphs_per_article)]})


FIXTURE = [
    [(PASSAGE + " ", [("q1", " Who won?\n", [("Acme", 21), ("firm, Acme", 15), ("Acme", 21)]),
                      ("q2", "When?", [("won. ", 39), ("1999", 32)])]),
     (UNICODE, [("q3", "Where?", [("Zürich", 22)])])],
    [("Short one.", [("q4", "What?", [("one", 6)])])],
]


def test_reader_targets_answers_subsets_and_windows(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(squad_json(FIXTURE), encoding="utf-8")
    q1, q2, q3, q4 = read_file(path)
    assert q1.question_tokens == ("Who", "won", "?")  # stripped, newline removed
    assert q1.span == (4, 4) and q1.answers == ("Acme", "firm, Acme", "Acme")
    assert q2.span == (8, 8) and q2.answers == ("won. ", "1999")  # "won. " has no span: 1999 is the target
    assert q3.passage == UNICODE and span.answer_text(q3, q3.span) == "Zürich"
    assert [ex.qid for ex in read_file(path, articles=1)] == ["q1", "q2", "q3"]
    assert [ex.qid for ex in read_file(path, questions=2)] == ["q1", "q2"]
    cut = read_file(path, window_tokens=4)
    assert [len(ex.passage_tokens) for ex in cut] == [4, 4, 4, 3]  # "Short one." has 3 tokens: whole
    for whole, part in zip((q1, q2, q3, q4), cut):
        assert span.answer_text(part, part.span) == span.answer_text(whole, whole.span)
        assert part.passage == whole.passage
    assert read_file(path, window_tokens=4) == cut  # the window's place is fixed by the question id


def test_window_places_the_answer_anywhere_and_keeps_long_spans():
    tokens = tuple(f"t{i}" for i in range(40))
    offsets = tuple((3 * i, 3 * i + 2) for i in range(40))
    starts = set()
    for k in range(200):
        ex = window(SpanExample(f"q{k}", "", tokens, offsets, ("q",), (20, 21), ("",)), 8)
        assert len(ex.passage_tokens) == 8 and ex.passage_tokens[ex.span[0]] == "t20" and ex.span[1] == ex.span[0] + 1
        starts.add(ex.span[0])
    assert starts == set(range(7))  # every place the two-token answer fits in 8 tokens
    long = window(SpanExample("q", "", tokens, offsets, ("q",), (10, 29), ("",)), 8)
    assert long.passage_tokens == tokens[10:30] and long.span == (0, 19)


def test_missing_file_says_what_to_fetch_and_where(tmp_path, monkeypatch):
    with pytest.raises(DataMissingError, match=rf"{tmp_path}/squad/dev-v1\.1\.json not found: download https://rajpurkar"):
        split_file(tmp_path, "dev", download=False)

    def offline(url, dest, **checks):
        raise DataMissingError(f"could not download {url}")

    monkeypatch.setattr("syw.data.squad.fetch", offline)
    with pytest.raises(DataMissingError, match=r"train-v1\.1\.json \(md5 981b2.*\) on a machine with internet .* or "
                                               rf"{tmp_path}/squad/train-v1\.1\.reconstructed\.json \(md5 b047d"):
        split_file(tmp_path, "train")


def test_a_file_is_accepted_by_its_own_md5(tmp_path):
    (tmp_path / "squad").mkdir()
    (tmp_path / "squad" / "train-v1.1.reconstructed.json").write_text(squad_json(FIXTURE))
    with pytest.raises(DataError, match=r"train-v1\.1\.reconstructed\.json: md5 \w+, expected b047d8b8"):
        split_file(tmp_path, "train", download=False)


def test_character_ids_and_batches():
    assert span.char_ids("é") == [259, 0xC3 + 1, 0xA9 + 1, 260]
    examples = [SpanExample("a", "Hi there", ("Hi", "there"), ((0, 2), (3, 8)), ("Hi", "?"), (1, 1), ("there",)),
                SpanExample("b", "Hi there", ("Hi", "there"), ((0, 2), (3, 8)), ("Who",), (0, 0), ("Hi",)),
                SpanExample("c", "Yo", ("Yo",), ((0, 2),), ("A",), (0, 0), ("Yo",))]
    indexed = span.index_spans(examples, {"@@PADDING@@": 0, "@@UNKNOWN@@": 1, "hi": 2, "there": 3})
    assert indexed.passages.tolist() == [[2, 3], [1, 0]] and indexed.passage_of.tolist() == [0, 0, 1]  # stored once
    assert indexed.passage.tolist() == [[2, 3], [2, 3], [1, 0]] and indexed.passage_lengths.tolist() == [2, 2, 1]
    data = span.with_chars(span.SpanData([], indexed, indexed))
    batch = span.batch_of(data.train, torch.tensor([0, 2]))
    assert batch["passage_chars"].shape == (2, 2, 7)  # "there" + begin and end
    assert batch["passage_chars"][0, 0].tolist() == [259, ord("H") + 1, ord("i") + 1, 260, 0, 0, 0]
    assert batch["passage_chars"][1, 1].tolist() == [0] * 7  # padding token
    assert batch["question_chars"].shape == (2, 2, 5)  # padded to at least 5 characters
    assert batch["question"].tolist() == [[2, 1], [1, 0]]


def torchmetrics_squad(predictions: dict[str, str], answers: dict[str, list[str]]) -> dict[str, float]:
    """torchmetrics' SQuAD metric (an independent implementation of the official script), as fractions."""
    tm = pytest.importorskip("torchmetrics.functional.text", reason="torchmetrics (an independent SQuAD metric) is "
                             "not installed: pip install torchmetrics")
    targets = [{"answers": {"answer_start": [0] * len(golds), "text": golds}, "id": qid} for qid, golds in answers.items()]
    out = tm.squad([{"prediction_text": text, "id": qid} for qid, text in predictions.items()], targets)
    return {key: float(value) / 100 for key, value in out.items()}


CASES = [("the Denver Broncos", ["Denver Broncos", "Broncos"]), ("U.S.-based", ["US based", "usbased"]),
         ("Zürich, 1920’s", ["zürich 1920’s"]), ("an owl, a cat", ["cat owl", "owl cat"]), ("", ["x"]),
         ("cat cat dog", ["cat dog dog", "dog"]), ("Théâtre  du\tSoleil", ["théâtre du soleil!"]),
         ("the theory", ["theory of the atom"]), ("(1854–1855)", ["1854–1855", "1854"])]


def generated_answers(n: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """Answers made of words, articles, punctuation and non-ASCII text, some golds a variant of the
    prediction (case, articles, punctuation); none normalises to nothing."""
    import random

    rng = random.Random(seed)
    pool = ["the", "The", "a", "An", "cat", "Cat", "dog,", "U.S.", "Zürich", "1920’s", "—", "(est.", "1999)", "theory",
            "‘quoted’", "%", "x-y"]
    words = lambda: " ".join(rng.choice(pool) for _ in range(rng.randint(1, 6))) + " cat"  # noqa: E731
    def variant(text: str) -> str:
        return rng.choice(["The ", "", "a "]) + text.upper().replace(",", "") + rng.choice(["!", "", "."])

    out = []
    for _ in range(n):
        prediction = words()
        out.append((prediction, [variant(prediction) if rng.random() < 0.3 else words() for _ in range(rng.randint(1, 3))]))
    return out


@pytest.mark.parametrize("prediction, golds", CASES)
def test_metric_agrees_with_torchmetrics(prediction, golds):
    assert score({"q": prediction}, {"q": golds}) == pytest.approx(torchmetrics_squad({"q": prediction}, {"q": golds}))


def test_metric_agrees_with_torchmetrics_on_generated_answers():
    cases = generated_answers(300)
    predictions, answers = {f"q{i}": p for i, (p, _) in enumerate(cases)}, {f"q{i}": g for i, (_, g) in enumerate(cases)}
    ours, theirs = score(predictions, answers), torchmetrics_squad(predictions, answers)
    assert ours == pytest.approx(theirs) and 0.05 < ours["exact_match"] < ours["f1"] < 0.95


def test_answers_normalising_to_nothing_score_f1_0_as_in_squad_1_1():
    # SQuAD 1.1's script gives F1 0 when no token is shared, empty or not; torchmetrics follows
    # SQuAD 2.0 there (two empty answers agree: F1 1)
    assert score({"q": "a"}, {"q": ["the"]}) == {"exact_match": 1.0, "f1": 0.0}
    assert torchmetrics_squad({"q": "a"}, {"q": ["the"]}) == {"exact_match": 1.0, "f1": 1.0}


TINY = {"epochs": 20, "patience": None, "batch_size": 10, "optimizer": "adam", "lr": 1e-2, "embedding": "unused",
        "dropout": 0.0, "character_embedding_dim": 8, "max_character_filter_size": 3, "num_character_filters": 8,
        "character_embedding_dropout": 0.0, "highway_layers": 1, "phrase_layer_hidden_size": 16, "phrase_layers": 1,
        "phrase_layer_dropout": 0.0, "modeling_layer_hidden_size": 16, "modeling_layers": 2, "modeling_layer_dropout": 0.0,
        "span_end_encoder_hidden_size": 16, "span_end_encoder_layers": 1, "span_end_encoder_dropout": 0.0}
CTX = TrialContext(study="t", family="bidaf", trial_index=0, seed=0, data_dir=Path("."), cache_dir=Path("."))


def test_bidaf_masks_padding_and_its_loss_is_two_nlls():
    torch.manual_seed(0)
    data = bidaf.prepare(span.synthetic(n=8))
    model = bidaf.build(resolve({**TINY, "max_character_filter_size": 6}, bidaf.SETTINGS), data).eval()
    batch = span.batch_of(data.train, torch.arange(8))
    out = model(**batch)
    padded = batch["passage"] == 0
    assert padded.any() and out["span_start_logits"][padded].eq(-1e7).all() and out["span_end_logits"][padded].eq(-1e7).all()
    nll = -(out["span_start_logits"].log_softmax(-1).gather(1, batch["span_start"][:, None]).mean()
            + out["span_end_logits"].log_softmax(-1).gather(1, batch["span_end"][:, None]).mean())
    torch.testing.assert_close(out["loss"], nll)
    start, end = out["best_span"].unbind(1)
    assert (start <= end).all() and (end < (~padded).sum(1)).all()
    for row in range(8):  # a question's logits do not depend on the other rows of its batch (padding)
        alone = model(**span.batch_of(data.train, torch.tensor([row])))
        length = int(batch["passage"][row].ne(0).sum())
        torch.testing.assert_close(alone["span_start_logits"][0], out["span_start_logits"][row, :length], atol=1e-5, rtol=0)


@pytest.mark.slow
def test_bidaf_overfits_50_generated_questions_writes_its_best_epoch_and_rescores_it(tmp_path):
    data = bidaf.prepare(span.synthetic(n=50))
    params = resolve(TINY, bidaf.SETTINGS)
    ctx = dataclasses.replace(CTX, trial_index=3, output_dir=tmp_path)
    out = span.run(params, ctx, data, lambda: bidaf.build(params, data))
    assert out.metric >= 0.9 and out.extra_metrics["f1"] >= out.metric
    assert out.outputs == {"predictions": "predictions/bidaf-3.json", "checkpoint": "checkpoints/bidaf-3.pt"}
    written = json.loads((tmp_path / "predictions" / "bidaf-3.json").read_text(encoding="utf-8"))
    assert set(written) == {ex.qid for ex in data.dev.examples}
    assert score(written, {ex.qid: list(ex.answers) for ex in data.dev.examples})["exact_match"] == out.metric
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bidaf-3.json", "bidaf-3.pt", "checkpoints", "predictions"]

    # the checkpoint is the best epoch's: it predicts what was written
    checkpoint = torch.load(tmp_path / "checkpoints" / "bidaf-3.pt", weights_only=True)
    assert checkpoint["params"] == params and checkpoint["vocab"] == data.vocab
    again, added = span_rescore.score_checkpoint(bidaf, params, checkpoint, list(data.dev.examples), "unused", None,
                                                 tmp_path)
    assert (again, added) == (written, 0)
    new = SpanExample("new", "zebra w1 okapi", ("zebra", "w1", "okapi"), ((0, 5), (6, 8), (9, 14)),
                      ("where", "zebra"), (1, 1), ("w1",))
    examples = list(data.dev.examples) + [new]

    # a vocabulary over the data read grows by the new words; the known ones keep their rows
    glove = tmp_path / "glove.txt"
    glove.write_text("zebra " + " ".join(f"0.{k}" for k in range(1, 9)) + "\n", encoding="utf-8")
    words, vectors = span_rescore.extend_vocabulary(data.vocab, data.vectors, examples, str(glove), None)
    assert words == data.vocab + ["where", "zebra", "okapi"] and vectors.shape == (len(data.vocab) + 3, 8)
    zebra = np.arange(1, 9, dtype=np.float32) / 10
    assert np.array_equal(vectors[:len(data.vocab)], data.vectors)
    assert np.array_equal(vectors[-2], zebra) and not np.array_equal(vectors[-1], zebra)
    grown, added = span_rescore.score_checkpoint(bidaf, {**params, "vocabulary": "all_splits"}, checkpoint, examples,
                                                 str(glove), None, tmp_path)
    assert added == 3 and set(grown) == set(written) | {"new"}


@pytest.mark.slow
def test_rescore_reproduces_the_recorded_subset_score_and_writes_every_question(tmp_path, monkeypatch, capsys):
    """The command's whole path on generated data standing in for the dev file and the study."""
    data = bidaf.prepare(span.synthetic(n=50))
    params = resolve({**TINY, "epochs": 3}, bidaf.SETTINGS)
    subset = dataclasses.replace(data, dev=span.index_spans(data.dev.examples[:20], {w: i for i, w in enumerate(data.vocab)}))
    subset = bidaf.prepare(subset)
    out = span.run(params, dataclasses.replace(CTX, output_dir=tmp_path), subset, lambda: bidaf.build(params, subset))
    record = {"trial": 0, "status": "ok", "value": out.metric, "params": {**TINY, "epochs": 3}, "study": "squad_reduced",
              "family": "bidaf", "outputs": out.outputs}
    (tmp_path / "bidaf.jsonl").write_text(json.dumps(record) + "\n")
    monkeypatch.setattr(span_rescore, "read_split", lambda data_dir, split: list(data.dev.examples))
    monkeypatch.setattr(span_rescore, "study_config",
                        lambda study: {"families": {"bidaf": "squad_bidaf_reduced"}, "dataset": {"dev_questions": 20}})
    assert span_rescore.main([str(tmp_path), "--data-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert f"selection subset (20 questions): EM {out.metric:.4f}" in printed
    assert f"(recorded EM {out.metric:.4f})" in printed and "whole dev (50 questions)" in printed
    every = json.loads(gzip.decompress((tmp_path / "predictions" / "bidaf-0.dev-all.json.gz").read_bytes()))
    assert set(every) == {ex.qid for ex in data.dev.examples}


def test_write_predictions_round_trips_unicode(tmp_path):
    path = span.write_predictions({"q1": "Zürich — 1920’s", "q2": ""}, tmp_path / "out" / "predictions.json")
    assert json.loads(path.read_text(encoding="utf-8")) == {"q1": "Zürich — 1920’s", "q2": ""}
    packed = span.write_predictions({"q1": "Zürich — 1920’s", "q2": ""}, tmp_path / "out" / "predictions.json.gz")
    assert gzip.decompress(packed.read_bytes()) == path.read_bytes()
    assert span.write_predictions({"q1": "Zürich — 1920’s", "q2": ""}, tmp_path / "again.json.gz").read_bytes() == packed.read_bytes()


def test_family_files_and_settings():
    base, as_run = load_family("squad_bidaf"), load_family("squad_bidaf_as_run", name="bidaf")
    assert set(base.fixed) | set(base.search) <= set(bidaf.SETTINGS)
    draws = [as_run.params(0, i) for i in range(2000)]
    assert {d["num_character_filters"] for d in draws} == set(range(16, 64))
    assert {d["max_character_filter_size"] for d in draws} == {3, 4, 5}
    assert max(d["phrase_layer_hidden_size"] for d in draws) == 511 and {d["batch_size"] for d in draws} == {16}
    reduced = load_family("squad_bidaf_reduced", name="bidaf")
    assert reduced.fixed["embedding"] == "glove_6b_50d" and reduced.search == as_run.search


@pytest.mark.slow
def test_reduced_study_dry_runs(tmp_path):
    done = run("study=squad_reduced", "dry_run=true", f"paths.results_dir={tmp_path}", timeout=120)
    assert done.returncode == 0, done.stderr
    assert not any(tmp_path.iterdir())
    assert "\n    15 " in done.stdout  # 16 trials listed


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.skipif(real_squad_dir() is None, reason="set SYW_DATA_DIR to a folder with squad/dev-v1.1.json")
def test_real_files_count_every_question():
    data_dir = real_squad_dir()
    dev = read_split(data_dir, "dev", download=False)
    assert len(dev) == 10_570 and len({ex.passage for ex in dev}) == 2_067
    path, md5 = split_file(data_dir, "train", download=False)
    assert (path.name, md5) in FILES["train"]
    train = read_split(data_dir, "train", download=False)
    assert len(train) == 87_599
    first = read_split(data_dir, "train", articles=2, window_tokens=64, download=False)
    assert first == [window(ex, 64) for ex in train[:len(first)]] and max(len(ex.passage_tokens) for ex in first) <= 64
