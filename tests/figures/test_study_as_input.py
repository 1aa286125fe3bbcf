"""``syw curve results/<study>`` (issue 61, item 2): a study's records are a source like a CSV, with the
labels of its family files and the records' direction, and give the expected maxima the figures draw."""
import numpy as np
import pandas as pd
import pytest

from syw.analysis.curves import Options, build, curve_of
from syw.core.paths import REPO
from syw.curve.command import main, stated_floor
from syw.curve.prepare import Reading, prepare
from syw.figures.sources import from_records


@pytest.mark.parametrize("study", ["sst5", "ptb_melis_reduced"])
def test_a_study_folder_gives_the_figures_expected_maxima(study, tmp_path):
    assert main(["curve", str(REPO / "results" / study), "--out", str(tmp_path)]) == 0
    table = pd.read_csv(tmp_path / "expected_max.csv")
    groups = from_records(study, REPO / "results")
    maximize = study != "ptb_melis_reduced"
    assert sorted(set(table.iloc[:, 0])) == sorted(g.label for g in groups)
    # the study's stated floor, as syw curve reads it (ptb: a perplexity above 10,000 counts at it; the figures too)
    floor = stated_floor([str(REPO / "results" / study)])
    assert floor.value == {"sst5": 0.2, "ptb_melis_reduced": 10000}[study]
    prepared = prepare([str(REPO / "results" / study)], Reading(floor=floor))
    assert prepared.maximize == maximize
    curves = {c.name: c for c in build(prepared.groups, Options(maximize=maximize), study)}
    for g in groups:
        ns, mean, _ = curve_of(g, maximize).upto()
        np.testing.assert_allclose(curves[g.label].mean[: ns.size], mean, rtol=1e-12, atol=0)  # the bar: 1e-12
        rows = table[table.iloc[:, 0] == g.label]
        np.testing.assert_allclose(rows.expected_max.to_numpy()[: ns.size], mean, rtol=1e-9)  # written with 10 digits
    report = (tmp_path / "report.md").read_text()
    assert ("lower is better" in report) == (not maximize)
