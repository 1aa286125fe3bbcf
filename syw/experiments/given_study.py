"""A study file given by path: ``syw run study=path/to/my_study.yaml``.

Hydra chooses a study by name on its config search path: ``conf/study/<name>.yaml``, then
``study/<name>.yaml`` in each ``hydra.searchpath`` folder, the suite's own first. A ``study=`` value
that names a file (it ends in ``.yaml`` or ``.yml``, which a study's name never does, or is a path
that exists) is given by path instead: the runner adds to Hydra's search path a temporary folder
holding only a link to that file, as ``study/by_path/<stem>.yaml``, and chooses
``study=by_path/<stem>``. The file is then a study like the suite's (its ``defaults``,
interpolations, later overrides), and a suite study of the same stem cannot take its place (the
suite has no ``conf/study/by_path/``). Its family files are looked for beside it
(:func:`syw.experiments.checks.family_dirs`).
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from syw.core.errors import ConfigError
from syw.core.paths import CONF_DIR

GROUP = "by_path"  # the option folder a study given by path is chosen under
SEARCHPATH = "hydra.searchpath="


def names_a_file(value: str) -> bool:
    """Whether a ``study=`` value is a path to a study file rather than the name of one of the suite's."""
    return value.endswith((".yaml", ".yml")) or ("/" in value and Path(value).expanduser().exists())


def with_study_file(args: list[str]) -> list[str]:
    """Hydra's overrides ``args`` with a ``study=<file>`` among them made a study Hydra can choose (see the
    module's docstring); ``args`` as they are when no study is given by path. A path that is no file
    raises :class:`ConfigError` naming it."""
    given = [i for i, arg in enumerate(args) if arg.startswith("study=") and names_a_file(arg[len("study="):])]
    if not given:
        _check_name(args)
        return list(args)
    value = args[given[-1]][len("study="):]
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        why = "is a folder, not a study file" if path.is_dir() else "does not exist"
        raise ConfigError(value, "study", f"{path} {why}: give a study file's path (relative to the current folder, "
                          "or absolute), or a study's name from conf/study")
    root = Path(tempfile.mkdtemp(prefix="syw-study-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    (root / "study" / GROUP).mkdir(parents=True)
    (root / "study" / GROUP / f"{path.stem}.yaml").symlink_to(path)
    out = [arg for i, arg in enumerate(args) if i not in given]
    searchpaths = [i for i, arg in enumerate(out) if arg.startswith(SEARCHPATH)]
    entry = f"file://{root}"
    if searchpaths:  # the user's own search path stays, after the study's folder
        i = searchpaths[-1]
        listed = out[i][len(SEARCHPATH):].strip()
        inner = listed[1:-1].strip() if listed.startswith("[") and listed.endswith("]") else listed
        out[i] = f"{SEARCHPATH}[{entry}{',' + inner if inner else ''}]"
    else:
        out.append(f"{SEARCHPATH}[{entry}]")
    return [*out, f"study={GROUP}/{path.stem}"]


def _check_name(args: list[str]) -> None:
    """A ``study=<name>`` that is none of the suite's studies, with no ``hydra.searchpath`` to find it on, is one line."""
    names = [arg[len("study="):] for arg in args if arg.startswith("study=")]
    if not names or any(arg.startswith(SEARCHPATH) for arg in args) or (CONF_DIR / "study" / f"{names[-1]}.yaml").is_file():
        return
    known = ", ".join(sorted(p.stem for p in (CONF_DIR / "study").glob("*.yaml")))
    raise ConfigError(CONF_DIR / "study", "study", f"there is no study {names[-1]!r} (has: {known}); a study file of "
                      f"yours is given by its path: study=path/to/{names[-1]}.yaml")
