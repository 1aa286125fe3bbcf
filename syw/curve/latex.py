"""Tables for a paper in LaTeX (booktabs): the expected best score by budget (Eq. 8 of Dodge et al. 2019,
± its SD) and the comparisons of two groups' curves (``syw.analysis.compare`` / ``syw.analysis.inference``).
Each is a ``tabular`` to ``\\input`` into a ``table`` environment; it needs ``\\usepackage{booktabs}``."""
from __future__ import annotations

from collections.abc import Mapping

from syw.analysis.compare import Difference, stretches
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


def undecided(names: tuple[str, str], sizes: Mapping[str, int] | None) -> str:
    """Where no group leads at the comparison's level: "undecided with 20 and 30 trials" (each group's N, in the
    comparison's order; "these trials" when not given): more trials could decide it."""
    if sizes is None or not all(n in sizes for n in names):
        return "undecided with these trials"
    return f"undecided with {sizes[names[0]]} and {sizes[names[1]]} trials"


def comparison_table(diffs: list[Difference], sizes: Mapping[str, int] | None = None) -> str:
    """One row per pair: the budgets compared, the method and level of its claims, and who leads where (where no
    one does, "undecided with" each group's N of ``sizes``, group name -> N)."""
    header = ["Comparison", "Budgets", "Claims", "Who leads"]
    rows = []
    for d in diffs:
        a, b = (escape(n) for n in d.names)
        open_ = escape(undecided(d.names, sizes))
        if d.claim == "simultaneous":
            budgets = f"$1$--${d.ns[-1]}$"
            where = "; ".join(f"{escape(who) if who else open_} for $n \\in [{first}, {last}]$"
                              for who, first, last in stretches(d))
        else:  # claims at budgets stated in advance, each on its own
            budgets = ", ".join(map(str, d.ns.tolist()))
            where = "; ".join(f"{escape(who) if who else open_} at $n = {n}$" for who, n in zip(d.leader(), d.ns.tolist()))
        rows.append([f"{a} vs {b}", budgets, escape(d.what), where])
    return _tabular("llll", header, rows)
