"""Runner overhead: a 20-trial toy study whose trials busy one core for 2 s each, 2 at a time.

    python -m benchmarks.runner_overhead      # (or: make bench-runner)

Prints the wall time of the whole command, Ray start-up (ray.init and Tune's
start until the first trial begins), the study itself (first trial start to
last trial end) against 20 x 2 s of sequential work, and the runner's overhead
per trial: (study wall x concurrency - sum of trial durations) / trials.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from syw.core.entry import run_main

REPO = Path(__file__).resolve().parent.parent
TRIALS, SECONDS, CONCURRENCY = 20, 2.0, 2


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="syw-bench-"))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "syw", "run", "study=toy", "study.families={toy: toy_busy}",
           f"trials={TRIALS}", "resources.cpus_per_trial=1", f"paths.results_dir={out}", "ray.address=local"]
    t0 = time.time()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    if done.returncode:
        sys.exit(done.stderr)
    rows = [json.loads(l) for l in (out / "toy" / "toy.jsonl").read_text().splitlines()]
    start = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in rows)
    end = max(datetime.fromisoformat(r["ended_at"]).timestamp() for r in rows)
    busy = sum(r["duration_seconds"] for r in rows)
    study = end - start
    sequential = TRIALS * SECONDS
    print(f"command wall time            {wall:6.1f} s")
    print(f"Ray + Tune start-up          {start - t0:6.1f} s (process start to first trial start)")
    print(f"study (first start..last end){study:6.1f} s for {TRIALS} trials x {SECONDS:g} s, {CONCURRENCY} at a time")
    print(f"sequential work              {sequential:6.1f} s")
    print(f"study / sequential           {study / sequential:6.3f}  (bar: <= 0.6)")
    print(f"runner overhead per trial    {(study * CONCURRENCY - busy) / TRIALS:6.3f} s  (bar: < 0.2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
