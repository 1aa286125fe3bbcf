"""benchmarks/lm_timing.py: the test pass timed on a prefix and scaled to the split, by hand."""

import pytest
import torch

from benchmarks.lm_timing import main, prefix
from syw.models.tasks import lm as task


def stream(tokens: int) -> task.TokenStream:
    ids = torch.arange(tokens)
    return task.stream_of(ids, eos=0)


def test_prefix_keeps_the_first_windows_and_scales_by_hand():
    whole = stream(1000)  # batch 1, bptt 35: ceil(1000 / 35) = 29 windows
    part, scale = prefix(whole, batch_size=1, bptt=35, windows=10)
    assert len(part) == 350 and scale == pytest.approx(2.9)
    assert torch.equal(part.targets, whole.targets[:350]) and torch.equal(part.inputs, whole.inputs[:350])
    assert len(list(task.windows(part, 1, 35))) == 10


def test_prefix_of_all_windows_or_none_is_the_split():
    whole = stream(1000)
    for windows in (None, 29, 40):
        part, scale = prefix(whole, batch_size=1, bptt=35, windows=windows)
        assert part is whole and scale == 1.0


@pytest.mark.parametrize("option", ["--trials", "--batches", "--test-windows"])
def test_counts_below_one_end_in_one_line_and_status_2(option, capsys):
    with pytest.raises(SystemExit) as stop:
        main([option, "0"])
    assert stop.value.code == 2 and f"argument {option}: 0 is not a budget: it must be at least 1" in capsys.readouterr().err
