"""Search spaces: load and validate family files (conf/search_space/<case study>/*.yaml) and sample assignments.

A family file holds one appendix table: ``fixed`` settings beside the ``search``
distributions. A variant names its base with ``inherits: <file stem>`` and
overrides keys (``search`` entries are replaced per key, and a sampled key takes
the place of a fixed one). Trial i of family f in a study seeded s always gets
the same assignment: its generator is derived from (s, f, i) alone. A family with a
``replay`` block takes trial i's assignment from row i of a trial file instead
(experiments/replay.py), checked against its ``search`` distributions.
"""
from __future__ import annotations

import copy
import functools
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from syw.analysis.floors import Floor
from syw.core.errors import ConfigError
from syw.core.paths import CONF_DIR, REPO
from syw.experiments.replay import Replay, ReplayError, parse_replay

FAMILY_KEYS = {"inherits", "label", "table", "description", "train", "reported", "fixed", "search", "replay", "strategy"}
# How a family's assignments are chosen (experiments/tuner.py): seeded random draws, or an adaptive
# tuner (Optuna's GP or TPE sampler) standing in for the GP bandit of Melis et al. (2018), section 5.
STRATEGIES = ("random", "gp", "tpe")
DISTRIBUTIONS = {
    "uniform": {"low", "high"},
    "loguniform": {"low", "high"},
    "uniform_int": {"low", "high", "exclusive_high"},
    "choice": {"values"},
    "constant": {"value"},
}


@dataclass(frozen=True)
class Family:
    """A validated model family: where it came from, how to train it, what to sample."""

    name: str  # short name in the study (records file name, `family=` override)
    file: Path
    label: str
    table: int | None
    train_target: str
    fixed: dict[str, Any]
    search: dict[str, dict[str, Any]]
    reported: dict[str, Any] | None
    description: str = ""
    replay: Replay | None = None  # take assignments from a trial file instead of sampling them
    strategy: str | None = None  # the family file's search strategy (one of STRATEGIES); None: random unless the run names one

    def params(self, seed: int, index: int) -> dict[str, Any]:
        """Fixed settings plus trial ``index``'s assignment, sampled or replayed (searched keys win)."""
        if self.replay is not None:
            try:
                return {**self.fixed, **self.replay.assignment(index, self.search)}
            except ReplayError as err:
                raise ConfigError(self.file, "replay", str(err)) from None
        return {**self.fixed, **sample(self.search, trial_rng(seed, self.name, index))}


def find_family_file(stem: str, dirs: Iterable[Path]) -> Path | None:
    """``<stem>.yaml`` in the first of ``dirs`` that holds it, directly or in a subfolder of it (the suite's
    family files sit in one folder per case study, ``conf/search_space/sst5/sst5_cnn.yaml``)."""
    for folder in map(Path, dirs):
        for candidate in (folder / f"{stem}.yaml", *sorted(folder.glob(f"*/{stem}.yaml"))):
            if candidate.is_file():
                return candidate
    return None


def family_files() -> list[Path]:
    """The suite's own family files, every case study's folder, sorted by stem (each stem is unique)."""
    return sorted((CONF_DIR / "search_space").glob("*/*.yaml"), key=lambda p: p.stem)


def _load_raw(stem: str, dirs: list[Path], seen: tuple[str, ...] = ()) -> tuple[dict, Path]:
    path = find_family_file(stem, dirs)
    if path is None:
        raise FileNotFoundError(stem)
    from omegaconf import OmegaConf  # here, not at the top: the models import this module (GPU check without omegaconf)

    try:
        raw = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception as err:  # YAML syntax or interpolation errors: name the file and where
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<file>"
        raise ConfigError(path, where, f"not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ConfigError(path, "<file>", "a family file must be a mapping")
    base = raw.get("inherits")
    if base is None:
        return raw, path
    if base in seen + (stem,):
        raise ConfigError(path, "inherits", f"inheritance cycle through {base!r}")
    try:
        parent, _ = _load_raw(str(base), dirs, seen + (stem,))
    except FileNotFoundError:
        raise ConfigError(path, "inherits", f"no family file {base}.yaml in {', '.join(map(str, dirs))}") from None
    merged = {**parent, **{k: v for k, v in raw.items() if k not in ("fixed", "search", "inherits")}}
    merged["fixed"] = {**(parent.get("fixed") or {}), **(raw.get("fixed") or {})}
    # a variant's `name: null` under search drops the inherited entry (a setting it no longer searches)
    merged["search"] = {k: v for k, v in {**(parent.get("search") or {}), **(raw.get("search") or {})}.items() if v is not None}
    return merged, path


def _number(path: Path, key: str, value: Any, integer: bool = False) -> float:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value):
        kind = "an integer" if integer else "a number"
        raise ConfigError(path, key, f"must be {kind}, got {value!r}")
    return value


def validate_distribution(path: Path, key: str, spec: Any) -> dict[str, Any]:
    """Check one ``search`` entry; return it as a plain dict."""
    if not isinstance(spec, dict) or "distribution" not in spec:
        raise ConfigError(path, key, "a search entry is a mapping with a `distribution` key")
    kind = spec["distribution"]
    if kind not in DISTRIBUTIONS:
        raise ConfigError(path, f"{key}.distribution", f"unknown distribution {kind!r} (use {', '.join(sorted(DISTRIBUTIONS))})")
    extra = set(spec) - DISTRIBUTIONS[kind] - {"distribution"}
    if extra:
        allowed = ", ".join(sorted(DISTRIBUTIONS[kind]))
        raise ConfigError(path, f"{key}.{sorted(extra)[0]}", f"unknown key for a {kind} distribution (allowed: {allowed})")
    missing = DISTRIBUTIONS[kind] - set(spec) - {"exclusive_high"}
    if missing:
        raise ConfigError(path, f"{key}.{sorted(missing)[0]}", f"missing for a {kind} distribution")
    if kind == "choice":
        if not isinstance(spec["values"], list) or not spec["values"]:
            raise ConfigError(path, f"{key}.values", "a choice needs a non-empty list of values")
    elif kind != "constant":
        integer = kind == "uniform_int"
        low = _number(path, f"{key}.low", spec["low"], integer)
        high = _number(path, f"{key}.high", spec["high"], integer)
        exclusive = spec.get("exclusive_high", False)
        if not isinstance(exclusive, bool):
            raise ConfigError(path, f"{key}.exclusive_high", f"must be true or false, got {exclusive!r}")
        if low > high:
            raise ConfigError(path, key, f"low ({low}) is above high ({high})")
        if exclusive and low >= high:
            raise ConfigError(path, key, f"the range [{low}, {high}) is empty: with exclusive_high, high must be above low")
        if kind == "loguniform" and low <= 0:
            raise ConfigError(path, f"{key}.low", f"a loguniform distribution needs low > 0, got {low}")
    return dict(spec)


def load_family(stem: str, name: str | None = None, dirs: Iterable[Path] = ()) -> Family:
    """Load and validate ``<stem>.yaml`` from ``dirs`` (then ``conf/search_space``)."""
    search_dirs = [Path(d) for d in dirs] + [CONF_DIR / "search_space"]
    try:
        raw, path = _load_raw(stem, search_dirs)
    except FileNotFoundError:
        raise ConfigError(search_dirs[-1] / f"{stem}.yaml", "family", f"no family file {stem}.yaml in {', '.join(map(str, search_dirs))}") from None
    unknown = set(raw) - FAMILY_KEYS
    if unknown:
        raise ConfigError(path, sorted(unknown)[0], f"unknown key (allowed: {', '.join(sorted(FAMILY_KEYS))})")
    train = raw.get("train")
    if not isinstance(train, dict) or not isinstance(train.get("_target_"), str):
        raise ConfigError(path, "train._target_", "missing: name the training function, e.g. syw.models.cnn.train")
    for key in ("fixed", "search"):
        if not isinstance(raw.get(key) or {}, dict):
            raise ConfigError(path, key, "must be a mapping")
    if not raw.get("search"):
        raise ConfigError(path, "search", "missing: a family needs at least one sampled hyperparameter")
    search = {k: validate_distribution(path, f"search.{k}", v) for k, v in raw["search"].items()}
    strategy = raw.get("strategy")
    if strategy is not None and strategy not in STRATEGIES:
        raise ConfigError(path, "strategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    replay = None
    if raw.get("replay") is not None:
        try:
            replay = parse_replay(raw["replay"], search, REPO)
        except ReplayError as err:
            raise ConfigError(path, "replay", str(err)) from None
    return Family(
        name=name or stem,
        file=path,
        label=str(raw.get("label") or stem),
        table=raw.get("table"),
        train_target=train["_target_"],
        fixed=dict(raw.get("fixed") or {}),
        search=search,
        reported=raw.get("reported"),
        description=str(raw.get("description") or ""),
        replay=replay,
        strategy=strategy,
    )


def study_file(study: str) -> Path:
    """conf/study/<study>.yaml, or a ``FileNotFoundError`` naming it when there is no such study."""
    path = CONF_DIR / "study" / f"{study}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"there is no study {study!r} (no {path.relative_to(REPO)})")
    return path


def study_config(study: str) -> dict[str, Any]:
    """The ``study`` block and trial count of conf/study/<study>.yaml."""
    path = study_file(study)
    info = path.stat()
    raw = _parsed_config(str(path), info.st_size, info.st_mtime_ns)
    return copy.deepcopy({**raw["study"], "trials": raw.get("trials")})


@functools.lru_cache(maxsize=64)
def _parsed_config(path: str, size: int, mtime_ns: int) -> dict[str, Any]:
    """A study config parsed once per process while its size and modification time stay the same (``make fig1``
    asks for sst5's from a dozen places)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(path))


def study_floor(study: str) -> Floor | None:
    """The floor the study's config states (``study.floor``; :mod:`syw.analysis.floors`), else None."""
    floor = study_config(study).get("floor")
    return None if floor is None else Floor(float(floor["value"]), str(floor["rule"]))


def trial_rng(seed: int, family: str, index: int) -> np.random.Generator:
    """The generator of trial ``index`` of ``family`` in a study seeded ``seed`` (order-independent)."""
    return np.random.default_rng([int(seed), zlib.crc32(family.encode()), int(index)])


def trial_seed(seed: int, family: str, index: int) -> int:
    """The training seed of a trial (torch, shuffling): a stream separate from its assignment's."""
    return int(np.random.default_rng([int(seed), zlib.crc32(family.encode()), int(index), 1]).integers(2**31 - 1))


def draw(spec: Mapping[str, Any], rng: np.random.Generator) -> Any:
    """One value from a validated distribution spec (uniform_int includes ``high`` unless ``exclusive_high``)."""
    kind = spec["distribution"]
    if kind == "uniform":
        return float(rng.uniform(spec["low"], spec["high"]))
    if kind == "loguniform":
        return float(math.exp(rng.uniform(math.log(spec["low"]), math.log(spec["high"]))))
    if kind == "uniform_int":
        return int(rng.integers(spec["low"], spec["high"] + (0 if spec.get("exclusive_high") else 1)))
    if kind == "choice":
        return spec["values"][int(rng.integers(len(spec["values"])))]
    return spec["value"]


def sample(search: Mapping[str, Mapping[str, Any]], rng: np.random.Generator) -> dict[str, Any]:
    """An assignment of every searched hyperparameter, drawn in sorted key order."""
    return {key: draw(search[key], rng) for key in sorted(search)}
