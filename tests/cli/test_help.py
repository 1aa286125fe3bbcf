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
    """The paragraph(s) between the usage block and the first list of arguments (or Hydra's help)."""
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
    assert text.index("new training seeds") < text.index("powered by Hydra")


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
    assert set(LIGHT) | {"curve", "table", "verify", "download"} == set(COMMANDS)  # download needs the network, not the suite


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
