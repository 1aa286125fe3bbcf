"""Starting a local Ray: Ray's default connect retries against the runner's ``LOCAL_RAY_SYSTEM_CONFIG``.

    python -m benchmarks.ray_start [--starts 10]      # (or: make bench-ray-start)

Each start is a fresh process, as every study command is; the two settings alternate so both
see the same machine noise. For each start it prints the seconds in ``ray.init`` (the runner's
``start_ray``, Ray already imported) and the gap in the raylet's log between its object store
starting and its object manager listening, the step the connect retries govern.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from syw.core.entry import run_main

REPO = Path(__file__).resolve().parent.parent

# One start: prints the seconds in start_ray, the store gap, and the system config the GCS was
# started with (it hands it to the raylet). tests/experiments/test_runner_ray.py runs it too.
ONE_START = """
import base64, json, sys, time
from datetime import datetime
import ray
from syw.experiments import cluster
if sys.argv[1] == "ray-defaults":
    cluster.LOCAL_RAY_SYSTEM_CONFIG = None
start = time.perf_counter()
cluster.start_ray("local", 0)
seconds = time.perf_counter() - start
node = ray._private.worker._global_node
gcs = open(f"/proc/{node.all_processes['gcs_server'][0].process.pid}/cmdline").read().split("\\0")
config = json.loads(base64.b64decode(next(a for a in gcs if a.startswith("--config_list="))[len("--config_list="):]))
log = node.get_session_dir_path() + "/logs/raylet.out"
cluster.stop_ray()
def when(text):
    line = next(l for l in open(log) if text in l)
    return datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").timestamp()
gap = when("ObjectManager server started") - when("Plasma store debug dump")
print(json.dumps({"init": seconds, "store_gap": gap, "config": config}))
"""


def one_start(setting: str) -> dict:
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", ONE_START, setting], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10, help="starts per setting")
    starts = parser.parse_args(argv).starts
    runs: dict[str, list[dict]] = {"ray-defaults": [], "suite": []}
    for i in range(starts):
        for setting, rows in runs.items():
            rows.append(one_start(setting))
            retry = rows[-1]["config"].get("raylet_client_connect_timeout_milliseconds", 1000)  # Ray's default
            print(f"start {i + 1:2d} {setting:12s} (retry every {retry:4d} ms) ray.init {rows[-1]['init']:5.2f} s  "
                  f"store gap {rows[-1]['store_gap']:5.2f} s", flush=True)
    for setting, rows in runs.items():
        inits = [r["init"] for r in rows]
        late = sum(r["store_gap"] >= 0.5 for r in rows)
        print(f"{setting:12s} ray.init median {statistics.median(inits):.2f} s, mean {statistics.mean(inits):.2f} s, "
              f"range {min(inits):.2f}-{max(inits):.2f} s; store gap >= 0.5 s in {late} of {len(rows)} starts")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
