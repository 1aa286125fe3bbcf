"""``syw verify`` and the readers that refuse records edited by hand (issue 75, item 23): a changed score in a
copy of the committed records is named by file and line by ``syw verify`` (exit 1) and refused by the figures,
the verdicts and ``syw curve`` with that line (exit 2, nothing written), unless ``--allow-unverified``."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import syw.core.manifest as manifest
from syw.cli import main
from syw.core.entry import run_main
from syw.core.manifest import HEADER
from syw.core.paths import REPO
from syw.curve.command import main as curve_main
from syw.figures import __main__ as figures
from syw.pages import study_readme, verdicts
from tests.support.light import run_light

EDITED = 17  # the CNN line whose score is changed


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(manifest, "_WARNED", set())
    monkeypatch.delenv(manifest.ALLOW_ENV, raising=False)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A copy of the committed sst5 records (and manifests) with the score of CNN line 17 raised by 0.001."""
    folder = tmp_path / "results"
    shutil.copytree(REPO / "results" / "sst5", folder / "sst5", ignore=shutil.ignore_patterns("PROVENANCE.md"))
    path = folder / "sst5" / "cnn.jsonl"
    rows = path.read_bytes().splitlines(keepends=True)
    record = json.loads(rows[EDITED - 1])
    record["value"] = round(record["value"] + 0.001, 6)
    rows[EDITED - 1] = (json.dumps(record) + "\n").encode()
    path.write_bytes(b"".join(rows))
    return folder


def mismatch(results: Path) -> str:
    return (f"{results}/sst5/cnn.jsonl:{EDITED}: does not match its hash (cnn.jsonl.sha256:{EDITED + 1}): changed since "
            "it was written")


def test_every_committed_records_file_has_a_manifest_it_matches(capsys):
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    records = sorted(p for p in tracked if p.endswith(".jsonl"))
    assert records and sorted(p for p in tracked if p.endswith(".jsonl.sha256")) == [f"{p}.sha256" for p in records]
    for path in records:
        header = (REPO / f"{path}.sha256").read_text().splitlines()[0]
        assert header in (f"{HEADER}; made 2026-12-05 from the records as committed, which it attests only from that date",
                          f"{HEADER}; begun 2026-12-05 with the records file"), path  # or the runner's own, from its first line
    assert main(["verify", str(REPO / "results")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{len(records)} records files: all OK" and len(out) == len(records) + 1
    assert all(line.startswith("OK ") for line in out[:-1])


def test_verify_names_the_edited_line_and_exits_1(results, capsys):
    assert main(["verify", str(results / "sst5")]) == 1
    assert capsys.readouterr().out.splitlines() == [f"MISMATCH {mismatch(results)}", f"OK {results}/sst5/lr.jsonl (50 lines)",
                                                    "2 records files: 1 not verified"]


def refused(capsys, command, argv: list[str]) -> str:
    assert run_main(command, argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv", [["fig1"], ["budgets"], ["readme", "--check"], ["report", "--study", "sst5"]])
def test_the_figures_refuse_the_edited_records_with_the_file_and_line(results, tmp_path, capsys, argv):
    out = tmp_path / "out"
    writes = [] if argv[0] == "readme" else ["--out", str(out)]
    command, argv = (study_readme.main, argv[1:]) if argv[0] == "readme" else (figures.main, argv)
    err = refused(capsys, command, [*argv, "--results", str(results), *writes])
    assert err == (f"error: {mismatch(results)}; restore the records (git checkout); syw verify {results} checks them all; "
                   "--allow-unverified (or SYW_ALLOW_UNVERIFIED=1) reads them anyway\n")
    assert not out.exists()


def test_verdicts_provenance_learning_curves_and_curve_refuse_them_too(results, tmp_path, capsys):
    for command in (["provenance", str(results / "sst5")], ["learning-curve", "--study", "sst5", "--results", str(results)]):
        err = refused(capsys, main, command)
        assert err.startswith(f"error: {mismatch(results)}; ")
    assert sorted(p.name for p in (results / "sst5").iterdir() if not p.name.endswith((".jsonl", ".sha256"))) == ["README.md", "run.log"]
    err = refused(capsys, verdicts.main, ["--results", str(results), "--out", str(tmp_path / "verdicts.md")])
    assert err.startswith(f"error: {mismatch(results)}; ") and not (tmp_path / "verdicts.md").exists()
    err = refused(capsys, curve_main, ["curve", str(results / "sst5"), "--out", str(tmp_path / "curve")])
    assert err.startswith(f"error: {mismatch(results)}; ") and not (tmp_path / "curve").exists()
    for command in (["curve", str(results / "sst5" / "cnn.jsonl")], ["table", str(results / "sst5" / "cnn.jsonl")]):
        err = refused(capsys, main, [*command, "--out", str(tmp_path / "one")])  # one records file, its manifest beside it
        assert err.startswith(f"error: {mismatch(results)}; ") and not (tmp_path / "one").exists()


def test_allow_unverified_reads_them_with_a_warning(results, tmp_path, capsys):
    assert curve_main(["curve", str(results / "sst5"), "--out", str(tmp_path / "curve"), "--allow-unverified"]) == 0
    assert f"warning: {mismatch(results)}; read anyway (unverified)\n" in capsys.readouterr().err
    assert (tmp_path / "curve" / "expected_max.csv").is_file()


def test_a_missing_or_empty_folder_is_one_error_line(tmp_path, capsys):
    assert run_main(main, ["verify", str(tmp_path / "nosuch")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}/nosuch: no such folder\n"
    assert run_main(main, ["verify", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}: no trial records (*.jsonl, or their *.jsonl.sha256) there\n"


def test_verify_help_says_what_each_exit_status_means(capsys):
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 when every file matches its manifest; 1 when one does not or has no manifest (a finding" in text


def test_verify_runs_in_the_light_install(tmp_path):
    done = run_light(f"from syw.cli import main\nsys.exit(main(['verify', {str(REPO / 'results' / 'sst5')!r}]))\n", tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "2 records files: all OK", done.stderr[-2000:]
