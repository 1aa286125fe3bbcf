"""README facts that tie prose to the verdicts and to the data: ``verdict`` (what ``docs/verdicts.md``
says about a claim of the paper for a study, by :data:`syw.figures.verdicts.RULES`), ``interval`` (the 95%
interval of the trials needed to reach a target, issue 62 item 3) and ``majority`` (the share of a data
split's most frequent label: the accuracy of always answering it).

Registered in :data:`syw.figures.readme_facts.FACTS`, so a README says a study's verdict in the words
the verdicts file uses, and a class balance as the data has it, never typed by hand.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from syw.analysis.floors import apply_floor
from syw.experiments.space import study_config
from syw.figures.plot import interval_words
from syw.figures.readme_args import Args, values_of
from syw.figures.readme_data import FactError, NeedsData, figure_of
from syw.figures.readme_format import Value
from syw.figures.verdicts import CLAIMS, ours, study_verdicts, verdict_for

KEYS = {"study", "fmt", "times"}


def verdict(a: Args) -> Value:
    """The study's one verdict (:data:`syw.figures.verdicts.STUDY_RULE`), or with ``claim=K`` (1-based, in the
    order ``docs/verdicts.md`` lists the claims of the study's figure) its verdict on that claim: ``supports``,
    ``contradicts`` or ``cannot be tested here``; ``of=why`` adds the reason, as the verdicts file gives it."""
    study = a.study()
    if a.get("of") not in (None, "why"):
        raise FactError(f"of={a.get('of')!r}: why, or none for the verdict's words")
    if a.get("claim") is None:
        said = study_verdicts(a.results).get(study.name)
        if said is None:
            raise FactError(f"study {study.name} has no verdict in docs/verdicts.md (studies: {', '.join(study_verdicts(a.results))})")
    else:
        spec = figure_of(study.name)
        claims = [c for c in CLAIMS if spec is not None and c.figure == spec.number]
        k = a.number("claim")
        if not claims or k != int(k) or not 1 <= k <= len(claims):
            raise FactError(f"claim={a.get('claim')}: study {study.name} has {len(claims)} claim(s) in docs/verdicts.md")
        said = verdict_for(claims[int(k) - 1], study.name, ours(study.name, study.folder.parent))[1]
    return Value(said if a.get("of") == "why" else said.split(" (")[0], "text")


def interval(a: Args) -> Value:
    """The 95% interval of the trials ``family`` needs to reach ``target`` (``budget_interval`` on the values the
    curves use, floored): ``4-8``, or ``7 to beyond 9, the limit budget: beyond it nothing can be located with 50
    trials``."""
    trials = a.trials()
    values = apply_floor(values_of(trials), trials.floor, maximize=trials.maximize)[0]
    if values.size < 2:
        raise FactError(f"interval: {trials.family} has {values.size} trial(s); an interval needs at least 2")
    return Value(interval_words(values, a.number("target"), trials.maximize), "text")


def _split_file(study: str, split: str) -> Path:
    """The SciTail ``tsv_format`` file of ``split`` that ``study`` reads (its ``dataset`` block), in $SYW_DATA_DIR."""
    dataset = study_config(study)["dataset"]
    if dataset.get("name") != "scitail" or dataset.get("format") != "tsv_format":
        raise FactError(f"majority: study {study} does not read SciTail's tsv_format (dataset {dataset})")
    if split not in ("train", "dev", "test"):
        raise FactError(f"split={split!r}: train, dev or test")
    root = os.environ.get("SYW_DATA_DIR")
    name = f"scitail_1.0_{dataset.get(split, split)}.tsv"
    path = Path(root) / "scitail" / "SciTailV1.1" / "tsv_format" / name if root else None
    if path is None or not path.is_file():
        raise NeedsData(f"SciTail ($SYW_DATA_DIR/scitail/SciTailV1.1/tsv_format/{name})")
    return path


def majority(a: Args) -> Value:
    """The share of ``split``'s most frequent label (the last tab-separated field of each line) in the data the
    study trains and selects on: what always answering that label scores; ``of=label`` names the label."""
    path = _split_file(a.study().name, a.need("split"))
    labels = Counter(line.rsplit("\t", 1)[-1].strip() for line in path.read_text(encoding="utf-8").splitlines()
                     if line.strip())
    label, top = labels.most_common(1)[0]
    return Value(label, "text") if a.get("of") == "label" else Value(top / sum(labels.values()), "number")


CLAIM_FACTS: dict[str, tuple[Callable[[Args], Value], set[str]]] = {
    "verdict": (verdict, KEYS | {"claim", "of"}),
    "majority": (majority, KEYS | {"split", "of"}),
    "interval": (interval, KEYS | {"family", "source", "where", "target"}),
}
