"""Figure 1's as-run variant and its comparison (figures/as_run.py): the reported and as-run CNNs, the
random-batch and replay studies when they have records, and the authors' 50 trials wherever their file
is at hand."""
import json

import numpy as np
import pandas as pd
import pytest

from syw.core.errors import DataMissingError
from syw.figures import sources
from syw.figures.__main__ import main
from syw.figures.specs import FIGURES
from tests.support.fake_records import spec_for_paper_file, write_paper_file, write_records, write_study

FLOOR = 0.2  # conf/study/sst5*.yaml: study.floor


@pytest.fixture
def records(tmp_path):
    """Figure 1's study, sst5: the reported search space's LR and CNN."""
    write_study(tmp_path / "results", "sst5", {"lr": (0.34, 0.03, 1.5), "cnn": (0.29, 0.06, 40)})
    return tmp_path / "results"


def test_fig1_as_run_variant_and_comparison(records, tmp_path, monkeypatch):
    from syw.figures import as_run

    monkeypatch.setattr(as_run.compare_fig1, "__defaults__", (tmp_path / "no_paper_files",))
    monkeypatch.delenv("SYW_DATA_DIR", raising=False)
    monkeypatch.setattr(sources, "fetch", offline)
    write_study(records, "sst5_as_run", {"lr": (0.34, 0.03, 1.5), "cnn": (0.27, 0.05, 40)}, seed=3)
    set_learning_rates(records / "sst5_as_run" / "cnn.jsonl")
    out = tmp_path / "o"
    assert main(["fig1", "--variant", "as_run", "--results", str(records), "--out", str(out)]) == 0
    assert (out / "fig1_as_run.png").is_file() and (out / "fig1_reported_vs_as_run.png").is_file()
    assert not (out / "fig1.png").exists()  # the reported-space figure is not overwritten
    text = (out / "fig1_reported_vs_as_run.md").read_text()
    as_run = pd.read_json(records / "sst5_as_run" / "cnn.jsonl", lines=True)
    row = next(l for l in text.splitlines() if l.startswith("| CNN, space as run, sorted batches | 50 |"))
    # expected max at n = 1 is the mean, a score below SST-5's floor (chance over 5 classes: study.floor) counted at it
    assert row.split(" | ")[2] == f"{as_run.value.clip(lower=FLOOR).mean():.4f}"
    assert "the authors' file was not present" in text and "## Trials per learning-rate bin" in text
    assert "random batches" not in text

    write_study(records, "sst5_as_run_random", {"lr": (0.34, 0.03, 1.5), "cnn": (0.28, 0.05, 40)}, seed=4)
    random = set_learning_rates(records / "sst5_as_run_random" / "cnn.jsonl")
    assert main(["fig1", "--variant", "as_run", "--results", str(records), "--out", str(out)]) == 0
    text = (out / "fig1_reported_vs_as_run.md").read_text()
    row = next(l for l in text.splitlines() if l.startswith("| CNN, space as run, random batches | 50 |"))
    assert row.split(" | ")[2] == f"{random.value.clip(lower=FLOOR).mean():.4f}"
    diff = (random.sort_values("trial").value.to_numpy() - as_run.sort_values("trial").value.to_numpy())
    paired = text.split("## Sorted vs random batches, trial by trial")[1]
    assert f"higher in {(diff > 0).sum()}, lower in {(diff < 0).sum()}" in paired
    assert f"mean {diff.mean():+.4f}" in paired
    assert "| ours: trials | ours: mean | ours: max | ours, random batches: trials |" in text


def offline(url, dest, **_):
    raise DataMissingError(f"could not download {url}")


def test_as_run_comparison_reads_the_authors_file_from_the_data_folder(records, tmp_path, monkeypatch):
    """A clone without results/paper/ but with the data folder beside it compares with the authors' trials."""
    from syw.figures.as_run import compare_fig1

    shared = write_paper_file(tmp_path / "data" / sources.AUTHORS_SUBDIR, 1)
    monkeypatch.setitem(FIGURES, 1, spec_for_paper_file(1, shared))
    monkeypatch.setenv("SYW_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(sources, "fetch", offline)
    write_study(records, "sst5_as_run", {"lr": (0.34, 0.03, 1.5), "cnn": (0.27, 0.05, 40)}, seed=3)
    set_learning_rates(records / "sst5_as_run" / "cnn.jsonl")
    text = compare_fig1(records, tmp_path / "o", paper_dir=tmp_path / "no_paper_files")[-1].read_text()
    assert "| CNN, the authors' 50 trials | 50 |" in text and "was not present" not in text


def set_learning_rates(path):
    """Give generated CNN records learning rates 0.002, 0.004, ... (trial order); return them."""
    rows = [json.loads(l) for l in path.read_text().splitlines()]
    write_records(path, [{**r, "params": {"lr": 0.002 * (i + 1)}} for i, r in enumerate(rows)])
    return pd.read_json(path, lines=True)


def test_as_run_comparison_against_the_authors_file(records, tmp_path, monkeypatch):
    from syw.figures.as_run import compare_fig1

    folder = tmp_path / "paper"
    path = write_paper_file(folder, 1)
    spec = spec_for_paper_file(1, path)
    monkeypatch.setitem(FIGURES, 1, spec)
    write_study(records, "sst5_as_run", {"lr": (0.34, 0.03, 1.5), "cnn": (0.27, 0.05, 40)}, seed=3)
    set_learning_rates(records / "sst5_as_run" / "cnn.jsonl")
    paths = compare_fig1(records, tmp_path / "o", paper_dir=folder)
    text = paths[-1].read_text()
    assert "| CNN, the authors' 50 trials | 50 |" in text
    assert "CNN, space as run, sorted batches: differences in expected max (ours - theirs)" in text
    bins = text.split("## Trials per learning-rate bin")[1]
    assert "| (0, 0.005] | 2 |" in bins  # lr 0.002 and 0.004
    assert "| (0.05, inf] | 25 |" in bins  # lr 0.052 .. 0.1
    assert sum(int(l.split(" | ")[4]) for l in bins.splitlines() if l.startswith("| (")) == 50  # all authors' rows
    assert "the authors' assignments" not in text

    # our LR and CNN rerun on the authors' assignments: paired with their rows, trial i with their i-th row
    write_study(records, "sst5_as_run_replay", {"lr": (0.5, 0.08, 1.5), "cnn": (0.55, 0.08, 40)}, seed=5)
    set_learning_rates(records / "sst5_as_run_replay" / "cnn.jsonl")
    text = compare_fig1(records, tmp_path / "o", paper_dir=folder)[-1].read_text()
    assert "| CNN, space as run, the authors' assignments | 50 |" in text and "| LR, the authors' assignments | 50 |" in text
    assert "| CNN, space as run, the authors' assignments | LR, the authors' assignments |" in text
    frame = pd.read_csv(path, sep="\t")
    for family, title in (("CNN", "Our CNN against theirs"), ("LR", "Our LR against theirs")):
        theirs = frame[frame[spec.paper.group_column] == family][spec.paper.metric_column].to_numpy()
        ours = pd.read_json(records / "sst5_as_run_replay" / f"{family.lower()}.jsonl", lines=True).sort_values("trial").value.to_numpy()
        diff = ours - theirs
        section = text.split(f"## {title} on the same assignments")[1].split("##")[0]
        assert f"higher in {(diff > 0).sum()}, lower in {(diff < 0).sum()}" in section
        assert f"mean {diff.mean():+.4f}" in section and f"correlation {np.corrcoef(theirs, ours)[0, 1]:.3f}" in section
