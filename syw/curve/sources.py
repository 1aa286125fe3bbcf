"""What ``syw curve`` reads: one table of source kinds (:data:`SOURCES`), each with how it is recognised,
its reader (one module of ``syw.curve.readers``) and the pip extra that reader needs.

A source is recognised by the first row of :data:`SOURCES` that claims it, in the table's order: a URL,
a database or journal file, a folder by the files of the tool that wrote it, else a CSV/TSV/JSONL file.
Adding a reader is one module under ``syw/curve/readers/`` and one row here; ``syw curve --help``, the
README and ``docs/syw.md`` list the rows (:func:`kinds_help`).

Every malformed input raises one error naming the file (and line, key or trial): ``FileNotFoundError``
for what is not there, :class:`syw.core.errors.DataError` (a ``ValueError``) for what is wrong.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from syw.core.errors import DataError
from syw.curve.readers.hydra import jobs, read_hydra
from syw.curve.readers.journal import is_journal, read_journal
from syw.curve.readers.lightning import read_lightning, versions
from syw.curve.readers.mlflow import TABLES, is_mlflow_database, is_mlflow_folder, read_mlflow
from syw.curve.readers.optuna import DATABASE_SUFFIXES, OPTUNA_EXPORT, from_optuna_export, read_optuna, tables
from syw.curve.readers.ray import is_ray_folder, read_ray
from syw.curve.readers.records import is_records_folder, read_study
from syw.curve.readers.tensorboard import read_tensorboard
from syw.curve.readers.wandb import read_wandb, wandb_runs
from syw.curve.table import read_table
from syw.curve.trials import Trials

__all__ = ["DATABASE_SUFFIXES", "SOURCES", "Location", "SourceKind", "Trials", "kinds_help", "load_trials"]


@dataclass
class Location:
    """A source as given (``text``) and what it names: a URL, a file or a folder (``FOLDER#SCORE_FILE``: a
    Hydra multirun and the file each job writes its score to); ``study``: the study or experiment to read."""

    text: str
    study: str | None = None
    score_file: str | None = None
    path: Path | None = None
    _tables: set[str] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, text: str, study: str | None = None) -> Location:
        if "://" in text:
            path = Path(text.split(":///", 1)[1]) if text.startswith(("sqlite:///", "journal:///")) else None
            if text.startswith("journal:///"):
                path = Path(text[len("journal://"):])
            return cls(text, study, None, path)
        folder, hash_, score_file = text.partition("#")
        if hash_ and Path(folder).is_dir():
            return cls(text, study, score_file, Path(folder))
        return cls(text, study, None, Path(text))

    @property
    def url(self) -> bool:
        return "://" in self.text

    @property
    def folder(self) -> bool:
        return not self.url and self.path is not None and self.path.is_dir()

    @property
    def database_file(self) -> bool:
        return not self.url and self.path is not None and self.path.suffix.lower() in DATABASE_SUFFIXES

    def tables(self) -> set[str]:
        """The tables of the SQLite file the source names (read once, read-only)."""
        if self._tables is None:
            self._tables = tables(self.path, self.text)
        return self._tables


@dataclass(frozen=True)
class SourceKind:
    """One kind of source: its name, the line ``syw curve --help`` gives it, how it is recognised, its reader and the
    pip extra that reader needs (None: the light install reads it)."""

    name: str
    what: str
    recognise: Callable[[Location], bool]
    read: Callable[[Location], Trials]
    extra: str | None = None


def _sqlite_mlflow(loc: Location) -> bool:
    if loc.url:
        return loc.text.startswith("sqlite:///") and loc.path.is_file() and is_mlflow_database(loc.tables())
    return loc.database_file and loc.path.is_file() and is_mlflow_database(loc.tables())


def _read_optuna(loc: Location) -> Trials:
    if loc.url:
        return read_optuna(loc.text, loc.study)
    if not loc.path.is_file():
        raise FileNotFoundError(f"{loc.path}: no such database file")
    if "studies" not in loc.tables():
        raise DataError(f"{loc.path}: an SQLite file that is neither an Optuna storage (no 'studies' table) nor an MLflow "
                        f"tracking database (no {', '.join(sorted(TABLES - loc.tables()))} table); export the trials as CSV")
    return read_optuna(f"sqlite:///{loc.path}", loc.study, source=str(loc.path))


def _read_table(loc: Location) -> Trials:
    frame = read_table(loc.path)
    if OPTUNA_EXPORT <= set(frame.columns):
        return Trials(from_optuna_export(frame), str(loc.path), loc.path.stem,
                      notes=["read as Optuna's trials_dataframe() export (state, params_*, duration)"])
    return Trials(frame, str(loc.path), loc.path.stem)


def _events(path: Path) -> bool:
    return any(path.glob("events.out.tfevents.*")) or any(path.glob("*/events.out.tfevents.*"))


SOURCES: tuple[SourceKind, ...] = (
    SourceKind("ray", "a Ray Tune experiment folder (Tuner.fit's storage_path/name: a folder per trial with result.json and "
               "params.json); each trial counts with its best reported score (--pick last: its last), its "
               "hyperparameters as config.* columns",
               lambda loc: loc.folder and is_ray_folder(loc.path), lambda loc: read_ray(loc.path)),
    SourceKind("records", "this suite's study records, results/STUDY/ (the FAMILY.jsonl files syw run writes)",
               lambda loc: loc.folder and is_records_folder(loc.path), lambda loc: read_study(loc.path)),
    SourceKind("hydra", "a Hydra multirun folder (FOLDER#SCORE_FILE: the file each job writes its score to), "
               "its overrides as columns",
               lambda loc: loc.folder and (loc.score_file is not None or bool(jobs(loc.path))),
               lambda loc: read_hydra(loc.path, loc.score_file)),
    SourceKind("mlflow", "an MLflow tracking folder (mlruns/) or database (sqlite:///mlflow.db or the file; --study: "
               "its experiment); each run counts with its best logged step (--pick last: its last)",
               lambda loc: (loc.folder and is_mlflow_folder(loc.path)) or _sqlite_mlflow(loc),
               lambda loc: read_mlflow(loc.path, loc.study, database=not loc.folder)),
    SourceKind("lightning", "PyTorch Lightning CSVLogger versions (version_*/metrics.csv and hparams.yaml)",
               lambda loc: loc.folder and bool(versions(loc.path)), lambda loc: read_lightning(loc.path)),
    SourceKind("wandb", "Weights & Biases offline runs (wandb/run-*/: the run's files, or its binary log run-ID.wandb)",
               lambda loc: loc.folder and bool(wandb_runs(loc.path)), lambda loc: read_wandb(loc.path), extra="wandb"),
    SourceKind("tensorboard", "TensorBoard event files with the HParams plugin's records (events.out.tfevents.*)",
               lambda loc: loc.folder and _events(loc.path), lambda loc: read_tensorboard(loc.path), extra="tensorboard"),
    SourceKind("optuna-journal", "an Optuna journal file (JournalStorage, or journal:///path); several studies: each "
               "is a group, --study NAME reads one",
               lambda loc: loc.text.startswith("journal:///") or (not loc.url and not loc.database_file
                                                                  and loc.path.is_file() and is_journal(loc.path)),
               lambda loc: read_journal(loc.path, loc.study)),
    SourceKind("optuna", "an Optuna study in its storage: a URL (sqlite:///study.db) or the SQLite file; several "
               "studies: each is a group, --study NAME reads one; columns value, params.*, user_attrs.*, duration_seconds",
               lambda loc: loc.url or loc.database_file, _read_optuna, extra="optuna"),
    SourceKind("table", "a .csv, .tsv or .jsonl file, one trial a row (JSONL: nested keys become a.b columns), e.g. "
               "this suite's records, allentune's results.jsonl, the authors' camera-ready TSVs, Optuna's "
               "trials_dataframe() export", lambda loc: not loc.folder, _read_table),
)


def load_trials(source: str, *, study: str | None = None) -> Trials:
    """Read ``source`` by the first kind of :data:`SOURCES` that recognises it (docs/syw.md, Inputs); a folder
    no kind recognises gets the Ray Tune reader's error, which says what an experiment folder holds."""
    location = Location.of(source, study)
    for kind in SOURCES:
        if kind.recognise(location):
            return kind.read(location)
    return read_ray(location.path)


def kinds_help(width: int = 100) -> str:
    """The source kinds as ``syw curve --help`` lists them: one indented paragraph per row of :data:`SOURCES`."""
    import textwrap

    lines = []
    for kind in SOURCES:
        extra = f" (needs pip install '.[{kind.extra}]')" if kind.extra else ""
        lines.append(textwrap.fill(f"{kind.name}: {kind.what}{extra}", width, initial_indent="  ",
                                   subsequent_indent="    "))
    return "\n".join(lines)
