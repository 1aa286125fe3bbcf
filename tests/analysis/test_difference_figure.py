"""The difference figure of ``syw curve`` (syw.curve.figure.draw_difference): a solid, labelled zero line (issue 73)."""
import numpy as np

from syw.analysis.inference import compare
from syw.curve import figure


def test_the_difference_figure_draws_zero_as_a_labelled_solid_line(tmp_path, monkeypatch):
    seen = {}

    def keep(fig, ax, out_stem, extra=None):
        seen["ax"] = ax
        return []

    monkeypatch.setattr(figure, "finish", keep)
    rng = np.random.default_rng(0)
    diff = compare(rng.normal(0.5, 0.1, 30), rng.normal(0.48, 0.1, 30), ("a", "b"))
    figure.draw_difference(diff, tmp_path / "difference", ylabel="Difference")
    zero = [line for line in seen["ax"].get_lines() if list(line.get_ydata()) == [0, 0]]
    assert len(zero) == 1 and zero[0].get_linestyle() == "-" and zero[0].get_label() == "0: no difference"
    assert "0: no difference" in seen["ax"].get_legend_handles_labels()[1]
