"""The wheel (docs/architecture.md): it holds every module and config of the suite under ``syw/``,
and works outside the checkout: ``syw curve`` with only the light install's dependencies importable,
``syw run study=toy`` with the full suite's."""
from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from syw.core.paths import REPO
from tests.support.light import BLOCK

pytestmark = pytest.mark.slow


def tracked(pattern: str) -> list[str]:
    return subprocess.run(["git", "ls-files", pattern], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # one build at a time: test workers building at once share the checkout's build/ folder and break each other
    with open(tmp_path_factory.getbasetemp().parent / "syw-wheel-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (path,) = out.glob("show_your_work-*.whl")
    return path


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory) -> Path:
    """The wheel unpacked as pip would place it in site-packages."""
    folder = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(folder)
    return folder


def test_the_wheel_holds_every_module_and_config(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    expected = set(tracked("syw/*.py")) | set(tracked("syw/conf/*.yaml"))  # the same paths as in the checkout
    assert len(expected) > 150
    assert sorted(expected - names) == []
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "results/", "analysis/", "data/", "conf/"))]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as zf:
        assert "syw = syw.cli:main" in zf.read(entry_points).decode()


def test_the_light_install_needs_none_of_the_suite():
    """The base dependencies are what `syw curve` imports; torch and the rest are the [suite] extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    base = {d.split(">")[0].split("[")[0].lower() for d in project["dependencies"]}
    assert base == {"numpy", "scipy", "pandas", "matplotlib", "opda", "pyyaml"}
    suite = {d.split(">")[0].split("[")[0].lower() for d in project["optional-dependencies"]["suite"]}
    assert {"torch", "ray", "hydra-core", "spacy"} <= suite


def run_outside(site: Path, work: Path, code: str, block: bool) -> subprocess.CompletedProcess:
    work.mkdir(exist_ok=True)
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(work), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
           "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", (BLOCK if block else "") + code], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)


def test_syw_curve_from_the_wheel_with_only_the_light_dependencies(site, tmp_path):
    (tmp_path / "t.csv").write_text("family,value\na,0.5\na,0.7\nb,0.6\nb,0.65\n")
    code = "import sys, syw\nfrom syw.cli import main\nprint(syw.__file__)\nsys.exit(main(['curve', 't.csv']))\n"
    done = run_outside(site, tmp_path, code, block=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == str(site / "syw" / "__init__.py")
    assert (tmp_path / "t_syw" / "report.md").is_file()
    table = (tmp_path / "t_syw" / "expected_max.csv").read_text()
    assert "0.6" in table and "0.625" in table  # E[max of 1] of a: 0.6; of b: 0.625
    refused = run_outside(site, tmp_path, "import sys\nfrom syw.cli import main\nsys.exit(main(['run', 'study=toy']))\n",
                          block=True)
    assert refused.returncode == 2
    assert refused.stderr.strip() == "error: syw run needs 'hydra', part of the full suite: pip install '.[suite]' in a checkout (or make env)"


@pytest.mark.ray
def test_syw_run_from_the_wheel_outside_the_checkout(site, tmp_path):
    code = ("import sys\nfrom syw.cli import main\n"
            "sys.exit(main(['run', 'study=toy', 'trials=2', 'ray.address=local']))\n")
    done = run_outside(site, tmp_path, code, block=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "results" / "toy" / "toy.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert records[0]["family_file"].endswith("conf/search_space/toy/toy.yaml")


def test_the_installed_suite_takes_no_generic_top_level_name(site, tmp_path):
    """Installed, the suite is only `syw`: a user's `import data` (or analysis, models, ...) is not ours."""
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info")) == ["syw"]
    code = ("import importlib.util\nprint([n for n in ('data', 'analysis', 'models', 'experiments', 'figures', 'conf')"
            " if importlib.util.find_spec(n)])\n")
    done = run_outside(site, tmp_path, code, block=False)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_light_command_loads_nothing_of_the_runner_models_or_readers(site, tmp_path):
    """Issue 61: with only the light dependencies, `syw curve`'s module imports no module of experiments, models or data."""
    code = ("import sys\nimport syw.curve.command, syw.curve.figure\n"
            "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['syw', 'experiments'], ['syw', 'models'], "
            "['syw', 'data'])))\n")
    done = run_outside(site, tmp_path, code, block=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def readme_install_line() -> str:
    """The README's command that installs the light tool from a built wheel, as written there."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Use it on your own trials", 1)[1].split("\n## ", 1)[0]
    (line,) = [ln.split("#")[0].strip() for ln in section.splitlines() if ln.startswith("pip install dist/")]
    return line


def test_the_readme_install_line_works_in_a_fresh_venv(wheel, tmp_path):
    """Issue 64: the README's install line, in a fresh venv outside the checkout, gives a working `syw curve`
    and brings neither torch nor Ray."""
    line = readme_install_line()
    assert line == "pip install dist/show_your_work-*.whl"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / wheel.name).write_bytes(wheel.read_bytes())
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "MPLBACKEND": "Agg"}
    command = line.replace("dist/show_your_work-*.whl", str(next(dist.glob("show_your_work-*.whl"))))
    installed = subprocess.run(["bash", "-c", f"{command} -q --disable-pip-version-check"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    listed = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze", "--disable-pip-version-check"],
                            env=env, capture_output=True, text=True, check=True).stdout
    names = {ln.split("==")[0].lower() for ln in listed.splitlines()}
    assert "show-your-work" in names and not names & {"torch", "ray"}, sorted(names)
    work = tmp_path / "work"
    work.mkdir()
    (work / "t.csv").write_text("family,value\na,0.5\na,0.7\nb,0.6\nb,0.65\n")
    done = subprocess.run([str(venv / "bin" / "syw"), "curve", "t.csv"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    table = (work / "t_syw" / "expected_max.csv").read_text().splitlines()
    rows = [r.split(",") for r in table[1:]]
    header = table[0].split(",")
    first = {r[header.index("group")]: float(r[header.index("expected_max")]) for r in rows if r[header.index("n")] == "1"}
    assert first == {"a": pytest.approx(0.6, abs=1e-12), "b": pytest.approx(0.625, abs=1e-12)}
