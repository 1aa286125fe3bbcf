"""What the bad-input table (tests/support/bad_input_cases.py) is made of: a case, the three ways to call the
suite (:func:`cli`, :func:`shell`, :func:`call`), and the makers of the files a case writes."""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from syw import cli as syw
from syw.core.paths import REPO

Outcome = tuple[int | type, str]
Content = str | bytes | Callable[[], str | bytes]


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, Content]
    call: Callable[[Path], Outcome]
    expect: int | type[BaseException]
    names: str
    marks: tuple = field(default=())


def runner(t: Path, *overrides: str) -> Outcome:
    """``syw run study=toy`` with its results in ``t/results`` and ``overrides``."""
    return shell("run", "study=toy", "trials=2", f"paths.results_dir={t}/results", *overrides)

def cli(*argv: str) -> Outcome:
    """``syw *argv`` in this process: its exit status and what it wrote to stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = syw.main(list(argv))
        except SystemExit as stop:  # argparse
            status = stop.code
    return status, err.getvalue()


def shell(*argv: str) -> Outcome:
    """``python -m syw *argv`` in a subprocess: its exit status and stderr (which must hold no traceback)."""
    done = subprocess.run([sys.executable, "-m", "syw", *argv], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


def call(target: str, *args: Any, **kwargs: Any) -> Outcome:
    """``module:function(*args, **kwargs)``: the type and message of what it raised."""
    module, name = target.split(":")
    try:
        result = getattr(importlib.import_module(module), name)(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the case says which type it expects
        return type(err), str(err)
    return 0, f"no error; returned {result!r:.200}"


def real_sst_head(split: str, n: int) -> str:
    """The first ``n`` trees of the real SST ``split`` (a truncated copy of the official file)."""
    from tests.support.fixtures_sst import real_data_dir

    if real_data_dir() is None:
        pytest.skip("set SYW_DATA_DIR to a folder with sst/{train,dev,test}.txt")
    with open(real_data_dir() / "sst" / f"{split}.txt", encoding="utf-8") as f:
        return "".join(next(f) for _ in range(n))


def squad_text(context: str | None = "The cat sat.", qid: str | None = "q1", question: str = "Who sat?",
               answers: list | None = ({"text": "cat", "answer_start": 4},)) -> str:
    """A one-question SQuAD v1.1 file; a field given as None is left out."""
    present = lambda fields: {k: v for k, v in fields.items() if v is not None}  # noqa: E731
    qa = present({"id": qid, "question": question, "answers": None if answers is None else list(answers)})
    paragraph = present({"context": context, "qas": [qa]})
    return json.dumps({"version": "1.1", "data": [{"title": "a", "paragraphs": [paragraph]}]})


def glove_lines(n: int) -> bytes:
    """``n`` GloVe lines of distinct words and numbers (they do not compress to nothing)."""
    return "".join(f"w{i} {i / 7:.6f} {i / 11:.6f} {i / 13:.6f}\n" for i in range(n)).encode()


def zip_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buffer.getvalue()


def record_lines(**fields: Any) -> str:
    """One JSONL trial record of family ``a`` with ``fields`` replaced (json writes NaN as ``NaN``)."""
    record = {"family": "a", "trial": 0, "status": "ok", "value": 0.5, "params": {}, **fields}
    return json.dumps(record) + "\n"


def study_lines(study: str, family: str, n: int = 3, status: str = "ok", **fields: Any) -> str:
    """``n`` records of ``family`` as the runner writes them (tests.support.fake_records), with ``fields`` set (None: left out)."""
    from tests.support.fake_records import write_study

    with tempfile.TemporaryDirectory() as folder:
        path = write_study(Path(folder), study, {family: (0.35, 0.03, 2.0)}, n=n) / f"{family}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["status"] = status
        for key, value in fields.items():
            if value is None:
                del record[key]
            else:
                record[key] = value
    return "".join(json.dumps(r) + "\n" for r in records)


def sqlite_bytes(*statements: str) -> bytes:
    """The bytes of an SQLite database after ``statements``."""
    import sqlite3

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.db"
        with contextlib.closing(sqlite3.connect(path)) as db:
            for statement in statements:
                db.execute(statement)
            db.commit()
        return path.read_bytes()
