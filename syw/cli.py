"""``syw``: the suite's one command. ``syw <command> --help`` describes each, ``syw --version`` the version.

The light install (``pip install .`` in a checkout, or its wheel) has ``curve``, ``table`` and ``verify``; the others need
the full suite (``pip install '.[suite]'``, or ``make env`` in a checkout) and say so.
Bad input is one ``error:`` line naming the file (and line or key) with exit status 2
(:func:`syw.core.entry.run_main`); the ``python -m`` forms of the modules behave the same.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import NamedTuple

from syw.core.entry import MissingExtra, run_main


class Command(NamedTuple):
    module: str  # under syw.
    help: str
    forward: Callable[[list[str]], list[str]] = lambda argv: argv  # the module's own arguments
    hydra: bool = False  # a Hydra app: its overrides come from sys.argv
    suite: Callable[[list[str]], int] | None = None  # where a light command hands the suite's part of its work


def _suite_report(argv: list[str]) -> int:
    """``syw report --study NAME``: the suite's report of one of its studies (full suite)."""
    from syw.figures.__main__ import main as figures

    return figures(["report", *argv])


def _prefix(what: str) -> Callable[[list[str]], list[str]]:
    return lambda argv: [what, *argv]


COMMANDS: dict[str, Command] = {
    "curve": Command("curve.command", "expected-max curves, figure and report of anyone's trials (light)",
                     _prefix("curve")),
    "plan": Command("curve.plan_command", "trials per group that would decide group A against B at budgets n, "
                    "from a pilot's trials (light)"),
    "table": Command("curve.table_command", "the expected-max table of a records file, printed and written (light)"),
    "run": Command("experiments.run", "run a study: syw run study=sst5 [family=cnn trials=20 ...]", hydra=True),
    "reseed": Command("experiments.reseed", "rerun a family's best assignments with new seeds", hydra=True),
    "fig": Command("figures.__main__", "draw a figure of the paper: syw fig 1 [--source paper] [--variant as_run]", _prefix("fig")),
    "budgets": Command("figures.__main__", "the budget tables of Figures 1-5", _prefix("budgets")),
    "report": Command("curve.checklist_command", "the reporting checklist of anyone's trials (light), or of a "
                      "study of the suite (Markdown and LaTeX)", suite=_suite_report),
    "readme": Command("pages.study_readme", "rewrite (or --check) the numbers of the READMEs from the records"),
    "sensitivity": Command("figures.__main__", "a study's score against each searched hyperparameter", _prefix("sensitivity")),
    "seeds": Command("figures.__main__", "seed reruns' spread beside the gaps between families", _prefix("seeds")),
    "verdicts": Command("pages.verdicts", "docs/verdicts.md: what the records say about each claim of the paper"),
    "learning-curve": Command("figures.learning_curve", "a study's learning curves (score against epoch)"),
    "compare": Command("experiments.compare", "two runs of one study, trial by trial"),
    "provenance": Command("experiments.provenance", "a study's PROVENANCE.md: commands, commits, machines, inputs"),
    "verify": Command("experiments.verify", "check a study's records against their manifests of chained hashes (light)"),
    "download": Command("data.download", "download and check a data set: sst, or the language-model corpora ptb and wikitext-2"),
    "pretrain-bilm": Command("models.elmo.pretrain", "pretrain the small biLM that stands in for ELMo here"),
    "rescore": Command("experiments.rescore", "rescore BiDAF trials on the whole dev set"),
}


ABOUT = ("The suite's one command (Dodge et al. 2019, Show Your Work: expected validation performance against the "
         "hyperparameter-search budget). syw <command> --help describes each command; syw --version prints the version.")


def usage() -> str:
    """What ``syw --help`` prints, in plain text."""
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {command.help}" for name, command in COMMANDS.items())
    return f"usage: syw <command> [arguments]\n\n{textwrap.fill(ABOUT, 100)}\n\ncommands:\n{rows}\n"


def version() -> str:
    """The installed package's version, else (a checkout run with PYTHONPATH) the one pyproject.toml states."""
    try:
        return importlib.metadata.version("show-your-work")
    except importlib.metadata.PackageNotFoundError:
        import tomllib

        from syw.core.paths import REPO

        return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def hydra_help(name: str, module) -> str:
    """``syw run --help``, ``syw reseed --help``: the command's usage, what it does and its main overrides, without
    Hydra's dump of every config group."""
    return (f"usage: {module.USAGE}\n\n{module.DESCRIPTION}\n\nThe overrides (key=value, Hydra's syntax; the main "
            f"ones):\n{module.OVERRIDES}\n\n" + textwrap.fill(
                f"Every setting is in conf/config.yaml; docs/running.md explains them. syw {name} ... --cfg job prints "
                "the whole configuration a command would run with.", 100) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``syw <command> ...``: the command's exit status; 2 with one ``error:`` line for bad input."""
    return run_main(_dispatch, sys.argv[1:] if argv is None else argv)


def _dispatch(args: list[str]) -> int:
    if args and args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if args and args[0] in ("-V", "--version"):
        print(f"syw {version()}")
        return 0
    if not args or args[0] not in COMMANDS:
        what = f"unknown command {args[0]!r}" if args else "no command given"
        raise ValueError(f"syw: {what}\n\n{usage()}")
    name, rest = args[0], args[1:]
    command = COMMANDS[name]
    try:
        module = importlib.import_module(f"syw.{command.module}")
        if command.hydra:
            if "-h" in rest or "--help" in rest:
                print(hydra_help(name, module), end="")
                return 0
            sys.argv = [f"syw {name}", *command.forward(rest)]
            module.main()
            return 0
        if command.suite is not None:
            return module.main(command.forward(rest), suite=command.suite)
        return module.main(command.forward(rest))
    except ModuleNotFoundError as err:  # the light install lacks the suite's dependencies, imported on the way
        if isinstance(err, MissingExtra) or (err.name or "syw").split(".")[0] == "syw":
            raise
        raise MissingExtra(f"syw {name} needs {err.name!r}, part of the full suite: pip install '.[suite]' in a checkout (or make env)",
                           name=err.name) from None

if __name__ == "__main__":
    sys.exit(main())
