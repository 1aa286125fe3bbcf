"""The runner end to end on Ray: records, resume after SIGKILL, failed trials, the lock, a Ray cluster."""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchmarks.ray_start import ONE_START
from syw.core.manifest import check
from syw.core.records import RecordsBusy, RecordsWriter, done_indices, iter_records
from syw.experiments.space import load_family
from tests.support.runner_util import REPO, importable_package, records, run, runner_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def slow_toy(folder: Path, seconds: float, fail: list[int] = ()) -> list[str]:
    """Overrides that run the toy study with a family whose trials take ``seconds`` each."""
    folder.mkdir(exist_ok=True)
    (folder / "toy_test.yaml").write_text(f"inherits: toy\nfixed: {{work_seconds: {seconds}, fail_trials: {list(fail)}}}\n")
    return ["study=toy", f"paths.family_dirs=[{folder}]", "study.families={toy: toy_test}"]


def test_toy_study_end_to_end_with_a_failed_trial(tmp_path):
    out = tmp_path / "results"
    done = run(*slow_toy(tmp_path / "fam", 0.0, fail=[3]), "trials=8", f"paths.results_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = records(out / "toy" / "toy.jsonl")
    assert sorted(r["trial"] for r in rows) == list(range(8))
    failed = [r for r in rows if r["status"] == "failed"]
    assert [r["trial"] for r in failed] == [3] and "NaN" in failed[0]["error"]
    family = load_family("toy_test", name="toy", dirs=[tmp_path / "fam"])
    for r in rows:  # the recorded assignment is the one derived from (seed, family, index)
        assert r["params"] == family.params(0, r["trial"])
        assert r["study"] == "toy" and r["seed"] == 0 and r["metric"] == "score"
        assert r["hardware"]["gpu"] == "none" and r["versions"]["torch"] and r["versions"]["suite_commit"]
        assert r["duration_seconds"] >= 0 and r["started_at"] <= r["ended_at"]
    assert all(isinstance(r["value"], float) for r in rows if r["status"] == "ok")
    # one progress line per trial, and Ray's own tables stay quiet
    progress = [l for l in done.stdout.splitlines() if l.startswith("[toy/toy] trial")]
    assert len(progress) == 8 and "8 of 8 recorded; this run: 0 left" in progress[-1] and "Trial name" not in done.stdout
    # a second run has nothing to do
    again = run(*slow_toy(tmp_path / "fam", 0.0, fail=[3]), "trials=8", f"paths.results_dir={out}")
    assert again.returncode == 0 and "nothing to run" in again.stdout


def toy_reading(data_file: Path, tmp_path: Path, trials: int) -> list[str]:
    """Overrides that run the toy study with a family whose trials read ``data_file``."""
    fam = tmp_path / "fam"
    fam.mkdir()
    (fam / "toy_data.yaml").write_text(f"inherits: toy\nfixed: {{data_file: {data_file}}}\n")
    return ["study=toy", f"paths.family_dirs=[{fam}]", "study.families={toy: toy_data}", f"trials={trials}",
            f"paths.results_dir={tmp_path / 'results'}"]


@pytest.mark.parametrize("content, message", [
    (None, "{data_file} is missing: put the toy data file there"),
    ("", "{data_file}:1: the toy data file is empty"),  # there, but the reader rejects it
])
def test_missing_data_stops_the_study_and_records_nothing(tmp_path, content, message):
    data_file = tmp_path / "toy_data.txt"
    if content is not None:
        data_file.write_text(content)
    overrides = toy_reading(data_file, tmp_path, trials=6)
    done = run(*overrides)
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == "error: " + message.format(data_file=data_file)
    assert "stopping the study (no record written)" in done.stdout
    assert not list(iter_records(tmp_path / "results" / "toy" / "toy.jsonl"))  # nothing counts as done
    data_file.write_text("here now\n")
    again = run(*overrides)
    assert again.returncode == 0, again.stderr[-3000:]
    rows = records(tmp_path / "results" / "toy" / "toy.jsonl")
    assert sorted(r["trial"] for r in rows) == list(range(6)) and {r["status"] for r in rows} == {"ok"}


def test_local_ray_stays_on_loopback_without_the_variable(tmp_path):
    """Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when imported; the runner sets it first, so a user
    who never heard of it still gets a Ray on 127.0.0.1 (without it, Ray binds the external address)."""
    env = runner_env()
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    done = run(*slow_toy(tmp_path / "fam", 0.0), "trials=1", f"paths.results_dir={tmp_path / 'results'}", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    ready = next(l for l in done.stdout.splitlines() if "Ray ready" in l)
    assert "(cluster 127.0.0.1:" in ready and ready.endswith("this node 127.0.0.1; a new local Ray)"), ready


STOP_LOCAL_RAY = """
import json
from ray._private.node import Node
from syw.experiments.cluster import start_ray, stop_ray
import ray
start_ray("local", 0)
node = ray._private.worker._global_node
monitor = node.all_processes["monitor"][0].process
gcs = node.all_processes["gcs_server"][0].process
killed, kill = [], Node._kill_process_type
def spy(self, process_type, *args, **kwargs):  # which process is killed, and whether the GCS still ran then
    killed.append([process_type, gcs.poll() is None, kwargs.get("allow_graceful", False)])
    return kill(self, process_type, *args, **kwargs)
Node._kill_process_type = spy
stop_ray()
print(json.dumps({"killed": killed, "monitor": [monitor.pid, monitor.poll()]}))
"""


def test_stopping_a_local_ray_kills_its_monitor_before_the_gcs():
    """Plain ray.shutdown() stops the GCS first and then SIGTERMs the autoscaler monitor, whose handler
    waits on the dead GCS until Ray kills it a second later; stop_ray kills the monitor first, while the
    GCS still runs, at once (SIGKILL), and Ray's shutdown then has no monitor left to wait on."""
    done = subprocess.run([sys.executable, "-c", STOP_LOCAL_RAY], cwd=REPO, env=runner_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    kinds = [kind for kind, _, _ in seen["killed"]]
    assert seen["killed"][0] == ["monitor", True, False] and kinds.count("monitor") == 1, seen
    assert "gcs_server" in kinds[1:], seen
    pid, status = seen["monitor"]
    assert status == -signal.SIGKILL and not Path(f"/proc/{pid}").exists()


def test_local_ray_retries_connects_every_tenth_of_a_second():
    """The GCS, which hands the raylet its config, gets the runner's connect retries (Ray's default:
    a whole second between tries, which a start here missed about 1 time in 3); how soon the object
    manager is up after its store is a timing, measured by benchmarks/ray_start.py."""
    done = subprocess.run([sys.executable, "-c", ONE_START, "suite"], cwd=REPO, env=runner_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["config"]["raylet_client_connect_timeout_milliseconds"] == 100
    assert seen["config"]["raylet_client_num_connect_attempts"] == 100  # Ray's 10-s limit kept


def started_until(path: Path, n: int, *overrides: str, **popen) -> subprocess.Popen:
    """The runner started in the background with ``overrides``, once ``path`` holds ``n`` records."""
    proc = subprocess.Popen([sys.executable, "-m", "syw", "run", *overrides], cwd=REPO, env=runner_env(), **popen)
    deadline = time.time() + 240
    while time.time() < deadline and (not path.exists() or len(records(path)) < n):
        time.sleep(0.2)
    return proc


def test_sigkill_then_resume(tmp_path):
    out = tmp_path / "results"
    path = out / "toy" / "toy.jsonl"
    proc = started_until(path, 4, *slow_toy(tmp_path / "fam", 0.7), "trials=14", f"paths.results_dir={out}",
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = path.read_bytes()
    before = before[:before.rfind(b"\n") + 1]  # a line the kill cut off is removed by the next writer
    n_before = len(records(path))
    assert 4 <= n_before < 14
    done = run(*slow_toy(tmp_path / "fam", 0.7), "trials=14", f"paths.results_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    after = path.read_bytes()
    assert after.startswith(before)  # records written before the kill are byte-identical
    rows = records(path)
    assert len(rows) == 14 and sorted(r["trial"] for r in rows) == list(range(14))
    assert f"{14 - n_before} of 14 trials to run" in done.stdout
    assert check(path).ok and check(path).lines == 14  # the manifest too survived the kill (a hash ahead is dropped)


def test_second_writer_refused(tmp_path):
    path = tmp_path / "toy" / "toy.jsonl"
    with RecordsWriter(path) as writer:
        writer.append({"trial": 0})
        with pytest.raises(RecordsBusy, match="another runner .* is writing"):
            RecordsWriter(path).__enter__()
    with RecordsWriter(path) as writer:  # free again once the first one is done
        writer.append({"trial": 1})
    assert [r["trial"] for r in records(path)] == [0, 1]


def test_second_runner_on_same_records_exits_2(tmp_path):
    out = tmp_path / "results"
    path = out / "toy" / "toy.jsonl"
    with RecordsWriter(path):
        done = run(*slow_toy(tmp_path / "fam", 0.0), "trials=2", f"paths.results_dir={out}")
    assert done.returncode == 2 and "another runner" in done.stderr
    assert path.read_bytes() == b"" if path.exists() else True


def test_torn_last_line_is_removed_by_the_next_writer(tmp_path, capsys):
    path = tmp_path / "r.jsonl"  # records as small as the record schema allows (a failed trial needs no value)
    path.write_bytes(b'{"trial": 0, "status": "failed"}\n{"trial": 1, "val')
    assert done_indices(path) == {0}
    assert f"{path}:2: skipping a line that is the last line, cut off mid-record" in capsys.readouterr().err
    with RecordsWriter(path) as writer:
        writer.append({"trial": 1, "status": "failed"})
    assert path.read_bytes() == b'{"trial": 0, "status": "failed"}\n{"trial": 1, "status": "failed"}\n'
    assert [r["trial"] for r in iter_records(path)] == [0, 1]


def stop_cluster(temp_dir: str) -> None:
    """Stop only the processes of the cluster whose session lives in ``temp_dir`` (`ray stop` would stop every Ray)."""
    for sig in ("TERM", "KILL"):
        subprocess.run(["pkill", f"-{sig}", "-f", temp_dir], capture_output=True)
        time.sleep(2)


@pytest.mark.skipif(shutil.which("ray", path=os.path.dirname(sys.executable)) is None, reason="ray CLI not installed")
def test_run_against_a_local_ray_cluster(tmp_path):
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    temp_dir = tempfile.mkdtemp(prefix="sywray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    env = runner_env()
    port = 6390 + os.getpid() % 200
    start = subprocess.run(
        [ray_cli, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         f"--temp-dir={temp_dir}", "--include-dashboard=false", "--disable-usage-stats"],
        env=env, capture_output=True, text=True, timeout=180,
    )
    try:
        assert start.returncode == 0, start.stdout + start.stderr
        out = tmp_path / "results"
        done = run(*slow_toy(tmp_path / "fam", 0.0), "trials=4", f"paths.results_dir={out}",
                   f"ray.address=127.0.0.1:{port}", env={**env, "RAY_AUTH_MODE": "token"})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        rows = records(out / "toy" / "toy.jsonl")
        assert sorted(r["trial"] for r in rows) == [0, 1, 2, 3]
        # with no ray.address the runner joins the cluster ray.init() finds (here: RAY_ADDRESS), token included
        other = tmp_path / "results_found"
        found = run(*slow_toy(tmp_path / "fam", 0.0), "trials=2", f"paths.results_dir={other}",
                    env={**env, "RAY_ADDRESS": f"127.0.0.1:{port}"})
        assert found.returncode == 0, found.stdout[-2000:] + found.stderr[-3000:]
        ready = next(l for l in found.stdout.splitlines() if "Ray ready" in l)
        assert f"(cluster 127.0.0.1:{port}," in ready and "joined the cluster in RAY_ADDRESS" in ready, ready
        assert sorted(r["trial"] for r in records(other / "toy" / "toy.jsonl")) == [0, 1]
        # the driver leaves the cluster it joined as it was: its autoscaler monitor still runs
        monitor = subprocess.run(["pgrep", "-f", f"monitor.py --logs-dir={temp_dir}"], capture_output=True, text=True)
        assert monitor.stdout.strip(), "the cluster's autoscaler monitor was stopped by a driver that only joined it"
    finally:
        stop_cluster(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_retry_failed_reruns_failed_trials_and_the_latest_record_counts(tmp_path):
    from syw.core.records import load_study

    path = tmp_path / "results" / "toy" / "toy.jsonl"
    path.parent.mkdir(parents=True)
    family = load_family("toy", name="toy")
    failed = {"study": "toy", "family": "toy", "seed": 0, "trial": 1, "params": family.params(0, 1),
              "status": "failed", "value": None, "error": "TrialFailed: loss became NaN"}
    ok = {**failed, "trial": 0, "params": family.params(0, 0), "status": "ok", "value": 0.5, "error": None}
    before = json.dumps(ok) + "\n" + json.dumps(failed) + "\n"
    path.write_text(before)
    overrides = ["study=toy", "trials=2", f"paths.results_dir={tmp_path / 'results'}"]
    plain = run(*overrides)
    assert plain.returncode == 0 and "nothing to run" in plain.stdout and "retry_failed=true" in plain.stdout
    done = run(*overrides, "retry_failed=true")
    assert done.returncode == 0, done.stderr[-3000:]
    assert path.read_text().startswith(before)  # appended, nothing rewritten or lost
    rows = records(path)
    assert [(r["trial"], r["status"]) for r in rows] == [(0, "ok"), (1, "failed"), (1, "ok")]
    frame, failures = load_study(path.parent)
    assert frame.trial.tolist() == [0, 1] and failures == {}
    assert frame.value.iloc[0] == 0.5 and frame.value.iloc[1] == rows[2]["value"]
    again = run(*overrides, "retry_failed=true")
    assert again.returncode == 0 and "nothing to run" in again.stdout


def test_only_runs_the_named_trials_and_the_plain_command_the_rest(tmp_path):
    overrides = ["study=toy", "trials=4", f"paths.results_dir={tmp_path}"]
    path = tmp_path / "toy" / "toy.jsonl"
    some = run(*overrides, "only=[3,1]")
    assert some.returncode == 0, some.stderr[-3000:]
    assert "2 of 4 trials to run" in some.stdout
    assert sorted(r["trial"] for r in records(path)) == [1, 3]
    again = run(*overrides, "only=[1,3]")
    assert again.returncode == 0 and "trials [1, 3] have records" in again.stdout and "nothing to run" in again.stdout
    rest = run(*overrides)
    assert rest.returncode == 0 and "2 of 4 trials to run" in rest.stdout
    whole = run("study=toy", "trials=4", f"paths.results_dir={tmp_path / 'whole'}")
    assert whole.returncode == 0

    def by_trial(p):
        return {r["trial"]: (r["params"], r["value"]) for r in records(p)}
    assert by_trial(path) == by_trial(tmp_path / "whole" / "toy" / "toy.jsonl")  # the same draws, whichever run ran them


def test_a_corrupt_sst_file_stops_the_lr_study_and_it_runs_once_fixed(tmp_path):
    """A label 7 in the SST training file: every trial would fail alike, so none is recorded."""
    from tests.support.fixtures_sst import write_sst_fixture

    data = write_sst_fixture(tmp_path / "data", n_train=60, n_dev=20, n_test=5)
    good = (data / "sst" / "train.txt").read_text()
    (data / "sst" / "train.txt").write_text(good + "(7 (2 bad) (2 label))\n")
    overrides = ["study=sst5", "family=lr", "trials=2", f"paths.data_dir={data}", f"paths.cache_dir={tmp_path / 'cache'}",
                 f"paths.results_dir={tmp_path / 'results'}"]
    done = run(*overrides)
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == f"error: {data / 'sst' / 'train.txt'}:61: SST label 7 is not in 0..4"
    assert not list(iter_records(tmp_path / "results" / "sst5" / "lr.jsonl"))
    (data / "sst" / "train.txt").write_text(good)
    again = run(*overrides)
    assert again.returncode == 0, again.stderr[-3000:]
    assert [r["status"] for r in records(tmp_path / "results" / "sst5" / "lr.jsonl")] == ["ok", "ok"]


def test_ctrl_c_says_the_study_stopped_and_the_same_command_resumes(tmp_path):
    """Ctrl-C stops the whole study: the family running keeps its records, the next one's trials, queued behind it, never start."""
    out = tmp_path / "results"
    path = out / "toy" / "toy.jsonl"
    proc = started_until(path, 2, *slow_toy(tmp_path / "fam", 1.0), "+study.families.later=toy_test", "trials=12",
                         f"paths.results_dir={out}", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.send_signal(signal.SIGINT)  # as Ctrl-C in the terminal
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    left = 12 - len(records(path))
    assert left > 0 and f"with trials left (toy: {left}, later: 12); the same command resumes" in stderr
    assert "[toy/later] trial" not in stdout and not (out / "toy" / "later.jsonl").exists()


# A trial that says it arrived (a file named after its family and index), then waits until ``meet`` trials have
# arrived or ``patience_seconds`` pass: its score is how many had arrived when it left.
ARRIVAL_PROBE = """
import time
from pathlib import Path

from syw.core.context import TrialOutcome
from syw.core.settings import resolve

SETTINGS = {"x": {"type": "float"}, "meet": {"type": "int", "min": 1}, "folder": {"type": "str"},
            "patience_seconds": {"type": "float", "min": 0.0}}


def train(params, ctx):
    params = resolve(params, SETTINGS)
    folder = Path(params["folder"])
    (folder / f"{ctx.family}-{ctx.trial_index}").write_text("")
    deadline = time.monotonic() + params["patience_seconds"]
    while len(list(folder.iterdir())) < params["meet"] and time.monotonic() < deadline:
        time.sleep(0.05)
    return TrialOutcome(metric=float(len(list(folder.iterdir()))))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two slots")
def test_the_next_family_fills_the_slot_the_last_trial_of_the_one_before_leaves(tmp_path):
    """Two slots, one trial of the first family that waits for a second trial to arrive beside it, then three of
    the next family: one of those starts while it waits, and it leaves with 2 arrived (family by family, it would
    wait alone until its patience ran out and score 1)."""
    out, fam, arrived = tmp_path / "results", tmp_path / "fam", tmp_path / "arrived"
    for folder in (fam, arrived, tmp_path / "code"):
        folder.mkdir()
    for name, meet, patience in (("first", 2, 300), ("later", 1, 0)):
        (fam / f"{name}.yaml").write_text(f"label: {name}\ntrain: {{_target_: slotprobe.probe.train}}\n"
                                          f"fixed: {{meet: {meet}, folder: {arrived}, patience_seconds: {patience}}}\n"
                                          "search:\n  x: {distribution: uniform, low: 0.0, high: 1.0}\n")
    with importable_package(tmp_path / "code", "slotprobe", {"probe": ARRIVAL_PROBE}):
        done = run("study=toy", f"paths.family_dirs=[{fam}]", "study.families.toy=first", "+study.families.later=later",
                   "+study.trials={toy: 1}", "trials=3", f"paths.results_dir={out}",
                   env=runner_env(PYTHONPATH=str(tmp_path / "code")), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (first,), later = records(out / "toy" / "toy.jsonl"), records(out / "toy" / "later.jsonl")
    assert sorted(r["trial"] for r in later) == [0, 1, 2] and {r["family"] for r in later} == {"later"}
    assert "[toy/toy] 1 of 1 trials to run" in done.stdout and "[toy/later] 3 of 3 trials to run" in done.stdout
    assert first["value"] >= 2.0, first  # a trial of the next family arrived while the first one ran


def test_a_smaller_trials_setting_over_more_records_finishes_as_done(tmp_path):
    """Records beyond ``trials`` (an earlier, larger run) do not count as trials left."""
    path = tmp_path / "results" / "toy" / "toy.jsonl"
    path.parent.mkdir(parents=True)
    family = load_family("toy", name="toy")
    path.write_text("".join(json.dumps({"study": "toy", "family": "toy", "seed": 0, "trial": i, "params": family.params(0, i),
                                        "status": "ok", "value": 0.5}) + "\n" for i in range(10) if i != 3))
    done = run("study=toy", "trials=5", f"paths.results_dir={tmp_path / 'results'}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 of 5 trials to run" in done.stdout and "] done in" in done.stdout and "stopped" not in done.stderr


def test_a_local_run_makes_a_private_auth_token_and_says_which_trials_continue(tmp_path):
    """A new local Ray with no token anywhere gets one the runner makes readable by this user only (Ray's own is
    world-readable); the first line counts the trials to run that continue from saved epochs
    (results/<study>/resume/<family>-<trial>.pt), and a few-millisecond trial's estimate reads '<1 s to go'."""
    home, out = tmp_path / "home", tmp_path / "results"
    home.mkdir()
    (out / "toy" / "resume").mkdir(parents=True)
    record = {"study": "toy", "family": "toy", "seed": 0, "trial": 0, "params": load_family("toy").params(0, 0),
              "status": "ok", "value": 0.5}
    (out / "toy" / "toy.jsonl").write_text(json.dumps(record) + "\n")
    for trial in (1, 2):  # a toy trial reads no saved state; the count is of the files there
        (out / "toy" / "resume" / f"toy-{trial}.pt").write_bytes(b"state")
    env = runner_env(HOME=str(home), RAY_AUTH_TOKEN="", RAY_AUTH_TOKEN_PATH="")
    env.pop("RAY_AUTH_MODE", None)
    done = run("study=toy", "trials=4", f"paths.results_dir={out}", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    token = home / ".ray" / "auth_token"
    assert (stat.S_IMODE(token.stat().st_mode), stat.S_IMODE(token.parent.stat().st_mode)) == (0o600, 0o700)
    assert len(token.read_text()) == 64 and int(token.read_text(), 16) >= 0  # 256 bits in hex, as Ray makes them
    assert f"[toy/toy] 3 of 4 trials to run (2 continue from saved epochs; 1 CPU, 0 GPU each) -> {out}/toy/toy.jsonl" \
        in done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("[toy/toy] trial")]
    assert [line.split("this run: ")[1] for line in lines] == ["2 left, <1 s to go", "1 left, <1 s to go", "0 left, ~0 s to go"]
