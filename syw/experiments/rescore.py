"""``syw rescore results/<study> [--trial N]``: score a SQuAD trial on the
whole dev set.

A reduced study selects on a subset of dev questions. This reads the best ok trial's checkpoint
(or trial N's), written by the trial beside its record, and predicts every question of the dev
file. A trial whose vocabulary covered the dev questions it read (``vocabulary: all_splits``, as
AllenNLP built it) gets the words of the whole dev set: the model's word embedding is frozen, so
the vocabulary grows without changing what was trained; the new words are appended with their
GloVe vectors (a random vector, as any word without one, when GloVe lacks them) and the words it
knew keep their rows.

Writes ``predictions/<family>-<trial>.dev-all.json.gz`` (question id -> answer text, the official
evaluation script's input once unzipped; compressed because the whole dev set's predictions pass
the 2 MB a committed file may have) and prints exact match and F1 on all dev questions, and on the subset
the trial was selected on, predicted as the trial predicted it: that must reproduce the recorded
value, which checks that the checkpoint is the trial's.
"""
from __future__ import annotations

import importlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from syw.core.entry import Parser, run_main
from syw.core.records import check_complete, iter_records, latest_per_trial
from syw.core.settings import resolve
from syw.core.units import human_duration
from syw.data.glove import load_embeddings, resolve_source
from syw.data.squad import read_split
from syw.experiments.space import load_family, study_config
from syw.models.tasks.sentence import EMBEDDING_SEED
from syw.models.tasks.span import SpanData, index_spans, predict, write_predictions
from syw.models.tasks.squad_metric import score


class RescoreError(ValueError):
    """Records or a checkpoint that cannot be rescored; the message names the file."""


def choose_record(path: Path, trial: int | None) -> dict[str, Any]:
    """The latest ok record of trial ``trial``, or the best (highest value) ok record of ``path``."""
    ok = [r for r in latest_per_trial(iter_records(path)) if r["status"] == "ok"]
    if trial is not None:
        ok = [r for r in ok if r["trial"] == trial]
        if not ok:
            raise RescoreError(f"{path}: no ok record of trial {trial}")
    if not ok:
        raise RescoreError(f"{path}: no ok trial")
    record = max(ok, key=lambda r: r["value"])
    if "checkpoint" not in (record.get("outputs") or {}):
        raise RescoreError(f"{path}: trial {record['trial']} names no checkpoint (outputs.checkpoint); it was run "
                           "without an output folder, or before trials wrote one")
    return record


def extend_vocabulary(vocab: list[str], vectors: np.ndarray, examples: list, source: str,
                      cache_dir: Path | None) -> tuple[list[str], np.ndarray]:
    """``vocab`` and its ``vectors`` (a row per word) followed by the lowercased words of
    ``examples`` it lacks, in order of appearance, with their vectors from the embedding ``source``."""
    known, new = set(vocab), {}
    for ex in examples:
        for token in (*ex.passage_tokens, *ex.question_tokens):
            word = token.lower()
            if word not in known:
                new.setdefault(word, None)
    if not new:
        return list(vocab), vectors
    added, _ = load_embeddings(list(new), source, cache_dir, seed=EMBEDDING_SEED)
    return list(vocab) + list(new), np.concatenate([vectors, added])


def embedding_key(state: Mapping[str, torch.Tensor], vocab_size: int, path: Path) -> str:
    """The one weight with a row per vocabulary word (the frozen word embedding)."""
    keys = [k for k, v in state.items() if v.dim() == 2 and v.shape[0] == vocab_size]
    if len(keys) != 1:
        raise RescoreError(f"{path}: expected one weight with {vocab_size} rows (the word embedding), found {keys}")
    return keys[0]


def score_checkpoint(module: Any, params: Mapping[str, Any], checkpoint: Mapping[str, Any], examples: list,
                     source: str, cache_dir: Path | None, where: Path,
                     progress: Callable[[int, int], object] | None = None) -> tuple[dict[str, str], int]:
    """Question id -> answer text for ``examples``, and how many words were added, predicted by
    ``module``'s model (its ``build`` and optional ``prepare``) with the ``checkpoint``'s weights.

    The vocabulary is the trial's rule applied to ``examples``: over the data read
    (``vocabulary: all_splits``), the checkpoint's words grow by those of ``examples`` (vectors from
    ``source``); over train only, it stays, and unseen words are unknown as they were in the trial.
    """
    state, vocab = checkpoint["state"], checkpoint["vocab"]
    key = embedding_key(state, len(vocab), where)
    words, vectors = list(vocab), state[key].numpy()
    if params.get("vocabulary") == "all_splits":
        words, vectors = extend_vocabulary(words, vectors, examples, source, cache_dir)
    spans = index_spans(examples, {word: i for i, word in enumerate(words)})
    data = SpanData(words, spans, spans, vectors)
    data = module.prepare(data) if hasattr(module, "prepare") else data
    model = module.build(params, data)
    model.load_state_dict({**state, key: torch.from_numpy(vectors)})
    model.eval()
    with torch.no_grad():
        return predict(model, data.dev, progress=progress), len(words) - len(vocab)


def progress_printer(what: str, every: float = 30.0) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that prints a line to stderr at most every ``every`` seconds
    and at the end: questions done, time so far, time left at the rate so far."""
    start = last = time.perf_counter()

    def show(done: int, total: int) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last < every and done < total:
            return
        last = now
        left = (now - start) / done * (total - done) if done else float("nan")
        print(f"  {what}: {done:,} of {total:,} questions, {human_duration(now - start)} so far, "
              f"~{human_duration(left)} left", file=sys.stderr, flush=True)
    return show


def rescore(study_dir: Path, data_dir: Path, cache_dir: Path | None, trial: int | None = None,
            family: str | None = None, verbose: bool = False) -> dict[str, Any]:
    """Predict the whole dev set with a trial's checkpoint; write the predictions; return the scores
    (``verbose``: a progress line on stderr every 30 s)."""
    files = sorted(study_dir.glob("*.jsonl")) if family is None else [study_dir / f"{family}.jsonl"]
    if len(files) != 1 or not files[0].is_file():
        raise RescoreError(f"{study_dir}: give --family (records there: {[p.stem for p in files] or 'none'})")
    record = choose_record(files[0], trial)
    study = study_config(record["study"])
    if record["family"] not in study["families"]:
        raise RescoreError(f"{files[0]}: study {record['study']!r} has no family {record['family']!r}")
    spec = load_family(study["families"][record["family"]], record["family"])
    module = importlib.import_module(spec.train_target.rsplit(".", 1)[0])
    try:
        params = resolve(record["params"], module.SETTINGS)
    except (TypeError, ValueError) as err:
        raise RescoreError(f"{files[0]}: trial {record['trial']}: {err}") from err
    checkpoint_path = study_dir / record["outputs"]["checkpoint"]
    try:
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as err:
        raise RescoreError(f"{checkpoint_path}: cannot read the checkpoint: {(str(err).splitlines() or [type(err).__name__])[0]}") from err
    if not isinstance(checkpoint, dict) or not {"state", "vocab", "params"} <= set(checkpoint):
        raise RescoreError(f"{checkpoint_path}: not a checkpoint of models.tasks.span (state, vocab, params)")
    if checkpoint.get("params") != params:
        raise RescoreError(f"{checkpoint_path}: its settings differ from trial {record['trial']}'s record in {files[0]}")

    dev = read_split(data_dir, "dev")
    source = resolve_source(params["embedding"], data_dir)
    subset = dev[: study.get("dataset", {}).get("dev_questions") or len(dev)]
    # the trial's own evaluation again: its questions alone, so batched as they were (a batch's
    # longest token sets the character padding the character CNN sees, as in AllenNLP)
    check, _ = score_checkpoint(module, params, checkpoint, subset, source, cache_dir, checkpoint_path)
    start = time.perf_counter()
    predictions, new_words = score_checkpoint(module, params, checkpoint, dev, source, cache_dir, checkpoint_path,
                                              progress_printer("whole dev") if verbose else None)
    seconds = time.perf_counter() - start
    out = study_dir / "predictions" / f"{record['family']}-{record['trial']}.dev-all.json.gz"
    write_predictions(predictions, out)
    return {"trial": record["trial"], "recorded": record["value"], "new_words": new_words,
            "all": score(predictions, {ex.qid: list(ex.answers) for ex in dev}),
            "subset": score(check, {ex.qid: list(ex.answers) for ex in subset}),
            "questions": len(dev), "subset_questions": len(subset), "seconds": seconds, "predictions": out}


DESCRIPTION = """\
Score a BiDAF trial of a reduced SQuAD study on the whole dev set: read the best trial's checkpoint (or
--trial's), predict every dev question, write the predictions, and print exact match and F1 on all dev
questions and on the subset the trial was selected on (which must reproduce the recorded value)."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    """Rescore and print (bad input raises; :func:`syw.core.entry.run_main` makes it one line)."""
    parser = Parser(prog="syw rescore", description=DESCRIPTION)
    parser.add_argument("study_dir", type=Path, help="the study's folder of records (results/<study>/)")
    parser.add_argument("--trial", type=int, help="the trial to score (default: the best ok one)")
    parser.add_argument("--family", help="the records file's family (default: the folder's only one)")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("SYW_DATA_DIR", ".data")),
                        help="where squad/ is (default: $SYW_DATA_DIR, else .data)")
    parser.add_argument("--cache-dir", type=Path, default=Path(os.environ.get("SYW_CACHE_DIR", ".cache")),
                        help="where the trial's embeddings and checkpoints are cached (default: $SYW_CACHE_DIR, else .cache)")
    args = parser.parse_args(argv)
    check_complete(args.study_dir)  # the best trial is the best of every record: one that does not parse stops it
    result = rescore(args.study_dir, args.data_dir, args.cache_dir, args.trial, args.family, verbose=True)
    subset, everything = result["subset"], result["all"]
    print(f"trial {result['trial']}: {result['new_words']} dev words added to its vocabulary; "
          f"{result['questions']} questions in {result['seconds']:.0f} s")
    print(f"  selection subset ({result['subset_questions']} questions): EM {subset['exact_match']:.4f} "
          f"F1 {subset['f1']:.4f} (recorded EM {result['recorded']:.4f})")
    print(f"  whole dev ({result['questions']} questions): EM {everything['exact_match']:.4f} F1 {everything['f1']:.4f}")
    print(f"wrote {result['predictions']}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
