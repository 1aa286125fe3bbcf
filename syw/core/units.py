"""How the suite writes durations, counts and lists of numbers for people: progress lines, budget tables, reports."""
from __future__ import annotations

import math


def human_duration(seconds: float | None) -> str:
    """``"250 ms"``, ``"42 s"``, ``"3.5 min"``, ``"1.2 h"`` or ``"2.0 d"``; ``"-"`` when unknown (None or not
    finite). Under a second in milliseconds (two significant digits under 10 ms), so no time prints as 0 s."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    if 0 < seconds < 0.9995:
        ms = seconds * 1000
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.2g} ms"
    return f"{seconds:.0f} s"


def stretches_text(stretches: list[tuple[str, int, int]]) -> str:
    """(who, first n, last n) stretches in words: ``"nas at n = 1-4; lstm at n = 5-20"``."""
    return "; ".join(f"{who} at n = {a}" + (f"-{b}" if b > a else "") for who, a, b in stretches)


def spans(numbers: list[int]) -> str:
    """Sorted integers as their runs: ``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


def count(n: float, what: str) -> str:
    """``n`` and the noun, plural unless n is 1: "1 trial", "2 trials", "0.5 GPUs"."""
    return f"{n:g} {what}{'' if n == 1 else 's'}"


def score(value: float, decimals: int = 2) -> str:
    """A score with ``decimals`` places; from a million on, 4 significant digits and an exponent, so that a
    diverged perplexity of 1e34 stays readable: ``score(176.61)`` -> ``"176.61"``, ``score(5.08e32)`` -> ``"5.083e+32"``."""
    value = float(value)
    return format(value, ".3e") if math.isfinite(value) and abs(value) >= 1e6 else f"{value:.{decimals}f}"
