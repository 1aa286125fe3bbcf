"""The settings check: family files against the SETTINGS their training functions declare."""
import sys

import pytest

from syw.core.errors import ConfigError
from syw.core.settings import check_settings, problem, resolve
from syw.experiments.source import declared_settings
from syw.experiments.space import load_family
from tests.support.runner_util import importable_package, run

DECLARED = {
    "epochs": {"type": "int", "min": 1},
    "dropout": {"type": "float", "min": 0.0, "max": 1.0},
    "optimizer": {"values": ["adam"]},
    "flag": {"type": "bool", "default": False},
    "size": {"type": "int", "min": 1, "null": True, "default": None},
    "pair": {"type": "list", "items": "int", "length": 2, "min": 1},
}


@pytest.mark.parametrize("value, spec, message", [
    (3, {"type": "int", "min": 1}, None),
    (0, {"type": "int", "min": 1}, "must be at least 1, got 0"),
    (2.5, {"type": "int"}, "must be an int, got 2.5"),
    (True, {"type": "int"}, "must be an int, got True"),
    (1, {"type": "float", "max": 1.0}, None),
    (float("nan"), {"type": "float"}, "must be finite"),
    ("adam", {"values": ["adam"]}, None),
    ("sgd", {"values": ["adam"]}, "must be one of 'adam', got 'sgd'"),
    (True, {"values": [1, 2]}, "must be one of 1, 2, got True"),
    (None, {"type": "int"}, "must not be null"),
    (None, {"type": "int", "null": True}, None),
    ([1, 2], {"type": "list", "items": "int", "length": 2, "min": 1}, None),
    ([0, 2], {"type": "list", "items": "int", "length": 2, "min": 1}, "items must be at least 1, got [0, 2]"),
    ([1, 2, 3], {"type": "list", "length": 2}, "must be a list of 2 items"),
    ("x", {"type": "bool"}, "must be a bool, got 'x'"),
])
def test_problem(value, spec, message):
    found = problem(value, spec)
    assert found is None if message is None else message in found


def family(tmp_path, text, name="fam"):
    (tmp_path / f"{name}.yaml").write_text("label: x\ntrain: {_target_: syw.models.toy.train}\n" + text)
    return load_family(name, dirs=[tmp_path])


@pytest.mark.parametrize("text, key, message", [
    ("fixed: {epochs: 3, patiense: 2, optimizer: adam, pair: [1, 2]}\nsearch: {dropout: {distribution: uniform, low: 0, high: 0.5}}",
     "patiense", "unknown setting: syw.models.toy.train does not read it"),
    ("fixed: {optimizer: adam, pair: [1, 2]}\nsearch: {dropout: {distribution: uniform, low: 0, high: 0.5}}",
     "epochs", "missing: syw.models.toy.train needs it (int >= 1)"),
    ("fixed: {epochs: 3.5, optimizer: adam, pair: [1, 2]}\nsearch: {dropout: {distribution: uniform, low: 0, high: 0.5}}",
     "fixed.epochs", "must be an int, got 3.5"),
    ("fixed: {epochs: 3, optimizer: adam, pair: [1, 2]}\nsearch: {dropout: {distribution: uniform, low: 0, high: 1.5}}",
     "search.dropout", "must be at most 1.0, but the distribution's high end is 1.5"),
    ("fixed: {epochs: 3, pair: [1, 2], dropout: 0.1}\nsearch: {optimizer: {distribution: choice, values: [adam, sgd]}}",
     "search.optimizer", "choice value must be one of 'adam', got 'sgd'"),
    ("fixed: {optimizer: adam, pair: [1, 2], dropout: 0.1}\nsearch: {epochs: {distribution: uniform, low: 1, high: 5}}",
     "search.epochs", "must be an int: a uniform distribution draws floats"),
    ("fixed: {epochs: 3, pair: [1, 2], dropout: 0.1}\nsearch: {optimizer: {distribution: uniform, low: 1, high: 5}}",
     "search.optimizer", "a uniform distribution cannot draw them"),
    ("fixed: {optimizer: adam, pair: [1, 2], dropout: 0.1}\nsearch: {epochs: {distribution: uniform_int, low: 0, high: 5}}",
     "search.epochs", "must be at least 1, but the distribution's low end is 0"),
])
def test_check_settings_names_file_and_key(tmp_path, text, key, message):
    with pytest.raises(ConfigError) as err:
        check_settings(family(tmp_path, text), DECLARED)
    assert err.value.path == tmp_path / "fam.yaml" and err.value.key == key and message in err.value.problem


def test_check_settings_accepts_a_good_family_and_exclusive_bounds(tmp_path):
    text = ("fixed: {optimizer: adam, pair: [1, 2], dropout: 0.1}\n"
            "search: {epochs: {distribution: uniform_int, low: 1, high: 2, exclusive_high: %s}}")
    good = family(tmp_path, text % "true")
    assert check_settings(good, DECLARED) is None  # accepted: it raises for a family it refuses
    for index in range(5):  # what it accepted is what the function reads: every draw resolves, defaults filled
        assert resolve(good.params(0, index), DECLARED) == {"optimizer": "adam", "pair": [1, 2], "dropout": 0.1,
                                                            "epochs": 1, "flag": False, "size": None}
    at_most_1 = {**DECLARED, "epochs": {"type": "int", "min": 1, "max": 1}}
    assert check_settings(good, at_most_1) is None  # the exclusive high end 2 is never drawn
    with pytest.raises(ConfigError, match="must be at most 1, but the distribution's high end is 2"):
        check_settings(family(tmp_path, text % "false", name="inclusive"), at_most_1)


def test_resolve_fills_defaults_and_rejects_bad_values():
    params = {"epochs": 2, "dropout": 0.5, "optimizer": "adam", "pair": [1, 3]}
    assert resolve(params, DECLARED) == {**params, "flag": False, "size": None}
    with pytest.raises(ValueError, match="unknown setting 'x'"):
        resolve({**params, "x": 1}, DECLARED)
    with pytest.raises(ValueError, match="missing setting 'epochs'"):
        resolve({k: v for k, v in params.items() if k != "epochs"}, DECLARED)
    with pytest.raises(ValueError, match="dropout must be at most 1.0, got 2"):
        resolve({**params, "dropout": 2}, DECLARED)


def test_declared_settings_read_from_source_without_importing(tmp_path):
    modules = {"base": "raise ImportError('not to be run')\nBASE = {'epochs': {'type': 'int'}}\n",
               "fam": "raise ImportError('not to be run')\nfrom pkg_settings.base import BASE\n"
                      "LOCAL = {'dropout': {'type': 'float'}}\n"
                      "SETTINGS = {**BASE, **LOCAL, 'epochs': {'type': 'int', 'min': 2}}\n"}
    with importable_package(tmp_path, "pkg_settings", modules):
        assert declared_settings("pkg_settings.fam.train") == {"epochs": {"type": "int", "min": 2}, "dropout": {"type": "float"}}
        assert "pkg_settings.fam" not in sys.modules and "pkg_settings.base" not in sys.modules


def test_every_suite_model_declares_literal_settings():
    from syw.models import cnn, logistic_regression, toy

    for module in (cnn, logistic_regression, toy):
        assert declared_settings(f"{module.__name__}.train") == module.SETTINGS


def _misspelled(tmp_path) -> list[str]:
    folder = tmp_path / "fam"
    folder.mkdir()
    (folder / "typo.yaml").write_text("inherits: sst5_cnn\nfixed:\n  patiense: 10\n")
    return [f"paths.family_dirs=[{folder}]", "study.families={cnn: typo}", f"paths.results_dir={tmp_path / 'results'}"]


@pytest.mark.parametrize("dry_run", [True, False])
def test_misspelled_fixed_key_exits_2_before_ray(tmp_path, dry_run):
    done = run("study=sst5", "trials=2", f"dry_run={str(dry_run).lower()}", *_misspelled(tmp_path), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {tmp_path / 'fam' / 'typo.yaml'}: patiense: unknown setting: syw.models.cnn.train does not "
                     f"read it (it reads: {', '.join(sorted(declared_settings('syw.models.cnn.train')))})"]
    assert "Ray ready" not in done.stdout and not (tmp_path / "results").exists()
