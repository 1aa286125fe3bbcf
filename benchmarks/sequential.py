"""Validity, power and trials used of the group-sequential comparison (issue 74): ``python -m benchmarks.sequential``.

Each family is a pair of pools of scores (A, B), as in ``benchmarks/inference.py`` (whose families are reused),
and each resample is two searches run in order, looked at after 10, 20, ..., 50 trials per group (5 looks) or
10, ..., 100 (10 looks), with claims at the pre-stated budgets n = 1 and 5 (``syw.analysis.sequential``,
Bonferroni over the two: alpha / 2 each), 95%. The synthetic families and the authors' published searches
(Dodge et al. 2019, 50-100 trials per family: small pools) are drawn with replacement, i.i.d. as random
search's trials are, and their true curve is Eq. 8 on the pool; opda's large pools (Lourie et al. 2024, 512 and
1,024 trials) are put in a random order per resample and read from its start, without replacement, so that
their true curve is the pool's own unbiased V_n (the mean best over the pool's n-subsets). Per family, looks and
boundary (O'Brien-Fleming-type, Pocock-type; "naive": every look at the fixed-sample level):

- null: two samples of pool A (for opda's pools, the first and the next 100 trials of one order): how often a
  leader is named at any budget and look;
- wrong: A vs B, how often a wrong leader (the group whose true curve is lower there) is named at any budget;
- P1 / P5: how often the true leader is named at n = 1 and 5 by the look the rule stops at;
- E[N]: trials per group used on average, A vs B (two samples of one pool in brackets);
- fixed N: the trials per group of the single test at the end (alpha / 2 per budget, the same t-tests) whose mean
  power over n = 1, 5 equals the rule's, from the same resamples at N = 10, 20, ..., 150 (linear interpolation;
  ">150": not reached).

Real families: ``--data`` (or ``$SYW_OPDA_DATA``) with opda's ``*_tuning.results.jsonl``, ``--authors`` (default
``$SYW_DATA_DIR/authors_trials``) with the authors' files; the synthetic families run without either.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: BLAS threads only contend (run as -m)

import numpy as np  # noqa: E402  (after the thread setting)

from benchmarks.inference import _real, _synthetic, add_data_options, one_thread, write_block  # noqa: E402
from syw.analysis.expected_max import expected_max, expected_max_unbiased  # noqa: E402
from syw.analysis.sequential import Design, LookStatistics, decide, look_statistics  # noqa: E402
from syw.analysis.spending import crossing_probabilities  # noqa: E402
from syw.analysis.student_t import normal_isf, t_isf  # noqa: E402
from syw.core.entry import run_main  # noqa: E402

CONFIDENCE = 0.95
AT = (1, 5)
SCHEDULES = ((10, 20, 30, 40, 50), tuple(range(10, 101, 10)))
RULES = ("obrien-fleming", "pocock", "naive")
SHORT = {"obrien-fleming": "OBF", "pocock": "Pocock", "naive": "naive"}
UNSPLIT = "obrien-fleming, 5% per budget"  # adjust="none" at 5 looks: what the split over the budgets buys
GRID = tuple(range(10, 151, 10))  # the fixed-N designs searched for the rule's power
DOC = Path(__file__).resolve().parent.parent / "docs" / "syw.md"
# the authors' searches compared: (family, figure, A, B)
AUTHORS = (("sst5 LR-CNN", 1, "lr", "cnn"), ("sst2 FR-GloVe", 2, "elmo_frozen", "glove"),
           ("sst2 FT-FR", 2, "elmo_finetuned", "elmo_frozen"), ("scitail DAM-ESIM", 3, "dam", "esim"))


@dataclass(frozen=True)
class Pools:
    """Pools A and B; ``ordered``: each resample is a random order of the pool (without replacement), else i.i.d."""

    name: str
    a: np.ndarray
    b: np.ndarray
    ordered: bool

    def truth(self) -> np.ndarray:
        """+1 where A's true curve is higher at a budget of :data:`AT`, -1 where B's is, 0 at a tie."""
        curve = expected_max_unbiased if self.ordered else expected_max
        gap = curve(self.a, AT) - curve(self.b, AT)
        return np.where(np.abs(gap) <= 1e-12, 0, np.sign(gap)).astype(int)

    def draw(self, rng: np.random.Generator, size: int, null: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` trials of A and of B in order, and ``null`` more of A (disjoint from the first when ordered)."""
        if not self.ordered:
            return rng.choice(self.a, size), rng.choice(self.b, size), rng.choice(self.a, null)
        order = rng.permutation(self.a)
        return order[:size], rng.permutation(self.b)[:size], order[size:size + null]


def _authors(folder: Path | None) -> list[Pools]:
    """The authors' searches of :data:`AUTHORS` whose files lie in ``folder`` (their sha256 checked; nothing downloaded)."""
    if folder is None:
        return []
    from syw.figures.sources import paper_groups, paper_rows  # the figures' reader: the same floors
    from syw.figures.specs import FIGURES

    out, read = [], {}
    for name, figure, a, b in AUTHORS:
        spec = FIGURES[figure]
        if not (folder / spec.paper.name).is_file():
            continue
        if figure not in read:
            read[figure] = {g.name: g.scores for g in paper_groups(spec, paper_rows(spec, folder))}
        out.append(Pools(name, read[figure][a], read[figure][b], ordered=False))
    return out


def pools(seed: int, pool: int, data: Path | None, authors: Path | None) -> list[Pools]:
    synthetic = [Pools(f.name, f.a, f.b, False) for f in _synthetic(np.random.default_rng([seed, 1]), pool)]
    return synthetic + [Pools(f.name, f.a, f.b, True) for f in _real(data)] + _authors(authors)


def _rows(stats: LookStatistics, looks: Sequence[int]) -> LookStatistics:
    """The statistics at ``looks`` only (a prefix design's)."""
    idx = [stats.looks.index(k) for k in looks]
    return LookStatistics(tuple(looks), stats.at, stats.estimate[idx], stats.se[idx], stats.df[idx])


def _signs(result) -> np.ndarray:
    return np.array([0 if r.leader is None else 1 if r.leader == "A" else -1 for r in result.decisions().values()])


def run_family(fam: Pools, reps: int, rng: np.random.Generator) -> dict[tuple[int, str], dict[str, float]]:
    """Per (looks, rule): the rates of the module doc over ``reps`` resamples, and the fixed-N power curve."""
    truth = fam.truth()
    grid = Design(GRID, AT, CONFIDENCE)  # only to compute the statistics at every N of the fixed-N search
    top = SCHEDULES[-1]
    null_design = Design(top, AT, CONFIDENCE)
    designs = {(len(s), rule): Design(s, AT, CONFIDENCE, rule) for s in SCHEDULES for rule in RULES}
    designs[(len(SCHEDULES[0]), UNSPLIT)] = Design(SCHEDULES[0], AT, CONFIDENCE, "obrien-fleming", "none")
    alpha = designs[(len(top), "naive")].alpha
    acc = {key: np.zeros(7) for key in designs}  # null, wrong, P1, P5, E[N], E[N] null, mean power
    fixed_right = np.zeros((len(GRID), len(AT)))
    for _ in range(reps):
        xa, xb, xa2 = fam.draw(rng, GRID[-1], top[-1])
        alt = look_statistics(xa, xb, grid)
        null = look_statistics(xa[:top[-1]], xa2, null_design)
        for (count, rule), design in designs.items():
            looks = design.looks
            run, run0 = decide(_rows(alt, looks), design), decide(_rows(null, looks), design)
            named, named0 = _signs(run), _signs(run0)
            right = (named != 0) & (named == truth)
            acc[(count, rule)] += [np.any(named0 != 0), np.any((named != 0) & (named != truth)), right[0], right[1],
                                   run.trials_used, run0.trials_used, right.mean()]
        live = np.isfinite(alt.df)
        crit = np.full(live.shape, np.inf)
        crit[live] = t_isf(alpha / 2.0, alt.df[live])
        t = np.where(live, alt.estimate / np.where(live, alt.se, 1.0), 0.0)
        fixed_right += (np.abs(t) > crit) & (np.sign(t) == truth)
    out = {}
    curve = (fixed_right / reps).mean(axis=1)
    for key, sums in acc.items():
        r = dict(zip(("null", "wrong", "P1", "P5", "EN", "EN0", "power"), sums / reps))
        out[key] = r | {"fixed": _match(curve, r["power"])}
    return out


def _match(curve: np.ndarray, power: float) -> float:
    """The N of the fixed-N power curve (over :data:`GRID`) where it first reaches ``power``, interpolated."""
    above = np.flatnonzero(curve >= power)
    if not above.size:
        return np.inf
    i = int(above[0])
    if i == 0 or curve[i] == curve[i - 1]:
        return float(GRID[i])
    return GRID[i - 1] + (power - curve[i - 1]) / (curve[i] - curve[i - 1]) * (GRID[i] - GRID[i - 1])


def _three(cell: dict, key: str, fmt: str = ".3f") -> str:
    return " / ".join(format(cell[rule][key], fmt) for rule in RULES)


def _fixed(value: float) -> str:
    return f">{GRID[-1]}" if not np.isfinite(value) else f"{value:.0f}"


def table(rows: list[tuple[str, int, dict[str, dict[str, float]]]]) -> str:
    head = ("| family | looks | null: OBF / Pocock / naive | wrong: OBF / Pocock / naive | P1 / P5: OBF | P1 / P5: Pocock "
            "| P1 / P5: naive | E[N] (null): OBF | E[N] (null): Pocock | fixed N, same power: OBF / Pocock |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, count, cell in rows:
        pp = {rule: f"{cell[rule]['P1']:.3f} / {cell[rule]['P5']:.3f}" for rule in RULES}
        en = {rule: f"{cell[rule]['EN']:.1f} ({cell[rule]['EN0']:.1f})" for rule in RULES}
        lines.append(f"| {name} | {SCHEDULES[0][-1] if count == len(SCHEDULES[0]) else SCHEDULES[1][-1]} by 10 "
                     f"| {_three(cell, 'null')} | {_three(cell, 'wrong')} | {pp['obrien-fleming']} | {pp['pocock']} "
                     f"| {pp['naive']} | {en['obrien-fleming']} | {en['pocock']} "
                     f"| {_fixed(cell['obrien-fleming']['fixed'])} / {_fixed(cell['pocock']['fixed'])} |")
    return "\n".join(lines)


def bar(rows: list[tuple[str, int, dict[str, dict[str, float]]]], reps: int) -> str:
    """The issue's bar: every family's error under the rule within 5% + 2 Monte-Carlo SEs, and the naive rule's."""
    margin = 2 * (0.05 * 0.95 / reps) ** 0.5
    lines = [f"Bar (95%, Monte-Carlo margin 2 SE = {margin:.3f}): the largest rate of a leader named on two samples of one "
             "pool, and of a wrong leader on two pools, over the families:"]
    for rule in RULES:
        for count in (len(s) for s in SCHEDULES):
            cells = [cell[rule] for _, c, cell in rows if c == count]
            if not cells:
                continue
            worst = max(max(c["null"], c["wrong"]) for c in cells)
            over = [name for name, c, cell in rows if c == count and max(cell[rule]["null"], cell[rule]["wrong"]) > 0.05 + margin]
            lines.append(f"- {SHORT[rule]}, {count} looks: {worst:.3f}" + (f" (over the bar: {', '.join(over)})" if over else " (within)"))
    unsplit = [(name, cell[UNSPLIT]) for name, c, cell in rows if UNSPLIT in cell]
    if unsplit:
        worst = max(unsplit, key=lambda item: max(item[1]["null"], item[1]["wrong"]))
        lines.append(f"- OBF, 5 looks, without the split over n = 1, 5 (5% each): {max(worst[1]['null'], worst[1]['wrong']):.3f} "
                     f"({worst[0]}); a leader named on one pool in {np.mean([c['null'] for _, c in unsplit]):.3f} of resamples "
                     "on average over the families")
    z = float(normal_isf(0.025 / 2))
    theory = ", ".join(f"{crossing_probabilities(np.array(s) / s[-1], [z] * len(s)).sum():.3f} with {len(s)} looks" for s in SCHEDULES)
    lines.append(f"- the naive rule on one budget at alpha 0.025 under the normal law (jackknife T as Z): {theory}; the "
                 "spending rules: 0.025 by construction")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sequential", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="resamples per family (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", type=int, default=100_000, help="population size of the synthetic families")
    add_data_options(parser, "with opda's *_tuning.results.jsonl", "the authors' trial files")
    parser.add_argument("--families", nargs="*", help="only these families")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {DOC} (between its sequential markers)")
    args = parser.parse_args(argv)
    if args.reps < 1:
        raise ValueError(f"--reps must be >= 1, got {args.reps}")
    data = args.data if args.data is not None and args.data.is_dir() else None
    authors = args.authors if args.authors is not None and args.authors.is_dir() else None
    fams = [f for f in pools(args.seed, args.pool, data, authors) if not args.families or f.name in args.families]
    start, rows = time.perf_counter(), []
    with one_thread():
        for fam in fams:
            cells = run_family(fam, args.reps, np.random.default_rng([args.seed, sum(map(ord, fam.name))]))
            for count in (len(s) for s in SCHEDULES):
                rows.append((fam.name, count, {rule: cell for (c, rule), cell in cells.items() if c == count}))
            print(f"{fam.name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    text = table(rows) + "\n\n" + bar(rows, args.reps)
    skipped = [what for what, have in (("opda's (--data)", data), ("the authors' (--authors)", authors)) if have is None]
    text += (f"\n\n{args.reps} resamples per family (seed {args.seed}): Monte-Carlo SE {(0.05 * 0.95 / args.reps) ** 0.5:.3f} at "
             "a rate of 0.05." + (f" Skipped: {' and '.join(skipped)} families." if skipped else ""))
    print(text)
    if args.write:
        write_block(DOC, text, f"python -m benchmarks.sequential --reps {args.reps} --seed {args.seed} --data <opda's data/ files> "
                               "--authors <the authors' trial files>", marker="sequential")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
