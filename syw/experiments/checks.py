"""Configuration checks, all made before Ray starts: the study block and run settings, every family
file (against the settings its training function declares), and that existing records were drawn
with the same seed and search space."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from syw.core.errors import ConfigError
from syw.core.records import iter_records
from syw.core.settings import check_settings
from syw.experiments.imports import add_current_folder, import_problem
from syw.experiments.replay import ReplayError, within
from syw.experiments.source import declared_settings, defined_in_source
from syw.experiments.space import CONF_DIR, STRATEGIES, Family, load_family


def config_roots() -> list[Path]:
    """Hydra's config folders, in its order: the suite's ``conf/``, then each ``file://`` folder of ``hydra.searchpath``
    (a study given by path is one: :mod:`syw.experiments.given_study`)."""
    try:
        extra = [str(entry) for entry in HydraConfig.get().searchpath]
    except Exception:  # not under Hydra (tests call the helpers directly)
        extra = []
    return [CONF_DIR, *(Path(entry.removeprefix("file://")) for entry in extra if "://" not in entry.removeprefix("file://"))]


def study_file() -> str:
    """The study file Hydra chose: the first ``study/<choice>.yaml`` of :func:`config_roots`, the file itself
    when it is a link to one given by path."""
    try:
        choice = HydraConfig.get().runtime.choices["study"]
    except Exception:  # not under Hydra (tests call the helpers directly)
        return "<study config>"
    for root in config_roots():
        candidate = root / "study" / f"{choice}.yaml"
        if candidate.is_file():
            return str(candidate.resolve())
    return str(CONF_DIR / "study" / f"{choice}.yaml")


def family_dirs(cfg: DictConfig) -> list[Path]:
    """Where a study's family files are looked for, before ``conf/search_space``: ``paths.family_dirs``, then the
    folder of a study file that is not the suite's (beside it), then ``search_space/`` of each ``hydra.searchpath``
    folder (which mirrors the suite's ``conf/``)."""
    dirs = [Path(str(d)) for d in cfg.paths.get("family_dirs") or []]
    study = Path(study_file())
    if study.is_file() and not study.is_relative_to(CONF_DIR):
        dirs.append(study.parent)
    dirs += [root / "search_space" for root in config_roots()[1:] if (root / "search_space").is_dir()]
    return list(dict.fromkeys(dirs))


def _require(cfg: DictConfig, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = OmegaConf.select(cfg, key, default=None)
    if value is None or isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise ConfigError(where, key, f"missing or of the wrong type (got {value!r})")
    return value


# A study's name is its folder under paths.results_dir (and its Tune runs' and Ray log's names under .tune), a family's
# its records file's: a name with a path in it ("../x", "a/b") would write them outside the results folder.
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _check_plain_name(name: str, where: str, key: str, names: str) -> None:
    """Refuse ``name`` (at ``key`` of ``where``) unless it is a plain file name: no folder, no ``..``."""
    if not PLAIN_NAME.fullmatch(name) or ".." in name:
        raise ConfigError(where, key, f"{name!r} is not a plain name (a letter or digit, then letters, digits, '.', '_' or "
                          f"'-', without '..'): it names {names}")


def _check_family_trials(study: DictConfig, families: DictConfig, where: Path) -> None:
    """``study.trials``, when given, maps some of the study's families to their own trial count."""
    counts = study.get("trials")
    if counts is None:
        return
    if not isinstance(counts, DictConfig):
        raise ConfigError(where, "study.trials", "must map family names to trial counts, e.g. {ngram: 100}")
    for name, count in counts.items():
        if name not in families:
            raise ConfigError(where, f"study.trials.{name}", f"not a family of this study (has: {', '.join(families)})")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(where, f"study.trials.{name}", f"must be a positive whole number, got {count!r}")


def _check_floor(study: DictConfig, where: Path) -> None:
    """``study.floor``, when given, is ``{value: <number>, rule: <text>}``: the score of a predictor that learned nothing."""
    floor = study.get("floor")
    if floor is None:
        return
    value = floor.get("value") if isinstance(floor, DictConfig) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(floor.get("rule"), str):
        raise ConfigError(where, "study.floor", "must be {value: <number>, rule: <where it comes from>}, e.g. "
                          f"{{value: 0.2, rule: \"chance over 5 classes\"}}, got {floor!r}")


def validate(cfg: DictConfig) -> list[Family]:
    """Check the study block, the run settings and every family file; return the families to run."""
    where = study_file()
    study = cfg.get("study")
    if not isinstance(study, DictConfig):
        raise ConfigError(where, "study", "missing: choose a study, e.g. study=sst5")
    known = {"name", "description", "figure", "dataset", "splits", "families", "metric", "direction", "reduced", "trials",
             "floor", "sequential"}
    if isinstance(study.get("study"), DictConfig):  # Hydra put the file's keys under study: its package line is missing
        raise ConfigError(where, "line 1", "a study file starts with `# @package _global_` (its keys are the run's "
                          "settings, as in conf/study/toy.yaml)")
    unknown = set(study) - known
    if unknown:
        raise ConfigError(where, f"study.{sorted(unknown)[0]}", f"unknown key (allowed: {', '.join(sorted(known))})")
    _check_plain_name(_require(cfg, "study.name", str, where), where, "study.name", "the study's folder under paths.results_dir")
    _require(cfg, "study.metric", str, where)
    _require(cfg, "study.dataset", DictConfig, where)
    families = _require(cfg, "study.families", DictConfig, where)
    if not families:
        raise ConfigError(where, "study.families", "a study needs at least one family")
    for name in families:
        _check_plain_name(str(name), where, "study.families", "the family's records file under the study's folder")
    if cfg.study.get("direction") not in ("max", "min"):
        raise ConfigError(where, "study.direction", f"must be max or min, got {cfg.study.get('direction')!r}")
    check_run_settings(cfg, where)
    _check_family_trials(study, families, where)
    _check_floor(study, where)
    if cfg.family is not None and cfg.family not in families:
        raise ConfigError(where, "family", f"unknown family {cfg.family!r} in study {cfg.study.name} (has: {', '.join(families)})")
    names = [cfg.family] if cfg.family is not None else list(families)
    dirs = family_dirs(cfg)
    out = []
    for name in names:
        try:
            out.append(load_family(str(families[name]), name=name, dirs=dirs))
        except ConfigError as err:
            if err.key == "family":  # the study names a file that does not exist
                raise ConfigError(where, f"study.families.{name}", err.problem) from None
            raise
    return out


def _number(cfg: DictConfig, key: str, where: str, *, integer: bool = False, low: float = 0, strict: bool = False) -> Any:
    value = OmegaConf.select(cfg, key, default=None)
    kind = int if integer else (int, float)
    if not isinstance(value, kind) or isinstance(value, bool) or value < low or (strict and value == low):
        what = "an integer" if integer else "a number"
        raise ConfigError(where, key, f"must be {what} {'>' if strict else '>='} {low:g}, got {value!r}")
    return value


def check_run_settings(cfg: DictConfig, where: str) -> None:
    """The top-level settings of conf/config.yaml as overridden: trials, seed, resources, ray, paths, flags."""
    _number(cfg, "trials", where, integer=True, low=1)
    _number(cfg, "seed", where, integer=True)  # numpy's seed sequences take non-negative integers
    _number(cfg, "resources.cpus_per_trial", where, strict=True)
    if OmegaConf.select(cfg, "resources.gpus_per_trial") != "auto":
        gpus = _number(cfg, "resources.gpus_per_trial", where)
        if gpus > 1 and gpus != int(gpus):  # Ray shares one GPU between trials or gives whole ones
            raise ConfigError(where, "resources.gpus_per_trial", f"must be auto, a fraction up to 1 or a whole number, got {gpus!r}")
    _number(cfg, "ray.verbose", where, integer=True)
    address = OmegaConf.select(cfg, "ray.address", default=None)
    if address is not None and not isinstance(address, str):
        raise ConfigError(where, "ray.address", f"must be null, local, auto or host:port, got {address!r}")
    strategy = cfg.get("strategy")
    if strategy is not None and strategy not in STRATEGIES:
        raise ConfigError(where, "strategy", f"must be null or one of {', '.join(STRATEGIES)}, got {strategy!r}")
    _number(cfg, "tuner.seed", where, integer=True)
    _number(cfg, "tuner.concurrency", where, integer=True, low=1)
    _number(cfg, "tuner.startup_trials", where, integer=True, low=1)  # a GP needs a trial to fit
    only = cfg.get("only")
    if only is not None and not _trial_indices(only):
        raise ConfigError(where, "only", f"must be null or a list of distinct trial indices >= 0, e.g. [3, 7], got {only!r}")
    for flag in ("dry_run", "retry_failed"):
        if not isinstance(cfg.get(flag), bool):
            raise ConfigError(where, flag, f"must be true or false, got {cfg.get(flag)!r}")
    for key in ("data_dir", "cache_dir", "results_dir"):
        value = OmegaConf.select(cfg, f"paths.{key}", default=None)
        if not isinstance(value, str) or not value:
            raise ConfigError(where, f"paths.{key}", f"must be a folder path, got {value!r}")
        if Path(value).exists() and not Path(value).is_dir():
            raise ConfigError(where, f"paths.{key}", f"{value} is a file, not a folder")
    dirs = OmegaConf.select(cfg, "paths.family_dirs", default=None)
    if not OmegaConf.is_list(dirs) and dirs is not None:
        raise ConfigError(where, "paths.family_dirs", f"must be a list of folders, got {dirs!r}")
    for folder in dirs or []:
        if not Path(str(folder)).is_dir():
            raise ConfigError(where, "paths.family_dirs", f"{folder} is not a folder")


def _trial_indices(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of distinct non-negative integers."""
    items = list(value) if OmegaConf.is_list(value) or isinstance(value, list) else []
    return bool(items) and len(set(items)) == len(items) and all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items)


def check_records_match(family: Family, seed: int, path: Path) -> None:
    """Refuse to add trials to a records file whose trials were drawn otherwise (another seed, an
    edited search space): resuming only runs the missing indices, so it would mix two searches.
    Settings a record does not have are not compared (a fixed setting added to a family later,
    whose default keeps what the older records ran)."""
    for record in iter_records(path):
        if record.get("params") is None:  # a crashed worker's record carries no assignment
            continue
        drawn = json.loads(json.dumps(family.params(seed, int(record["trial"])), default=str))
        differ = ", ".join(f"{key}={value!r} there, {drawn.get(key)!r} now"
                           for key, value in sorted(record["params"].items()) if drawn.get(key) != value)
        if differ:
            raise ConfigError(path, f"trial {record['trial']}", f"was run with seed {record.get('seed')} and "
                              f"{record.get('family_file')}; this run (seed {seed}, {family.file.name}) draws other "
                              f"hyperparameters ({differ}). Give this run its own paths.results_dir, or delete "
                              "the file to start over")


def check_assignment(family: Family, record: dict[str, Any], where: Path) -> None:
    """Refuse a record (of ``where``) to train again whose assignment is not one of ``family``'s: params null (a
    crashed worker's record), a searched key missing or outside its distribution, a fixed setting since changed."""
    trial = f"trial {record['trial']}"
    params = record.get("params")
    if not isinstance(params, dict):
        raise ConfigError(where, trial, "has no assignment to train again (params is null)")
    for key, spec in sorted(family.search.items()):
        if key not in params:
            raise ConfigError(where, trial, f"its assignment has no {key}, which {family.file.name} searches")
        try:
            within(params[key], spec)
        except ReplayError as err:
            raise ConfigError(where, trial, f"{key}={params[key]!r} is not in {family.file.name}'s search space ({err}); "
                              "the family file changed since this trial ran") from None
    moved = [k for k, v in family.fixed.items() if k in params and k not in family.search and params[k] != v]
    if moved:
        raise ConfigError(where, trial, f"ran with {moved[0]}={params[moved[0]]!r}, {family.file.name} now fixes "
                          f"{family.fixed[moved[0]]!r}")


def check_family_code(family: Family) -> None:
    """Check that a family's training function can be imported (:mod:`syw.experiments.imports`) and that the
    family file fits the ``SETTINGS`` its module declares (:func:`syw.experiments.source.declared_settings`). A dry
    run checks it too, so a ``_target_`` that cannot be imported is found before any trial. A suite module is read
    without running it when it defines the function (its libraries are the workers' to import); a user's module is
    imported here, so one that fails to import stops the study instead of failing every trial."""
    add_current_folder()
    if not family.train_target.startswith("syw."):
        _require_importable(family)
    if not defined_in_source(family.train_target):
        _require_importable(family)
    declared = declared_settings(family.train_target)
    if not isinstance(declared, dict):
        raise ConfigError(family.file, "train._target_", f"the module of {family.train_target} declares no SETTINGS "
                          "(the settings its training function reads; see syw/core/settings.py)")
    check_settings(family, declared)


def _require_importable(family: Family) -> None:
    """Import the training function as the trials will (Hydra's ``get_method``); when that fails, the one line says why."""
    from hydra.utils import get_method

    try:
        get_method(family.train_target)
    except Exception as err:  # noqa: BLE001 - diagnosed below, Hydra's own message as the last resort
        why = import_problem(family.train_target) or str(err).splitlines()[0]
        raise ConfigError(family.file, "train._target_", f"{family.train_target} cannot be imported: {why} "
                          f"(family {family.name!r})") from None
