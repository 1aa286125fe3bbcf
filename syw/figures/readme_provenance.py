"""The ``provenance`` README fact: what a study's generated ``PROVENANCE.md`` (``syw provenance``) states, read
from that file rather than derived again from the records, so a page and the provenance file cannot disagree.

``of=span`` (with ``family=F``: that records file's row): the wall time from the first start to the last end
the file's family table gives; ``of=commits``: the suite commits it lists, short, in its order (``k=K``: the
K-th only). Registered in :data:`syw.figures.readme_facts.FACTS`.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from syw.figures.readme_args import Args
from syw.figures.readme_data import FactError
from syw.figures.readme_format import Value

_ROW = re.compile(r"^\| (?P<family>[^|]+?) \| \d+ \| \d+ \| \d+ \| (?P<start>[^|]+?) \| (?P<end>[^|]+?) \| [^|]+ \|$", re.M)
_COMMIT = re.compile(r"^- `(?P<commit>[0-9a-f]{7,40})(?:-dirty)?` \(", re.M)


def read_provenance(path: Path) -> tuple[dict[str, tuple[str, str]], tuple[str, ...]]:
    """``path``'s family table (family -> first start, last end, ISO times or ``-``) and its suite commits."""
    if not path.is_file():
        raise FactError(f"{path} does not exist: run `syw provenance {path.parent}`")
    text = path.read_text(encoding="utf-8")
    rows = {m["family"]: (m["start"], m["end"]) for m in _ROW.finditer(text)}
    commits_part = text.split("Suite commits:", 1)[1].split("\n\n", 2)[1] if "Suite commits:" in text else ""
    commits = tuple(m["commit"] for m in _COMMIT.finditer(commits_part))
    if not rows or not commits:
        raise FactError(f"{path}: no family table or no suite commits (is it written by `syw provenance`?)")
    return rows, commits


def _listed(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def provenance(a: Args) -> Value:
    """``of=span`` or ``of=commits`` of the study's PROVENANCE.md (see the module docstring)."""
    path = a.study().folder / "PROVENANCE.md"
    rows, commits = read_provenance(path)
    what = a.need("of")
    if what == "commits":
        if a.get("k") is None:
            return Value(_listed([f"`{c[:7]}`" for c in commits]), "text")
        k = int(a.number("k"))
        if not 1 <= k <= len(commits):
            raise FactError(f"k={k}: {path} lists {len(commits)} suite commit(s)")
        return Value(f"`{commits[k - 1][:7]}`", "text")
    if what != "span":
        raise FactError(f"of={what!r}: span or commits")
    family = a.get("family")
    if family is not None and family not in rows:
        raise FactError(f"family={family!r}: {path} has rows for {', '.join(rows)}")
    picked = [rows[family]] if family is not None else list(rows.values())
    starts = [datetime.fromisoformat(s) for s, _ in picked if s != "-"]
    ends = [datetime.fromisoformat(e) for _, e in picked if e != "-"]
    if not starts or not ends:
        raise FactError(f"{path}: no start or end time for {family or 'the study'}")
    return Value((max(ends) - min(starts)).total_seconds(), "seconds")
