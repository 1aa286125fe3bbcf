"""How a README fact is written: each kind of number has one default format, and a marker's
``fmt`` may name another (see :func:`render`). The number is rounded here, once."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syw.core.units import human_duration, score
from syw.pages.readme_data import FactError


@dataclass(frozen=True)
class Value:
    """A fact before formatting: ``kind`` picks the default format (see :func:`render`)."""

    value: Any
    kind: str  # score, count, number, share, param, seconds, clock or text


DEFAULT_FORMAT = {"count": ",d", "number": ".1f", "share": ".0%", "scaled": ",.0f"}


def _duration(seconds: float, fmt: str) -> str:
    if fmt == "human":
        return human_duration(seconds)
    if fmt in ("h", "min"):
        return f"{seconds / (3600 if fmt == 'h' else 60):.1f} {fmt}"
    if fmt in ("hm", "hms"):
        total = round(seconds) if fmt == "hms" else round(seconds / 60) * 60
        hours, rest = divmod(int(total), 3600)
        minutes, secs = divmod(rest, 60)
        parts = [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes or not hours) + [f"{secs} s"] * bool(fmt == "hms" and secs)
        return " ".join(parts)
    return format(seconds, fmt)


def _param(value: Any) -> str:
    if isinstance(value, float):
        mantissa, _, exponent = f"{value:.1e}".partition("e")
        return f"{mantissa}e{int(exponent)}"
    return str(value)


def render(fact: Value, fmt: str | None) -> str:
    """``fact`` written with ``fmt``, or its kind's default: scores to 3 decimals (from a million on,
    4 significant digits and an exponent: a diverged perplexity of 1e34 stays readable), counts whole,
    durations as ``3.0 min``/``2.9 h``, learning rates as ``2.9e-3``, clock times as ``19:45``.

    ``fmt`` is a Python format spec (``.4f``, ``,d``, ``.1%``); for a duration ``human``
    (``3.0 min``), ``h`` (``3.2 h``), ``min`` (``29.6 min``), ``hm`` (``3 h 43 min``), ``hms``
    (``2 h 34 min 6 s``) or a spec applied to seconds; for a clock time a ``strftime`` pattern."""
    try:
        if fact.kind == "text":
            return str(fact.value)
        if fact.kind == "seconds":
            return _duration(float(fact.value), fmt or "human")
        if fact.kind == "clock":
            return fact.value.strftime(fmt or "%H:%M")
        if fact.kind == "param" and not fmt:
            return _param(fact.value)
        if fact.kind == "score" and not fmt:
            return score(fact.value, 3)
        return format(fact.value, fmt or DEFAULT_FORMAT.get(fact.kind, ""))
    except (TypeError, ValueError) as err:
        raise FactError(f"fmt={fmt!r} cannot write {fact.value!r}: {err}") from None


def field_kind(name: str) -> str:
    """The kind of a trial field: scores for values and extra metrics, ``param`` for an assignment."""
    if name == "value" or name.startswith("extra."):
        return "score"
    if "/" in name:
        return "number"
    if len(name) > 2 and name[0] == name[-1] == "|":
        return field_kind(name[1:-1])
    if "-" in name:
        return field_kind(name.split("-", 1)[0])
    if name.startswith("with."):
        return field_kind(name[5:])
    if name.startswith("params."):
        return "param"
    return {"seconds": "seconds", "epoch_seconds": "seconds", "minutes": "number", "hours": "number",
            "commit": "text", "started": "clock", "ended": "clock"}.get(name, "count")
