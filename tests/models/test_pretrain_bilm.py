"""models/elmo/pretrain.py, models/elmo/lm.py and data/bilm_corpus.py: the language-model targets, the sampled softmax,
the corpus, and a few steps on a tiny corpus that write a biLM the ELMo loader reads, going on from
the checkpoint when run again."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import torch

from syw.core.entry import run_main
from syw.data.bilm_corpus import build_vocabulary, pieces, read_corpus, read_text_corpus, text_documents
from syw.data.fetch import file_digest
from syw.models.elmo.checkpoint import load_bilm
from syw.models.elmo.checksum import weights_sha256
from syw.models.elmo.lm import Encoded, LanguageModel, log_uniform_log_q, sampled_softmax_loss
from syw.models.elmo.options import options_from_json, options_to_json
from syw.models.elmo.pretrain import CHECKPOINT_FORMAT, bilm_options, main
from tests.support.fixtures_sst import write_sst_fixture

TINY = ["--cell-dim", "16", "--projection-dim", "8", "--filter-divisor", "32", "--min-count", "1",
        "--heldout-articles", "1", "--max-length", "12", "--batch-size", "8", "--log-every", "1", "--lr", "0.01"]


def test_options_round_trip_through_json():
    options = bilm_options(256, 64, 8)
    assert options.n_filters == 256 and options.filters[-1] == (7, 128)
    assert options_from_json(json.loads(json.dumps(options_to_json(options))), "x") == options


def test_default_biLM_is_the_one_the_reduced_study_reads(monkeypatch):
    from syw.experiments.space import load_family
    from syw.models.elmo.pretrain import default_out

    monkeypatch.delenv("SYW_CACHE_DIR", raising=False)
    folder = default_out(bilm_options())
    assert folder.parent == Path(".cache/bilm")
    for stem in ("sst2_bcn_elmo_frozen_reduced", "sst2_bcn_elmo_finetuned_reduced"):
        assert load_family(stem).fixed["elmo"] == f"bilm/{folder.name}"


def test_each_direction_predicts_its_neighbour():
    model = LanguageModel(bilm_options(16, 8, 32), vocab_size=9)
    words = torch.tensor([[5, 6, 7], [8, 0, 0]])  # two sentences of 3 and 1 words
    chars = Encoded([["a", "b", "c"], ["d"]], {}).batch([0, 1])[0]
    states, targets = model.states(chars, words)
    assert states.shape == (2 * (4 + 2), 8)
    # forward states predict the next word (</S> = 1 last), backward states the previous one (<S> = 0 first)
    assert targets.tolist() == [5, 6, 7, 1, 8, 1] + [0, 5, 6, 7, 0, 8]


def test_log_uniform_probabilities_sum_to_one():
    assert math.isclose(log_uniform_log_q(torch.arange(1000), 1000).exp().sum().item(), 1.0, rel_tol=1e-5)


def test_sampled_softmax_masks_accidental_hits():
    # a one-word vocabulary: every candidate is the target, so only the true logit is left: loss 0
    states, weight, bias = torch.randn(4, 3), torch.randn(1, 3), torch.zeros(1)
    assert sampled_softmax_loss(states, torch.zeros(4, dtype=torch.long), weight, bias, 5).item() == 0.0
    # two words, target 0; seed 1 draws candidate 1: loss = log(1 + exp((s1 − log q1) − (s0 − log q0)))
    weight = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    draw = torch.exp(torch.rand(1, generator=torch.Generator().manual_seed(1)) * math.log(3)) - 1
    assert int(draw.long()) == 1
    loss = sampled_softmax_loss(torch.tensor([[2.0, 1.0, 0.0]]), torch.tensor([0]), weight, torch.zeros(2), 1,
                                torch.Generator().manual_seed(1))
    log_q = log_uniform_log_q(torch.arange(2), 2)
    assert math.isclose(loss.item(), math.log1p(math.exp(1.0 - 2.0 - log_q[1] + log_q[0])), rel_tol=1e-5)


def test_vocabulary_and_pieces():
    assert build_vocabulary([["b", "a", "b"], ["c", "b", "a"]], min_count=2) == ["<S>", "</S>", "<UNK>", "b", "a"]
    assert pieces([list("abcde"), list("xy")], 2) == [["a", "b"], ["c", "d"], ["e"], ["x", "y"]]


SENTENCES = ["The river flows into the sea .", "The river (a long one) flows north .", "A town lies on the river .",
             "The sea is wide and the river is long .", "Boats sail on the river to the town ."]


def write_corpus(tmp_path: Path) -> tuple[Path, Path]:
    data_dir = write_sst_fixture(tmp_path / "data", n_train=20, n_dev=5, n_test=5)
    articles = [{"title": f"a{a}", "paragraphs": [{"context": " ".join(SENTENCES[(a + p) % 5:] + SENTENCES[:(a + p) % 5]),
                                                   "qas": []} for p in range(6)]} for a in range(4)]
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "1.1", "data": articles}), encoding="utf-8")
    return data_dir, squad


def test_corpus_holds_out_the_last_articles(tmp_path):
    data_dir, squad = write_corpus(tmp_path)
    corpus = read_corpus(data_dir, heldout_articles=1, max_length=50, squad_file=squad)
    assert len(corpus.heldout) == 6 * 5 and len(corpus.train) == 3 * 6 * 5 + 20
    assert ["The", "river", "-LRB-", "a", "long", "one", "-RRB-", "flows", "north", "."] in corpus.train
    assert "squad.json (3 articles for training, 1 held out)" in corpus.sources[0]


def logged_losses(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"\| loss ([0-9.]+) ", text)]


def test_pretraining_writes_a_loadable_bilm_and_goes_on_from_its_checkpoint(tmp_path, capsys):
    data_dir, squad = write_corpus(tmp_path)
    out = tmp_path / "bilm"
    args = ["--out", str(out), "--data-dir", str(data_dir), "--squad-file", str(squad), *TINY]
    main([*args, "--tokens", "6000", "--samples", "0"])
    first = capsys.readouterr().out
    losses = logged_losses(first)
    assert sum(losses[-10:]) / 10 < 0.75 * losses[0], first
    bilm = load_bilm(out / "options.json", out / "weights.hdf5")
    assert bilm.options == bilm_options(16, 8, 32)
    sha = file_digest(out / "weights.hdf5", "sha256")
    assert (out / "weights.hdf5.sha256").read_text() == f"{sha}  weights.hdf5\n" and weights_sha256(out / "weights.hdf5") == sha
    assert sha in first and (out / "vocab.txt").read_text().split("\n")[:3] == ["<S>", "</S>", "<UNK>"]
    metrics = json.loads((out / "metrics.json").read_text())
    vocab_size = metrics["config"]["vocab_size"]  # an untrained model's perplexity is about this
    assert metrics["finished"] and metrics["tokens"] >= 6000 and metrics["heldout_perplexity"] < 0.3 * vocab_size
    main([*args, "--tokens", "9000", "--samples", "0"])
    second = capsys.readouterr().out
    assert f"going on from {out / 'checkpoint.pt'}: step {metrics['steps']}," in second
    assert json.loads((out / "metrics.json").read_text())["steps"] > metrics["steps"]
    assert run_main(main, [*args, "--tokens", "9000", "--samples", "4"]) == 2
    assert re.match(rf"error: {re.escape(str(out))}/checkpoint\.pt was trained with other settings \(samples 0 there, 4 now\)",
                    capsys.readouterr().err)
    saved = torch.load(out / "checkpoint.pt", weights_only=False)
    del saved["config"]["checkpoint_format"]  # a checkpoint of another layout
    torch.save(saved, out / "checkpoint.pt")
    assert run_main(main, [*args, "--tokens", "9000", "--samples", "0"]) == 2
    assert re.match(rf"error: {re.escape(str(out))}/checkpoint\.pt was trained with other settings \(checkpoint_format None there, "
                    rf"{CHECKPOINT_FORMAT} now\)", capsys.readouterr().err)


def test_sampled_softmax_training_learns(tmp_path, capsys):
    data_dir, squad = write_corpus(tmp_path)
    main(["--out", str(tmp_path / "b"), "--data-dir", str(data_dir), "--squad-file", str(squad), *TINY,
          "--tokens", "6000", "--samples", "16"])
    losses = logged_losses(capsys.readouterr().out)
    assert sum(losses[-10:]) / 10 < 0.75 * losses[0], losses


def test_a_resumed_run_writes_the_weights_an_uninterrupted_one_does(tmp_path, capsys):
    """Sampled softmax and dropout draw random numbers and the LSTM carries states across batches:
    the checkpoint keeps all three, and held-out evaluations at checkpoints leave training as it was."""
    data_dir, squad = write_corpus(tmp_path)
    common = ["--data-dir", str(data_dir), "--squad-file", str(squad), *TINY, "--samples", "16"]
    main(["--out", str(tmp_path / "whole"), *common, "--tokens", "4000"])
    main(["--out", str(tmp_path / "parts"), *common, "--tokens", "2000"])
    main(["--out", str(tmp_path / "parts"), *common, "--tokens", "4000", "--checkpoint-minutes", "0"])
    out = capsys.readouterr().out
    assert out.count("checkpoint ") > 10  # a held-out evaluation after every step of the second part
    whole, parts = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "parts"))
    assert whole["steps"] == parts["steps"] and whole["tokens"] == parts["tokens"]
    assert whole["weights_sha256"] == parts["weights_sha256"]
    assert whole["heldout_perplexity"] == parts["heldout_perplexity"]


def test_pretraining_on_your_own_text_in_another_language(tmp_path, capsys):
    paragraphs = ["Der Fluss fließt ins Meer.", "Ein Dorf liegt am Fluss (nicht weit vom Meer).", "Boote fahren zum Dorf."]
    text = tmp_path / "mein_korpus.txt"
    text.write_text("\n\n".join("\n".join(paragraphs[k:] + paragraphs[:k]) for k in range(3)) + "\n", encoding="utf-8")
    assert [len(d) for d in text_documents(text)] == [3, 3, 3]
    corpus = read_text_corpus(text, heldout_documents=1, language="de")
    assert ["Ein", "Dorf", "liegt", "am", "Fluss", "-LRB-", "nicht", "weit", "vom", "Meer", "-RRB-", "."] in corpus.train
    assert len(corpus.train) == 6 and len(corpus.heldout) == 3 and "spacy.blank('de')" in corpus.sources[0]
    out = tmp_path / "bilm"
    assert main(["--out", str(out), "--text", str(text), "--language", "de", *TINY, "--heldout-articles", "1",
                 "--tokens", "300", "--samples", "0"]) == 0
    assert "mein_korpus.txt (2 documents for training, 1 held out" in capsys.readouterr().out
    assert load_bilm(out / "options.json", out / "weights.hdf5").options == bilm_options(16, 8, 32)
