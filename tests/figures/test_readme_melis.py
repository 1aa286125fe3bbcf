"""README facts of case study 5 (issue 36): the GP tuner beside random search and the seed reruns,
on synthetic records in the runner's layout, against hand computation."""
import json
import math

import pytest

from syw.pages.study_readme import ReadmeError, regenerate
from tests.figures.test_fig5 import EQ8_AT_4, GP_MEAN, GP_RUNS, write_melis
from tests.figures.test_study_readme import assert_bad_marker, values

# Reruns (syw reseed): LSTM's best assignment (trial 1, 100.0) under three seeds, its trial 4 (110.0)
# under two; RHN's best (trial 1, 150.0) under two. Means 103 and 152, SDs 2 and 2 * sqrt(2).
RERUNS = {"lstm": [(1, 100.0, v) for v in (101.0, 103.0, 105.0)] + [(4, 110.0, v) for v in (111.0, 113.0)],
          "rhn": [(1, 150.0, v) for v in (150.0, 154.0)]}


@pytest.fixture
def melis(tmp_path):
    folder = write_melis(tmp_path / "results", gp=GP_RUNS)
    (folder / "reseed").mkdir()
    for family, rows in RERUNS.items():
        (folder / "reseed" / f"{family}.jsonl").write_text("".join(json.dumps(
            {"study": folder.name, "family": family, "trial": trial, "rerun": k, "status": "ok", "value": value,
             "source_value": original, "direction": "min", "strategy": "random"}) + "\n" for k, (trial, original, value) in enumerate(rows)))
    return folder


def test_the_gp_tuner_beside_random_search_by_hand(melis):
    assert EQ8_AT_4 == pytest.approx(104.53125) and GP_MEAN[1] < EQ8_AT_4 < GP_MEAN[0]  # reached at n = 2
    assert values(melis, "tuner family=lstm", "tuner family=lstm of=mean n=2 fmt=.2f", "tuner family=lstm of=mean fmt=.2f",
                  "tuner family=lstm of=reach", "tuner family=lstm of=saves") == \
        ["3", f"{GP_MEAN[1]:.2f}", f"{GP_MEAN[3]:.2f}", "2", "2"]


def test_a_tuner_that_never_reaches_random_search_says_so(tmp_path):
    folder = write_melis(tmp_path / "results", gp=[[200.0] * 4, [210.0] * 4])  # N = 4 random trials, runs of 4
    assert values(folder, "tuner family=lstm of=reach", "tuner family=lstm of=saves") == ["more than 4", "0"]


def test_runs_shorter_than_random_search_that_have_not_reached_it_leave_the_saving_unknown(tmp_path):
    folder = write_melis(tmp_path / "results", gp=[[200.0] * 2, [210.0] * 3])  # the shortest run ends at 2
    assert values(folder, "tuner family=lstm of=reach", "tuner family=lstm of=saves", "tuner family=lstm of=length") == \
        ["more than 2", "unknown yet (the runs end at 2)", "2"]


def test_seed_spread_and_the_gap_between_families_by_hand(melis):
    pooled = math.sqrt((2.0 ** 2 + 8.0) / 2)
    assert values(melis, "seeds family=lstm fmt=.3f", "seeds family=lstm of=mean fmt=.1f", "seeds family=lstm of=reruns",
                  "seeds family=rhn of=sd fmt=.4f", "seeds family=lstm over=rhn fmt=.1f", "seeds family=rhn over=lstm of=pooled_sd fmt=.4f",
                  "seeds family=lstm over=rhn of=ratio fmt=.2f", "seeds family=lstm over=rhn of=robust",
                  "seeds family=lstm over=rhn of=ahead", "seeds family=rhn over=lstm of=ahead") == \
        ["2.000", "103.0", "3", f"{2 * math.sqrt(2):.4f}", "49.0", f"{pooled:.4f}", f"{49 / pooled:.2f}", "yes", "lstm", "lstm"]


@pytest.mark.parametrize("marker, message", [
    ("tuner family=rhn", "no gp-tuner run of rhn"),
    ("tuner family=lstm of=mean n=5", "n=5: a budget from 1 to 4"),
    ("tuner family=lstm of=mean n=x", "n='x' is not a number"),
    ("tuner family=lstm of=best", "of='best': runs, length, mean, reach, saves or each"),
    ("seeds family=nas", "family='nas' of='sd': a rerun family (lstm, rhn)"),
    ("seeds family=lstm over=nas", "two rerun families"),
])
def test_a_bad_tuner_or_seeds_marker_names_the_line(melis, marker, message):
    assert_bad_marker(melis, marker, message)


def test_a_study_without_reruns_says_which_folder(tmp_path):
    folder = write_melis(tmp_path / "results")
    readme = folder / "README.md"
    readme.write_text("<!-- syw: seeds family=lstm -->?<!-- /syw -->\n")
    with pytest.raises(ReadmeError, match="README.md:1: .*reseed: no seed reruns"):
        regenerate(readme, folder.parent)


def test_the_results_table_says_min_for_a_lower_is_better_metric(melis):
    readme = melis / "README.md"
    readme.write_text("<!-- syw: table results n=1,N -->\n<!-- /syw -->\n")
    text = regenerate(readme, melis.parent).text
    assert "| family | ok trials | best (trial) | E[min] n=1 | n=4 | mean trial time |" in text
    assert f"| 4 | 100.000 (trial 1) | {sum([100, 110, 130, 160]) / 4:.3f} | {EQ8_AT_4:.3f} | 1.0 min |" in text
