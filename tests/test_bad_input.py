"""Bad input gets one clear line naming the file and the line (or key): exit status 2 from a command,
an exception from a library reader; nothing in the folder is written, changed or lost; never a traceback.

CASES is the whole specification, one row a case:

- ``id``: what is wrong;
- ``files``: what is written where before the call (path under the test's folder ``t`` -> text or
  bytes, or a function returning them);
- ``call``: the command or call, a function of ``t`` returning ``(exit status or exception type,
  message)``: :func:`cli` runs a module's ``main(argv)`` in this process, :func:`shell` runs
  ``python -m ...`` in a subprocess, :func:`call` calls a reader;
- ``expect``: the exit status, or the exception type (a subclass passes);
- ``names``: a regex the message must match, naming the file and the line or key; ``{t}`` stands
  for the test's folder.

To add a case (a runner, config or records reader, say), append a row; the test below runs it.
"""
from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import json
import re
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from syw import cli as syw
from syw.errors import DataError, DataMissingError
from syw.paths import REPO

Outcome = tuple[int | type, str]
Content = str | bytes | Callable[[], str | bytes]


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, Content]
    call: Callable[[Path], Outcome]
    expect: int | type[BaseException]
    names: str
    marks: tuple = field(default=())


GLOVE = "the 0.1 0.2 0.3\n"
CSV = "family,value\na,0.5\n"
TREE = "(3 (2 It) (4 great))\n"
SCITAIL = "Cells divide.\tCells split.\tentails\n"
FIG1 = ["fig", "1", "--results", "{t}/results", "--out", "{t}/out"]


def out_into_a_missing_folder(kind: str, files: dict[str, Content], argv: list[str], out: str, what: str,
                              in_subprocess: bool = False) -> Case:
    """The rule every command's ``--out`` keeps: into a folder that does not exist is one line that
    names the path and the missing folder (``syw.entry.check_writable``); ``{t}`` in ``argv`` is the
    test's folder."""
    def call(t: Path) -> Outcome:
        return (shell if in_subprocess else cli)(*[a.replace("{t}", str(t)) for a in argv], "--out", f"{t}/missing/{out}")
    return Case(f"{kind}-out-into-a-missing-folder{'-subprocess' if in_subprocess else ''}", files, call, 2,
                rf"^error: {{t}}/missing/{re.escape(out)}: cannot write the {what}: the folder {{t}}/missing does not exist")


CASES: list[Case] = [
    # --- SST reader: data.sst.read_sst(t, split, download=False) ---
    Case("sst-label-7", {"sst/train.txt": TREE + "(7 (2 bad) (2 film))\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:2: SST label 7 is not in 0\.\.4"),
    Case("sst-label-7-in-a-phrase", {"sst/dev.txt": TREE + "(3 (7 It) (2 x))\n"},
         lambda t: call("syw.data.sst:read_sst", t, "dev", subtrees=True, download=False),
         DataError, r"^{t}/sst/dev\.txt:2: SST label 7 is not in 0\.\.4"),
    Case("sst-torn-tree", {"sst/train.txt": TREE + "(2 (2 torn) (2\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:2: unbalanced parentheses: 2 node\(s\) left open"),
    Case("sst-empty-file", {"sst/train.txt": ""},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt: the file is empty, no tree"),
    Case("sst-only-blank-lines", {"sst/test.txt": "\n  \n\n"},
         lambda t: call("syw.data.sst:read_sst", t, "test", download=False),
         DataError, r"^{t}/sst/test\.txt:3: the file holds only blank lines, no tree"),
    Case("sst-text-after-the-tree", {"sst/train.txt": TREE + "(3 (2 It) (4 great)) (2 more)\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:2: text after the end of the tree: '\('"),
    Case("sst-word-outside-a-node", {"sst/train.txt": TREE + "hello (2 x)\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:2: word 'hello' outside any node"),
    Case("sst-line-that-is-not-a-tree", {"sst/train.txt": TREE + TREE + "just some words\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:3: word 'just' outside any node"),
    Case("sst-non-integer-label", {"sst/train.txt": "(x (2 It))\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:1: expected an integer label after '\(', got 'x'"),
    Case("sst-not-utf8", {"sst/train.txt": TREE.encode() + b"(2 (2 caf\xe9))\n"},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:2: not UTF-8 text"),
    Case("sst-truncated-official-file", {"sst/train.txt": lambda: real_sst_head("train", 100)},
         lambda t: call("syw.data.sst:read_sst", t, "train", download=False),
         DataError, r"^{t}/sst/train\.txt:101: file ends after 100 trees but the official train split has 8544",
         marks=(pytest.mark.realdata,)),
    # --- GloVe reader: data.glove.load_embeddings(vocab, source) ---
    Case("glove-short-line", {"g.txt": GLOVE + "great 0.4 0.5\n"},
         lambda t: call("syw.data.glove:load_embeddings", ["the", "great"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt:2: 2 field\(s\) after the word but the first line has 3 numbers"),
    Case("glove-non-numeric-value", {"g.txt": GLOVE + "great 0.4 abc 0.5\n"},
         lambda t: call("syw.data.glove:load_embeddings", ["great"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt:2: word 'great': could not convert string to float: 'abc'"),
    Case("glove-nan-value", {"g.txt": GLOVE + "great 0.4 nan 0.5\n"},
         lambda t: call("syw.data.glove:load_embeddings", ["great"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt:2: word 'great': a value is not a finite number"),
    Case("glove-empty-file", {"g.txt": ""},
         lambda t: call("syw.data.glove:load_embeddings", ["the"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt: the file is empty"),
    Case("glove-no-vocabulary-word-found", {"g.txt": GLOVE},
         lambda t: call("syw.data.glove:load_embeddings", ["The", "Great"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt: none of the 2 vocabulary words has a vector"),
    Case("glove-first-line-without-numbers", {"g.txt": "the\n" + GLOVE},
         lambda t: call("syw.data.glove:load_embeddings", ["the"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt:1: no number after the word 'the'"),
    Case("glove-not-utf8", {"g.txt": GLOVE.encode() + b"caf\xe9 1 2 3\n"},
         lambda t: call("syw.data.glove:load_embeddings", ["the"], f"{t}/g.txt"),
         DataError, r"^{t}/g\.txt:2: not UTF-8 text"),
    Case("glove-truncated-gz", {"g.txt.gz": lambda: gzip.compress(GLOVE.encode() + glove_lines(5000))[:2000]},
         lambda t: call("syw.data.glove:load_embeddings", ["the"], f"{t}/g.txt.gz"),
         DataError, r"^{t}/g\.txt\.gz:\d+: unreadable .*truncated or corrupt"),
    Case("glove-zip-without-the-member", {"g.zip": lambda: zip_bytes({"other.txt": GLOVE})},
         lambda t: call("syw.data.glove:load_embeddings", ["the"], f"{t}/g.zip:glove.txt"),
         FileNotFoundError, r"^{t}/g\.zip: the archive has no member 'glove\.txt'"),
    # --- SQuAD reader: data.squad.read_file(path), split_file(data_dir, split) ---
    *[Case(f"squad-{name}", {"squad/dev-v1.1.json": text}, lambda t: call("syw.data.squad:read_file", f"{t}/squad/dev-v1.1.json"),
           DataError, rf"^{{t}}/squad/dev-v1\.1\.json{message}") for name, text, message in [
        ("not-json", '{"data": [\n{"title": ', r":2: not valid JSON \(Expecting value, column 11\)"),
        ("no-data-list", '{"version": "1.1"}', r": not a SQuAD file: expected an object whose 'data' is a list"),
        ("paragraph-without-context", lambda: squad_text(context=None), r": article 0, paragraph 0: 'context' must be a str, got missing"),
        ("question-without-answers", lambda: squad_text(answers=None), r": question q1: 'answers' must be a list, got missing"),
        ("question-without-id", lambda: squad_text(qid=None), r": article 0, paragraph 0, question 0: 'id' must be a str, got missing"),
        ("answer-start-a-string", lambda: squad_text(answers=[{"text": "cat", "answer_start": "4"}]),
         r": question q1, answer 0: 'answer_start' must be an int, got str '4'"),
        ("answer-not-at-its-start", lambda: squad_text(answers=[{"text": "cat", "answer_start": 5}]),
         r": question q1: answer 'cat' is not the passage's text at answer_start 5 \('at '\)"),
        ("answer-start-negative", lambda: squad_text(answers=[{"text": "t.", "answer_start": -2}]),
         r": question q1: answer 't\.' is not the passage's text at answer_start -2"),
        ("empty-question", lambda: squad_text(question=" \n "), r": question q1: empty question"),
        ("no-question", '{"data": [{"title": "a", "paragraphs": []}]}', r": the file holds no questions"),
        ("not-utf8", b'{"data": [], "x": "caf\xe9"}', r": not UTF-8 text \(byte 22\)"),
    ]],
    Case("squad-missing-dev-file", {}, lambda t: call("syw.data.squad:split_file", t, "dev", download=False),
         DataMissingError, r"^{t}/squad/dev-v1\.1\.json not found: download https://rajpurkar\.github\.io/SQuAD-explorer/"
                           r"dataset/dev-v1\.1\.json there \(md5 3e85deb501d4e538b6bc56f786231552\)"),
    Case("squad-dev-file-of-another-version", {"squad/dev-v1.1.json": lambda: squad_text()},
         lambda t: call("syw.data.squad:split_file", t, "dev"),
         DataError, r"^{t}/squad/dev-v1\.1\.json: md5 \w+, expected 3e85deb501d4e538b6bc56f786231552 \(dev-v1\.1\.json of SQuAD v1\.1\)"),
    # --- SciTail tsv_format reader: syw.data.scitail.read_official(t, "train", "tsv_format") (the study: test_data_scitail) ---
    *[Case(f"scitail-{name}", {"scitail/SciTailV1.1/tsv_format/scitail_1.0_train.tsv": text},
           lambda t: call("syw.data.scitail:read_official", t, "train", "tsv_format"),
           DataError, rf"^{{t}}/scitail/SciTailV1\.1/tsv_format/scitail_1\.0_train\.tsv:2: {message}$") for name, text, message in [
        ("wrong-field-count", SCITAIL + "A b.\tC d.\n", r"expected 3 tab-separated fields, got 2"),
        ("label-not-entails-or-neutral", SCITAIL + "A b.\tC d.\tcontradiction\n",
         r"label must be entails or neutral, got 'contradiction'"),
        ("not-utf8", SCITAIL.encode() + b"caf\xe9\tC d.\tneutral\n", r"not UTF-8 text \(invalid continuation byte at byte 3\)"),
    ]],
    # --- syw download ---
    Case("download-unknown-dataset", {}, lambda t: cli("download", "squad", "--data-dir", f"{t}/d"),
         2, r"argument dataset: invalid choice: 'squad'"),
    Case("download-missing-data-dir", {}, lambda t: cli("download", "sst"),
         2, r"the following arguments are required: --data-dir"),
    Case("download-corrupt-zip", {"d/sst/trainDevTestTrees_PTB.zip": b"PK\x03\x04 not a zip"},
         lambda t: cli("download", "sst", "--data-dir", f"{t}/d"),
         2, r"^error: {t}/d/sst/trainDevTestTrees_PTB\.zip: not a readable zip archive"),
    Case("download-corrupt-zip-subprocess", {"d/sst/trainDevTestTrees_PTB.zip": b"garbage"},
         lambda t: shell("download", "sst", "--data-dir", f"{t}/d"),
         2, r"^error: {t}/d/sst/trainDevTestTrees_PTB\.zip: not a readable zip archive"),
    Case("download-data-dir-is-a-file", {"d": "not a folder\n"}, lambda t: cli("download", "sst", "--data-dir", f"{t}/d"),
         2, r"^error: {t}/d/sst: Not a directory"),
    Case("download-zip-without-trees", {"d/sst/trainDevTestTrees_PTB.zip": lambda: zip_bytes({"x/readme.txt": "hi"})},
         lambda t: cli("download", "sst", "--data-dir", f"{t}/d"),
         2, r"^error: {t}/d/sst/trainDevTestTrees_PTB\.zip: has no trees/train\.txt"),
    Case("download-wrong-md5", {"d/sst/trainDevTestTrees_PTB.zip": lambda: zip_bytes(
        {f"trainDevTestTrees_PTB/trees/{s}.txt": TREE for s in ("train", "dev", "test")})},
         lambda t: cli("download", "sst", "--data-dir", f"{t}/d"),
         2, r"^error: {t}/d/sst/train\.txt \(from {t}/d/sst/trainDevTestTrees_PTB\.zip\) has md5 \w+, expected b12d531b"),
    # --- syw table ---
    Case("analysis-missing-file", {}, lambda t: cli("table", f"{t}/nope.csv"),
         2, r"^error: {t}/nope\.csv: no such records file"),
    Case("analysis-unknown-extension", {"r.txt": CSV}, lambda t: cli("table", f"{t}/r.txt"),
         2, r"^error: {t}/r\.txt: unknown records format '\.txt'"),
    Case("analysis-unknown-column", {"r.csv": CSV}, lambda t: cli("table", f"{t}/r.csv", "--metric", "acc"),
         2, r"^error: {t}/r\.csv: no column 'acc' \(have: family, value\)"),
    Case("analysis-nan-metric", {"r.csv": CSV + "a,nan\n"}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 3: column 'value' is empty or NaN"),
    Case("analysis-string-metric", {"r.csv": CSV + "a,0.4\na,abc\n"}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 4: column 'value' holds 'abc', not a finite number"),
    Case("analysis-infinite-duration", {"r.tsv": "family\tvalue\tsecs\na\t0.5\t1\na\t0.6\tinf\n"},
         lambda t: cli("table", f"{t}/r.tsv", "--duration", "secs"),
         2, r"^error: {t}/r\.tsv: line 3: column 'secs' holds .*inf.*, not a finite number"),
    Case("analysis-empty-group", {"r.csv": CSV + ",0.7\n"}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 3: column 'family' is empty"),
    Case("analysis-max-n-0", {"r.csv": CSV}, lambda t: cli("table", f"{t}/r.csv", "--max-n", "0"),
         2, r"argument --max-n: 0 is not a budget: it must be at least 1"),
    Case("analysis-max-n-negative", {"r.csv": CSV}, lambda t: cli("table", f"{t}/r.csv", "--max-n", "-1"),
         2, r"argument --max-n: -1 is not a budget: it must be at least 1"),
    Case("analysis-out-onto-the-records", {"r.csv": CSV}, lambda t: cli("table", f"{t}/r.csv", "--out", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: --out is the records file itself"),
    Case("analysis-empty-csv", {"r.csv": ""}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: the file is empty"),
    Case("analysis-header-only-csv", {"r.csv": "family,value\n\n"}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: no record in the file"),
    Case("analysis-ragged-csv", {"r.csv": CSV + "a,0.1,0.2\n"}, lambda t: cli("table", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: Error tokenizing data\. C error: Expected 2 fields in line 3, saw 3"),
    Case("analysis-jsonl-of-only-torn-lines", {"r.jsonl": '{"family": "a", "tri\n{"family": "a", "trial": 1, "va\n'},
         lambda t: cli("table", f"{t}/r.jsonl"),
         2, r"^error: {t}/r\.jsonl: no record in the file \(a header only, or only blank or torn lines\)"),
    Case("analysis-jsonl-nan-metric", {"r.jsonl": lambda: record_lines(value=float("nan"))},
         lambda t: cli("table", f"{t}/r.jsonl"),
         2, r"^error: {t}/r\.jsonl: record 1: column 'value' is empty or NaN"),
    Case("analysis-jsonl-string-metric", {"r.jsonl": lambda: record_lines(value="high")},
         lambda t: cli("table", f"{t}/r.jsonl"),
         2, r"^error: {t}/r\.jsonl: record 1: column 'value' holds 'high', not a finite number"),
    Case("analysis-jsonl-record-not-an-object", {"r.jsonl": lambda: record_lines() + "[1, 2]\n"},
         lambda t: cli("table", f"{t}/r.jsonl"),
         2, r"^error: {t}/r\.jsonl:2: a record is a JSON object, got list"),
    # --- syw fig ---
    Case("figures-empty-family-records", {"results/sst5/lr.jsonl": "", "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli(*(a.format(t=t) for a in FIG1)),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no ok trial of family 'lr'; the file holds no complete record"),
    Case("figures-empty-family-records-subprocess", {"results/sst5/lr.jsonl": "", "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: shell(*(a.format(t=t) for a in FIG1)),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no ok trial of family 'lr'"),
    Case("figures-missing-family-file", {"results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli(*(a.format(t=t) for a in FIG1)),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no records of family 'lr' of study sst5"),
    Case("figures-family-of-failed-trials", {"results/sst5/lr.jsonl": lambda: study_lines("sst5", "lr", status="failed"),
                                             "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli(*(a.format(t=t) for a in FIG1)),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no ok trial of family 'lr'; the file holds 3 failed trial\(s\)"),
    Case("figures-bad-duration", {"results/sst5/lr.jsonl": lambda: study_lines("sst5", "lr", duration_seconds=None),
                                  "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli(*(a.format(t=t) for a in FIG1)),
         2, r"^error: {t}/results/sst5/lr\.jsonl: trial 0: column 'duration_seconds' is empty"),
    Case("figures-missing-study-records", {"results/README": "no studies yet\n"},
         lambda t: cli(*(a.format(t=t) for a in FIG1)),
         2, r"^error: no trial records in {t}/results/sst5"),
    Case("figures-unknown-figure", {}, lambda t: cli("fig", "9", "--out", f"{t}/out"),
         2, r"argument what: invalid choice: 'fig9'"),
    Case("figures-budgets-empty-family-records", {"results/sst5/lr.jsonl": "", "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli("budgets", "--results", f"{t}/results", "--out", f"{t}/out"),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no ok trial of family 'lr'"),
    Case("figures-report-empty-family-records", {"results/sst5/lr.jsonl": "", "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli("report", "--results", f"{t}/results", "--out", f"{t}/out"),
         2, r"^error: {t}/results/sst5/lr\.jsonl: no ok trial of family 'lr'"),
    # --- syw compare ---
    Case("compare-missing-folder", {"a/lr.jsonl": lambda: study_lines("sst5", "lr")},
         lambda t: cli("compare", f"{t}/a", f"{t}/b"),
         2, r"^error: {t}/b: no such folder"),
    Case("compare-record-without-a-field", {"a/lr.jsonl": lambda: study_lines("sst5", "lr"),
                                            "b/lr.jsonl": lambda: study_lines("sst5", "lr", started_at=None)},
         lambda t: cli("compare", f"{t}/a", f"{t}/b"),
         2, r"^error: {t}/b/lr\.jsonl: ok record 1 \(trial 0\): no 'started_at'"),
    # --- every command's --out into a folder that does not exist ---
    out_into_a_missing_folder("analysis", {"r.csv": CSV}, ["table", "{t}/r.csv"], "o.csv", "table"),
    out_into_a_missing_folder("analysis", {"r.csv": CSV}, ["table", "{t}/r.csv"], "o.csv", "table", in_subprocess=True),
    out_into_a_missing_folder("syw", {"r.csv": CSV}, ["curve", "{t}/r.csv"], "deep", "curves"),
    out_into_a_missing_folder("compare", {"a/lr.jsonl": lambda: study_lines("sst5", "lr"), "b/lr.jsonl": lambda: study_lines("sst5", "lr")},
                              ["compare", "{t}/a", "{t}/b"], "c.md", "report"),
    out_into_a_missing_folder("verdicts", {}, ["verdicts", "--results", "{t}/r"], "v.md", "verdicts"),
    # --- syw provenance ---
    Case("provenance-missing-folder", {}, lambda t: cli("provenance", f"{t}/nowhere"),
         2, r"^error: {t}/nowhere: no such folder"),
    Case("provenance-no-records", {"s/notes.txt": "x\n"}, lambda t: cli("provenance", f"{t}/s"),
         2, r"^error: {t}/s: no trial records \(\*\.jsonl\) there"),
    Case("provenance-record-without-runner-fields", {"s/a.jsonl": lambda: record_lines()},
         lambda t: cli("provenance", f"{t}/s"),
         2, r"^error: {t}/s/a\.jsonl: record 1 \(trial 0\): no 'study' as the runner writes it"),
    # --- the runner: syw run (a subprocess; every case stops before Ray starts) ---
    Case("runner-seed-negative", {}, lambda t: runner(t, "seed=-3"),
         2, r"^error: .*conf/study/toy\.yaml: seed: must be an integer >= 0, got -3"),
    Case("runner-seed-negative-dry-run", {}, lambda t: runner(t, "seed=-3", "dry_run=true"),
         2, r"^error: .*conf/study/toy\.yaml: seed: must be an integer >= 0, got -3"),
    Case("runner-seed-not-an-integer", {}, lambda t: runner(t, "seed=1.5"),
         2, r"^error: .*conf/study/toy\.yaml: seed: must be an integer >= 0, got 1\.5"),
    Case("runner-retry-failed-not-a-bool", {}, lambda t: runner(t, "retry_failed=maybe"),
         2, r"^error: .*conf/study/toy\.yaml: retry_failed: must be true or false, got 'maybe'"),
    Case("runner-ray-verbose-negative", {}, lambda t: runner(t, "ray.verbose=-1"),
         2, r"^error: .*conf/study/toy\.yaml: ray\.verbose: must be an integer >= 0, got -1"),
    Case("runner-results-dir-is-a-file", {"results": "not a folder\n"}, lambda t: runner(t),
         2, r"^error: .*conf/study/toy\.yaml: paths\.results_dir: {t}/results is a file, not a folder"),
    Case("runner-family-dirs-missing", {}, lambda t: runner(t, f"paths.family_dirs=[{t}/nowhere]"),
         2, r"^error: .*conf/study/toy\.yaml: paths\.family_dirs: {t}/nowhere is not a folder"),
    Case("runner-family-yaml-syntax-error", {"fam/broken.yaml": "label: x\nsearch: {x: [1, 2\n"},
         lambda t: runner(t, f"paths.family_dirs=[{t}/fam]", "study.families={toy: broken}"),
         2, r"^error: {t}/fam/broken\.yaml: line \d+: not valid YAML"),
    Case("runner-empty-exclusive-integer-range",
         {"fam/empty.yaml": "inherits: toy\nsearch:\n  width: {distribution: uniform_int, low: 3, high: 3, exclusive_high: true}\n"},
         lambda t: runner(t, f"paths.family_dirs=[{t}/fam]", "study.families={toy: empty}"),
         2, r"^error: {t}/fam/empty\.yaml: search\.width: the range \[3, 3\) is empty"),
    Case("runner-misspelled-fixed-key", {"fam/typo.yaml": "inherits: toy\nfixed:\n  nosie: 0.1\n"},
         lambda t: runner(t, f"paths.family_dirs=[{t}/fam]", "study.families={toy: typo}", "dry_run=true"),
         2, r"^error: {t}/fam/typo\.yaml: nosie: unknown setting: syw\.models\.toy\.train does not read it"),
    Case("runner-searched-value-the-function-refuses",
         {"fam/neg.yaml": "inherits: toy\nsearch:\n  lr: {distribution: uniform, low: 0.0, high: 0.1}\n"},
         lambda t: runner(t, f"paths.family_dirs=[{t}/fam]", "study.families={toy: neg}"),
         2, r"^error: {t}/fam/neg\.yaml: search\.lr: must be at least 1e-12, but the distribution's low end is 0\.0"),
    # --- records met on resume (syw.records.iter_records, one schema) ---
    *[Case(f"runner-records-{name}", {"results/toy/toy.jsonl": lambda line=line: record_lines() + line}, lambda t: runner(t),
           2, rf"^error: {{t}}/results/toy/toy\.jsonl:2: {message}") for name, line, message in [
        ("trial-a-string", '{"trial": "abc", "status": "ok", "value": 0.5, "params": {}}\n',
         r"trial must be a non-negative integer, got 'abc'"),
        ("trial-null", '{"trial": null, "status": "ok", "value": 0.5, "params": {}}\n',
         r"trial must be a non-negative integer, got None"),
        ("no-trial", '{"status": "ok", "value": 0.5, "params": {}}\n', r"trial must be a non-negative integer, got None"),
        ("trial-a-float", '{"trial": 3.7, "status": "ok", "value": 0.5, "params": {}}\n',
         r"trial must be a non-negative integer, got 3\.7"),
        ("params-a-string", '{"trial": 1, "status": "ok", "value": 0.5, "params": "oops"}\n',
         r"params must be an object or null, got 'oops'"),
        ("a-json-array", "[1, 2]\n", r"a record is a JSON object, got list"),
        ("status-upper-case", '{"trial": 1, "status": "OK", "value": 0.5, "params": {}}\n',
         r"status must be one of ok, failed, got 'OK'"),
        ("ok-value-nan", '{"trial": 1, "status": "ok", "value": NaN, "params": {}}\n',
         r"an ok record's value must be a finite number, got nan"),
        ("ok-value-a-string", '{"trial": 1, "status": "ok", "value": "0.5", "params": {}}\n',
         r"an ok record's value must be a finite number, got '0\.5'"),
    ]],
    Case("figures-records-value-a-string", {"results/sst5/lr.jsonl": lambda: study_lines("sst5", "lr", value="0.4"),
                                            "results/sst5/cnn.jsonl": lambda: study_lines("sst5", "cnn")},
         lambda t: cli(*[a.format(t=t) for a in FIG1]),
         2, r"^error: {t}/results/sst5/lr\.jsonl:1: an ok record's value must be a finite number, got '0\.4'"),
    # --- syw curve (syw curve): anyone's trials, Ray Tune folders, Optuna studies ---
    Case("syw-missing-file", {}, lambda t: cli("curve", f"{t}/nope.csv"),
         2, r"^error: {t}/nope\.csv: no such records file"),
    Case("syw-two-score-columns", {"r.csv": "model,val_acc,val_f1\na,0.5,0.4\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: several columns could hold the validation score: val_acc, val_f1; pass --metric"),
    Case("syw-two-score-columns-subprocess", {"r.csv": "model,val_acc,val_f1\na,0.5,0.4\n"},
         lambda t: shell("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: several columns could hold the validation score: val_acc, val_f1"),
    Case("syw-no-score-column", {"r.csv": "model,lr,train_acc\na,0.1,0.9\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: no numeric column is named like a validation score .*\(columns: model, lr, train_acc\)"),
    Case("syw-unknown-metric", {"r.csv": CSV}, lambda t: cli("curve", f"{t}/r.csv", "--metric", "acc"),
         2, r"^error: {t}/r\.csv: no column 'acc' for the score \(have: family, value\)"),
    Case("syw-two-group-columns", {"r.csv": "arch,method,val_acc\na,x,0.5\nb,y,0.6\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: several columns could name the groups: arch \(a, b\); method \(x, y\); pass --group"),
    Case("syw-string-score", {"r.csv": CSV + "a,high\n"}, lambda t: cli("curve", f"{t}/r.csv", "--metric", "value"),
         2, r"^error: {t}/r\.csv: line 3: column 'value' holds 'high', not a finite number"),
    Case("syw-database-path-not-a-url", {"s.db": b"x"}, lambda t: cli("curve", f"{t}/s.db"),
         2, r"^error: {t}/s\.db: a database file; give an Optuna study as its storage URL, sqlite:///{t}/s\.db"),
    Case("syw-x-time-without-durations", {"r.csv": CSV}, lambda t: cli("curve", f"{t}/r.csv", "--x", "time"),
         2, r"^error: {t}/r\.csv: --x time needs a training-time column; pass --duration COLUMN"),
    Case("syw-bands-without-bounds", {"r.csv": "family,value\na,5\na,7\n"},
         lambda t: cli("curve", f"{t}/r.csv", "--bands"),
         2, r"^error: {t}/r\.csv: the bands need the metric's bounds and the scores range from 5 to 7, .*pass --bounds"),
    Case("syw-forecast-of-three-trials", {"r.csv": "family,value\na,0.5\na,0.6\na,0.7\n"},
         lambda t: cli("curve", f"{t}/r.csv", "--forecast", "10"),
         2, r"^error: {t}/r\.csv: group a: a forecast needs at least 5 scores that are not all equal, got 3"),
    Case("syw-target-not-a-number", {"r.csv": CSV}, lambda t: cli("curve", f"{t}/r.csv", "--target", "high"),
         2, r"argument --target: 'high' is not a target"),
    Case("syw-ray-folder-without-trials", {"exp/notes.txt": "nothing ran\n"}, lambda t: cli("curve", f"{t}/exp"),
         2, r"^error: {t}/exp: no trial folder with a result\.json"),
    Case("syw-ray-result-not-an-object", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n[0.5]\n"},
         lambda t: cli("curve", f"{t}/exp"),
         2, r"^error: {t}/exp/t1/result\.json:2: a record is a JSON object, got list"),
    Case("syw-ray-trial-without-the-score", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n",
                                             "exp/t2/result.json": json.dumps({"loss": 0.5}) + "\n"},
         lambda t: cli("curve", f"{t}/exp"),
         2, r"^error: {t}/exp/t2/result\.json: no result holds a number under 'val_acc'"),
    Case("syw-ray-bad-params-json", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n", "exp/t1/params.json": "{x\n"},
         lambda t: cli("curve", f"{t}/exp"),
         2, r"^error: {t}/exp/t1/params\.json: not JSON \(line 1: "),
    Case("syw-optuna-missing-database", {}, lambda t: cli("curve", f"sqlite:///{t}/nope.db"),
         2, r"^error: sqlite:///{t}/nope\.db: no such database file {t}/nope\.db"),
    Case("syw-optuna-not-sqlite", {"s.db": "just text\n"}, lambda t: cli("curve", f"sqlite:///{t}/s.db"),
         2, r"^error: sqlite:///{t}/s\.db: {t}/s\.db is not an SQLite database"),
    Case("syw-optuna-not-an-optuna-database", {"s.db": lambda: sqlite_bytes("CREATE TABLE runs (x REAL)")},
         lambda t: cli("curve", f"sqlite:///{t}/s.db"),
         2, r"^error: sqlite:///{t}/s\.db: not an Optuna storage \(no 'studies' table; tables: runs\)"),
    # --- ELMo sources and the biLM pretraining text (syw.models.elmo.sources, .checksum, data.bilm_corpus, syw pretrain-bilm) ---
    Case("elmo-bilm-folder-missing", {}, lambda t: call("syw.models.elmo.sources:resolve_elmo", "bilm/none", t / "d", t / "c"),
         DataMissingError, r"^biLM file {t}/c/bilm/none/options\.json not found: train it with `"
                           r"syw pretrain-bilm --out {t}/c/bilm/none`"),
    Case("elmo-weights-changed-since-written", {"w.hdf5": b"not the trained weights", "w.hdf5.sha256": "0" * 64 + "  w.hdf5\n"},
         lambda t: call("syw.models.elmo.checksum:weights_sha256", t / "w.hdf5"),
         DataError, r"^{t}/w\.hdf5: sha256 [0-9a-f]{64}, but {t}/w\.hdf5\.sha256 says 0{64}; the weights changed"),
    Case("bilm-corpus-context-not-a-string", {"s.json": json.dumps({"data": [{"paragraphs": [{"context": 5}]}]})},
         lambda t: call("syw.data.bilm_corpus:squad_contexts", t / "s.json"),
         DataError, r"^{t}/s\.json: article 0, paragraph 0: 'context' must be a str, got int 5"),
    Case("bilm-corpus-paragraphs-missing", {"s.json": json.dumps({"data": [{"title": "x"}]})},
         lambda t: call("syw.data.bilm_corpus:squad_contexts", t / "s.json"),
         DataError, r"^{t}/s\.json: article 0: 'paragraphs' must be a list, got missing"),
    Case("pretrain-bilm-squad-not-json", {"s.json": '{"data": [\n'},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--data-dir", str(t), "--squad-file", f"{t}/s.json"),
         2, r"^error: {t}/s\.json:2: not valid JSON"),
    Case("pretrain-bilm-squad-file-missing", {},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--data-dir", str(t), "--squad-file", f"{t}/nope.json"),
         2, r"^error: {t}/nope\.json not found: give a SQuAD v1\.1 file"),
    Case("pretrain-bilm-text-not-utf8", {"c.txt": b"caf\xe9 au lait\n"},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--text", f"{t}/c.txt"),
         2, r"^error: {t}/c\.txt: not UTF-8 text \(byte 3\)"),
    Case("pretrain-bilm-text-empty", {"c.txt": "\n  \n"},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--text", f"{t}/c.txt"),
         2, r"^error: {t}/c\.txt: no text: give paragraphs one per line"),
    Case("pretrain-bilm-text-too-few-documents", {"c.txt": "One document.\nStill the same one.\n"},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--text", f"{t}/c.txt", "--heldout-articles", "1"),
         2, r"^error: {t}/c\.txt: 1 document\(s\), so --heldout-articles must be between 1 and 0 \(got 1\)"),
    Case("pretrain-bilm-squad-too-few-articles", {"s.json": json.dumps({"data": [{"paragraphs": [{"context": "A b."}]}]})},
         lambda t: cli("pretrain-bilm", "--out", f"{t}/b", "--data-dir", str(t), "--squad-file", f"{t}/s.json"),
         2, r"^error: {t}/s\.json: 1 article\(s\), so --heldout-articles must be between 1 and 0 \(got 4\)"),
]


def runner(t: Path, *overrides: str) -> Outcome:
    """``syw run study=toy`` with its results in ``t/results`` and ``overrides``."""
    return shell("run", "study=toy", "trials=2", f"paths.results_dir={t}/results", *overrides)

def cli(*argv: str) -> Outcome:
    """``syw *argv`` in this process: its exit status and what it wrote to stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = syw.main(list(argv))
        except SystemExit as stop:  # argparse
            status = stop.code
    return status, err.getvalue()


def shell(*argv: str) -> Outcome:
    """``python -m syw *argv`` in a subprocess: its exit status and stderr (which must hold no traceback)."""
    done = subprocess.run([sys.executable, "-m", "syw", *argv], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


def call(target: str, *args: Any, **kwargs: Any) -> Outcome:
    """``module:function(*args, **kwargs)``: the type and message of what it raised."""
    module, name = target.split(":")
    try:
        result = getattr(importlib.import_module(module), name)(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the case says which type it expects
        return type(err), str(err)
    return 0, f"no error; returned {result!r:.200}"


def real_sst_head(split: str, n: int) -> str:
    """The first ``n`` trees of the real SST ``split`` (a truncated copy of the official file)."""
    from tests.fixtures_sst import real_data_dir

    if real_data_dir() is None:
        pytest.skip("set SYW_DATA_DIR to a folder with sst/{train,dev,test}.txt")
    with open(real_data_dir() / "sst" / f"{split}.txt", encoding="utf-8") as f:
        return "".join(next(f) for _ in range(n))


def squad_text(context: str | None = "The cat sat.", qid: str | None = "q1", question: str = "Who sat?",
               answers: list | None = ({"text": "cat", "answer_start": 4},)) -> str:
    """A one-question SQuAD v1.1 file; a field given as None is left out."""
    present = lambda fields: {k: v for k, v in fields.items() if v is not None}  # noqa: E731
    qa = present({"id": qid, "question": question, "answers": None if answers is None else list(answers)})
    paragraph = present({"context": context, "qas": [qa]})
    return json.dumps({"version": "1.1", "data": [{"title": "a", "paragraphs": [paragraph]}]})


def glove_lines(n: int) -> bytes:
    """``n`` GloVe lines of distinct words and numbers (they do not compress to nothing)."""
    return "".join(f"w{i} {i / 7:.6f} {i / 11:.6f} {i / 13:.6f}\n" for i in range(n)).encode()


def zip_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buffer.getvalue()


def record_lines(**fields: Any) -> str:
    """One JSONL trial record of family ``a`` with ``fields`` replaced (json writes NaN as ``NaN``)."""
    record = {"family": "a", "trial": 0, "status": "ok", "value": 0.5, "params": {}, **fields}
    return json.dumps(record) + "\n"


def study_lines(study: str, family: str, n: int = 3, status: str = "ok", **fields: Any) -> str:
    """``n`` records of ``family`` as the runner writes them (tests.fake_records), with ``fields`` set (None: left out)."""
    from tests.fake_records import write_study

    with tempfile.TemporaryDirectory() as folder:
        path = write_study(Path(folder), study, {family: (0.35, 0.03, 2.0)}, n=n) / f"{family}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["status"] = status
        for key, value in fields.items():
            if value is None:
                del record[key]
            else:
                record[key] = value
    return "".join(json.dumps(r) + "\n" for r in records)


def sqlite_bytes(*statements: str) -> bytes:
    """The bytes of an SQLite database after ``statements``."""
    import sqlite3

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.db"
        with contextlib.closing(sqlite3.connect(path)) as db:
            for statement in statements:
                db.execute(statement)
            db.commit()
        return path.read_bytes()


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_bad_input(case: Case, tmp_path: Path):
    t = tmp_path
    for relative, content in case.files.items():
        content = content() if callable(content) else content
        path = t / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = snapshot(t)
    with warnings.catch_warnings(record=True):  # e.g. a torn record line skipped: a note, not the error
        warnings.simplefilter("always")
        outcome, message = case.call(t)
    pattern = case.names.replace("{t}", re.escape(str(t)))
    if isinstance(case.expect, int):
        assert outcome == case.expect, message
        errors = [line for line in message.splitlines() if "error:" in line]
        assert len(errors) == 1, f"expected one error line on stderr, got:\n{message}"
        assert re.search(pattern, errors[0]), f"{errors[0]!r} does not match {pattern!r}"
        assert "Traceback" not in message
    else:
        assert isinstance(outcome, type) and issubclass(outcome, case.expect), (outcome, message)
        assert "\n" not in message, message
        assert re.search(pattern, message), f"{message!r} does not match {pattern!r}"
    assert snapshot(t) == before, "the folder changed: something was written, changed or lost"


def test_the_table_covers_every_entry_point_and_30_cases():
    kinds = {c.id.split("-")[0] for c in CASES}
    assert {"sst", "glove", "download", "analysis", "figures", "compare", "runner", "provenance"} <= kinds
    assert len(CASES) >= 30 and len({c.id for c in CASES}) == len(CASES)
    assert any("subprocess" in c.id for c in CASES)
