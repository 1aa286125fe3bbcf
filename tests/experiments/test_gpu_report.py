"""The committed GPU check table is what the committed reports say (regenerating changes nothing)."""
import json
from pathlib import Path

from syw.experiments import gpu_report

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_table_is_regenerated_unchanged():
    assert (gpu_report.REPORTS / "README.md").read_text() == gpu_report.render()


def test_a_deterministic_twin_gives_the_ratio_of_the_two_rates(tmp_path, monkeypatch):
    family = {"status": "ok", "device_steps_per_second": 40.0, "cpu_steps_per_second": 4.0, "speedup": 10.0}
    report = {"device_name": "GPU X", "torch": "2", "cuda": "13", "python": "3.12", "families": {"a": family}}
    (tmp_path / "deterministic").mkdir()
    (tmp_path / "x.json").write_text(json.dumps(report))
    twin = {**report, "families": {"a": {**family, "device_steps_per_second": 30.0}}}
    (tmp_path / "deterministic" / "x.json").write_text(json.dumps(twin))
    lines = gpu_report.device_table(tmp_path / "x.json")
    assert "| `a` | ok | 40.0 | 4.0 | 10.00x | ok | 30.0 | 0.75 |" in lines
    assert any("median 0.75, range 0.75 to 0.75" in line for line in lines)
