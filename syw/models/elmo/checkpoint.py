"""Read and write a biLM in the official ELMo layout: ``options.json`` + weights hdf5 (docs/models.md §C).

:func:`load_bilm` reads the files of bilm-tf and AllenNLP (the 2x4096_512_2048cnn_2xhighway
release, or the test fixture); :func:`save_bilm` writes the same layout, so a biLM trained
here is read back by the same loader.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import torch

from syw.core.errors import DataError
from syw.models.elmo.bilm import BiLm
from syw.models.elmo.options import options_from_json, read_options
from syw.models.elmo.sources import missing_file

_LSTM_CELL = "RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/"


def _swap_gates(x: np.ndarray) -> np.ndarray:
    """TF's gate blocks i, j, f, o <-> i, f, j, o along the last axis (the swap is its own inverse)."""
    i, j, f, o = np.split(x, 4, axis=-1)
    return np.concatenate([i, f, j, o], axis=-1)


@dataclass(frozen=True)
class _Layout:
    """How the file stores a parameter: with a leading axis of 1, axes permuted, negated."""

    axes: tuple[int, ...] | None = None  # file axes (after the leading one) in the parameter's order
    negate: bool = False
    leading_axis: bool = False

    def to_param(self, array: np.ndarray) -> np.ndarray:
        array = array[0] if self.leading_axis else array
        array = array.transpose(self.axes) if self.axes else array
        return -array if self.negate else array

    def to_file(self, array: np.ndarray) -> np.ndarray:
        array = array.transpose(np.argsort(self.axes)) if self.axes else array
        array = -array if self.negate else array
        return array[None] if self.leading_axis else array

    def file_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = tuple(shape[k] for k in np.argsort(self.axes)) if self.axes else shape
        return (1, *shape) if self.leading_axis else shape


_AS_IS, _TRANSPOSED = _Layout(), _Layout(axes=(1, 0))


def _parameter_layouts(model: BiLm) -> dict[str, tuple[torch.Tensor, _Layout]]:
    """hdf5 key -> (the parameter, or part of one, that it holds; its layout), for all but the LSTM's W_0 and B."""
    embedder = model.token_embedder
    layouts = {"char_embed": (embedder.char_embedding[1:], _AS_IS),  # row 0 is the padding row, not in the file
               "CNN_proj/W_proj": (embedder.projection.weight, _TRANSPOSED),
               "CNN_proj/b_proj": (embedder.projection.bias, _AS_IS)}
    for k, conv in enumerate(embedder.convs):
        layouts[f"CNN/W_cnn_{k}"] = (conv.weight, _Layout(axes=(2, 1, 0), leading_axis=True))
        layouts[f"CNN/b_cnn_{k}"] = (conv.bias, _AS_IS)
    dim = model.options.n_filters
    for k, layer in enumerate(embedder.highway.layers):
        # Highway gates x by σ(g); TF's carry gate σ(c) gates the transform, so g = -c
        layouts[f"CNN_high_{k}/W_transform"] = (layer.weight[:dim], _TRANSPOSED)
        layouts[f"CNN_high_{k}/b_transform"] = (layer.bias[:dim], _AS_IS)
        layouts[f"CNN_high_{k}/W_carry"] = (layer.weight[dim:], _Layout(axes=(1, 0), negate=True))
        layouts[f"CNN_high_{k}/b_carry"] = (layer.bias[dim:], _Layout(negate=True))
    for k, layer in enumerate(model.lstm.layers):
        for direction in (0, 1):
            layouts[_LSTM_CELL.format(direction=direction, layer=k) + "W_P_0"] = (layer.proj_weight[direction], _AS_IS)
    return layouts


def _dataset(weights: h5py.File, key: str, shape: tuple[int, ...], path: Path) -> np.ndarray:
    """The array at ``key``, checked to have ``shape``."""
    item = weights.get(key)
    if not isinstance(item, h5py.Dataset):
        raise DataError(f"{path}: missing dataset '{key}'")
    if item.shape != shape:
        raise DataError(f"{path}: dataset '{key}' has shape {item.shape}, expected {shape}")
    return item[...]


def load_bilm(options_file: str | Path, weight_file: str | Path, requires_grad: bool = False) -> BiLm:
    """A :class:`BiLm` with the weights of an official-layout ELMo (docs/models.md §C "hdf5 → parameter mapping")."""
    options = read_options(options_file)
    path = Path(weight_file)
    if not path.is_file():
        raise missing_file(path, "weights")
    model = BiLm(options)
    cell = options.cell_dim
    try:
        weights = h5py.File(path, "r")
    except OSError as err:
        raise DataError(f"{path}: not an HDF5 file ({err})") from err
    with weights, torch.no_grad():
        for key, (param, layout) in _parameter_layouts(model).items():
            array = _dataset(weights, key, layout.file_shape(tuple(param.shape)), path)
            param.copy_(torch.from_numpy(np.ascontiguousarray(layout.to_param(array))))
        model.token_embedder.char_embedding[0] = 0.0
        for k, layer in enumerate(model.lstm.layers):
            input_dim = layer.input_weight.shape[1]
            for direction in (0, 1):
                prefix = _LSTM_CELL.format(direction=direction, layer=k)
                w = _swap_gates(_dataset(weights, prefix + "W_0", (input_dim + options.projection_dim, 4 * cell), path))
                bias = _dataset(weights, prefix + "B", (4 * cell,), path).astype(np.float64)
                bias[2 * cell:3 * cell] += 1.0  # TF's forget_bias, added to the forget block (third in TF's order)
                layer.input_weight[direction] = torch.from_numpy(w[:input_dim])
                layer.state_weight[direction] = torch.from_numpy(w[input_dim:])
                layer.bias[direction] = torch.from_numpy(_swap_gates(bias))
    model.requires_grad_(requires_grad)
    return model


def save_bilm(model: BiLm, options: dict[str, Any], folder: str | Path) -> tuple[Path, Path]:
    """Write ``folder/options.json`` and ``folder/weights.hdf5`` in the official layout; returns both paths.

    ``options`` is the ``options.json`` content and must describe ``model``. Each LSTM bias
    ``B`` is stored as float64, which holds b − 1 exactly for every float32 b of magnitude
    between 2⁻²⁹ and 2⁵³ and for 0, so the loader's +1 gives the bias back exactly.
    """
    if options_from_json(options, "options") != model.options:
        raise ValueError(f"the options describe {options_from_json(options, 'options')}, not the model's {model.options}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    options_path, weights_path = folder / "options.json", folder / "weights.hdf5"
    options_path.write_text(json.dumps(options, indent=2) + "\n", encoding="utf-8")
    cell = model.options.cell_dim
    with h5py.File(weights_path, "w") as weights, torch.no_grad():
        for key, (param, layout) in _parameter_layouts(model).items():
            weights[key] = layout.to_file(param.detach().cpu().numpy())
        for k, layer in enumerate(model.lstm.layers):
            for direction in (0, 1):
                prefix = _LSTM_CELL.format(direction=direction, layer=k)
                w = torch.cat([layer.input_weight[direction], layer.state_weight[direction]]).cpu().numpy()
                weights[prefix + "W_0"] = _swap_gates(w)
                bias = _swap_gates(layer.bias[direction].cpu().numpy().astype(np.float64))
                bias[2 * cell:3 * cell] -= 1.0
                weights[prefix + "B"] = bias
    return options_path, weights_path
