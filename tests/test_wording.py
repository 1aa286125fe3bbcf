"""Issue 73 item 3: where a comparison names no leader it is "undecided with N trials" (more trials could decide it),
never "cannot be told apart" or "neither": in every page and table the suite writes, and in the string literals of
its code outside syw/analysis (whose sentences, syw.analysis.compare.PHRASES, are worded there)."""
import ast
import re
from pathlib import Path

from syw.analysis.compare import PHRASES
from syw.core.paths import REPO

BANNED = ("cannot be told apart", "neither for", "no pair of cells can be told apart")
OUTPUTS = ["README.md", "docs/*.md", "figures/*.md", "figures/*.tex", "results/*/README.md"]


def analysis_sentences(text: str) -> str:
    """``text`` without syw.analysis.compare's own "tied" sentences while that phrase still says "cannot be told apart"
    (its wording is changed in syw/analysis; once it no longer does, nothing is removed and this test holds it too)."""
    tied = PHRASES["tied"]
    if not any(b in tied for b in BANNED):
        return text
    pattern = re.escape(tied).replace(re.escape("{span}"), r"n (= \d+|in \[\d+, \d+\])")
    return re.sub(pattern, "", text)


def test_no_page_or_table_the_suite_writes_says_cannot_be_told_apart():
    pages = sorted({p for pattern in OUTPUTS for p in REPO.glob(pattern)})
    assert len(pages) > 20
    for page in pages:
        text = analysis_sentences(page.read_text(encoding="utf-8"))
        for phrase in BANNED:
            assert phrase not in text, f"{page.relative_to(REPO)}: {phrase!r}"


def literals(path: Path):
    """Every string constant of a module (f-strings' literal parts too), with its line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_string_literal_outside_syw_analysis_says_cannot_be_told_apart_or_neither():
    modules = [p for p in (REPO / "syw").rglob("*.py") if "analysis" not in p.relative_to(REPO / "syw").parts[:1]]
    assert len(modules) > 100
    for path in modules:
        for line, text in literals(path):
            where = f"{path.relative_to(REPO)}:{line}"
            assert not any(phrase in text for phrase in BANNED), where
            assert text.strip().lower() != "neither", f"{where}: a comparison's 'neither' (say 'undecided with N trials')"
