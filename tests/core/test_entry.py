"""One way from bad input to its ``error:`` line and exit status 2 (syw.core.entry): the formatter, run_main,
exit_on for the Hydra apps, naming and write_output; and a reading of the suite's code that fails if a
module prints its own ``error:`` line, returns or exits 2 itself, or runs its ``main`` without run_main."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from syw import cli
from syw.core.entry import MissingExtra, error_line, exit_on, naming, run_main, write_output
from syw.core.errors import ConfigError, DataError, DataMissingError
from syw.core.paths import REPO

FOLDERS = ("syw", "benchmarks")
ENTRY = REPO / "syw" / "core" / "entry.py"
RUN_MAIN = "sys.exit(run_main(main))"


def suite_files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py") if p != ENTRY)


def _is_int(node: ast.AST | None, value: int | None = None) -> bool:
    return (isinstance(node, ast.Constant) and type(node.value) is int
            and (value is None or node.value == value))


def _is_two(node: ast.AST | None) -> bool:
    """``2``, or a choice between exit statuses one of which is 2 (``0 if ok else 2``)."""
    if isinstance(node, ast.IfExp):
        return _is_int(node.body) and _is_int(node.orelse) and 2 in (node.body.value, node.orelse.value)
    return _is_int(node, 2)


def _starts_with_error(node: ast.AST) -> bool:
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.lstrip().startswith("error:")


def own_error_paths(source: str) -> list[str]:
    """Where ``source`` makes an error line or exit status 2 itself: a string that starts with ``error:``,
    ``return 2``, ``sys.exit(2)`` or ``SystemExit(2)`` (each as ``line: code``)."""
    found: dict[int, str] = {}  # by line: an f-string's first part is a string of its own
    for node in ast.walk(ast.parse(source)):
        exits = (isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "exit", "SystemExit")
                 and len(node.args) == 1 and _is_two(node.args[0]))
        if (isinstance(node, ast.Return) and _is_two(node.value)) or exits or (
                isinstance(node, (ast.Constant, ast.JoinedStr)) and _starts_with_error(node)):
            found.setdefault(node.lineno, f"{node.lineno}: {ast.unparse(node)[:80]}")
    return sorted(found.values())


def _is_hydra_main(tree: ast.Module) -> bool:
    """A Hydra app: a function decorated with ``hydra.main`` (``main`` itself, or the app ``main`` calls once it
    has read a study given by path from ``sys.argv``)."""
    return any(isinstance(node, ast.FunctionDef) and any("hydra.main" in ast.unparse(d) for d in node.decorator_list)
               for node in tree.body)


def main_block_problem(source: str) -> str | None:
    """What is wrong with how ``source``'s ``if __name__ == "__main__":`` block runs its main, or None.
    A command runs as ``sys.exit(run_main(main))``; a Hydra app (its ``main`` takes no argv) as
    ``main()``, with its bad input going through ``exit_on``; ``syw.cli``'s own main calls run_main."""
    tree = ast.parse(source)
    blocks = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'"]
    if not blocks:
        return None
    body = "; ".join(ast.unparse(statement) for statement in blocks[0].body)
    if _is_hydra_main(tree):
        if body != "main()":
            return f"a Hydra app's block is {body!r}, not 'main()'"
        return None if "exit_on(" in source else "a Hydra app whose bad input does not go through syw.core.entry.exit_on"
    mains = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main"]
    if body == "sys.exit(main())" and mains and "run_main(" in ast.unparse(mains[0]):
        return None  # syw.cli: main is run_main(the dispatcher)
    return None if body == RUN_MAIN else f"the block is {body!r}, not {RUN_MAIN!r}"


@pytest.mark.parametrize("path", suite_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_makes_its_own_error_line_or_exit_status_2(path: Path):
    source = path.read_text()
    assert own_error_paths(source) == [], f"{path.relative_to(REPO)}: raise instead; syw.core.entry.run_main prints it"
    assert main_block_problem(source) is None, f"{path.relative_to(REPO)}: {main_block_problem(source)}"


def test_every_command_module_is_read_and_at_least_ten_run_through_run_main():
    sources = [p.read_text() for p in suite_files()]
    assert sum(RUN_MAIN in s for s in sources) >= 10  # the analysis, figures, experiments, data, models commands
    assert sum(_is_hydra_main(ast.parse(s)) for s in sources) == 2  # syw run, syw reseed


@pytest.mark.parametrize("source", [
    'print(f"error: {err}", file=sys.stderr)\n',
    'sys.stderr.write("error: no such file\\n")\n',
    "def main():\n    return 2\n",
    "def main(ok):\n    return 0 if ok else 2\n",
    "sys.exit(2)\n",
    "raise SystemExit(2)\n",
])
def test_the_reading_finds_a_module_that_does_it_itself(source):
    assert len(own_error_paths(source)) == 1


@pytest.mark.parametrize("source", [
    'if __name__ == "__main__":\n    sys.exit(main())\n',
    'if __name__ == "__main__":\n    raise SystemExit(main())\n',
    '@hydra.main(config_name="config")\ndef main(cfg):\n    pass\n\nif __name__ == "__main__":\n    main()\n',
])
def test_the_reading_finds_a_main_block_without_run_main(source):
    assert main_block_problem(source) is not None


def test_the_reading_leaves_numbers_and_the_run_main_forms_alone():
    assert own_error_paths("def f(x):\n    return 2 * x\n") == []  # a number, not an exit status
    assert own_error_paths("def classes(fine):\n    return FIVE if fine else 2\n") == []
    assert own_error_paths('"""Bad input is one \'error:\' line."""\n') == []
    assert main_block_problem(f'if __name__ == "__main__":\n    {RUN_MAIN}\n') is None


def _failing(err: BaseException):
    def main(argv):
        raise err
    return main


@pytest.mark.parametrize("err, line", [
    (DataError("r.csv:3: column 'value' is empty"), "error: r.csv:3: column 'value' is empty"),
    (DataMissingError("sst/train.txt not found: run syw download sst"), "error: sst/train.txt not found: run syw download sst"),
    (ConfigError("conf/study/toy.yaml", "seed", "must be an integer >= 0, got -3"),
     "error: conf/study/toy.yaml: seed: must be an integer >= 0, got -3"),
    (ValueError("r.csv: --out is the records file itself"), "error: r.csv: --out is the records file itself"),
    (PermissionError(13, "Permission denied", "/results/x.csv"), "error: /results/x.csv: Permission denied"),
    (FileNotFoundError(2, "No such file or directory", "nope.csv"), "error: nope.csv: No such file or directory"),
    (OSError(28, "No space left on device"), "error: No space left on device"),
    (FileNotFoundError("nope.csv: no such records file"), "error: nope.csv: no such records file"),
    (MissingExtra("syw run needs 'hydra', part of the full suite: pip install '.[suite]' in a checkout (or make env)"),
     "error: syw run needs 'hydra', part of the full suite: pip install '.[suite]' in a checkout (or make env)"),
])
def test_bad_input_is_one_line_and_exit_status_2(err, line, capsys):
    assert error_line(err) == line
    assert run_main(_failing(err), ["x"]) == 2
    out, stderr = capsys.readouterr()
    assert (out, stderr) == ("", line + "\n")


def test_run_main_passes_the_argv_and_the_status_through():
    seen = []
    assert run_main(lambda argv: seen.append(argv) or 0, ("a", "b")) == 0
    assert run_main(lambda argv: seen.append(argv) or 1, None) == 1  # e.g. syw readme --check with stale numbers
    assert seen == [["a", "b"], None]


@pytest.mark.parametrize("err", [KeyboardInterrupt(), SystemExit(2), RuntimeError("a bug"), KeyError("a bug")])
def test_interrupts_exits_and_bugs_pass_through(err, capsys):
    with pytest.raises(type(err)):
        run_main(_failing(err))
    assert capsys.readouterr().err == ""


def test_exit_on_ends_a_hydra_app_with_the_same_line(capsys):
    with pytest.raises(SystemExit) as stop, exit_on(ConfigError):
        raise ConfigError("conf/study/toy.yaml", "trials", "must be at least 1")
    assert stop.value.code == 2
    assert capsys.readouterr().err == "error: conf/study/toy.yaml: trials: must be at least 1\n"
    with pytest.raises(DataError), exit_on(ConfigError):  # only the errors named
        raise DataError("x")


def test_naming_gives_an_os_error_without_a_file_the_path_and_leaves_the_rest(tmp_path):
    with pytest.raises(OSError) as caught, naming(tmp_path / "out"):
        raise OSError(28, "No space left on device")
    assert error_line(caught.value) == f"error: {tmp_path / 'out'}: No space left on device"
    with pytest.raises(OSError) as caught, naming(tmp_path / "out"):
        raise PermissionError(13, "Permission denied", "/elsewhere")
    assert error_line(caught.value) == "error: /elsewhere: Permission denied"
    with pytest.raises(DataMissingError) as caught, naming(tmp_path / "out"):  # its message names its files
        raise DataMissingError("sst/train.txt not found")
    assert error_line(caught.value) == "error: sst/train.txt not found"


def test_write_output_writes_or_raises_naming_the_file_and_what(tmp_path, capsys):
    path = tmp_path / "t.csv"
    write_output(path, lambda p: p.write_text("x\n"), "table")
    assert path.read_text() == "x\n" and capsys.readouterr().out == f"wrote {path}\n"
    missing = tmp_path / "no" / "t.csv"
    with pytest.raises(OSError) as caught:
        write_output(missing, lambda p: p.write_text("x\n"), "table")
    assert error_line(caught.value) == f"error: {missing}: cannot write the table: the folder {missing.parent} does not exist"
    assert capsys.readouterr().out == "" and not missing.parent.exists()


@pytest.mark.parametrize("argv, line", [([], "error: syw: no command given"), (["nope"], "error: syw: unknown command 'nope'")])
def test_syw_without_a_known_command_is_an_error_and_the_usage(argv, line, capsys):
    assert cli.main(argv) == 2
    stderr = capsys.readouterr().err
    assert stderr.splitlines()[0] == line and "usage: syw <command>" in stderr


@pytest.mark.parametrize("argv", [["1", "--source", "paper"], ["fig3"], ["budgets"], ["x"]])
def test_syw_fig_passes_its_words_to_the_figures_command(argv):
    assert cli.COMMANDS["fig"].forward(argv) == ["fig", *argv]  # syw.figures.__main__ reads `fig N` and `fig budgets`


@pytest.mark.parametrize("word", ["x", "9"])
def test_syw_fig_with_an_unknown_figure_lists_the_figures(word, capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["fig", word])
    assert caught.value.code == 2 and (f"there is no figure {word!r}; the figures are 1 (SST-5), 2 (SST-2), 3 (SciTail), "
                                       "4 (SQuAD), 5 (PTB, Melis et al. 2018)") in capsys.readouterr().err


def test_python_m_of_a_command_module_goes_through_run_main(tmp_path):
    done = subprocess.run([sys.executable, "-m", "syw.curve.table_command", str(tmp_path / "nope.csv")], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: {tmp_path / 'nope.csv'}: no such records file"


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    """``syw ... | head``: once head has gone, the broken pipe is neither a traceback nor an error line."""
    code = ("import sys; from syw.core.entry import run_main\n"
            "def main(argv):\n    for _ in range(100_000):\n        print('x' * 100)\n    return 0\n"
            "sys.exit(run_main(main))\n")
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -c \"$CODE\" 2>{tmp_path / 'err'} | head -1"],
                          env={**os.environ, "CODE": code}, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.returncode, (tmp_path / "err").read_text()) == ("x" * 100 + "\n", 141, "")
