"""The SciTail models (Tables 7-9) on hand-made and generated pairs."""
import math

import pytest
import torch

from syw.core.context import TrialContext
from syw.core.settings import resolve
from syw.models import dam, dgem, esim, ngram
from syw.models.tasks import pair
from syw.models.trainer import build_optimizer

FF = {"layers": 1, "hidden_dims": 16, "activation": "relu", "dropout": 0.0}
BASE = {"epochs": 1, "patience": None, "batch_size": 16, "lr": 1e-3, "optimizer": "adam", "embedding": "unused"}
PARAMS = {
    "ngram": {**BASE, "num_layers": 2, "hidden_size": 16, "activation": "tanh", "dropout": 0.0},
    "dam": {**BASE, "optimizer": "adagrad", "lr": 0.05, "embedding_projection_dim": 16,
            **{f"{ff}_ff_{k}": v for ff in ("attend", "compare", "aggregate") for k, v in FF.items()}},
    "esim": {**BASE, "encoder_hidden_size": 16, "encoder_layers": 1, "dropout": 0.0, "projection_ff_layers": 1,
             "projection_ff_hidden_dims": 16, "projection_ff_activation": "relu", "inference_encoder_layers": 1,
             "output_ff_layers": 1, "output_ff_hidden_dims": 16, "output_ff_activation": "tanh",
             "output_ff_dropout": 0.0},
    "dgem": {**BASE, "structures": "approximate", "embedding_projection_dim": 16, "edge_embedding_size": 8,
             "premise_encoder_hidden_size": 16, "premise_encoder_layers": 1, "premise_encoder_bidirectional": True,
             "phrase_probability_layers": 2, "phrase_probability_hidden_dims": 16, "phrase_probability_dropout": 0.0,
             "phrase_probability_activation": "tanh", "edge_probability_layers": 1, "edge_probability_dropout": 0.0,
             "edge_probability_activation": "tanh"},
}
MODULES = {"ngram": ngram, "dam": dam, "esim": esim, "dgem": dgem}


@pytest.mark.parametrize("premise, hypothesis, expected", [
    ("a b c d", "a b c d", [1.0, 1.0, 1.0]),
    ("a b c d", "a c x", [0.0, 1 / 3, 2 / 3]),  # bigrams of H: (a,c) in P, (a,x), (c,x) not; trigram (a,c,x) not
    ("A b", "a b", [0.0, 0.0, 0.5]),             # case is kept
    ("a b", "", [0.0, 0.0, 0.0]),                # an empty hypothesis set gives 0.0, not a division by zero
    ("a b", "a", [0.0, 0.0, 1.0]),               # one token: no bigram or trigram, 0.0
])
def test_overlap_features(premise, hypothesis, expected):
    assert ngram.overlap_features(premise.split(), hypothesis.split()) == pytest.approx(expected)


def test_skip_grams_are_nltks_one_skip_grams():
    # nltk.util.skipgrams(x, n, 1) as sets (checked against nltk on 2,000 random sequences when written)
    tokens = "a b c d e".split()
    assert ngram.skip_grams(tokens, 2) == {("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d"), ("c", "e"), ("d", "e")}
    assert ngram.skip_grams(tokens, 3) == {("a", "b", "c"), ("a", "b", "d"), ("a", "c", "d"), ("b", "c", "d"),
                                           ("b", "c", "e"), ("b", "d", "e"), ("c", "d", "e")}


def test_dam_reads_the_null_token_at_the_end_of_both_sentences():
    examples = [pair.PairExample(("Cells", "divide"), ("cells",), 0)]
    token_ids = {"@@PADDING@@": 0, "@@UNKNOWN@@": 1, "cells": 2, "divide": 3, "@@null@@": 4}
    indexed = pair.index_pairs(examples, token_ids, end_token="@@NULL@@")
    assert indexed.premise.tolist() == [[2, 3, 4]] and indexed.hypothesis.tolist() == [[2, 4]]
    model = dam.build(resolve(PARAMS["dam"], dam.SETTINGS), pair.synthetic(vocab_size=5))
    assert not model.embedding.weight.requires_grad  # frozen GloVe, the NULL row too


def first_step_gradients(monkeypatch, tmp_path, params) -> list[torch.Tensor]:
    """The gradients Adagrad's first step applies when DAM trains one trial (dam.train, the pair
    task's trainer) on generated pairs."""
    seen = []
    step = torch.optim.Adagrad.step

    def spy(self, *args, **kwargs):
        if not seen:
            seen.extend(p.grad.clone() for group in self.param_groups for p in group["params"] if p.grad is not None)
        return step(self, *args, **kwargs)

    data = pair.synthetic(n_train=32, n_dev=8)
    monkeypatch.setattr(torch.optim.Adagrad, "step", spy)
    monkeypatch.setattr(dam.TASK, "load", lambda ctx, params: data)
    ctx = TrialContext(study="t", family="dam", trial_index=0, seed=5, data_dir=tmp_path, cache_dir=tmp_path)
    dam.train(params, ctx)
    return seen


def test_dam_clamps_each_gradient_element_at_grad_clipping(monkeypatch, tmp_path):
    """Table 7 as run: each gradient element is clamped to [-c, c] before the step (AllenNLP's grad_clipping)."""
    from syw.experiments.space import load_family

    assert "grad_clipping" in load_family("scitail_dam_as_run").search
    params = {**PARAMS["dam"], "epochs": 1}
    raw = first_step_gradients(monkeypatch, tmp_path, params)
    c = float(torch.cat([g.abs().flatten() for g in raw]).median())  # half the elements lie above it
    clamped = first_step_gradients(monkeypatch, tmp_path, {**params, "grad_clipping": c})
    assert len(raw) == len(clamped) and any((g.abs() > c).any() for g in raw)
    for before, after in zip(raw, clamped):
        torch.testing.assert_close(after, before.clamp(-c, c), rtol=0, atol=0)


def test_esim_initialisation():
    model = esim.build(resolve(PARAMS["esim"], esim.SETTINGS), pair.synthetic())
    lstm = model.encoder.lstm
    hidden = lstm.hidden_size
    for name, weight in lstm.named_parameters():
        if name.startswith("bias_hh"):
            assert weight[hidden:2 * hidden].eq(1).all() and weight[:hidden].eq(0).all() and weight[2 * hidden:].eq(0).all()
        elif name.startswith("bias_ih"):
            assert weight.eq(0).all()
        elif name.startswith("weight_hh"):
            torch.testing.assert_close(weight.T @ weight, torch.eye(hidden), atol=1e-5, rtol=0)
    assert model.logits.bias.eq(0).all() and model.logits.out_features == 2
    assert esim.build(resolve({**PARAMS["esim"], "num_logits": 3}, esim.SETTINGS), pair.synthetic()).logits.out_features == 3


@pytest.mark.parametrize("name", ["ngram", "dam", "esim", "dgem"])
def test_each_model_overfits_100_generated_pairs(name):
    module = MODULES[name]
    params = resolve(PARAMS[name], module.SETTINGS)
    data = pair.synthetic(n_train=100, seed=3)
    data = module.prepare(data) if hasattr(module, "prepare") else data
    torch.manual_seed(0)
    model = module.build(params, data)
    optimizer = build_optimizer(model, params)
    batches = list(pair.training_batches(data.train, params, torch.Generator().manual_seed(0)))
    for step in range(400):
        optimizer.zero_grad()
        model(**batches[step % len(batches)])["loss"].backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(**b)["logits"].argmax(1) == b["label"]).sum()) for b in batches)
    assert correct / 100 >= 0.95, f"{name}: {correct} of 100"


def test_dgem_graph_from_a_structure_string():
    from syw.data.dgem_structure import parse_structure

    nodes, edges = parse_structure("Water<>turns<>into vapor by heating$$$Water<>boils<>L:in a kettle on the stove")
    assert nodes == [("Water",), ("turns",), ("into", "vapor", "by", "heating"), ("vapor",), ("heating",), ("boils",),
                     ("L:in", "a", "kettle", "on", "the", "stove"), ("in", "a", "kettle"), ("the", "stove")]
    assert edges == [(1, "subj", 0), (0, "subj-obj", 2), (1, "into", 3), (3, "by", 4),  # leading preposition: its label
                     (5, "subj", 0), (0, "subj-obj", 6), (5, "L", 7), (7, "on", 8)]   # L: prefix, split at "on"


def test_dgem_approximate_structure_splits_at_the_first_auxiliary():
    from syw.data.dgem_structure import approximate_structure, parse_structure

    assert approximate_structure("The behavior of gases is explained by kinetic theory".split()) == \
        "The behavior of gases<>is explained<>by kinetic theory"
    assert approximate_structure("Plants make oxygen".split()) == "Plants<>make<>oxygen"  # no verb-like token: the middle
    assert approximate_structure("Rain".split()) == "<>Rain"  # a single token is the predicate
    assert parse_structure("<>Rain") == ([("Rain",)], [])


def test_dgem_logits_are_the_phrase_term_plus_the_mean_edge_term_which_ignore_edges_drops():
    """Table 10's model: a graph's logits are the mean over its nodes of the phrase term plus the mean
    over its edges of the edge term (nothing for a graph without edges); ``ignore_edges`` keeps only
    the phrase term. With the edge network's last layer made constant, each edge adds the same term."""
    data = dgem.prepare(pair.synthetic(n_train=8, n_dev=4))
    nodes, edges = data.train.extras["nodes"], data.train.extras["edges"]
    assert nodes.shape[0] == 8 and edges.shape[2] == 3 and (edges[..., 0] >= -1).all()
    params = resolve(PARAMS["dgem"], dgem.SETTINGS)
    torch.manual_seed(0)
    model = dgem.build(params, data).eval()
    ablation = dgem.build(resolve({**PARAMS["dgem"], "ignore_edges": True}, dgem.SETTINGS), data).eval()
    batch = next(pair.training_batches(data.train, params, torch.Generator().manual_seed(0)))
    batch["edges"] = batch["edges"].clone()
    batch["edges"][:3] = -1  # three graphs without edges
    has_edges = (batch["edges"][..., 0] >= 0).any(1)
    assert has_edges.sum() == 5
    with torch.no_grad():
        last = model.edge.linears[-1]
        last.weight.zero_()
        last.bias.copy_(torch.tensor([0.5, -1.0]))
        edge_term = model.edge(torch.zeros(1, last.in_features))[0]  # what every edge adds, whatever its input
        ablation.load_state_dict(model.state_dict())
        full = model(**batch)
        phrase_only = ablation(**batch)["logits"]
        no_edges = ablation(**{**batch, "edges": torch.full_like(batch["edges"], -1)})["logits"]
    assert full["logits"].shape == (8, 2) and full["loss"].ndim == 0
    torch.testing.assert_close(full["logits"] - phrase_only, has_edges[:, None] * edge_term)
    torch.testing.assert_close(no_edges, phrase_only)  # the ablation does not read the edges


def test_dgem_initialises_as_the_authors_config():
    """allenai/scitail's training_config/dgem.json: every feedforward weight xavier-normal
    (".*linear_layers.*weight"), biases torch's U(±1/√fan_in); the edge-label embedding is
    AllenNLP's Embedding, xavier-uniform. (torch's default linear weight has a std of 1/√(3·fan_in),
    under half the xavier-normal one here; its default embedding is N(0, 1).)"""
    params = resolve({**PARAMS["dgem"], "embedding_projection_dim": 128, "phrase_probability_hidden_dims": 256,
                      "edge_probability_layers": 2, "edge_embedding_size": 256}, dgem.SETTINGS)
    torch.manual_seed(0)
    model = dgem.build(params, pair.synthetic())
    linears = [*model.phrase.linears, *model.edge.linears]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(512, 256), (256, 2), (320, 256), (256, 2)]
    for lin in linears:
        xavier_std = (2 / (lin.in_features + lin.out_features)) ** 0.5
        assert float(lin.weight.detach().std()) == pytest.approx(xavier_std, rel=0.1)
        assert float(lin.bias.detach().abs().max()) <= lin.in_features ** -0.5
    labels = model.edge_embedding.weight.detach()
    bound = (6 / sum(labels.shape)) ** 0.5
    assert float(labels.abs().max()) <= bound
    assert float(labels.std()) == pytest.approx(bound / 3 ** 0.5, rel=0.1)


@pytest.mark.parametrize("activation, bias, dead", [
    ("relu", -1.0, True),    # every class score ≤ 0: both logits 0, no gradient anywhere
    ("tanh", -1.0, False),   # the same scores through tanh still pass gradients
    ("tanh", -20.0, True),   # tanh saturated to -1 in float32: no gradient either
])
def test_dgem_has_an_absorbing_state_where_both_logits_are_equal_and_nothing_has_a_gradient(activation, bias, dead):
    """Both feedforwards end in their activation, as in the authors' config (one 2-wide ReLU layer
    each). With every node's and edge's last pre-activations at ``bias``, a ReLU end gives logits
    exactly 0 for every pair, the loss ln 2, every gradient exactly 0, and an Adam step changes
    nothing: without dropout, training never leaves that state (tests/core/test_contract.py's INIT_SEEDS
    cases reach it by training)."""
    data = dgem.prepare(pair.synthetic(n_train=16, n_dev=4))
    params = resolve({**PARAMS["dgem"], "phrase_probability_activation": activation,
                      "edge_probability_activation": activation}, dgem.SETTINGS)
    torch.manual_seed(0)
    model = dgem.build(params, data)
    with torch.no_grad():
        for ff in (model.phrase, model.edge):
            ff.linears[-1].weight.zero_()
            ff.linears[-1].bias.fill_(bias)
    batch = next(pair.training_batches(data.train, params, torch.Generator().manual_seed(0)))
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = build_optimizer(model, params)
    out = model(**batch)
    out["loss"].backward()
    loss = float(out["loss"].detach())
    grad = sum(float(p.grad.abs().sum()) for p in model.parameters() if p.grad is not None)
    optimizer.step()
    moved = sum(float((p.detach() - b).abs().sum()) for p, b in zip(model.parameters(), before))
    assert (out["logits"][:, 0] == out["logits"][:, 1]).all()
    assert loss == pytest.approx(math.log(2), rel=1e-6)  # ln 2 as float32 computes it: 0.6931473
    assert (grad == 0 and moved == 0) if dead else (grad > 1e-3 and moved > 1e-3), (grad, moved)
    if activation == "relu":
        assert out["logits"].eq(0).all()
