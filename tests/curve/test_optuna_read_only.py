"""An Optuna storage is read, never written (issue 75, item 17): its bytes and its folder are the same after
syw curve, whether it is an Optuna storage or only looks like one; Optuna's storage class, which creates tables
and stamps a schema version where it finds none, only ever opens a read-only snapshot."""
from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support.readers import closed_form, one_error_line

optuna = pytest.importorskip("optuna")

SCORES = [0.3, 0.8, 0.5, 0.6]


@pytest.fixture(scope="module")
def storage(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("optuna_ro") / "study.db"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="s", storage=f"sqlite:///{path}", direction="maximize")
    study.optimize(lambda trial: SCORES[trial.number] + 0 * trial.suggest_float("x", 0, 1), n_trials=len(SCORES))
    return path


def state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("as_url", [False, True])
def test_reading_a_storage_changes_nothing_in_its_folder(storage, tmp_path, as_url):
    import pandas as pd

    from syw.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(storage, folder / "study.db")
    before = state(folder)
    source = f"sqlite:///{folder / 'study.db'}" if as_url else str(folder / "study.db")
    assert main(["curve", source, "--out", str(tmp_path / "out")]) == 0
    assert state(folder) == before  # no table created, no version stamped, no journal or WAL file left
    table = pd.read_csv(tmp_path / "out" / "expected_max.csv")
    assert table.expected_max.tolist() == pytest.approx([closed_form(SCORES, n) for n in range(1, 5)], abs=1e-12)


def test_a_storage_without_its_schema_version_is_refused_unwritten(storage, tmp_path, capsys):
    path = tmp_path / "unstamped.db"
    shutil.copy(storage, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DELETE FROM version_info")
        db.commit()
    before = state(tmp_path)
    one_error_line(["curve", str(path), "--out", str(tmp_path / "out")], capsys,
                   rf"^error: {path}: not an Optuna storage: its version_info or alembic_version table is empty "
                   r"\(no schema version stamped\); export the trials as CSV$")
    assert state(tmp_path) == before and not (tmp_path / "out").exists()
