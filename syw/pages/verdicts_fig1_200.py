"""Section of ``docs/verdicts.md`` for ``sst5_as_run_200`` (issue 62, item 6): Figure 1's claim "LR is
better up to about 10 trials" decided on 200 trials per family by the rule committed with the study
(``conf/study/sst5_as_run_200.yaml``, before any of its trials ran), coded here unchanged.

The rule: pointwise claims at the pre-stated budgets n = 1, 5 and 20, each at 95% two-sided, by the
jackknife-t comparison of the unbiased expected best of n (:func:`syw.analysis.inference.compare` with
``at``; Welch's t-test at n = 1). *supports*: LR leads at n = 1 and at n = 5, and the CNN leads at
n = 20; *contradicts*: the CNN leads at n = 1 or 5, or LR leads at n = 20; *undecided*: otherwise. A
verdict is given only once both families have all their trials; before that the section says how many
are recorded. The page words it as every verdict of ``docs/verdicts.md`` (:mod:`syw.pages.verdict_rules`, issue 73):
"supports at 95%", "contradicts at 95%", "undecided with N trials per family"; the rule is unchanged.
"""
from __future__ import annotations

from pathlib import Path

from syw.analysis.compare import Difference
from syw.analysis.inference import compare
from syw.core.paths import REPO
from syw.core.units import count
from syw.experiments.study import load_study
from syw.figures.sources import has_records, study_rows
from syw.pages.verdict_rules import Verdict
from syw.pages.verdict_rules import verdict as worded

STUDY = "sst5_as_run_200"
BUDGETS = (1, 5, 20)
CONFIDENCE = 0.95
EARLY, LATE = "lr", "cnn"  # the claim: EARLY leads at small budgets, LATE from about 10 trials
RULE = ("pointwise claims at n = 1, 5 and 20, each at 95% two-sided (`syw curve --compare lr cnn --at 1 5 20`: the "
        "jackknife-t comparison of the unbiased expected best of n, Welch's t-test at n = 1). supports: LR leads at "
        "n = 1 and 5 and the CNN at n = 20; contradicts: the CNN leads at n = 1 or 5, or LR at n = 20; undecided: "
        "otherwise. Committed with the study config before its trials ran.")


def decide(leaders: dict[int, str | None]) -> str:
    """The committed rule on the leader at each budget of :data:`BUDGETS` (None: no leader at 95%)."""
    if any(leaders[n] == LATE for n in (1, 5)) or leaders[20] == EARLY:
        return "contradicts"
    if leaders[1] == EARLY and leaders[5] == EARLY and leaders[20] == LATE:
        return "supports"
    return "undecided"


def _state(results: Path) -> tuple[dict[str, int], Difference | None]:
    """Trials recorded per family (ok or failed; empty without records) and the rule's comparison (LR minus
    CNN at :data:`BUDGETS`), None until every family has its trials; the records read once."""
    if not has_records(results, STUDY):
        return {}, None
    parts, failed = study_rows(STUDY, results)
    recorded = {name: len(part) + failed.get(name, 0) for name, part in parts.items()}
    if any(size < load_study(STUDY).trials for size in recorded.values()):
        return recorded, None
    scores = {name: part["value"].to_numpy(float) for name, part in parts.items()}  # ok trials, as the curves read them
    return recorded, compare(scores[EARLY], scores[LATE], (EARLY, LATE), at=BUDGETS, confidence=CONFIDENCE)


def verdict(results: Path = REPO / "results") -> Verdict | None:
    """The committed rule's verdict (:func:`decide`) with the trials it rests on, or None while the study is incomplete."""
    recorded, diff = _state(results)
    if diff is None:
        return None
    return worded(decide(dict(zip(map(int, diff.ns), diff.leader(), strict=True))), recorded)


def section(results: Path = REPO / "results") -> list[str]:
    """The Markdown lines of the section: the rule, the comparison at each budget and the verdict, or
    how many trials are recorded while the study is still running."""
    out = ["", f"## Figure 1, decided on more trials: `{STUDY}`", "", f"Rule: {RULE}", ""]
    trials = load_study(STUDY).trials
    recorded, diff = _state(results)
    if not recorded:
        return out + [f"Verdict: pending. The study has no records here: `make study-fig1-200` runs it ({trials} trials per family)."]
    if diff is None:
        done = ", ".join(f"{name} {size} of {trials}" for name, size in recorded.items())
        return out + [f"Verdict: pending. Trials recorded so far: {done}; the rule is applied once every family "
                      f"has its {count(trials, 'trial')} (`make study-fig1-200` resumes the study)."]
    leaders = dict(zip(map(int, diff.ns), diff.leader(), strict=True))
    out += ["| n | LR minus CNN (unbiased expected best of n) | 95% interval | p | leader at 95% |", "|---|---|---|---|---|"]
    for n, est, low, high, p in zip(diff.ns, diff.estimate, diff.low, diff.high, diff.p, strict=True):
        out.append(f"| {n} | {est:+.4f} | [{low:+.4f}, {high:+.4f}] | {p:.3g} | {leaders[int(n)] or 'none'} |")
    said = worded(decide(leaders), recorded)
    return out + ["", f"Verdict: **{said}** ({recorded[EARLY]} LR and {recorded[LATE]} CNN trials; "
                      f"claims are possible up to n = {diff.limit} with these trials)."]
