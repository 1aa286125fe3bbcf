"""Issue 75 item 8: ``syw verdicts`` reads a study's records for several claims; each floor note is said once."""
import collections
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_verdicts_say_each_floor_note_once(tmp_path):
    done = subprocess.run([sys.executable, "-m", "syw", "verdicts", "--out", str(tmp_path / "v.md")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    notes = collections.Counter(line for line in done.stderr.splitlines() if "count at the floor" in line)
    assert notes and max(notes.values()) == 1, notes.most_common(2)
