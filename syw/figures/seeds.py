"""Seed spread of the rerun assignments beside the gaps between families (Melis et al. 2018,
section 7.2): ``syw seeds --study <name>`` reads ``results/<study>/reseed/*.jsonl``
(written by ``syw reseed``) and writes ``seeds_<study>.md``.

A family's standing is its best assignment (the rerun trial with the best original value), as the
reruns' mean and sample SD over seeds; two families' gap is the difference of those means, set
against their pooled seed SD. Melis et al. found a seed SD of about 0.4 perplexity on PTB and
called a gap of 1.0 robust: :data:`MELIS_RATIO` gap-to-SD, the rule applied here.
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from syw.core.records import iter_records

MELIS_SEED_SD, MELIS_ROBUST_GAP = 0.4, 1.0  # PTB perplexity, section 7.2
MELIS_RATIO = MELIS_ROBUST_GAP / MELIS_SEED_SD


def group_name(record: dict) -> str:
    """A family, and for an adaptive source its tuner run: ``lstm``, ``lstm (gp, tuner seed 0)``."""
    if record.get("strategy", "random") == "random":
        return record["family"]
    return f"{record['family']} ({record['strategy']}, tuner seed {record['tuner_seed']})"


def seed_rows(study_dir: Path) -> pd.DataFrame:
    """One row per rerun assignment: its group, original trial and value, the ok reruns' count,
    mean, sample SD (ddof 1), min and max, how far the original lies from their mean in SDs, and their values."""
    files = sorted((Path(study_dir) / "reseed").glob("*.jsonl"))
    records = [r for path in files for r in iter_records(path)]
    if not records:
        raise FileNotFoundError(f"{Path(study_dir) / 'reseed'}: no seed reruns (syw reseed writes them)")
    rows = []
    keyed = pd.DataFrame({"group": [group_name(r) for r in records], "trial": [r["trial"] for r in records],
                          "ok": [r["status"] == "ok" for r in records], "value": [r["value"] for r in records],
                          "original": [r["source_value"] for r in records], "direction": [r["direction"] for r in records]})
    for (group, trial), part in keyed.groupby(["group", "trial"], sort=False):
        values = part.loc[part.ok, "value"].to_numpy(float)
        sd = float(np.std(values, ddof=1)) if values.size > 1 else math.nan
        mean = float(values.mean()) if values.size else math.nan
        original = float(part.original.iloc[0])
        rows.append(dict(group=group, trial=int(trial), direction=part.direction.iloc[0], original=original,
                         reruns=int(values.size), failed=int((~part.ok).sum()), mean=mean, sd=sd,
                         min=float(values.min()) if values.size else math.nan, max=float(values.max()) if values.size else math.nan,
                         original_in_sds=(original - mean) / sd if sd > 0 else math.nan, values=tuple(values.tolist())))
    return pd.DataFrame(rows)


def best_assignments(rows: pd.DataFrame) -> pd.DataFrame:
    """Each group's best rerun assignment (the best original value; the lower trial of a tie), the
    best rerun mean first: a family's standing under new seeds."""
    maximize = rows.direction.iloc[0] == "max"
    best = rows.sort_values(["original", "trial"], ascending=[not maximize, True]).groupby("group", sort=False).head(1)
    return best.sort_values("mean", ascending=not maximize)


def gap_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Each pair of groups' best assignments: the gap of their rerun means, the pooled seed SD
    (root mean square of the two SDs) and their ratio, against :data:`MELIS_RATIO`."""
    best = best_assignments(rows)
    out = []
    for a, b in itertools.combinations(best.itertuples(), 2):
        pooled = math.sqrt((a.sd ** 2 + b.sd ** 2) / 2)
        ratio = abs(a.mean - b.mean) / pooled if pooled > 0 else math.nan
        out.append(dict(ahead=a.group, behind=b.group, ahead_trial=a.trial, behind_trial=b.trial, gap=abs(a.mean - b.mean),
                        pooled_sd=pooled, ratio=ratio, robust=bool(ratio >= MELIS_RATIO) if not math.isnan(ratio) else None))
    return pd.DataFrame(out)


def markdown(study: str, rows: pd.DataFrame, gaps: pd.DataFrame) -> str:
    """The report: each assignment's seed spread, then the gaps between the groups' best."""
    f = lambda v: "-" if isinstance(v, float) and math.isnan(v) else f"{v:.4g}"  # noqa: E731
    out = [f"# Seed reruns: study `{study}`", "",
           "Each rerun assignment's validation score under new training seeds (`syw reseed`); "
           "SD is the sample SD over the ok reruns; the last column is how far the original trial lies from their mean, in SDs.", "",
           "| group | trial | original | reruns | failed | mean | SD | min | max | original - mean (SDs) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {r.group} | {r.trial} | {f(r.original)} | {r.reruns} | {r.failed} | {f(r.mean)} | {f(r.sd)} | {f(r.min)} | "
            f"{f(r.max)} | {f(r.original_in_sds)} |" for r in rows.itertuples()]
    out += ["", "## Gaps between the groups' best assignments", "",
            f"Melis et al. (2018, section 7.2) saw a seed SD of about {MELIS_SEED_SD} perplexity on PTB and called a gap of "
            f"{MELIS_ROBUST_GAP} robust, {MELIS_RATIO:.3g} SDs: a gap is called robust here when it is at least "
            f"{MELIS_RATIO:.3g} times the pair's pooled seed SD.", ""]
    if gaps.empty:
        return "\n".join(out + ["(one group only: no gap)"]) + "\n"
    out += ["| ahead | behind | gap of rerun means | pooled seed SD | gap / SD | robust |", "|---|---|---|---|---|---|"]
    out += [f"| {g.ahead} (trial {g.ahead_trial}) | {g.behind} (trial {g.behind_trial}) | {f(g.gap)} | {f(g.pooled_sd)} | "
            f"{f(g.ratio)} | {'-' if g.robust is None else 'yes' if g.robust else 'no'} |" for g in gaps.itertuples()]
    return "\n".join(out) + "\n"


def write(study: str, results: Path, folder: Path) -> Path:
    """``<folder>/seeds_<study>.md`` from the study's reruns."""
    rows = seed_rows(Path(results) / study)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"seeds_{study}.md"
    path.write_text(markdown(study, rows, gap_rows(rows)))
    return path
