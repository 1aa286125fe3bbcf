"""TensorBoard event files with HParams (``SummaryWriter.add_hparams``, ``hp.hparams``), read with the
``tensorboard`` extra: each folder under the one given that holds event files (in it or below it: torch's
``add_hparams`` writes into a subfolder of the run's) is one trial, its hyperparameters (the HParams
plugin's session start info) as ``hparams.*`` columns and its scalars one row a step, reduced by
``per_trial`` (``--pick best|last``); a session whose end info says it failed is a failed trial. Trials are
in the order their first event was written (its wall time)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from syw.core.errors import DataError
from syw.curve.trials import Trials, step_rows

SESSION_START, SESSION_END = "_hparams_/session_start_info", "_hparams_/session_end_info"
ENDED = {1: "ok", 2: "failed", 3: "failed", 4: "running"}  # the plugin's Status: SUCCESS, FAILURE, ABORTED, RUNNING


def _events(folder: Path):
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
        from tensorboard.plugins.hparams import plugin_data_pb2
        from tensorboard.util import tensor_util
    except ImportError:
        raise DataError(f"{folder}: TensorBoard event files, read with tensorboard: pip install tensorboard "
                        "(or export the HParams table as CSV from TensorBoard)") from None
    return EventFileLoader, plugin_data_pb2, tensor_util


def read_tensorboard(path: Path) -> Trials:
    """Every folder of event files under ``path`` (module doc)."""
    folders = sorted(p for p in path.iterdir() if p.is_dir() and any(p.rglob("events.out.tfevents.*")))
    folders = folders or ([path] if any(path.rglob("events.out.tfevents.*")) else [])
    if not folders:
        raise FileNotFoundError(f"{path}: no events.out.tfevents.* file (TensorBoard's logs)")
    loader, plugin_data, tensor_util = _events(path)
    runs = []
    for folder in folders:
        hparams, steps, status, first = {}, {}, "ok", np.inf
        for file in sorted(folder.rglob("events.out.tfevents.*")):
            try:
                events = list(loader(str(file)).Load())
            except Exception as err:  # the loader raises its own types for a damaged file
                raise DataError(f"{file}: not a readable TensorBoard event file ({type(err).__name__})") from None
            for event in events:
                first = min(first, event.wall_time)
                for value in event.summary.value:
                    meta = value.metadata.plugin_data
                    if meta.plugin_name == "hparams" and value.tag in (SESSION_START, SESSION_END):
                        data = plugin_data.HParamsPluginData.FromString(meta.content)
                        if value.tag == SESSION_START:
                            for key, hp in data.session_start_info.hparams.items():
                                kind = hp.WhichOneof("kind")
                                hparams[f"hparams.{key}"] = getattr(hp, kind) if kind in (
                                    "number_value", "string_value", "bool_value") else None
                        else:
                            status = ENDED.get(data.session_end_info.status, "ok")
                    elif value.HasField("tensor") and value.tensor.dtype in (1, 2) and not meta.plugin_name == "hparams":
                        array = tensor_util.make_ndarray(value.tensor)
                        if array.size == 1:
                            steps.setdefault(event.step, {"step": event.step})[value.tag] = float(array.reshape(-1)[0])
                    elif value.HasField("simple_value"):
                        steps.setdefault(event.step, {"step": event.step})[value.tag] = float(value.simple_value)
        runs.append({"trial": folder.relative_to(path).as_posix() or folder.name, "start": first,
                     "label": folder.relative_to(path.parent).as_posix(), "status": status, "fields": hparams,
                     "steps": [steps[s] for s in sorted(steps)]})
    runs.sort(key=lambda r: r["start"])
    if not any(r["fields"] for r in runs):
        raise DataError(f"{path}: TensorBoard event files without HParams (no {SESSION_START}): log the trials' "
                        "hyperparameters with add_hparams, or pass a CSV of the trials")
    return step_rows(runs, str(path), path.name)
