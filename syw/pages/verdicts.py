"""``make verdicts`` (``syw verdicts``): ``docs/verdicts.md``, what the records say about
each quantitative claim of the paper's case studies (Dodge et al. 2019, sections 4.1-4.4, and case study 5,
Melis et al. 2018, in :mod:`syw.pages.verdicts_melis`).

Every number in the file is printed here from records: our trials (``results/<study>/``) and the
authors' published trials (``syw.figures.sources.from_paper``, sha256-checked). Each claim is read three ways
(:mod:`syw.pages.verdicts_claims`): its point estimate off the Eq. 8 curves, the 95% interval its kind's rule reads,
and the three-valued verdict by that rule (:mod:`syw.pages.verdict_rules`, issue 73: supports at 95%, contradicts at
95%, undecided with N trials), once on the authors' trials and once on each of our studies; a reduced study (a
CPU-sized stand-in, ``reduced`` in its config) or a missing one cannot test a claim about the paper's scale, and says why.
"""
from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from syw.analysis.compare import sentence
from syw.analysis.group import Group
from syw.analysis.inference import compare
from syw.core.entry import Parser, check_writable, run_main, write_output
from syw.core.errors import DataError, DataMissingError
from syw.core.manifest import OVERRIDE_HELP, require_verified
from syw.core.paths import REPO, in_checkout
from syw.core.records import check_complete
from syw.experiments.study import load_study
from syw.figures.sources import from_paper, from_records
from syw.figures.specs import FIGURES
from syw.pages import verdict_rules as rules
from syw.pages.verdicts_claims import CLAIMS, HEADER, Claim, Reading, read, row
from syw.pages.verdicts_fig1_200 import STUDY as FIG1_200
from syw.pages.verdicts_fig1_200 import section as decided_fig1
from syw.pages.verdicts_fig1_200 import verdict as fig1_200_verdict
from syw.pages.verdicts_melis import STUDIES as MELIS_STUDIES
from syw.pages.verdicts_melis import answers as melis_answers
from syw.pages.verdicts_melis import section as melis_section
from syw.pages.verdicts_sequential import STUDY as SEQUENTIAL
from syw.pages.verdicts_sequential import section as sequential_section
from syw.pages.verdicts_sequential import verdict as sequential_verdict

OUT = "docs/verdicts.md"  # in the checkout (syw.core.paths.in_checkout)
OUR_STUDIES = {1: ("sst5", "sst5_as_run"), 2: ("sst2_bcn", "sst2_bcn_reduced_7_epochs"),
               3: ("scitail", "scitail_cpu", "scitail_reduced"), 4: ("squad", "squad_reduced")}
NEW_READING = ("These verdicts are a new reading of the same records by rules stated after the records were read (issue "
               "73): each claim is *supported at 95%* when it holds for every value of the 95% interval its rule reads, "
               "*contradicted at 95%* when it fails for every value, and *undecided with N trials* otherwise (more trials "
               "could decide it). The page read point estimates alone before; they stay beside each verdict, labelled "
               "as such. No study's committed configuration changed, and `sst5_as_run_200` keeps the verdict of the rule "
               "committed with it before its trials ran, worded as these are.")
RULES = " ".join(rules.RULES.values()) + (
    " A reduced study (a CPU-sized stand-in, `reduced` in its config) or one without records cannot test a claim about "
    "the paper's scale and says why; a reduced study's own reading follows as evidence. The evidence under Figure 1 "
    "is `syw curve`'s comparison (95% simultaneous claims, `syw.analysis.inference`), which names no leader past the "
    "limit floor(N ln 2 / ln 40).")
__all__ = ["CLAIMS", "Claim", "OUT", "OUR_STUDIES", "RULES", "build", "main", "study_verdicts", "verdict_for"]


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


def verdict_for(claim: Claim, study: str, groups: dict[str, Group] | str) -> Reading:
    """``study``'s reading of ``claim`` (:func:`syw.pages.verdicts_claims.read`): cannot be tested here without
    records, or at a reduced scale (its own reading then stays, as evidence)."""
    if isinstance(groups, str):
        return Reading("-", "-", rules.untestable(f"data: {groups}"))
    found = read(claim, groups)
    reduced = load_study(study).reduced
    if reduced and found.verdict.state != "untestable":
        return Reading(found.point, found.interval, rules.untestable(f"scale: {reduced.removeprefix('REDUCED: ')}"),
                       found.verdict)
    return found


STUDY_RULE = ("A study's one verdict joins its verdicts on the claims above as the parts of a claim are joined (the rules "
              "above); `sst5_as_run_200`'s and `sst5_sequential`'s are the verdicts of the rules committed with them "
              "(`sst5_sequential`'s once its stopping rule has stopped). Every page that states a study's verdict writes "
              "it with `syw readme`'s `verdict` fact, in these words.")


@cache
def study_verdicts(results: Path = REPO / "results") -> dict[str, str]:
    """Each study's one verdict (:data:`STUDY_RULE`) over the claims of its figure (sections 4.1-4.4) or of
    case study 5, in the order ``docs/verdicts.md`` lists the studies."""
    out = {}
    for number, studies in OUR_STUDIES.items():
        for study in studies:
            groups = ours(study, results)
            out[study] = str(rules.combine([verdict_for(c, study, groups).verdict for c in CLAIMS if c.figure == number]))
        if number == 1 and (decided := fig1_200_verdict(results)) is not None:
            out[FIG1_200] = str(decided)  # one claim, by the rule committed with the study
        if number == 1 and (decided := sequential_verdict(results)) is not None:
            out[SEQUENTIAL] = str(decided)  # by the stopping rule committed with the study, where it stopped
    return out | {study: str(rules.combine([r.verdict for r in melis_answers(study, results)])) for study in MELIS_STUDIES}


def authors_verdicts() -> dict[int, str]:
    """The authors' trials' one verdict per figure, by the same rules and join as a study's."""
    out = {}
    for number in FIGURES:
        theirs = authors(number)
        out[number] = str(rules.untestable(f"data: {theirs}") if isinstance(theirs, str) else
                          rules.combine([read(c, theirs).verdict for c in CLAIMS if c.figure == number]))
    return out


def per_study(results: Path) -> list[str]:
    """The lines of ``docs/verdicts.md``'s last section: one verdict per study, and per figure of the authors' trials."""
    return (["## One verdict per study", "", STUDY_RULE, "", "| study | verdict |", "|---|---|"]
            + [f"| {study} | {verdict} |" for study, verdict in study_verdicts(results).items()]
            + ["", "The authors' published trials, by the same rules and join:", "", "| figure | verdict |", "|---|---|"]
            + [f"| Figure {number} | {verdict} |" for number, verdict in authors_verdicts().items()] + [""])


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
        out.append(f"- {name}: {sentence(diff, (cnn.scores.size, lr.scores.size))}")
    return out


def build(results: Path = REPO / "results") -> str:
    """The text of ``docs/verdicts.md``."""
    out = ["# What the records say about the paper's claims", "",
           "Generated by `make verdicts` (`syw verdicts`) from trial records only: the authors' "
           "published trials and ours in `results/`. Do not edit; every number is printed by `syw/pages/verdicts.py`.",
           "", NEW_READING, "", f"Rules: {RULES}", "", rules.JOIN, ""]
    sections = {1: "4.1, Figure 1 (SST-5)", 2: "4.2, Figure 2 (SST-2)", 3: "4.3, Figure 3 (SciTail)",
                4: "4.4, Figure 4 (SQuAD)"}
    for number, title in sections.items():
        theirs = authors(number)
        mine = {s: ours(s, results) for s in OUR_STUDIES[number]}
        out += [f"## Section {title}", "", *HEADER.split("\n")]
        for claim in (c for c in CLAIMS if c.figure == number):
            out.append(row(claim.text, "the authors' trials", verdict_for(claim, "the authors' trials", theirs)
                           if isinstance(theirs, str) else read(claim, theirs)))
            out += [row("", study, verdict_for(claim, study, groups)) for study, groups in mine.items()]
        lines = evidence(number, {"the authors' trials": theirs, **mine})
        out += (["", "Evidence (difference of the curves, 95% simultaneous claims):", ""] + lines) if lines else []
        out.append("")
        if number == 1:  # Figure 1's crossover claim, decided on 200 trials per family by a rule set before they ran
            out += decided_fig1(results)[1:] + [""]
            out += sequential_section(results)[1:] + [""]  # the small-budget claim, decided look by look
    return "\n".join(out + melis_section(results) + per_study(results))


DESCRIPTION = """\
Write docs/verdicts.md: what the trial records (ours, and the authors' published ones) say about each
quantitative claim of the paper's case studies (Dodge et al. 2019, sections 4.1-4.4) and of case study 5
(Melis et al. 2018), with the rule behind each verdict."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="syw verdicts", description=DESCRIPTION)
    parser.add_argument("--results", type=Path, default=REPO / "results", help="folder of our trial records")
    parser.add_argument("--out", type=Path, help="the Markdown file to write (default: the checkout's docs/verdicts.md)")
    parser.add_argument("--allow-unverified", action="store_true", help=OVERRIDE_HELP)
    args = parser.parse_args(argv)
    args.out = args.out or in_checkout(OUT, "verdicts")
    check_writable(args.out, "verdicts")  # before the records are read
    check_complete(args.results)  # a verdict counts every record: one that does not parse stops it
    require_verified(args.results, allow=args.allow_unverified)  # and every record as written: an edited one stops it
    text = build(args.results)
    write_output(args.out, lambda path: path.write_text(text), "verdicts")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
