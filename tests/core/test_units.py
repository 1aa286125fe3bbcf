"""syw/units: how durations, counts, runs of integers and scores are written for people."""
import math

from syw.core.units import count, human_duration, score, spans, stretches_text


def test_durations_take_the_largest_unit_that_fits():
    assert [human_duration(s) for s in (42, 210, 4320, 172800)] == ["42 s", "3.5 min", "1.2 h", "2.0 d"]
    assert human_duration(None) == human_duration(math.nan) == "-"


def test_sub_second_durations_are_milliseconds_never_0_s():
    """Issue 65: "mlp overtakes sgd at 0 s of training" said nothing; a fast model's times are milliseconds."""
    assert [human_duration(s) for s in (0.42, 0.042, 0.0042, 0.00042, 0.9996, 0)] == \
        ["420 ms", "42 ms", "4.2 ms", "0.42 ms", "1 s", "0 s"]


def test_spans_and_counts():
    assert spans([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"
    assert [count(1, "trial"), count(2, "trial"), count(0.5, "GPU")] == ["1 trial", "2 trials", "0.5 GPUs"]
    assert stretches_text([("nas", 1, 4), ("lstm", 5, 20), ("rhn", 21, 21)]) == "nas at n = 1-4; lstm at n = 5-20; rhn at n = 21"


def test_scores_take_an_exponent_from_a_million_on():
    assert score(176.6149) == "176.61" and score(176.6149, 3) == "176.615"
    assert score(999_999.994) == "999999.99" and score(1e6) == "1.000e+06"
    assert score(5.0836e32) == "5.084e+32" and score(-2.5e6, 3) == "-2.500e+06"
    assert score(math.inf) == "inf"
