"""The reporting checklist (Text Box 1) and appendix-style tables for a study, filled from its records."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.core.units import human_duration
from syw.experiments.space import Family, load_family, study_config
from syw.figures.sources import PAPER_DIR, from_paper, paper_rows, study_rows
from syw.figures.specs import FIGURES

MISSING = "**missing**"
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
    cfg = study_config(study)
    families = {name: load_family(stem, name=name) for name, stem in cfg["families"].items()}
    sections = {}
    if source == "ours":
        parts, n_failed = study_rows(study, results_dir)
        for name, rows in parts.items():
            family = families[name]
            group = Group(name, rows["value"].to_numpy(float), rows["duration_seconds"].to_numpy(float), family.label)
            sections[name] = _family_section(family, rows, group, n_failed.get(name, 0), cfg["metric"], rows["seed"].iloc[0],
                                             maximize=cfg.get("direction", "max") == "max")
    else:
        spec = next(s for s in FIGURES.values() if s.study == study)
        rows = paper_rows(spec, paper_dir)
        for group in from_paper(spec, paper_dir):
            sections[group.name] = _family_section(families[group.name], None, group, 0, cfg["metric"], None)
            sections[group.name]["file_best"] = searched_columns(rows[group.name], spec.paper.metric_column)
    if not sections:
        raise FileNotFoundError(f"no trials for study {study} ({source})")
    return _markdown(study, cfg, sections, source), _latex(study, sections)


def searched_columns(rows: pd.DataFrame, metric: str) -> dict[str, Any]:
    """The best trial's values of the columns that vary across a family's rows (its searched hyperparameters)."""
    outcome = ("best_", "training_", "validation_", "test_", "peak_", "epoch", "Unnamed", "training")
    best = rows.loc[rows[metric].idxmax()]
    return {c: best[c] for c in rows.columns
            if not str(c).startswith(outcome) and c.strip() and rows[c].nunique(dropna=True) > 1}


def _markdown(study: str, cfg: dict, sections: dict, source: str) -> str:
    out = [f"# Report: study `{study}` ({'our records' if source == 'ours' else 'the authors published trials'})", "",
           cfg.get("description", ""), ""]
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
    out += ["## Checklist (Text Box 1)", "", "For all reported experimental results:", ""]
    hardware = "; ".join(f"{s['label']}: {s['hardware']}" for s in sections.values())
    runtime = "; ".join(f"{s['label']}: {human_duration(s['duration'])}" for s in sections.values())
    out += [f"- [x] Description of computing infrastructure: {hardware}",
            f"- [x] Average runtime for each approach: {runtime}",
            f"- [{'x' if cfg.get('splits') else ' '}] Details of train/validation/test splits: {cfg.get('splits') or MISSING}",
            "- [x] Corresponding validation performance for each reported test result: no test results are reported; "
            "all numbers are validation performance",
            f"- [x] A link to implemented code: {'; '.join(sorted({s['implementation'] for s in sections.values()}))}",
            "", "For experiments with hyperparameter search:", "",
            "- [x] Bounds for each hyperparameter: the search-space tables above",
            f"- [{'x' if all(s['space'] and MISSING not in {b for _, _, b in s['space']} for s in sections.values()) else ' '}] "
            "Hyperparameter configurations for best-performing models: the best-assignment columns above",
            "- [x] Number of hyperparameter search trials: " + "; ".join(f"{s['label']}: {s['trials']}" for s in sections.values()),
            "- [x] The method of choosing hyperparameter values and the criterion used to select among them: "
            + "; ".join(f"{s['label']}: {s['strategy']}" for s in sections.values())
            + f"; selection by best validation {cfg['metric']} ({'higher' if cfg.get('direction', 'max') == 'max' else 'lower'} is better)",
            "- [x] Expected validation performance (section 3.1): the table below", "",
            "## Expected validation performance (Eq. 8, +- plug-in SD)", ""]
    header = "| n | " + " | ".join(s["label"] for s in sections.values()) + " |"
    out += [header, "|---" * (len(sections) + 1) + "|"]
    for n in [b for b in BUDGETS if b <= max(s["trials"] for s in sections.values())]:
        cells = []
        for s in sections.values():
            cells.append(f"{s['em'][n - 1]:.4f} +- {s['sd'][n - 1]:.4f}" if n <= s["trials"] else "")
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


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
