"""Figures and budget tables from generated records (ours) and generated published-layout TSVs (paper)."""
import subprocess
import urllib.error
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.core.entry import run_main
from syw.core.errors import DataError
from syw.core.manifest import manifest_of
from syw.curve.style import STYLES
from syw.figures import sources
from syw.figures.__main__ import main
from syw.figures.specs import FIGURES
from tests.support import oracle
from tests.support.fake_records import spec_for_paper_file, use_paper_file, write_paper_file, write_records, write_study

STUDIES = {
    1: ("sst5", {"lr": (0.34, 0.03, 1.5), "cnn": (0.29, 0.06, 40)}),
    2: ("sst2_bcn", {"glove": (0.85, 0.02, 1600), "elmo_frozen": (0.88, 0.03, 6800), "elmo_finetuned": (0.87, 0.05, 16000)}),
    3: ("scitail", {"ngram": (0.70, 0.03, 130), "dam": (0.72, 0.08, 340), "esim": (0.74, 0.08, 370), "dgem": (0.70, 0.1, 1000)}),
    4: ("squad", {"bidaf": (0.55, 0.1, 31617)}),
}


@pytest.fixture
def records(tmp_path):
    for study, families in STUDIES.values():
        write_study(tmp_path / "results", study, families)
    return tmp_path / "results"


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_each_figure_renders_from_our_records(records, tmp_path, number):
    out = tmp_path / "fig"
    assert main([f"fig{number}", "--results", str(records), "--out", str(out)]) == 0
    png = out / f"fig{number}.png"
    assert (out / f"fig{number}.pdf").stat().st_size > 1000
    with Image.open(png) as image:
        assert image.size[0] >= 900 and image.size[1] >= 600  # readable at paper size (5 x 3.6 in at 200 dpi)
        pixels = np.asarray(image.convert("L"))
        assert (pixels < 128).mean() > 0.005  # something was drawn


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_each_figure_renders_from_paper_layout(tmp_path, monkeypatch, number):
    use_paper_file(monkeypatch, tmp_path / "paper", number)
    out = tmp_path / "fig"
    assert main([f"fig{number}", "--source", "paper", "--out", str(out)]) == 0
    assert (out / f"fig{number}_paper.png").is_file() and not (out / f"fig{number}.png").exists()


def test_curves_stop_at_the_trials_there_are(tmp_path):
    from syw.analysis import expected_max
    from syw.figures import as_run, budgets, plot, report

    scores = np.array([0.3, 0.5, 0.4, 0.2, 0.45])
    group = Group("cnn", scores, None, "CNN")
    ns, mean, sd = curve_of(group).upto(50)  # the axis goes to 50, the curve to N = 5
    assert ns.tolist() == [1, 2, 3, 4, 5] and mean.size == sd.size == 5
    assert mean == pytest.approx(expected_max(scores, ns))
    assert curve_of(group).upto(as_run.N_MAX)[1].size == 5
    # one curve helper (Group.curve) for figures, the as-run comparison, budget tables and reports
    assert not any(hasattr(module, name) for module in (plot, as_run, budgets, report) for name in ("curve", "budgets"))
    row = as_run.curve_row(group)
    assert row["n=1"] == f"{scores.mean():.4f}" and row["n=10"] == row["n=50"] == "-"


def test_colours_follow_the_family_not_its_place_in_the_list(records, tmp_path, monkeypatch):
    """Before, the i-th curve took the i-th colour: with LR's records empty, the CNN was drawn in LR's blue."""
    from syw.figures import plot

    drawn = []
    monkeypatch.setattr(plot.plt, "close", drawn.append)
    groups = sources.from_records("sst5", records)
    for order in (groups, groups[::-1], groups[1:]):
        plot.draw(FIGURES[1], order, "Figure 1", tmp_path / "fig1")
    colours = [{line.get_label(): (line.get_color(), line.get_linestyle()) for line in fig.axes[0].lines
                if not line.get_label().startswith("_")} for fig in drawn]
    by_label = {g.label: STYLES[g.name] for g in groups}
    assert colours[0] == colours[1] == by_label and colours[2] == {groups[1].label: by_label[groups[1].label]}


def test_every_family_has_a_style_and_families_drawn_together_differ():
    from syw.experiments.space import study_config
    from syw.figures import as_run, plot

    for study in ("sst5", "sst5_as_run", "sst5_as_run_random", "sst5_as_run_replay", "sst2_bcn", "scitail", "squad"):
        families = list(study_config(study)["families"])
        assert len({plot.style(f) for f in families}) == len(families), study
    together = ["lr", "cnn_reported", "cnn_as_run", "cnn_as_run_random", "cnn_as_run_replay", "cnn_authors"]  # as_run.compare_fig1
    assert len({plot.style(f) for f in together}) == len(together) and as_run.N_MAX == 50
    with pytest.raises(ValueError, match="'elmo_new' has no colour in STYLES"):
        plot.style("elmo_new")


def test_a_figure_never_leaves_a_family_out(records, tmp_path, capsys):
    lr = records / "sst5" / "lr.jsonl"
    write_records(lr, [])
    assert run_main(main, ["fig1", "--results", str(records), "--out", str(tmp_path / "o")]) == 2
    assert f"error: {lr}: no ok trial of family 'lr'" in capsys.readouterr().err
    lr.unlink()
    manifest_of(lr).unlink()
    assert run_main(main, ["fig1", "--results", str(records), "--out", str(tmp_path / "o")]) == 2
    assert f"error: {lr}: no records of family 'lr'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main(["budgets", "--results", str(records), "--out", str(tmp_path / "b")]) == 0  # figure 1 skipped, saying why
    assert "lr.jsonl: no records of family 'lr'" in (tmp_path / "b" / "budgets_ours.md").read_text().split("## Figure 1: no table")[1]


def test_dgem_placeholder_durations_mean_no_time_axis(tmp_path):
    path = write_paper_file(tmp_path, 3)
    groups = sources.from_paper(spec_for_paper_file(3, path), folder=tmp_path)
    by = {g.name: g for g in groups}
    assert by["dgem"].durations is None and by["dam"].durations is not None
    assert [g.scores.size for g in groups] == [50, 50, 50, 50]


def test_missing_paper_file_without_network_is_a_clear_message(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    monkeypatch.setattr(sources.from_paper, "__defaults__", (tmp_path, None))
    monkeypatch.delenv("SYW_DATA_DIR", raising=False)  # no data folder holding the authors' files either
    assert run_main(main, ["fig3", "--source", "paper", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "scitail_search.tsv" in err and "raw.githubusercontent.com/dodgejesse/reproducibility" in err
    assert str(tmp_path) in err and "SYW_DATA_DIR" in err and "Traceback" not in err


def test_the_data_folders_copy_is_read_in_place_before_any_download(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise AssertionError("nothing is downloaded when the data folder holds the file")

    shared = write_paper_file(tmp_path / "data" / sources.AUTHORS_SUBDIR, 3)
    spec = spec_for_paper_file(3, shared)
    monkeypatch.setattr("urllib.request.urlopen", offline)
    monkeypatch.setenv("SYW_DATA_DIR", str(tmp_path / "data"))
    assert sources.ensure_paper_file(spec.paper, tmp_path / "results") == shared
    assert not (tmp_path / "results").exists()  # read where it is, not copied
    frame = pd.read_csv(shared, sep="\t")
    dam = frame[frame[spec.paper.group_column] == "dam"][spec.paper.metric_column].to_numpy()
    by = {g.name: g for g in sources.from_paper(spec, folder=tmp_path / "results")}
    assert by["dam"].scores.tolist() == np.maximum(dam, 0.5).tolist()  # SciTail's floor: chance over 2 classes
    shared.write_text(shared.read_text() + "dam\t0.5\t1.0\t0.1\n")  # not the published bytes
    with pytest.raises(DataError, match=f"^{shared} has sha256 .*: not the published file; replace it"):
        sources.ensure_paper_file(spec.paper, tmp_path / "results")


def test_wrong_checksum_is_refused(tmp_path):
    path = write_paper_file(tmp_path, 1)
    with pytest.raises(DataError, match="sha256"):
        sources.ensure_paper_file(FIGURES[1].paper, tmp_path)
    assert path.exists()


def test_budget_table(records, tmp_path):
    out = tmp_path / "b"
    assert main(["budgets", "--results", str(records), "--out", str(out)]) == 0
    table = pd.read_csv(out / "budgets_ours.csv")
    assert {"study", "family", "statistic", "target", "trials", "seconds"} <= set(table.columns)
    assert set(table.study) == {"sst5", "sst2_bcn", "scitail", "squad"}
    em1 = table[(table.study == "sst5") & (table.family == "lr") & (table.statistic == "expected_max") & (table.trials == 1)]
    lr = pd.read_json(records / "sst5" / "lr.jsonl", lines=True)
    assert em1.value.iloc[0] == pytest.approx(lr.value.mean(), abs=1e-6)
    reach = table[(table.study == "squad") & (table.statistic == "budget_to_reach") & (table.target == 0.677)]
    assert len(reach) == 1
    text = (out / "budgets_ours.md").read_text()
    assert "Rule: The budget to reach a target is the smallest n" in text
    assert "The paper says: the CNN needs 16 trials to reach 0.395" in text


def test_budget_table_says_which_figures_have_no_records(records, tmp_path):
    import shutil

    shutil.rmtree(records / "sst2_bcn")
    out = tmp_path / "b"
    assert main(["budgets", "--results", str(records), "--out", str(out)]) == 0
    assert set(pd.read_csv(out / "budgets_ours.csv").study) == {"sst5", "scitail", "squad"}
    tail = (out / "budgets_ours.md").read_text().split("## Figure 2: no table")[1]
    assert "/sst2_bcn nor in " in tail and "/sst2_bcn_reduced_7_epochs: run `syw run study=sst2_bcn_reduced_7_epochs`" in tail


def test_fig1_runs_study_when_records_missing(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        write_study(tmp_path / "results", "sst5", STUDIES[1][1])
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr("subprocess.run", fake_run)
    assert main(["fig1", "--run-missing", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "o")]) == 0
    assert calls and "study=sst5" in calls[0]
    assert "running the study first (35-65 minutes on a 2-core CPU machine, depending on the CPU)" in capsys.readouterr().out


def test_fig1_lets_the_runner_finish_a_stopped_study(tmp_path, monkeypatch, capsys):
    write_study(tmp_path / "results", "sst5", STUDIES[1][1])  # records there: the runner runs only what is missing
    calls = []
    monkeypatch.setattr("subprocess.run", lambda cmd, **kwargs: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    assert main(["fig1", "--run-missing", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "o")]) == 0
    assert len(calls) == 1 and "study=sst5" in calls[0] and "running the study first" not in capsys.readouterr().out


def test_fig1_stops_with_the_runners_status_when_the_study_cannot_run(tmp_path, monkeypatch):
    monkeypatch.setattr("subprocess.run", lambda cmd, **kwargs: subprocess.CompletedProcess(cmd, 2))  # e.g. no SST here
    with pytest.raises(SystemExit) as stop:
        main(["fig1", "--run-missing", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "o")])
    assert stop.value.code == 2 and not (tmp_path / "o").exists()


def test_report_fills_every_checklist_item_from_records(tmp_path):
    results = tmp_path / "results"
    write_study(results, "sst5", STUDIES[1][1], n=12)
    # give the records real assignments so the best-assignment column is filled
    import json

    from syw.experiments.space import load_family

    for name, stem in (("lr", "sst5_lr"), ("cnn", "sst5_cnn")):
        path = results / "sst5" / f"{name}.jsonl"
        rows = [json.loads(l) for l in path.read_text().splitlines()]
        family = load_family(stem, name=name)
        write_records(path, [{**r, "params": family.params(0, r["trial"])} for r in rows])
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "o")]) == 0
    text = (tmp_path / "o" / "report_sst5_ours.md").read_text()
    checklist = text.split("## Checklist (Text Box 1)")[1].split("## Expected")[0]
    items = [l for l in checklist.splitlines() if l.startswith("- [")]
    assert len(items) == 10 and all(l.startswith("- [x]") for l in items), items
    assert "**missing**" not in text
    best = max((json.loads(l) for l in (results / "sst5" / "cnn.jsonl").read_text().splitlines()), key=lambda r: r["value"])
    assert f"| num_filters | uniform-integer[64, 512] | {best['params']['num_filters']} |" in text
    assert "Test CPU (2 cores), GPU: none" in text and "| Number of search trials | 12 ok |" in text
    tex = (tmp_path / "o" / "report_sst5_ours.tex").read_text()
    assert tex.count(r"\begin{tabular}") == 2 and "max\\_filter\\_size" in tex
    # issue 62, item 3: the budget to reach the paper's target with its 95% interval, as syw budgets gives it
    from syw.analysis.inference import budget_interval

    budgets = text.split("## Budget to reach each target (95% interval)")[1]
    cnn = [json.loads(l)["value"] for l in (results / "sst5" / "cnn.jsonl").read_text().splitlines()]
    found = budget_interval(cnn, 0.395)
    words = found.words(12)
    assert words == f"{found.low}-{found.high}" if found.high else words.endswith(
        f"beyond {found.limit}, the limit budget: beyond it nothing can be located with 12 trials")
    reached = oracle.first_reaching(cnn, 0.395, len(cnn))
    assert f"| CNN | 0.395 | {reached or 'not reached'} | " in budgets and budgets.rstrip().endswith(f"| {words} |")


def test_report_of_a_study_that_minimizes(tmp_path, monkeypatch):
    import json

    from syw.analysis import expected_max
    from syw.figures import report

    results = tmp_path / "results"
    write_study(results, "sst5", STUDIES[1][1], n=12)
    config = report.load_study("sst5")
    monkeypatch.setattr(report, "load_study", lambda study: replace(config, maximize=False))
    md, _ = report.build("sst5", "ours", results)
    values = [json.loads(l)["value"] for l in (results / "sst5" / "lr.jsonl").read_text().splitlines()]
    assert f"| Best validation accuracy | {min(values):.4f} |" in md
    assert f"| Best validation accuracy | {max(values):.4f} |" not in md
    worst_case = expected_max(values, [10], maximize=False)[0]  # the table shows n = 1, 5, 10
    assert f"{worst_case:.4f} ± " in md and "lower is better" in md


def test_report_marks_missing_items(tmp_path):
    results = tmp_path / "results"
    write_study(results, "sst5", STUDIES[1][1], n=5)  # params hold no real assignment
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "o")]) == 0
    text = (tmp_path / "o" / "report_sst5_ours.md").read_text()
    assert "- [ ] Hyperparameter configurations for best-performing models" in text and "**missing**" in text


def test_report_from_paper_layout_fills_what_the_file_has(tmp_path):
    path = write_paper_file(tmp_path / "paper", 3, n=20)
    spec = FIGURES[3]
    from syw.figures import report

    original = FIGURES[3]
    FIGURES[3] = spec_for_paper_file(3, path)
    try:
        md, _ = report.build("scitail", "paper", paper_dir=tmp_path / "paper")
    finally:
        FIGURES[3] = original
    assert "GeForce GTX 1080 GPU (as reported in Table 7)" in md
    assert "| trainer.optimizer.lr |" in md and "| Number of search trials | 20 ok |" in md
    frame = pd.read_csv(path, sep="\t")
    dam = frame[frame[spec.paper.group_column] == "dam"]
    assert f"{dam[spec.paper.metric_column].max():.4f}" in md


def test_fig1_guide_label_is_inside_the_axes_and_clear_of_the_curves(records, tmp_path, monkeypatch):
    """The budget-inference label ("0.395 at n = 3") crosses no curve and is not clipped, for the
    committed sst5 records and for generated ones."""
    from syw.figures import plot

    drawn = []
    monkeypatch.setattr(plot.plt, "close", drawn.append)  # keep the figures to measure them
    for results in (sources.REPO / "results", records):
        plot.draw(FIGURES[1], sources.from_records("sst5", results), "Figure 1", tmp_path / "fig1")
    for fig in drawn:
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        label = next(text for text in ax.texts if " at n = " in text.get_text())
        box = label.get_window_extent(renderer)
        assert ax.bbox.contains(box.x0, box.y0) and ax.bbox.contains(box.x1, box.y1), (box, ax.bbox)
        for line in ax.lines:
            if line.get_linestyle() != "-":  # the dotted guide itself
                continue
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            dense = np.linspace(x.min(), x.max(), 5000)
            points = ax.transData.transform(np.column_stack([dense, np.interp(dense, x, y)]))
            assert not box.padded(2).count_contains(points), f"{label.get_text()!r} crosses {line.get_label()}"


def test_budgets_set_each_familys_trials_to_reach_its_reported_number_beside_the_authors():
    from syw.figures.budgets import beside_theirs

    spec = FIGURES[3]
    ours = [Group("ngram", np.array([0.60, 0.70, 0.50]), np.array([2.0, 2.0, 2.0]), "n-gram"),
            Group("esim", np.array([0.50, 0.60]), None, "ESIM")]
    theirs = [Group("ngram", np.array([0.66, 0.66]), np.array([60.0, 60.0]), "n-gram")]
    text = beside_theirs(spec, ours, theirs)
    # n-gram: Eq. 8 over {0.5, 0.6, 0.7} is 0.600, 0.644, 0.667 at n = 1, 2, 3 -> 3 trials of 2 s; theirs 1 of 60 s
    assert "| n-gram | 0.65 | 3 (6 s) | 1 (1.0 min) |" in text
    assert "| ESIM | 0.705 | not in 2 | - |" in text
    assert "(the authors' trials: no file)" in beside_theirs(spec, ours, "no file")


def test_budgets_state_which_family_leads_over_which_stretch_of_time_ours_and_theirs(tmp_path):
    from syw.figures.budgets import budget_rows, leads_by_time, leads_in, leads_text, write

    spec = FIGURES[2]
    ours = [Group("glove", np.array([0.80, 0.80]), np.array([60.0, 60.0]), "GloVe"),
            Group("elmo_frozen", np.array([0.90, 0.90]), np.array([300.0, 300.0]), "FR")]
    # GloVe alone until FR's first trial at 5 min; FR ahead from then to its second trial at 10 min
    labels = {"glove": "GloVe", "elmo_frozen": "FR"}
    assert leads_text(labels, leads_by_time(spec, ours)).endswith(
        ": GloVe from 1.0 min to 5.0 min; FR from 5.0 min on (the longest curve ends at 10.0 min).")
    frame = budget_rows(spec, ours, "ours")
    assert leads_in(frame) == leads_by_time(spec, ours)  # the Markdown reads the rows back
    rows = frame.query("statistic.str.startswith('lead_')")
    assert rows[["family", "statistic", "seconds"]].values.tolist() == [
        ["glove", "lead_start", 60.0], ["glove", "lead_end", 300.0], ["elmo_frozen", "lead_start", 300.0], ["elmo_frozen", "lead_end", 600.0]]
    theirs = [Group("glove", np.array([0.9]), np.array([60.0]), "GloVe"),
              Group("elmo_frozen", np.array([0.8]), np.array([30.0]), "FR")]
    _, md = write([(spec, ours)], "ours", tmp_path, theirs={2: theirs})
    assert "The authors' trials: leader by time, point estimates (each family" in md.read_text()
    assert "FR from 30 s to 1.0 min; GloVe from 1.0 min on (the longest curve ends at 1.0 min)." in md.read_text()
    assert budget_rows(FIGURES[1], ours, "ours").query("statistic.str.startswith('lead_')").empty  # a trials axis



def test_report_says_what_a_dirty_suite_commit_means(tmp_path):
    """A record's suite commit ends in -dirty when the run started from a tree with uncommitted changes to tracked files:
    the report says so, and where the study's folder says what is known of them."""
    from syw.figures import report

    results = tmp_path / "results"
    write_study(results, "sst5", STUDIES[1][1], n=5)
    md, _ = report.build("sst5", "ours", results)
    assert "-dirty" not in md
    path = results / "sst5" / "cnn.jsonl"
    path.write_text(path.read_text().replace('"suite_commit": "abc123"', '"suite_commit": "abc123-dirty"'))
    note = ("A suite commit marked `-dirty`: the run that wrote those records started from a tree whose tracked files "
            "held changes not yet committed (`git status`); the records do not say which.")
    md, _ = report.build("sst5", "ours", results)
    assert "at suite commit abc123-dirty |" in md and f"\n{note}\n" in md
    (results / "sst5" / "README.md").write_text("# sst5\n")
    md, _ = report.build("sst5", "ours", results)
    assert f"\n{note} What is known of them: `results/sst5/README.md`.\n" in md
