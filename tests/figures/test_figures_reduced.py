"""Figures 2-4 draw the reduced study, saying so in the title, when the full study has no records."""
import matplotlib.pyplot as plt

from syw.figures import __main__ as cli
from syw.figures.specs import FIGURES
from tests.support.fake_records import write_study

SCITAIL = {"ngram": (0.62, 0.05, 2.0), "dam": (0.66, 0.05, 60.0), "esim": (0.64, 0.06, 300.0), "dgem": (0.6, 0.05, 100.0)}


def test_fig3_falls_back_to_the_cpu_study_and_names_the_reduction(tmp_path, monkeypatch):
    """Figure 3 draws scitail_cpu (the full train split, issue 34) while scitail has no records; the
    2,126-pair run stays drawable as the variant ``reduced``."""
    results = tmp_path / "results"
    write_study(results, "scitail_reduced", SCITAIL, n=30)
    write_study(results, "scitail_cpu", SCITAIL, n=30)
    assert cli.study_of(FIGURES[3], None, results) == "scitail_cpu"
    assert cli.study_of(FIGURES[3], "reduced", results) == "scitail_reduced"
    titles = []
    monkeypatch.setattr(plt.Axes, "set_title", lambda self, text, **kw: titles.append(text))
    assert cli.main(["fig3", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "fig3.png").is_file()
    assert titles and "(scitail_cpu)" in titles[0] and len(titles[0].splitlines()) <= 2
    assert "REDUCED: GloVe 6B 50d; DAM 30 epochs, ESIM 3" in (tmp_path / "out" / "fig3_caption.md").read_text()
    assert cli.main(["fig3", "--variant", "reduced", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert "REDUCED: trained on 2,126 SciTail test pairs" in (tmp_path / "out" / "fig3_reduced_caption.md").read_text()
    write_study(results, "scitail", SCITAIL, n=5)  # once the full study has records, it is the one drawn
    assert cli.study_of(FIGURES[3], None, results) == "scitail"
    assert cli.study_of(FIGURES[3], "as_run", results) == "scitail_as_run"


def test_budgets_list_the_reduced_study(tmp_path):
    results = tmp_path / "results"
    write_study(results, "scitail_cpu", SCITAIL, n=30)
    assert cli.main(["budgets", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "budgets_ours.md").read_text()
    assert "scitail_cpu" in text and "0.754" in text  # DAM's previously reported accuracy is a target


def test_round_time_ticks_fall_inside_the_range_and_thin_out():
    from syw.curve.style import ROUND_DURATIONS, round_time_ticks
    assert round_time_ticks(1200, 7200) == {"20min": 1200.0, "1h": 3600.0, "2h": 7200.0}
    wide = round_time_ticks(60, 40 * 86400)  # all 15 round durations lie inside: every 3rd, 5 of them
    assert list(wide) == ["1min", "10min", "2h", "1d", "8d"]
    values = list(ROUND_DURATIONS.values())
    assert min(b / a for a, b in zip(values, values[1:])) >= 2  # no two labels crowd each other
    assert round_time_ticks(61, 119) == {}


def test_a_reduced_time_figure_is_drawn_on_its_own_axes(tmp_path, monkeypatch):
    """Figure 4's paper axes (8 h to 40 d, EM 0.3-0.7) would show nothing of a CPU study's minutes and
    low scores: the reduced study gets limits from its records and round-duration ticks."""
    results = tmp_path / "results"
    write_study(results, "squad_reduced", {"bidaf": (0.05, 0.02, 900.0)}, n=16)
    ticks, ylims = [], []
    monkeypatch.setattr(plt.Axes, "set_xticks", lambda self, values, labels=None, **kw: ticks.append(list(labels)))
    monkeypatch.setattr(plt.Axes, "set_ylim", lambda self, *a, **kw: ylims.append(a))
    assert cli.main(["fig4", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert ticks and "40d" not in ticks[-1] and set(ticks[-1]) <= {"10min", "20min", "1h", "2h", "4h"}
    low, high = ylims[-1]
    assert low < 0.05 and high < 0.677  # the curve fills the axes; an arrow names the reported 67.7 above them
    assert FIGURES[4].xlim == (8 * 3600, 40 * 86400)  # the paper's figure keeps its axes


def test_the_authors_figure_keeps_the_papers_axes_when_a_reduced_study_has_records(tmp_path, monkeypatch):
    from tests.support.fake_records import use_paper_file

    results = tmp_path / "results"
    write_study(results, "squad_reduced", {"bidaf": (0.05, 0.02, 900.0)}, n=16)
    use_paper_file(monkeypatch, tmp_path / "paper", 4)
    ticks, ylims = [], []
    monkeypatch.setattr(plt.Axes, "set_xticks", lambda self, values, labels=None, **kw: ticks.append(list(labels)))
    monkeypatch.setattr(plt.Axes, "set_ylim", lambda self, *a, **kw: ylims.append(a))
    assert cli.main(["fig4", "--source", "paper", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert ticks[-1] == ["8h", "1d", "3d", "10d", "40d"] and ylims[-1] == (0.3, 0.7)


def test_the_study_with_records_is_the_full_one_first_and_no_records_names_both(tmp_path):
    import pytest

    from syw.figures.sources import has_records, study_with_records
    results = tmp_path / "results"
    with pytest.raises(FileNotFoundError, match=r"results/full nor in .*results/small: run `syw run study=small`"):
        study_with_records(results, "full", "small")
    assert study_with_records(results, "full", None) == "full"  # no reduced study: the full one's own error follows
    write_study(results, "small", SCITAIL, n=2)
    assert (has_records(results, "small"), study_with_records(results, "full", "small")) == (True, "small")
    write_study(results, "full", SCITAIL, n=2)
    assert study_with_records(results, "full", "small") == "full"
