"""The suite's 50-trial LR study (Table 3) against a plain sequential loop over the same 50 assignments.

    SYW_DATA_DIR=/path/to/data python -m benchmarks.lr_study      # (or: make bench-lr)
    SYW_DATA_DIR=/path/to/data python -m benchmarks.lr_study --ray-address auto   # on a running Ray

The loop reads SST once, then for every assignment does what the authors' scikit-learn
script does: fit the vectorizer on train + dev text, transform train and dev, fit the
classifier and score it, from scratch, one after another. The suite is `syw run study=sst5 family=lr` with an empty
cache folder, which runs two trials at a time and tokenizes the texts twice (the n-gram
counts with and without stop words, shared across trials and worker processes); each
setting's features are a column subset and re-weighting of those, identical to a fresh
vectorizer's. Same machine, one run; the suite's time
is given with and without Ray's start-up (process start to first trial start) and
its tear-down (last trial end to process exit). Last, the floor: the 50 liblinear
fits alone on the suite's cached features, one after another and split over two
single-threaded processes (as the suite's two trial slots run them), and each trial's
time in the suite against its fit alone in that split run. Every run so far, with its commit and
machine: benchmarks/lr_study_runs.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path

from syw.core.entry import run_main
from syw.data.sst import read_sst
from syw.experiments.space import load_family, trial_seed
from syw.models.logistic_regression import load_features, make_classifier, make_vectorizer
from syw.models.tasks.sentence import dataset_key, load_texts

REPO = Path(__file__).resolve().parent.parent

SST5 = dataset_key({"name": "sst", "granularity": "fine", "subtrees": False})

TRIALS = 50


def trial_classifier(p: dict, i: int):
    """Trial ``i``'s unfitted classifier (assignment ``p``), seeded as the suite seeds it."""
    return make_classifier(p["penalty"], p["C"], p["tol"], p["max_iter"], p["solver"], trial_seed(0, "lr", i))


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
        clf = trial_classifier(p, i)
        clf.fit(vectorizer.transform(train_text), y_train)
        scores.append(clf.score(vectorizer.transform(dev_text), y_dev))
    return time.perf_counter() - start, scores


def suite(data_dir: Path, ray_address: str | None) -> tuple[float, float, float, list[dict], Path]:
    import json

    out = Path(tempfile.mkdtemp(prefix="syw-bench-lr-"))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "syw", "run", "study=sst5", "family=lr", f"trials={TRIALS}",
                    f"paths.data_dir={data_dir}", f"paths.results_dir={out}", f"paths.cache_dir={out / 'cache'}",
                    f"ray.address={ray_address or 'local'}"],  # local: a new Ray even if one is running
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    rows = sorted((json.loads(l) for l in (out / "sst5" / "lr.jsonl").read_text().splitlines()), key=lambda r: r["trial"])
    first = min(datetime.fromisoformat(r["started_at"]).timestamp() for r in rows)
    last = max(datetime.fromisoformat(r["ended_at"]).timestamp() for r in rows)
    return wall, first - t0, t0 + wall - last, rows, out / "cache"


def fit_trials(data_dir: Path, cache_dir: Path, trials: range) -> dict[int, float]:
    """Seconds to fit and score each of ``trials`` on features already in ``cache_dir`` (features loaded first, not timed)."""
    family = load_family("sst5_lr", name="lr")
    _, y_train, _, y_dev = load_texts(data_dir, SST5)
    work = []
    for i in trials:
        p = family.params(0, i)
        x_train, x_dev = load_features(data_dir, SST5, tuple(p["ngram_range"]), p["stopwords"], p["weight"], cache_dir)
        work.append((i, trial_classifier(p, i), x_train, x_dev))
    seconds = {}
    for i, clf, x_train, x_dev in work:
        start = time.perf_counter()
        clf.fit(x_train, y_train)
        clf.score(x_dev, y_dev)
        seconds[i] = time.perf_counter() - start
    return seconds


def fits_floor(data_dir: Path, cache_dir: Path) -> tuple[float, float, dict[int, float]]:
    """The 50 fits in one process, then split over two at once (one thread each, as Ray's trial workers run);
    also each fit's seconds in the split run."""
    os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")  # read by the new processes
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as one:
        sequential = sum(one.submit(fit_trials, data_dir, cache_dir, range(TRIALS)).result().values())
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as two:
        futures = [two.submit(fit_trials, data_dir, cache_dir, range(k, TRIALS, 2)) for k in (0, 1)]
        halves = [f.result() for f in futures]
    parallel = max(sum(h.values()) for h in halves)  # each half's fits start once its features are loaded
    return sequential, parallel, {**halves[0], **halves[1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ray-address", help="run the suite on this running Ray (e.g. auto after `ray start --head "
                        "--node-ip-address=127.0.0.1`) instead of the Ray it starts and stops itself")
    args = parser.parse_args(argv)
    data_dir = Path(os.environ.get("SYW_DATA_DIR", REPO / ".data"))
    loop_wall, loop_scores = plain_loop(data_dir)
    suite_wall, startup, teardown, suite_rows, cache_dir = suite(data_dir, args.ray_address)
    suite_scores = [r["value"] for r in suite_rows]
    if args.ray_address:
        print(f"(the suite ran on the Ray at {args.ray_address}, started before the benchmark: no Ray start-up or shut-down)")
    same = max(abs(a - b) for a, b in zip(loop_scores, suite_scores))
    print(f"plain sequential loop   {loop_wall:7.1f} s for {TRIALS} trials")
    print(f"suite, whole command    {suite_wall:7.1f} s   suite / loop {suite_wall / loop_wall:.3f}  (bar: <= 0.333)")
    print(f"suite without start-up  {suite_wall - startup:7.1f} s   suite / loop {(suite_wall - startup) / loop_wall:.3f}"
          f"  (Ray + Tune start-up {startup:.1f} s)")
    print(f"suite's trials          {suite_wall - startup - teardown:7.1f} s   (tear-down, last trial end to exit: {teardown:.1f} s)")
    print(f"largest accuracy difference between the two: {same:.2e} (same assignments, same results)")
    sequential, parallel, alone = fits_floor(data_dir, cache_dir)
    print(f"the {TRIALS} liblinear fits alone: {sequential:.1f} s one after another, {parallel:.1f} s split over two "
          f"processes ({sequential / parallel:.2f}x from the second core)")
    in_suite = {r["trial"]: r["duration_seconds"] for r in suite_rows}
    firsts = [r["trial"] for r in sorted(suite_rows, key=lambda r: r["started_at"])[:2]]  # one per worker
    rest = [in_suite[i] / alone[i] for i in in_suite if i not in firsts]
    print(f"trial times in the suite {sum(in_suite.values()):.1f} s summed, the same fits alone {sum(alone.values()):.1f} s "
          f"(split run): each worker's first trial {sum(in_suite[i] - alone[i] for i in firsts) / len(firsts):.1f} s more "
          f"(importing scikit-learn, reading SST, counting n-grams), the other {len(rest)} a median "
          f"{statistics.median(rest):.2f}x their fit alone")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
