"""The settings check: a family file's fixed and searched keys against what its training function reads.

A training function's module declares the settings it reads in ``SETTINGS``, one entry per key::

    SETTINGS = {
        "epochs": {"type": "int", "min": 1},
        "dropout": {"type": "float", "min": 0.0, "max": 1.0},
        "optimizer": {"values": ["adam"]},
        "projection_dim": {"type": "int", "min": 1, "null": True, "default": None},
        "ngram_range": {"type": "list", "items": "int", "length": 2, "min": 1},
    }

``type`` is one of int, float (an int is accepted), bool, str, list; ``values`` lists the allowed
values; ``min``/``max`` bound a number (for a list, each item), both inclusive; ``null: true``
admits None; a setting with a ``default`` may be left out of the family file. Every key of the
family's ``fixed`` and ``search`` blocks must be declared, every declared key without a default
must be given, and every value a search distribution can draw must be allowed. A family that
breaks this is refused before Ray starts, with one line naming the file and the key.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from syw.core.errors import ConfigError

if TYPE_CHECKING:  # the check reads a family's files and keys; loading it is the runner's
    from syw.experiments.space import Family

TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "list": (list, tuple)}
SPEC_KEYS = {"type", "values", "min", "max", "null", "default", "items", "length", "doc"}
# the two specs most settings share: a layer size and a probability (dropout rates)
SIZE: dict[str, Any] = {"type": "int", "min": 1}
RATE: dict[str, Any] = {"type": "float", "min": 0.0, "max": 1.0}


def _is(value: Any, kind: str) -> bool:
    return isinstance(value, TYPES[kind]) and (kind == "bool" or not isinstance(value, bool))


def problem(value: Any, spec: Mapping[str, Any]) -> str | None:
    """Why ``value`` is not allowed by ``spec``, or None when it is."""
    if value is None:
        return None if spec.get("null") else "must not be null"
    if "values" in spec:
        allowed = [list(v) if isinstance(v, tuple) else v for v in spec["values"]]
        shown = list(value) if isinstance(value, tuple) else value
        if not any(shown == a and isinstance(shown, bool) == isinstance(a, bool) for a in allowed):  # True is not 1
            return f"must be one of {', '.join(map(repr, allowed))}, got {value!r}"
        return None
    kind = spec.get("type")
    if kind is not None and not _is(value, kind):
        return f"must be {'an' if kind == 'int' else 'a'} {kind}, got {value!r}"
    if kind == "list":
        if "length" in spec and len(value) != spec["length"]:
            return f"must be a list of {spec['length']} items, got {value!r}"
        items = spec.get("items")
        for item in value:
            if items is not None and not _is(item, items):
                return f"items must be {items}s, got {value!r}"
            bad = _bounds(item, spec)
            if bad:
                return f"items {bad}, got {value!r}"
        return None
    bad = _bounds(value, spec)
    return f"{bad}, got {value!r}" if bad else None


def _bounds(value: Any, spec: Mapping[str, Any]) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "must be finite"
    if "min" in spec and value < spec["min"]:
        return f"must be at least {spec['min']}"
    if "max" in spec and value > spec["max"]:
        return f"must be at most {spec['max']}"
    return None


def _search_problem(dist: Mapping[str, Any], spec: Mapping[str, Any]) -> str | None:
    """Why a search distribution may draw a value ``spec`` does not allow, or None."""
    kind = dist["distribution"]
    if kind == "choice":
        for value in dist["values"]:
            bad = problem(value, spec)
            if bad:
                return f"choice value {bad}"
        return None
    if kind == "constant":
        return problem(dist["value"], spec)
    if "values" in spec:
        return f"must be one of {', '.join(map(repr, spec['values']))}: a {kind} distribution cannot draw them"
    if kind in ("uniform", "loguniform") and spec.get("type") not in ("float", None):
        return f"must be {'an' if spec['type'] == 'int' else 'a'} {spec['type']}: a {kind} distribution draws floats"
    if kind == "uniform_int" and spec.get("type") not in ("int", "float", None):
        return f"must be a {spec['type']}: a uniform_int distribution draws integers"
    high = dist["high"] - 1 if kind == "uniform_int" and dist.get("exclusive_high") else dist["high"]
    for end, value in (("low", dist["low"]), ("high", high)):
        bad = _bounds(value, spec)
        if bad:
            return f"{bad}, but the distribution's {end} end is {value!r}"
    return None


def check_settings(family: Family, declared: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise :class:`ConfigError` naming the family file and key unless the family fits ``declared``."""
    for key, spec in declared.items():
        unknown = set(spec) - SPEC_KEYS
        if unknown:
            raise ConfigError(family.train_target, f"SETTINGS.{key}", f"unknown declaration key {sorted(unknown)[0]!r}")
    reads = ", ".join(sorted(declared))
    for key in sorted(set(family.fixed) | set(family.search)):
        if key not in declared:
            raise ConfigError(family.file, key, f"unknown setting: {family.train_target} does not read it (it reads: {reads})")
    for key, spec in sorted(declared.items()):
        where = f"search.{key}" if key in family.search else f"fixed.{key}"
        if key in family.search:
            bad = _search_problem(family.search[key], spec)
        elif key in family.fixed:
            bad = problem(family.fixed[key], spec)
        elif "default" in spec:
            continue
        else:
            raise ConfigError(family.file, key, f"missing: {family.train_target} needs it ({_describe(spec)})")
        if bad:
            raise ConfigError(family.file, where, bad)


def _describe(spec: Mapping[str, Any]) -> str:
    if "values" in spec:
        return "one of " + ", ".join(map(repr, spec["values"]))
    bounds = [f">= {spec['min']}" if "min" in spec else "", f"<= {spec['max']}" if "max" in spec else ""]
    return " ".join(filter(None, [spec.get("type", "any value"), *bounds]))


def resolve(params: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``params`` checked against ``declared`` (ValueError naming the key) with its defaults filled in.

    The runner checks a family file before any trial runs; training functions call this too, so a
    direct call (a test, a benchmark, a notebook) meets the same rules.
    """
    for key, value in params.items():
        if key not in declared:
            raise ValueError(f"unknown setting {key!r} (reads: {', '.join(sorted(declared))})")
        bad = problem(value, declared[key])
        if bad:
            raise ValueError(f"{key} {bad}")
    missing = sorted(k for k, spec in declared.items() if k not in params and "default" not in spec)
    if missing:
        raise ValueError(f"missing setting {missing[0]!r} ({_describe(declared[missing[0]])})")
    return {**{k: s["default"] for k, s in declared.items() if "default" in s and k not in params}, **params}
