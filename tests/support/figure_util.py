"""What the figure tests share: keeping the figures a command draws open, and reading their legends."""
from __future__ import annotations

from syw.figures import plot


def kept(monkeypatch) -> list:
    """The figures drawn from now on, kept open instead of closed after saving."""
    drawn = []
    monkeypatch.setattr(plot.plt, "close", drawn.append)
    return drawn


def legend_texts(fig) -> list[str]:
    """The text of every entry of every legend of ``fig``."""
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]
