"""Replayed assignments: rows of a trial file become assignments inside the family's space, or fail clearly."""
import csv
import dataclasses
import hashlib
from pathlib import Path

import pytest

from syw.core.errors import ConfigError, DataMissingError
from syw.experiments.replay import read_cell
from syw.experiments.space import load_family
from syw.figures.specs import FIGURES
from tests.support import oracle

HEADER = "kind\tlearning_rate\tsizes\tfilters\tstop\tweighting\n"
ROWS = [
    "CNN\t0.05\t[1, 2, 3]\t64.0\t\ttf-idf\n",
    "LR\t0.9\t[1, 3]\t\tenglish\ttf\n",
    "CNN\t1e-05\t[1, 2, 3, 4, 5]\t511.0\tenglish\tbinary\n",
]


def write_case(folder: Path, rows=ROWS, sha256: str | None = None, extra_columns: str = "") -> str:
    (folder / "trials.tsv").write_text(HEADER + "".join(rows))
    digest = f'  sha256: "{sha256}"\n' if sha256 else ""
    (folder / "fam.yaml").write_text(f"""label: Replayed
train: {{_target_: syw.models.toy.train}}
search:
  lr: {{distribution: uniform, low: 1.0e-6, high: 0.1}}
  max_filter_size: {{distribution: uniform_int, low: 3, high: 6, exclusive_high: true}}
  num_filters: {{distribution: uniform_int, low: 64, high: 512, exclusive_high: true}}
  stopwords: {{distribution: choice, values: [true, false]}}
  weight: {{distribution: choice, values: [tf, tfidf, binary]}}
replay:
  file: {folder / 'trials.tsv'}
{digest}  rows: {{kind: CNN}}
  columns:
    lr: learning_rate
    max_filter_size: {{column: sizes, reduce: max}}
    num_filters: filters
    stopwords: {{column: stop, values: {{english: true, "": false}}}}
    weight: {{column: weighting, values: {{tf-idf: tfidf}}}}
{extra_columns}""")
    return "fam"


def test_rows_become_typed_assignments_in_file_order(tmp_path):
    family = load_family(write_case(tmp_path), dirs=[tmp_path])
    first, second = family.params(0, 0), family.params(0, 1)
    assert first == {"lr": 0.05, "max_filter_size": 3, "num_filters": 64, "stopwords": False, "weight": "tfidf"}
    assert second == {"lr": 1e-05, "max_filter_size": 5, "num_filters": 511, "stopwords": True, "weight": "binary"}
    assert type(first["num_filters"]) is int and type(second["lr"]) is float
    assert family.params(7, 1) == second  # the study seed does not change a replayed assignment


def test_cells():
    assert read_cell("1e-05") == 1e-05 and read_cell("[1, 3]") == [1, 3] and read_cell("") is None
    assert read_cell("tf-idf") == "tf-idf" and read_cell("64.0") == 64.0


@pytest.mark.parametrize("row, words", [
    ("CNN\t0.2\t[1, 2, 3]\t64.0\t\ttf\n", "0.2 is outside [1e-06, 0.1]"),
    ("CNN\t0.05\t[1, 2, 3, 4, 5, 6]\t64.0\t\ttf\n", "6 is outside [3, 6)"),
    ("CNN\t0.05\t[1, 2, 3]\t512.0\t\ttf\n", "512 is outside [64, 512)"),
    ("CNN\t0.05\t[1, 2, 3]\t64.5\t\ttf\n", "64.5 is not an integer"),
    ("CNN\t0.05\t[1, 2, 3]\t64.0\tgerman\ttf\n", "'german' is not one of [True, False]"),
    ("CNN\t0.05\t3\t64.0\t\ttf\n", "reduce max needs a non-empty list"),
])
def test_a_row_outside_the_space_is_refused_with_its_row(tmp_path, row, words):
    family = load_family(write_case(tmp_path, rows=[ROWS[0], row]), dirs=[tmp_path])
    family.params(0, 0)
    with pytest.raises(ConfigError) as info:
        family.params(0, 1)
    assert info.value.key == "replay" and words in info.value.problem and "row 1" in info.value.problem


def test_too_few_rows(tmp_path):
    family = load_family(write_case(tmp_path), dirs=[tmp_path])
    with pytest.raises(ConfigError, match="trial 2 asked for, but only 2 rows match"):
        family.params(0, 2)


def test_every_searched_key_needs_a_column(tmp_path):
    write_case(tmp_path, extra_columns="    dropout: model.dropout\n")
    with pytest.raises(ConfigError, match=r"not searched \['dropout'\]"):
        load_family("fam", dirs=[tmp_path])
    text = (tmp_path / "fam.yaml").read_text().replace("    dropout: model.dropout\n", "").replace("    num_filters: filters\n", "")
    (tmp_path / "fam.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"missing \['num_filters'\]"):
        load_family("fam", dirs=[tmp_path])


def test_checksum_and_missing_file(tmp_path):
    write_case(tmp_path)
    (tmp_path / "fam.yaml").write_text((tmp_path / "fam.yaml").read_text().replace("  rows:", "  sha256: 0\n  rows:"))
    with pytest.raises(ConfigError, match="sha256: must be text"):
        load_family("fam", dirs=[tmp_path])
    family = load_family(write_case(tmp_path, sha256="0" * 64), dirs=[tmp_path])
    with pytest.raises(ConfigError, match="has sha256 .* expected 0000"):
        family.params(0, 0)
    good = hashlib.sha256((HEADER + "".join(ROWS)).encode()).hexdigest()
    assert load_family(write_case(tmp_path, sha256=good), dirs=[tmp_path]).params(0, 0)["lr"] == 0.05
    (tmp_path / "trials.tsv").unlink()
    with pytest.raises(DataMissingError, match="trials.tsv is missing"):
        load_family("fam", dirs=[tmp_path]).params(0, 0)


def located(stem: str, name: str, path: Path):
    """The family ``stem`` replaying the authors' file found at ``path`` (where the tests find it)."""
    family = load_family(stem, name=name)
    return dataclasses.replace(family, replay=dataclasses.replace(family.replay, file=path))


@pytest.mark.paperdata
def test_the_authors_fig1_assignments_replay_inside_the_as_run_space():
    """Each replayed assignment is its row of the authors' file, read here with the csv module."""
    path = oracle.authors_path(FIGURES[1].paper)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    cnn_rows = [r for r in rows if r["model.encoder.architecture.type"] == "CNN"]
    lr_rows = [r for r in rows if r["model.encoder.architecture.type"] == "LR"]
    cnn = located("sst5_cnn_as_run_replay", "cnn", path)
    cnn_params = [cnn.params(0, i) for i in range(50)]
    assert [p["lr"] for p in cnn_params] == [float(r["trainer.optimizer.lr"]) for r in cnn_rows]
    assert [p["dropout"] for p in cnn_params] == [float(r["model.dropout"]) for r in cnn_rows]
    # their filter widths are the lists 1..max_filter_size ("[1, 2, 3]")
    assert [p["max_filter_size"] for p in cnn_params] == [len(r["model.encoder.architecture.ngram_filter_sizes"].split(","))
                                                          for r in cnn_rows]
    assert {p["dropout"] for p in cnn_params} == {0.0, 0.1, 0.2, 0.3, 0.4}  # the file's values, as the family notes
    assert cnn_params[0]["scheduler_mode"] == "min" and cnn_params[0]["vocabulary"] == "train_dev_test"
    lr = located("sst5_lr_replay", "lr", path)
    lr_params = [lr.params(0, i) for i in range(50)]
    assert [p["stopwords"] for p in lr_params] == [r["stopwords"] == "english" for r in lr_rows]
    assert [p["weight"] for p in lr_params] == [r["weight"].replace("tf-idf", "tfidf") for r in lr_rows]
    assert [p["C"] for p in lr_params] == [float(r["C"]) for r in lr_rows]
    with pytest.raises(ConfigError, match="only 50 rows"):
        cnn.params(0, 50)
