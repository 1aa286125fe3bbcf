"""A toy study with a stopping rule (issue 74) whose two families differ strongly and deterministically.

Both families are the toy objective without noise; ``hi`` draws x in [0.6, 0.8] (within 0.01 of the best),
``lo`` x in [0, 0.1] (0.36 to 0.49 below it), and the other terms move a score by at most 0.22: every ``hi``
trial beats every ``lo`` trial, so the rule names ``hi`` at each budget as soon as the budget is tested.
"""
from pathlib import Path

STUDY = """\
# @package _global_
study:
  name: toy_seq
  description: Two toy families far apart, compared look by look.
  figure: null
  dataset: {{name: toy}}
  splits: "synthetic objective: no data"
  families: {{hi: toy_hi, lo: toy_lo}}
  metric: score
  direction: max
  sequential: {{compare: [hi, lo], at: [1, 2], looks: [6, 12, 18]}}
trials: {trials}
seed: 0
resources: {{cpus_per_trial: 1, gpus_per_trial: auto}}
"""
FAMILY = "inherits: toy\nfixed: {{noise: 0.0, work_seconds: {seconds}}}\nsearch:\n  x: {{distribution: uniform, low: {low}, high: {high}}}\n"
# n = 1 is tested from the first look (6 trials reach it), n = 2 from the second (12): the rule stops at look 2 of 3
DECISION = "decided at look 2 (12 trials per family): n = 1: hi leads, n = 2: hi leads"


def sequential_toy(folder: Path, seconds: float = 0.0, trials: int = 18) -> Path:
    """Write the study and its two families into ``folder``; the study file's path (``study=<path>``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "toy_hi.yaml").write_text(FAMILY.format(seconds=seconds, low=0.6, high=0.8))
    (folder / "toy_lo.yaml").write_text(FAMILY.format(seconds=seconds, low=0.0, high=0.1))
    path = folder / "toy_seq.yaml"
    path.write_text(STUDY.format(trials=trials))
    return path
