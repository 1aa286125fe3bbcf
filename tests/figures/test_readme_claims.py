"""figures/readme_claims.py: the ``verdict``, ``interval`` and ``majority`` README facts, against the
verdicts file's own functions, budget_interval, and the data files counted here."""
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from syw.analysis.inference import budget_interval
from syw.core.paths import REPO
from syw.pages import verdicts
from syw.pages.readme_data import NeedsData
from syw.pages.readme_facts import compute

RESULTS = REPO / "results"
SCITAIL = Path(os.environ.get("SYW_DATA_DIR", "/nonexistent")) / "scitail" / "SciTailV1.1" / "tsv_format"


def fact(name: str, **values) -> str:
    return compute(name, {k: str(v) for k, v in values.items()}, None, RESULTS)


def test_the_verdict_fact_is_the_verdicts_file_word():
    expected = {"sst5_as_run": ["undecided with 50 trials", "undecided with 50 trials per family"],
                "sst5": ["contradicts at 95%", "contradicts at 95%"],
                "sst5_as_run_replay": ["undecided with 50 trials", "undecided with 50 trials per family"]}
    for study, words in expected.items():
        for k, claim in enumerate((c for c in verdicts.CLAIMS if c.figure == 1), start=1):
            said = str(verdicts.verdict_for(claim, study, verdicts.ours(study, RESULTS)).verdict)
            assert fact("verdict", study=study, claim=k) == said == words[k - 1]
    why = fact("verdict", study="scitail_cpu", claim=1, of="why")
    assert why.startswith("cannot be tested here (scale: GloVe 6B 50d") and fact("verdict", study="scitail_cpu", claim=1) == \
        "cannot be tested here"
    with pytest.raises(ValueError, match="claim=3: study sst5_as_run has 2 claim"):
        fact("verdict", study="sst5_as_run", claim=3)


def test_the_interval_fact_is_budget_interval_on_the_floored_values():
    scores = [json.loads(line)["value"] for line in (RESULTS / "sst5" / "cnn.jsonl").read_text().splitlines() if line.strip()]
    found = budget_interval(scores, 0.395)  # SST-5 accuracies all lie above the floor, 0.2
    assert fact("interval", study="sst5", family="cnn", target=0.395) == f"{found.low}-{found.high}"
    assert fact("interval", study="sst5_as_run", family="cnn", target=0.395).endswith(
        ", the limit budget: beyond it nothing can be located with 50 trials")


@pytest.mark.realdata
@pytest.mark.skipif(not SCITAIL.is_dir(), reason="set SYW_DATA_DIR to a folder with scitail/SciTailV1.1/tsv_format/")
def test_the_majority_fact_counts_the_split_labels():
    for split in ("dev", "test"):
        labels = Counter(line.rsplit("\t", 1)[-1].strip() for line in (SCITAIL / f"scitail_1.0_{split}.tsv").read_text().splitlines()
                         if line.strip())
        label, top = labels.most_common(1)[0]
        assert fact("majority", study="scitail_cpu", split=split, fmt=".4f") == f"{top / sum(labels.values()):.4f}"
        assert fact("majority", study="scitail_cpu", split=split, of="label") == label
    assert fact("majority", study="scitail_cpu", split="dev", fmt=".1%") == "50.4%"  # the numbers, from the data
    assert fact("majority", study="scitail_cpu", split="test", fmt=".1%") == "60.4%"


def test_the_majority_fact_without_the_data_says_what_it_needs(monkeypatch):
    monkeypatch.delenv("SYW_DATA_DIR", raising=False)
    with pytest.raises(NeedsData, match="SciTail"):
        fact("majority", study="scitail_cpu", split="dev")
    with pytest.raises(ValueError, match="does not read SciTail"):
        fact("majority", study="sst5", split="dev")


def test_the_compared_fact_is_the_simultaneous_comparison_in_words():
    from syw.analysis.inference import compare

    scores = {f: [json.loads(line)["value"] for line in (RESULTS / "sst5" / f"{f}.jsonl").read_text().splitlines() if line.strip()]
              for f in ("cnn", "lr")}
    leaders = compare(scores["cnn"], scores["lr"], ("cnn", "lr")).leader()
    last = max(n for n, who in enumerate(leaders, start=1) if who == "cnn")
    assert leaders[:last] == ["cnn"] * last and last == 9  # the CNN ahead at 95% up to the limit of 50 trials
    assert fact("compared", study="sst5", family="cnn", over="lr") == \
        f"cnn leads lr for n = 1-{last}; undecided with 50 and 50 trials for n = {last + 1}-50"
    assert fact("compared", study="ptb_melis_reduced") == "undecided with 20 trials per family for every pair at n = 1-20"
    with pytest.raises(ValueError, match="family= and over= together"):
        fact("compared", study="sst5", family="cnn")


def test_the_tuner_runs_each_and_the_melis_readings():
    from syw.analysis.adaptive import best_so_far, tuner_runs
    from syw.pages.readme_args import Args, curve

    random = Args({"study": "ptb_melis_reduced", "family": "lstm"}, None, RESULTS).trials()
    at_n = curve(random)[-1]
    runs = tuner_runs(RESULTS / "ptb_melis_reduced", "lstm", "gp")
    saved = [20 - (int((best_so_far(run, maximize=False)[:20] <= at_n).argmax()) + 1) for run in runs]
    assert fact("tuner", study="ptb_melis_reduced", family="lstm", of="each") == f"{saved[0]}, {saved[1]} and {saved[2]}" \
        == "14, 9 and 11"
    assert fact("verdict", study="ptb_melis_reduced", claim=2) == "cannot be tested here"
    assert fact("verdict", study="ptb_melis_reduced", claim=2, of="evidence") == "undecided with 3 GP runs and 20 random-search trials"
    with pytest.raises(ValueError, match="not a reduced study"):
        fact("verdict", study="sst5", claim=1, of="evidence")
    with pytest.raises(ValueError, match="claim=5: study ptb_melis_reduced has 4 claim"):
        fact("verdict", study="ptb_melis_reduced", claim=5)
