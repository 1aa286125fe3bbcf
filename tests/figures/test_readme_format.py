"""figures/readme_format.render: each kind's default format, a diverged perplexity included."""
from syw.pages.readme_format import Value, render


def test_scores_to_three_decimals_below_a_million_then_with_an_exponent():
    assert render(Value(0.5, "score"), None) == "0.500"
    assert render(Value(878311.25, "score"), None) == "878311.250"
    assert render(Value(1.0141e34, "score"), None) == "1.014e+34"
    assert render(Value(-2.5e6, "score"), None) == "-2.500e+06"


def test_an_explicit_format_is_kept_for_any_size():
    assert render(Value(1.0e7, "score"), ",.0f") == "10,000,000"
    assert render(Value(10_000_000, "count"), None) == "10,000,000"
