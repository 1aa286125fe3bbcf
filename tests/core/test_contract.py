"""The contract every family file in conf/search_space/ keeps with its training function.

For each file: its fixed and searched keys pass the settings check against the ``SETTINGS`` its
training function declares; the model builds from a sampled assignment on the task adapter's
generated data; and a few optimisation steps lower the training loss. The steps are Adam's at
1e-3 (for the logistic regression, C = 1), so that a few of them show learning whatever learning
rate was sampled; the families' own optimizers and schedules are the trainer's, tested on their own.
Every family's training function must import and declare its ``SETTINGS``: a ``_target_`` that
cannot be imported fails here (and stops even a dry run). Only the toy study's synthetic objective
has no model to build.
"""
import contextlib
import importlib
import math

import numpy as np
import pytest
import torch
from torch import nn

from syw.core.errors import ConfigError
from syw.core.settings import resolve
from syw.experiments.checks import check_family_code
from syw.experiments.space import CONF_DIR, load_family, sample, trial_rng
from syw.models.trainer import build_optimizer
from tests.support.runner_util import importable_package

FAMILY_FILES = sorted(p.stem for p in (CONF_DIR / "search_space").glob("*/*.yaml"))


def sampled(family, index=0):
    """Fixed settings and a sampled assignment (replayed families too: their file may be absent)."""
    return {**family.fixed, **sample(family.search, trial_rng(0, family.name, index))}


def texts(split, vocab):
    return [" ".join(vocab[i] for i in row[:length].tolist()) for row, length in zip(split.tokens, split.lengths)]


SYNTHETIC = {"syw.models.toy"}  # objectives without a model (the toy study)
# The seed of torch's generator when a family's model is built (0 unless named here). DGEM's
# feedforwards end in ReLU, as the authors' do, so a model can reach a state where they add nothing
# and get no gradient (models/dgem.py); under seed 0 these two lose their ReLU terms within ten
# steps (test_under_seed_0_the_dgem_cases_of_init_seeds_lose_their_relu_terms), which says nothing
# of the contract.
INIT_SEEDS = {"scitail_dgem": 1, "scitail_dgem_reduced": 1}
# The language models of Melis et al. (2018) are one code at three budgets (2M reduced, 10M, 24M): on generated
# text (30 words) nearly all those weights are recurrent, up to minutes of CPU per family. Their contract is
# checked at 300k weights (2-5 s a family here, 9-17 s at 2M); the budget arithmetic has its own tests
# (test_lm_model.py).
CONTRACT_BUDGET = 300_000


@pytest.mark.parametrize("stem", FAMILY_FILES)
def test_family_contract(stem):
    family = load_family(stem)
    check_family_code(family)  # ConfigError, naming the file, when the function or its SETTINGS are missing
    module = importlib.import_module(family.train_target.rpartition(".")[0])
    assert callable(getattr(module, family.train_target.rpartition(".")[2])) and isinstance(module.SETTINGS, dict)
    if module.__name__ in SYNTHETIC:
        assert not hasattr(module, "build")
        return
    for index in range(3):  # the settings of every sampled assignment are accepted by the function itself
        resolve(sampled(family, index), module.SETTINGS)
    params = resolve(sampled(family), module.SETTINGS)
    if params.get("parameter_budget", 0) > CONTRACT_BUDGET:  # the same model code, sized for a test
        params = {**params, "parameter_budget": CONTRACT_BUDGET}
    data = module.TASK.synthetic()
    if hasattr(module, "prepare"):  # inputs a model derives from the data once (the n-gram's overlaps)
        data = module.prepare(data)
    torch.manual_seed(INIT_SEEDS.get(stem, 0))  # unseeded, what earlier tests drew would decide the initialisation
    model = module.build(params, data)
    if isinstance(model, nn.Module):
        before, after = torch_losses(model, data, module.TASK, params)
    else:
        before, after = math.log(data.n_classes), sklearn_loss(module, params, data)
    assert after < 0.95 * before, f"{stem}: training loss {before:.4f} -> {after:.4f}"


def torch_losses(model, data, task, params, steps=60):
    torch.set_num_threads(1)  # as in a trial: two threads on a busy 2-core machine are many times slower
    torch.manual_seed(0)
    batches = list(task.training_batches(data.train, params, torch.Generator().manual_seed(0)))

    def loss():
        model.eval()
        with torch.no_grad():
            return float(np.mean([model(**batch)["loss"].item() for batch in batches]))

    before = loss()
    optimizer = build_optimizer(model, {**params, "optimizer": "adam", "lr": 1e-3})
    for step in range(steps):
        model.train()
        optimizer.zero_grad()
        model(**batches[step % len(batches)])["loss"].backward()
        optimizer.step()
        if step % 10 == 9 and (after := loss()) < 0.95 * before:  # learned: the large models need not go on
            return before, after
    return before, loss()


@pytest.mark.parametrize("stem, silent", [("scitail_dgem", {"phrase", "edge"}), ("scitail_dgem_reduced", {"phrase"})])
def test_under_seed_0_the_dgem_cases_of_init_seeds_lose_their_relu_terms(stem, silent):
    """Why INIT_SEEDS builds these under seed 1: under seed 0, ten Adam steps leave the ``silent``
    feedforwards' class scores ≤ 0 on every generated pair, so they add 0 to the logits and get no
    gradient (models/dgem.py's dead state); scitail_dgem loses both, its loss stuck at ln 2."""
    module = importlib.import_module("syw.models.dgem")
    params = resolve(sampled(load_family(stem)), module.SETTINGS)
    assert params["phrase_probability_activation"] == params["edge_probability_activation"] == "relu"
    data = module.prepare(module.TASK.synthetic())
    torch.manual_seed(0)
    model = module.build(params, data)
    before, after = torch_losses(model, data, module.TASK, params, steps=10)
    model.eval()
    for batch in module.TASK.training_batches(data.train, params, torch.Generator().manual_seed(0)):
        model(**batch)["loss"].backward()
    for name in ("phrase", "edge"):
        assert all(p.grad.eq(0).all() for p in getattr(model, name).parameters()) == (name in silent), name
    assert after == pytest.approx(math.log(2), rel=1e-6) if len(silent) == 2 else after > 0.95 * before


def sklearn_loss(module, params, data):
    from sklearn.metrics import log_loss

    train_text = texts(data.train, data.vocab)
    vectorizer = module.make_vectorizer(tuple(params["ngram_range"]), params["stopwords"], params["weight"])
    features = vectorizer.fit_transform(train_text)
    classifier = module.build({**params, "C": 1.0}, data).fit(features, data.train.labels.numpy())
    return log_loss(data.train.labels.numpy(), classifier.predict_proba(features))


@pytest.mark.parametrize("target, source, problem", [
    ("syw.models.nosuch.train", None, "syw.models.nosuch.train cannot be imported: there is no module syw.models.nosuch"),
    ("pkg_no_settings.fam.train", "def train(params, ctx):\n    pass\n", "declares no SETTINGS"),
    ("pkg_renamed.fam.train", "SETTINGS = {}\ndef fit(params, ctx):\n    pass\n",
     "pkg_renamed.fam.train cannot be imported: pkg_renamed.fam has no 'train'"),
])
def test_a_family_whose_function_cannot_be_imported_or_declares_no_settings_fails(tmp_path, target, source, problem):
    (tmp_path / "fam.yaml").write_text(f"label: x\ntrain: {{_target_: {target}}}\n"
                                       "search: {lr: {distribution: loguniform, low: 0.001, high: 1.0}}\n")
    family = load_family("fam", dirs=[tmp_path])
    code = importable_package(tmp_path, target.split(".")[0], {"fam": source}) if source else contextlib.nullcontext()
    with code:
        with pytest.raises(ConfigError) as err:
            check_family_code(family)
    assert err.value.path == tmp_path / "fam.yaml" and err.value.key == "train._target_" and problem in err.value.problem


def test_contract_covers_every_family_file():
    assert len(FAMILY_FILES) >= 15 and {"sst5_lr", "sst5_cnn", "toy", "squad_bidaf"} <= set(FAMILY_FILES)
