"""Bad input gets one clear line naming the file and the line (or key): exit status 2 from a command,
an exception from a library reader; nothing in the folder is written, changed or lost; never a traceback.
The cases are the table in tests/support/bad_input_cases.py."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from tests.support.bad_input_cases import CASES
from tests.support.bad_input_support import Case


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}



@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_bad_input(case: Case, tmp_path: Path):
    t = tmp_path
    for relative, content in case.files.items():
        content = content() if callable(content) else content
        path = t / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = snapshot(t)
    with warnings.catch_warnings(record=True):  # e.g. a torn record line skipped: a note, not the error
        warnings.simplefilter("always")
        outcome, message = case.call(t)
    pattern = case.names.replace("{t}", re.escape(str(t)))
    if isinstance(case.expect, int):
        assert outcome == case.expect, message
        errors = [line for line in message.splitlines() if "error:" in line]
        assert len(errors) == 1, f"expected one error line on stderr, got:\n{message}"
        assert re.search(pattern, errors[0]), f"{errors[0]!r} does not match {pattern!r}"
        assert "Traceback" not in message
    else:
        assert isinstance(outcome, type) and issubclass(outcome, case.expect), (outcome, message)
        assert "\n" not in message, message
        assert re.search(pattern, message), f"{message!r} does not match {pattern!r}"
    assert snapshot(t) == before, "the folder changed: something was written, changed or lost"


def test_the_table_covers_every_entry_point_and_30_cases():
    kinds = {c.id.split("-")[0] for c in CASES}
    assert {"sst", "glove", "download", "analysis", "figures", "compare", "runner", "provenance"} <= kinds
    assert len(CASES) >= 30 and len({c.id for c in CASES}) == len(CASES)
    assert any("subprocess" in c.id for c in CASES)
