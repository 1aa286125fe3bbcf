"""The tables a README block marker names: ``<!-- syw: table results ... -->`` (one row per family,
the study's standard results table) and ``<!-- syw: table trials ... -->`` (one row per trial)."""
from __future__ import annotations

import statistics
from pathlib import Path

from syw.curve.sources import SOURCES
from syw.pages.readme_args import Args, best_row, curve
from syw.pages.readme_data import FactError, entry, field, figure_of
from syw.pages.readme_facts import reaching
from syw.pages.readme_format import Value, field_kind, render
from syw.pages.verdicts import study_verdicts

RESULTS_KEYS = {"study", "where", "n", "below", "reported", "scale"}
TRIALS_KEYS = {"study", "where", "family", "columns", "headers", "with"}


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def results_table(a: Args) -> str:
    """Per family: ok trials, best value (its trial), Eq. 8 at each budget of ``n`` (default 1,10,N),
    mean trial time (``scale=log``: Eq. 8 of the values' logarithms, written back as exp); with
    ``reported=yes`` the trials to reach the paper's reported number (Fig. 3, 4),
    with ``below=X`` the trials whose value is X or worse. A family with fewer trials than a budget
    (one still running) shows ``-`` there."""
    families = a.each()
    budgets = (a.get("n") or "1,10,N").split(",")
    most = max(len(t.rows) for t in families)
    for n in budgets:
        if n != "N" and not (n.isdigit() and 1 <= int(n) <= most):
            raise FactError(f"n={n!r}: a budget from 1 to the {most} trials of the largest family, or N")
    sizes = {len(t.rows) for t in families}
    common = next(iter(sizes)) if len(sizes) == 1 else "N"
    names = [f"n={common if n == 'N' else n}" for n in budgets]
    best = "max" if families[0].maximize else "min"  # Eq. 8's expected best: a maximum, or with direction min a minimum
    scale = a.get("scale")
    expected = f"E[{best}]" if scale is None else f"exp E[{best} log]"
    header = ["family", "ok trials", "best (trial)", f"{expected} {names[0]}", *names[1:], "mean trial time"]
    references = {}
    if scale is not None and a.get("reported") is not None:
        raise FactError("scale= and reported= together: the trials to reach a reported number are on the values' own scale")
    if a.get("reported") is not None:
        spec = figure_of(a.study().name)
        references = spec.references if spec else {}
        if not references:
            raise FactError("reported=: this study's figure has no reported numbers (figures/specs.py references)")
        header.append("trials to reach the reported number")
    below = a.number("below") if a.get("below") is not None else None
    if below is not None:
        header.append(f"at {render(Value(below, 'score'), None)} or {'below' if families[0].maximize else 'above'}")
    rows = []
    for t in families:
        top = best_row(t)
        values = curve(t, scale=scale)
        row = [t.label, render(Value(len(t.rows), "count"), None), f"{render(Value(top['value'], 'score'), None)} (trial {top['trial']})"]
        for n in budgets:
            k = len(t.rows) if n == "N" else int(n)
            row.append(render(Value(float(values[k - 1]), "score"), None) if k <= len(t.rows) else "-")
        row.append(render(Value(statistics.mean(field(r, "seconds") for r in t.rows), "seconds"), None))
        if references:
            target = references.get(t.family)
            row.append("-" if target is None else f"{target:g}: {render(reaching(t, target), None)}")
        if below is not None:
            row.append(str(sum((r["value"] <= below) if t.maximize else (r["value"] >= below) for r in t.rows)))
        rows.append(row)
    return _markdown(header, rows)


def trials_table(a: Args) -> str:
    """One row per ok trial of ``family``: ``columns`` (comma-separated ``FIELD[:FMT]``; ``with.FIELD``
    reads the same trial of the same family in study ``with``, a trial it lacks is left out), headed
    by ``headers`` (``|``-separated)."""
    mine = a.trials()
    columns = [c.partition(":") for c in (a.get("columns") or "trial,value,minutes").split(",")]
    headers = a.get("headers").split("|") if a.get("headers") else [name for name, _, _ in columns]
    if len(headers) != len(columns):
        raise FactError(f"headers= names {len(headers)} columns, columns= {len(columns)}")
    rows = [[render(Value(field(r, name), field_kind(name)), fmt or None) for name, _, fmt in columns] for r in mine.rows]
    return _markdown(headers, rows)


def verdicts_table(a: Args) -> str:
    """One row per study of ``results/`` that ``docs/verdicts.md`` judges: its one verdict, in that file's words
    (:data:`syw.pages.verdicts.STUDY_RULE`; the reason left to the file)."""
    rows = [[f"`{study}`", said.split(" (")[0]] for study, said in study_verdicts(a.results).items()
            if (a.results / study).is_dir()]
    return _markdown(["study", "verdict (docs/verdicts.md)"], rows)


def sources_table(a: Args) -> str:
    """The kinds of source ``syw curve`` reads, from its registry (``syw.curve.sources.SOURCES``), in the order
    it tries them; ``what=no`` leaves out what each reads (the README's short form)."""
    if a.get("what") not in (None, "no"):
        raise FactError(f"what={a.get('what')!r}: leave it out, or what=no for the short table")
    brief = a.get("what") == "no"
    rows = [[f"`{k.name}`", *([] if brief else [k.what]), f"`pip install '.[{k.extra}]'`" if k.extra else "-"] for k in SOURCES]
    return _markdown(["kind", *([] if brief else ["what is read"]), "needs"], rows)


TABLES = {"results": (results_table, RESULTS_KEYS), "trials": (trials_table, TRIALS_KEYS),
          "verdicts": (verdicts_table, set()), "sources": (sources_table, {"what"})}


def compute_table(kind: str, values: dict[str, str], default_study: Path | None, results: Path) -> str:
    """The Markdown table of ``kind`` for a block marker's ``values``."""
    return entry(TABLES, "table", kind, values)(Args(values, default_study, results))
