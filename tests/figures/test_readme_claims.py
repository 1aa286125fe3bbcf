"""figures/readme_claims.py: the ``verdict``, ``interval`` and ``majority`` README facts, against the
verdicts file's own functions, budget_interval, and the data files counted here."""
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from syw.analysis.inference import budget_interval
from syw.core.paths import REPO
from syw.figures import verdicts
from syw.figures.readme_data import NeedsData
from syw.figures.readme_facts import compute

RESULTS = REPO / "results"
SCITAIL = Path(os.environ.get("SYW_DATA_DIR", "/nonexistent")) / "scitail" / "SciTailV1.1" / "tsv_format"


def fact(name: str, **values) -> str:
    return compute(name, {k: str(v) for k, v in values.items()}, None, RESULTS)


def test_the_verdict_fact_is_the_verdicts_file_word():
    for k, claim in enumerate((c for c in verdicts.CLAIMS if c.figure == 1), start=1):
        said = verdicts.verdict_for(claim, "sst5_as_run", verdicts.ours("sst5_as_run", RESULTS))[1]
        assert fact("verdict", study="sst5_as_run", claim=k) == said.split(" (")[0] == "contradicts"
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
