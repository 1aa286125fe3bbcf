"""Tables for a paper in LaTeX (booktabs): the expected best score by budget (Eq. 8 of Dodge et al. 2019,
± its SD) and the comparisons of two groups' curves (``syw.analysis.compare`` / ``syw.analysis.inference``).
Each is a ``tabular`` to ``\\input`` into a ``table`` environment; it needs ``\\usepackage{booktabs}``."""
from __future__ import annotations

from syw.analysis.compare import Difference, stretches, undecided_with
from syw.analysis.curves import Curve

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
           "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: str) -> str:
    """``text`` as LaTeX prints it literally (a group named ``svc_random`` keeps its underscore)."""
    return "".join(SPECIAL.get(ch, ch) for ch in str(text))


def _tabular(columns: str, header: list[str], rows: list[list[str]]) -> str:
    lines = ["% needs \\usepackage{booktabs}", f"\\begin{{tabular}}{{{columns}}}", "\\toprule",
             " & ".join(header) + r" \\", "\\midrule"]
    lines += [" & ".join(row) + r" \\" for row in rows]
    return "\n".join(lines + ["\\bottomrule", "\\end{tabular}", ""])


def expected_max_table(curves: list[Curve], budgets: list[int]) -> str:
    """One row per group: N, then at each budget n the drawn curve (Eq. 8, or the quantile curve) ± Eq. 8's SD
    (an adaptive search: its best so far over runs ± their SD); "--" past a group's N."""
    header = ["Group", "$N$"] + [f"$n = {n}$" for n in budgets]
    rows = []
    for c in curves:
        cells = [f"{c.at(n):.3f} $\\pm$ {c.at(n, c.sd):.3f}" if n <= c.ns[c.drawn.size - 1] else "--" for n in budgets]
        rows.append([escape(c.name) + (f" ({escape(c.strategy)})" if c.strategy else ""), str(c.scores.size), *cells])
    return _tabular("l" + "r" * (len(budgets) + 1), header, rows)


def comparison_table(diffs: list[Difference]) -> str:
    """One row per pair: the budgets compared, the method and level of its claims, and who leads where
    ("undecided with 20 and 20 trials" where no one does)."""
    header = ["Comparison", "Budgets", "Claims", "Who leads"]
    rows = []
    for d in diffs:
        a, b = (escape(n) for n in d.names)
        undecided = f"undecided with {undecided_with(d.sizes)}"
        if d.claim == "simultaneous":
            budgets = f"$1$--${d.ns[-1]}$"
            where = "; ".join(f"{escape(who) if who else undecided} for $n \\in [{first}, {last}]$"
                              for who, first, last in stretches(d))
        else:  # claims at budgets stated in advance, each on its own
            budgets = ", ".join(map(str, d.ns.tolist()))
            where = "; ".join(f"{escape(who) if who else undecided} at $n = {n}$" for who, n in zip(d.leader(), d.ns.tolist()))
        rows.append([f"{a} vs {b}", budgets, escape(d.what), where])
    return _tabular("llll", header, rows)
