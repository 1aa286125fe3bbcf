"""Which biLM a family's ``elmo`` setting names, and where its files are (docs/models.md §C).

:data:`OFFICIAL_NAME` is the release the paper used (AllenNLP's 2x4096_512_2048cnn_2xhighway),
downloaded into the data folder when missing; any other name is a folder that
:func:`syw.models.elmo.checkpoint.save_bilm` wrote (``syw pretrain-bilm``).
"""
from __future__ import annotations

from pathlib import Path

from syw.core.errors import DataMissingError
from syw.data.fetch import fetch

OFFICIAL_NAME = "elmo_2x4096_512_2048cnn_2xhighway"
_URL = f"https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway/{OFFICIAL_NAME}"
OPTIONS_URL = f"{_URL}_options.json"
WEIGHTS_URL = f"{_URL}_weights.hdf5"  # AllenNLP publishes no checksum: trials record the sha256 they read


def missing_file(path: Path, what: str) -> DataMissingError:
    """The error for an absent ELMo ``what`` file (options or weights), saying how to get the official one."""
    return DataMissingError(
        f"ELMo {what} file {path} not found. On a machine with internet fetch the official "
        f"2x4096_512_2048cnn_2xhighway ELMo, options {OPTIONS_URL} and weights {WEIGHTS_URL} "
        f"(the weights are ~360 MB), and put the {what} file at {path}.")


def resolve_elmo(source: str, data_dir: str | Path, cache_dir: str | Path) -> tuple[Path, Path]:
    """The options and weights files of an ELMo ``source`` (a family's ``elmo`` setting).

    :data:`OFFICIAL_NAME` is the release the paper used, kept in ``<data_dir>/elmo/`` under its
    own file names and downloaded there when missing; anything else is a folder that
    ``save_bilm`` wrote (``syw pretrain-bilm``), relative to the cache folder
    unless absolute. Missing files raise :class:`DataMissingError` saying how to get them.
    """
    if source == OFFICIAL_NAME:
        folder = Path(data_dir) / "elmo"
        paths = (folder / Path(OPTIONS_URL).name, folder / Path(WEIGHTS_URL).name)
        for url, path in zip((OPTIONS_URL, WEIGHTS_URL), paths):
            if not path.is_file():
                try:
                    fetch(url, path)
                except DataMissingError as err:
                    raise missing_file(path, "options" if path == paths[0] else "weights") from err
        return paths
    folder = Path(cache_dir) / source
    options, weights = folder / "options.json", folder / "weights.hdf5"
    for path in (options, weights):
        if not path.is_file():
            raise DataMissingError(f"biLM file {path} not found: train it with `syw pretrain-bilm "
                                   f"--out {folder}` (see that module for its size and time), or set the family's "
                                   f"elmo to {OFFICIAL_NAME!r}, the official ELMo")
    return options, weights
