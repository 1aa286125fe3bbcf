"""The reporting checklist (Text Box 1) and appendix-style tables for a study, filled from its records."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.core.units import human_duration
from syw.curve.checklist import MISSING, Entry, checklist_lines, expected_table
from syw.experiments.space import Family
from syw.experiments.study import Study, load_study
from syw.figures.budgets import budget_rows, reach_table
from syw.figures.sources import PAPER_DIR, from_paper, paper_rows, study_rows
from syw.figures.specs import FIGURES

BUDGETS = (1, 2, 5, 10, 20, 50, 100)


def describe(spec: dict) -> str:
    """A search-space entry as the appendix tables print it."""
    kind = spec["distribution"]
    if kind == "choice":
        return f"choice{spec['values']}"
    if kind == "constant":
        return str(spec["value"])
    bracket = ")" if spec.get("exclusive_high") else "]"
    name = {"uniform": "uniform-float", "uniform_int": "uniform-integer", "loguniform": "loguniform-float"}[kind]
    return f"{name}[{spec['low']:g}, {spec['high']:g}{bracket}"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _family_section(family: Family, rows: pd.DataFrame | None, group: Group, n_failed: int, metric: str, seed: Any,
                    maximize: bool = True) -> dict:
    """Everything the appendix table and the checklist need for one family (best = highest value,
    or lowest when the study minimizes; Eq. 8 in the same direction)."""
    reported = family.reported or {}
    if rows is not None and not rows.empty:
        best = rows.loc[rows["value"].idxmax() if maximize else rows["value"].idxmin()]
        hardware = sorted({f"{r.get('hardware.cpu', '?')} ({r.get('hardware.cpu_count', '?')} cores), GPU: {r.get('hardware.gpu', '?')}"
                           for _, r in rows.iterrows()})
        commits = sorted(set(rows.get("versions.suite_commit", pd.Series(dtype=str)).dropna()))
        best_params = {k.removeprefix("params."): best[k] for k in rows.columns if k.startswith("params.")}
        info = {"hardware": "; ".join(hardware),
                "implementation": f"`{family.train_target}` at suite commit {', '.join(commits) or MISSING}",
                "strategy": f"uniform random sampling (seeded: study seed {seed}, trial generator from (seed, family, index))",
                "best_params": best_params}
    else:
        info = {"hardware": f"{reported['hardware']} (as reported in Table {family.table})" if reported.get("hardware") else MISSING,
                "implementation": reported.get("implementation", MISSING),
                "strategy": reported.get("search_strategy", MISSING), "best_params": {}}
    _, em, sd = curve_of(group, maximize).upto()
    info.update(
        label=family.label, trials=group.scores.size, failed=n_failed, metric=metric, duration=group.mean_duration,
        best=float(group.scores.max() if maximize else group.scores.min()),
        em=em, sd=sd,
        space=[(k, describe(v), _fmt(info["best_params"].get(k, MISSING))) for k, v in family.search.items()]
        + [(k, _fmt(v), _fmt(info["best_params"].get(k, v))) for k, v in family.fixed.items() if k not in family.search],
    )
    return info


def build(study: str, source: str = "ours", results_dir: Path | None = None, paper_dir: Path = PAPER_DIR) -> tuple[str, str]:
    """Markdown and LaTeX reports of ``study`` (source "ours": records; "paper": the authors' file)."""
    config = load_study(study)
    families = {name: config.family(name) for name in config.families}
    sections, groups = {}, []
    if source == "ours":
        parts, n_failed = study_rows(study, results_dir)
        for name, rows in parts.items():
            family = families[name]
            group = Group(name, rows["value"].to_numpy(float), rows["duration_seconds"].to_numpy(float), family.label)
            groups.append(group)
            sections[name] = _family_section(family, rows, group, n_failed.get(name, 0), config.metric, rows["seed"].iloc[0],
                                             maximize=config.maximize)
    else:
        spec = next(s for s in FIGURES.values() if s.study == study)
        rows = paper_rows(spec, paper_dir)
        for group in from_paper(spec, paper_dir):
            groups.append(group)
            sections[group.name] = _family_section(families[group.name], None, group, 0, config.metric, None)
            sections[group.name]["file_best"] = searched_columns(rows[group.name], spec.paper.metric_column)
    if not sections:
        raise FileNotFoundError(f"no trials for study {study} ({source})")
    budgets = _budgets(study, source, groups) if config.maximize else []
    notes = _dirty_note(study, results_dir) if any("-dirty" in s["implementation"] for s in sections.values()) else []
    return _markdown(config, sections, source, budgets, notes), _latex(study, sections)


def _dirty_note(study: str, results_dir: Path) -> list[str]:
    """What ``-dirty`` after a suite commit means (:func:`syw.experiments.trial.suite_commit`: the tracked files had
    changes not committed when the run started), and where the study's folder says what is known of them."""
    known = f" What is known of them: `results/{study}/README.md`." if (Path(results_dir) / study / "README.md").is_file() else ""
    return ["A suite commit marked `-dirty`: the run that wrote those records started from a tree whose tracked files held "
            f"changes not yet committed (`git status`); the records do not say which.{known}", ""]


def searched_columns(rows: pd.DataFrame, metric: str) -> dict[str, Any]:
    """The best trial's values of the columns that vary across a family's rows (its searched hyperparameters)."""
    outcome = ("best_", "training_", "validation_", "test_", "peak_", "epoch", "Unnamed", "training")
    best = rows.loc[rows[metric].idxmax()]
    return {c: best[c] for c in rows.columns
            if not str(c).startswith(outcome) and c.strip() and rows[c].nunique(dropna=True) > 1}


def _markdown(study: Study, sections: dict, source: str, budgets: list[str], notes: list[str]) -> str:
    out = [f"# Report: study `{study.name}` ({'our records' if source == 'ours' else 'the authors published trials'})", "",
           study.description, ""]
    for name, s in sections.items():
        out += [f"## {s['label']}", "", "| | |", "|---|---|",
                f"| Computing infrastructure | {s['hardware']} |",
                f"| Number of search trials | {s['trials']} ok" + (f", {s['failed']} failed" if s["failed"] else "") + " |",
                f"| Search strategy | {s['strategy']} |",
                f"| Best validation {s['metric']} | {s['best']:.4f} |",
                f"| Mean training duration | {human_duration(s['duration'])} |",
                f"| Model implementation | {s['implementation']} |", "",
                "| Hyperparameter | Search space | Best assignment |", "|---|---|---|"]
        out += [f"| {k} | {space} | {best} |" for k, space, best in s["space"]]
        if s.get("file_best"):
            out += ["", "The best trial in the authors' file (columns that vary across the family's trials):", "",
                    "| column | value |", "|---|---|"] + [f"| {k} | {_fmt(v)} |" for k, v in s["file_best"].items()]
        out.append("")
    out += notes + ["## Checklist (Text Box 1)", ""] + checklist_lines(_entries(study, sections))
    out += ["", "## Expected validation performance (Eq. 8 ± its SD, section 3.3)", ""]
    out += expected_table({s["label"]: (s["em"], s["sd"]) for s in sections.values()},
                          [b for b in BUDGETS if b <= max(s["trials"] for s in sections.values())])
    if budgets:
        out += ["", "## Budget to reach each target (95% interval)"] + budgets
    return "\n".join(out) + "\n"


def _entries(study: Study, sections: dict) -> dict[str, Entry]:
    """The items of Text Box 1 (``syw.curve.checklist.ITEMS``) as the study's records and configs fill them."""
    def each(key: str) -> str:
        return "; ".join(f"{s['label']}: {s[key] if key != 'duration' else human_duration(s[key])}"
                         for s in sections.values())

    complete = all(s["space"] and MISSING not in {b for _, _, b in s["space"]} for s in sections.values())
    known = [s for s in sections.values() if s["hardware"] != MISSING]
    return {
        "infrastructure": Entry(each("hardware") if len(known) == len(sections) else None,
                                None if len(known) == len(sections) else "the hardware of the authors' runs"),
        "runtime": Entry(each("duration")),
        "splits": Entry(study.splits or None, None if study.splits else "the splits (study.splits)"),
        "validation": Entry("no test results are reported; all numbers are validation performance"),
        "code": Entry("; ".join(sorted({s["implementation"] for s in sections.values()}))),
        "bounds": Entry("the search-space tables above"),
        "best": Entry("the best-assignment columns above", None if complete else "the best assignment of each family"),
        "trials": Entry(each("trials")),
        "method": Entry(each("strategy") + f"; selection by best validation {study.metric} "
                        f"({'higher' if study.maximize else 'lower'} is better)"),
        "expected": Entry("the table below"),
    }


def _budgets(study: str, source: str, groups: list[Group]) -> list[str]:
    """The budget to reach each of the paper's targets for the study's figure, with its 95% interval, as
    ``syw budgets`` writes it (``syw.figures.budgets``); none for a study no figure draws."""
    spec = next((s for s in FIGURES.values() if study in (s.study, s.reduced) or study.startswith(f"{s.study}_")), None)
    if spec is None:
        return []
    return reach_table(budget_rows(spec, groups, source), groups)


def _latex(study: str, sections: dict) -> str:
    esc = lambda text: str(text).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")  # noqa: E731
    out = []
    for s in sections.values():
        out += [r"\begin{table}[h]", r"\centering\small", r"\begin{tabular}{lll}", r"\toprule",
                rf"Computing infrastructure & \multicolumn{{2}}{{l}}{{{esc(s['hardware'])}}} \\",
                rf"Number of search trials & \multicolumn{{2}}{{l}}{{{s['trials']}}} \\",
                r"Search strategy & \multicolumn{2}{l}{uniform sampling} \\",
                rf"Best validation {esc(s['metric'])} & \multicolumn{{2}}{{l}}{{{s['best']:.4f}}} \\",
                rf"Training duration & \multicolumn{{2}}{{l}}{{{esc(human_duration(s['duration']))}}} \\",
                r"\midrule", r"Hyperparameter & Search space & Best assignment \\", r"\midrule"]
        out += [rf"{esc(k)} & {esc(space)} & {esc(best)} \\" for k, space, best in s["space"]]
        out += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{esc(study)}: {esc(s['label'])} search space and best assignment.}}",
                r"\end{table}", ""]
    return "\n".join(out)
