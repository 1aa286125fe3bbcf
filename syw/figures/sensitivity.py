"""Sensitivity figure (Melis et al. 2018, section 7.3 and Figure 2): the validation score against
each searched hyperparameter, every ok trial a point and the best one marked, one panel per
hyperparameter and one figure per family; ``syw sensitivity --study <name>``.

Trials of every search of the family are drawn (random search, and each adaptive tuner run, in
its own marker): a tuner's trials crowd near what it found good, which is what the figure shows.
A loguniform hyperparameter gets a log axis; a choice one its values as categories, its points
spread sideways by a fixed (seeded) jitter so they do not hide each other.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from syw.core.errors import DataError  # noqa: E402
from syw.core.records import iter_records, latest_per_trial  # noqa: E402
from syw.curve.style import CEILING, PALETTE, RED, save  # noqa: E402
from syw.experiments.space import Family  # noqa: E402
from syw.experiments.study import load_study  # noqa: E402

MARKERS = "o^sDvP"
COLOURS = [c for c in PALETTE if c != RED]  # red is the best trial's star
ABOVE = r"$\uparrow$"  # a trial above the axis, drawn at its top edge
JITTER = 0.12  # half-width of a category's sideways spread, in category widths


def family_records(study_dir: Path, family: str) -> pd.DataFrame:
    """The latest record of every trial of ``family`` under ``study_dir`` (random search in
    ``<family>.jsonl``, each tuner run in ``<strategy>/<family>.tuner_seed<k>.jsonl``), with a
    ``search`` column naming which; failed trials included (``value`` NaN)."""
    paths = [Path(study_dir) / f"{family}.jsonl", *sorted(Path(study_dir).glob(f"*/{family}.tuner_seed*.jsonl"))]
    rows = []
    for path in filter(Path.is_file, paths):
        for r in latest_per_trial(iter_records(path)):
            search = "random" if r.get("strategy", "random") == "random" else f"{r['strategy']} (tuner seed {r['tuner_seed']})"
            rows.append({"search": search, "trial": r["trial"], "value": r["value"] if r["status"] == "ok" else math.nan,
                         **{f"params.{k}": v for k, v in (r.get("params") or {}).items()}})
    if not rows:
        raise FileNotFoundError(f"{paths[0]}: no records of family {family!r} (nor of a tuner run beside it)")
    return pd.DataFrame(rows)


def searched(family: Family) -> list[str]:
    """The hyperparameters a family searches (its constants left out), in sorted order."""
    return [k for k in sorted(family.search) if family.search[k]["distribution"] != "constant"]


def positions(family: Family, key: str, values: pd.Series) -> tuple[np.ndarray, list | None]:
    """x positions of a panel's points and, for a choice, its categories (x = index + jitter)."""
    spec = family.search[key]
    if spec["distribution"] != "choice":
        return values.to_numpy(float), None
    strays = [v for v in values if v not in spec["values"]]
    if strays:
        raise DataError(f"{family.file}: search.{key}: a trial of family {family.name!r} ran {key}={strays[0]!r}, "
                        f"not one of {spec['values']} (the records predate an edit of the family file?)")
    index = values.map(spec["values"].index).to_numpy(float)
    return index + np.random.default_rng(0).uniform(-JITTER, JITTER, index.size), spec["values"]


def ceiling(values: pd.Series, maximize: bool) -> float | None:
    """The y axis's top for a lower-is-better score with points above ``CEILING`` times its best (a diverged
    trial drawn to scale flattens every other point); None where nothing is above it or higher is better."""
    limit = CEILING * float(values.min())
    return None if maximize or limit <= 0 or not (values > limit).any() else limit


def _scatter(ax, xs: np.ndarray, ok: pd.DataFrame, limit: float | None) -> None:
    """Each search's ok trials in its own colour and marker; those above ``limit`` as arrows at the top edge."""
    first_above = True
    for k, (search, part) in enumerate(ok.groupby("search", sort=True)):
        colour = COLOURS[k % len(COLOURS)]
        above = part.index[part["value"] > limit] if limit else part.index[:0]
        below = part.index.difference(above)
        ax.scatter(xs[below], part["value"][below], s=14, alpha=0.6, color=colour, marker=MARKERS[k % len(MARKERS)],
                   label=f"{search} ({len(part)} trials)", lw=0)
        if above.size:
            ax.scatter(xs[above], np.full(above.size, limit), s=60, color=colour, marker=ABOVE, lw=0, clip_on=False, zorder=3,
                       label="above the axis, at its top edge" if first_above else "_nolegend_")
            first_above = False


def figure(family: Family, frame: pd.DataFrame, metric: str, maximize: bool, title: str):
    """The figure: a panel per searched hyperparameter, the ok trials as points and the best as a red star; a
    lower-is-better score's axis ends at :func:`ceiling`, trials above it drawn at its top edge."""
    ok = frame[frame["value"].notna()].reset_index(drop=True)
    if ok.empty:
        raise DataError(f"family {family.name!r}: no ok trial to draw")
    keys = searched(family)
    missing = [k for k in keys if f"params.{k}" not in ok]
    if missing:
        raise DataError(f"{family.file}: search.{missing[0]}: no record of family {family.name!r} names it")
    best = ok["value"].idxmax() if maximize else ok["value"].idxmin()
    limit = ceiling(ok["value"], maximize)
    cols = min(3, len(keys))
    rows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.8 * rows + 0.8), squeeze=False, sharey=True)
    for ax, key in zip(axes.flat, keys):
        xs, categories = positions(family, key, ok[f"params.{key}"])
        _scatter(ax, xs, ok, limit)
        ax.scatter([xs[best]], [ok["value"][best]], s=140, marker="*", color=RED, edgecolor="k", lw=0.6, zorder=3,
                   label=f"best: trial {ok['trial'][best]} ({ok['search'][best]})")
        if categories is not None:
            ax.set_xticks(range(len(categories)), [str(c) for c in categories])
        elif family.search[key]["distribution"] == "loguniform":
            ax.set_xscale("log")
        elif family.search[key]["distribution"] == "uniform_int":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(key, fontsize=8)
        ax.tick_params(labelsize=7)
    if limit:
        axes.flat[0].set_ylim(top=limit)  # shared by every panel
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"validation {metric}", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=7, frameon=False)
    text = f"{title}\nbest {metric} {ok['value'][best]:.4g}" + _notes(frame, ok, limit)
    fig.suptitle(text, fontsize=9, x=0.02, ha="left")
    lines = max(text.count("\n") + 1, len(labels))  # the title's lines on the left, the legend's on the right
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.12 * lines / fig.get_figheight()))
    return fig


def _notes(frame: pd.DataFrame, ok: pd.DataFrame, limit: float | None) -> str:
    """The title's tail: failed trials not drawn; trials above the axis and their range."""
    failed = int(frame["value"].isna().sum())
    out = f"; {failed} failed trial(s) not drawn" if failed else ""
    if limit:
        above = ok["value"][ok["value"] > limit]
        out += (f"\n{len(above)} trial(s) above the axis, which ends at {CEILING} times the best ({limit:.4g}): "
                f"{above.min():.4g} to {above.max():.4g}, drawn as arrows at its top edge")
    return out


def write(study: str, results: Path, folder: Path, only: str | None = None) -> list[Path]:
    """``sensitivity_<study>_<family>.png`` and ``.pdf`` in ``folder`` for each family of the study (or ``only``)."""
    config = load_study(study)
    names = [only] if only else list(config.families)
    if only and only not in config.families:
        raise ValueError(f"study {study} has no family {only!r} (has: {', '.join(config.families)})")
    written = []
    for name in names:
        family = config.family(name)
        frame = family_records(Path(results) / study, name)
        fig = figure(family, frame, config.metric, config.maximize,
                     f"{study}: {family.label}\nvalidation {config.metric} against each searched hyperparameter")
        written += save(fig, folder / f"sensitivity_{study}_{name}", dpi=150)
        plt.close(fig)
    return written
