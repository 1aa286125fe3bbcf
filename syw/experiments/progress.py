"""Progress of a running study: write each finished trial's record and print one line for it."""
from __future__ import annotations

from syw.core.records import RecordsWriteError, RecordsWriter
from syw.core.units import human_duration
from syw.experiments.same_inputs import READ_THIS_RUN
from syw.experiments.space import Family
from syw.experiments.trial import DATA_PROBLEM, now


class Progress:
    """Writes each finished trial's record and prints one progress line for it; a trial that
    found a data file missing or malformed is not recorded but noted in ``data_problem``, which
    stops the study (every trial would fail alike, and none of it is the trial's fault).

    ``earlier`` are the family's records from before a resume: the best value, the time estimate and
    the trials recorded count them too. ``total`` is the family's trial count, ``pending`` this run's
    (fewer after a resume or with ``only``), so a line says both.
    """

    def __init__(self, writer: RecordsWriter, family: Family, metric: str, maximize: bool, total: int, pending: int,
                 concurrency: int, base: dict, earlier: list[dict] = ()):
        self.writer, self.family, self.metric, self.maximize = writer, family, metric, maximize
        self.total, self.left, self.concurrency, self.base = total, pending, max(1, concurrency), base
        self.best: float | None = None
        self.durations: list[float] = []
        self.recorded: set = set()  # (trial, rerun) of each record: a seed rerun is its own
        # the message of the first trial that met a data problem, or whose record the disk did not take: it stops the study
        self.data_problem: str | None = None
        for record in earlier:
            self._count(record)

    def _count(self, record: dict) -> None:
        self.recorded.add((record.get("trial"), record.get("rerun")))
        if record.get("duration_seconds"):
            self.durations.append(record["duration_seconds"])
        value = record.get("value")
        if value is not None and (self.best is None or (value > self.best if self.maximize else value < self.best)):
            self.best = value

    def finish(self, record: dict) -> None:
        record = {**self.base, **record}
        if record["status"] != DATA_PROBLEM and (changed := READ_THIS_RUN.changed(record)):
            record = {**record, "status": DATA_PROBLEM, "error": changed}
        if record["status"] == DATA_PROBLEM:
            if self.data_problem is None:
                self.data_problem = record["error"]
                print(f"[{record['study']}/{self.family.name}] trial {record['trial']:>3} found a data file missing, "
                      "malformed or changed; stopping the study (no record written)", flush=True)
            return
        try:
            self.writer.append(record)
        except RecordsWriteError as err:  # none of it was kept: the study stops, the trial runs again with the command
            if self.data_problem is None:
                self.data_problem = f"{err.filename}: {err.strerror}"
                print(f"[{record['study']}/{self.family.name}] trial {record['trial']:>3} not recorded: the records file "
                      "took none of it; stopping the study", flush=True)
            return
        self.left -= 1
        self._count(record)
        value = record.get("value")
        eta = self.left * (sum(self.durations) / max(1, len(self.durations))) / self.concurrency
        shown = f"{self.metric}={value:.4f}" if value is not None else f"FAILED ({record.get('error')})"
        best = f"{self.best:.4f}" if self.best is not None else "-"
        print(
            f"[{record['study']}/{self.family.name}] trial {record['trial']:>3} {shown} "
            f"({record['duration_seconds']:.1f} s) best={best} | {len(self.recorded)} of {self.total} recorded; this run: "
            f"{self.left} left, ~{human_duration(eta)} to go",
            flush=True,
        )


def record_callback(progress: Progress):
    """A Tune callback handing each finished trial's record to ``progress`` (an adaptive run: one family, ``trial_index`` in each config)."""
    from ray.tune import Callback

    class RecordCallback(Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            if "record" in result:
                progress.finish(result["record"])

        def on_trial_error(self, iteration, trials, trial, **info):
            # the trainable never raises; this is a crashed worker (e.g. killed by the OS)
            progress.finish({
                "trial": int(trial.config["trial_index"]), "params": None, "status": "failed", "value": None,
                "error": f"worker crashed: {trial.error_file or 'no error file'}", "duration_seconds": 0.0,
                "started_at": None, "ended_at": now(),
            })

    return RecordCallback()


def data_stopper(progresses: list[Progress]):
    """A Tune stopper that ends the run once a trial of any of ``progresses`` found its data missing or malformed."""
    from ray.tune import Stopper

    class StopOnDataProblem(Stopper):
        def __call__(self, trial_id, result):
            return False

        def stop_all(self):
            return any(p.data_problem is not None for p in progresses)

    return StopOnDataProblem()
