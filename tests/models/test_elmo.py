"""models/elmo/elmo*.py, models/elmo/bilm.py: ELMo against TensorFlow's outputs on the fixture, and hand cases."""
from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from syw.core.errors import DataError, DataMissingError
from syw.models.elmo.bilm import BiLm, BiLmOptions
from syw.models.elmo.chars import BOS_IDS, EOS_IDS, add_sentence_boundaries, batch_to_ids, remove_sentence_boundaries, word_to_char_ids
from syw.models.elmo.checkpoint import load_bilm, save_bilm
from syw.models.elmo.elmo import Elmo
from syw.models.elmo.lstm import BiProjectedLstmLayer, ElmoLstm

REPO = Path(__file__).resolve().parents[2]
SMALL = BiLmOptions(char_dim=4, filters=((1, 4), (2, 8), (3, 8)), n_highway=2, n_characters=262,
                    max_characters_per_token=50, cell_dim=8, projection_dim=4, n_layers=2, cell_clip=3.0,
                    proj_clip=3.0, use_skip_connections=True)
SMALL_JSON = {"lstm": {"cell_clip": 3.0, "use_skip_connections": True, "n_layers": 2, "proj_clip": 3.0,
                       "projection_dim": 4, "dim": 8},
              "char_cnn": {"embedding": {"dim": 4}, "filters": [[1, 4], [2, 8], [3, 8]], "n_highway": 2,
                           "n_characters": 262, "max_characters_per_token": 50, "activation": "relu"}}


def fixture_dir() -> Path | None:
    """The ELMo fixture: ``$SYW_DATA_DIR/elmo_fixture``, else ``../shared/data/elmo_fixture`` beside the clone."""
    candidates = [REPO.parent / "shared" / "data" / "elmo_fixture"]
    if os.environ.get("SYW_DATA_DIR"):
        candidates.insert(0, Path(os.environ["SYW_DATA_DIR"]) / "elmo_fixture")
    return next((path for path in candidates if (path / "lm_weights.hdf5").is_file()), None)


requires_fixture = pytest.mark.skipif(fixture_dir() is None, reason="no elmo_fixture in $SYW_DATA_DIR or "
                                      "../shared/data beside the repository")


@pytest.fixture(autouse=True)
def one_thread():
    """These tensors are tiny: a second thread only adds synchronisation (slow when the other core is busy)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def small_bilm(seed: int = 0) -> BiLm:
    torch.manual_seed(seed)
    return BiLm(SMALL)


SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["Éclair", "au", "café", "!", "ok"]]


@requires_fixture
def test_fixture_top_layer_matches_tensorflow_over_ten_stateful_batches():
    folder = fixture_dir()
    bilm = load_bilm(folder / "options.json", folder / "lm_weights.hdf5")
    sentences = json.loads((folder / "sentences.json").read_text())
    references = [h5py.File(folder / f"lm_embeddings_{k}.hdf5", "r") for k in range(3)]
    worst = 0.0
    with torch.no_grad():
        for i in range(10):  # in order, one instance: the states carry over from batch to batch
            batch = [sentences[k][i].split() for k in range(3)]
            layers, _ = bilm(batch_to_ids(batch))
            for k, words in enumerate(batch):
                forward, backward = references[k][str(i)][...]
                expected = np.concatenate([forward, backward], axis=-1)
                worst = max(worst, float(np.abs(layers[2][k, 1:len(words) + 1].numpy() - expected).max()))
    assert worst < 1e-5, worst


@requires_fixture
def test_fixture_token_embeddings_match_tensorflow():
    folder = fixture_dir()
    bilm = load_bilm(folder / "options.json", folder / "lm_weights.hdf5")
    vocab = (folder / "vocab_test.txt").read_text(encoding="utf-8").split("\n")[:457]
    # as the reference was made: "sentences" of up to 50 words, boundary tokens added and removed
    rows = []
    with torch.no_grad():
        for start in range(0, len(vocab), 50):
            ids, mask = add_sentence_boundaries(batch_to_ids([vocab[start:start + 50]]))
            tokens, new_mask = remove_sentence_boundaries(bilm.token_embedder(ids), mask)
            rows.append(tokens[new_mask])
    expected = h5py.File(folder / "elmo_token_embeddings.hdf5", "r")["embedding"][...]
    assert np.abs(torch.cat(rows).numpy() - expected[:457]).max() < 1e-5


@requires_fixture
def test_writer_reproduces_the_fixture_file(tmp_path):
    folder = fixture_dir()
    options = json.loads((folder / "options.json").read_text())
    _, written = save_bilm(load_bilm(folder / "options.json", folder / "lm_weights.hdf5"), options, tmp_path)
    with h5py.File(folder / "lm_weights.hdf5", "r") as original, h5py.File(written, "r") as copy:
        keys = []
        original.visititems(lambda name, item: keys.append(name) if isinstance(item, h5py.Dataset) else None)
        for key in keys:  # B went through +1 and -1 in float32
            np.testing.assert_allclose(copy[key][...], original[key][...], rtol=0, atol=1e-7, err_msg=key)


def test_character_ids_of_short_long_and_boundary_words():
    assert word_to_char_ids("ab") == [259, 98, 99, 260] + [261] * 46
    assert word_to_char_ids("é")[:4] == [259, 0xC3 + 1, 0xA9 + 1, 260]
    long = word_to_char_ids("x" * 60)  # 48 bytes kept, then end-of-word, no padding left
    assert len(long) == 50 and long[1:49] == [ord("x") + 1] * 48 and long[49] == 260
    assert BOS_IDS == [259, 257, 260] + [261] * 47 and EOS_IDS == [259, 258, 260] + [261] * 47
    assert word_to_char_ids("<S>") == BOS_IDS and word_to_char_ids("</S>") == EOS_IDS
    ids = batch_to_ids([["ab"], []])
    assert ids.shape == (2, 1, 50) and ids[1].eq(0).all()


def test_boundary_tokens_are_added_after_the_last_token_and_removed():
    ids, mask = add_sentence_boundaries(batch_to_ids([["a", "b"], ["c"], []]))
    assert mask.tolist() == [[True] * 4, [True, True, True, False], [True, True, False, False]]
    assert ids[:, 0].tolist() == [BOS_IDS] * 3
    assert ids[0, 3].tolist() == EOS_IDS and ids[1, 2].tolist() == EOS_IDS and ids[2, 1].tolist() == EOS_IDS
    assert ids[1, 1].tolist() == word_to_char_ids("c") and ids[1, 3].eq(0).all()
    x = torch.arange(12.0).view(3, 4, 1)
    stripped, new_mask = remove_sentence_boundaries(x, mask)
    assert stripped.squeeze(-1).tolist() == [[1.0, 2.0], [5.0, 0.0], [0.0, 0.0]]
    assert new_mask.tolist() == [[True, True], [True, False], [False, False]]


def test_state_carries_over_and_reset_restores_the_fresh_result():
    bilm = small_bilm()
    first, second = batch_to_ids(SENTENCES), batch_to_ids(SENTENCES[::-1])
    with torch.no_grad():
        fresh = bilm(second)[0]
        bilm.reset_states()
        bilm(first)
        carried = bilm(second)[0]
        bilm.reset_states()
        again = bilm(second)[0]
    assert not torch.allclose(carried[1], fresh[1])
    assert torch.equal(carried[0], fresh[0])  # the token layer has no state
    for layer, expected in zip(again, fresh):
        assert torch.equal(layer, expected)


def test_smaller_batch_takes_the_first_rows_and_larger_one_starts_extra_rows_at_zero():
    three, two, four = (batch_to_ids(SENTENCES), batch_to_ids(SENTENCES[1:]),
                        batch_to_ids([SENTENCES[0], SENTENCES[2], SENTENCES[1], SENTENCES[0]]))

    def run(*batches: torch.Tensor) -> torch.Tensor:
        bilm = small_bilm()
        with torch.no_grad():
            return [bilm(batch)[0][2] for batch in batches][-1]

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:  # other batch shapes round differently
        return torch.allclose(a, b, rtol=0, atol=1e-6)

    out = run(three, two, four)
    assert same(out[:2], run(three, two, four[:2]))  # rows 0-1 start from the small batch's states
    assert same(out[2], run(three, four[:3])[2])  # row 2 kept the first batch's state
    assert same(out[3], run(four[3:])[0])  # row 3 is new: zero state
    assert not same(out[2], run(four[:3])[2]) and not same(out[:2], run(three, four[:2]))


def test_a_row_without_tokens_keeps_its_lstm_state():
    torch.manual_seed(0)
    lstm = ElmoLstm(3, 5, 2, 2, cell_clip=3.0, proj_clip=3.0)
    x = torch.randn(2, 4, 3)
    with torch.no_grad():
        lstm(x, torch.ones(2, 4, dtype=torch.bool))
        before = [state.clone() for state in lstm._states]
        lstm(x, torch.tensor([[True, True, False, False], [False] * 4]))
    assert not torch.equal(lstm._states[0][:, :, 0], before[0][:, :, 0])
    for state, old in zip(lstm._states, before):
        assert torch.equal(state[:, :, 1], old[:, :, 1])


def test_an_empty_sentence_still_runs_its_boundary_tokens_like_the_original():
    bilm = small_bilm()
    with torch.no_grad():
        bilm(batch_to_ids(SENTENCES[:2]))
        before = bilm.lstm._states[0].clone()
        bilm(batch_to_ids([SENTENCES[0], []]))
    assert not torch.equal(bilm.lstm._states[0][:, :, 1], before[:, :, 1])


def test_backward_direction_reads_each_row_right_to_left_within_its_length():
    bilm = small_bilm()
    with torch.no_grad():
        alone = bilm(batch_to_ids([SENTENCES[1]]))[0][1]
        bilm.reset_states()
        padded = bilm(batch_to_ids([SENTENCES[1], SENTENCES[2]]))[0][1]
    torch.testing.assert_close(padded[0, :4], alone[0], rtol=0, atol=1e-6)
    assert padded[0, 4:].eq(0).all()


def _reference_scan(layer: BiProjectedLstmLayer, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The cell equations step by step with autograd (docs/models.md §C), for checking the hand-written backward."""
    outputs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ layer.input_weight + h @ layer.state_weight + layer.bias.unsqueeze(1)
        i, f, g, o = z.chunk(4, dim=-1)
        c = (torch.sigmoid(i) * torch.tanh(g) + torch.sigmoid(f) * c).clamp(-layer.cell_clip, layer.cell_clip)
        h = ((torch.sigmoid(o) * torch.tanh(c)) @ layer.proj_weight).clamp(-layer.proj_clip, layer.proj_clip)
        outputs.append(h)
    return torch.stack(outputs, dim=1)


def test_hand_written_backward_matches_autograd_with_clipping():
    torch.manual_seed(0)
    layer = BiProjectedLstmLayer(3, 6, 4, cell_clip=0.5, proj_clip=0.3).double()
    with torch.no_grad():
        for param in layer.parameters():
            param.mul_(4.0)  # large weights so that both clips bind
    x = torch.randn(2, 5, 3, 3, dtype=torch.double, requires_grad=True)
    h0 = torch.randn(2, 3, 4, dtype=torch.double, requires_grad=True)
    c0 = torch.randn(2, 3, 6, dtype=torch.double, requires_grad=True)
    weights = torch.randn(2, 5, 3, 4, dtype=torch.double)
    outputs = layer(x, h0, c0)[0]
    assert outputs.abs().max() == 0.3
    grads = torch.autograd.grad((outputs * weights).sum(), [x, h0, c0, *layer.parameters()])
    expected_out = _reference_scan(layer, x, h0, c0)
    expected = torch.autograd.grad((expected_out * weights).sum(), [x, h0, c0, *layer.parameters()])
    torch.testing.assert_close(outputs, expected_out)
    for got, want in zip(grads, expected):
        torch.testing.assert_close(got, want)


def test_save_then_load_round_trips_exactly(tmp_path):
    bilm = small_bilm()
    options_path, weights_path = save_bilm(bilm, SMALL_JSON, tmp_path)
    loaded = load_bilm(options_path, weights_path, requires_grad=True)
    assert loaded.options == SMALL and json.loads(options_path.read_text()) == SMALL_JSON
    expected = bilm.state_dict()
    expected["token_embedder.char_embedding"][0] = 0.0  # the file has no padding row
    for name, value in loaded.state_dict().items():
        assert torch.equal(value, expected[name]), name
    with pytest.raises(ValueError, match="not the model's"):
        save_bilm(bilm, {**SMALL_JSON, "lstm": {**SMALL_JSON["lstm"], "dim": 16}}, tmp_path)


@pytest.fixture
def small_files(tmp_path) -> tuple[Path, Path]:
    return save_bilm(small_bilm(), SMALL_JSON, tmp_path / "elmo")


def test_frozen_elmo_trains_only_the_scalar_mixes(small_files):
    elmo = Elmo(*small_files, num_output_representations=2)
    assert not any(param.requires_grad for param in elmo.bilm.parameters())
    out = elmo(batch_to_ids(SENTENCES))
    assert len(out["elmo_representations"]) == 2 and out["elmo_representations"][0].shape == (3, 5, 8)
    assert out["mask"].sum(dim=1).tolist() == [4, 2, 5]
    sum(x.sum() for x in out["elmo_representations"]).backward()
    for mix in elmo.scalar_mixes:
        assert mix.scalar_parameters.grad is not None and mix.gamma.grad is not None
    tuned = Elmo(*small_files, num_output_representations=1, requires_grad=True)
    tuned(batch_to_ids(SENTENCES))["elmo_representations"][0].sum().backward()
    assert all(param.grad is not None for param in tuned.bilm.parameters())


def test_elmo_mix_of_equal_weights_is_the_mean_of_the_layers(small_files):
    elmo = Elmo(*small_files, num_output_representations=1)
    bilm = load_bilm(*small_files)
    ids = batch_to_ids(SENTENCES)
    with torch.no_grad():
        layers, mask = bilm(ids)
        expected, _ = remove_sentence_boundaries(sum(layers) / 3, mask)
        torch.testing.assert_close(elmo(ids)["elmo_representations"][0], expected)


def test_missing_files_say_what_to_fetch(tmp_path, small_files):
    with pytest.raises(DataMissingError, match=r"elmo_2x4096_512_2048cnn_2xhighway_weights\.hdf5.*360 MB"):
        load_bilm(small_files[0], tmp_path / "absent.hdf5")
    with pytest.raises(DataMissingError, match=r"options file .*absent\.json not found.*_options\.json"):
        load_bilm(tmp_path / "absent.json", small_files[1])


def test_malformed_files_name_the_file_and_key(tmp_path, small_files):
    options_path, weights_path = small_files
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match=r"bad\.json: not JSON"):
        load_bilm(bad, weights_path)
    bad.write_text(json.dumps({**SMALL_JSON, "lstm": {k: v for k, v in SMALL_JSON["lstm"].items() if k != "dim"}}))
    with pytest.raises(DataError, match=r"bad\.json: missing key 'lstm\.dim'"):
        load_bilm(bad, weights_path)
    bad.write_text(json.dumps({**SMALL_JSON, "char_cnn": {**SMALL_JSON["char_cnn"], "activation": "tanh"}}))
    with pytest.raises(DataError, match=r"key 'char_cnn\.activation' is 'tanh'"):
        load_bilm(bad, weights_path)
    broken = tmp_path / "broken.hdf5"
    with h5py.File(weights_path, "r") as source, h5py.File(broken, "w") as target:
        for key in ("CNN", "CNN_proj", "char_embed"):
            source.copy(key, target)
        del target["CNN/W_cnn_1"]
        target["CNN/W_cnn_1"] = np.zeros((1, 2, 4, 9), dtype=np.float32)
    with pytest.raises(DataError, match=r"broken\.hdf5: dataset 'CNN/W_cnn_1' has shape \(1, 2, 4, 9\), "
                                         r"expected \(1, 2, 4, 8\)"):
        load_bilm(options_path, broken)
    with h5py.File(broken, "a") as target:
        del target["CNN/W_cnn_1"]
        target["CNN/W_cnn_1"] = np.zeros((1, 2, 4, 8), dtype=np.float32)
    with pytest.raises(DataError, match=r"broken\.hdf5: missing dataset 'CNN_high_0/W_transform'"):
        load_bilm(options_path, broken)
    bad.write_text("not hdf5")
    with pytest.raises(DataError, match=r"bad\.json: not an HDF5 file"):
        load_bilm(options_path, bad)

