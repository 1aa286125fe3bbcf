"""The suite's 50-trial LR study (Table 3) against a plain sequential loop over the same 50 assignments.

    SYW_DATA_DIR=/path/to/data python benchmarks/lr_study.py      # (or: make bench-lr)

The loop reads SST once, then for every assignment does what the authors' scikit-learn
script does: fit the vectorizer on train + dev text, transform train and dev, fit the
classifier and score it, from scratch, one after another. The suite is `python -m experiments.run study=sst5 family=lr` with an empty
cache folder, which runs two trials at a time and tokenizes the texts twice (the n-gram
counts with and without stop words, shared across trials and worker processes); each
setting's features are a column subset and re-weighting of those, identical to a fresh
vectorizer's. Same machine, one run; the suite's time
is given with and without Ray's start-up (process start to first trial start).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from data.sst import read_sst  # noqa: E402
from experiments.space import load_family, trial_seed  # noqa: E402
from models.logistic_regression import make_classifier, make_vectorizer  # noqa: E402

TRIALS = 50


def plain_loop(data_dir: Path) -> tuple[float, list[float]]:
    start = time.perf_counter()
    train, dev = read_sst(data_dir, "train", "fine"), read_sst(data_dir, "dev", "fine")
    train_text, dev_text = [" ".join(e.tokens) for e in train], [" ".join(e.tokens) for e in dev]
    y_train, y_dev = [e.label for e in train], [e.label for e in dev]
    family = load_family("sst5_lr", name="lr")
    scores = []
    for i in range(TRIALS):
        p = family.params(0, i)
        vectorizer = make_vectorizer(tuple(p["ngram_range"]), p["stopwords"], p["weight"]).fit(train_text + dev_text)
        clf = make_classifier(p["penalty"], p["C"], p["tol"], p["max_iter"], p["solver"], trial_seed(0, "lr", i))
        clf.fit(vectorizer.transform(train_text), y_train)
        scores.append(clf.score(vectorizer.transform(dev_text), y_dev))
    return time.perf_counter() - start, scores


def suite(data_dir: Path) -> tuple[float, list[float]]:
    import json

    out = Path(tempfile.mkdtemp(prefix="syw-bench-lr-"))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "experiments.run", "study=sst5", "family=lr", f"trials={TRIALS}",
                    f"paths.data_dir={data_dir}", f"paths.results_dir={out}", f"paths.cache_dir={out / 'cache'}"],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    rows = sorted((json.loads(l) for l in (out / "sst5" / "lr.jsonl").read_text().splitlines()), key=lambda r: r["trial"])
    first = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in rows)
    return wall, first - t0, [r["value"] for r in rows]


def main() -> None:
    data_dir = Path(os.environ.get("SYW_DATA_DIR", REPO / ".data"))
    loop_wall, loop_scores = plain_loop(data_dir)
    suite_wall, startup, suite_scores = suite(data_dir)
    same = max(abs(a - b) for a, b in zip(loop_scores, suite_scores))
    print(f"plain sequential loop   {loop_wall:7.1f} s for {TRIALS} trials")
    print(f"suite, whole command    {suite_wall:7.1f} s   suite / loop {suite_wall / loop_wall:.3f}  (bar: <= 0.333)")
    print(f"suite without start-up  {suite_wall - startup:7.1f} s   suite / loop {(suite_wall - startup) / loop_wall:.3f}"
          f"  (Ray + Tune start-up {startup:.1f} s)")
    print(f"largest accuracy difference between the two: {same:.2e} (same assignments, same results)")


if __name__ == "__main__":
    main()
