"""``python -m syw.pages.readme_census``: how many markers of each fact kind the results pages hold
(issue 61 item 4), so that which kinds carry the pages, and which are rare, is measured, not guessed.

One row per kind: markers, pages that use it, and the largest number of markers on one line of any page.
"""
from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from syw.core.entry import Parser, run_main
from syw.core.paths import REPO
from syw.pages.study_readme import markers, parse, readmes, shown


def census(pages: list[Path]) -> tuple[Counter, dict[str, set[str]], Counter]:
    """Markers per kind (``table KIND`` for a block), the pages using each kind, and markers per (page, line)."""
    kinds: Counter = Counter()
    where: dict[str, set[str]] = defaultdict(set)
    lines: Counter = Counter()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for marker in markers(text, page):
            words, _ = parse(marker.spec)
            kind = " ".join(words[:2]) if words[0] == "table" else words[0]
            kinds[kind] += 1
            where[kind].add(shown(page))
            lines[(shown(page), marker.line)] += 1
    return kinds, where, lines


def main(argv: list[str] | None = None) -> int:
    Parser(prog="python -m syw.pages.readme_census", description=__doc__.split("\n\n")[0]).parse_args(argv)
    pages = readmes(REPO / "results", None)
    kinds, where, lines = census(pages)
    print(f"{sum(kinds.values())} markers of {len(kinds)} kinds in {len({p for s in where.values() for p in s})} pages")
    print("| kind | markers | pages |\n|---|---|---|")
    for kind, n in kinds.most_common():
        print(f"| {kind} | {n} | {len(where[kind])} |")
    busy = sorted(((n, page, line) for (page, line), n in lines.items() if n >= 4), reverse=True)
    print(f"lines with 4 or more markers: {len(busy)}; the busiest: "
          + ", ".join(f"{page}:{line} ({n})" for n, page, line in busy[:5]))
    widths = sorted(((len(p.read_text(encoding="utf-8").splitlines()[line - 1]), shown(p), line)
                     for p in pages for line in {ln for (page, ln) in lines if page == shown(p)}), reverse=True)
    print("longest lines with markers (characters): " + ", ".join(f"{page}:{line} ({n:,})" for n, page, line in widths[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
