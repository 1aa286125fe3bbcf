"""GPU sharing without a GPU: a local Ray told it has logical GPUs runs the runner's trials as
``resources.gpus_per_trial`` says (four at once on a quarter each, one per GPU, ``auto``), each
trial records the GPU Ray gave it, and a request the cluster cannot meet is one clear error.
Then what a trial on CUDA sets (docs/gpu.md): the CPU-only flush off, float32 kept IEEE."""
import json
from datetime import datetime
from pathlib import Path

import pytest

from syw.core.errors import ConfigError
from syw.experiments.cluster import trial_resources
from tests.support.runner_util import records, run, runner_env

# A trial that says it arrived (a file named after its index), then waits until ``meet`` trials
# have arrived or ``patience_seconds`` pass: its score is how many had arrived when it left, so
# ``meet`` trials score ``meet`` only if the runner let that many run at once.
PROBE = '''
import os, time
from pathlib import Path

from syw.core.context import TrialOutcome
from syw.core.settings import resolve

SETTINGS = {"x": {"type": "float"}, "meet": {"type": "int", "min": 1}, "folder": {"type": "str"},
            "patience_seconds": {"type": "float", "min": 0.0}}


def train(params, ctx):
    params = resolve(params, SETTINGS)
    folder = Path(params["folder"])
    (folder / str(ctx.trial_index)).write_text(ctx.device)
    deadline = time.monotonic() + params["patience_seconds"]
    while len(list(folder.iterdir())) < params["meet"] and time.monotonic() < deadline:
        time.sleep(0.05)
    return TrialOutcome(metric=float(len(list(folder.iterdir()))))
'''


def probe_study(tmp_path: Path, meet: int, trials: int, *overrides: str, gpus: int) -> tuple[list[dict], str, str, int]:
    """Run ``trials`` probe trials on a local Ray with ``gpus`` logical GPUs and 4 logical CPUs;
    return the records, stdout, stderr and exit status."""
    package = tmp_path / "code" / "gpuprobe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "probe.py").write_text(PROBE)
    (tmp_path / "arrived").mkdir()
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "probe.yaml").write_text(
        "label: probe\ntrain: {_target_: gpuprobe.probe.train}\n"
        f"fixed: {{meet: {meet}, folder: {tmp_path / 'arrived'}, patience_seconds: 60}}\n"
        "search:\n  x: {distribution: uniform, low: 0.0, high: 1.0}\n")
    # RAY_OVERRIDE_RESOURCES is how Ray's autoscaler tells a node what it has: here, a local Ray
    # started by the runner reports GPUs this machine lacks, as ray.init(num_gpus=...) would
    env = runner_env(PYTHONPATH=str(tmp_path / "code"), RAY_OVERRIDE_RESOURCES=json.dumps({"CPU": 4, "GPU": gpus}))
    env.pop("CUDA_VISIBLE_DEVICES", None)  # Ray numbers the logical GPUs from 0 only when this is unset
    out = tmp_path / "results"
    done = run("study=toy", "ray.address=local", f"paths.family_dirs=[{tmp_path / 'fam'}]", "study.families={toy: probe}",
               f"trials={trials}", f"paths.results_dir={out}", *overrides, env=env, timeout=240)
    path = out / "toy" / "toy.jsonl"
    return (records(path) if path.exists() else []), done.stdout, done.stderr, done.returncode


def four_probes_ran(tmp_path: Path, meet: int, gpus_per_trial: str, gpus: int, share: str) -> tuple[list[dict], str]:
    """Four probe trials at ``resources.gpus_per_trial``, checked to have run, the runner announcing
    1 CPU and ``share`` of a GPU each; their records and stdout."""
    rows, stdout, stderr, status = probe_study(tmp_path, meet, 4, f"resources.gpus_per_trial={gpus_per_trial}", gpus=gpus)
    assert status == 0, stdout[-2000:] + stderr[-3000:]
    assert f"4 of 4 trials to run (1 CPU, {share} GPU each)" in stdout
    assert sorted(r["trial"] for r in rows) == [0, 1, 2, 3]
    return rows, stdout


def most_at_once(rows: list[dict]) -> int:
    """The most trials whose [started_at, ended_at] spans overlap at one moment."""
    events = sorted((datetime.fromisoformat(r[key]), step) for r in rows for key, step in (("started_at", 1), ("ended_at", -1)))
    running = best = 0
    for _, step in events:  # at a tie an end sorts first: a trial that starts as another ends did not overlap it
        running += step
        best = max(best, running)
    return best


@pytest.mark.ray
@pytest.mark.slow
def test_a_quarter_gpu_each_runs_four_trials_at_once_on_one_gpu(tmp_path):
    rows, stdout = four_probes_ran(tmp_path, 4, "0.25", gpus=1, share="0.25")
    assert "(cluster 127.0.0.1:" in stdout and "this node 127.0.0.1; a new local Ray)" in stdout  # on loopback
    assert {r["status"] for r in rows} == {"ok"}
    assert [r["value"] for r in rows] == [4.0] * 4  # each waited until all four had arrived
    assert most_at_once(rows) == 4
    for r in rows:  # all four share GPU 0, and each says so
        assert r["hardware"]["gpu_ids"] == [0] and r["hardware"]["cuda_visible_devices"] == "0"


@pytest.mark.ray
@pytest.mark.slow
def test_auto_gives_each_trial_one_gpu_of_its_own(tmp_path):
    rows, _ = four_probes_ran(tmp_path, 2, "auto", gpus=2, share="1")
    assert all(r["value"] >= 2 for r in rows)
    assert most_at_once(rows) == 2  # two GPUs: two trials at a time, never more
    for r in rows:  # a trial sees only its own GPU
        (gpu,) = r["hardware"]["gpu_ids"]
        assert gpu in (0, 1) and r["hardware"]["cuda_visible_devices"] == str(gpu)
        assert r["hardware"]["gpu"] == "none" or r["hardware"]["gpu"].startswith("none: Ray gave GPU")
    first = sorted(rows, key=lambda r: r["started_at"])[:2]  # the two that met ran on different GPUs
    assert {r["hardware"]["cuda_visible_devices"] for r in first} == {"0", "1"}


@pytest.mark.ray
@pytest.mark.slow
def test_a_gpu_asked_of_a_cluster_without_one_is_one_error(tmp_path):
    rows, stdout, stderr, status = probe_study(tmp_path, 1, 2, "resources.gpus_per_trial=1", gpus=0)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert status == 2 and rows == [], stdout[-2000:] + stderr[-3000:]
    assert lines[-1].startswith("error: ") and lines[-1].endswith(
        "conf/study/toy.yaml: resources.gpus_per_trial: 1 GPU per trial asked for, but the Ray cluster has no GPU "
        "(auto uses GPUs only where there are some)")
    assert not any("Traceback" in line for line in lines)


ONE_GPU_NODE = [{"CPU": 16.0, "GPU": 1.0}, {"CPU": 4.0}]


@pytest.mark.parametrize("cpus, gpus, nodes, expected", [
    (1, "auto", ONE_GPU_NODE, {"cpu": 1.0, "gpu": 1.0}),
    (1, "auto", [{"CPU": 2.0}], {"cpu": 1.0, "gpu": 0.0}),
    (0.5, 0.25, ONE_GPU_NODE, {"cpu": 0.5, "gpu": 0.25}),
    (1, 1, ONE_GPU_NODE, {"cpu": 1.0, "gpu": 1.0}),
    (2, 0, [{"CPU": 2.0}], {"cpu": 2.0, "gpu": 0.0}),
])
def test_trial_resources(cpus, gpus, nodes, expected):
    assert trial_resources(cpus, gpus, nodes, "study.yaml") == expected


@pytest.mark.parametrize("cpus, gpus, nodes, message", [
    (1, 1, [{"CPU": 8.0}], "study.yaml: resources.gpus_per_trial: 1 GPU per trial asked for, but the Ray cluster has no GPU"),
    (1, 0.5, [], "study.yaml: resources.gpus_per_trial: 0.5 GPUs per trial asked for, but the Ray cluster has no GPU"),
    (1, 2, [{"CPU": 8.0, "GPU": 1.0}, {"CPU": 8.0, "GPU": 1.0}],  # two GPUs, but never on one node
     "study.yaml: resources.gpus_per_trial: 2 GPUs per trial asked for, but the largest node of the Ray cluster has 1"),
    (6, 1, [{"CPU": 4.0, "GPU": 4.0}, {"CPU": 2.0}],
     "study.yaml: resources.cpus_per_trial: 6 CPUs per trial asked for, but the largest node of the Ray cluster has 4"),
])
def test_trial_resources_a_cluster_cannot_give_are_refused(cpus, gpus, nodes, message):
    with pytest.raises(ConfigError) as err:
        trial_resources(cpus, gpus, nodes, "study.yaml")
    assert str(err.value).startswith(message)


def test_a_gpu_count_ray_cannot_give_is_refused_before_ray_starts(tmp_path):
    done = run("study=toy", "resources.gpus_per_trial=1.5", f"paths.results_dir={tmp_path / 'results'}", timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("error: ") and lines[0].endswith(
        "conf/study/toy.yaml: resources.gpus_per_trial: must be auto, a fraction up to 1 or a whole number, got 1.5")
    assert "Ray ready" not in done.stdout and not (tmp_path / "results").exists()


def test_a_cuda_trial_leaves_the_cpu_flush_off_and_float32_in_ieee(monkeypatch):
    """The trainer's per-trial torch settings (no GPU needed: they are process flags): the subnormal
    flush is a CPU mode, and on CUDA TF32 is never let into cuDNN's convolutions and LSTMs or matrix products."""
    import torch

    from syw.models.trainer import configure_torch

    backends = (torch.backends.cuda.matmul, torch.backends.cudnn.conv, torch.backends.cudnn.rnn)
    saved = [backend.fp32_precision for backend in backends], torch.get_num_threads()
    monkeypatch.delenv("SYW_TORCH_THREADS", raising=False)
    subnormal = torch.tensor([1e-39])  # below float32's smallest normal number, 1.18e-38
    try:
        configure_torch("cpu", flush_denormal=True)
        assert (subnormal * 1.0).item() == 0.0 and torch.get_num_threads() == 1
        assert [backend.fp32_precision for backend in backends] == saved[0]  # a CPU trial leaves CUDA's flags alone
        configure_torch("cuda", flush_denormal=True)
        assert (subnormal * 1.0).item() == pytest.approx(1e-39, rel=1e-3)  # kept: the flush stays off
        assert [backend.fp32_precision for backend in backends] == ["ieee"] * 3
    finally:
        torch.set_flush_denormal(False)
        for backend, value in zip(backends, saved[0]):
            backend.fp32_precision = value
        torch.set_num_threads(saved[1])


LOWER_PRECISION = {"autocast", "half", "bfloat16", "float16", "GradScaler", "amp"}  # attributes: torch.amp, x.half()
LOWER_PRECISION_NAMES = {"autocast", "GradScaler", "bfloat16", "float16"}  # imported names (`half` is a fine variable)


def test_no_model_lowers_float32_precision():
    """Mixed precision is never switched on: no autocast, .half(), bfloat16/float16 or GradScaler in
    the suite's training code (names and attributes, read from the source)."""
    import ast

    from tests.support.runner_util import REPO

    found = []
    for folder in ("models", "experiments", "data"):
        for file in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Attribute) and node.attr in LOWER_PRECISION or \
                        isinstance(node, ast.Name) and node.id in LOWER_PRECISION_NAMES:
                    found.append(f"{file.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
