"""models/bcn.py (docs/models.md §B): biattention, poolings, ELMo frozen or fine-tuned, the cache, a trial's
recorded biLM checksum, overfitting SST-2 sentences, the subtree count and the studies' dry runs."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

from syw.core.context import TrialContext
from syw.core.errors import DataError, DataMissingError
from syw.core.settings import resolve
from syw.data.fetch import file_digest
from syw.data.sst import read_sst
from syw.experiments.space import load_family
from syw.models import bcn
from syw.models.elmo.bilm import BiLm
from syw.models.elmo.cached import CachedBiLm
from syw.models.elmo.chars import batch_to_ids
from syw.models.elmo.checkpoint import save_bilm
from syw.models.elmo.options import options_to_json
from syw.models.elmo.sources import resolve_elmo
from syw.models.modules import SelfAttentivePooling
from syw.models.tasks import sentence
from syw.models.trainer import train_model
from tests.support.fixtures_sst import glove_vectors, real_data_dir, requires_real_sst, write_glove_text, write_sst_fixture
from tests.support.runner_util import run

SMALL = {"epochs": 1, "patience": None, "batch_size": 32, "optimizer": "adam", "lr": 3e-3, "embedding": "unused",
         "embedding_dropout": 0.0, "pre_encode_ff_layers": 1, "pre_encode_ff_hidden_dims": 24,
         "pre_encode_ff_activation": "relu", "pre_encode_ff_dropout": 0.0, "encoder_hidden_size": 16,
         "encoder_layers": 1, "integrator_hidden_size": 16, "integrator_layers": 1, "integrator_dropout": 0.0,
         "output_layers": 1, "output_hidden_size": 16, "output_dropout": 0.0, "output_pool_sizes": 2}


def small(**changes) -> dict:
    return resolve({**SMALL, **changes}, bcn.SETTINGS)


def test_biattention_by_hand():
    # rows a=(1,0), b=(0,1), padding (5,5): S over the real keys is [[1,0],[0,1]], so each real row's
    # context is (e·x_self + x_other)/(e+1), and the padding key gets no weight
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]])
    mask = torch.tensor([[True, True, False]])
    e = math.e
    context = torch.tensor([[e, 1.0], [1.0, e]]) / (e + 1)
    out = bcn.integrator_input(x, mask)
    assert out.shape == (1, 3, 6)
    torch.testing.assert_close(out[0, :2], torch.cat([x[0, :2], x[0, :2] - context, x[0, :2] * context], dim=-1))
    # the padded query still attends over the real keys only: scores (5, 5) -> equal weights
    torch.testing.assert_close(out[0, 2, 2:4], torch.tensor([5.0, 5.0]) - 0.5)


def test_four_poolings_ignore_padding():
    x = torch.tensor([[[1.0, -2.0], [3.0, 4.0], [100.0, -100.0]],
                      [[-1.0, 0.5], [0.0, 0.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, True, False], [True, False, False]])
    attentive = SelfAttentivePooling(2)
    with torch.no_grad():
        attentive.projection.weight[:] = torch.tensor([[1.0, 0.0]])
        attentive.projection.bias.zero_()
    pooled = bcn.pool(x, mask, attentive)
    # row 0: scores 1 and 3 over the two real positions -> weights 1/(1+e²), e²/(1+e²)
    w = torch.softmax(torch.tensor([1.0, 3.0]), dim=0)
    expected0 = torch.tensor([3.0, 4.0, 1.0, -2.0, 2.0, 1.0, *(w @ x[0, :2]).tolist()])
    expected1 = torch.tensor([-1.0, 0.5, -1.0, 0.5, -1.0, 0.5, -1.0, 0.5])
    torch.testing.assert_close(pooled, torch.stack([expected0, expected1]))


def test_a_sentence_scores_the_same_alone_and_padded():
    torch.manual_seed(0)
    model = bcn.Bcn(torch.randn(20, 6), 2, small()).eval()
    long, short = torch.tensor([[3, 4, 5, 6, 7]]), torch.tensor([[8, 9, 10]])
    batch = torch.cat([long, torch.nn.functional.pad(short, (0, 2))])
    with torch.no_grad():
        torch.testing.assert_close(model(batch)["logits"][1], model(short)["logits"][0])


def elmo_model(freeze: bool, integrator_elmo: bool = True, **changes) -> bcn.Bcn:
    torch.manual_seed(0)
    params = small(elmo="x", freeze_elmo=freeze, use_integrator_output_elmo=integrator_elmo, **changes)
    return bcn.Bcn(torch.randn(20, 6), 2, params, BiLm(bcn.GENERATED_DATA_BILM))


@pytest.mark.parametrize("freeze", [True, False])
def test_frozen_or_fine_tuned_elmo_and_trainable_mixes(freeze):
    model = elmo_model(freeze)
    assert len(model.elmo.scalar_mixes) == 2
    assert all(p.requires_grad != freeze for p in model.elmo.bilm.parameters())
    assert all(p.requires_grad for p in model.elmo.scalar_mixes.parameters())
    # dims: GloVe 6 + ELMo 2·8 into the pre-encode FF; integrator 2·16 + 16 pooled four ways into the Maxout
    assert model.pre_encode.linears[0].in_features == 22 and model.output.linears[0].in_features == 4 * 48
    chars = batch_to_ids([["a", "good", "film"], ["bad"]])
    tokens = torch.tensor([[3, 4, 5], [6, 0, 0]])
    model(tokens, torch.tensor([1, 0]), chars)["loss"].backward()
    assert all((p.grad is None) == freeze for p in model.elmo.bilm.parameters())
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.elmo.scalar_mixes.parameters())


def test_elmo_needs_chars_and_the_integrator_elmo_needs_a_bilm():
    with pytest.raises(ValueError, match="need chars"):
        elmo_model(True)(torch.tensor([[3, 4]]))
    with pytest.raises(ValueError, match="use_integrator_output_elmo needs a biLM"):
        bcn.Bcn(torch.randn(20, 6), 2, small(use_integrator_output_elmo=True))


def test_cached_bilm_computes_each_sentence_once():
    torch.manual_seed(0)
    bilm = BiLm(bcn.GENERATED_DATA_BILM).requires_grad_(False)
    cached = CachedBiLm(bilm)
    first = batch_to_ids([["a", "good", "film"], ["bad"]])
    fresh = BiLm(bcn.GENERATED_DATA_BILM)
    fresh.load_state_dict(bilm.state_dict())
    with torch.no_grad():
        reference, ref_mask = fresh(first)
        layers, mask = cached(first)
        for got, want in zip(layers, reference):
            torch.testing.assert_close(got, want)
        assert torch.equal(mask, ref_mask)
        # the same sentences again, in another order and padding: read from the cache, the biLM not run
        states = [s.clone() for s in bilm.lstm._states]
        again, _ = cached(batch_to_ids([["bad"], ["a", "good", "film"]]))
        assert all(torch.equal(s, t) for s, t in zip(states, bilm.lstm._states))
        torch.testing.assert_close(again[2][0, :3], reference[2][1, :3])
        torch.testing.assert_close(again[2][1], reference[2][0])
    assert len(cached.cache) == 2


def test_cache_applies_to_frozen_elmo_only():
    data = bcn.prepare(sentence.synthetic())
    frozen = bcn.build(small(elmo="x", cache_elmo=True), data)
    tuned = bcn.build(small(elmo="x", cache_elmo=True, freeze_elmo=False), data)
    assert isinstance(frozen.elmo.bilm, CachedBiLm) and isinstance(tuned.elmo.bilm, BiLm)
    assert bcn.build(small(), data).elmo is None


def test_elmo_layer_norm_reaches_every_mix_and_centres_each_layer():
    data = bcn.prepare(sentence.synthetic())
    plain = bcn.build(small(elmo="x", use_integrator_output_elmo=True), data)
    normed = bcn.build(small(elmo="x", use_integrator_output_elmo=True, elmo_layer_norm=True), data)
    assert [m.do_layer_norm for m in normed.elmo.scalar_mixes] == [True, True]
    assert [m.do_layer_norm for m in plain.elmo.scalar_mixes] == [False, False]
    with torch.no_grad():
        layers, mask = normed.elmo.bilm(batch_to_ids([["a", "good", "film"], ["bad"]]))
        mixed = normed.elmo.scalar_mixes[0](layers, mask)
    # each layer is scaled to mean 0 and variance 1 over its real positions, so the mix (weights 1/3,
    # gamma 1) has mean 0 and a standard deviation of at most 1
    real = mixed[mask]
    assert abs(real.mean().item()) < 1e-5 and 0.2 < real.std(unbiased=False).item() <= 1.0 + 1e-5


def test_the_layer_norm_diagnostic_repeats_the_frozen_trials_with_one_setting_changed():
    from omegaconf import OmegaConf

    from syw.experiments.space import CONF_DIR
    study, base = (OmegaConf.load(CONF_DIR / "study" / f"{name}.yaml") for name in ("sst2_bcn_reduced_layer_norm", "sst2_bcn_reduced"))
    (name, stem), = study.study.families.items()
    diagnostic, frozen = load_family(stem, name), load_family(base.study.families[name], name)
    for trial in range(study.trials):
        changed = {**diagnostic.params(study.seed, trial), "elmo_layer_norm": False}
        assert changed == {"elmo_layer_norm": False, **frozen.params(base.seed, trial)}


def fixture_study(tmp_path: Path, n_train: int = 300) -> TrialContext:
    write_sst_fixture(tmp_path / "data", n_train=n_train, n_dev=60, n_test=20)
    write_glove_text(tmp_path / "glove.txt", glove_vectors(dim=8))
    return TrialContext(study="t", family="f", trial_index=0, seed=3, data_dir=tmp_path / "data",
                        cache_dir=tmp_path / "cache", dataset={"name": "sst", "granularity": "binary"})


def test_bcn_overfits_200_sst2_sentences(tmp_path):
    ctx = fixture_study(tmp_path, n_train=300)
    params = small(embedding=str(tmp_path / "glove.txt"), epochs=12, lr=5e-3)
    data = sentence.load(ctx, params)
    idx = torch.arange(200)
    train = sentence.IndexedSplit(data.train.tokens[idx], data.train.lengths[idx], data.train.labels[idx])
    assert len(data.train.labels) >= 200 and 0.3 < train.labels.float().mean() < 0.7
    batches = sentence.evaluation_batches(train, params)
    result = train_model(lambda: bcn.build(params, data), lambda epoch: sentence.training_batches(
        train, params, torch.Generator().manual_seed(epoch)), lambda model: sentence.accuracy(model, batches),
        params, seed=0)
    assert result.best_metric >= 0.95, result


def write_bilm(folder: Path) -> Path:
    torch.manual_seed(0)
    _, weights = save_bilm(BiLm(bcn.GENERATED_DATA_BILM), options_to_json(bcn.GENERATED_DATA_BILM), folder)
    return weights


def test_trial_records_the_sha256_of_the_bilm_it_read(tmp_path):
    ctx = fixture_study(tmp_path, n_train=40)
    weights = write_bilm(ctx.cache_dir / "bilm" / "tiny")
    sha = file_digest(weights, "sha256")
    weights.with_name("weights.hdf5.sha256").write_text(f"{sha}  weights.hdf5\n")
    params = {**SMALL, "embedding": str(tmp_path / "glove.txt"), "elmo": "bilm/tiny", "freeze_elmo": False,
              "use_integrator_output_elmo": True}
    outcome = bcn.train(params, ctx)
    assert outcome.inputs_sha256 == {"elmo_weights": sha}
    assert outcome.epochs_run == 1 and 0.0 <= outcome.metric <= 1.0
    assert bcn.train({**params, "elmo": None, "use_integrator_output_elmo": False}, ctx).__class__.__name__ == "TrialOutcome"
    assert bcn.train({**params, "elmo_sha256": sha}, ctx).inputs_sha256 == {"elmo_weights": sha}
    with pytest.raises(DataError, match=rf"weights\.hdf5: sha256 {sha}, but the family's elmo_sha256 is {'1' * 64}: "):
        bcn.train({**params, "elmo_sha256": "1" * 64}, ctx)


def test_changed_weights_and_missing_bilm_stop_the_trial(tmp_path):
    ctx = fixture_study(tmp_path, n_train=40)
    weights = write_bilm(ctx.cache_dir / "bilm" / "tiny")
    weights.with_name("weights.hdf5.sha256").write_text("0" * 64 + "  weights.hdf5\n")
    params = {**SMALL, "embedding": str(tmp_path / "glove.txt"), "elmo": "bilm/tiny"}
    with pytest.raises(DataError, match="weights changed after they were written"):
        bcn.train(params, ctx)
    with pytest.raises(DataMissingError, match=r"syw pretrain-bilm --out .*bilm/other"):
        bcn.train({**params, "elmo": "bilm/other"}, ctx)
    with pytest.raises(DataMissingError, match="elmo_2x4096_512_2048cnn_2xhighway_options.json not found"):
        resolve_elmo("elmo_2x4096_512_2048cnn_2xhighway", tmp_path / "offline", ctx.cache_dir)


def test_family_files_read_as_the_tables_and_the_authors_config():
    for stem in ("glove", "elmo_frozen", "elmo_finetuned"):
        table, as_run = load_family(f"sst2_bcn_{stem}"), load_family(f"sst2_bcn_{stem}_as_run")
        assert table.fixed["embedding"] == "glove_840b_300d" and as_run.fixed["embedding"] == "glove_6b_50d"
        assert (table.fixed["scheduler_mode"], as_run.fixed["scheduler_mode"]) == ("max", "min")
        assert as_run.fixed["lowercase"] is False and as_run.fixed["vocabulary"] == "train_dev_test"
        draws = [as_run.params(0, i) for i in range(2000)]
        assert {d["output_pool_sizes"] for d in draws} == {3, 4, 5, 6}
        assert max(d["encoder_hidden_size"] for d in draws) == 511
    assert load_family("sst2_bcn_glove").fixed["elmo"] is None
    assert load_family("sst2_bcn_elmo_frozen").fixed["freeze_elmo"] is True
    assert load_family("sst2_bcn_elmo_finetuned_as_run").fixed["elmo_dropout"] == 0.0


def test_reduced_families_shrink_only_what_they_say():
    for stem in ("glove", "elmo_frozen", "elmo_finetuned"):
        reduced, as_run = load_family(f"sst2_bcn_{stem}_reduced"), load_family(f"sst2_bcn_{stem}_as_run")
        changed = {k for k in {**reduced.fixed, **as_run.fixed} if reduced.fixed.get(k) != as_run.fixed.get(k)}
        assert changed == ({"epochs", "flush_denormal"} if stem == "glove" else {"epochs", "flush_denormal", "elmo", "elmo_sha256"})
        assert stem == "glove" or re.fullmatch("[0-9a-f]{64}", reduced.fixed["elmo_sha256"])
        assert reduced.fixed["flush_denormal"] is True
        assert reduced.fixed["epochs"] == 5 and reduced.fixed.get("elmo") in (None, "bilm/sst_squad_c256_p64_f256")
        widths = {k for k in reduced.search if reduced.search[k] != as_run.search[k]}
        assert widths == {"pre_encode_ff_hidden_dims", "encoder_hidden_size", "integrator_hidden_size"}
        assert all((reduced.search[k]["low"], reduced.search[k]["high"]) == (32, 256) for k in widths)


@pytest.mark.realdata
@requires_real_sst
def test_sst2_training_phrases_are_98794():
    train = read_sst(real_data_dir(), "train", "binary", subtrees=True, download=False)
    assert len(train) == 98_794
    assert len(read_sst(real_data_dir(), "dev", "binary", download=False)) == 872


@pytest.mark.parametrize("study", ["sst2_bcn", "sst2_bcn_as_run", "sst2_bcn_reduced", "sst2_bcn_reduced_7_epochs"])
def test_studies_dry_run(tmp_path, study):
    done = run(f"study={study}", "trials=2", "dry_run=true", f"paths.results_dir={tmp_path}", timeout=120)
    assert done.returncode == 0, done.stderr
    assert not any(tmp_path.iterdir())
    assert done.stdout.count(" trial ") >= 1
