"""README facts that tie prose to the verdicts and to the data: ``verdict`` (what ``docs/verdicts.md``
says about a claim of the paper for a study, by :data:`syw.pages.verdicts.RULES`), ``compared`` (who leads at 95%
where, and where the comparison is undecided with these trials), ``interval`` (the 95%
interval of the trials needed to reach a target, issue 62 item 3) and ``majority`` (the share of a data
split's most frequent label: the accuracy of always answering it).

Registered in :data:`syw.pages.readme_facts.FACTS`, so a README says a study's verdict in the words
the verdicts file uses, and a class balance as the data has it, never typed by hand.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

from syw.analysis.compare import stretches
from syw.analysis.floors import apply_floor
from syw.analysis.inference import compare
from syw.experiments.study import load_study
from syw.figures.plot import interval_words
from syw.pages.readme_args import Args, values_of
from syw.pages.readme_data import FactError, NeedsData, figure_of
from syw.pages.readme_format import Value
from syw.pages.verdict_rules import amount
from syw.pages.verdicts import CLAIMS, ours, study_verdicts, verdict_for
from syw.pages.verdicts_melis import STUDIES as MELIS_STUDIES
from syw.pages.verdicts_melis import answers as melis_answers

KEYS = {"study", "fmt", "times"}


def verdict(a: Args) -> Value:
    """The study's one verdict (:data:`syw.pages.verdicts.STUDY_RULE`), or with ``claim=K`` (1-based, in the
    order ``docs/verdicts.md`` lists the claims of the study's figure, or case study 5's questions) its verdict on
    that claim: ``supports at 95%``, ``contradicts at 95%``, ``undecided with N trials`` or ``cannot be tested here``
    (:mod:`syw.pages.verdict_rules`); ``of=why`` adds the reason, as the verdicts file gives it; ``of=evidence`` is a
    reduced study's own reading of the claim, which the verdicts file gives as evidence."""
    study = a.study()
    if a.get("of") not in (None, "why", "evidence"):
        raise FactError(f"of={a.get('of')!r}: why, evidence, or none for the verdict's words")
    if a.get("claim") is None:
        if a.get("of") == "evidence":
            raise FactError("of=evidence: a claim's reading (claim=K); a study's one verdict has none")
        said = study_verdicts(a.results).get(study.name)
        if said is None:
            raise FactError(f"study {study.name} has no verdict in docs/verdicts.md (studies: {', '.join(study_verdicts(a.results))})")
        return Value(said if a.get("of") == "why" else said.split(" (")[0], "text")
    if study.name in MELIS_STUDIES:
        readings = melis_answers(study.name, study.folder.parent)
    else:
        spec = figure_of(study.name)
        claims = [c for c in CLAIMS if spec is not None and c.figure == spec.number]
        readings = [verdict_for(c, study.name, ours(study.name, study.folder.parent)) for c in claims]
    k = a.number("claim")
    if not readings or k != int(k) or not 1 <= k <= len(readings):
        raise FactError(f"claim={a.get('claim')}: study {study.name} has {len(readings)} claim(s) in docs/verdicts.md")
    reading = readings[int(k) - 1]
    if a.get("of") == "evidence":
        if reading.evidence is None:
            raise FactError(f"of=evidence: study {study.name}'s claim {int(k)} has no reading as evidence (not a reduced study)")
        return Value(str(reading.evidence), "text")
    said = str(reading.verdict)
    return Value(said if a.get("of") == "why" else said.split(" (")[0], "text")


def compared(a: Args) -> Value:
    """Who leads at 95% where, ``family`` against ``over`` (every pair of the study's families when neither is named):
    ``syw curve``'s comparison (:func:`syw.analysis.inference.compare`, simultaneous claims over n = 1 to the smaller
    N, on the values the curves use, floored), ``cnn leads lr for n = 1-9; undecided with 50 and 50 trials for n =
    10-50``; for every pair with no leader anywhere, ``undecided with 20 trials per family for every pair at n = 1-20``."""
    if (a.get("family") is None) != (a.get("over") is None):
        raise FactError("compared: family= and over= together (one pair), or neither (every pair of the study)")
    pairs = [(a.trials(), a.trials("over"))] if a.get("family") else list(combinations(a.each(), 2))
    texts, open_ = [], True
    for x, y in pairs:
        vx, vy = (apply_floor(values_of(t), t.floor, maximize=t.maximize)[0] for t in (x, y))
        diff = compare(vx, vy, (x.family, y.family), maximize=x.maximize)
        spans = [(who, f"n = {first}" + (f"-{last}" if last > first else "")) for who, first, last in stretches(diff)]
        open_ = open_ and all(who is None for who, _ in spans)
        words = "; ".join(f"{who} leads {y.family if who == x.family else x.family} for {span}" if who else
                          f"undecided with {len(vx)} and {len(vy)} trials for {span}" for who, span in spans)
        texts.append(words if len(pairs) == 1 else f"{x.family} vs {y.family}: {words}")
    if len(pairs) > 1 and open_:
        sizes = [len(t.rows) for t in a.each()]
        return Value(f"undecided with {amount(sizes)} for every pair at n = 1-{min(sizes)}", "text")
    return Value("; ".join(texts), "text")


def interval(a: Args) -> Value:
    """The 95% interval of the trials ``family`` needs to reach ``target`` (``budget_interval`` on the values the
    curves use, floored): ``4-8``, or ``7 to beyond 9: cannot be located with 50 trials``."""
    trials = a.trials()
    values = apply_floor(values_of(trials), trials.floor, maximize=trials.maximize)[0]
    if values.size < 2:
        raise FactError(f"interval: {trials.family} has {values.size} trial(s); an interval needs at least 2")
    return Value(interval_words(values, a.number("target"), trials.maximize), "text")


def _split_file(study: str, split: str) -> Path:
    """The SciTail ``tsv_format`` file of ``split`` that ``study`` reads (its ``dataset`` block), in $SYW_DATA_DIR."""
    dataset = load_study(study).dataset
    if dataset.get("name") != "scitail" or dataset.get("format") != "tsv_format":
        raise FactError(f"majority: study {study} does not read SciTail's tsv_format (dataset {dict(dataset)})")
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
    "compared": (compared, KEYS | {"family", "over", "source", "where"}),
    "majority": (majority, KEYS | {"split", "of"}),
    "interval": (interval, KEYS | {"family", "source", "where", "target"}),
}
