"""Progress of a running study: write each finished trial's record and print one line for it."""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from syw.core.records import RecordsWriteError, RecordsWriter
from syw.core.units import human_duration
from syw.experiments.same_inputs import READ_THIS_RUN
from syw.experiments.space import Family
from syw.experiments.trial import DATA_PROBLEM

# How often Tune starts a trial again after its worker process or node died (FailureConfig.max_failures):
# a lost node or two is survived in the same command; a trial whose worker dies every time (killed for
# memory, a crash in a library) is not the trial's result either, so it stops the study unrecorded.
WORKER_RETRIES = 3


def to_go(seconds: float) -> str:
    """An estimate of the time left: ``"<1 s"`` under a second (a guess from a few trials is no finer), else
    ``"~42 s"``, ``"~3.5 min"``."""
    return "<1 s" if 0 < seconds < 1 else f"~{human_duration(seconds)}"


class Progress:
    """Writes each finished trial's record and prints one progress line for it; a trial that
    found a data file missing or malformed is not recorded but noted in ``data_problem``, which
    stops the study (every trial would fail alike, and none of it is the trial's fault). A trial whose
    worker died is no trial failure either: Tune runs it again, and after :data:`WORKER_RETRIES` it is
    noted in ``lost``, unrecorded, which stops the study too.

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
        self.lost: list[str] = []  # a line for each trial whose worker died on every try
        for record in earlier:
            self._count(record)
        READ_THIS_RUN.resume(list(earlier))  # a resumed study reads the versions its records read

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
            f"{self.left} left, {to_go(eta)} to go",
            flush=True,
        )

    def retry(self, trial: int, why: str, retries: int) -> None:
        """Trial ``trial``'s worker process or node died (``why``); Tune starts it again, retry ``retries``."""
        print(f"[{self.base['study']}/{self.family.name}] trial {trial:>3} lost its worker ({why}); running it "
              f"again (retry {retries} of {WORKER_RETRIES})", flush=True)

    def lose(self, trial: int, why: str, log: Path) -> None:
        """Trial ``trial``'s worker died on every try: nothing is recorded and the study stops (:func:`data_stopper`)."""
        self.lost.append(f"trial {trial} of {self.family.name} lost its worker on all {WORKER_RETRIES + 1} tries "
                         f"(last: {why}; Ray's report is in {log}); nothing recorded for it, the same command runs it again")
        print(f"[{self.base['study']}/{self.family.name}] trial {trial:>3} lost its worker on all {WORKER_RETRIES + 1} "
              "tries; stopping the study (no record written)", flush=True)


def worker_loss(trial: Any) -> str:
    """Why a Tune trial's worker died, in a line: the Ray error's type and first line (Ray's log has all of it)."""
    saved = trial.pickled_error_file  # on the driver: the copy in Tune's storage may not be synced yet
    if not saved or not Path(saved).is_file():
        return "no error saved"
    with open(saved, "rb") as handle:
        error = pickle.load(handle)
    cause = getattr(error, "cause", None)  # a RayTaskError wraps what the task raised outside the training function
    error = cause if isinstance(cause, BaseException) else error
    first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def lost_workers(trial: Any) -> dict[str, int]:
    """A record's ``lost_workers``: how many times the trial's worker died before this run of it, when any did."""
    return {"lost_workers": trial.num_failures} if trial.num_failures else {}


def record_callback(progress: Progress, log: Path):
    """A Tune callback handing each finished trial's record to ``progress`` (an adaptive run: one family, ``trial_index``
    in each config), and a trial whose worker died to its :meth:`Progress.retry` or :meth:`Progress.lose` (``log``: Ray's log)."""
    from ray.tune import Callback

    class RecordCallback(Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            if "record" in result:
                progress.finish({**result["record"], **lost_workers(trial)})

        # the trainable never raises: a trial error is a dead worker process or node, not the trial's failure
        def on_trial_recover(self, iteration, trials, trial, **info):
            progress.retry(int(trial.config["trial_index"]), worker_loss(trial), trial.num_failures)

        def on_trial_error(self, iteration, trials, trial, **info):
            progress.lose(int(trial.config["trial_index"]), worker_loss(trial), log)

    return RecordCallback()


def data_stopper(progresses: list[Progress]):
    """A Tune stopper that ends the run once a trial of any of ``progresses`` found its data missing or malformed,
    or lost its worker on every try (an adaptive search must not go on as if it had failed)."""
    from ray.tune import Stopper

    class StopOnDataProblem(Stopper):
        def __call__(self, trial_id, result):
            return False

        def stop_all(self):
            return any(p.data_problem is not None or p.lost for p in progresses)

    return StopOnDataProblem()
