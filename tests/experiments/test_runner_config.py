"""The runner validates before it runs (bad studies exit 2 with one message, touch no records); its progress line."""
import json
import sys

import pytest

from tests.support.runner_util import REPO, importable_package, run


def _bad(tmp_path, *overrides):
    done = run(f"paths.results_dir={tmp_path / 'results'}", *overrides, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert not (tmp_path / "results").exists()  # no records file created or touched
    lines = [l for l in done.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def _family_error(tmp_path, name: str, target: str, lr_low: float, *overrides: str) -> str:
    """The runner's error line for a toy study whose family file fam/<name>.yaml trains ``target``."""
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / f"{name}.yaml").write_text(
        f"label: x\ntrain: {{_target_: {target}}}\nsearch:\n  lr: {{distribution: loguniform, low: {lr_low}, high: 1.0}}\n"
    )
    return _bad(tmp_path, "study=toy", f"paths.family_dirs=[{tmp_path / 'fam'}]", f"study.families={{toy: {name}}}", *overrides)


def test_unknown_family_override(tmp_path):
    msg = _bad(tmp_path, "study=toy", "family=nope")
    assert "conf/study/toy.yaml: family: unknown family 'nope'" in msg


def test_study_names_missing_family_file(tmp_path):
    msg = _bad(tmp_path, "study=toy", "study.families={toy: does_not_exist}")
    assert "study.families.toy" in msg and "does_not_exist.yaml" in msg


@pytest.mark.parametrize(
    "override, key",
    [("trials=0", "trials"), ("study.direction=up", "study.direction"), ("+study.metirc=x", "study.metirc"),
     ("resources.cpus_per_trial=0", "resources.cpus_per_trial")],
)
def test_bad_study_settings(tmp_path, override, key):
    assert f": {key}: " in _bad(tmp_path, "study=toy", override)


@pytest.mark.parametrize("override, key", [
    ("+study.trials={nope: 3}", "study.trials.nope"), ("+study.trials={toy: 0}", "study.trials.toy"),
    ("+study.trials={toy: 2.5}", "study.trials.toy"), ("+study.trials=7", "study.trials")])
def test_bad_per_family_trial_counts(tmp_path, override, key):
    assert f": {key}: " in _bad(tmp_path, "study=toy", override)


@pytest.mark.parametrize("override", ["+study.floor=0.2", "+study.floor={value: x, rule: chance}", "+study.floor={value: 0.2}"])
def test_a_floor_is_a_number_and_its_rule(tmp_path, override):
    assert ": study.floor: must be {value: <number>, rule: <where it comes from>}" in _bad(tmp_path, "study=toy", override)


@pytest.mark.parametrize("override, problem", [
    ("only=3", "must be null or a list of distinct trial indices >= 0, e.g. [3, 7], got 3"),
    ("only=[]", "must be null or a list of distinct trial indices >= 0"),
    ("only=[1,1]", "must be null or a list of distinct trial indices >= 0"),
    ("only=[-1]", "must be null or a list of distinct trial indices >= 0"),
    ("only=[a]", "must be null or a list of distinct trial indices >= 0"),
    ("only=[1,5]", "trial 5 is not below toy's 4 trials"),
    ("strategy=gp", "an adaptive search (gp) suggests its trials in order: only is for random search"),
])
def test_bad_only(tmp_path, override, problem):
    line = _bad(tmp_path, "study=toy", "trials=4", *(["only=[1]", override] if override == "strategy=gp" else [override]))
    assert line.split("conf/study/toy.yaml: ", 1)[1].startswith(f"only: {problem}"), line


def test_a_family_can_have_its_own_trial_count(tmp_path):
    """study.trials gives one family its own count (the SciTail n-gram baseline's 100); the others keep ``trials``."""
    done = run("study=toy", "trials=2", "dry_run=true", f"paths.results_dir={tmp_path}",
               "+study.families.busy=toy_busy", "+study.trials={busy: 5}", timeout=120)
    assert done.returncode == 0, done.stderr
    tables = done.stdout.split("\ntoy/")[1:]
    rows = {table.split(" ", 1)[0]: sum(1 for line in table.splitlines() if line.strip()[:1].isdigit())
            for table in tables}
    assert rows == {"toy": 2, "busy": 5}


def test_bad_family_file_named(tmp_path):
    msg = _family_error(tmp_path, "broken", "syw.models.toy.train", 0.0)
    assert f"{tmp_path / 'fam' / 'broken.yaml'}: search.lr.low" in msg


@pytest.mark.parametrize("dry_run", ["true", "false"])
def test_a_target_that_cannot_be_imported_stops_even_a_dry_run(tmp_path, dry_run):
    msg = _family_error(tmp_path, "typo", "syw.models.nosuch.train", 0.001, f"dry_run={dry_run}")
    import syw.models

    assert msg == (f"error: {tmp_path / 'fam' / 'typo.yaml'}: train._target_: syw.models.nosuch.train cannot be imported: "
                   f"there is no module syw.models.nosuch (the package syw.models is {syw.models.__file__}) (family 'toy')")


def test_records_of_another_seed_are_not_resumed(tmp_path):
    from syw.experiments.space import load_family

    params = load_family("toy", name="toy").params(0, 0)
    records = tmp_path / "results" / "toy" / "toy.jsonl"
    records.parent.mkdir(parents=True)
    line = json.dumps({"study": "toy", "family": "toy", "family_file": "conf/search_space/toy/toy.yaml", "seed": 0,
                       "trial": 0, "params": params, "status": "ok", "value": 0.5}) + "\n"
    records.write_text(line)
    same = run(f"paths.results_dir={tmp_path / 'results'}", "study=toy", "trials=2", "dry_run=true", timeout=120)
    assert same.returncode == 0 and same.stderr.strip() == "", same.stderr
    other = run(f"paths.results_dir={tmp_path / 'results'}", "study=toy", "trials=2", "seed=1", timeout=120)
    lines = [l for l in other.stderr.splitlines() if l.strip()]
    assert other.returncode == 2 and len(lines) == 1, other.stderr
    assert lines[0].startswith(f"error: {records}: trial 0: was run with seed 0") and "(seed 1, toy.yaml)" in lines[0]
    assert "own paths.results_dir" in lines[0] and records.read_text() == line  # untouched


def test_training_function_found_in_source_without_importing_it(tmp_path):
    from syw.experiments.source import defined_in_source

    source = ("import sys\nraise ImportError('not to be run')\n"
              "def train(p, ctx):\n    pass\nalias = train\nlimit: int = 3\n"
              "from os import path as renamed\nif sys:\n    def conditional(p, ctx):\n        pass\n")
    with importable_package(tmp_path, "pkg_src", {"fam": source}):
        found = {n: defined_in_source(f"pkg_src.fam.{n}") for n in ("train", "alias", "limit", "renamed", "conditional", "missing")}
        assert found == {"train": True, "alias": True, "limit": True, "renamed": True, "conditional": False, "missing": False}
        assert not defined_in_source("pkg_src.nothing.train") and not defined_in_source("train")
        assert "pkg_src.fam" not in sys.modules  # read, never run


def test_family_whose_function_is_missing_from_its_module(tmp_path):
    msg = _family_error(tmp_path, "typo", "syw.models.toy.trian", 0.001)
    assert f"{tmp_path / 'fam' / 'typo.yaml'}: train._target_: syw.models.toy.trian cannot be imported: syw.models.toy has no 'trian'" in msg


def _replay_family(tmp_path, rows: str, file: str = "trials.tsv") -> str:
    (tmp_path / "fam").mkdir()
    (tmp_path / "trials.tsv").write_text("x\twidth\tlr\tkind\n" + rows)
    (tmp_path / "fam" / "replayed.yaml").write_text(
        f"inherits: toy\nreplay:\n  file: {tmp_path / file}\n"
        "  columns: {x: x, width: width, lr: lr, kind: kind}\n")
    return f"paths.family_dirs=[{tmp_path / 'fam'}]"


def test_replay_row_outside_the_space_stops_before_anything_runs(tmp_path):
    dirs = _replay_family(tmp_path, "0.5\t3\t0.01\ta\n0.5\t11\t0.01\ta\n")
    msg = _bad(tmp_path, "study=toy", "trials=2", dirs, "study.families={toy: replayed}")
    assert f"{tmp_path / 'fam' / 'replayed.yaml'}: replay:" in msg and "row 1" in msg and "11 is outside [1, 10]" in msg


def test_replay_file_missing(tmp_path):
    dirs = _replay_family(tmp_path, "", file="gone.tsv")
    msg = _bad(tmp_path, "study=toy", "trials=1", dirs, "study.families={toy: replayed}")
    assert f"replay file {tmp_path / 'gone.tsv'} is missing" in msg


def test_replay_dry_run_shows_the_rows(tmp_path):
    dirs = _replay_family(tmp_path, "0.25\t3\t0.01\tb\n0.75\t9\t0.002\tc\n")
    done = run("study=toy", "trials=2", "dry_run=true", dirs, "study.families={toy: replayed}",
               f"paths.results_dir={tmp_path / 'r'}", timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [l.split() for l in done.stdout.splitlines() if l.strip().startswith(("0 ", "1 "))]
    assert [l[1:] for l in lines] == [["b", "0.01", "3", "0.25"], ["c", "0.002", "9", "0.75"]], done.stdout


@pytest.mark.parametrize("study", ["sst5", "sst5_as_run", "sst5_as_run_random", "sst2_bcn", "scitail", "squad", "toy"])
def test_dry_run_every_study(tmp_path, study):
    done = run(f"study={study}", "trials=3", "dry_run=true", f"paths.results_dir={tmp_path}", timeout=120)
    assert done.returncode == 0, done.stderr
    assert not any(tmp_path.iterdir())
    assert done.stdout.count(" trial ") >= 1 and "\n     2 " in done.stdout


def test_progress_counts_records_from_before_a_resume(capsys):
    from types import SimpleNamespace

    from syw.experiments.progress import Progress

    written = []
    earlier = [{"trial": 0, "status": "ok", "value": 0.41, "duration_seconds": 100.0},
               {"trial": 1, "status": "failed", "value": None, "duration_seconds": 20.0}]
    progress = Progress(SimpleNamespace(append=written.append), SimpleNamespace(name="cnn"), "accuracy", True,
                        total=4, pending=2, concurrency=2, base={"study": "s"}, earlier=earlier)
    progress.finish({"trial": 2, "status": "ok", "value": 0.39, "duration_seconds": 60.0})
    line = capsys.readouterr().out
    # best includes the earlier 0.41; the estimate averages all three durations: 1 left * 60 s / 2 slots;
    # trials 0, 1 (failed) and 2 have records, one more is this run's
    assert "trial   2 accuracy=0.3900 (60.0 s) best=0.4100 | 3 of 4 recorded; this run: 1 left, ~30 s to go" in line
    assert written == [{"study": "s", "trial": 2, "status": "ok", "value": 0.39, "duration_seconds": 60.0}]


@pytest.mark.parametrize("seconds, to_go", [(0.0003, "<1 s to go"), (0.9, "<1 s to go"), (2.4, "~2 s to go"), (75.0, "~1.2 min to go")])
def test_an_estimate_under_a_second_reads_as_such(capsys, seconds, to_go):
    """Trials of a few milliseconds (the toy's) leave an estimate under a second: '<1 s', not '~0.35 ms'."""
    from types import SimpleNamespace

    from syw.experiments.progress import Progress

    progress = Progress(SimpleNamespace(append=lambda record: None), SimpleNamespace(name="toy"), "score", True,
                        total=3, pending=2, concurrency=1, base={"study": "s"})
    progress.finish({"trial": 0, "status": "ok", "value": 0.5, "duration_seconds": seconds})
    assert capsys.readouterr().out.rstrip("\n").endswith(f"| 1 of 3 recorded; this run: 1 left, {to_go}")


def test_suite_commit_is_dirty_for_code_changes_not_for_records(tmp_path, monkeypatch):
    import subprocess

    import syw.experiments.trial as run_module

    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.jsonl").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "c")
    monkeypatch.setattr(run_module, "REPO", tmp_path)
    clean = run_module.suite_commit()
    assert len(clean) == 40
    (tmp_path / "results" / "r.jsonl").write_text("{}\n{}\n")  # a study appending records
    assert run_module.suite_commit() == clean
    (tmp_path / "code.py").write_text("x = 2\n")
    assert run_module.suite_commit() == clean + "-dirty"


@pytest.mark.parametrize("address, loopback", [
    (None, True), ("127.0.0.1:6379", True), ("localhost:6379", True), ("[::1]:6379", True),
    ("ray://127.0.0.1:10001", True), ("10.1.2.3:6379", False), ("ray://head.example.org:10001", False),
])
def test_on_loopback(address, loopback):
    from syw.experiments.cluster import on_loopback

    assert on_loopback(address) is loopback


def test_cluster_to_join_resolves_the_address_as_ray_does(tmp_path, monkeypatch):
    from syw.experiments.cluster import cluster_to_join

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert [cluster_to_join(a) for a in (None, "", "local", "auto", "10.1.2.3:6379")] == [None, None, None, "auto", "10.1.2.3:6379"]
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:6379\n")  # the last `ray start`
    assert [cluster_to_join(a) for a in (None, "", "local", "auto", "10.1.2.3:6379")] == [
        "127.0.0.1:6379", "127.0.0.1:6379", None, "127.0.0.1:6379", "10.1.2.3:6379"]
    monkeypatch.setenv("RAY_ADDRESS", "10.1.2.3:6379")  # the variable wins, as in Ray
    assert [cluster_to_join(a) for a in (None, "auto", "local")] == ["10.1.2.3:6379", "10.1.2.3:6379", None]
    monkeypatch.setenv("RAY_ADDRESS", "local")
    assert [cluster_to_join(a) for a in (None, "auto")] == [None, None]


def _files(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("name", ["../../../escaped_study", "a/b", "..", ".hidden", "two words"])
def test_a_study_name_that_is_not_a_plain_name_is_refused(tmp_path, name):
    """A study's name is a folder under paths.results_dir (and Tune's run and Ray's log under .tune): one with a
    path in it would put records, Tune's state and Ray's log outside the results folder."""
    results = tmp_path / "a" / "b" / "c" / "results"  # deep enough that what escapes it stays in tmp_path
    done = run("study=toy", "trials=2", f"study.name='{name}'", f"paths.results_dir={results}", timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert lines[0] == (f"error: {REPO / 'syw' / 'conf' / 'study' / 'toy.yaml'}: study.name: {name!r} is not a plain name "
                        "(a letter or digit, then letters, digits, '.', '_' or '-', without '..'): it names the study's "
                        "folder under paths.results_dir")
    assert "Ray ready" not in done.stdout and _files(tmp_path) == []


def test_a_family_name_that_is_not_a_plain_name_is_refused(tmp_path):
    study = tmp_path / "studies" / "esc.yaml"
    study.parent.mkdir()
    study.write_text("# @package _global_\nstudy:\n  name: esc\n  description: x\n  figure: null\n  dataset: {name: toy}\n"
                     "  splits: synthetic\n  families: {'../../../escaped_fam': toy}\n  metric: score\n  direction: max\n"
                     "trials: 2\n")
    results = tmp_path / "a" / "b" / "c" / "results"
    for dry_run in ("true", "false"):
        done = run(f"study={study}", f"dry_run={dry_run}", f"paths.results_dir={results}", timeout=120)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, done.stdout[-2000:] + done.stderr[-2000:]
        assert lines[0] == (f"error: {study}: study.families: '../../../escaped_fam' is not a plain name (a letter or digit, "
                            "then letters, digits, '.', '_' or '-', without '..'): it names the family's records file "
                            "under the study's folder")
        assert _files(tmp_path) == ["studies", "studies/esc.yaml"]
