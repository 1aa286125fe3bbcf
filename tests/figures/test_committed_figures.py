"""Every committed text file under figures/ (captions, comparisons, budget tables, checklists) and
docs/verdicts.md is what its command writes from the committed records and the authors' files today:
a fresh clone with the data folder beside it regenerates each one byte for byte. The images come from
the same runs; their bytes depend on the installed fonts and matplotlib, so only their presence is
checked."""
from pathlib import Path

import pytest

from syw.core.paths import REPO
from syw.figures.__main__ import main
from syw.figures.specs import FIGURES
from syw.pages.verdicts import main as verdicts
from tests.support import oracle

TEXT = (".md", ".csv", ".tex")
COMMANDS = [["fig1"], ["fig1", "--source", "paper"], ["fig1", "--variant", "as_run"],
            ["fig2"], ["fig2", "--source", "paper"], ["fig3"], ["fig3", "--source", "paper"],
            ["fig3", "--variant", "reduced"], ["fig4"], ["fig4", "--source", "paper"], ["fig5"],
            ["budgets"], ["budgets", "--source", "paper"], ["budgets", "--variant", "as_run"],
            ["report"], ["report", "--variant", "as_run"], ["sensitivity", "--study", "ptb_melis_reduced"],
            ["seeds", "--study", "ptb_melis_reduced"]]


@pytest.mark.slow
@pytest.mark.paperdata
def test_every_committed_figure_file_regenerates_unchanged(tmp_path):
    for spec in FIGURES.values():
        oracle.authors_path(spec.paper)  # skips where no copy of the authors' files is at hand
    for command in COMMANDS:
        assert main([*command, "--out", str(tmp_path)]) == 0, command
    committed = {p.name for p in (REPO / "figures").iterdir() if p.suffix in TEXT + (".png", ".pdf")}
    written = {p.name for p in Path(tmp_path).iterdir()}
    assert committed <= written, f"no command here writes {sorted(committed - written)}: add it to COMMANDS"
    stale = [name for name in sorted(committed) if name.endswith(TEXT)
             and (tmp_path / name).read_bytes() != (REPO / "figures" / name).read_bytes()]
    assert stale == [], f"figures/{stale[0]} differs from what its command writes now: regenerate and commit it"


@pytest.mark.paperdata
def test_the_committed_verdicts_regenerate_unchanged(tmp_path):
    for spec in FIGURES.values():
        oracle.authors_path(spec.paper)
    assert verdicts(["--out", str(tmp_path / "verdicts.md")]) == 0
    assert (tmp_path / "verdicts.md").read_text() == (REPO / "docs" / "verdicts.md").read_text(), \
        "docs/verdicts.md differs from what `syw verdicts` writes now: regenerate and commit it"
