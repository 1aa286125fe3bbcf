"""How the suite writes a duration for people: progress lines, budget tables, reports."""
from __future__ import annotations

import math


def human_duration(seconds: float | None) -> str:
    """``"42 s"``, ``"3.5 min"``, ``"1.2 h"`` or ``"2.0 d"``; ``"-"`` when unknown (None or not finite)."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
