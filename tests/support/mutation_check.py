"""Deliberate one-line bugs the tests must catch.

Each mutation below changes one line of the committed code (HEAD, unpacked into a temporary folder),
runs only the tests that cover it (nice -n 19) and counts as caught when they fail. The covering
tests first run once on the unchanged copy, where they must pass without a skip (the authors' files
are looked for in $SYW_DATA_DIR, else ../shared/data beside the checkout, as CI does).

    .venv/bin/python tests/support/mutation_check.py                          # print the table
    .venv/bin/python tests/support/mutation_check.py --write docs/testing.md  # and write the docs page
    .venv/bin/python tests/support/mutation_check.py --only esim-train-renamed

Exit status 1 when a mutation survives or a run cannot be judged.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 3600  # seconds for one pytest run; at nice 19 on a busy machine runs take many times their CPU time


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (found exactly once in ``path``) with ``new``; ``tests`` are pytest's arguments."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    bug: str


MUTATIONS = [
    Mutation("shading-2sd-unclipped", "figures/plot.py",
             "low, high = np.clip(mean - sd, scores.min(), scores.max()), np.clip(mean + sd, scores.min(), scores.max())",
             "low, high = mean - 2 * sd, mean + 2 * sd",
             ("tests/figures/test_figures_drawn.py",), "figures shade ±2 SD, not clipped to the observed scores"),
    Mutation("esim-train-renamed", "models/esim.py", "def train(", "def train_renamed(",
             ("tests/experiments/test_runner_config.py::test_dry_run_every_study[scitail]",
              "tests/core/test_contract.py::test_family_contract[scitail_esim]"),
             "ESIM's training function renamed: the family files name a function that is not there"),
    Mutation("train-model-unseeded", "models/trainer.py",
             "    seed_everything(seed)\n    model = build().to(device)", "    model = build().to(device)",
             ("tests/models/test_trainer.py",), "train_model builds the model without seeding: initial weights vary"),
    Mutation("sd-is-variance", "analysis/expected_max.py",
             "return (mean if maximize else -mean), np.sqrt(np.maximum(var, 0.0))",
             "return (mean if maximize else -mean), np.maximum(var, 0.0)",
             ("tests/analysis/test_expected_max_brute_force.py",), "the spread of the best of n is its variance, not its SD"),
    Mutation("unbiased-weights-off-by-one", "analysis/expected_max.py",
             "ratios[1:] = np.clip((idx[:-1] - n) / (idx[:-1] - 1), 0.0, None)",
             "ratios[1:] = np.clip((idx[:-1] - n + 1) / (idx[:-1] - 1), 0.0, None)",
             ("tests/analysis/test_expected_max_brute_force.py",), "the unbiased estimator's weights C(i-1, n-1) shifted by one"),
    Mutation("budget-off-by-one", "analysis/budget.py",
             "return int(hits[0]) + 1 if hits.size else None", "return int(hits[0]) if hits.size else None",
             ("tests/analysis/test_budget.py", "tests/figures/test_paper_numbers.py"), "the budget to reach a target is one trial short"),
    Mutation("target-import-unchecked", "experiments/checks.py",
             "    if not defined_in_source(family.train_target):", "    if False:",
             ("tests/core/test_contract.py", "tests/experiments/test_runner_config.py", "-k", "cannot_be_imported"),
             "a _target_ that cannot be imported is not caught before the trials (issue 35, item 5)"),
    Mutation("trial-draws-ignore-family", "experiments/space.py",
             "return np.random.default_rng([int(seed), zlib.crc32(family.encode()), int(index)])",
             "return np.random.default_rng([int(seed), int(index)])",
             ("tests/experiments/test_space.py",), "every family of a study draws the same assignments"),
    Mutation("clamp-is-norm-clip", "models/trainer.py",
             "nn.utils.clip_grad_value_(model.parameters(), grad_clipping)",
             "nn.utils.clip_grad_norm_(model.parameters(), grad_clipping)",
             ("tests/models/test_models_scitail.py", "-k", "clamps"), "DAM's gradient clamp (Table 7) rescales the norm instead"),
    Mutation("dgem-edges-always", "models/dgem.py", "        if not self.ignore_edges:", "        if True:",
             ("tests/models/test_models_scitail.py", "-k", "dgem_logits"), "DGEM's ignore_edges ablation keeps the edge term"),
    Mutation("sst2-label-3-negative", "data/sst.py",
             "return None if label == 2 else int(label > 2)", "return None if label == 2 else int(label > 3)",
             ("tests/data/test_data_sst.py",), "binary SST maps 'somewhat positive' (3) to negative"),
    Mutation("time-axis-median", "figures/sources.py",
             "return None if self.durations is None else float(np.mean(self.durations))",
             "return None if self.durations is None else float(np.median(self.durations))",
             ("tests/figures/test_figures_drawn.py", "tests/figures/test_paper_numbers.py"),
             "time axes scale n by the median trial duration, not the mean (section 4.3)"),
    Mutation("authors-files-not-in-data-dir", "figures/sources.py",
             "        path = shared_paper_file(paper) or path\n", "",
             ("tests/figures/test_figures.py", "-k", "data_folders", "tests/figures/test_paper_numbers.py"),
             "the authors' files in $SYW_DATA_DIR/authors_trials/ are not found (CI would need a download)"),
]


def data_dir() -> str | None:
    """$SYW_DATA_DIR, else ../shared/data beside the checkout when it exists (.ci/run's rule)."""
    shared = REPO.parent / "shared" / "data"
    return os.environ.get("SYW_DATA_DIR") or (str(shared) if shared.is_dir() else None)


def unpack_head(dest: Path) -> str:
    """The committed tree of HEAD in ``dest``; return the commit."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def pytest(copy: Path, args: tuple[str, ...], env: dict[str, str], stop_early: bool) -> tuple[int, str, float]:
    """Run pytest on ``args`` in ``copy``: its status, the tail of its output and the seconds taken."""
    command = ["nice", "-n", "19", sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
               *(["-x"] if stop_early else []), *args]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return -1, f"stopped after {TIMEOUT} s", time.perf_counter() - started
    return done.returncode, (done.stdout + done.stderr)[-3000:], time.perf_counter() - started


def stale(copy: Path, mutations: list[Mutation]) -> list[str]:
    """A line per mutation whose text does not occur exactly once in its file (the code has moved on)."""
    out = []
    for m in mutations:
        path = copy / m.path
        found = path.read_text().count(m.old) if path.is_file() else 0
        if found != 1:
            out.append(f"{__file__}: MUTATIONS {m.name!r}: its text occurs {found} times in {m.path} (must be once)")
    return out


def mutate(copy: Path, mutation: Mutation) -> str:
    """Apply ``mutation`` in ``copy``; return the file's original text."""
    path = copy / mutation.path
    text = path.read_text()
    path.write_text(text.replace(mutation.old, mutation.new))
    return text


def check(mutations: list[Mutation], copy: Path, env: dict[str, str]) -> list[dict]:
    """Baseline and mutated run of each mutation's tests; one result row per mutation."""
    rows = []
    for m in mutations:
        status, tail, seconds = pytest(copy, m.tests, env, stop_early=False)
        if status != 0 or "SKIPPED" in tail:
            rows.append({"mutation": m, "result": "error: its tests fail or skip unchanged", "seconds": seconds, "tail": tail})
            continue
        original = mutate(copy, m)
        try:
            status, tail, mutated_seconds = pytest(copy, m.tests, env, stop_early=True)
        finally:
            (copy / m.path).write_text(original)
        result = {0: "SURVIVED", 1: "caught", -1: "error: timed out"}.get(status, f"error: pytest exit status {status}")
        rows.append({"mutation": m, "result": result, "seconds": seconds + mutated_seconds, "tail": tail})
        print(f"{m.name}: {result} ({seconds + mutated_seconds:.0f} s)", flush=True)
    return rows


def shown(text: str) -> str:
    return "`" + " ".join(text.split()).replace("|", "\\|") + "`" if text.strip() else "(line removed)"


def table(rows: list[dict]) -> str:
    lines = ["| mutation | file | from | to | the bug | tests run | result | seconds |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        m = row["mutation"]
        lines.append(f"| {m.name} | `{m.path}` | {shown(m.old)} | {shown(m.new)} | {m.bug} | "
                     f"`{' '.join(m.tests)}` | {row['result']} | {row['seconds']:.0f} |")
    return "\n".join(lines)


PAGE = """# Testing

`make test` runs pytest over `tests/`. The markers (`pyproject.toml`): `slow` and `ray` run by default;
`realdata` tests read the files under `SYW_DATA_DIR` that each names and are skipped without them;
`paperdata` tests read the authors' published trial files (one per figure), found in `$SYW_DATA_DIR/authors_trials/`
(CI: `.ci/run` sets `SYW_DATA_DIR=../shared/data`) or in `results/paper/`, checked by sha256 before use.

What the tests compare with comes from outside the code under test: the paper's text and Tables 2-11
(`tests/figures/test_paper_numbers.py`), the authors' rows read with the csv module and Eq. 8 written from its
definition (`tests/support/oracle.py`), which `tests/analysis/test_expected_max_brute_force.py` checks by enumerating all
N^n draws and all C(N, n) subsets. The figures are tested on what they draw (`tests/figures/test_figures_drawn.py`):
each curve's points, the clipped ±1 SD shading, the reported numbers and targets, the axes and the legend.

## Mutations the tests catch

`tests/support/mutation_check.py` makes each one-line bug below in a copy of the committed code (commit
{commit}) and runs only the tests that cover it, which must pass unchanged and fail with the bug.
Generated by `.venv/bin/python tests/support/mutation_check.py --write docs/testing.md`{data}: {caught} of
{total} caught, {minutes:.0f} min in all on this machine (shared with other jobs, at nice 19).

{table}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=[m.name for m in MUTATIONS], help="these mutations only")
    parser.add_argument("--write", type=Path, help="write the docs page (docs/testing.md) with the table")
    args = parser.parse_args(argv)
    mutations = [m for m in MUTATIONS if not args.only or m.name in args.only]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="syw-mutations-") as folder:
        copy = Path(folder)
        commit = unpack_head(copy)
        env = {**os.environ, "PYTHONPATH": str(copy), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        if data_dir():
            env["SYW_DATA_DIR"] = data_dir()
        problems = stale(copy, mutations)
        if problems:
            print("\n".join(f"error: {line}" for line in problems), file=sys.stderr)
            return 2
        rows = check(mutations, copy, env)
    for row in rows:
        if row["result"] != "caught":
            print(f"\n--- {row['mutation'].name}: {row['result']}\n{row['tail']}", file=sys.stderr)
    text = table(rows)
    print(text)
    caught = sum(row["result"] == "caught" for row in rows)
    if args.write:
        where = f" with `SYW_DATA_DIR={os.path.relpath(data_dir(), REPO)}`" if data_dir() else ""
        args.write.write_text(PAGE.format(commit=commit, data=where, caught=caught, total=len(rows),
                                          minutes=(time.perf_counter() - started) / 60, table=text))
        print(f"wrote {args.write}")
    return 0 if caught == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
