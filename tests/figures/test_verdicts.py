"""``make verdicts`` (syw.pages.verdicts): each claim's numbers traced to the records by an independent reading
(tests/support/oracle.py), the verdict by the stated rule, and the reasons a study cannot test a claim."""
from __future__ import annotations

import json

import pytest

from syw.core.entry import run_main
from syw.figures.specs import FIGURES
from syw.pages import verdicts, verdicts_melis
from tests.figures import test_fig5
from tests.support import oracle
from tests.support.fake_records import write_study


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
    assert "- sst5: Mean curves, CNN vs LR (n = 1 to 50, simultaneous claims): " in text  # the comparison's sentence
    assert "Beyond n = 9 these trials allow no claim without assumptions" in text  # N = 50: the limit is 9
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
    scitail = oracle.authors_trials(FIGURES[3].paper, oracle.study_floor(FIGURES[3].study))
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


# Section 5 (case study 5, Melis et al. 2018) on records in the runner's layout: random search in <family>.jsonl, the
# GP tuner's runs in gp/<family>.tuner_seed<k>.jsonl (tests/figures/test_fig5.py's writer), seed reruns in reseed/<source>.jsonl.
LSTM, GP_RUNS = test_fig5.LSTM, test_fig5.GP_RUNS  # LSTM's ok trials 130, 100, 160, 110 (N = 4); GP means 143.33, 103.33, ...
REDUCED_SCALE = "cannot be tested here (scale: 2M weights (paper 10M), 2 epochs; LSTM and NAS depth 1, RHN depth 5): " \
                "evidence from a reduced study"


def eq8_min(scores, n: int) -> float:
    """Eq. 8 with direction min: the expected minimum of n draws, minus the expected maximum of the negated scores."""
    return -oracle.eq8([-s for s in scores if s is not None], n)


def write_cells(results, study: str, cells: dict[str, list]) -> None:
    for family, values in cells.items():
        test_fig5.write_family(results / study, family, values, 60.0)


def write_reruns(results, study: str, reruns: dict[str, tuple[int, float, list[float]]]) -> None:
    """reseed/<family>.jsonl: the family's best trial (index, original value) rerun with the given values."""
    folder = results / study / "reseed"
    folder.mkdir(parents=True, exist_ok=True)
    for family, (trial, original, values) in reruns.items():
        (folder / f"{family}.jsonl").write_text("".join(json.dumps({
            "trial": trial, "rerun": j, "status": "ok", "value": v, "source_value": original, "family": family,
            "direction": "min", "strategy": "random", "tuner_seed": 0, "params": {}}) + "\n" for j, v in enumerate(values)))


def melis_row(text: str, number: int) -> list[str]:
    """Section 5's row of question ``number`` (1-4): its question, evidence and verdict cells."""
    line = next(line for line in text.split("## Section 5")[1].splitlines() if line.startswith(f"| {verdicts_melis.QUESTIONS[number - 1]} |"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def full_study(results, nas_gap: float) -> None:
    """ptb_melis with both budgets: the 24M cells are the 10M cells 5 lower; NAS is LSTM's trials plus ``nas_gap``."""
    ok = [v for v in LSTM if v is not None]
    for suffix, shift in (("", 0.0), ("_24m", -5.0)):
        write_cells(results, "ptb_melis", {f"lstm{suffix}": [v + shift if v is not None else None for v in LSTM],
                                           f"rhn{suffix}": [v + 50 + shift for v in ok], f"nas{suffix}": [v + nas_gap + shift for v in ok]})


def test_section5_lstm_leading_everywhere_gp_saving_and_robust_gaps_support(tmp_path, monkeypatch):
    results = tmp_path / "results"
    full_study(results, nas_gap=30.0)
    for seed, run in enumerate(GP_RUNS):
        test_fig5.write_family(results / "ptb_melis", "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    write_reruns(results, "ptb_melis", {"lstm": (1, 100.0, [101.0, 102.0, 103.0]), "rhn": (1, 150.0, [150.0, 151.0, 152.0]),
                                        "nas": (1, 130.0, [130.0, 131.0, 132.0]), "lstm_24m": (1, 95.0, [96.0, 97.0, 98.0]),
                                        "rhn_24m": (1, 145.0, [145.0, 146.0, 147.0]), "nas_24m": (1, 125.0, [125.0, 126.0, 127.0])})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    ok = [v for v in LSTM if v is not None]
    at_4 = eq8_min(ok, 4)
    assert at_4 == pytest.approx(test_fig5.EQ8_AT_4)
    _, evidence, verdict = melis_row(text, 1)
    assert f"ptb_melis: lstm leads at every n = 1 to 4 (expected best at n = 4: lstm {at_4:.2f}, rhn {at_4 + 50:.2f}, " \
           f"nas {at_4 + 30:.2f}); lstm_24m leads at every n = 1 to 4 (expected best at n = 4: lstm_24m {at_4 - 5:.2f}" in evidence
    assert verdict.startswith("ptb_melis: supports<br>ptb_melis_reduced: cannot be tested here (data: no records in results/")
    # GP means by hand: 143.33, 103.33, 96.67, 90; random search: 125, 112.5, ..., 104.53; 103.33 <= 104.53 first at n = 2
    gp_mean = test_fig5.GP_MEAN
    above = [n for n in range(1, 5) if gp_mean[n - 1] > eq8_min(ok, n)]
    assert above == [1] and gp_mean[1] <= at_4 < gp_mean[0]
    _, evidence, verdict = melis_row(text, 2)
    assert f"ptb_melis: lstm: random search's expected best at N = 4 is {at_4:.2f}; the GP runs' mean best-so-far reaches it " \
           "at n = 2: the GP tuner saves 2 of 4 trials (3 runs); the mean best-so-far is at or below random search's Eq. 8 " \
           "curve at 3 of n = 1 to 4 (above at n = 1)<br>" in evidence
    assert verdict.startswith("ptb_melis: supports<br>")
    # Melis's seed noise on its own terms: each cell's seed SD is 1.00, outside 0.4 / 1.5 to 0.4 * 1.5
    _, evidence, verdict = melis_row(text, 3)
    assert "lstm SD 1.00 over 3 reruns (trial 1)" in evidence.split("<br>")[0] and verdict.startswith("ptb_melis: contradicts<br>")
    # gaps of rerun means: lstm 102, nas 131, rhn 151 (each SD 1): 29 and 49 and 20 pooled SDs, all at least 2.5
    _, evidence, verdict = melis_row(text, 4)
    assert evidence.startswith("ptb_melis: lstm ahead of nas by 29.00, pooled seed SD 1.00: 29.00 SDs, robust; lstm ahead of "
                               "rhn by 49.00, pooled seed SD 1.00: 49.00 SDs, robust; nas ahead of rhn by 20.00")
    assert "lstm_24m ahead of nas_24m by 29.00" in evidence and "lstm ahead of nas_24m" not in evidence  # within a budget
    assert verdict.startswith("ptb_melis: supports<br>")
    assert "No records yet" not in text


def test_section5_nas_overtaking_a_gp_saving_nothing_and_a_gap_within_seed_noise_contradict(tmp_path, monkeypatch):
    results = tmp_path / "results"
    lstm, nas = [100.0, 100.5, 101.0, 101.5], [90.0, 120.0, 121.0, 122.0]  # NAS: a worse mean, a better minimum
    crossing = next(n for n in range(1, 5) if eq8_min(nas, n) < eq8_min(lstm, n))
    assert crossing == 4 and eq8_min(nas, 3) > eq8_min(lstm, 3)  # NAS's 90 drawn at least once: 1 - 0.75^n of the time
    for suffix in ("", "_24m"):
        write_cells(results, "ptb_melis", {f"lstm{suffix}": lstm, f"rhn{suffix}": [v + 50 for v in lstm], f"nas{suffix}": nas})
    never = [[150.0, 140.0, 130.0, 120.0], [200.0, 110.0, 105.0, 105.0]]  # means 175, 125, 117.5, 112.5: above throughout
    for seed, run in enumerate(never):
        test_fig5.write_family(results / "ptb_melis", "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    reruns = {"lstm": (0, 100.0, [101.0, 102.0, 103.0]), "nas": (0, 90.0, [102.5, 103.5, 104.5]), "rhn": (0, 150.0, [150.0, 151.0, 152.0])}
    write_reruns(results, "ptb_melis", {**reruns, **{f"{f}_24m": r for f, r in reruns.items()}})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    _, evidence, verdict = melis_row(text, 1)
    assert f"ptb_melis: lstm does not lead at every n = 1 to 4: the leader is lstm at n = 1-3; nas at n = 4 (the lead changes " \
           f"at n = 4) (expected best at n = 4: lstm {eq8_min(lstm, 4):.2f}, rhn {eq8_min(lstm, 4) + 50:.2f}, nas {eq8_min(nas, 4):.2f})" in evidence
    assert verdict.startswith("ptb_melis: contradicts<br>")
    assert all(mean > eq8_min(lstm, n) for n, mean in zip(range(1, 5), [175.0, 125.0, 117.5, 112.5]))
    _, evidence, verdict = melis_row(text, 2)
    assert "does not reach it within 4 trials: not within N (2 runs); the mean best-so-far is at or below random search's " \
           "Eq. 8 curve at 0 of n = 1 to 4 (above at n = 1-4)" in evidence
    assert verdict.startswith("ptb_melis: contradicts<br>")
    # lstm 102 and nas 103.5 (SDs 1): a gap of 1.5, 1.5 pooled SDs, under Melis's 1.0 / 0.4 = 2.5
    _, evidence, verdict = melis_row(text, 4)
    assert evidence.startswith("ptb_melis: lstm ahead of nas by 1.50, pooled seed SD 1.00: 1.50 SDs, not robust; ")
    assert verdict.startswith("ptb_melis: contradicts<br>")


def test_section5_reduced_study_is_evidence_and_missing_gp_runs_or_reruns_say_what_writes_them(tmp_path, monkeypatch):
    results = tmp_path / "results"
    ok = [v for v in LSTM if v is not None]
    write_cells(results, "ptb_melis_reduced", {"lstm": LSTM, "rhn": [v + 50 for v in ok], "nas": [v + 30 for v in ok]})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    rows = [melis_row(verdicts.build(results), k) for k in (1, 2, 3, 4)]
    assert rows[0][1].endswith("ptb_melis_reduced: lstm leads at every n = 1 to 4 (expected best at n = 4: lstm "
                               f"{eq8_min(ok, 4):.2f}, rhn {eq8_min(ok, 4) + 50:.2f}, nas {eq8_min(ok, 4) + 30:.2f})")
    assert rows[0][2] == f"ptb_melis: cannot be tested here (data: no records in results/ptb_melis)<br>ptb_melis_reduced: {REDUCED_SCALE}"
    assert rows[1][2].endswith("ptb_melis_reduced: cannot be tested here (data: no GP-tuner run with a finished trial in "
                               "results/ptb_melis_reduced/gp/; `syw run study=ptb_melis_reduced family=lstm strategy=gp "
                               "tuner.seed=k` writes one)")
    for row in rows[2:]:
        assert row[2].endswith("ptb_melis_reduced: cannot be tested here (data: no seed reruns in results/ptb_melis_reduced/"
                               "reseed/; `syw reseed study=ptb_melis_reduced` writes them)")
    write_reruns(results, "ptb_melis_reduced", {"lstm": (1, 100.0, [101.0, 102.0, 103.0]), "nas": (1, 130.0, [130.0, 131.0, 132.0])})
    for seed, run in enumerate(GP_RUNS):
        test_fig5.write_family(results / "ptb_melis_reduced", "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    rows = [melis_row(verdicts.build(results), k) for k in (1, 2, 3, 4)]
    assert "the GP tuner saves 2 of 4 trials (3 runs)" in rows[1][1] and rows[1][2].endswith(REDUCED_SCALE)
    assert rows[2][1].endswith("ptb_melis_reduced: lstm SD 1.00 over 3 reruns (trial 1); nas SD 1.00 over 3 reruns (trial 1)")
    assert rows[3][1].endswith("ptb_melis_reduced: lstm ahead of nas by 29.00, pooled seed SD 1.00: 29.00 SDs, robust")
    for row in rows[2:]:
        assert row[2].endswith("ptb_melis_reduced: cannot be tested here (data: no seed reruns of rhn in "
                               "results/ptb_melis_reduced/reseed/)")


def test_section5_without_records_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(tmp_path / "results").split("## Section 5 case study (Melis et al. 2018)")[1]
    assert f"Rules: {verdicts_melis.RULES}" in text and "at least 2.5 times their pooled seed SD" in text
    for k in (1, 2, 3, 4):
        assert melis_row("## Section 5" + text, k)[2] == ("ptb_melis: cannot be tested here (data: no records in results/ptb_melis)"
                                                          "<br>ptb_melis_reduced: cannot be tested here (data: no records in "
                                                          "results/ptb_melis_reduced)")
    assert "No records yet (no records in results/ptb_melis; no records in results/ptb_melis_reduced): `make study5-reduced` " \
           "runs `syw run study=ptb_melis_reduced`, the three GP-tuner runs of the LSTM" in text and "`syw reseed study=ptb_melis_reduced`" in text
