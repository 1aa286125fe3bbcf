"""``make verdicts`` (syw.figures.verdicts): each claim's numbers traced to the records by an independent reading
(tests/oracle.py), the verdict by the stated rule, and the reasons a study cannot test a claim."""
from __future__ import annotations

import json

import pytest

from syw.entry import run_main
from syw.figures import verdicts
from syw.figures.specs import FIGURES
from tests import oracle
from tests.fake_records import write_study


def scores_of(results, study: str, family: str) -> list[float]:
    return [json.loads(line)["value"] for line in (results / study / f"{family}.jsonl").read_text().splitlines()]


def first_overtaking(leader: list[float], other: list[float], n_max: int) -> int | None:
    """The first n at which ``other``'s Eq. 8 exceeds ``leader``'s, by oracle.eq8."""
    return next((n for n in range(1, n_max + 1) if oracle.eq8(other, n) > oracle.eq8(leader, n)), None)


def test_our_records_give_the_numbers_and_verdicts_by_the_rule(tmp_path, monkeypatch):
    results = tmp_path / "results"
    write_study(results, "sst5", {"lr": (0.37, 0.01, 2.0), "cnn": (0.33, 0.06, 40.0)}, n=50, seed=3)
    write_study(results, "sst2_bcn_reduced_7_epochs", {"glove": (0.80, 0.01, 100), "elmo_frozen": (0.7, 0.02, 300),
                                                       "elmo_finetuned": (0.81, 0.02, 600)}, n=10)
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    lr, cnn = scores_of(results, "sst5", "lr"), scores_of(results, "sst5", "cnn")
    reach = oracle.first_reaching(cnn, 0.395, 50)
    rounded = oracle.first_reaching(cnn, 0.395, 50, decimals=3)
    row = next(line for line in text.splitlines() if line.startswith("| the CNN needs 16 trials to reach 0.395 |"))
    assert f"sst5: CNN: n = {reach} ({rounded} at 3 decimals" in row
    expected = "supports" if 16 / 1.5 <= reach <= 24 or 16 / 1.5 <= rounded <= 24 else "contradicts"
    assert row.endswith(f"sst5: {expected}<br>sst5_as_run: cannot be tested here (data: no records in results/sst5_as_run) |")
    assert "| not on this machine |" in row
    crossing = first_overtaking(lr, cnn, 50)
    row = next(line for line in text.splitlines() if line.startswith("| LR is better up to about 10 trials |"))
    assert oracle.eq8(lr, 1) > oracle.eq8(cnn, 1) and crossing is not None
    assert f"sst5: CNN overtakes LR at n = {crossing}" in row
    assert f"sst5: {'supports' if 5 <= crossing <= 20 else 'contradicts'}<br>" in row
    assert "- sst5: Mean curves, CNN vs LR (n = 1 to 50): " in text  # the difference band's sentence
    row = next(line for line in text.splitlines() if line.startswith("| GloVe is best below about 2 hours |"))
    assert "sst2_bcn_reduced_7_epochs: cannot be tested here (scale: SST-2 sentences (not phrases), 7 epochs" in row
    assert "sst2_bcn: cannot be tested here (data: no records in results/sst2_bcn)" in row
    assert "## Section 5 case study (Melis et al. 2018)" in text and "No records yet" in text


@pytest.mark.paperdata
def test_the_authors_trials_support_the_claims_with_these_numbers(tmp_path):
    text = verdicts.build(tmp_path / "no_results")
    trials = oracle.authors_trials(FIGURES[1].paper)
    lr, cnn = trials["lr"]["scores"], trials["cnn"]["scores"]
    reach, rounded = oracle.first_reaching(cnn, 0.395, 50), oracle.first_reaching(cnn, 0.395, 50, decimals=3)
    assert (reach, rounded) == (17, 17)  # the paper's text says 16
    assert f"| CNN: n = {reach} ({rounded} at 3 decimals" in text
    assert f"| CNN overtakes LR at n = {first_overtaking(lr, cnn, 50)}; supports |" in text
    bidaf = oracle.authors_trials(FIGURES[4].paper)["bidaf"]["scores"]
    exact, rounded = oracle.first_reaching(bidaf, 0.677, 128), oracle.first_reaching(bidaf, 0.677, 128, decimals=3)
    assert f"BiDAF: n = {exact} ({rounded} at 3 decimals" in text
    scitail = oracle.authors_trials(FIGURES[3].paper)
    needs = {f: oracle.first_reaching(scitail[f]["scores"], ref, 100, decimals=3) for f, ref in FIGURES[3].references.items()}
    assert (needs["ngram"], needs["dgem"]) == (2, 20)  # the paper: from 2 (n-gram) to 20 (DGEM)
    assert f"n-gram baseline {needs['ngram']}, DAM {needs['dam']}, ESIM {needs['esim']}, DGEM {needs['dgem']} (3 decimals); supports" in text
    for claim in ("GloVe is best below about 2 hours", "ELMo frozen is best between about 6 hours and 1 day",
                  "ELMo fine-tuned is best beyond"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {claim} |"))
        assert row.split(" | ")[1].endswith("supports")


def test_main_writes_the_file_and_a_bad_folder_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    assert verdicts.main(["--results", str(tmp_path / "r"), "--out", str(tmp_path / "v.md")]) == 0
    assert (tmp_path / "v.md").read_text().startswith("# What the records say about the paper's claims")
    assert run_main(verdicts.main, ["--results", str(tmp_path / "r"), "--out", str(tmp_path / "missing" / "v.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path}/missing/v.md: cannot write") and len(err.strip().splitlines()) == 1
