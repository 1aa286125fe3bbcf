"""What a study needs from the machine, checked before Ray starts (about 40 s here) and anything is written.

The results location: every part of the path that exists is a folder, the deepest one takes a new
file, the records, manifest and lock files are files this process can write, Tune's state folder too, and the
file system has room; none of what the run writes there (records, locks, the trials' files, Tune's
state, Ray's log) is a symbolic link, which would have it written wherever the link points. For a new
local Ray: its temporary folder (``RAY_TMPDIR``, else ``TMPDIR``, else ``/tmp``, as Ray 2.60 picks
it) takes files and has room, and HOME takes the auth token the runner makes when there is none. For
a cluster named by ``ray.address``: a token to join it with. The data files the study reads, where
they exist, are files this process can read (a missing one is the reader's to download or explain).
Then the records files are claimed, so a second runner of the same records is refused here, not
after its Ray started. Each fault is one :class:`PreflightError` line.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from omegaconf import DictConfig

from syw.core.manifest import manifest_of
from syw.core.records import claim
from syw.experiments.cluster import cluster_to_join, local_token_needed, nonempty_file, token_found
from syw.experiments.provenance import DATA_FILES

MIN_RESULTS_FREE = 1 << 20  # a few records and Tune's state for the run
MIN_RAY_TEMP_FREE = 64 << 20  # a Ray session's sockets, logs and port files; with less its GCS does not come up
RUNBOOK = "docs/running.md, the cluster runbook, steps 3-4"


class PreflightError(ValueError):
    """A location or setting the study cannot run with; the message names the file or variable."""


def _deepest(path: Path) -> Path:
    """The deepest part of ``path`` that exists (a link counts, even a broken one)."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def _writable_folder(path: Path, what: str) -> None:
    """``path`` is a folder that takes a new file, or can be made one: each part of it that exists is a folder."""
    existing = _deepest(path)
    if not existing.is_dir():
        raise PreflightError(f"{existing}: a file, not a folder: {what} cannot be {'made under it' if existing != path else 'written there'}")
    try:
        handle, probe = tempfile.mkstemp(dir=existing, prefix=".syw-preflight-")
        os.close(handle)
        os.unlink(probe)
    except OSError as err:
        raise PreflightError(f"{existing}: cannot write {what} there ({err.strerror})") from None


def _free(path: Path, least: int, what: str, remedy: str) -> None:
    stat = os.statvfs(_deepest(path))
    free = stat.f_bavail * stat.f_frsize
    if free < least:
        raise PreflightError(f"{_deepest(path)}: only {free / 2**20:.1f} MiB free for {what} (it needs {least / 2**20:.0f} MiB); "
                             f"{remedy}")


def _writable_file(path: Path, what: str) -> None:
    """``path``, where it exists, is a file this process can append to (nothing is written)."""
    if not os.path.lexists(path):
        return
    if not path.is_file():
        raise PreflightError(f"{path}: {'a folder' if path.is_dir() else 'not a file'}, not {what}; move it away")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as err:
        raise PreflightError(f"{path}: cannot write {what} ({err.strerror})") from None


def _no_link(path: Path) -> None:
    """``path`` is no symbolic link: what the runner writes there would go wherever it points (a link to nothing: a
    new file there), outside the results folder the user named."""
    if os.path.islink(path):
        raise PreflightError(f"{path}: a symbolic link (to {os.readlink(path)}): the runner writes no file through a link; "
                             "remove it, or give the run another paths.results_dir")


def _no_links_below(results_dir: Path, path: Path) -> None:
    """No part of ``path`` below ``results_dir`` is a link (``results_dir`` itself is the user's to choose)."""
    below = path.relative_to(results_dir).parts if path.is_relative_to(results_dir) else ()
    for depth in range(1, len(below)):
        _no_link(results_dir.joinpath(*below[:depth]))
    _no_link(path)


def check_records_links(results_dir: Path, path: Path) -> None:
    """Neither the records file ``path`` nor its lock, nor a folder between them and ``results_dir``, is a link: checked
    before the records are read too (a dry run's, a resume's), so that the runner reads no file through a link either."""
    _no_links_below(results_dir, path.with_name(path.name + ".lock"))
    _no_links_below(results_dir, manifest_of(path))
    _no_links_below(results_dir, path)


def _no_links_within(folder: Path) -> None:
    """Neither ``folder`` nor anything in it is a link (a link to a folder is not followed)."""
    _no_link(folder)
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            _no_link(Path(root) / name)


def check_results(results_dir: Path, records: list[Path], study: str) -> None:
    """The records files, their folders, manifests and lock files, Tune's state folder, and room for them; none of what the run
    writes there (records, locks, the trials' files, Tune's state of ``study``'s runs, Ray's log) a link."""
    trials_folders = {results_dir / study} | {path.parent for path in records}
    for path in records:
        check_records_links(results_dir, path)
    for folder in sorted(trials_folders):
        for kind in ("resume", "predictions", "checkpoints"):  # what trials write beside the records
            if os.path.lexists(folder / kind):
                _no_links_within(folder / kind)
    tune = results_dir / ".tune"
    _no_link(tune)
    if tune.is_dir():
        _no_link(tune / f"{study}.ray.log")
        for run in sorted(tune.iterdir()):
            if run.name.startswith(f"{study}-"):  # its Tune runs: <study>-random, <study>-<family>.<strategy>.<seed>, ...
                _no_links_within(run)
    for path in records:
        _writable_folder(path.parent, "the records")
        _writable_file(path, "a records file")
        _writable_file(path.with_name(path.name + ".lock"), "the records' lock file")
        _writable_file(manifest_of(path), "the records' manifest")
        for folder in ("resume", "predictions", "checkpoints"):  # what trials write beside the records
            if os.path.lexists(path.parent / folder):
                _writable_folder(path.parent / folder, f"trials' {folder} files")
    _writable_folder(results_dir / ".tune", "Ray Tune's state")
    _free(results_dir, MIN_RESULTS_FREE, "the records", "make room there, or give the run another paths.results_dir")


def ray_temp_folder() -> tuple[Path, str]:
    """Where a new local Ray keeps its session (Ray 2.60's rule) and the variable that says so."""
    for variable in ("RAY_TMPDIR", "TMPDIR"):
        if os.environ.get(variable):
            return Path(os.environ[variable]), variable
    return Path("/tmp"), "the default"


def check_local_ray() -> None:
    """A new local Ray's temporary folder, and HOME where the runner makes a new auth token."""
    temp, variable = ray_temp_folder()
    what = f"Ray's session files ({variable}: {temp})"
    _writable_folder(temp / "ray", what)
    _free(temp, MIN_RAY_TEMP_FREE, what, "make room there, or set RAY_TMPDIR to a folder with room")
    if not local_token_needed():
        return
    try:  # no token anywhere: the runner makes one in ~/.ray/auth_token (syw.experiments.cluster.make_token)
        _writable_folder(Path.home() / ".ray", "the auth token a new local Ray needs (~/.ray/auth_token)")
    except PreflightError as err:
        raise PreflightError(f"{err}: set HOME to a folder this user can write, or RAY_AUTH_TOKEN_PATH to a token file "
                             "(`ray get-auth-token --generate` writes one)") from None


def check_token(address: str) -> None:
    """A cluster named by ``ray.address`` is joined with a token: ``~/.ray/auth_token`` (the runner then sets
    ``RAY_AUTH_MODE=token``), or with ``RAY_AUTH_MODE=token`` one in ``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH``."""
    mode = os.environ.get("RAY_AUTH_MODE")
    home_token = Path.home() / ".ray" / "auth_token"
    if mode == "disabled" or nonempty_file(home_token) or mode == "token" and token_found():
        return
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if mode == "token" and named:
        where = f"RAY_AUTH_TOKEN_PATH names {named}, which is no token file"
    else:
        where = f"there is no {home_token}" + (" (RAY_AUTH_TOKEN and RAY_AUTH_TOKEN_PATH count with RAY_AUTH_MODE=token)"
                                                if os.environ.get("RAY_AUTH_TOKEN") or named else "")
    raise PreflightError(f"ray.address={address}: no Ray auth token to join the cluster with: {where}; copy the head's "
                         f"~/.ray/auth_token there (chmod 600; {RUNBOOK}), or set RAY_AUTH_MODE=disabled for a cluster "
                         "without token authentication")


def check_data(data_dir: Path, dataset: str) -> None:
    """The data files of ``dataset`` that exist are files this process can read (the reader gets the missing ones)."""
    for name in DATA_FILES.get(dataset, []):
        path = data_dir / name
        existing = _deepest(path)
        if existing != path and not existing.is_dir():
            raise PreflightError(f"{existing}: a file, not a folder: the study reads {name} under it")
        if existing != path:
            continue
        try:
            with open(path, "rb") as handle:
                handle.read(1)
        except OSError as err:
            raise PreflightError(f"{path}: the study reads it, and cannot ({err.strerror})") from None


def preflight(cfg: DictConfig, records: list[Path]) -> None:
    """Every check of the module docstring for a run writing ``records``, then the records claimed for it
    (:class:`syw.core.records.RecordsBusy` when another runner holds one)."""
    check_results(Path(cfg.paths.results_dir), records, cfg.study.name)
    joining = cluster_to_join(cfg.ray.address)
    if joining is None:
        check_local_ray()
    elif cfg.ray.address not in (None, "auto"):
        check_token(cfg.ray.address)
    check_data(Path(cfg.paths.data_dir), cfg.study.dataset.get("name"))
    for path in records:
        try:
            claim(path)
        except OSError as err:  # a disk that filled since the checks above
            raise PreflightError(f"{path}.lock: cannot take the records' lock ({err.strerror})") from None
