"""A committed records file with a line that does not parse stops every generator (figures, budgets,
pages, verdicts, provenance) with the file and line, exit status 2, before anything is written: a
figure drawn from the records that happen to parse would count fewer trials than were run."""
import shutil
from pathlib import Path

import pytest

from syw.core.entry import run_main
from syw.core.paths import REPO
from syw.experiments import provenance
from syw.figures import __main__ as figures
from syw.pages import study_readme, verdicts


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A copy of the committed sst5 records whose 11th CNN line was damaged in the middle."""
    folder = tmp_path / "results"
    shutil.copytree(REPO / "results" / "sst5", folder / "sst5", ignore=shutil.ignore_patterns("PROVENANCE.md"))
    path = folder / "sst5" / "cnn.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[10] = lines[10][:1] + b"xx" + lines[10][1:]  # {xx"study": ...: no JSON
    path.write_bytes(b"\n".join(lines))
    return folder


def refused(capsys, main, argv: list[str]) -> str:
    assert run_main(main, argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv", [["fig1"], ["budgets"], ["report"], ["readme", "--check"], ["seeds", "--study", "sst5"]])
def test_the_figure_commands_stop_on_a_damaged_line(results, tmp_path, capsys, argv):
    out = tmp_path / "out"
    writes = [] if argv[0] == "readme" else ["--out", str(out)]  # syw readme --check writes nothing anywhere
    command, argv = (study_readme.main, argv[1:]) if argv[0] == "readme" else (figures.main, argv)
    err = refused(capsys, command, [*argv, "--results", str(results), *writes])
    assert err == (f"error: {results}/sst5/cnn.jsonl:11: a line that is not JSON (Expecting property name enclosed in double "
                   "quotes at column 2): restore the file (git checkout) or delete the line\n")
    assert not out.exists()


def test_verdicts_and_provenance_stop_on_a_damaged_line(results, tmp_path, capsys):
    out = tmp_path / "verdicts.md"
    err = refused(capsys, verdicts.main, ["--results", str(results), "--out", str(out)])
    assert err.startswith(f"error: {results}/sst5/cnn.jsonl:11: a line that is not JSON") and not out.exists()
    err = refused(capsys, provenance.main, [str(results / "sst5")])
    assert err.startswith(f"error: {results}/sst5/cnn.jsonl:11: a line that is not JSON")
    assert not (results / "sst5" / "PROVENANCE.md").exists()


@pytest.mark.slow
def test_the_same_records_whole_draw_the_figure(results, tmp_path, capsys):
    """The control: with the line repaired, Figure 1 is drawn from the same folder."""
    path = results / "sst5" / "cnn.jsonl"
    path.write_bytes(path.read_bytes().replace(b"xx", b"", 1))
    assert run_main(figures.main, ["fig1", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "fig1.png").is_file()
