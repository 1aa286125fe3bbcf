"""CNN classifier of Table 2 on generated SST fixtures."""
from pathlib import Path

import pytest
import torch
from torch import nn

import syw.models.cnn as cnn
import syw.models.modules.cnn_encoder as cnn_encoder
import syw.models.tasks.sentence as sentence
from syw.core.context import TrialContext
from tests.support.fixtures_sst import glove_vectors, real_data_dir, requires_real_sst, write_glove_text, write_sst_fixture

PARAMS = {
    "epochs": 8, "patience": 3, "batch_size": 16, "optimizer": "adam",
    "scheduler": "reduce_on_plateau", "scheduler_patience": 2, "scheduler_factor": 0.5,
    "scheduler_mode": "max", "projection_dim": None, "vocabulary": "train", "batching": "bucket",
    "max_filter_size": 3, "num_filters": 16, "dropout": 0.2, "lr": 0.01,
}


@pytest.fixture(scope="module")
def fixture_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("cnn")
    data_dir = write_sst_fixture(root / "data")
    glove = write_glove_text(root / "glove.txt", glove_vectors(dim=8))
    return data_dir, str(glove), root / "cache"


def context(data_dir, cache_dir, seed=1, **dataset):
    return TrialContext(study="test", family="cnn", trial_index=0, seed=seed, data_dir=data_dir,
                        cache_dir=cache_dir, dataset={"name": "sst", "granularity": "fine", **dataset})


@pytest.mark.parametrize("width", [1, 3, 6])
def test_conv_max_relu_matches_conv1d(width):
    torch.manual_seed(0)
    conv = nn.Conv1d(5, 7, width).double()
    x = torch.randn(4, 9, 5, dtype=torch.double, requires_grad=True)
    ours = cnn_encoder.conv_max_relu(x, conv)
    reference = conv(x.transpose(1, 2)).relu().amax(dim=2)
    torch.testing.assert_close(ours, reference)
    grads = torch.autograd.grad(ours.sum(), [x, conv.weight, conv.bias])
    reference_grads = torch.autograd.grad(reference.sum(), [x, conv.weight, conv.bias])
    for ours_grad, reference_grad in zip(grads, reference_grads):
        torch.testing.assert_close(ours_grad, reference_grad)


def test_max_over_time_gradient_and_ties():
    y = torch.randn(3, 5, 4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(cnn_encoder.MaxOverTime.apply, (y,))
    tied = torch.tensor([[[1.0], [3.0], [3.0]]], requires_grad=True)
    cnn_encoder.MaxOverTime.apply(tied).sum().backward()
    assert tied.grad.flatten().tolist() == [0.0, 0.5, 0.5]  # split like torch.amax


def test_classifier_shapes_short_sentences_and_projection():
    embedding = torch.randn(10, 8)
    model = cnn.CnnClassifier(embedding, n_classes=5, max_filter_size=4, num_filters=6, dropout=0.1,
                              projection_dim=3)
    out = model(torch.tensor([[2], [3]]), torch.tensor([0, 4]))  # one token, padded to 4
    assert out["logits"].shape == (2, 5) and out["loss"].ndim == 0
    assert model.projection.out_features == 3 and model.classifier.in_features == 3
    assert cnn.CnnClassifier(embedding, 5, 3, 6, 0.1).classifier.in_features == 18
    assert model.embedding.weight.requires_grad  # GloVe is fine-tuned


def test_vocabulary_choices(tmp_path):
    data_dir = write_sst_fixture(tmp_path, n_train=300, n_dev=10, n_test=1)
    (data_dir / "sst" / "test.txt").write_text("(4 (2 Unseen) (4 splendid))\n")
    sst5 = sentence.dataset_key({"name": "sst", "granularity": "fine", "subtrees": False})
    vocab, train, _ = sentence.load_indexed(data_dir, sst5, "train")
    everything, _, _ = sentence.load_indexed(data_dir, sst5, "train_dev_test")
    assert vocab[:2] == ["@@PADDING@@", "@@UNKNOWN@@"]
    assert "splendid" not in vocab and {"unseen", "splendid"} <= set(everything)
    assert train.tokens.shape[0] == 300 and int(train.tokens[0, 0]) > 1
    with pytest.raises(ValueError, match="vocabulary must be"):
        sentence.load_indexed(data_dir, sst5, "dev")


def test_bucketed_batches_cover_every_example_once_with_little_padding():
    lengths = torch.randint(1, 11, (1000,))  # ~100 examples per length
    generator = torch.Generator().manual_seed(0)
    batches = sentence.bucket_batches(lengths, 64, generator)
    assert sorted(torch.cat(batches).tolist()) == list(range(1000))
    assert max(int(lengths[b].max() - lengths[b].min()) for b in batches) <= 1
    again = sentence.bucket_batches(lengths, 64, generator)
    assert {frozenset(b.tolist()) for b in batches} != {frozenset(b.tolist()) for b in again}


def test_trains_above_chance_on_fixture(fixture_data):
    data_dir, glove, cache = fixture_data
    params = PARAMS | {"embedding": glove}
    outcome = cnn.train(params, context(data_dir, cache))
    assert outcome.metric >= 0.8  # chance is 0.2 on five balanced classes
    assert 1 <= outcome.best_epoch <= outcome.epochs_run <= 8
    assert len(outcome.epoch_seconds) == outcome.epochs_run
    assert cnn.train(params, context(data_dir, cache)).metric == outcome.metric  # seeded


def test_as_run_variant_and_binary(fixture_data):
    data_dir, glove, cache = fixture_data
    params = PARAMS | {"embedding": glove, "scheduler_mode": "min", "projection_dim": 12,
                       "vocabulary": "train_dev_test", "max_filter_size": 4, "epochs": 4}
    assert cnn.train(params, context(data_dir, cache, seed=2)).metric >= 0.7
    binary = cnn.train(PARAMS | {"embedding": glove, "epochs": 4},
                       context(data_dir, cache, granularity="binary"))
    assert binary.metric >= 0.8


def test_random_batching_trains_and_unknown_batching_fails(fixture_data):
    data_dir, glove, cache = fixture_data
    params = PARAMS | {"embedding": glove, "batching": "random", "epochs": 5}
    outcome = cnn.train(params, context(data_dir, cache))
    assert outcome.metric >= 0.8 and cnn.train(params, context(data_dir, cache)).metric == outcome.metric
    with pytest.raises(ValueError, match="batching must be"):
        cnn.train(params | {"batching": "sorted"}, context(data_dir, cache))


@pytest.mark.realdata
@requires_real_sst
def test_one_real_epoch(tmp_path):
    params = PARAMS | {"embedding": "glove_6b_50d", "batch_size": 64, "epochs": 1, "num_filters": 64,
                       "lr": 1e-3}
    outcome = cnn.train(params, context(Path(real_data_dir()), tmp_path))
    assert 0.25 <= outcome.metric <= 0.45


@pytest.mark.parametrize("max_filter_size,pieces", [(3, 4), (5, 8), (4, 64)])
def test_random_batch_pieces_equal_the_padded_batch(max_filter_size, pieces):
    """A random batch encoded in pieces gives the padded batch's logits, loss and gradients."""
    torch.manual_seed(0)
    lengths = torch.tensor([1, 2, 3, 5, 6, 6, 9, 12, 13, 20, 2, 4, 7, 30, 3, 1])
    tokens = torch.zeros(len(lengths), 40, dtype=torch.long)  # the split is padded further than the batch
    for i, n in enumerate(lengths.tolist()):
        tokens[i, :n] = torch.randint(2, 50, (n,))
    split = sentence.IndexedSplit(tokens, lengths, torch.randint(0, 5, (len(lengths),)))
    indices = torch.tensor([3, 0, 13, 7, 9, 1, 15, 4, 11, 12])
    model = cnn.CnnClassifier(torch.randn(50, 6, dtype=torch.double), 5, max_filter_size, 7, 0.0,
                              projection_dim=4).double()
    batch = cnn.padded_pieces(split, indices, max_filter_size, pieces)
    order = torch.argsort(lengths[indices], stable=True)
    assert torch.equal(batch["label"], split.labels[indices][order]) and batch["tokens"].shape[1] == 30
    assert int(batch["pieces"][:, 0].sum()) == len(indices) and int(batch["pieces"][:, 1].max()) == 30
    assert int((batch["pieces"][:, 0] * batch["pieces"][:, 1]).sum()) < len(indices) * 30
    padded = sentence.batch_of(split, indices[order])  # the same rows, all padded to the longest
    ours, reference = model(**batch), model(**padded)
    torch.testing.assert_close(ours["logits"], reference["logits"])
    torch.testing.assert_close(ours["loss"], reference["loss"])
    for grad, reference_grad in zip(torch.autograd.grad(ours["loss"], list(model.parameters())),
                                    torch.autograd.grad(reference["loss"], list(model.parameters()))):
        torch.testing.assert_close(grad, reference_grad)


def test_random_batches_cover_every_example_once():
    generator = torch.Generator().manual_seed(0)
    batches = sentence.random_batches(130, 64, generator)
    assert [len(b) for b in batches] == [64, 64, 2]
    assert sorted(torch.cat(batches).tolist()) == list(range(130))
    assert not torch.equal(torch.cat(batches), torch.cat(sentence.random_batches(130, 64, generator)))
