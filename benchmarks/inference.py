"""Calibration of the two-group comparisons of tuning curves (issue 62): ``python -m benchmarks.inference``.

Each family is a pair of large pools of scores (A, B), treated as the populations: N trials per group
are drawn from each with replacement, so the true curve of the best of n draws is exact,
sum_i x_(i) [(i/M)^n - ((i-1)/M)^n] over the M pooled scores (Eq. 8 on the pool). Measured, per
family and N, at 95%:

- bands: the crossed simultaneous bands (``syw.analysis.compare.difference``, bounds (0, 1));
- Welch: Welch's t-test on the means (the n = 1 comparison);
- at: the pointwise test at the pre-stated budgets 1, 5, 10 (those up to the limit);
- sim: the default simultaneous claims over the budgets up to the limit (``adjust="first"``: n = 1 first at 0.9
  alpha, the rest step down with the alpha left; ``step``: step-down max-|T| over all budgets at once, the default
  before issue 73; ``1-step``: the single-step max-|T|; ``bonf``: Bonferroni);
- equiv: ``equivalence`` at n = 1, 5, 10 with the margin d = half the SD of A's pool: how often two samples of
  pool A are certified within +-d (power), and how often A against A shifted down by d, a true difference of
  exactly d at every n, is (error; at most 5% at 95%);
- budget: coverage of ``budget_interval`` for A's first n reaching its true curve at n* = min(5, limit).

FWE is the fraction of resamples naming a wrong leader anywhere (the group whose true curve is lower
there; at a tie any leader is wrong); err the same at one pre-stated budget; P1, P5, P10 how often the
true leader is named at n = 1, 5, 10; null: two samples of pool A, how often any leader is named
(``at``: at each budget). budget cover: how often [low, high] holds n* (located: high within the
limit); crossover: for a family whose true curves cross by the limit, how often
``crossover_interval`` is located but misses the true first crossover. "-": not defined there. Real families read opda's tuning data
(Lourie et al. 2024, https://github.com/nicholaslourie/opda, folder ``data/``, CC BY-SA 4.0) from
``--data`` or ``$SYW_OPDA_DATA`` (opda's ``data/`` folder, or one holding its ``*_tuning.results.jsonl``);
without it only the synthetic families run.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: BLAS threads only contend (run as -m)

import numpy as np  # noqa: E402  (after the thread setting)
from scipy import stats  # noqa: E402

from syw.analysis.compare import (
    difference,  # noqa: E402
    first_crossing,  # noqa: E402
)
from syw.analysis.equivalence import equivalence  # noqa: E402
from syw.analysis.expected_max import expected_max  # noqa: E402
from syw.analysis.inference import budget_interval, compare, limit_budget  # noqa: E402
from syw.core.entry import run_main  # noqa: E402

CONFIDENCE = 0.95
DOC = Path(__file__).resolve().parent.parent / "docs" / "syw.md"
AT = (1, 5, 10)
TIE = 1e-12


@dataclass(frozen=True)
class Family:
    name: str
    a: np.ndarray  # the population of A's scores (higher is better)
    b: np.ndarray

    def curves(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """True curves of A and B at n = 1..size (Eq. 8 on the pool, i.e. the finite-pool formula)."""
        have = _CACHE.get(self.name)
        if have is None or have[0].size < size:
            ns = np.arange(1, max(size, 100) + 1)
            have = _CACHE[self.name] = (_pool_curve(self.a, ns), _pool_curve(self.b, ns))
        return have[0][:size], have[1][:size]


_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def _pool_curve(pool: np.ndarray, ns: np.ndarray) -> np.ndarray:
    """sum_i x_(i) [(i/M)^n - ((i-1)/M)^n]: E[best of n i.i.d. draws from the M pooled scores]."""
    return expected_max(pool, ns)


def _synthetic(rng: np.random.Generator, m: int) -> list[Family]:
    """Five shapes, each A vs B with a modest gap (about half an SD at n = 1, less with failures)."""
    def mix(w_low: float) -> np.ndarray:
        low = rng.random(m) < w_low
        return np.where(low, rng.normal(0.55, 0.03, m), rng.normal(0.75, 0.03, m))

    def failed(mu: float) -> np.ndarray:  # 30% of trials diverged, scored at the floor 0.1
        return np.where(rng.random(m) < 0.3, 0.1, rng.normal(mu, 0.04, m))

    def skewed(shift: float) -> np.ndarray:  # long upper tail (lognormal), clipped to the metric's bound
        return np.minimum(1.0, shift + 0.03 * rng.lognormal(0.0, 0.8, m))

    out = [Family("normal", rng.normal(0.70, 0.04, m), rng.normal(0.68, 0.04, m)),
           Family("skewed", skewed(0.40), skewed(0.385)),
           Family("bimodal", mix(0.5), mix(0.75)),
           Family("failed-30%", failed(0.75), failed(0.72)),
           Family("ties", np.round(rng.normal(0.70, 0.02, m), 2), np.round(rng.normal(0.69, 0.02, m), 2)),
           # A skewed vs B normal: B ahead at n = 1-4, A from n = 5 (the curves cross; wrong leaders possible)
           Family("crossing", skewed(0.40), rng.normal(0.46, 0.02, m))]
    return [Family(f.name, np.clip(f.a, 0.0, 1.0), np.clip(f.b, 0.0, 1.0)) for f in out]


def _jsonl(path: Path, score: Callable[[dict], float]) -> np.ndarray:
    with path.open() as lines:
        return np.array([score(json.loads(line)) for line in lines if line.strip()], dtype=float)


def _nli_final(row: dict) -> float:  # MultiNLI matched accuracy at the end of training
    return float(row["learning_curves"]["matched"][-1][1])


def _nli_best(row: dict) -> float:  # the best checkpoint's (as Dodge et al.'s best_validation_accuracy)
    return float(max(acc for _, acc in row["learning_curves"]["matched"]))


def _imagenet_final(row: dict) -> float:  # top-1 at the end; a run with no epoch recorded counts as 0
    curve = row["learning_curve"]
    return float(curve[-1]["top_1"]) if curve else 0.0


def _find(folder: Path, name: str) -> Path:
    """``folder/name``, or ``folder/*/name`` as in opda's ``data/`` (one subfolder per model)."""
    return next((path for path in [folder / name, *sorted(folder.glob(f"*/{name}"))] if path.is_file()), folder / name)


def _real(folder: Path | None) -> list[Family]:
    """opda's tuning data: DeBERTaV3 vs DeBERTa (1,024 trials each), ConvNeXt vs AlexNet (512 each), from ``folder``
    or its subfolders."""
    if folder is None:
        return []
    files = {key: _find(folder, f"{name}_tuning.results.jsonl") for key, name in
             (("v3", "deberta-v3-base"), ("v1", "deberta-base"), ("cx", "convnext-tiny"), ("ax", "alexnet"))}
    out = []
    if files["v3"].is_file() and files["v1"].is_file():
        out.append(Family("deberta-final", _jsonl(files["v3"], _nli_final), _jsonl(files["v1"], _nli_final)))
        out.append(Family("deberta-best", _jsonl(files["v3"], _nli_best), _jsonl(files["v1"], _nli_best)))
    if files["cx"].is_file() and files["ax"].is_file():
        out.append(Family("imagenet", _jsonl(files["cx"], _imagenet_final), _jsonl(files["ax"], _imagenet_final)))
    return out


def _truth(fam: Family, size: int) -> np.ndarray:
    """+1 where A's true curve is higher, -1 where B's is, 0 at a tie; n = 1..size."""
    curve_a, curve_b = fam.curves(size)
    gap = curve_a - curve_b
    return np.where(np.abs(gap) <= TIE, 0, np.sign(gap)).astype(int)


def _signs(leaders: Sequence[str | None]) -> np.ndarray:
    return np.array([1 if w == "A" else -1 if w == "B" else 0 for w in leaders])


def _wrong(named: np.ndarray, truth: np.ndarray) -> bool:
    return bool(np.any((named != 0) & (named != truth)))


def _bands(u: np.ndarray, v: np.ndarray):
    with warnings.catch_warnings():  # opda warns that ks bands are exact only without ties ("ties")
        warnings.simplefilter("ignore", RuntimeWarning)
        return difference(u, v, confidence=CONFIDENCE)


def run_cell(fam: Family, size: int, reps: int, rng: np.random.Generator) -> dict[str, float]:
    """Counts over ``reps`` resamples of ``size`` trials per group, as fractions."""
    truth = _truth(fam, size)
    limit = limit_budget(size, CONFIDENCE)
    at = [n for n in AT if n <= limit]
    sim_ns = np.arange(1, limit + 1)  # leaders past the limit are never named: same table, less work
    star = min(5, limit)
    curve_a = fam.curves(size)[0]
    target = 0.5 * (curve_a[star - 2] + curve_a[star - 1]) if star > 1 else curve_a[0] - 1e-9
    change = np.flatnonzero(truth[:limit] == -truth[0]) if truth[0] else np.empty(0, int)
    n_cross = int(change[0]) + 1 if change.size else None  # the true first crossover, if within the limit
    margin = 0.5 * float(np.std(fam.a))  # the equivalence margin
    c: dict[str, float] = {}

    def add(key: str, value: bool | float) -> None:
        c[key] = c.get(key, 0.0) + float(value)

    for _ in range(reps):
        xa, xb, xa2 = (rng.choice(p, size) for p in (fam.a, fam.b, fam.a))
        for tag, (u, v), true in (("", (xa, xb), truth), ("null_", (xa, xa2), np.zeros_like(truth))):
            # the crossed bands hold simultaneously by construction (their FWE below): no null pass
            bands = None if tag else _signs(_bands(u, v).leader())
            comparison = compare(u, v, ns=sim_ns, confidence=CONFIDENCE)
            sim = _signs(comparison.leader())
            step = _signs(compare(u, v, ns=sim_ns, confidence=CONFIDENCE, adjust="stepdown").leader())
            bonf = _signs(compare(u, v, ns=sim_ns, confidence=CONFIDENCE, adjust="bonferroni").leader())
            single = _signs(compare(u, v, ns=sim_ns, confidence=CONFIDENCE, adjust="maxt").leader())
            point = _signs(compare(u, v, at=at, confidence=CONFIDENCE).leader())
            welch = stats.ttest_ind(u, v, equal_var=False)
            w1 = int(np.sign(welch.statistic)) if welch.pvalue <= 1 - CONFIDENCE else 0
            if tag:
                for key, named in (("sim", sim), ("step", step), ("single", single), ("bonf", bonf), ("welch", [w1])):
                    add(tag + key, np.any(np.asarray(named) != 0))
                for k, n in enumerate(at):
                    add(f"null_at{n}", point[k] != 0)
                for k, sure in enumerate(equivalence(u, v, margin, at, confidence=CONFIDENCE).certified()):
                    add(f"equiv_P{at[k]}", sure)
                continue
            if n_cross is not None:
                cross = first_crossing(comparison)
                located = cross is not None and cross.high is not None  # the group behind at n = 1 leads somewhere
                add("cross_located", located)
                add("cross_miss", located and not (cross.leader == ("A" if truth[0] < 0 else "B")
                                                   and cross.low <= n_cross <= cross.high))
            add("bands_fwe", _wrong(bands, true))
            add("sim_fwe", _wrong(sim, true[:limit]))
            add("step_fwe", _wrong(step, true[:limit]))
            add("single_fwe", _wrong(single, true[:limit]))
            add("bonf_fwe", _wrong(bonf, true[:limit]))
            add("welch_err", w1 != 0 and w1 != true[0])
            add("welch_P1", w1 != 0 and w1 == true[0])
            for n in AT:
                if n <= size:
                    add(f"bands_P{n}", bands[n - 1] != 0 and bands[n - 1] == true[n - 1])
                if n <= limit:
                    add(f"sim_P{n}", sim[n - 1] != 0 and sim[n - 1] == true[n - 1])
                    add(f"step_P{n}", step[n - 1] != 0 and step[n - 1] == true[n - 1])
                    add(f"single_P{n}", single[n - 1] != 0 and single[n - 1] == true[n - 1])
                    add(f"bonf_P{n}", bonf[n - 1] != 0 and bonf[n - 1] == true[n - 1])
            for k, n in enumerate(at):
                add(f"at_err{n}", point[k] != 0 and point[k] != true[n - 1])
                add(f"at_P{n}", point[k] != 0 and point[k] == true[n - 1])
        for k, sure in enumerate(equivalence(xa, xa2 - margin, margin, at, confidence=CONFIDENCE).certified()):
            add(f"equiv_err{at[k]}", sure)  # the curves differ by exactly the margin: certifying is an error
        bi = budget_interval(xa, target, confidence=CONFIDENCE)
        add("budget_cov", bi.low <= star and (bi.high is None or star <= bi.high))
        add("budget_located", bi.high is not None)
    return {k: v / reps for k, v in c.items()} | {"limit": limit, "n_star": star, "n_cross": n_cross or 0}


def _fmt(row: dict[str, float], key: str) -> str:
    return f"{row[key]:.3f}" if key in row else "-"


def _join(row: dict[str, float], keys: Sequence[str]) -> str:
    return " / ".join(_fmt(row, k) for k in keys)


def _cross(row: dict[str, float]) -> str:
    if not row["n_cross"]:
        return "-"
    return f"{row['cross_miss']:.3f} / {row['cross_located']:.2f} (n = {int(row['n_cross'])})"


def table(rows: list[tuple[str, int, dict[str, float]]]) -> str:
    """The Markdown table: one row per family and N."""
    head = ("| family | N | limit | bands FWE / P1 | Welch err / P1 / null | at err 1/5/10 | at P1/P5/P10 "
            "| at null 1/5/10 | sim FWE | sim P1/P5/P10 | sim null | step FWE / P1/P5/P10 / null "
            "| 1-step FWE / P1/P5/P10 / null | bonf FWE / P1 / null | equiv P1/P5/P10 | equiv err 1/5/10 "
            "| budget cover (located) | crossover miss / located |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, size, r in rows:
        lines.append(
            f"| {name} | {size} | {int(r['limit'])} | {_join(r, ['bands_fwe', 'bands_P1'])} "
            f"| {_join(r, ['welch_err', 'welch_P1', 'null_welch'])} | {_join(r, ['at_err1', 'at_err5', 'at_err10'])} "
            f"| {_join(r, ['at_P1', 'at_P5', 'at_P10'])} | {_join(r, ['null_at1', 'null_at5', 'null_at10'])} | {_fmt(r, 'sim_fwe')} "
            f"| {_join(r, ['sim_P1', 'sim_P5', 'sim_P10'])} | {_fmt(r, 'null_sim')} "
            f"| {_join(r, ['step_fwe', 'step_P1', 'step_P5', 'step_P10', 'null_step'])} "
            f"| {_join(r, ['single_fwe', 'single_P1', 'single_P5', 'single_P10', 'null_single'])} "
            f"| {_join(r, ['bonf_fwe', 'bonf_P1', 'null_bonf'])} "
            f"| {_join(r, ['equiv_P1', 'equiv_P5', 'equiv_P10'])} | {_join(r, ['equiv_err1', 'equiv_err5', 'equiv_err10'])} "
            f"| {r['budget_cov']:.3f} ({r['budget_located']:.2f}, n* = {int(r['n_star'])}) "
            f"| {_cross(r)} |")
    return "\n".join(lines)


def add_data_options(parser: argparse.ArgumentParser, opda: str, authors: str | None = None) -> None:
    """``--data``, opda's public searches (``opda``: how they are found), and with ``authors`` (what they are)
    ``--authors``, the authors' published trials, each defaulting to where this project's environment says they are."""
    parser.add_argument("--data", type=Path, default=os.environ.get("SYW_OPDA_DATA"),
                        help=f"folder {opda} (default $SYW_OPDA_DATA)")
    if authors:
        default = Path(os.environ["SYW_DATA_DIR"]) / "authors_trials" if os.environ.get("SYW_DATA_DIR") else None
        parser.add_argument("--authors", type=Path, default=default,
                            help=f"folder with {authors} (default $SYW_DATA_DIR/authors_trials)")


def one_thread() -> contextlib.AbstractContextManager:
    """BLAS on one thread where threadpoolctl is installed (numpy imported before OPENBLAS_NUM_THREADS was set):
    the matrices are small, so its threads only contend."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


def bar(rows: list[tuple[str, int, dict[str, float]]], reps: int, real: set[str]) -> str:
    """The issue's bar at N = 50 on the public searches (synthetic families when none were read)."""
    margin = 2 * (0.05 * 0.95 / reps) ** 0.5
    lines = [f"Bar at N = 50 (95%; Monte-Carlo margin 2 SE = {margin:.3f}):"]
    for name, size, r in rows:
        if size != 50 or (real and name not in real):
            continue
        def ratio(key: str) -> str:
            return f"{r[key] / r['welch_P1']:.2f}" if r["welch_P1"] else "-"

        lines.append(f"- {name}: wrong leader anywhere {r['sim_fwe']:.3f} (step-down {r['step_fwe']:.3f}); two samples "
                     f"of one pool, a leader named {r['null_sim']:.3f} (step-down {r['null_step']:.3f}, Welch "
                     f"{r['null_welch']:.3f}); the right leader at n = 1 {r['sim_P1']:.3f} = {ratio('sim_P1')} x Welch "
                     f"({r['welch_P1']:.3f}), step-down {r['step_P1']:.3f} = {ratio('step_P1')} x; with --at 1 "
                     f"{r['at_P1']:.3f}; at n = 5 {r['sim_P5']:.3f} (step-down {r['step_P5']:.3f}); crossed bands "
                     f"{r['bands_P1']:.3f}")
    return "\n".join(lines)


def families(seed: int, pool: int, data: Path | None) -> list[Family]:
    return _synthetic(np.random.default_rng([seed, 1]), pool) + _real(data)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.inference", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="resamples per family and N (default 300)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100], help="trials per group")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", type=int, default=100_000, help="population size of the synthetic families")
    add_data_options(parser, "with opda's *_tuning.results.jsonl")
    parser.add_argument("--families", nargs="*", help="only these families")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {DOC} (between its "
                        "calibration markers)")
    args = parser.parse_args(argv)
    if args.reps < 1 or any(s < 2 for s in args.sizes):
        raise ValueError(f"--reps must be >= 1 and every --sizes at least 2, got {args.reps} and {args.sizes}")
    data = args.data if args.data is None or args.data.is_dir() else None
    fams = [f for f in families(args.seed, args.pool, data) if not args.families or f.name in args.families]
    start, rows = time.perf_counter(), []
    with one_thread():
        for fam in fams:
            for size in args.sizes:
                rng = np.random.default_rng([args.seed, size, sum(map(ord, fam.name))])
                rows.append((fam.name, size, run_cell(fam, size, args.reps, rng)))
    se = (0.05 * 0.95 / args.reps) ** 0.5
    text = table(rows)
    if 50 in args.sizes:
        text += "\n\n" + bar(rows, args.reps, {f.name for f in _real(data)} & {f.name for f in fams})
    text += (f"\n\n{args.reps} resamples per row (seed {args.seed}): Monte-Carlo SE {se:.3f} at a rate of 0.05, "
             f"at most {0.5 / args.reps ** 0.5:.3f}." + ("" if data else " Real families skipped: no --data / $SYW_OPDA_DATA."))
    print(text)
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.write:
        write_block(DOC, text, f"python -m benchmarks.inference --reps {args.reps} --sizes "
                               f"{' '.join(map(str, args.sizes))} --seed {args.seed} --data <opda's data/ files>")
    return 0


def write_block(path: Path, text: str, command: str, marker: str = "calibration") -> None:
    """Put ``text`` between the page's ``<!-- marker -->`` markers, saying which command wrote it."""
    page = path.read_text()
    start, end = f"<!-- {marker} -->\n", f"<!-- /{marker} -->"
    if start not in page or end not in page:
        raise ValueError(f"{path}: no '<!-- {marker} -->' ... '<!-- /{marker} -->' block to write into")
    head, rest = page.split(start, 1)
    path.write_text(head + start + f"Generated by `{command}`.\n\n" + text + "\n" + end + rest.split(end, 1)[1])


if __name__ == "__main__":
    sys.exit(run_main(main))
