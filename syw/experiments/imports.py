"""Where a family's training function is imported from, and why it could not be.

A family file names its function by import path (``train: {_target_: mypackage.mymodule.train}``).
The runner imports a user's package as ``python -m`` would: from the current folder, then the
``PYTHONPATH`` entries, then the installed packages. The driver's ``sys.path`` gets the current
folder (a console script's does not have it), and the trial workers get the same folders in their
``PYTHONPATH`` (:func:`worker_pythonpath`, through Ray's ``runtime_env``), so the function a dry run
found is the one every trial runs. When it cannot be imported, :func:`import_problem` says which of
three things went wrong: no such module (and where it looked), a module that was found but failed
to import (naming what it imports that is missing), or a module without that function.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path


def user_folders() -> list[Path]:
    """The folders a user's package is imported from, in order: the current folder, then the
    ``PYTHONPATH`` entries (made absolute: the trial workers run in other folders)."""
    folders = [Path.cwd()]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and Path(entry).resolve() not in folders:
            folders.append(Path(entry).resolve())
    return folders


def add_current_folder() -> None:
    """Put the current folder on the driver's ``sys.path``, after the installed packages (so a
    file of the user's cannot shadow one of them), as the trial workers get it."""
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def worker_pythonpath(checkout: Path | None) -> str:
    """The trial workers' ``PYTHONPATH``: the suite's checkout (when it is one), the ``PYTHONPATH``
    entries and the current folder, all absolute."""
    folders = [*user_folders()[1:], Path.cwd()]
    if checkout is not None:
        folders.insert(0, checkout)
    return os.pathsep.join(dict.fromkeys(map(str, folders)))


def _looked_in() -> str:
    here, *entries = user_folders()
    where = ", ".join(map(str, entries)) if entries else "not set"
    return f"looked in the current folder ({here}), PYTHONPATH ({where}) and this Python's installed packages"


def _missing(module: str, parent: str | None) -> str:
    """``module`` is nowhere: where the runner looked, and how to point it at the folder that holds it."""
    if parent is not None:
        origin = getattr(importlib.util.find_spec(parent), "origin", None) or parent
        return f"there is no module {module} (the package {parent} is {origin})"
    if module == "syw":
        return "there is no module syw"
    return (f"there is no module {module} ({_looked_in()}); run syw from the folder that holds {module}/, or name "
            f"that folder: PYTHONPATH=/path/to/that/folder syw run ...")


def _where_raised(err: BaseException) -> str:
    """The file and line of the statement that raised ``err`` (the deepest frame outside importlib)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not f.filename.startswith("<frozen")]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "its import"


def _failed(module: str, err: BaseException) -> str:
    """``module`` was found but running it raised ``err``: what it imports that is missing, or what it raised."""
    at = _where_raised(err)
    if isinstance(err, ModuleNotFoundError) and err.name:
        return (f"{module} was found, but importing it failed: {at} imports {err.name}, which is not installed in this "
                f"Python ({sys.executable}); install it there, or, if {err.name} is a module of your package, import it "
                f"by its full name")
    return f"{module} was found, but importing it failed at {at}: {type(err).__name__}: {err}"


def import_problem(target: str) -> str | None:
    """Why the function ``target`` (``package.module.function``) cannot be imported, or None when it can.

    Imports the module (running it), so a module that fails is told apart from one that is not there.
    """
    module, _, name = target.rpartition(".")
    if not module:
        return f"{target!r} is not an import path (package.module.function)"
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        prefix = ".".join(parts[:depth])
        try:
            found = importlib.util.find_spec(prefix)  # runs the parent packages' __init__
        except ModuleNotFoundError as err:
            if err.name != prefix:  # a parent package whose import failed on a module it imports
                return _failed(".".join(parts[:depth - 1]), err)
            found = None  # the parent is a module, not a package: it has no submodules
        except Exception as err:  # noqa: BLE001 - a parent package that raised on import
            return _failed(".".join(parts[:depth - 1]), err)
        if found is None:
            return _missing(prefix, ".".join(parts[:depth - 1]) or None)
    try:
        loaded = importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - whatever the user's module raised is the reason
        return _failed(module, err)
    if not callable(getattr(loaded, name, None)):
        what = "no" if not hasattr(loaded, name) else "a non-callable"
        return f"{module} has {what} {name!r} ({getattr(loaded, '__file__', None) or module} defines no function {name})"
    return None
