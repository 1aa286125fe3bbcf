"""The CUDA path of every family file (issue 38): each model trains and validates on the GPU.

For every file in ``conf/search_space/`` (variants included: each may set what changes the model,
e.g. a cached or fine-tuned biLM), trial 0 of seed 0 is sampled (a replayed family is sampled from
its ``search`` block, as its file may be absent), its model is built on the task adapter's
generated data (random vectors in place of GloVe, the random ``GENERATED_DATA_BILM`` in place of
ELMo, no tokenizer) and trained for ``--epochs`` epochs by the adapter's own ``run`` on the
device, as a trial would be. Then it checks that every parameter, buffer and tensor a module
keeps (a biLM's carried states, the ELMo cache) is on the device, that a best-epoch checkpoint an
adapter writes (BiDAF's) holds CPU tensors, and times training steps per second on the device
against one CPU thread (a trial's default, ``SYW_TORCH_THREADS``). Families without a torch
model (the scikit-learn logistic regression of Table 3, the toy) are listed as CPU-only.

Needs torch, numpy, scipy, scikit-learn, h5py and pyyaml: no Ray, Hydra or omegaconf, so it runs
where the runner cannot (family files are read here with pyyaml). Without a GPU it says so in
one line and checks on the CPU. Writes a JSON report; exit status 1 when a family fails.

    .venv/bin/python -m syw.experiments.gpu_check [--out FILE] [--families STEM ...] [--device cpu]
        [--deterministic] [--no-cpu-timing]
    make gpu-check  (with a CUDA torch: make gpu-check TORCH_SPEC=torch)
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import yaml
from torch import nn

from syw.core.context import TrialContext
from syw.core.entry import Parser, run_main
from syw.core.paths import CONF_DIR
from syw.core.settings import resolve
from syw.experiments.cost import REPORTS_DIR
from syw.experiments.space import family_files, find_family_file, sample, trial_rng, trial_seed
from syw.models.trainer import build_optimizer, seed_everything, update

FAMILY_DIR = CONF_DIR / "search_space"
REPORTS = REPORTS_DIR  # one report per device name: a CPU run never overwrites a GPU's
SEED, TRIAL = 0, 0


class _Loader(yaml.SafeLoader):
    """YAML as OmegaConf reads it: ``1e-3`` is a float (YAML 1.2), not the string PyYAML makes of it."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
               r"|\.(?:inf|Inf|INF))$|^\.(?:nan|NaN|NAN)$"),
    list("-+0123456789."))


@dataclasses.dataclass(frozen=True)
class FamilySpec:
    """What the check needs of a family file: its training function, fixed settings and searches."""

    stem: str
    train_target: str
    fixed: dict[str, Any]
    search: dict[str, dict[str, Any]]


def read_family(stem: str, seen: tuple[str, ...] = ()) -> FamilySpec:
    """``<stem>.yaml`` with its ``inherits`` chain merged as :func:`syw.experiments.space.load_family`
    merges it (fixed settings per key, searches per key, a ``null`` search dropped)."""
    path = find_family_file(stem, [FAMILY_DIR]) or FAMILY_DIR / f"{stem}.yaml"
    raw = yaml.load(path.read_text(), Loader=_Loader) or {}
    fixed, search, target = dict(raw.get("fixed") or {}), dict(raw.get("search") or {}), (raw.get("train") or {}).get("_target_")
    base = raw.get("inherits")
    if base is not None:
        if base in seen + (stem,):
            raise ValueError(f"{path}: inherits: inheritance cycle through {base!r}")
        parent = read_family(str(base), seen + (stem,))
        fixed, search = {**parent.fixed, **fixed}, {**parent.search, **search}
        target = target or parent.train_target
    return FamilySpec(stem, str(target), fixed, {k: v for k, v in search.items() if v is not None})


def assignment(spec: FamilySpec, settings: dict[str, Any], epochs: int) -> dict[str, Any]:
    """Trial 0 of seed 0, resolved against the module's settings, trained ``epochs`` epochs without early stop."""
    params = resolve({**spec.fixed, **sample(spec.search, trial_rng(SEED, spec.stem, TRIAL))}, settings)
    return {**params, "epochs": epochs, "patience": None} if "epochs" in settings else params


def kept_tensors(model: nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    """Every parameter and buffer, and the tensors modules keep as attributes (directly or in a
    tuple, list or dict: a biLM's carried states, the ELMo cache)."""
    yield from model.named_parameters()
    yield from model.named_buffers()
    for prefix, module in model.named_modules():
        for attr, value in vars(module).items():
            if attr in ("_parameters", "_buffers", "_modules"):
                continue
            items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else [value]
            for k, item in enumerate(items):
                if isinstance(item, torch.Tensor):
                    yield f"{prefix}.{attr}[{k}]".lstrip("."), item


def misplaced(model: nn.Module, device: torch.device) -> list[str]:
    """Names of the model's tensors that are not on ``device``."""
    return [name for name, tensor in kept_tensors(model) if tensor.device.type != device.type]


def checkpoint_devices(outputs: dict[str, str], output_dir: Path) -> str:
    """Where the tensors of a best-epoch checkpoint the adapter wrote live once loaded back
    (``torch.load`` puts them where they were saved from), or that the adapter keeps none."""
    if "checkpoint" not in outputs:
        return "not kept by this adapter"
    state = torch.load(output_dir / outputs["checkpoint"], weights_only=True)["state"]
    devices = sorted({tensor.device.type for tensor in state.values()})
    if devices != ["cpu"]:
        raise AssertionError(f"the best epoch's checkpoint holds tensors on {', '.join(devices)}, not only on the CPU")
    return "on cpu"


def steps_per_second(module: Any, params: dict[str, Any], data: Any, layout: tuple, device: torch.device,
                     seconds: float, min_steps: int) -> float:
    """Training steps per second of a fresh model on ``device``, as the trainer takes them (batches
    moved per step, the loss read back, clipping, the update), after two warm-up steps."""
    seed_everything(SEED)
    model = module.build(params, data).to(device)
    optimizer = build_optimizer(model, params)
    batches = list(module.TASK.training_batches(data.train, params, torch.Generator().manual_seed(SEED), *layout))
    model.train()

    def step(k: int) -> None:
        loss = model(**{key: v.to(device) for key, v in batches[k % len(batches)].items()})["loss"]
        if not math.isfinite(loss.item()):
            raise FloatingPointError(f"the loss became {loss.item()} while timing")
        update(model, loss, optimizer, grad_norm=params.get("grad_norm"), grad_clipping=params.get("grad_clipping"))

    for k in range(2):
        step(k)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start, steps = time.perf_counter(), 0
    while steps < min_steps or time.perf_counter() - start < seconds:
        step(steps)
        steps += 1
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return steps / (time.perf_counter() - start)


@dataclasses.dataclass(frozen=True)
class TrialZero:
    """Trial 0 of a family file on its task adapter's generated data, built once: what the checks
    train; ``cpu_only`` says why a family has no torch model to train (None when it has one)."""

    target: str
    module: Any = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    data: Any = None
    layout: tuple = ()
    model: nn.Module | None = None
    cpu_only: str | None = None


def trial_zero(stem: str, epochs: int) -> TrialZero:
    """Trial 0 of seed 0 of ``stem`` (:func:`assignment`), its generated data (a test split, scored
    every epoch, is the dev split, so that it runs on the device too) and its model."""
    spec = read_family(stem)
    module = importlib.import_module(spec.train_target.rpartition(".")[0])
    if not hasattr(module, "build"):
        return TrialZero(spec.train_target, cpu_only="a synthetic objective of the settings (numpy): no model to train")
    params = assignment(spec, module.SETTINGS, epochs)
    data = module.TASK.synthetic()
    if "test" in {field.name for field in dataclasses.fields(data)}:
        data = dataclasses.replace(data, test=data.dev)
    data = module.prepare(data) if hasattr(module, "prepare") else data
    model = module.build(params, data)
    if not isinstance(model, nn.Module):
        return TrialZero(spec.train_target, cpu_only=f"a {type(model).__name__} of {type(model).__module__.split('.')[0]}, "
                                                      "a CPU-only library")
    layout = (module.layout(params),) if hasattr(module, "layout") else ()
    return TrialZero(spec.train_target, module, params, data, layout, model)


def check_family(stem: str, device: torch.device, *, epochs: int, seconds: float, min_steps: int,
                 cpu_timing: bool = True) -> dict[str, Any]:
    """One family file on ``device``: the adapter's run, the device and checkpoint checks, the timings
    (on one CPU thread too, unless ``cpu_timing`` is off)."""
    trial = trial_zero(stem, epochs)
    entry: dict[str, Any] = {"model": trial.target}
    if trial.cpu_only is not None:
        return entry | {"status": "cpu_only", "reason": trial.cpu_only}
    module, params, data, layout = trial.module, trial.params, trial.data, trial.layout
    built: list[nn.Module] = []

    def build() -> nn.Module:
        built.append(module.build(params, data))
        return built[-1]

    with tempfile.TemporaryDirectory() as folder:
        ctx = TrialContext(study="gpu_check", family=stem, trial_index=TRIAL, seed=trial_seed(SEED, stem, TRIAL),
                           data_dir=Path(folder), cache_dir=Path(folder), device=device.type, output_dir=Path(folder))
        start = time.perf_counter()
        outcome = module.TASK.run(params, ctx, data, build, *layout)
        entry["run_seconds"] = round(time.perf_counter() - start, 3)
        entry["selected_state"] = checkpoint_devices(outcome.outputs, Path(folder))
    wrong = misplaced(built[-1], device)
    if wrong:
        raise AssertionError(f"{len(wrong)} tensors not on {device.type} after training, e.g. {', '.join(wrong[:3])}")
    if not math.isfinite(outcome.metric):
        raise AssertionError(f"the validation metric is {outcome.metric}")
    entry |= {"status": "ok", "parameters": sum(p.numel() for p in built[-1].parameters()),
              "dev_metric": round(outcome.metric, 4), "best_epoch": outcome.best_epoch,
              "extra_metrics": {k: round(v, 4) for k, v in outcome.extra_metrics.items()}}
    rate = steps_per_second(module, params, data, layout, device, seconds, min_steps)
    entry["device_steps_per_second"] = round(rate, 2)
    if device.type == "cuda":
        entry["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
        torch.cuda.reset_peak_memory_stats(device)
        if not cpu_timing:
            return entry
        rate = steps_per_second(module, params, data, layout, torch.device("cpu"), seconds, min_steps)
    entry["cpu_steps_per_second"] = round(rate, 2)
    entry["speedup"] = round(entry["device_steps_per_second"] / entry["cpu_steps_per_second"], 2)
    return entry


def cpu_model() -> str:
    """The CPU's model name (Linux), else what Python's platform module says."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor() or "unknown"


def machine(device: torch.device) -> dict[str, Any]:
    """The device's name, the CPU the CPU timings ran on, and the versions the report was made with."""
    cuda = device.type == "cuda"
    return {"device": device.type, "device_name": torch.cuda.get_device_name(device) if cuda else cpu_model(),
            "cpu": cpu_model(), "cpu_threads": torch.get_num_threads(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if cuda else None,
            "python": platform.python_version()}


def pick_device(requested: str) -> torch.device:
    """``cuda`` when asked for and present; else the CPU, saying why in one line."""
    if requested == "cuda" and not torch.cuda.is_available():
        print("gpu_check: no CUDA GPU visible to torch (torch.cuda.is_available() is False): checking on the CPU")
        return torch.device("cpu")
    return torch.device("cuda" if requested == "cuda" else "cpu")


def run_check(stems: list[str], device: torch.device, out: Path, *, epochs: int, seconds: float,
              min_steps: int, cpu_timing: bool = True) -> dict[str, Any]:
    """Check every family in ``stems`` on ``device``; the report is rewritten after each (a run cut
    short still leaves what it checked)."""
    report = {**machine(device), "deterministic": torch.are_deterministic_algorithms_enabled(), "epochs": epochs,
              "families": {}}
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for stem in stems:
        try:
            entry = check_family(stem, device, epochs=epochs, seconds=seconds, min_steps=min_steps, cpu_timing=cpu_timing)
        except Exception as err:  # noqa: BLE001 - a failing family is reported, the others still run
            entry = {"status": "failed", "error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc(limit=-6)}
        report["families"][stem] = entry
        report["seconds"] = round(time.perf_counter() - start, 1)
        print(row(stem, entry), flush=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
    return report


def row(stem: str, entry: dict[str, Any]) -> str:
    """One line of the printed table."""
    if entry["status"] != "ok":
        return f"{stem:44} {entry['status']:8} {entry.get('reason') or entry.get('error')}"
    cpu = f"{entry['cpu_steps_per_second']:9.1f} {entry['speedup']:7.2f}x" if "speedup" in entry else f"{'-':>9} {'-':>8}"
    return f"{stem:44} ok       {entry['device_steps_per_second']:9.1f} {cpu}  state {entry['selected_state']}"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the JSON report (default: benchmarks/gpu_reports/[deterministic/]<device name>.json)")
    parser.add_argument("--families", nargs="+", metavar="STEM", help="family file stems (default: every file)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cuda falls back to cpu without a GPU")
    parser.add_argument("--epochs", type=int, default=2, help="epochs of the adapter's run (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=0.5, help="least seconds timed per device (default: %(default)s)")
    parser.add_argument("--min-steps", type=int, default=5, help="least steps timed per device (default: %(default)s)")
    parser.add_argument("--deterministic", action="store_true",
                        help="torch.use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG=:4096:8 (report in deterministic/)")
    parser.add_argument("--no-cpu-timing", dest="cpu_timing", action="store_false",
                        help="time the device only (a second run, e.g. the deterministic one, needs no CPU rate)")
    args = parser.parse_args(argv)
    every = [path.stem for path in family_files()]
    unknown = sorted(set(args.families or []) - set(every))
    if unknown:
        raise ValueError(f"gpu_check: --families: no family file {unknown[0]}.yaml in {FAMILY_DIR}")
    if args.epochs < 1 or args.min_steps < 1 or not args.seconds >= 0:
        raise ValueError("gpu_check: --epochs and --min-steps must be at least 1, --seconds at least 0")
    if args.deterministic:  # cuBLAS reads its workspace setting when CUDA starts, so before pick_device
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
    device = pick_device(args.device)
    torch.set_num_threads(max(1, int(os.environ.get("SYW_TORCH_THREADS", 1))))  # the trainer's, set here for the report
    print(f"gpu_check: {device.type} ({machine(device)['device_name']}), torch {torch.__version__}, CUDA {torch.version.cuda}")
    print(f"{'family':44} {'status':8} {'steps/s':>9} {'cpu':>9} {'speedup':>8}")
    name = re.sub(r"[^a-z0-9]+", "-", machine(device)["device_name"].lower()).strip("-") + ".json"
    out = args.out or REPORTS / ("deterministic" if args.deterministic else "") / name
    report = run_check(args.families or every, device, out, epochs=args.epochs, seconds=args.seconds,
                       min_steps=args.min_steps, cpu_timing=args.cpu_timing)
    failed = [stem for stem, entry in report["families"].items() if entry["status"] == "failed"]
    print(f"gpu_check: {len(report['families']) - len(failed)} of {len(report['families'])} families passed "
          f"in {report['seconds']} s; report: {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
