"""A group of trials, the unit every curve is built from: the validation scores of one model family of our
records, of the authors' published trials, or of one group of anyone's trials (section 3 of the paper: the
scores of N hyperparameter assignments of one model)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Group:
    """The trials of one group: their scores (and seconds per trial), their order and run, and the search.

    ``name`` keys the group (a family's short name, a value of the group column); ``label`` is the name
    figures and reports show, the name itself when not given.
    """

    name: str
    scores: np.ndarray
    durations: np.ndarray | None = None  # seconds per trial; None when not known (or placeholders)
    label: str = ""
    order: np.ndarray | None = None  # each trial's place in its run (an adaptive search's best so far)
    runs: np.ndarray | None = None  # each trial's run
    strategy: str | None = None  # the adaptive search that chose them; None: random search (Eq. 8 applies)
    tests: np.ndarray | None = None  # each trial's test score (of its selected epoch), when every trial has one

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def mean_duration(self) -> float | None:
        """Seconds per trial on average, the time axis's unit (n trials cost n times this)."""
        return None if self.durations is None else float(np.mean(self.durations))
