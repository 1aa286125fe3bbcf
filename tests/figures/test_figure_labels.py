"""Every figure says what it shows: the dataset in the title, what the shading is, which curve reaches
which target and where that target comes from; a family keeps its colour in anyone's figures too."""
import numpy as np
import pytest

from syw.analysis.group import Group
from syw.curve import style
from syw.figures import plot
from syw.figures.__main__ import main
from syw.figures.specs import FIGURES
from tests.support.fake_records import write_study
from tests.support.figure_util import kept, legend_texts


def test_fig1_names_dataset_shading_and_the_targets_source(tmp_path, monkeypatch):
    write_study(tmp_path / "results", "sst5", {"lr": (0.34, 0.03, 1.5), "cnn": (0.30, 0.06, 40)})
    drawn = kept(monkeypatch)
    assert main(["fig1", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "o")]) == 0
    ax = drawn[0].axes[0]
    assert ax.get_title().startswith("SST-5: Figure 1 from our records")
    assert style.SD_LABEL in legend_texts(drawn[0]) and "clipped to the observed scores" in style.SD_LABEL
    guide = next(t.get_text() for t in ax.texts if "reaches" in t.get_text())
    assert guide.startswith("CNN reaches 0.395 at n = ") and "the paper's example target, Fig. 1 caption" in guide


def test_fig3_reference_lines_say_whose_number_and_when_it_is_reached(tmp_path, monkeypatch):
    spec = FIGURES[3]
    groups = [Group("dam", np.array([0.70, 0.76, 0.80]), None, "DAM"),
              Group("ngram", np.array([0.60, 0.62, 0.64]), None, "n-gram baseline")]
    drawn = kept(monkeypatch)
    plot.draw(spec, groups, "SciTail: Figure 3", tmp_path / "fig3")
    texts = legend_texts(drawn[0])
    # DAM: Eq. 8 at n = 2 is 0.70/9 + 0.76 * 3/9 + 0.80 * 5/9 = 0.7756 >= 0.754; at n = 1 it is 0.7533
    assert "DAM: 0.754 as first published, reached at n = 2" in texts
    assert "n-gram baseline: 0.65 as first published, not reached in 3 trials" in texts
    assert style.SD_LABEL in texts  # every figure shades ±1 SD the same way, and its legend says so


def test_a_long_legend_entry_wraps_inside_the_figure(tmp_path, monkeypatch):
    """scitail_cpu's DGEM label and its reference line run to 103 characters: wrapped, the legend stays
    inside the figure's width instead of being cut at both edges."""
    label = "DGEM (GloVe 50d, approximate structures, 5 epochs)"
    groups = [Group("dgem", np.linspace(0.5, 0.78, 30), None, label), Group("ngram", np.full(5, 0.6), None, "n-gram baseline")]
    drawn = kept(monkeypatch)
    plot.draw(FIGURES[3], groups, "SciTail: Figure 3", tmp_path / "fig3")
    fig = drawn[0]
    entry = next(t for t in legend_texts(fig) if t.startswith(label + ": 0.796"))
    assert entry == label + ": 0.796 as first published,\n  not reached in 30 trials"
    fig.canvas.draw()
    box, width = fig.legends[0].get_window_extent(), fig.bbox.width
    assert box.x0 >= 0 and box.x1 <= width


def test_colours_of_anyones_groups_follow_the_family_names():
    styles = style.colours(["CNN", "LR", "mine", "theirs"])
    assert styles["CNN"] == style.STYLES["cnn"] and styles["LR"] == style.STYLES["lr"]
    assert len({c for c, _ in styles.values()}) == 4
    clash = style.colours(["lr", "glove"])  # both blue in STYLES: the second gets a free colour
    assert clash["lr"][0] == style.BLUE and clash["glove"][0] != style.BLUE


@pytest.mark.parametrize("number,dataset", [(1, "SST-5"), (2, "SST-2"), (3, "SciTail"), (4, "SQuAD")])
def test_every_figure_has_its_datasets_name(number, dataset):
    assert FIGURES[number].dataset == dataset
