"""The reading options as one typed value (issue 72): checked when made, the same for the command and the API."""
import dataclasses

import pytest

from syw.curve import api
from syw.curve.command import parser, reading
from syw.curve.prepare import Reading, prepare


@pytest.mark.parametrize("bad, message", [({"pick": "worst"}, "pick must be one of best, last"),
                                          ({"direction": "up"}, "direction must be one of None, max, min"),
                                          ({"failed": "skip"}, "failed must be one of")])
def test_a_bad_option_is_refused_when_made(bad, message):
    with pytest.raises(ValueError, match=message):
        Reading(**bad)


def test_one_value_for_the_command_and_the_api(tmp_path):
    path = tmp_path / "trials.csv"
    path.write_text("model,acc,seconds\n" + "".join(f"{'ab'[i % 2]},{0.5 + i / 100},{i + 1}\n" for i in range(20)))
    args = parser().parse_args(["curve", str(path), "--metric", "acc", "--group", "model", "--failed", "worst"])
    made = reading(args)
    assert made == Reading(metric="acc", group="model", failed="worst")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.metric = "seconds"
    by_command, by_api = prepare([str(path)], made), api.read(path, metric="acc", group="model", failed="worst")
    assert [g.scores.tolist() for g in by_command.groups] == [g.scores.tolist() for g in by_api.groups]
    assert [g.name for g in by_command.groups] == ["a", "b"] and by_command.groups[1].scores[-1] == pytest.approx(0.69)
