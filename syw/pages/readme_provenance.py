"""The ``provenance`` README fact: what a study's generated ``PROVENANCE.md`` (``syw provenance``) states, read
from that file rather than derived again from the records, so a page and the provenance file cannot disagree.

``of=span`` (with ``family=F``: that records file's row): the wall time from the first start to the last end
the file's family table gives; ``of=commits``: the suite commits it lists, short, in its order (``k=K``: the
K-th only); ``of=wall``: the wall time of the commands run.log records (``segment=K``: the K-th; without, all
but a last one still running); ``of=start``, ``of=end`` with ``segment=K``: when it started or ended (UTC,
``fmt`` a strftime pattern); ``of=parallel``: the most trials running at once. Registered in
:data:`syw.pages.readme_facts.FACTS`.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from syw.pages.readme_args import Args
from syw.pages.readme_data import FactError
from syw.pages.readme_format import Value

_ROW = re.compile(r"^\| (?P<family>[^|]+?) \| \d+ \| \d+ \| \d+ \| (?P<start>[^|]+?) \| (?P<end>[^|]+?) \| [^|]+ \|$", re.M)
_COMMIT = re.compile(r"^- `(?P<commit>[0-9a-f]{7,40})(?:-dirty)?` \(", re.M)
_COMMAND = re.compile(r"^\| (?P<k>\d+) \| (?P<start>[^|]+?) \| (?P<end>[^|]+?) \| (?P<wall>[^|]+?) \|$", re.M)
_PARALLEL = re.compile(r"^Most trials running at once \([^)]*\): (?P<n>\d+)$", re.M)


def read_provenance(path: Path) -> tuple[dict[str, tuple[str, str]], tuple[str, ...], str]:
    """``path``'s family table (family -> first start, last end, ISO times or ``-``), its suite commits and its text."""
    if not path.is_file():
        raise FactError(f"{path} does not exist: run `syw provenance {path.parent}`")
    text = path.read_text(encoding="utf-8")
    rows = {m["family"]: (m["start"], m["end"]) for m in _ROW.finditer(text)}
    commits_part = text.split("Suite commits:", 1)[1].split("\n\n", 2)[1] if "Suite commits:" in text else ""
    commits = tuple(m["commit"] for m in _COMMIT.finditer(commits_part))
    if not rows or not commits:
        raise FactError(f"{path}: no family table or no suite commits (is it written by `syw provenance`?)")
    return rows, commits, text


def _listed(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _commands(path: Path, text: str) -> list[tuple[datetime, datetime | None, float | None]]:
    """The file's run.log table: each command's start, end and wall seconds (None where it says ``-``)."""
    rows = [(datetime.fromisoformat(m["start"]), None if m["end"] == "-" else datetime.fromisoformat(m["end"]),
             None if m["wall"] == "-" else float(m["wall"])) for m in _COMMAND.finditer(text)]
    if not rows:
        raise FactError(f"{path}: no commands from a run.log (the study folder has none, or rerun `syw provenance`)")
    return rows


def _run(a: Args, path: Path, text: str, what: str) -> Value:
    """``of=wall``, ``start``, ``end`` or ``parallel`` of ``path``'s ``text`` (see the module docstring)."""
    if what == "parallel":
        if (m := _PARALLEL.search(text)) is None:
            raise FactError(f"{path}: no 'Most trials running at once' line (rerun `syw provenance`)")
        return Value(int(m["n"]), "count")
    commands = _commands(path, text)
    if a.get("segment") is not None:
        k = int(a.number("segment"))
        if not 1 <= k <= len(commands):
            raise FactError(f"segment={k}: {path} lists {len(commands)} command(s)")
        picked = [commands[k - 1]]
    elif what == "wall":  # a last command still running (no end yet) is left out
        picked = commands[:-1] if commands[-1][2] is None and len(commands) > 1 else commands
    else:
        raise FactError(f"of={what}: needs segment=K, the command's number in {path}")
    if what == "wall":
        if any(wall is None for _, _, wall in picked):
            raise FactError(f"{path}: a command without an end stamp or `real` line")
        return Value(sum(wall for _, _, wall in picked), "seconds")
    at = picked[0][0] if what == "start" else picked[0][1]
    if at is None:
        raise FactError(f"of=end: command {a.get('segment')} of {path} has no end stamp")
    return Value(at, "clock")


def provenance(a: Args) -> Value:
    """``of=span``, ``commits``, ``wall``, ``start``, ``end`` or ``parallel`` of the study's PROVENANCE.md
    (see the module docstring)."""
    path = a.study().folder / "PROVENANCE.md"
    rows, commits, text = read_provenance(path)
    what = a.need("of")
    if what in ("wall", "start", "end", "parallel"):
        return _run(a, path, text, what)
    if what == "commits":
        if a.get("k") is None:
            return Value(_listed([f"`{c[:7]}`" for c in commits]), "text")
        k = int(a.number("k"))
        if not 1 <= k <= len(commits):
            raise FactError(f"k={k}: {path} lists {len(commits)} suite commit(s)")
        return Value(f"`{commits[k - 1][:7]}`", "text")
    if what != "span":
        raise FactError(f"of={what!r}: span, commits, wall, start, end or parallel")
    family = a.get("family")
    if family is not None and family not in rows:
        raise FactError(f"family={family!r}: {path} has rows for {', '.join(rows)}")
    picked = [rows[family]] if family is not None else list(rows.values())
    starts = [datetime.fromisoformat(s) for s, _ in picked if s != "-"]
    ends = [datetime.fromisoformat(e) for _, e in picked if e != "-"]
    if not starts or not ends:
        raise FactError(f"{path}: no start or end time for {family or 'the study'}")
    return Value((max(ends) - min(starts)).total_seconds(), "seconds")
