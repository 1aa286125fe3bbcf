"""The language model of Melis et al. (2018) and its parameter budget: tied embeddings, the variational
masks a window draws, perplexity = exp(mean NLL) with <eos> counted, the budget solver against built
models, and each cell overfitting a 2,000-token text."""
import math

import numpy as np
import pytest
import torch

from syw.core.context import TrialContext
from syw.core.settings import resolve
from syw.models import lm
from syw.models.lm_budget import parameter_count, shape_for, solve
from syw.models.tasks import lm as task

BASE = dict(epochs=1, batch_size=4, bptt=6, optimizer="adam", lr=3e-3, checkpoint_every=10, parameter_budget=6000, depth=1,
            input_embedding_ratio=0.5, down_projection=True, input_dropout=0.0, state_dropout=0.0, output_dropout=0.0)


def small(cell="lstm", **changes) -> lm.LanguageModel:
    torch.manual_seed(0)
    params = resolve({**BASE, "cell": cell, "depth": 2, **changes}, lm.SETTINGS)
    return lm.build(params, task.synthetic(n_train=200, n_dev=60, vocab_size=12))


def unique_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_count_by_hand():
    # LSTM, V=10, e=o=3 (down-projection), h=4, two layers: 10·3 + 4·4·(3+4+1) + 4·4·(4+4+1) + 4·3 + 10 (softmax bias)
    shape = shape_for(4, cell="lstm", vocab=10, depth=2, ratio=0.75, down_projection=True)
    assert (shape.embedding, shape.output) == (3, 3)
    assert parameter_count(shape) == 30 + 128 + 144 + 12 + 10
    # RHN of 3 micro-steps, tied, no projection (e = o = h = 4): 10·4 + 2·4·4 + 3·(2·4·4 + 2·4) + 10
    assert parameter_count(shape_for(4, cell="rhn", vocab=10, depth=3, ratio=0.5, down_projection=False)) == 40 + 32 + 120 + 10
    # NAS untied, no projection: e = round(0.5·4) = 2, o = h = 4: 10·2 + 8·4·(2+4) + 10·4 + 10
    nas = shape_for(4, cell="nas", vocab=10, depth=1, ratio=0.5, down_projection=False, tied=False)
    assert parameter_count(nas) == 20 + 192 + 40 + 10


@pytest.mark.parametrize("index", range(20))
def test_budget_solver_builds_models_within_one_percent_below_the_budget(index):
    rng = np.random.default_rng(index)
    cell = str(rng.choice(["lstm", "rhn", "nas"]))
    depth = int(rng.integers(1, 11)) if cell == "rhn" else int(rng.integers(1, 5))
    budget = int(rng.choice([10_000_000, 24_000_000]))
    kwargs = dict(cell=cell, vocab=10_000, depth=depth, ratio=float(rng.uniform(0.05, 1.0)),
                  down_projection=bool(rng.integers(2)), tied=bool(rng.integers(2)),
                  lstm_gates=str(rng.choice(["capped", "untied", "tied"])))
    shape = solve(budget, **kwargs)
    with torch.device("meta"):  # count the weights without allocating them
        model = lm.LanguageModel(shape)
    assert unique_parameters(model) == parameter_count(shape)
    assert 0.99 * budget <= parameter_count(shape) <= budget
    assert parameter_count(shape_for(shape.hidden + 1, **kwargs)) > budget  # the largest hidden size that fits


def test_budget_too_small_for_the_vocabulary_says_so():
    with pytest.raises(ValueError, match=r"a parameter budget of 5,000 is below the smallest such model \(20,013 weights"):
        solve(5000, cell="lstm", vocab=10_000, depth=1, ratio=0.5, down_projection=True)


def test_tied_embeddings_share_storage_and_untied_do_not():
    tied, untied = small(), small(tied_embeddings=False)
    assert tied.output_weight is tied.embedding.weight
    assert untied.output_weight.data_ptr() != untied.embedding.weight.data_ptr()
    assert unique_parameters(tied) == parameter_count(tied.shape)
    assert unique_parameters(untied) == parameter_count(untied.shape)
    inputs, targets = torch.randint(12, (2, 5)), torch.randint(12, (2, 5))
    tied.nll(inputs, targets)[0].sum().backward()
    assert tied.embedding.weight.grad[targets.flatten()].abs().sum() > 0  # the softmax's gradient reaches the embedding


def test_a_window_draws_one_state_mask_per_layer_reused_at_every_step():
    model = small(state_dropout=0.5)
    seen = []

    def spy(forward):
        def recorded(x, state, state_mask=None, update_mask=None):
            seen.append(state_mask)
            return forward(x, state, state_mask, update_mask)
        return recorded

    for layer in model.layers:
        layer.forward = spy(layer.forward)
    model.train()
    model.nll(torch.randint(12, (3, 6)), torch.randint(12, (3, 6)))
    assert [m.shape for m in seen] == [(3, model.shape.hidden)] * 2  # (batch, hidden): no time axis
    assert all(set(m.unique().tolist()) <= {0.0, 2.0} for m in seen) and not torch.equal(seen[0], seen[1])
    model.eval()
    model.nll(torch.randint(12, (3, 6)), torch.randint(12, (3, 6)))
    assert seen[2:] == [None, None]  # mean field at evaluation


def test_perplexity_of_uniform_predictions_is_the_vocabulary_size_over_every_token():
    model = small()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    stream = task.synthetic(n_train=200, n_dev=60, vocab_size=12).dev
    assert int((stream.targets == 0).sum()) > 5  # <eos> (id 0) is among the predicted tokens
    model.eval()
    with torch.no_grad():
        assert task.perplexity(model, stream, batch_size=1, bptt=7) == pytest.approx(12.0, rel=1e-6)


@pytest.mark.parametrize("cell", ["lstm", "rhn", "nas"])
def test_perplexity_is_exp_mean_nll_carrying_the_state_across_windows(cell):
    model = small(cell)
    stream = task.synthetic(n_train=200, n_dev=60, vocab_size=12).dev
    model.eval()
    with torch.no_grad():
        whole, _ = model.nll(stream.inputs.view(1, -1), stream.targets.view(1, -1))
        assert task.perplexity(model, stream, batch_size=1, bptt=7) == pytest.approx(math.exp(whole.mean().item()), rel=1e-6)
        columns = stream.inputs[:60].view(2, 30), stream.targets[:60].view(2, 30)
        two, _ = model.nll(*columns)
        assert task.perplexity(model, stream, batch_size=2, bptt=4) == pytest.approx(math.exp(two.mean().item()), rel=1e-6)


def test_training_carries_the_state_between_windows_unless_reset():
    model = small()
    model.train()
    inputs, targets = torch.randint(12, (4, 6)), torch.randint(12, (4, 6))
    first = model(inputs, targets, torch.tensor(True))["loss"]
    assert first.item() == pytest.approx(model.nll(inputs, targets)[0].sum().item() / 4, rel=1e-6)
    carried = [tuple(t.clone() for t in s) for s in model.carry]
    second = model(inputs, targets, torch.tensor(False))["loss"]
    assert second.item() == pytest.approx(model.nll(inputs, targets, carried)[0].sum().item() / 4, rel=1e-6)
    assert second.item() != pytest.approx(first.item(), rel=1e-6)
    assert model(inputs, targets, torch.tensor(True))["loss"].item() == pytest.approx(first.item(), rel=1e-6)


def test_weight_decay_adds_half_the_squared_weights():
    plain, decayed = small(), small(weight_decay=0.01)
    inputs, targets = torch.randint(12, (4, 6)), torch.randint(12, (4, 6))
    squares = sum(p.detach().pow(2).sum().item() for p in plain.parameters())
    difference = decayed(inputs, targets, torch.tensor(True))["loss"] - plain(inputs, targets, torch.tensor(True))["loss"]
    assert difference.item() == pytest.approx(0.005 * squares, rel=1e-5)


def test_windows_reset_at_the_start_and_with_the_seeded_probability():
    stream = task.synthetic(n_train=2000).train
    params = {"batch_size": 4, "bptt": 5, "zero_state_probability": 0.25}
    resets = [bool(b["reset"]) for b in task.training_batches(stream, params, torch.Generator().manual_seed(3))]
    assert len(resets) == task.steps_per_epoch(stream, 4, 5) == 100 and resets[0]
    assert 10 <= sum(resets[1:]) <= 40
    assert resets == [bool(b["reset"]) for b in task.training_batches(stream, params, torch.Generator().manual_seed(3))]
    never = [bool(b["reset"]) for b in task.training_batches(stream, {**params, "zero_state_probability": 0.0},
                                                              torch.Generator().manual_seed(3))]
    assert never == [True] + [False] * 99


def test_columns_read_the_stream_in_order():
    stream = task.stream_of(torch.arange(1, 11), eos=0)
    batches = list(task.windows(stream, batch_size=2, bptt=3))
    assert [b[1].tolist() for b in batches] == [[[1, 2, 3], [6, 7, 8]], [[4, 5], [9, 10]]]
    assert batches[0][0].tolist() == [[0, 1, 2], [5, 6, 7]]  # inputs: <eos> before the first word


def test_plateau_drops_the_rate_after_thirty_checkpoints_without_improvement():
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = task.plateau_schedule(optimizer, {"lr_drop_factor": 0.1, "lr_drop_patience": 30})
    rates = []
    for value in [5.0, 4.0] + [4.0] * 30 + [3.9] + [3.9] * 30:
        scheduler.step(value)
        rates.append(optimizer.param_groups[0]["lr"])
    assert rates[:31] == [1.0] * 31 and rates[31] == pytest.approx(0.1)  # the 30th equal value drops it
    assert rates[32:62] == [pytest.approx(0.1)] * 30 and rates[62] == pytest.approx(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("cell", ["lstm", "rhn", "nas"])
def test_each_cell_overfits_a_2000_token_text(cell):
    data = task.synthetic()
    data = task.LmData(data.vocab, data.train, data.train)  # validation on the training text itself
    params = resolve({**BASE, "batch_size": 8, "bptt": 20, "checkpoint_every": 50, "parameter_budget": 20_000, "cell": cell,
                      "depth": 3 if cell == "rhn" else 1, "epochs": 40}, lm.SETTINGS)
    ctx = TrialContext(study="t", family=cell, trial_index=0, seed=1, data_dir=".", cache_dir=".")
    outcome = task.run(params, ctx, data, lambda: lm.build(params, data))
    assert len(data.train) == 2000 and outcome.metric < 5.0


@pytest.mark.slow
def test_the_recorded_test_perplexity_is_the_selected_checkpoints():
    data = task.synthetic()
    data = task.LmData(data.vocab, data.train, data.dev, data.dev)  # test = validation: the same score when restored
    params = resolve({**BASE, "batch_size": 8, "bptt": 20, "checkpoint_every": 20, "parameter_budget": 20_000, "cell": "lstm",
                      "epochs": 30, "test_batch_size": 8, "eval_batch_size": 8}, lm.SETTINGS)
    ctx = TrialContext(study="t", family="lstm", trial_index=0, seed=1, data_dir=".", cache_dir=".")
    outcome = task.run(params, ctx, data, lambda: lm.build(params, data))
    best = outcome.epoch_metrics[outcome.best_epoch - 1]
    assert outcome.best_epoch < outcome.epochs_run and outcome.epoch_metrics[-1]["perplexity"] > best["perplexity"]
    assert outcome.extra_metrics["test_perplexity"] == pytest.approx(outcome.metric, rel=1e-9) == best["perplexity"]
    assert best["step"] == 20 * outcome.best_epoch and outcome.epochs_run == math.ceil(30 * 13 / 20)
    assert outcome.extra_metrics["parameters"] <= 20_000 and outcome.extra_metrics["hidden_size"] > 0
