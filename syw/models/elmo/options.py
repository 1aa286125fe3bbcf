"""A biLM's ``options.json`` (the official ELMo layout, docs/models.md §C "Options"): read, checked, written.

Each key of the file maps to one field of :class:`BiLmOptions`; a missing or ill-typed key is a
:class:`DataError` naming the file and the key.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from syw.core.errors import DataError
from syw.models.elmo.bilm import BiLmOptions
from syw.models.elmo.sources import missing_file


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return _integer(value) or isinstance(value, float)


def _filters(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(
        isinstance(pair, list) and len(pair) == 2 and all(_integer(v) and v > 0 for v in pair) for pair in value)


_OPTION_KEYS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "char_dim": ("char_cnn.embedding.dim", _integer, "an integer"),
    "filters": ("char_cnn.filters", _filters, "a list of [width, filters] pairs of positive integers"),
    "n_highway": ("char_cnn.n_highway", _integer, "an integer"),
    "n_characters": ("char_cnn.n_characters", _integer, "an integer"),
    "max_characters_per_token": ("char_cnn.max_characters_per_token", _integer, "an integer"),
    "cell_dim": ("lstm.dim", _integer, "an integer"),
    "projection_dim": ("lstm.projection_dim", _integer, "an integer"),
    "n_layers": ("lstm.n_layers", _integer, "an integer"),
    "cell_clip": ("lstm.cell_clip", _number, "a number"),
    "proj_clip": ("lstm.proj_clip", _number, "a number"),
    "use_skip_connections": ("lstm.use_skip_connections", lambda v: isinstance(v, bool), "true or false"),
    "activation": ("char_cnn.activation", lambda v: v == "relu", '"relu" (the only one supported)'),
}


def options_from_json(raw: Any, source: str) -> BiLmOptions:
    """The options of an ``options.json`` mapping; :class:`DataError` naming ``source`` and the key."""
    values: dict[str, Any] = {}
    for field, (key, valid, expected) in _OPTION_KEYS.items():
        value = raw
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise DataError(f"{source}: missing key '{key}'")
            value = value[part]
        if not valid(value):
            raise DataError(f"{source}: key '{key}' is {value!r}, expected {expected}")
        values[field] = value
    del values["activation"]  # checked only: BiLmOptions implies relu
    values["filters"] = tuple((width, n) for width, n in values["filters"])
    return BiLmOptions(**values)


def options_to_json(options: BiLmOptions) -> dict[str, Any]:
    """The ``options.json`` content describing ``options`` (the inverse of :func:`options_from_json`)."""
    values = {**vars(options), "filters": [list(pair) for pair in options.filters], "activation": "relu"}
    raw: dict[str, Any] = {}
    for field, (key, _, _) in _OPTION_KEYS.items():
        *parents, last = key.split(".")
        node = raw
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = values[field]
    return raw


def read_options(options_file: str | Path) -> BiLmOptions:
    """Parse an ``options.json``: :class:`DataMissingError` if absent, :class:`DataError` if malformed."""
    path = Path(options_file)
    if not path.is_file():
        raise missing_file(path, "options")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: not JSON ({err})") from err
    return options_from_json(raw, str(path))
