"""Search spaces: every shipped file validates; sampling is uniform and reproducible; bad files fail clearly."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from syw.core.errors import ConfigError
from syw.experiments.space import CONF_DIR, draw, load_family, sample, trial_rng
from tests.support import oracle

FAMILY_FILES = sorted(p.stem for p in (CONF_DIR / "search_space").glob("*/*.yaml"))
TABLES = {
    "sst5_cnn": 2, "sst5_lr": 3, "sst2_bcn_glove": 4, "sst2_bcn_elmo_frozen": 5, "sst2_bcn_elmo_finetuned": 6,
    "scitail_dam": 7, "scitail_esim": 8, "scitail_ngram": 9, "scitail_dgem": 10, "squad_bidaf": 11,
}


def test_every_appendix_table_has_a_file():
    assert set(TABLES) <= set(FAMILY_FILES)


@pytest.mark.parametrize("stem", FAMILY_FILES)
def test_shipped_family_loads_and_samples(stem):
    family = load_family(stem)
    assert family.table == TABLES.get(stem, family.table)
    if family.replay is not None:  # the authors' file, where the tests find it
        found = oracle.authors_file(family.replay.file.name)
        family = dataclasses.replace(family, replay=dataclasses.replace(family.replay, file=found))
    params = family.params(seed=0, index=0)
    assert set(family.search) <= set(params)
    if family.reported:  # the table's best assignment lies in its search space
        for key, best in family.reported.get("best_assignment", {}).items():
            spec = family.search[key]
            if spec["distribution"] == "choice":
                assert best in spec["values"], key
            elif not (stem == "squad_bidaf" and key == "num_character_filters"):  # printed 33, outside [64, 512]
                assert spec["low"] <= best <= spec["high"], key


def test_table_readings():
    lr = load_family("sst5_lr")
    assert lr.search["tol"] == {"distribution": "loguniform", "low": 1e-4, "high": 1e-2}
    assert lr.search["C"]["distribution"] == "uniform" and (lr.search["C"]["low"], lr.search["C"]["high"]) == (0.0, 1.0)
    bidaf = load_family("squad_bidaf")
    for beta in ("adam_beta1", "adam_beta2"):
        assert bidaf.search[beta] == {"distribution": "uniform", "low": 0.9, "high": 1.0}
    cnn = load_family("sst5_cnn")
    assert cnn.search["lr"]["distribution"] == "loguniform" and cnn.fixed["projection_dim"] is None


def test_same_seed_family_index_same_assignment():
    family = load_family("sst5_cnn", name="cnn")
    first = [family.params(3, i) for i in range(20)]
    # any order, any number of times (concurrency and resume cannot change an assignment)
    assert [family.params(3, i) for i in reversed(range(20))][::-1] == first
    assert family.params(4, 0) != first[0]
    assert load_family("sst5_cnn", name="other").params(3, 0) != first[0]


def test_loguniform_is_uniform_in_log_space():
    spec = {"distribution": "loguniform", "low": 1e-6, "high": 1e-1}
    draws = np.log10([draw(spec, trial_rng(0, "f", i)) for i in range(4000)])
    assert stats.kstest(draws, stats.uniform(loc=-6, scale=5).cdf).pvalue > 0.01
    assert stats.kstest(10**draws, stats.uniform(loc=1e-6, scale=0.1).cdf).pvalue < 1e-6  # and not uniform


def test_uniform_int_reaches_both_bounds_unless_exclusive():
    spec = {"distribution": "uniform_int", "low": 3, "high": 6}
    values = [draw(spec, trial_rng(0, "f", i)) for i in range(2000)]
    assert set(values) == {3, 4, 5, 6}
    counts = np.bincount(values)[3:]
    assert stats.chisquare(counts).pvalue > 0.01
    excl = [draw({**spec, "exclusive_high": True}, trial_rng(0, "f", i)) for i in range(2000)]
    assert set(excl) == {3, 4, 5}


def test_as_run_space_never_draws_excluded_bound():
    family = load_family("sst5_cnn_as_run", name="cnn")
    draws = [family.params(0, i) for i in range(3000)]
    assert max(d["max_filter_size"] for d in draws) == 5 and min(d["max_filter_size"] for d in draws) == 3
    assert max(d["num_filters"] for d in draws) == 511
    assert max(d["projection_dim"] for d in draws) == 511 and all(d["projection_dim"] >= 64 for d in draws)
    assert family.fixed["scheduler_mode"] == "min" and family.fixed["vocabulary"] == "train_dev_test"
    lrs = np.array([d["lr"] for d in draws])
    assert stats.kstest(lrs, stats.uniform(loc=1e-6, scale=0.1 - 1e-6).cdf).pvalue > 0.01  # uniform, not log


def test_choice_frequencies_uniform():
    spec = {"distribution": "choice", "values": ["tf", "tfidf", "binary"]}
    values = [draw(spec, trial_rng(1, "lr", i)) for i in range(3000)]
    _, counts = np.unique(values, return_counts=True)
    assert stats.chisquare(counts).pvalue > 0.01


def test_sample_order_independent_of_yaml_order():
    a = {"x": {"distribution": "uniform", "low": 0, "high": 1}, "y": {"distribution": "uniform", "low": 0, "high": 1}}
    b = dict(reversed(list(a.items())))
    assert sample(a, trial_rng(0, "f", 0)) == sample(b, trial_rng(0, "f", 0))


BAD = {
    "unknown_distribution": ("x: {distribution: gaussian, low: 0, high: 1}", "search.x.distribution", "unknown distribution"),
    "low_above_high": ("x: {distribution: uniform, low: 2, high: 1}", "search.x", "above high"),
    "loguniform_nonpositive": ("x: {distribution: loguniform, low: 0.0, high: 1.0}", "search.x.low", "low > 0"),
    "empty_choice": ("x: {distribution: choice, values: []}", "search.x.values", "non-empty"),
    "mistyped_key": ("x: {distribution: uniform, low: 0, hihg: 1}", "search.x.hihg", "unknown key"),
    "missing_key": ("x: {distribution: uniform, low: 0}", "search.x.high", "missing"),
    "int_bounds": ("x: {distribution: uniform_int, low: 0.5, high: 3}", "search.x.low", "integer"),
}


def write_family(folder: Path, name: str, search_block: str, extra: str = "") -> Path:
    path = folder / f"{name}.yaml"
    indented = "\n".join("  " + line for line in search_block.splitlines())
    path.write_text(f"label: Bad\ntrain: {{_target_: syw.models.toy.train}}\n{extra}search:\n{indented}\n")
    return path


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_family_files(tmp_path, case):
    block, key, words = BAD[case]
    path = write_family(tmp_path, f"bad_{case}", block)
    with pytest.raises(ConfigError) as info:
        load_family(path.stem, dirs=[tmp_path])
    assert info.value.key == key and words in info.value.problem
    assert str(path) in str(info.value)


def test_bad_top_level_and_inherits(tmp_path):
    path = write_family(tmp_path, "typo", "x: {distribution: uniform, low: 0, high: 1}", extra="fixd: {a: 1}\n")
    with pytest.raises(ConfigError, match="fixd: unknown key"):
        load_family(path.stem, dirs=[tmp_path])
    (tmp_path / "child.yaml").write_text("inherits: nowhere\nlabel: c\n")
    with pytest.raises(ConfigError, match="inherits: no family file nowhere.yaml"):
        load_family("child", dirs=[tmp_path])
    (tmp_path / "notrain.yaml").write_text("label: x\nsearch: {x: {distribution: uniform, low: 0, high: 1}}\n")
    with pytest.raises(ConfigError, match="train._target_"):
        load_family("notrain", dirs=[tmp_path])


def test_the_learning_curve_family_is_squad_reduced_trial_9():
    best, space = load_family("squad_bidaf_reduced_best"), load_family("squad_bidaf_reduced", name="bidaf")
    assert set(best.search) == set(space.search) and all(s["distribution"] == "constant" for s in best.search.values())
    assert best.params(0, 0) == best.params(0, 5) == space.params(0, 9)  # seed 0, family bidaf, trial 9


def test_family_files_sit_one_folder_per_case_study_with_unique_stems():
    folders = {p.parent.name for p in (CONF_DIR / "search_space").glob("*/*.yaml")}
    assert folders == {"ptb", "scitail", "squad", "sst2", "sst5", "toy"}
    assert not list((CONF_DIR / "search_space").glob("*.yaml"))  # none left flat
    assert len(FAMILY_FILES) == len(set(FAMILY_FILES)) == 54
    assert load_family("sst5_cnn").file == CONF_DIR / "search_space" / "sst5" / "sst5_cnn.yaml"


def test_a_user_family_folder_is_searched_with_its_subfolders(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_lr.yaml").write_text((CONF_DIR / "search_space" / "sst5" / "sst5_lr.yaml").read_text())
    assert load_family("my_lr", dirs=[tmp_path]).file == tmp_path / "mine" / "my_lr.yaml"
