"""Reference values for the tests, written from the definitions in a few plain lines each and
independent of the suite's code: Eq. 8 and its SD (Dodge et al. 2019, section 3), the
without-replacement estimator (Tang et al. 2020), and the authors' published trial files read
with the csv module. ``test_expected_max_brute_force`` checks these against enumeration."""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _weights(n_scores: int, n: int) -> list[float]:
    """P(the max of n draws with replacement is the i-th smallest of N scores) = (i/N)^n - ((i-1)/N)^n."""
    return [(i / n_scores) ** n - ((i - 1) / n_scores) ** n for i in range(1, n_scores + 1)]


def eq8(scores, n: int) -> float:
    """Eq. 8: the expected max of n draws with replacement from the N scores."""
    ordered = sorted(float(s) for s in scores)
    return sum(w * v for w, v in zip(_weights(len(ordered), n), ordered))


def eq8_sd(scores, n: int) -> float:
    """Section 3.3: the standard deviation of that max."""
    ordered = sorted(float(s) for s in scores)
    mean = eq8(ordered, n)
    return math.sqrt(sum(w * (v - mean) ** 2 for w, v in zip(_weights(len(ordered), n), ordered)))


def unbiased(scores, n: int) -> float:
    """Tang et al. (2020): the expected max of n draws without replacement, sum_i v_(i) C(i-1, n-1) / C(N, n)."""
    ordered = sorted(float(s) for s in scores)
    return sum(v * math.comb(i - 1, n - 1) for i, v in enumerate(ordered, 1)) / math.comb(len(ordered), n)


def first_reaching(scores, target: float, n_max: int, decimals: int | None = None) -> int | None:
    """The smallest n <= n_max whose Eq. 8 value (rounded to ``decimals`` when given) is at least ``target``."""
    for n in range(1, n_max + 1):
        value = eq8(scores, n)
        if (round(value, decimals) if decimals is not None else value) >= target:
            return n
    return None


def authors_file(name: str) -> Path:
    """Where the authors' published file ``name`` lies: ``$SYW_DATA_DIR/authors_trials/`` (CI), else
    ``results/paper/``; skips the test when neither holds it."""
    root = os.environ.get("SYW_DATA_DIR")
    for path in ([Path(root) / "authors_trials" / name] if root else []) + [REPO / "results" / "paper" / name]:
        if path.is_file():
            return path
    pytest.skip(f"the authors' {name} is neither in $SYW_DATA_DIR/authors_trials/ nor in results/paper/")


def authors_path(paper) -> Path:
    """:func:`authors_file` of ``paper`` (a ``syw.figures.specs.PaperFile``)."""
    return authors_file(paper.name)


def study_floor(study: str) -> float | None:
    """The ``study.floor.value`` of ``conf/study/<study>.yaml``, read with PyYAML alone (None when it has none)."""
    import yaml

    raw = yaml.safe_load((REPO / "syw" / "conf" / "study" / f"{study}.yaml").read_text())
    return (raw["study"].get("floor") or {}).get("value")


def authors_trials(paper, floor: float | None = None) -> dict[str, dict[str, list[float]]]:
    """Each family's scores and durations in the authors' file, in file order, read with the csv module:
    ``{family: {"scores": [...], "durations": [...]}}``; a score below ``floor`` (a score to maximise) counts at it."""
    out: dict[str, dict[str, list[float]]] = {}
    with open(authors_path(paper), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            family = paper.groups.get(row[paper.group_column])
            if family is not None:
                part = out.setdefault(family, {"scores": [], "durations": []})
                score = float(row[paper.metric_column])
                part["scores"].append(score if floor is None else max(score, floor))
                part["durations"].append(float(row[paper.duration_column]))
    return out
