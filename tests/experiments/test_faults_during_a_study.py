"""Faults that arrive while a study runs, through the runner on a local Ray: a data file changed or
deleted after the first record stops the study naming the file, and no record names a version of it
its trial did not read; a disk that fills up leaves only complete lines, announces no record it did not
write, and ends with one error line, exit 2 (the file system is a tmpfs in a mount namespace of the
runner's own, gone with it)."""
import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.experiments.mounts import needs_mounts
from tests.support.runner_util import REPO, records, runner_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def toy_reading(tmp_path: Path, data_file: Path, trials: int) -> list[str]:
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "toy_data.yaml").write_text(f"inherits: toy\nfixed: {{data_file: {data_file}, work_seconds: 1.5}}\n")
    return ["study=toy", f"paths.family_dirs=[{tmp_path / 'fam'}]", "study.families={toy: toy_data}", f"trials={trials}",
            f"paths.results_dir={tmp_path / 'results'}"]


def run_until_first_record(overrides: list[str], path: Path, then) -> subprocess.CompletedProcess:
    """The runner with ``overrides``; once ``path`` holds a record, ``then()``; its outcome when it ends."""
    proc = subprocess.Popen([sys.executable, "-m", "syw", "run", *overrides], cwd=REPO, env=runner_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (path.exists() and path.read_text().strip()) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        then()
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def one_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    return errors[0]


def test_a_data_file_changed_after_the_first_record_stops_the_study(tmp_path):
    data_file = tmp_path / "toy_data.txt"
    data_file.write_text("the first version\n")
    first = hashlib.sha256(data_file.read_bytes()).hexdigest()
    path = tmp_path / "results" / "toy" / "toy.jsonl"
    done = run_until_first_record(toy_reading(tmp_path, data_file, 10), path,
                                  lambda: data_file.write_text("the first version\nand a line more\n"))
    line = one_error(done)
    assert str(data_file) in line and "changed" in line, line
    rows = records(path)
    assert 1 <= len(rows) < 10 and all(r["inputs_sha256"] == {str(data_file): first} for r in rows)
    assert "stopping the study (no record written)" in done.stdout


def test_a_data_file_deleted_after_the_first_record_stops_the_study(tmp_path):
    data_file = tmp_path / "toy_data.txt"
    data_file.write_text("the only version\n")
    first = hashlib.sha256(data_file.read_bytes()).hexdigest()
    path = tmp_path / "results" / "toy" / "toy.jsonl"
    done = run_until_first_record(toy_reading(tmp_path, data_file, 10), path, data_file.unlink)
    line = one_error(done)
    assert line.startswith(f"error: {data_file}") and ("gone since" in line or "is missing" in line), line
    rows = records(path)
    assert 1 <= len(rows) < 10 and all(r["inputs_sha256"] == {str(data_file): first} for r in rows)


FILL_AFTER_FIRST_RECORD = """
mount -t tmpfs -o size=4m tmpfs "$RESULTS"
"$@" > "$OUT/stdout" 2> "$OUT/stderr" &
runner=$!
while [ ! -s "$RESULTS/toy/toy.jsonl" ] && kill -0 $runner 2>/dev/null; do sleep 0.1; done
dd if=/dev/zero of="$RESULTS/filler" bs=4096 2>/dev/null || true
rc=0; wait $runner || rc=$?
echo $rc > "$OUT/rc"
cp "$RESULTS/toy/toy.jsonl" "$OUT/toy.jsonl"
"""


@needs_mounts
def test_a_disk_that_fills_up_leaves_complete_lines_and_one_error(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    out.mkdir()
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "toy_slow.yaml").write_text("inherits: toy\nfixed: {work_seconds: 1.5}\n")
    runner = [sys.executable, "-m", "syw", "run", "study=toy", f"paths.family_dirs=[{tmp_path / 'fam'}]",
              "study.families={toy: toy_slow}", "trials=12", f"paths.results_dir={results}"]
    subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", FILL_AFTER_FIRST_RECORD, "sh", *runner],
                   cwd=REPO, env=runner_env(RESULTS=str(results), OUT=str(out)), timeout=600, check=True)
    done = subprocess.CompletedProcess(runner, int((out / "rc").read_text()), (out / "stdout").read_text(),
                                       (out / "stderr").read_text())
    line = one_error(done)
    assert "No space left on device" in line, line
    text = (out / "toy.jsonl").read_text()
    assert text.endswith("\n")
    rows = [json.loads(row) for row in text.splitlines()]  # every line complete
    announced = [row for row in done.stdout.splitlines() if " recorded; this run: " in row]
    assert 1 <= len(rows) < 12 and len(announced) == len(rows), done.stdout
    assert "not recorded: the records file took none of it; stopping the study" in done.stdout
