"""A bad option value is bad input like any other (issue 75, item 5): one ``error: syw <command>: ...`` line and
exit status 2, not argparse's whole usage block before its error."""
from __future__ import annotations

import pytest

from syw.cli import COMMANDS, main

ARGPARSE = sorted(name for name, command in COMMANDS.items() if not command.hydra)  # Hydra reads its own overrides


@pytest.mark.parametrize("name", ARGPARSE)
def test_an_unknown_option_is_one_error_line(name, capsys):
    with pytest.raises(SystemExit) as stop:
        main([name, "--no-such-option"])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: syw {name}: "), lines
    assert lines[0].endswith(f" (syw {name} --help for usage)")
    assert "unrecognized arguments: --no-such-option" in lines[0] or "the following arguments are required" in lines[0]


@pytest.mark.parametrize("argv, says", [
    (["curve", "t.csv", "--forecast", "-5"], "argument --forecast: -5 is not a budget: it must be at least 1"),
    (["report", "t.csv", "--floor", "x"], "argument --floor: invalid float value: 'x'"),
    (["table", "t.csv", "--max-n", "0"], "argument --max-n: 0 is not a budget: it must be at least 1"),
    (["curve"], "the following arguments are required: trials"),
])
def test_a_bad_value_is_one_error_line_naming_the_option(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"error: syw {argv[0]}: {says} (syw {argv[0]} --help for usage)\n"
