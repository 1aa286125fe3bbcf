"""The argument types of ``syw curve`` and ``syw plan``: a target (``0.9=why``), a relabelling (``OLD=NEW``), a
statistic (``mean``, ``median``, ``q=0.9``) and a level; each refuses a bad value with argparse's one error line."""
from __future__ import annotations

import argparse

from syw.analysis.statistic import Statistic


def target(text: str) -> tuple[float, str]:
    value, _, note = text.partition("=")
    try:
        return float(value), note.strip()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a target: use a number, e.g. 0.9 or 0.9=why") from None


def relabelling(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError(f"{text!r} is not a relabelling: use OLD=NEW, e.g. svc-random=SVC")
    return old, new


def statistic(text: str) -> Statistic:
    try:
        return Statistic.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def fraction(text: str) -> float:
    """argparse type: a level or probability strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not a level: it must be between 0 and 1")
    return value
