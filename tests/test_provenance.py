"""PROVENANCE.md is generated from the records and names commands, commits, hardware and data checksums."""
from experiments.provenance import main
from tests.fake_records import write_study
from tests.fixtures_sst import write_sst_fixture


def test_provenance_from_records(tmp_path):
    folder = write_study(tmp_path / "results", "sst5", {"lr": (0.3, 0.02, 1.0), "cnn": (0.3, 0.05, 30.0)}, n=4)
    data = write_sst_fixture(tmp_path / "data")
    main([str(folder), "--data-dir", str(data)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "| lr | 4 | 4 | 0 |" in text and "| cnn | 4 | 4 | 0 |" in text
    assert "`python -m experiments.run study=sst5` (8 trials)" in text
    assert "`abc123` (8 trials)" in text and "Test CPU, 2 cores, GPU: none" in text
    from data.download import file_digest

    assert f"`sst/train.txt`: {file_digest(data / 'sst' / 'train.txt', 'md5')}" in text
