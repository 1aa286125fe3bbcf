"""The dry run's GPU cost: the paper's per-trial time x trials per family, scaled by what was measured."""
import json
from pathlib import Path

import pytest

from syw.core.errors import ConfigError
from syw.experiments.cost import cost_lines, gpu_reports, times
from syw.experiments.space import load_family, study_config
from tests.support.runner_util import run


def paper_line(name: str, width: int, trials: int, family) -> str:
    seconds, hardware = family.reported["training_duration_seconds"], family.reported["hardware"]
    return f"  {name + ':':{width + 1}} {trials} trials x {seconds:g} s = {trials * seconds / 3600:,.1f} h on {hardware}"


@pytest.mark.slow
@pytest.mark.parametrize("study", ["scitail", "sst2_bcn", "squad"])
def test_dry_run_of_a_full_study_prints_gpu_hours_per_family(tmp_path, study):
    config = study_config(study)
    families = {name: load_family(stem, name=name) for name, stem in config["families"].items()}
    done = run(f"study={study}", "dry_run=true", f"paths.results_dir={tmp_path / 'results'}", timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    block = lines[lines.index(next(l for l in lines if l.startswith(f"GPU cost of {study} "))):]
    width = max(map(len, families))
    for name, family in families.items():  # every family of the study, at the paper's time x the study's trials
        assert paper_line(name, width, config["trials"], family) in block, "\n".join(block)
    by_hardware: dict[str, float] = {}
    for family in families.values():
        hardware = family.reported["hardware"]
        by_hardware[hardware] = by_hardware.get(hardware, 0) + config["trials"] * family.reported["training_duration_seconds"]
    for hardware, seconds in by_hardware.items():
        assert f"  {'total:':{width + 1}} {seconds / 3600:,.1f} h on {hardware}, at the paper's speed" in block
    assert block[-1].startswith("  no measured speed ratio") or any(" measured: " in l for l in block)


def write_report(folder: Path, name: str, device: str, families: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps({"device": device, "device_name": "NVIDIA H100 80GB HBM3" if device == "cuda" else "x86_64",
                                "families": families}))
    return path


def records(path: Path, gpu: str, durations: list[float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        for i, seconds in enumerate(durations):
            out.write(json.dumps({"trial": i, "status": "ok", "value": 0.8, "params": {}, "duration_seconds": seconds,
                                  "hardware": {"gpu": gpu}}) + "\n")


def scitail_families():
    return [load_family("scitail_esim", name="esim"), load_family("scitail_dgem", name="dgem")]


def test_no_report_and_no_records_is_one_no_ratio_line(tmp_path):
    families = scitail_families()
    lines = cost_lines("scitail", families, {"esim": 100, "dgem": 100}, {"esim": list(range(100)), "dgem": list(range(100))},
                       tmp_path / "results", [], reports=tmp_path)
    assert lines[1] == "  esim: 100 trials x 372 s = 10.3 h on GeForce GTX 1080 GPU"
    assert lines[2] == "  dgem: 100 trials x 1015 s = 28.2 h on GeForce GTX 1080 GPU"
    assert lines[3] == "  total: 38.5 h on GeForce GTX 1080 GPU, at the paper's speed"  # (372 + 1015) x 100 s
    assert lines[4].startswith("  no measured speed ratio (no ") and "*.json report from a CUDA device" in lines[4]
    assert len(lines) == 5


def test_gpu_records_scale_the_trials_left(tmp_path):
    results = tmp_path / "results"
    records(results / "esim.jsonl", "NVIDIA H100 80GB HBM3", [180.0, 186.0, 200.0])  # median 186 s: 372 / 186 = 2x
    lines = cost_lines("scitail", scitail_families(), {"esim": 100, "dgem": 100}, {"esim": list(range(3, 100)), "dgem": list(range(100))},
                       results, [], reports=tmp_path)
    assert lines[1] == "  esim: 100 trials (97 to run) x 372 s = 10.3 h on GeForce GTX 1080 GPU; to run: 10.0 h"
    assert lines[2] == ("    measured: 3 trials ran on NVIDIA H100 80GB HBM3 here, median 186 s (2x the paper's speed): "
                        "97 to run x 186 s = 5.0 h")  # 97 x 186 s = 5.01 h
    assert not any("no measured speed ratio" in line for line in lines)


def test_a_gpu_check_speedup_scales_the_cpu_trials_recorded_here(tmp_path):
    results = tmp_path / "results"
    records(results / "esim.jsonl", "none", [1000.0, 3000.0, 2000.0])  # median 2000 s on a CPU
    write_report(tmp_path, "gpu_check.json", "cuda", {
        "scitail_esim": {"status": "ok", "device_steps_per_second": 50.0, "cpu_steps_per_second": 10.0},  # 5x
        "scitail_dgem": {"status": "failed", "error": "RuntimeError: boom"},
    })
    lines = cost_lines("scitail", scitail_families(), {"esim": 100, "dgem": 100}, {"esim": list(range(3, 100)), "dgem": list(range(100))},
                       results, [], reports=tmp_path)
    measured = [line for line in lines if "measured:" in line]
    assert measured == [f"    measured: NVIDIA H100 80GB HBM3 trains scitail_esim 5x as many steps per second as one CPU "
                        f"thread ({tmp_path / 'gpu_check.json'}, generated data); its 3 CPU trials here (median 2000 s) "
                        "scale to about 400 s on it: 97 to run = 10.8 h"]  # 97 x 400 s = 10.78 h


def test_a_report_made_on_the_cpu_measures_no_gpu(tmp_path):
    write_report(tmp_path, "gpu_check.json", "cpu", {"scitail_esim": {"status": "ok", "device_steps_per_second": 9.0,
                                                                       "cpu_steps_per_second": 9.0}})
    assert gpu_reports(tmp_path) == ({}, [f"{tmp_path / 'gpu_check.json'} was made on x86_64, not a GPU"])
    lines = cost_lines("scitail", scitail_families(), {"esim": 10, "dgem": 10}, {"esim": list(range(10)), "dgem": list(range(10))},
                       tmp_path / "results", [], reports=tmp_path)
    assert lines[-1].startswith("  no measured speed ratio (no ") and "was made on x86_64, not a GPU" in lines[-1]


@pytest.mark.parametrize("content, key", [
    ("{not json", "<file>"),
    (json.dumps({"device": "cuda"}), "families"),
    (json.dumps({"device": "cuda", "families": {"scitail_esim": {"status": "ok", "device_steps_per_second": 5,
                                                                  "cpu_steps_per_second": 0}}}),
     "families.scitail_esim.cpu_steps_per_second"),
])
def test_a_malformed_report_is_named_with_its_key(tmp_path, content, key):
    (tmp_path / "gpu_check_h100.json").write_text(content)
    with pytest.raises(ConfigError) as err:
        gpu_reports(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / 'gpu_check_h100.json'}: {key}: ")


def test_a_suite_variant_says_whose_paper_time_it_uses():
    variant = load_family("scitail_esim_as_run", name="esim")
    lines = cost_lines("s", [variant], {"esim": 4}, {"esim": list(range(4))}, Path("/nonexistent"), [], reports=Path("/nonexistent"))
    assert lines[1] == ("  esim: 4 trials x 372 s = 0.4 h on GeForce GTX 1080 GPU "
                        "(the paper's time for scitail_esim.yaml, which this file varies)")


def test_a_bad_paper_time_is_named(tmp_path, monkeypatch):
    import syw.experiments.cost as cost

    (tmp_path / "esim_bad.yaml").write_text("inherits: scitail_esim\nreported: {training_duration_seconds: -1}\n")
    bad = load_family("esim_bad", name="esim", dirs=[tmp_path])
    monkeypatch.setattr(cost, "of_the_paper", lambda family: True)  # as if the file were one of the suite's
    with pytest.raises(ConfigError, match=r"esim_bad.yaml: reported.training_duration_seconds: must be a positive"):
        cost_lines("s", [bad], {"esim": 4}, {"esim": list(range(4))}, tmp_path / "results", [tmp_path], reports=tmp_path)


def test_a_variant_of_yours_gets_no_paper_time_but_its_own_trials_mean(tmp_path):
    """A file outside conf/search_space that inherits a paper family (fewer epochs, say) is no family of the paper."""
    (tmp_path / "esim_1_epoch.yaml").write_text("inherits: scitail_esim\nfixed: {epochs: 1}\n")
    variant = load_family("esim_1_epoch", name="esim", dirs=[tmp_path])
    lines = cost_lines("s", [variant], {"esim": 6}, {"esim": list(range(6))}, tmp_path / "results", [tmp_path], reports=tmp_path)
    assert lines[1:] == [f"  esim: 6 trials; no estimate: no finished trials of this family yet ({tmp_path / 'esim_1_epoch.yaml'} "
                         "is not a family of the paper, so the paper's per-trial time does not apply; a dry run after some "
                         "trials estimates from them)"]
    assert lines[0].startswith("\nCost of s (") and "372" not in "".join(lines)
    records(tmp_path / "results" / "esim.jsonl", "none", [2.0, 4.0, 9.0])  # mean 5 s on a CPU
    records(tmp_path / "results" / "esim.jsonl", "NVIDIA H200", [1.0])
    with (tmp_path / "results" / "esim.jsonl").open("a") as out:  # a failed trial's time is no finished trial's
        out.write(json.dumps({"trial": 4, "status": "failed", "value": None, "params": {}, "duration_seconds": 500.0,
                              "hardware": {"gpu": "none"}}) + "\n")
    lines = cost_lines("s", [variant], {"esim": 6}, {"esim": [4, 5]}, tmp_path / "results", [tmp_path], reports=tmp_path)
    assert lines[1:] == [f"  esim: 6 trials (2 to run); from its own finished trials here ({tmp_path / 'esim_1_epoch.yaml'} "
                         "is not a family of the paper):",
                         "    1 trials on NVIDIA H200, mean 1 s: 2 to run x 1 s = 2 s",
                         "    3 trials on a CPU, mean 5 s: 2 to run x 5 s = 10 s"]


@pytest.mark.parametrize(("ratio", "shown"), [(101.3, "100x"), (66.46, "66x"), (5.0, "5x"), (0.456, "0.46x"), (1.0, "1x")])
def test_a_speed_ratio_has_two_significant_digits_and_no_exponent(ratio, shown):
    assert times(ratio) == shown


def test_without_a_paper_time_there_are_no_hours_to_give(tmp_path):
    lines = cost_lines("ptb_melis", [load_family("ptb_lstm", name="lstm")], {"lstm": 1500}, {"lstm": list(range(1500))},
                       tmp_path / "results", [], reports=tmp_path)
    assert lines[1:] == ["  lstm: 1500 trials; the paper reports no training time for ptb_lstm.yaml",
                         f"  no measured speed ratio (no {tmp_path / '*.json'} report from a CUDA device; no trial of them has run "
                         "on a GPU here): no hours to give: the paper reports no training time"]
