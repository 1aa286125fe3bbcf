"""Trial counts on an x axis (issue 72: a figure of a million trials): matplotlib's own labels below 10,000, compact
ones (10k, 1M) from there, where ten ticks of six digits ran together."""
import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

from syw.curve.style import integer_ticks, trials_label  # noqa: E402


def _labels(high: float) -> list[str]:
    fig, ax = plt.subplots()
    ax.plot([1, high], [0, 1])
    ax.set_xlim(1, high)
    integer_ticks(ax)
    fig.canvas.draw()
    out = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    plt.close(fig)
    return out


def test_compact_labels():
    assert [trials_label(v) for v in (0, 20, 9_999, 10_000, 250_000, 1_000_000, 2_500_000)] == [
        "0", "20", "9999", "10k", "250k", "1M", "2.5M"]


def test_a_large_axis_is_labelled_compactly_a_small_one_as_matplotlib_does():
    assert _labels(100_000)[-3:] == ["80k", "90k", "100k"] and all(len(label) <= 4 for label in _labels(1_000_000))
    fig, ax = plt.subplots()
    ax.plot([1, 50], [0, 1])
    ax.set_xlim(1, 50)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, min_n_ticks=1))
    fig.canvas.draw()
    plain = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    plt.close(fig)
    assert _labels(50) == plain and plain[-1] == "50"
