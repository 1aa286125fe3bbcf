"""Calibration of the trial planner (issue 73): ``python -m benchmarks.plan``.

Pairs of large public searches, each pool taken for the population of its group. For each pair, pilot
size P (20, 50 trials per group, drawn with replacement) and budget n the pilot can speak for (n up to
``limit_budget(P)``: 1 and 3 for P = 20; 1, 3, 5, 9 for P = 50), ``--pilots`` pilots are drawn and
``syw.analysis.power.plan`` recommends K trials per group for 80% power of ``compare(A, B, at=[n])``
by each method. The power realised at K is then measured on the true pools: the fraction of ``--truth``
searches of K trials per group drawn from the pools in which the test names the pools' own leader at n.

Columns: ``true K`` is the plan with the pools themselves as the pilot (exact up to simulation; "> cap"
when no size up to the cap has the power); ``where``: ``floor`` when the true K is ``trials_needed(n)``
(power does not bind), ``near`` when it is at most ``REACH`` (3) times the pilot's N, ``far`` beyond;
``found`` the fraction of pilots for which a K up to the cap was found; ``K`` the median (mean)
recommended K over those; ``promised`` the mean simulated power at K (0.8 or a little above; higher
where K is held up by ``trials_needed(n)``); ``realised`` the mean power at K on the true pools, over the
pilots with a K; ``wrong leader`` the fraction of those whose pilot led the other way. Pools: opda's
tuning data (Lourie et al. 2024, https://github.com/nicholaslourie/opda, folder ``data/``, CC BY-SA 4.0;
``--data`` or ``$SYW_OPDA_DATA``, searched recursively) and the authors' trials of Dodge et al. 2019
(``--authors`` or ``$SYW_DATA_DIR/authors_trials``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: BLAS threads only contend (run as -m)

import numpy as np  # noqa: E402  (after the thread setting)

from benchmarks.forecast_backtest import families as authors_families  # noqa: E402
from benchmarks.inference import (  # noqa: E402
    _imagenet_final,
    _jsonl,
    _nli_best,
    _nli_final,
    add_data_options,
    one_thread,
    write_block,
)
from syw.analysis.inference import limit_budget  # noqa: E402
from syw.analysis.power import METHODS, PlanRow, plan, power_at  # noqa: E402
from syw.core.entry import run_main  # noqa: E402

CONFIDENCE, TARGET = 0.95, 0.8
DOC = Path(__file__).resolve().parent.parent / "docs" / "syw.md"
AT = (1, 3, 5, 9)
REACH = 3  # rows whose true K is at most this many times the pilot's N: where a pilot can plan (the doc)
OPDA = {"v3": "deberta-v3-base_tuning.results.jsonl", "v1": "deberta-base_tuning.results.jsonl",
        "cx": "convnext-tiny_tuning.results.jsonl", "ax": "alexnet_tuning.results.jsonl"}
AUTHORS = {"sst5 LR-CNN": (("SST-5", "LR"), ("SST-5", "CNN")),
           "sst2 ELMo(FT)-GloVe": (("SST-2", "GloVe + ELMo (FT)"), ("SST-2", "GloVe")),
           "scitail ESIM-DGEM": (("SciTail", "ESIM"), ("SciTail", "DGEM"))}

Pair = tuple[str, np.ndarray, np.ndarray]


def _find(folder: Path, name: str) -> Path | None:
    return next(iter(sorted(folder.rglob(name))), None)


def opda_pairs(folder: Path | None) -> list[Pair]:
    """DeBERTaV3 vs DeBERTa (final and best checkpoint, 1,024 trials each), ConvNeXt vs AlexNet (512 each)."""
    if folder is None or not folder.is_dir():
        return []
    files = {k: _find(folder, v) for k, v in OPDA.items()}
    out = []
    if files["v3"] and files["v1"]:
        out.append(("deberta-final", _jsonl(files["v3"], _nli_final), _jsonl(files["v1"], _nli_final)))
        out.append(("deberta-best", _jsonl(files["v3"], _nli_best), _jsonl(files["v1"], _nli_best)))
    if files["cx"] and files["ax"]:
        out.append(("imagenet", _jsonl(files["cx"], _imagenet_final), _jsonl(files["ax"], _imagenet_final)))
    return out


def author_pairs(folder: Path | None) -> list[Pair]:
    """Three pairs of the authors' searches (50 or 100 trials each: small pools, taken as populations all the same)."""
    if folder is None or not folder.is_dir():
        return []
    scores = {(d, label): s for d, label, s in authors_families(folder)}
    return [(name, scores[a], scores[b]) for name, (a, b) in AUTHORS.items() if a in scores and b in scores]


def truth_plans(pair: Pair, sizes: Sequence[int], cap: int, seed: int) -> dict[int, PlanRow]:
    """The plan with the pools themselves as the pilot, at every budget some pilot size speaks for: the true K."""
    _, pool_a, pool_b = pair
    at = [n for n in AT if n <= limit_budget(max(sizes), CONFIDENCE)]
    return {r.n: r for r in plan(pool_a, pool_b, at, power=TARGET, confidence=CONFIDENCE, cap=cap,
                                 method="resample", draws=1_000, seed=seed)}


def run_pair(pair: Pair, size: int, oracle: dict[int, PlanRow], args: argparse.Namespace) -> list[dict]:
    """One row per budget and method: the plans of ``args.pilots`` pilots of ``size`` trials and their realised power."""
    name, pool_a, pool_b = pair
    at = [n for n in AT if n <= limit_budget(size, CONFIDENCE)]
    realised: dict[tuple[int, int], float] = {}  # (n, K): the same K recurs across pilots
    rng = np.random.default_rng([args.seed, size, sum(map(ord, name))])
    got: dict[tuple[int, str], list[tuple[int, float, float, bool]]] = {(n, m): [] for n in at for m in args.methods}
    for i in range(args.pilots):
        pilot_a, pilot_b = rng.choice(pool_a, size), rng.choice(pool_b, size)
        for method in args.methods:
            for row in plan(pilot_a, pilot_b, at, power=TARGET, confidence=CONFIDENCE, cap=args.cap, method=method,
                            draws=args.draws, seed=i):
                if row.trials_per_group is None:
                    continue
                key = (row.n, row.trials_per_group)
                if key not in realised:  # the pools are the truth: resampling them is exact up to simulation
                    realised[key] = power_at(pool_a, pool_b, row.n, row.trials_per_group, confidence=CONFIDENCE,
                                             method="resample", draws=args.truth, seed=args.seed + 1)
                wrong = row.leader != oracle[row.n].leader
                got[(row.n, method)].append((row.trials_per_group, row.power, realised[key], wrong))
    rows = []
    for (n, method), found in got.items():
        k = np.array([f[0] for f in found], dtype=float)
        rows.append(dict(pair=name, size=size, n=n, method=method, true_k=oracle[n].trials_per_group,
                         least=oracle[n].least, found=len(found) / args.pilots,
                         k_median=float(np.median(k)) if found else np.nan, k_mean=float(k.mean()) if found else np.nan,
                         promised=float(np.mean([f[1] for f in found])) if found else np.nan,
                         realised=float(np.mean([f[2] for f in found])) if found else np.nan,
                         wrong=float(np.mean([f[3] for f in found])) if found else np.nan, count=len(found)))
    return rows


def _num(x: float, fmt: str) -> str:
    return "-" if np.isnan(x) else format(x, fmt)


def kind(row: dict) -> str:
    """Where the row's true K lies: at the floor trials_needed(n) (power is not what binds), within REACH x the
    pilot's N (a pilot can plan), or beyond."""
    if row["true_k"] is not None and row["true_k"] <= max(2, row["least"]):
        return "floor"
    return "near" if row["true_k"] is not None and row["true_k"] <= REACH * row["size"] else "far"


def table(rows: list[dict], cap: int) -> str:
    head = "| pair | pilot N | n | true K | where | method | found | K median (mean) | promised | realised | wrong leader |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        true_k = f"> {cap}" if r["true_k"] is None else str(r["true_k"])
        lines.append(f"| {r['pair']} | {r['size']} | {r['n']} | {true_k} | {kind(r)} | {r['method']} | {r['found']:.2f} "
                     f"| {_num(r['k_median'], '.0f')} ({_num(r['k_mean'], '.0f')}) | {_num(r['promised'], '.3f')} "
                     f"| {_num(r['realised'], '.3f')} | {_num(r['wrong'], '.2f')} |")
    return "\n".join(lines)


def _pooled(rows: list[dict]) -> tuple[float, float, int]:
    """Realised and promised power averaged over every pilot with a K in ``rows`` (each row weighted by its count)."""
    count = sum(r["count"] for r in rows)
    if not count:
        return np.nan, np.nan, 0
    return (sum(r["realised"] * r["count"] for r in rows if r["count"]) / count,
            sum(r["promised"] * r["count"] for r in rows if r["count"]) / count, count)


def bar(rows: list[dict], methods: Sequence[str]) -> str:
    """The issue's bar on 50-trial pilots: realised power within 0.10 of the promised, averaged over pilots."""
    lines = ["Bar on 50-trial pilots: realised power within 0.10 of the promised, averaged over the pilots with a K "
             "(each row's pilots pooled):"]
    groups = (("true K above trials_needed(n) and at most {r} x 50", ("near",)),
              ("true K above {r} x 50 or none up to the cap", ("far",)),
              ("true K at trials_needed(n)", ("floor",)), ("all rows", ("near", "far", "floor")))
    for method in methods:
        mine = [r for r in rows if r["size"] == 50 and r["method"] == method]
        for what, kinds in groups:
            subset = [r for r in mine if kind(r) in kinds]
            if not subset:
                continue
            real, promised, count = _pooled(subset)
            ok = "met" if count and abs(real - promised) <= 0.10 else "missed"
            found = sum(r["found"] for r in subset) / len(subset)
            worst = min((r for r in subset if r["count"]), key=lambda r: r["realised"] - r["promised"], default=None)
            tail = "" if worst is None else (f"; worst row {worst['pair']} n = {worst['n']}: {worst['realised']:.3f} "
                                             f"against {worst['promised']:.3f}")
            lines.append(f"- {method}, {what.format(r=REACH)} ({len(subset)} rows, K found for {found:.0%} of pilots): "
                         f"realised {_num(real, '.3f')} against promised {_num(promised, '.3f')}: {ok}{tail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plan", description=__doc__.splitlines()[0])
    parser.add_argument("--pilots", type=int, default=40, help="pilots per pair and pilot size (default 40; 10: quick)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50], help="pilot trials per group")
    parser.add_argument("--draws", type=int, default=300, help="simulated searches per power in a plan (default 300)")
    parser.add_argument("--truth", type=int, default=400, help="searches from the true pools per realised power")
    parser.add_argument("--cap", type=int, default=2_000, help="the most trials per group a plan considers")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--seed", type=int, default=0)
    add_data_options(parser, "holding opda's *_tuning.results.jsonl, at any depth", "the authors' four search files")
    parser.add_argument("--pairs", nargs="*", help="only these pairs")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {DOC} (between its "
                        "plan-calibration markers)")
    args = parser.parse_args(argv)
    if args.pilots < 1 or args.draws < 1 or args.truth < 1 or args.cap < 2 or any(s < 2 for s in args.sizes):
        raise ValueError("--pilots, --draws, --truth must be >= 1, --cap and every --sizes >= 2")
    pairs = [p for p in opda_pairs(args.data) + author_pairs(args.authors) if not args.pairs or p[0] in args.pairs]
    if not pairs:
        raise ValueError("no pools read: give --data (opda's data/ folder) or --authors (the authors' trial files)")
    start, rows = time.perf_counter(), []
    with one_thread():
        for pair in pairs:
            oracle = truth_plans(pair, args.sizes, args.cap, args.seed)
            for size in args.sizes:
                rows.extend(run_pair(pair, size, oracle, args))
                print(f"{pair[0]} N = {size}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    text = table(rows, args.cap)
    if 50 in args.sizes:
        text += "\n\n" + bar(rows, args.methods)
    text += (f"\n\n{args.pilots} pilots per pair and size, {args.draws} simulated searches per power in a plan, "
             f"{args.truth} searches from the true pools per realised power (SE at most "
             f"{0.5 / args.truth ** 0.5:.3f}), cap {args.cap}, seed {args.seed}.")
    print(text)
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.write:
        write_block(DOC, text, f"python -m benchmarks.plan --pilots {args.pilots} --sizes "
                               f"{' '.join(map(str, args.sizes))} --draws {args.draws} --truth {args.truth} "
                               f"--cap {args.cap} --seed {args.seed} --data <opda's data/> --authors <authors_trials/>",
                    marker="plan-calibration")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
