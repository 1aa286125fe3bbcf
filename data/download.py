"""Download and verify the canonical data files (SST for Tables 2 and 3).

Usage: ``syw download sst --data-dir DIR`` fetches the official
``trainDevTestTrees_PTB.zip`` and extracts ``trees/{train,dev,test}.txt`` into
``DIR/sst/``. Readers call :func:`ensure_sst`, which downloads only when files
are missing.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from syw.errors import DataError, DataMissingError

SST_URL = "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip"
SST_SPLITS = ("train", "dev", "test")
SST_MD5 = {
    "train": "b12d531b1b913a3bb49719ba5cc1f67a",
    "dev": "c405f1d724964e6f72314b5a51fea691",
    "test": "97b75f6ca1ae58b4d52fbf9381dc6f8c",
}
_CHUNK = 1 << 20


def file_digest(path: Path, algorithm: str) -> str:
    """Hex digest of a file's bytes (``algorithm`` is e.g. "md5" or "sha256")."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_digest(path: Path, expected: str, algorithm: str, source: str, name: Path | None = None) -> None:
    """Raise :class:`DataError` naming ``name`` (default ``path``) when ``path``'s digest is not ``expected``."""
    actual = file_digest(path, algorithm)
    if actual != expected:
        raise DataError(f"{name or path} (from {source}) has {algorithm} {actual}, expected {expected}; "
                        "the download is corrupt or the file changed upstream")


def _promote(part: Path, dest: Path, checks: dict[str, str | None], source: str) -> None:
    """Move a finished ``part`` file to ``dest`` once its checksums match; delete it if one does not."""
    for algorithm, expected in checks.items():
        if expected is not None:
            try:
                _check_digest(part, expected, algorithm, source, name=dest)
            except DataError:
                part.unlink()
                raise
    part.replace(dest)


def fetch(url: str, dest: Path, *, sha256: str | None = None, md5: str | None = None,
          timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying a checksum when given.

    Raises :class:`DataMissingError` naming the URL and destination when the
    network is unavailable, and :class:`DataError` on a checksum mismatch.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(part, "wb") as out:
            shutil.copyfileobj(response, out, _CHUNK)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
        part.unlink(missing_ok=True)
        raise DataMissingError(
            f"could not download {url} ({err}). On a machine with internet, fetch that URL "
            f"and place it at {dest} (or run `syw download` there and copy the "
            "result over).") from err
    _promote(part, dest, {"sha256": sha256, "md5": md5}, url)
    return dest


def sst_paths(data_dir: Path) -> dict[str, Path]:
    """Where the SST PTB-tree files live under the data root: ``<data_dir>/sst/<split>.txt``."""
    return {split: Path(data_dir) / "sst" / f"{split}.txt" for split in SST_SPLITS}


def download_sst(data_dir: Path) -> dict[str, Path]:
    """Extract the three tree files of the official SST zip flat into ``<data_dir>/sst/``.

    The zip is fetched to ``<data_dir>/sst/trainDevTestTrees_PTB.zip`` unless it
    is already there (e.g. copied from a machine with internet).
    """
    paths = sst_paths(data_dir)
    archive = paths["train"].parent / Path(SST_URL).name
    if not archive.is_file():
        fetch(SST_URL, archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            members = {Path(name).name: name for name in zf.namelist() if "/trees/" in f"/{name}"}
            for split, path in paths.items():
                if f"{split}.txt" not in members:
                    raise DataError(f"{archive}: has no trees/{split}.txt; it holds {sorted(zf.namelist())}")
                part = path.with_name(path.name + ".part")
                try:
                    with zf.open(members[f"{split}.txt"]) as src, open(part, "wb") as dst:
                        shutil.copyfileobj(src, dst, _CHUNK)
                except (zipfile.BadZipFile, EOFError, OSError):
                    part.unlink(missing_ok=True)
                    raise
                _promote(part, path, {"md5": SST_MD5[split]}, str(archive))
    except (zipfile.BadZipFile, EOFError) as err:
        raise DataError(f"{archive}: not a readable zip archive ({err}); delete it to download it again, "
                        f"or put a good copy of {SST_URL} there") from err
    return paths


def ensure_sst(data_dir: Path) -> dict[str, Path]:
    """Return the SST split paths, downloading them first if any is missing."""
    paths = sst_paths(data_dir)
    missing = [p for p in paths.values() if not p.is_file()]
    if not missing:
        return paths
    try:
        return download_sst(data_dir)
    except DataMissingError as err:
        sst_dir = paths["train"].parent
        raise DataMissingError(
            f"SST files missing: {', '.join(map(str, missing))}. Set SYW_DATA_DIR (or the Hydra "
            f"setting paths.data_dir) to a folder that contains sst/{{train,dev,test}}.txt; or run "
            f"`syw download sst --data-dir {data_dir}` on a machine with internet; or "
            f"download {SST_URL} yourself and put it at {sst_dir / Path(SST_URL).name} (it is "
            f"extracted on the next run) or extract its trees/train.txt, dev.txt and test.txt into "
            f"{sst_dir}/. Download attempt: {err}") from err


def main(argv: list[str] | None = None) -> int:
    """Command line: ``syw download sst --data-dir DIR``; 2 (one ``error:`` line) when it cannot."""
    parser = argparse.ArgumentParser(prog="syw download", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=["sst"])
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        for split, path in ensure_sst(args.data_dir).items():
            print(f"{split}: {path} md5 {file_digest(path, 'md5')}")
    except (DataMissingError, DataError) as err:  # their messages name the file
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # e.g. a data dir that cannot be created or written
        print(f"error: {err.filename or args.data_dir}: {err.strerror or err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
