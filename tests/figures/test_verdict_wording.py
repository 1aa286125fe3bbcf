"""Issue 62 item 7: each study has one verdict by one rule (``syw.pages.verdicts.STUDY_RULE``), and every
results page says it in the words of ``docs/verdicts.md``, through the ``verdict`` fact or the ``verdicts`` table.

Read from the committed pages (``syw readme --check`` keeps them equal to the records), so a page that types a
verdict by hand, or words it differently, fails here."""
import re
from pathlib import Path

import pytest

from syw.core.paths import REPO
from syw.pages import verdicts
from syw.pages.readme_facts import compute
from syw.pages.study_readme import markers, parse, readmes

RESULTS = REPO / "results"
WORDS = re.compile(r"\b(supports|contradicts|undecided|cannot be tested)\b")  # undecided: sst5_as_run_200's rule


def stated() -> dict[str, str]:
    """docs/verdicts.md's one verdict per study, read from its table."""
    text = (REPO / "docs" / "verdicts.md").read_text(encoding="utf-8")
    section = text.split("## One verdict per study", 1)[1].split("The authors' published trials", 1)[0]
    return dict(re.findall(r"^\| (\w+) \| (.+) \|$", section, flags=re.M)[1:])


def pages() -> list[Path]:
    return [p for p in readmes(RESULTS, None) if p.name != "verdicts.md"]


def verdict_markers(page: Path):
    """Each marker of ``page`` that states a verdict: (its words, its key=values, its text)."""
    text = page.read_text(encoding="utf-8")
    for marker in markers(text, page):
        words, values = parse(marker.spec)
        if words[0] == "verdict" or words == ["table", "verdicts"]:
            yield words, values, text[marker.start:marker.end]


def test_the_verdicts_file_gives_one_verdict_per_study_in_its_own_words():
    table = stated()
    assert list(table) == list(verdicts.study_verdicts(RESULTS))
    assert table["sst5"] == "contradicts at 95%" and table["sst5_as_run"] == "undecided with 50 trials per family"
    assert table["sst5_as_run_200"] == "undecided with 200 trials per family"  # the rule committed with it
    three = re.compile(r"^(supports at 95%|contradicts at 95%|undecided with \d+ \w+|cannot be tested here \()")
    assert all(three.match(v) for v in table.values())


def test_every_page_states_a_study_verdict_as_the_verdicts_file_does():
    table, seen = stated(), 0
    for page in pages():
        for words, values, text in verdict_markers(page):
            if words[0] == "table":
                rows = dict(re.findall(r"^\| `(\w+)` \| (.+) \|$", text, flags=re.M))
                assert rows and all(table[s].split(" (")[0] == v for s, v in rows.items()), page
            elif "claim" not in values:
                study = values.get("study", page.parent.name)
                assert text in (table[study], table[study].split(" (")[0]), f"{page}: {text!r}"
            seen += 1
    assert seen >= 8


def test_no_page_types_a_verdict_word_outside_a_verdict_marker():
    for page in pages():
        text = page.read_text(encoding="utf-8")
        spans = [(m.start, m.end) for m in markers(text, page) if parse(m.spec)[0][0] in ("verdict", "table", "compared")]
        for hit in WORDS.finditer(text):
            assert any(a <= hit.start() < b for a, b in spans), \
                f"{page.relative_to(REPO)}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group()!r} typed by hand"


def test_each_judged_study_states_its_verdict_in_its_readme_and_the_summaries():
    for study in stated():
        readme = RESULTS / study / "README.md"
        if readme.is_file():
            assert any(w == ["verdict"] and "claim" not in v for w, v, _ in verdict_markers(readme)), readme
    for page in (REPO / "README.md", REPO / "docs" / "results.md"):
        assert any(w == ["table", "verdicts"] for w, _, _ in verdict_markers(page)), page


def test_the_study_verdict_fact_and_its_errors():
    assert compute("verdict", {"study": "scitail_cpu"}, None, RESULTS) == "cannot be tested here"
    with pytest.raises(ValueError, match="no verdict in docs/verdicts.md"):
        compute("verdict", {"study": "sst5_as_run_replay"}, None, RESULTS)


THREE = re.compile(r"^(supports at 95%|contradicts at 95%|undecided with \d+ [^|]+)$")


def test_every_claim_of_every_source_has_a_three_valued_verdict_with_its_interval():
    """Issue 73's bar: each row of docs/verdicts.md's claim tables (the authors' trials and each study) gives a verdict
    from the intervals, the interval it reads, and its point estimate labelled apart; a study that cannot test a claim
    says why and, where it has records (a reduced study), gives its own reading as evidence."""
    text = (REPO / "docs" / "verdicts.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.count(" | ") == 5
            and not line.startswith("| the paper says") and not line.startswith("| Melis et al. say")
            and not line.startswith(("| n |", "| 1 |", "| 5 |", "| 20 |"))]  # sst5_as_run_200's table of its own rule
    assert len(rows) >= 30
    decided = 0
    for line in rows:
        _, records, point, interval, said, settle = [c.strip() for c in line.strip("|").split(" | ")]
        if said.startswith("cannot be tested here (data: "):
            assert (point, interval) == ("-", "-") or "no seed reruns" in said, line
            continue
        evidence = said.split("; as evidence: ")[-1] if said.startswith("cannot be tested here (scale: ") else said
        assert THREE.match(evidence), line
        assert interval != "-" and any(ch.isdigit() for ch in interval), line  # the interval the verdict reads
        if said.startswith("undecided"):  # issue 73: and the trials per family that would decide it
            assert "trials per family" in settle and any(ch.isdigit() for ch in settle), line
        decided += 1
    assert decided >= 15
    assert "point estimate (not a verdict)" in text and "No verdict" not in text
