"""benchmarks/core_rate.py: processes released together each report one rate; bad options are one error line."""
import pytest

from benchmarks.core_rate import main, rates_at_once


def test_each_process_released_at_once_reports_a_positive_rate():
    rates = rates_at_once(2, repeat=2)
    assert len(rates) == 2 and all(r > 0 for r in rates)


def test_the_summary_compares_each_count_with_the_first(capsys):
    assert main(["--processes", "1", "--rounds", "1", "--repeat", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("1 at once: median") and out[-1].endswith("over 1 timing = 1.00 of 1 at once")


def test_zero_processes_is_refused():
    with pytest.raises(SystemExit) as err:
        main(["--processes", "0"])
    assert err.value.code == 2
