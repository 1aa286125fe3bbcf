"""``make verdicts`` (``syw verdicts``): ``docs/verdicts.md``, what the records say about
each quantitative claim of the paper's case studies (Dodge et al. 2019, sections 4.1-4.4, and case study 5,
Melis et al. 2018, in :mod:`syw.figures.verdicts_melis`).

Every number in the file is printed here from records: our trials (``results/<study>/``) and the
authors' published trials (``syw.figures.sources.from_paper``, sha256-checked). Each claim is read off
Eq. 8 curves by a rule stated in the file (:data:`RULES`), once on the authors' trials and once on
each of our studies; a reduced study (a CPU-sized stand-in, ``reduced`` in its config) or a missing
one cannot test a claim about the paper's scale, and says why.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from syw.analysis import budget_to_reach, crossovers
from syw.analysis.compare import sentence
from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.analysis.inference import budget_interval, compare
from syw.core.entry import Parser, check_writable, run_main, write_output
from syw.core.errors import DataError, DataMissingError
from syw.core.paths import REPO, in_checkout
from syw.core.records import check_complete
from syw.core.units import human_duration
from syw.experiments.space import study_config
from syw.figures.budgets import PAPER_CLAIMS, leads_by_time
from syw.figures.sources import from_paper, from_records
from syw.figures.specs import FIGURES
from syw.figures.verdicts_fig1_200 import STUDY as FIG1_200
from syw.figures.verdicts_fig1_200 import section as decided_fig1
from syw.figures.verdicts_fig1_200 import verdict as fig1_200_verdict
from syw.figures.verdicts_melis import STUDIES as MELIS_STUDIES
from syw.figures.verdicts_melis import answers as melis_answers
from syw.figures.verdicts_melis import combine
from syw.figures.verdicts_melis import section as melis_section

HOUR, DAY = 3600.0, 86400.0
ABOUT = 1.5  # "about n": within a factor 1.5 of n
OUT = "docs/verdicts.md"  # in the checkout (syw.core.paths.in_checkout)
OUR_STUDIES = {1: ("sst5", "sst5_as_run"), 2: ("sst2_bcn", "sst2_bcn_reduced_7_epochs"),
               3: ("scitail", "scitail_cpu", "scitail_reduced"), 4: ("squad", "squad_reduced")}
RULES = (
    f"A budget (\"needs about n trials\") is the first n whose Eq. 8 value reaches the target, exact or with both "
    f"sides rounded to 3 decimals; it supports the claim within a factor {ABOUT} of the paper's n and contradicts it "
    "outside (or when N trials are that many and the curve never reaches it). A crossover (\"A is better up to "
    "about n\") supports the claim when A leads at n = 1 and the other family's curve first overtakes it within a "
    "factor 2 of n. A time claim (\"X is best between t1 and t2\") supports it when X leads at the geometric middle "
    "of the window, each family spending the time alone (n trials cost n times its mean duration, as in the "
    "paper's Fig. 2). A reduced study cannot test a claim about the paper's scale; its numbers are shown as "
    "evidence. Beside each budget: its 95% interval (`syw.analysis.inference.budget_interval`; \"to beyond L, the limit "
    "budget\" when N trials cannot bound it: past L = floor(N ln 2 / ln 40) they locate nothing). The evidence under each table is `syw "
    "curve`'s comparison (95% simultaneous claims, `syw.analysis.inference`), which names no leader past that limit.")


@dataclass(frozen=True)
class Claim:
    figure: int
    text: str  # the claim as budgets.PAPER_CLAIMS states it
    kind: str  # "reach", "crossover", "lead" or "range"
    family: str = ""
    other: str = ""  # crossover: the family that overtakes
    target: float = float("nan")
    paper: float = float("nan")  # the paper's number: trials, or the window's end in seconds
    since: float | None = None  # lead: the window's start in seconds (None: the first trial)


CLAIMS = [
    Claim(1, PAPER_CLAIMS[1][0], "reach", "cnn", target=0.395, paper=16),
    Claim(1, PAPER_CLAIMS[1][1], "crossover", "lr", "cnn", paper=10),
    Claim(2, PAPER_CLAIMS[2][0], "lead", "glove", paper=2 * HOUR),
    Claim(2, PAPER_CLAIMS[2][1], "lead", "elmo_frozen", paper=DAY, since=6 * HOUR),
    Claim(2, PAPER_CLAIMS[2][2], "lead", "elmo_finetuned", paper=float("inf"), since=DAY),
    Claim(3, PAPER_CLAIMS[3][0], "range", "ngram", "dgem", paper=20),
    Claim(4, PAPER_CLAIMS[4][0], "reach", "bidaf", target=0.677, paper=55),
]


def _about(value: float | None, paper: float, factor: float = ABOUT) -> bool:
    return value is not None and paper / factor <= value <= paper * factor


def reach(claim: Claim, groups: dict[str, Group]) -> tuple[str, str]:
    g = groups[claim.family]
    curve = curve_of(g).mean
    exact, rounded = budget_to_reach(curve, claim.target), budget_to_reach(curve, claim.target, decimals=3)
    if exact is None and rounded is None:
        text = f"{g.label}: not reached in N = {g.scores.size} trials (best {g.scores.max():.3f})"
        return text, ("contradicts" if g.scores.size >= claim.paper * ABOUT else
                      f"cannot be tested here (data: {g.scores.size} trials, fewer than {claim.paper * ABOUT:g})")
    shown = exact if exact is not None else rounded
    cost = f", {human_duration(shown * g.mean_duration)}" if g.mean_duration else ""
    text = (f"{g.label}: n = {exact if exact is not None else 'none'} ({rounded} at 3 decimals{cost}; N = {g.scores.size}; "
            f"{interval_text(g.scores, claim.target)})")
    return text, "supports" if _about(exact, claim.paper) or _about(rounded, claim.paper) else "contradicts"


def interval_text(scores: np.ndarray, target: float) -> str:
    """The 95% interval of the trials needed to reach ``target``, in words (item 3 of issue 62)."""
    return f"95% interval {budget_interval(scores, target).words(scores.size)}"


def crossover(claim: Claim, groups: dict[str, Group]) -> tuple[str, str]:
    a, b = groups[claim.family], groups[claim.other]
    ca, cb = curve_of(a).mean, curve_of(b).mean
    found = [c for c in crossovers(ca, cb, (a.name, b.name)) if c.leader == b.name]
    first = found[0].at if found and ca[0] > cb[0] else None
    if first is None:
        leader = a.label if ca[0] > cb[0] else b.label
        return f"no crossover: {leader} leads at n = 1 and {'is never overtaken' if not found else 'the order differs'}", \
            "contradicts"
    return f"{b.label} overtakes {a.label} at n = {first}", "supports" if _about(first, claim.paper, 2) else "contradicts"


def lead(claim: Claim, groups: dict[str, Group], spec) -> tuple[str, str]:
    leads = leads_by_time(spec, list(groups.values()))
    if not leads:
        return "no time axis (durations missing)", "cannot be tested here (data: no training durations)"
    start = claim.since if claim.since is not None else leads[0].start
    end = claim.paper if np.isfinite(claim.paper) else leads[-1].end
    middle = float(np.sqrt(start * end))
    at = next((x.leader for x in leads if x.start <= middle <= x.end), None)
    label = groups[claim.family].label
    spans = [f"{human_duration(x.start)} to {human_duration(x.end)}" for x in leads if x.leader == claim.family]
    text = f"{label} leads " + ("; ".join(spans) if spans else "never") + f" (at {human_duration(middle)}: " \
        f"{groups[at].label if at else 'none'})"
    return text, "supports" if at == claim.family else "contradicts"


def budgets_range(claim: Claim, groups: dict[str, Group], spec) -> tuple[str, str]:
    needs = {f: budget_to_reach(curve_of(groups[f]).mean, ref, decimals=3) for f, ref in spec.references.items() if f in groups}
    text = ", ".join(f"{groups[f].label} {n if n is not None else 'not reached'}" for f, n in needs.items())
    reached = {f: n for f, n in needs.items() if n is not None}
    if len(reached) < len(needs):
        return text + " (3 decimals)", "contradicts"
    low, high = min(reached.values()), max(reached.values())
    ok = _about(low, 2) and _about(high, claim.paper) and reached[claim.family] == low and reached[claim.other] == high
    return text + " (3 decimals)", "supports" if ok else "contradicts"


def judge(claim: Claim, groups: dict[str, Group]) -> tuple[str, str]:
    """What ``groups`` say about ``claim`` (the evidence in words) and the verdict by :data:`RULES`."""
    spec = FIGURES[claim.figure]
    if claim.kind == "reach":
        return reach(claim, groups)
    if claim.kind == "crossover":
        return crossover(claim, groups)
    if claim.kind == "lead":
        return lead(claim, groups, spec)
    return budgets_range(claim, groups, spec)


def authors(number: int) -> dict[str, Group] | str:
    """The authors' groups of a figure, or why they cannot be read."""
    try:
        return {g.name: g for g in from_paper(FIGURES[number], labels=FIGURES[number].labels)}
    except (DataMissingError, DataError, FileNotFoundError) as err:
        return str(err).replace(f"{REPO}/", "")


def ours(study: str, results: Path) -> dict[str, Group] | str:
    """Our groups of ``study``, or why there are none."""
    if not any((results / study).glob("*.jsonl")):
        return f"no records in results/{study}"
    try:
        return {g.name: g for g in from_records(study, results)}
    except (DataError, FileNotFoundError) as err:
        return str(err).replace(f"{REPO}/", "")


def verdict_for(claim: Claim, study: str, groups: dict[str, Group] | str) -> tuple[str, str]:
    if isinstance(groups, str):
        return f"{study}: -", f"cannot be tested here (data: {groups})"
    text, verdict = judge(claim, groups)
    reduced = study_config(study).get("reduced")
    if reduced:
        verdict = f"cannot be tested here (scale: {reduced.removeprefix('REDUCED: ')})"
    return f"{study}: {text}", verdict


STUDY_RULE = ("A study's one verdict joins its verdicts on the claims above by the rule that joins the parts of a "
              "section-5 question: supports when it supports every claim, cannot be tested here (and why) when it "
              "cannot test one, contradicts otherwise; `sst5_as_run_200`'s is the verdict of the rule committed with "
              "it. Every page that states a study's verdict writes it with `syw readme`'s `verdict` fact, in these "
              "words.")


@cache
def study_verdicts(results: Path = REPO / "results") -> dict[str, str]:
    """Each study's one verdict (:data:`STUDY_RULE`) over the claims of its figure (sections 4.1-4.4) or of
    case study 5, in the order ``docs/verdicts.md`` lists the studies."""
    out = {}
    for number, studies in OUR_STUDIES.items():
        for study in studies:
            groups = ours(study, results)
            out[study] = combine([verdict_for(c, study, groups)[1] for c in CLAIMS if c.figure == number])
        if number == 1 and (decided := fig1_200_verdict(results)) is not None:
            out[FIG1_200] = decided  # one claim, by the rule committed with the study
    return out | {study: combine([verdict for _, verdict in melis_answers(study, results)]) for study in MELIS_STUDIES}


def per_study(results: Path) -> list[str]:
    """The lines of ``docs/verdicts.md``'s last section: one verdict per study."""
    return (["## One verdict per study", "", STUDY_RULE, "", "| study | verdict |", "|---|---|"]
            + [f"| {study} | {verdict} |" for study, verdict in study_verdicts(results).items()] + [""])


def evidence(number: int, sources: dict[str, dict[str, Group] | str]) -> list[str]:
    """The comparison's sentence for Figure 1's pair on each source (simultaneous claims, with the limit)."""
    if number != 1:
        return []
    out = []
    for name, groups in sources.items():
        if isinstance(groups, str):
            continue
        lr, cnn = groups["lr"], groups["cnn"]
        diff = compare(cnn.scores, lr.scores, (cnn.label, lr.label))
        out.append(f"- {name}: {sentence(diff)}")
    return out


def build(results: Path = REPO / "results") -> str:
    """The text of ``docs/verdicts.md``."""
    out = ["# What the records say about the paper's claims", "",
           "Generated by `make verdicts` (`syw verdicts`) from trial records only: the authors' "
           "published trials and ours in `results/`. Do not edit; every number is printed by `figures/verdicts.py`.",
           "", f"Rules: {RULES}", ""]
    sections = {1: "4.1, Figure 1 (SST-5)", 2: "4.2, Figure 2 (SST-2)", 3: "4.3, Figure 3 (SciTail)",
                4: "4.4, Figure 4 (SQuAD)"}
    for number, title in sections.items():
        theirs = authors(number)
        mine = {s: ours(s, results) for s in OUR_STUDIES[number]}
        out += [f"## Section {title}", "", "| the paper says | the authors' trials | ours | verdict |", "|---|---|---|---|"]
        for claim in (c for c in CLAIMS if c.figure == number):
            their_text = theirs if isinstance(theirs, str) else "; ".join(judge(claim, theirs))
            rows = [verdict_for(claim, s, g) for s, g in mine.items()]
            out.append(f"| {claim.text} | {their_text} | " + "<br>".join(r[0] for r in rows) + " | "
                       + "<br>".join(f"{s}: {r[1]}" for s, r in zip(mine, rows)) + " |")
        lines = evidence(number, {"the authors' trials": theirs, **mine})
        out += (["", "Evidence (difference of the curves, 95% simultaneous claims):", ""] + lines) if lines else []
        out.append("")
        if number == 1:  # Figure 1's crossover claim, decided on 200 trials per family by a rule set before they ran
            out += decided_fig1(results)[1:] + [""]
    return "\n".join(out + melis_section(results) + per_study(results))


DESCRIPTION = """\
Write docs/verdicts.md: what the trial records (ours, and the authors' published ones) say about each
quantitative claim of the paper's case studies (Dodge et al. 2019, sections 4.1-4.4) and of case study 5
(Melis et al. 2018), with the rule behind each verdict."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="syw verdicts", description=DESCRIPTION)
    parser.add_argument("--results", type=Path, default=REPO / "results", help="folder of our trial records")
    parser.add_argument("--out", type=Path, help="the Markdown file to write (default: the checkout's docs/verdicts.md)")
    args = parser.parse_args(argv)
    args.out = args.out or in_checkout(OUT, "verdicts")
    check_writable(args.out, "verdicts")  # before the records are read
    check_complete(args.results)  # a verdict counts every record: one that does not parse stops it
    text = build(args.results)
    write_output(args.out, lambda path: path.write_text(text), "verdicts")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
