"""benchmarks/deterministic_ops.py: torch's list of ops made deterministic, matched against traced
aten calls, and the table in docs/gpu.md that it prints."""
import re
from pathlib import Path

import pytest
import torch

from benchmarks import deterministic_ops as ops
from syw.core.entry import run_main

DOCS = Path(__file__).resolve().parents[2] / "docs" / "gpu.md"


@pytest.mark.parametrize(("call", "entries"), [
    (("index_select", "default", True), ["index_select (its backward)"]),
    (("index_select", "default", False), []),  # no backward, nothing to make deterministic
    (("gather", "default", True), ["gather (its backward)"]),
    (("scatter_", "src", False), ["scatter"]),
    (("scatter", "value", False), []),  # a scalar source: not in torch's list
    (("scatter_add_", "default", False), ["scatter_add"]),
    (("index_put_", "default", False), ["index_put"]),
    (("index_put_:accumulate", "default", False), []),
    (("convolution", "default", True), ["convolution"]),
    (("mm", "default", True), []),
])
def test_a_call_matches_the_entries_of_torchs_list(call, entries):
    assert ops.made_deterministic({call}) == entries


def test_the_trace_sees_forward_and_backward_ops_and_the_accumulate_flag():
    weight = torch.randn(5, 3, requires_grad=True)
    index = torch.tensor([0, 2, 2])
    with ops.OpTrace() as trace:
        out = weight.index_select(0, index).sum() + weight[index].sum()
        out.backward()
        torch.zeros(3).index_put_((torch.tensor([1]),), torch.ones(1))
    names = {(name, grad) for name, _, grad in trace.calls}
    assert {("index_select", True), ("index_add", False), ("index_put_", False), ("index_put:accumulate", False)} <= names
    assert ops.made_deterministic(trace.calls) == ["index_put", "index_add", "index_select (its backward)"]


def test_an_unknown_family_is_one_line_and_status_2(capsys):
    assert run_main(ops.main, ["--families", "no_such_family"]) == 2
    assert capsys.readouterr().err.strip() == f"error: deterministic_ops: --families: no family file no_such_family.yaml in {ops.FAMILY_DIR}"


@pytest.mark.slow
def test_the_docs_table_is_what_the_script_prints(capsys):
    assert run_main(ops.main, []) == 0
    printed = capsys.readouterr().out
    rows = re.findall(r"^\| `[a-z0-9_]+` \|.*\|$", printed, flags=re.M)
    assert len(rows) == len(ops.DEFAULT)
    docs = DOCS.read_text()
    assert all(row in docs.splitlines() for row in rows), printed
