"""A command set that explains itself (issue 65, item 4): every subcommand's ``--help`` starts with its own
usage line and says what it does in complete sentences of plain text; a wrong figure number lists the
figures; in the light install each command of the full suite ends with one line naming the extra; and
no command writes relative to the current folder unless told."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

import syw.core.paths
from syw.cli import COMMANDS, main
from syw.core.entry import run_main
from syw.core.paths import REPO
from tests.support.light import run_light

MARKUP = re.compile(r"``|:(mod|func|class|meth|attr|data|ref):`")  # reStructuredText of the docstrings
HYDRA = sorted(name for name, command in COMMANDS.items() if command.hydra)


def help_text(name: str, capsys) -> str:
    if name in HYDRA:  # a Hydra app reads sys.argv and keeps global state: its own process
        done = subprocess.run([sys.executable, "-m", "syw", name, "--help"], cwd=REPO, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def description(text: str) -> str:
    """The paragraph(s) between the usage block and the first list of arguments (or of overrides)."""
    blocks = text.split("\n\n")
    end = next(k for k, b in enumerate(blocks) if b.startswith(("positional arguments:", "options:", "The overrides")))
    return " ".join(blocks[1:end])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_help_is_its_own_usage_and_plain_complete_sentences(name, capsys):
    text = help_text(name, capsys)
    assert text.startswith(f"usage: syw {name} "), text[:200]
    assert not MARKUP.search(text), MARKUP.search(text).group(0)
    about = " ".join(description(text).split())
    assert len(about) > 40 and about[0].isupper() and about.endswith("."), about


def test_reseed_says_what_reseeding_does_before_its_overrides(capsys):
    text = help_text("reseed", capsys)
    assert text.index("new training seeds") < text.index("The overrides") < text.index("  reseed.seeds=M")


def test_a_wrong_figure_number_lists_the_figures(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fig", "9"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "there is no figure '9'" in err
    assert all(f"{n} (" in err for n in range(1, 6)) and "1 (SST-5)" in err


# Arguments that reach each command's work; in the light install it must stop with one line, exit 2.
LIGHT = {"fig": ["1"], "budgets": [], "report": [], "readme": ["--check"], "sensitivity": ["--study", "toy"],
         "seeds": ["--study", "toy", "--results", "r"], "verdicts": ["--out", "v.md"],
         "learning-curve": ["--study", "toy"], "compare": ["a", "b"], "provenance": ["a"], "pretrain-bilm": [],
         "rescore": ["a"], "run": ["study=toy"], "reseed": ["study=toy"]}
# These read only what the light install has: their line is about the missing input instead.
RUNS_LIGHT = {"seeds", "compare", "provenance"}


def test_the_light_table_covers_every_full_suite_command():
    assert set(LIGHT) | {"curve", "table", "plan", "verify", "download"} == set(COMMANDS)  # download needs the network, not the suite


@pytest.mark.parametrize("name", sorted(LIGHT))
def test_in_the_light_install_a_full_suite_command_ends_with_one_line(name, tmp_path):
    done = run_light(f"from syw.cli import main\nsys.exit(main({[name, *LIGHT[name]]!r}))\n", tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    if name not in RUNS_LIGHT:
        assert lines[0].startswith(f"error: syw {name} needs ") and "pip install '.[suite]' in a checkout (or make env)" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_verdicts_outside_a_checkout_writes_nowhere_it_was_not_told(tmp_path, monkeypatch, capsys):
    from syw.pages import verdicts

    monkeypatch.setattr(syw.core.paths, "CHECKOUT", None)  # an installed copy
    monkeypatch.chdir(tmp_path)
    assert run_main(verdicts.main, ["--results", str(tmp_path / "results")]) == 2
    assert "pass --out PATH" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --- issue 75, item 11: syw's own help and version, a short help of the Hydra commands, help on every option ---
def test_syw_help_is_plain_text(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: syw <command> [arguments]") and not MARKUP.search(text), text[:300]
    assert "syw --version" in text and all(f"\n  {name} " in text for name in COMMANDS)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_syw_version_is_the_packages(flag, capsys):
    import tomllib

    wanted = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert main([flag]) == 0
    assert capsys.readouterr().out == f"syw {wanted}\n"


def test_the_version_falls_back_to_pyproject_when_not_installed(monkeypatch):
    import importlib.metadata

    import syw.cli

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert syw.cli.version() == re.search(r'^version = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M).group(1)


@pytest.mark.parametrize("name, overrides", [
    ("run", ["study=", "family=", "trials=", "paths.results_dir=", "dry_run="]),
    ("reseed", ["study=", "family=", "reseed.best=", "reseed.seeds=", "paths.results_dir=", "dry_run="]),
])
def test_a_hydra_commands_help_is_its_own_and_short(name, overrides, capsys):
    text = help_text(name, capsys)
    assert "powered by Hydra" not in text and "== Config ==" not in text and "Compose your configuration" not in text
    assert len(text.splitlines()) <= 30, text
    assert all(o in text for o in overrides) and "docs/running.md" in text


def _parsers(name: str, monkeypatch) -> list:
    """The argparse parsers ``syw <name>`` builds (its subparsers too), caught where it parses."""
    import argparse

    from syw.core.entry import Parser

    caught = []

    class Caught(Exception):
        pass

    def parse(self, *args, **kwargs):
        caught.append(self)
        raise Caught

    monkeypatch.setattr(Parser, "parse_args", parse)
    with pytest.raises(Caught):
        main([name, "x"] if name != "fig" else [name, "1"])
    out, todo = [], list(caught)
    while todo:
        parser = todo.pop()
        out.append(parser)
        todo += [sub for a in parser._actions if isinstance(a, argparse._SubParsersAction) for sub in a.choices.values()]
    return out


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if not c.hydra))
def test_every_option_says_what_it_is_for(name, monkeypatch):
    import argparse

    bare = [f"{p.prog} {'/'.join(a.option_strings) or a.dest}" for p in _parsers(name, monkeypatch) for a in p._actions
            if not a.help and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    assert bare == []


def test_report_says_what_study_names_with_and_without_trials(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "with TRIALS, an Optuna study" in text and "without TRIALS, the suite's study" in text
