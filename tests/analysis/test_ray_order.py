"""Issue 64, item 5: a Ray Tune experiment run by a searcher is drawn in the order its trials ran (trial index,
start time), never by folder name, which for a searcher starts with a random trial id."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from syw.analysis.curves import adaptive_curve
from syw.curve.prepare import Reading, prepare

pytestmark = [pytest.mark.ray, pytest.mark.slow]

SEARCH_SCRIPT = """
import os, sys, time
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
import ray
from ray import tune
from ray.tune.search.optuna import OptunaSearch

def trainable(config):
    started = time.time()  # when this trial began: the test's own record of the order trials ran in
    scale = 0.5 if config["optimizer"] == "sgd" else 1.0
    for epoch in range(3):
        tune.report({"val_acc": scale * (1 - (config["lr"] - 0.3) ** 2) * (0.9 + 0.05 * epoch), "began": started})

ray.init(address="local", include_dashboard=False, num_cpus=1, log_to_driver=False)
try:
    space = {"lr": tune.uniform(0.0, 1.0), "optimizer": tune.choice(["sgd", "adam"])}
    tune.Tuner(trainable, param_space=space,
               tune_config=tune.TuneConfig(search_alg=OptunaSearch(metric="val_acc", mode="max", seed=0),
                                           num_samples=12, max_concurrent_trials=1),
               run_config=tune.RunConfig(name="exp", storage_path=sys.argv[1], verbose=0)).fit()
finally:
    ray.shutdown()
"""


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray")
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SEARCH_SCRIPT), str(root)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "exp"


def ran_in_order(folder) -> pd.DataFrame:
    """Each trial's best and last val_acc and optimizer from its own result.json, in the order the trials began."""
    rows = []
    for result in folder.glob("*/result.json"):
        reports = [json.loads(line) for line in result.read_text().splitlines() if line.strip()]
        scores = [r["val_acc"] for r in reports]
        rows.append({"began": reports[0]["began"], "best": max(scores), "last": scores[-1],
                     "optimizer": reports[0]["config"]["optimizer"], "folder": result.parent.name})
    return pd.DataFrame(rows).sort_values("began", kind="stable")


@pytest.mark.parametrize("pick", ["best", "last"])
def test_best_so_far_follows_the_order_trials_ran(experiment, pick):
    truth = ran_in_order(experiment)
    assert len(truth) == 12
    assert list(truth.folder) != sorted(truth.folder)  # folder names alone would give the wrong order
    one = prepare(str(experiment), Reading(metric="val_acc", group="none", pick=pick))
    (group,) = one.groups
    assert group.strategy == "Ray Tune OptunaSearch"
    np.testing.assert_array_equal(adaptive_curve(group, True).mean, np.maximum.accumulate(truth[pick].to_numpy()))
    split = prepare(str(experiment), Reading(metric="val_acc", group="config.optimizer", pick=pick))
    for group in split.groups:
        mine = truth[truth.optimizer == group.name][pick].to_numpy()
        np.testing.assert_array_equal(adaptive_curve(group, True).mean, np.maximum.accumulate(mine))
