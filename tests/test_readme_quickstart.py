"""The README's quickstart runs as written (a doctest) in the light install, and so do the examples
in the API's docstrings (``syw.curve.api``)."""
from __future__ import annotations

import re

from syw.core.paths import REPO
from tests.support.light import run_light

HEADING = "## Quickstart: the curves of your own trials, in Python"


def quickstart() -> str:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text[text.index(HEADING):], re.S)
    assert block, "the quickstart has no python block"
    return block.group(1)


def test_the_quickstart_follows_the_two_setup_commands():
    text = (REPO / "README.md").read_text()
    assert text.index("make fig1") < text.index("make test") < text.index(HEADING) < text.index("## What this is")
    assert ">>> from syw.curve import api" in quickstart()


def test_the_quickstart_and_the_api_docstrings_pass_as_doctests_in_the_light_install(tmp_path):
    (tmp_path / "quickstart.txt").write_text(quickstart())
    code = ("import doctest, sys\nimport syw.curve.api\n"
            "a = doctest.testfile('quickstart.txt', module_relative=False)\n"
            "b = doctest.testmod(syw.curve.api)\n"
            "print(a.attempted, a.failed, b.attempted, b.failed)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'ray', 'omegaconf')))\n")
    done = run_light(code, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    counts, imported = done.stdout.strip().splitlines()[-2:]
    attempted, failed, attempted_api, failed_api = map(int, counts.split())
    assert failed == 0 and failed_api == 0, done.stdout[-3000:]
    assert attempted >= 8 and attempted_api >= 2
    assert imported == "[]"
