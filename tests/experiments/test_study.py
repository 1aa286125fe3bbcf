"""A study as the figures and pages read it (syw.experiments.study): what conf/study/<name>.yaml states, read once."""
import dataclasses

import pytest
import yaml

from syw.analysis.floors import Floor
from syw.core.paths import CONF_DIR
from syw.experiments.space import study_config
from syw.experiments.study import load_study


def stated(name: str) -> dict:
    """The YAML file as written, read apart from the suite's own reader."""
    return yaml.safe_load((CONF_DIR / "study" / f"{name}.yaml").read_text())


def test_sst5_is_what_its_file_states():
    raw = stated("sst5")
    study = load_study("sst5")
    assert study.name == "sst5" and study.description == raw["study"]["description"]
    assert dict(study.families) == raw["study"]["families"] == {"lr": "sst5_lr", "cnn": "sst5_cnn"}
    assert list(study.families) == ["lr", "cnn"]  # the config's order
    assert study.floor == Floor(raw["study"]["floor"]["value"], raw["study"]["floor"]["rule"]) and study.floor.value == 0.2
    assert study.maximize is (raw["study"]["direction"] == "max") is True
    assert study.trials == raw["trials"] == 50
    assert study.metric == "accuracy" and study.figure == 1 and study.reduced is None and study.sequential is None
    assert dict(study.dataset) == raw["study"]["dataset"] and study.splits == raw["study"]["splits"]
    assert study.family("cnn").name == "cnn" and study.family("cnn").label


def test_a_study_that_minimizes_with_a_reduced_scale():
    raw = stated("ptb_melis_reduced")
    study = load_study("ptb_melis_reduced")
    assert study.maximize is False and study.floor.value == 10000 and study.trials == raw["trials"] == 20
    assert study.reduced == raw["study"]["reduced"] and study.reduced.startswith("REDUCED")
    assert list(study.families) == list(raw["study"]["families"])


def test_no_floor_and_a_sequential_rule():
    raw = stated("sst5_sequential")
    study = load_study("sst5_sequential")
    assert study.floor is None and "floor" not in raw["study"]
    assert study.sequential["looks"] == tuple(raw["study"]["sequential"]["looks"])
    assert study.sequential["compare"] == tuple(raw["study"]["sequential"]["compare"])


def test_a_missing_study_raises_what_study_config_raises():
    with pytest.raises(FileNotFoundError) as expected:
        study_config("no_such_study")
    with pytest.raises(FileNotFoundError, match=r"there is no study 'no_such_study' \(no syw/conf/study/no_such_study.yaml\)") as got:
        load_study("no_such_study")
    assert str(got.value) == str(expected.value)


def test_frozen_and_read_once():
    study = load_study("sst5")
    assert load_study("sst5") is study
    with pytest.raises(dataclasses.FrozenInstanceError):
        study.trials = 3
    with pytest.raises(TypeError):
        study.families["lr"] = "other"
    with pytest.raises(TypeError):
        load_study("sst5_sequential").sequential["looks"] = (1,)
    assert load_study("sst5").families["lr"] == "sst5_lr"


def test_an_edited_config_is_read_anew(tmp_path, monkeypatch):
    from syw.experiments import space

    folder = tmp_path / "study"
    folder.mkdir()
    path = folder / "mine.yaml"
    path.write_text("study: {name: mine, families: {a: toy_a}, metric: accuracy}\ntrials: 3\n")
    monkeypatch.setattr(space, "CONF_DIR", tmp_path)
    monkeypatch.setattr(space, "REPO", tmp_path)
    first = load_study("mine")
    assert first.trials == 3 and first.maximize and first.floor is None and dict(first.dataset) == {}
    path.write_text("study: {name: mine, families: {a: toy_a}, metric: loss, direction: min}\ntrials: 12\n")
    second = load_study("mine")
    assert second is not first and second.trials == 12 and not second.maximize and second.metric == "loss"
