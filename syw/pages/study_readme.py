"""``syw readme [--study S] [--check]``: the numbers and tables of README.md, of every
``results/<study>/README.md`` and of the pages under ``docs/``, rewritten from the records where
markers stand.

The prose is written by hand; every number in it that comes from records sits in a marker,

    best dev accuracy <!-- syw: best family=esim -->0.646<!-- /syw --> (trial <!-- syw: best family=esim of=trial -->29<!-- /syw -->)

and every table in a block marker, each on a line of its own,

    <!-- syw: table results n=1,10,N reported=yes -->
    (the generated table)
    <!-- /syw -->

A paragraph whose markers share keys may say them once, ``<!-- syw: use study=sst5 family=cnn -->``: every
marker after it up to the paragraph's end (a blank line) or the next ``use`` takes those keys unless it gives
its own (a fact takes only the keys it knows).

The text between the two tags is replaced by the fact (:data:`syw.pages.readme_facts.FACTS`) or table
(:data:`syw.pages.readme_tables.TABLES`) the marker names, rounded once from the records. A study
README's markers read its own folder; ``study=`` names another folder under results/ (and is
required in the top README and in docs/). A fact that needs a file outside the repository (the authors'
trials, SQuAD dev) is left as written where that file is not at hand, and said so. ``--check``
rewrites nothing and exits 1 when any text differs from what the records give. A marker that
cannot be computed (unknown fact or key, a family the study lacks, a tag left open) is one error
line naming the README and line, exit status 2.
"""
from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from syw.core.entry import Parser, run_main
from syw.core.manifest import OVERRIDE_HELP, require_verified
from syw.core.paths import REPO
from syw.core.records import check_complete
from syw.pages.readme_data import FactError, NeedsData
from syw.pages.readme_facts import FACTS, compute
from syw.pages.readme_tables import TABLES, compute_table

KNOWN_KEYS = {k for _, keys in [*FACTS.values(), *TABLES.values()] for k in keys}
_TAG = re.compile(r"<!-- syw: (?P<spec>.*?) -->|<!-- /syw -->")


class ReadmeError(ValueError):
    """A marker that cannot be computed; the message names the README and the line."""


@dataclass(frozen=True)
class Marker:
    line: int
    spec: str
    start: int  # first character after the opening tag
    end: int  # first character of the closing tag


@dataclass
class Outcome:
    """A README regenerated: its new text, the markers whose text changed (line, spec, old, new) and
    those left as written because a file outside the repository is not at hand (line, spec, why)."""

    text: str
    changes: list[tuple[int, str, str, str]] = field(default_factory=list)
    unchecked: list[tuple[int, str, str]] = field(default_factory=list)


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def markers(text: str, path: Path) -> list[Marker]:
    """The markers of ``text`` in order; an opening tag without its closing one (or the reverse) is an error."""
    found, opened = [], None
    for tag in _TAG.finditer(text):
        line = text.count("\n", 0, tag.start()) + 1
        if tag.group("spec") is not None and tag.group("spec").split(" ", 1)[0] == USE:
            continue  # a page's defaults, not a marker: see uses()
        if tag.group("spec") is not None:
            if opened is not None:
                raise ReadmeError(f"{shown(path)}:{opened[0]}: marker {opened[1]!r} has no <!-- /syw --> before line {line}")
            opened = (line, tag.group("spec").strip(), tag.end())
        elif opened is None:
            raise ReadmeError(f"{shown(path)}:{line}: <!-- /syw --> without an opening <!-- syw: ... -->")
        else:
            found.append(Marker(opened[0], opened[1], opened[2], tag.start()))
            opened = None
    if opened is not None:
        raise ReadmeError(f"{shown(path)}:{opened[0]}: marker {opened[1]!r} has no closing <!-- /syw -->")
    return found


USE = "use"  # <!-- syw: use key=value ... -->: defaults for the markers after it in its paragraph


@dataclass(frozen=True)
class Use:
    line: int
    at: int  # first character of the tag
    values: dict[str, str]


def uses(text: str, path: Path) -> list[Use]:
    """The ``use`` tags of ``text``: keys every marker after one takes by default, up to the paragraph's end
    (a blank line) or the next ``use``; a marker's own keys win, and a fact takes only the keys it knows."""
    found = []
    for tag in _TAG.finditer(text):
        spec = tag.group("spec")
        if spec is None or spec.split(" ", 1)[0] != USE:
            continue
        line = text.count("\n", 0, tag.start()) + 1
        try:
            words, values = parse(spec)
        except (FactError, ValueError) as err:
            raise ReadmeError(f"{shown(path)}:{line}: <!-- syw: {spec} -->: {err}") from None
        if words != [USE] or not values or set(values) - KNOWN_KEYS:
            raise ReadmeError(f"{shown(path)}:{line}: <!-- syw: {spec} -->: `use` takes keys only, of these: "
                              f"{', '.join(sorted(KNOWN_KEYS))}")
        found.append(Use(line, tag.start(), values))
    return found


def defaults(marker: Marker, text: str, found: list[Use]) -> dict[str, str]:
    """The keys the last ``use`` before ``marker`` in its paragraph gives it."""
    before = [u for u in found if u.at < marker.start and "\n\n" not in text[u.at:marker.start]]
    return before[-1].values if before else {}


def parse(spec: str) -> tuple[list[str], dict[str, str]]:
    """A marker's words (the fact, or ``table`` and its kind) and its ``key=value`` arguments (shell quoting)."""
    words, values = [], {}
    for token in shlex.split(spec):
        key, eq, value = token.partition("=")
        if not eq:
            words.append(token)
        elif key in values:
            raise FactError(f"{key}= given twice")
        else:
            values[key] = value
    if not words:
        raise FactError("no fact named")
    return words, values


def generate(marker: Marker, old: str, default_study: Path | None, results: Path, given: dict[str, str] | None = None) -> str:
    """The text a marker stands for: a fact inline, a table between blank lines; ``given``: a ``use``'s keys."""
    words, values = parse(marker.spec)
    registry = TABLES.get(words[1], (None, set())) if words[0] == "table" and len(words) > 1 else FACTS.get(words[0], (None, set()))
    values = {k: v for k, v in (given or {}).items() if k in registry[1]} | values
    if words[0] == "table":
        if len(words) != 2:
            raise FactError("a table marker is `table KIND key=value ...`")
        return "\n\n" + compute_table(words[1], values, default_study, results) + "\n\n"
    if len(words) != 1:
        raise FactError(f"one fact per marker, got {' '.join(words)!r}")
    if "\n" in old:
        raise FactError("an inline marker closes on its own line (a table's is `table KIND`)")
    return compute(words[0], values, default_study, results)


def regenerate(path: Path, results: Path = REPO / "results") -> Outcome:
    """``path``'s text with every marker's text computed again (see the module docstring)."""
    text = path.read_text(encoding="utf-8")
    path, results = path.resolve(), results.resolve()
    folder = path.parent if path.parent != results and path.is_relative_to(results) else None
    out, at, outcome = [], 0, Outcome("")
    found = uses(text, path)
    for marker in markers(text, path):
        old = text[marker.start:marker.end]
        try:
            new = generate(marker, old, folder, results, defaults(marker, text, found))
        except NeedsData as err:
            outcome.unchecked.append((marker.line, marker.spec, str(err)))
            new = old
        except (FactError, FileNotFoundError, ValueError) as err:  # a records file's own errors name it
            raise ReadmeError(f"{shown(path)}:{marker.line}: <!-- syw: {marker.spec} -->: {err}") from None
        if new != old:
            outcome.changes.append((marker.line, marker.spec, old.strip(), new.strip()))
        out += [text[at:marker.start], new]
        at = marker.end
    outcome.text = "".join(out) + text[at:]
    return outcome


def readmes(results: Path, study: str | None, root: Path = REPO) -> list[Path]:
    """The pages to regenerate: ``results/<study>/README.md``, or the top README, every study's and
    every page of ``docs/`` (one without markers stays as it is) under the checkout ``root``."""
    if study is not None:
        path = results / study / "README.md"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such README")
        return [path]
    return [root / "README.md"] + sorted(results.glob("*/README.md")) + sorted((root / "docs").glob("*.md"))


def run(results: Path, study: str | None, check: bool, root: Path = REPO) -> int:
    """Rewrite (or with ``check`` compare) the pages; 1 when ``check`` finds text the records contradict."""
    stale = 0
    for path in readmes(results, study, root):
        outcome = regenerate(path, results)
        for why in dict.fromkeys(why for _, _, why in outcome.unchecked):
            lines = [str(line) for line, _, reason in outcome.unchecked if reason == why]
            print(f"{shown(path)}: {len(lines)} marker(s) left as written (lines {', '.join(dict.fromkeys(lines))}): "
                  f"they need {why}", file=sys.stderr)
        for line, spec, old, new in outcome.changes:
            what = "differs from the records" if check else "updated"
            print(f"{shown(path)}:{line}: {spec}: {what}: {old[:60]!r} -> {new[:60]!r}")
        if outcome.changes and not check:
            path.write_text(outcome.text, encoding="utf-8")
        stale += bool(outcome.changes)
    return 1 if check and stale else 0


def main(argv: list[str] | None = None) -> int:
    """``syw readme [--study S] [--check] [--results DIR]``."""
    p = Parser(prog="syw readme", description="Rewrite the numbers marked in the READMEs (README.md, "
                                "docs/ and results/<study>/README.md) from the records; with --check, write nothing and "
                                "exit 1 when one of them differs.")
    p.add_argument("--study", help="only results/<study>/README.md")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a README's numbers differ")
    p.add_argument("--results", type=Path, default=REPO / "results", help="the folder of our trial records")
    p.add_argument("--allow-unverified", action="store_true", help=OVERRIDE_HELP)
    args = p.parse_args(argv)
    check_complete(args.results)  # a page counts every record: one that does not parse stops it
    require_verified(args.results, allow=args.allow_unverified)  # and every record as written: an edited one stops it
    return run(args.results, args.study, args.check)


if __name__ == "__main__":
    sys.exit(run_main(main))
