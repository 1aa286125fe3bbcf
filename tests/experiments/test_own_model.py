"""A user's own model and study outside the checkout (docs/own_model.md): the example of the docs run from a
temporary folder, where the runner looks for a user's package and what it says when it cannot import it, and
a study file given by path."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from syw.core.errors import ConfigError
from syw.experiments.given_study import GROUP, with_study_file
from syw.experiments.imports import import_problem, worker_pythonpath
from tests.support.runner_util import REPO

DOC = REPO / "docs" / "own_model.md"
SYW = Path(sys.executable).parent / "syw"  # the console script: unlike `python -m`, it has no current folder on sys.path


def doc_files() -> dict[str, str]:
    """The files of docs/own_model.md: each fenced block whose first line is ``# file: <path>``."""
    blocks = re.findall(r"```\w*\n# file: (\S+)\n(.*?)```", DOC.read_text(), flags=re.S)
    return {path: body for path, body in blocks}


def project(root: Path) -> Path:
    """The docs' example project, written under ``root``."""
    folder = root / "my_project"
    for path, body in doc_files().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(body)
    return folder


def syw(cwd: Path, *args: str, pythonpath: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``syw`` run in ``cwd``, with ``PYTHONPATH`` as given (none by default): the suite is imported as installed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", PYTHONUNBUFFERED="1", **({"PYTHONPATH": pythonpath} if pythonpath else {}))
    return subprocess.run([str(SYW), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def one_error(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stdout + done.stderr
    return lines[0]


def score(params: dict) -> float:
    return 1.0 - (params["x"] - 0.3) ** 2 - params["penalty"] * params["width"]


def test_the_docs_show_every_file_of_the_example():
    assert set(doc_files()) == {"mypackage/mymodule.py", "mypackage/__init__.py", "studies/mine.yaml", "studies/my_study.yaml"}
    assert "\nsyw run study=studies/my_study.yaml " in DOC.read_text()  # the command the slow test runs


def test_dry_run_of_the_example_from_its_folder(tmp_path):
    folder = project(tmp_path)
    done = syw(folder, "run", "study=studies/my_study.yaml", "dry_run=true", timeout=120)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
    assert "my_study/mine (mine.yaml, My model; train: mypackage.mymodule.train)" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if re.match(r"\s+\d+\s", line)]
    assert [row[0] for row in rows] == ["0", "1", "2"]  # the study's 3 trials
    assert ("no estimate: no finished trials of this family yet" in done.stdout and "the paper's per-trial time does not apply"
            in done.stdout and " h on " not in done.stdout)
    assert not (folder / "results").exists()


def test_a_package_not_on_the_path_is_one_line_saying_where_it_looked(tmp_path):
    folder = project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = one_error(syw(elsewhere, "run", f"study={folder / 'studies' / 'my_study.yaml'}", "dry_run=true", timeout=120))
    assert line.startswith(f"error: {folder / 'studies' / 'mine.yaml'}: train._target_: mypackage.mymodule.train cannot be "
                           f"imported: there is no module mypackage (looked in the current folder ({elsewhere}), PYTHONPATH "
                           "(not set) and this Python's installed packages); run syw from the folder that holds mypackage/, "
                           "or name that folder: PYTHONPATH="), line
    # named on PYTHONPATH, relative to the current folder, it is found
    done = syw(elsewhere, "run", f"study={folder / 'studies' / 'my_study.yaml'}", "dry_run=true", pythonpath="../my_project",
               timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("target, source, expected", [
    ("pkg_a.mod.train", {"mod": "import not_installed_anywhere\ndef train(p, c):\n    pass\n"},
     "pkg_a.mod was found, but importing it failed: {root}/pkg_a/mod.py:1 imports not_installed_anywhere, which is not "
     "installed in this Python"),
    ("pkg_b.mod.train", {"mod": "def fit(p, c):\n    pass\n"}, "pkg_b.mod has no 'train' ({root}/pkg_b/mod.py defines no function train)"),
    ("pkg_c.other.train", {"mod": ""}, "there is no module pkg_c.other (the package pkg_c is {root}/pkg_c/__init__.py)"),
    ("pkg_d.mod.train", {"__init__": "x = 1\nfrom os import not_a_name\n", "mod": "def train(p, c):\n    pass\n"},
     "pkg_d was found, but importing it failed at {root}/pkg_d/__init__.py:2: ImportError: cannot import name 'not_a_name'"),
    ("pkg_e.mod.train", {"mod": "train = 3\n"}, "pkg_e.mod has a non-callable 'train'"),
    ("pkg_f.mod.sub.train", {"mod": ""}, "there is no module pkg_f.mod.sub (the package pkg_f.mod is {root}/pkg_f/mod.py)"),
    ("pkg_g.mod.train", {"__init__": "import not_installed_either\n", "mod": ""},
     "pkg_g was found, but importing it failed: {root}/pkg_g/__init__.py:1 imports not_installed_either"),
])
def test_why_a_users_function_cannot_be_imported(tmp_path, monkeypatch, target, source, expected):
    package = tmp_path / target.split(".")[0]
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in source.items():
        (package / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_problem(target).startswith(expected.format(root=tmp_path))


def test_a_function_that_imports_is_no_problem():
    assert import_problem("syw.models.toy.train") is None


def test_the_workers_get_the_current_folder_and_absolute_pythonpath_entries(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["code", "/abs/lib"]))
    assert worker_pythonpath(REPO).split(os.pathsep) == [str(REPO), str(tmp_path / "code"), "/abs/lib", str(tmp_path)]
    assert worker_pythonpath(None).split(os.pathsep) == [str(tmp_path / "code"), "/abs/lib", str(tmp_path)]


def test_a_study_given_by_path_is_chosen_through_a_search_path_folder(tmp_path):
    study = tmp_path / "sst5.yaml"  # named as a suite study: the given file must still be the one chosen
    study.write_text("# @package _global_\n")
    args = with_study_file(["trials=2", f"study={study}", "hydra.searchpath=[file:///other]"])
    assert args[0] == "trials=2" and args[-1] == f"study={GROUP}/sst5"
    root = Path(re.match(r"hydra\.searchpath=\[file://([^,]+),file:///other\]$", args[1]).group(1))
    assert (root / "study" / GROUP / "sst5.yaml").resolve() == study
    assert with_study_file(["study=toy", "trials=2"]) == ["study=toy", "trials=2"]  # a suite study's name as it is


@pytest.mark.parametrize("override, problem", [("study=nope/my_study.yaml", "does not exist"),
                                                ("study=./", "is a folder, not a study file")])
def test_a_bad_study_path_is_named(tmp_path, monkeypatch, override, problem):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        with_study_file([override])
    assert problem in str(err.value) and err.value.key == "study"


def test_a_bad_study_path_or_name_is_one_line_from_the_command(tmp_path):
    line = one_error(syw(tmp_path, "run", "study=studies/missing.yaml", "dry_run=true", timeout=120))
    assert line.startswith(f"error: studies/missing.yaml: study: {tmp_path / 'studies' / 'missing.yaml'} does not exist")
    line = one_error(syw(tmp_path, "run", "study=my_study", "dry_run=true", timeout=120))
    assert "there is no study 'my_study' (has: " in line and "study=path/to/my_study.yaml" in line


def test_a_study_file_without_its_package_line_is_told_so(tmp_path):
    folder = project(tmp_path)
    study = folder / "studies" / "my_study.yaml"
    study.write_text(study.read_text().replace("# @package _global_\n", ""))
    line = one_error(syw(folder, "run", "study=studies/my_study.yaml", "dry_run=true", timeout=120))
    assert line == f"error: {study}: line 1: a study file starts with `# @package _global_` (its keys are the run's settings, " \
                   "as in conf/study/toy.yaml)"


@pytest.mark.slow
@pytest.mark.parametrize("where", ["its folder", "PYTHONPATH"])
def test_the_docs_example_trains_its_trials_on_ray_from_outside_the_checkout(tmp_path, where):
    """The docs' command, run from the project's folder (or from another, the project named on PYTHONPATH,
    relative): Ray's workers import the user's package, and the records hold the function's scores."""
    folder = project(tmp_path)
    cwd, pythonpath, study = folder, None, "studies/my_study.yaml"
    if where == "PYTHONPATH":
        cwd, pythonpath, study = tmp_path, "my_project", "my_project/studies/my_study.yaml"
    done = syw(cwd, "run", f"study={study}", "ray.address=local", "resources.gpus_per_trial=0", pythonpath=pythonpath)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    path = cwd / "results" / "my_study" / "mine.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r["trial"] for r in records) == [0, 1, 2]
    assert all(r["status"] == "ok" and r["study"] == "my_study" and r["family"] == "mine" for r in records), records
    assert all(r["value"] == pytest.approx(score(r["params"]), abs=1e-12) for r in records)
    assert {r["family_file"] for r in records} == {str(folder / "studies" / "mine.yaml")}
    assert len({r["params"]["x"] for r in records}) == 3 and all(r["params"]["penalty"] == 0.01 for r in records)
    again = syw(cwd, "run", f"study={study}", "dry_run=true", pythonpath=pythonpath, timeout=120)  # costed from its own trials
    assert re.search(r"3 trials on a CPU, mean [\d.]+ m?s: 0 to run x", again.stdout), again.stdout
