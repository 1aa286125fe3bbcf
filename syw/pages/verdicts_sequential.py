"""Section of ``docs/verdicts.md`` for ``sst5_sequential`` (issue 74): Figure 1's "LR is better than the CNN for
small budgets" decided look by look by the stopping rule committed with the study
(``conf/study/sst5_sequential.yaml``, ``study.sequential``), before any of its trials ran.

The rule's statistics are recomputed from the records at every look they reach
(:func:`syw.experiments.sequential_study.evaluate`), so the section is right for a study that has run only some
looks. Its intervals are the rule's repeated confidence intervals (valid however the looks went), not fixed-sample
ones. *supports*: LR leads at both budgets when the rule stops; *contradicts*: the CNN leads at either;
*undecided*: otherwise at the last look. While the rule goes on the section says how many looks are done.
"""
from __future__ import annotations

from pathlib import Path

from syw.analysis.sequential import Design, SequentialResult
from syw.core.errors import DataError
from syw.core.paths import REPO
from syw.experiments.sequential_study import evaluate
from syw.experiments.study import load_study

STUDY = "sst5_sequential"
EARLY, LATE = "lr", "cnn"  # the claim: EARLY leads at the small budgets


def rule_of(study: str = STUDY) -> tuple[Design, tuple[str, str]]:
    """The study's committed stopping rule and the two families it compares."""
    spec = load_study(study).sequential
    design = Design(tuple(spec["looks"]), tuple(spec["at"]), spec.get("confidence", 0.95),
                    spec.get("boundary", "obrien-fleming"), spec.get("adjust", "bonferroni"))
    return design, (str(spec["compare"][0]), str(spec["compare"][1]))


def decide(result: SequentialResult) -> str | None:
    """The committed verdict where the rule stopped; None while it goes on."""
    if result.stopped_at is None:
        return None
    leaders = [r.leader for r in result.decisions().values()]
    if LATE in leaders:
        return "contradicts at 95%"
    if all(leader == EARLY for leader in leaders):
        return "supports at 95%"
    return f"undecided with {result.trials_used} trials per family"


def _state(results: Path) -> SequentialResult | str | None:
    """The rule on the looks the records reach; None before the first; a message when the records cannot be used."""
    design, names = rule_of()
    folder = results / STUDY
    try:
        return evaluate(design, names, {name: folder / f"{name}.jsonl" for name in names}, maximize=True)
    except DataError as err:
        return str(err).replace(f"{REPO}/", "")


def verdict(results: Path = REPO / "results") -> str | None:
    """The committed verdict (:func:`decide`), or None while the rule goes on or has no look yet."""
    state = _state(results)
    return decide(state) if isinstance(state, SequentialResult) else None


def section(results: Path = REPO / "results") -> list[str]:
    """The Markdown lines of the section: the rule, each budget's statistics at the last look evaluated (the
    repeated confidence interval), and the verdict with the look the rule stopped at, or how far it has got."""
    design, names = rule_of()
    rule = (f"looks after {', '.join(map(str, design.looks))} trials per family (trials 0..N-1 of each, in their seeded "
            f"order); at n = {' and '.join(map(str, design.at))} the jackknife-t statistic of the unbiased expected best "
            f"of n against an {design.boundary}-type alpha-spending boundary, {design.adjust} over the budgets, "
            f"{design.confidence:.0%} over all looks and budgets (`syw.analysis.sequential`). Stops when every budget "
            f"has a leader, else at the last look. supports: {EARLY} leads at every budget when it stops; contradicts: "
            f"{LATE} leads at any; undecided: otherwise. Committed with the study config before its trials ran; the "
            f"fixed design it is measured against: {design.looks[-1]} trials per family compared once.")
    out = ["", f"## Figure 1, decided sequentially: `{STUDY}`", "", f"Rule (sequential): {rule}", ""]
    state = _state(results)
    if state is None:
        return out + [f"Verdict: pending. No look reached yet (the first needs {design.looks[0]} trials per family): "
                      f"`syw run study={STUDY}` runs and resumes it."]
    if isinstance(state, str):
        return out + [f"Verdict: pending. {state}"]
    out += [f"| n | {names[0]} minus {names[1]} (unbiased expected best of n) | repeated 95% interval | T | boundary "
            "| leader | decided at look |", "|---|---|---|---|---|---|---|"]
    for n, r in state.decisions().items():
        tested = r.boundary != float("inf")
        interval = f"[{r.low:+.4f}, {r.high:+.4f}]" if tested else "not tested yet"
        stat = (f"{r.statistic:+.2f}", f"{r.boundary:.2f}") if tested else ("-", "-")
        out.append(f"| {n} | {r.estimate:+.4f} | {interval} | {stat[0]} | {stat[1]} | {r.leader or 'none'} | "
                   f"{r.decided_at or '-'} |")
    looks = len(design.looks)
    last = state.rows[-1].look
    if state.stopped_at is None:
        return out + ["", f"Verdict: pending (sequential; still running: {last} of {looks} looks done, "
                      f"{state.trials_used} trials per family; `syw run study={STUDY}` resumes it)."]
    saved = design.looks[-1] - state.trials_used
    against = (f"{saved} per family ({2 * saved} in all) fewer than the fixed design's" if saved
               else "as many as the fixed design's")
    return out + ["", f"Verdict: **{decide(state)}** (sequential; stopped at look {state.stopped_at} of {looks}, "
                  f"{state.trials_used} trials per family of at most {design.looks[-1]}: {against} {design.looks[-1]})."]
