"""``make verdicts`` (syw.pages.verdicts): each claim's numbers traced to the records by an independent reading
(tests/support/oracle.py), the verdict by the stated rule, and the reasons a study cannot test a claim."""
from __future__ import annotations

import json

import numpy as np
import pytest

from syw.analysis.inference import budget_interval, compare
from syw.core.entry import run_main
from syw.figures.budgets import PAPER_CLAIMS
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


def rows_of(text: str, claim: str) -> dict[str, list[str]]:
    """A claim's rows of docs/verdicts.md, by records: [point estimate, 95% interval, verdict] (the sixth column,
    what would decide it, is read by test_verdict_wording)."""
    lines = text.splitlines()
    first = next(k for k, line in enumerate(lines) if line.startswith(f"| {claim} |"))
    out = {}
    for line in lines[first:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 6 or (cells[0] and cells[0] != claim) or not line.startswith("|"):
            break
        out[cells[1]] = cells[2:5]
    return out


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
    rows = rows_of(text, "the CNN needs 16 trials to reach 0.395")
    assert rows["the authors' trials"][2] == "cannot be tested here (data: not on this machine)"
    assert rows["sst5"][0].startswith(f"CNN: n = {reach} ({rounded} at 3 decimals")
    found = budget_interval(cnn, 0.395)  # the rule: the 95% interval within [16 / 1.5, 24], or wholly outside
    assert rows["sst5"][1] == f"CNN to 0.395: {found.low}-{found.high}" and found.high < 16 / 1.5
    assert rows["sst5"][2] == "contradicts at 95%"
    assert rows["sst5_as_run"][2] == "cannot be tested here (data: no records in results/sst5_as_run)"
    crossing = first_overtaking(lr, cnn, 50)
    rows = rows_of(text, "LR is better up to about 10 trials")
    assert oracle.eq8(lr, 1) > oracle.eq8(cnn, 1) and crossing is not None
    assert rows["sst5"][0] == f"CNN overtakes LR at n = {crossing} (Eq. 8)"  # the point estimate, labelled
    diff = compare(lr, cnn, ("lr", "cnn"), ns=[1] + list(range(5, 21)))  # the claim's budgets: 1 and 5 to 20
    assert diff.leader() == ["lr", None] + ["cnn"] * 4 + [None] * 11  # None past the limit 9 too
    assert rows["sst5"][1] == (f"LR minus CNN at n = 1: [{diff.low[0]:+.4f}, {diff.high[0]:+.4f}]; leader at 95% "
                               "(simultaneous over n = 1, 5-20): LR at n = 1; none at n = 5; CNN at n = 6-9; past the limit "
                               "n = 9 at n = 10-20")
    assert rows["sst5"][2] == "supports at 95%"  # LR ahead at n = 1, the CNN at n = 6 to 9, within 5 to 20
    assert "- sst5: Mean curves, CNN vs LR (n = 1 to 50, simultaneous claims): " in text  # the comparison's sentence
    assert "Beyond n = 9 these trials allow no claim without assumptions" in text  # N = 50: the limit is 9
    rows = rows_of(text, "GloVe is best below about 2 hours")
    assert rows["sst2_bcn_reduced_7_epochs"][2].startswith("cannot be tested here (scale: SST-2 sentences (not phrases), 7 epochs")
    # the window's middle, about sqrt(100 s x 2 h) = 14 min, buys GloVe 8 trials: past the limit of 10 trials (n = 1)
    assert rows["sst2_bcn_reduced_7_epochs"][1].startswith("at 14.2 min, GloVe (reduced) (n = 8) minus GloVe + ELMo (FR, reduced)")
    assert "not located (past the limit n = 1)" in rows["sst2_bcn_reduced_7_epochs"][1]
    assert rows["sst2_bcn_reduced_7_epochs"][2].endswith("; as evidence: undecided with 10 trials per family")
    assert rows["sst2_bcn"][2] == "cannot be tested here (data: no records in results/sst2_bcn)"
    assert "## Section 5 case study (Melis et al. 2018)" in text and "No records yet" in text
    table = text.split("## One verdict per study")[1]
    assert "| sst5 | contradicts at 95% |" in table and "| Figure 1 | cannot be tested here (data: not on this machine) |" in table


@pytest.mark.paperdata
def test_the_authors_trials_by_the_rules_with_these_numbers(tmp_path):
    text = verdicts.build(tmp_path / "no_results")
    trials = oracle.authors_trials(FIGURES[1].paper)
    lr, cnn = trials["lr"]["scores"], trials["cnn"]["scores"]
    reach, rounded = oracle.first_reaching(cnn, 0.395, 50), oracle.first_reaching(cnn, 0.395, 50, decimals=3)
    assert (reach, rounded) == (17, 17)  # the paper's text says 16
    theirs = rows_of(text, "the CNN needs 16 trials to reach 0.395")["the authors' trials"]
    assert theirs == [f"CNN: n = {reach} ({rounded} at 3 decimals, 13.2 min; N = 50)",
                      "CNN to 0.395: 7 to beyond 9, the limit budget: beyond it nothing can be located with 50 trials", "undecided with 50 trials"]
    theirs = rows_of(text, "LR is better up to about 10 trials")["the authors' trials"]
    assert theirs[0] == f"CNN overtakes LR at n = {first_overtaking(lr, cnn, 50)} (Eq. 8)"
    assert theirs[1].endswith("LR at n = 1; none at n = 5-9; past the limit n = 9 at n = 10-20")
    assert theirs[2] == "undecided with 50 trials per family"  # was "supports" on the point estimate (13 within 5-20)
    bidaf = oracle.authors_trials(FIGURES[4].paper)["bidaf"]["scores"]
    exact, rounded = oracle.first_reaching(bidaf, 0.677, 128), oracle.first_reaching(bidaf, 0.677, 128, decimals=3)
    theirs = rows_of(text, "BiDAF needs about 18 GPU days, 55 trials, to match 0.677")["the authors' trials"]
    assert theirs[0].startswith(f"BiDAF: n = {exact} ({rounded} at 3 decimals")
    assert theirs[1:] == ["BiDAF to 0.677: 19 to beyond 24, the limit budget: beyond it nothing can be located with 128 trials",
                          "undecided with 128 trials"]
    scitail = oracle.authors_trials(FIGURES[3].paper, oracle.study_floor(FIGURES[3].study))
    needs = {f: oracle.first_reaching(scitail[f]["scores"], ref, 100, decimals=3) for f, ref in FIGURES[3].references.items()}
    assert (needs["ngram"], needs["dgem"]) == (2, 20)  # the paper: from 2 (n-gram) to 20 (DGEM)
    theirs = rows_of(text, PAPER_CLAIMS[3][0])["the authors' trials"]
    assert theirs[0] == f"n-gram baseline {needs['ngram']}, DAM {needs['dam']}, ESIM {needs['esim']}, DGEM {needs['dgem']} (3 decimals)"
    assert theirs[1:] == ["n-gram baseline to 0.65: 2-2; DGEM to 0.796: 10 to beyond 18, the limit budget: beyond it nothing "
                          "can be located with 100 trials",
                          "undecided with 100 trials"]  # the n-gram end supports, DGEM's is not located
    said = [rows_of(text, claim)["the authors' trials"][2] for claim in PAPER_CLAIMS[2]]
    assert said == ["supports at 95%", "undecided with 50 trials per family", "undecided with 50 trials per family"]
    table = text.split("The authors' published trials, by the same rules and join:")[1]
    assert "| Figure 1 | undecided with 50 trials per family |" in table and "| Figure 4 | undecided with 128 trials |" in table


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
REDUCED_SCALE = "cannot be tested here (scale: 2M weights (paper 10M), 2 epochs; LSTM and NAS depth 1, RHN depth 5)"


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


def reruns_of(mean: float, sd: float, k: int) -> list[float]:
    """k rerun values with exactly this mean and sample SD."""
    z = np.linspace(-1.0, 1.0, k)
    return list(mean + sd * (z - z.mean()) / z.std(ddof=1))


def melis_rows(text: str, number: int) -> dict[str, list[str]]:
    """Section 5's rows of question ``number`` (1-4), by study: [point estimate, 95% interval, verdict]."""
    return rows_of(text.split("## Section 5")[1], verdicts_melis.QUESTIONS[number - 1])


def full_study(results, nas: list[float], gp_runs: list[list], reruns: dict[str, tuple[float, float, int]]) -> None:
    """ptb_melis with both budgets (the 24M cells 5 lower): LSTM's trials, RHN 50 above them, NAS as given; the
    LSTM's GP runs; each cell's best trial rerun (mean, SD, reruns)."""
    ok = [v for v in LSTM if v is not None]
    for suffix, shift in (("", 0.0), ("_24m", -5.0)):
        write_cells(results, "ptb_melis", {f"lstm{suffix}": [v + shift if v is not None else None for v in LSTM],
                                           f"rhn{suffix}": [v + 50 + shift for v in ok], f"nas{suffix}": [v + shift for v in nas]})
    for seed, run in enumerate(gp_runs):
        test_fig5.write_family(results / "ptb_melis", "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    write_reruns(results, "ptb_melis", {f"{f}{suffix}": (1, 100.0, reruns_of(mean + shift, sd, k))
                                        for f, (mean, sd, k) in reruns.items() for suffix, shift in (("", 0.0), ("_24m", -5.0))})


def test_section5_supports_where_the_intervals_decide(tmp_path, monkeypatch):
    results = tmp_path / "results"
    ok = [v for v in LSTM if v is not None]
    firsts = [[60.0, 59.0, 58.0, 57.0], [61.0, 60.0, 59.0, 58.0], [62.0, 61.0, 60.0, 59.0]]  # the GP runs far ahead at n = 1
    full_study(results, [v + 30 for v in ok], firsts, {"lstm": (100.0, 0.4, 100), "rhn": (150.0, 0.4, 100), "nas": (130.0, 0.4, 100)})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    at_4 = eq8_min(ok, 4)
    assert at_4 == pytest.approx(test_fig5.EQ8_AT_4)
    rows = melis_rows(text, 1)
    assert rows["ptb_melis"][0].startswith(f"lstm leads at every n = 1 to 4 (expected best at n = 4: lstm {at_4:.2f}, "
                                           f"rhn {at_4 + 50:.2f}, nas {at_4 + 30:.2f}); lstm_24m leads at every n = 1 to 4")
    # 4 trials per cell: the limit is n = 1, where the LSTM leads the RHN (Welch, t = 2.69) but not NAS; past it no claim
    assert rows["ptb_melis"][1].startswith("leader at 95% (simultaneous over n): lstm vs rhn: lstm at n = 1; past the limit "
                                           "n = 1 at n = 2-4; lstm vs nas: none at n = 1; past the limit n = 1 at n = 2-4")
    assert rows["ptb_melis"][2] == "undecided with 4 trials per cell"
    rows = melis_rows(text, 2)
    assert rows["ptb_melis"][1].startswith("lstm at n = 1 (L), random search minus the GP tuner's mean best-so-far: [+")
    assert rows["ptb_melis"][2] == "supports at 95%"
    rows = melis_rows(text, 3)
    assert "; lstm SD 0.40 over 100 reruns (trial 1);" in rows["ptb_melis"][0] and rows["ptb_melis"][2] == "supports at 95%"
    assert "lstm [0.35, 0.46]" in rows["ptb_melis"][1]  # chi-square on 99 degrees of freedom: within 0.4 / 1.5 to 0.6
    rows = melis_rows(text, 4)
    assert rows["ptb_melis"][0].startswith("lstm ahead of nas by 30.00, pooled seed SD 0.40: 75.00 SDs, robust")
    assert rows["ptb_melis"][2] == "supports at 95%"
    assert "No records yet" not in text and rows["ptb_melis_reduced"][2].startswith("cannot be tested here (data: no records")


def test_section5_contradicts_where_the_intervals_decide(tmp_path, monkeypatch):
    results = tmp_path / "results"
    ok = [v for v in LSTM if v is not None]
    nas = [v - 60 for v in ok]  # NAS 60 below the LSTM at every trial: ahead at n = 1 (t = 3.2)
    late = [[300.0, 299.0, 298.0, 297.0], [301.0, 300.0, 299.0, 298.0], [302.0, 301.0, 300.0, 299.0]]  # the GP runs far behind
    full_study(results, nas, late, {"lstm": (100.0, 1.0, 20), "rhn": (150.0, 1.0, 20), "nas": (100.1, 1.0, 20)})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    rows = melis_rows(text, 1)
    assert rows["ptb_melis"][0].startswith("lstm does not lead at every n = 1 to 4: the leader is nas at n = 1-4")
    assert "lstm vs nas: nas at n = 1" in rows["ptb_melis"][1] and rows["ptb_melis"][2] == "contradicts at 95%"
    assert all(mean > eq8_min(ok, n) for n, mean in zip(range(1, 5), [300.0, 299.0, 298.0, 297.0]))
    rows = melis_rows(text, 2)
    assert "does not reach it within 4 trials: not within N (3 runs, their mean best-so-far); each run on its own saves 0, 0, 0 " \
           "of 4 trials" in rows["ptb_melis"][0]
    assert rows["ptb_melis"][2] == "contradicts at 95%"
    assert melis_rows(text, 3)["ptb_melis"][2] == "contradicts at 95%"  # SD 1.0 over 20 reruns: [0.76, 1.46], above 0.6
    rows = melis_rows(text, 4)  # LSTM and NAS 0.1 SD apart over 20 reruns each: the interval lies under 2.5 SDs
    assert "lstm ahead of nas by 0.10, pooled seed SD 1.00: 0.10 SDs, not robust" in rows["ptb_melis"][0]
    assert rows["ptb_melis"][2] == "contradicts at 95%"


def test_section5_undecided_and_the_trials_each_gp_run_saves(tmp_path, monkeypatch):
    results = tmp_path / "results"
    ok = [v for v in LSTM if v is not None]
    full_study(results, [v + 30 for v in ok], GP_RUNS, {"lstm": (102.0, 1.0, 3), "rhn": (151.0, 1.0, 3), "nas": (131.0, 1.0, 3)})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(results)
    at_4 = eq8_min(ok, 4)
    # GP means by hand: 143.33, 103.33, 96.67, 90; random search: 125, 112.5, ..., 104.53; 103.33 <= 104.53 first at n = 2;
    # run by run: 150, 130, 130, 110 never; 120, 120, 100 at n = 3; 160, 60 at n = 2
    rows = melis_rows(text, 2)
    assert rows["ptb_melis"][0].startswith(f"lstm: random search's expected best at N = 4 is {at_4:.2f}; the GP runs' mean "
                                           "best-so-far reaches it at n = 2: the GP tuner saves 2 of 4 trials (3 runs, their "
                                           "mean best-so-far); each run on its own saves 0, 1, 2 of 4 trials")
    assert rows["ptb_melis"][2] == "undecided with 3 GP runs and 4 random-search trials"  # 150, 120, 160 against 125 at n = 1
    rows = melis_rows(text, 3)  # SD 1.0 over 3 reruns: [0.52, 6.28] reaches into 0.27 to 0.6 and beyond it
    assert rows["ptb_melis"][1].startswith("seed SD, 95%: ") and "; lstm [0.52, 6.28];" in rows["ptb_melis"][1]
    assert rows["ptb_melis"][2] == "undecided with 3 reruns per cell"
    rows = melis_rows(text, 4)
    assert rows["ptb_melis"][0].startswith("lstm ahead of nas by 29.00, pooled seed SD 1.00: 29.00 SDs, robust")
    assert "lstm_24m ahead of nas_24m by 29.00" in rows["ptb_melis"][0] and "lstm ahead of nas_24m" not in rows["ptb_melis"][0]
    assert rows["ptb_melis"][2] == "supports at 95%"


def test_section5_reduced_study_is_evidence_and_missing_gp_runs_or_reruns_say_what_writes_them(tmp_path, monkeypatch):
    results = tmp_path / "results"
    ok = [v for v in LSTM if v is not None]
    write_cells(results, "ptb_melis_reduced", {"lstm": LSTM, "rhn": [v + 50 for v in ok], "nas": [v + 30 for v in ok]})
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    rows = [melis_rows(verdicts.build(results), k)["ptb_melis_reduced"] for k in (1, 2, 3, 4)]
    assert rows[0][0] == ("lstm leads at every n = 1 to 4 (expected best at n = 4: lstm "
                          f"{eq8_min(ok, 4):.2f}, rhn {eq8_min(ok, 4) + 50:.2f}, nas {eq8_min(ok, 4) + 30:.2f}) (Eq. 8)")
    assert rows[0][2] == f"{REDUCED_SCALE}; as evidence: undecided with 4 trials per cell"
    assert rows[1][2] == ("cannot be tested here (data: no GP-tuner run with a finished trial in results/ptb_melis_reduced/gp/; "
                          "`syw run study=ptb_melis_reduced family=lstm strategy=gp tuner.seed=k` writes one)")
    for row in rows[2:]:
        assert row[2] == ("cannot be tested here (data: no seed reruns in results/ptb_melis_reduced/reseed/; "
                          "`syw reseed study=ptb_melis_reduced` writes them)")
    write_reruns(results, "ptb_melis_reduced", {"lstm": (1, 100.0, [101.0, 102.0, 103.0]), "nas": (1, 130.0, [130.0, 131.0, 132.0])})
    for seed, run in enumerate(GP_RUNS):
        test_fig5.write_family(results / "ptb_melis_reduced", "lstm", run, 60.0, strategy="gp", tuner_seed=seed)
    rows = [melis_rows(verdicts.build(results), k)["ptb_melis_reduced"] for k in (1, 2, 3, 4)]
    assert "the GP tuner saves 2 of 4 trials (3 runs" in rows[1][0]
    assert rows[1][2] == f"{REDUCED_SCALE}; as evidence: undecided with 3 GP runs and 4 random-search trials"
    assert rows[2][0] == "lstm SD 1.00 over 3 reruns (trial 1); nas SD 1.00 over 3 reruns (trial 1)"
    assert rows[3][0] == "lstm ahead of nas by 29.00, pooled seed SD 1.00: 29.00 SDs, robust"
    for row in rows[2:]:
        assert row[2] == "cannot be tested here (data: no seed reruns of rhn in results/ptb_melis_reduced/reseed/)"


def test_section5_without_records_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "authors", lambda number: "not on this machine")
    text = verdicts.build(tmp_path / "results").split("## Section 5 case study (Melis et al. 2018)")[1]
    assert f"Rules: {verdicts_melis.RULES}" in text and "at least r in size" in text
    for k in (1, 2, 3, 4):
        rows = melis_rows("## Section 5" + text, k)
        assert [r[2] for r in rows.values()] == ["cannot be tested here (data: no records in results/ptb_melis)",
                                                 "cannot be tested here (data: no records in results/ptb_melis_reduced)"]
    assert "No records yet (no records in results/ptb_melis; no records in results/ptb_melis_reduced): `make study5-reduced` " \
           "runs `syw run study=ptb_melis_reduced`, the three GP-tuner runs of the LSTM" in text and "`syw reseed study=ptb_melis_reduced`" in text
