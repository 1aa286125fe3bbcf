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


def test_provenance_lists_the_files_of_the_studys_dataset_block(tmp_path, monkeypatch):
    """The data set comes from conf/study/<study>.yaml, not from the study's name."""
    folder = write_study(tmp_path / "results", "sst2_bcn", {"glove": (0.8, 0.02, 1.0)}, n=2)
    data = write_sst_fixture(tmp_path / "data")
    main([str(folder), "--data-dir", str(data)])
    assert "`sst/dev.txt`" in (folder / "PROVENANCE.md").read_text()
    other = write_study(tmp_path / "results", "toy", {"toy": (0.5, 0.1, 1.0)}, n=2)
    main([str(other), "--data-dir", str(data)])
    assert "sst/" not in (other / "PROVENANCE.md").read_text()  # the toy reads no data set
    import experiments.provenance as provenance

    monkeypatch.setattr(provenance, "study_config", lambda study: {"dataset": {"name": "sst"}})
    main([str(other), "--data-dir", str(data)])
    assert "`sst/dev.txt`" in (other / "PROVENANCE.md").read_text()  # a study of any name reading SST


def test_provenance_lists_the_files_trials_read_and_wrote(tmp_path):
    import json

    folder = write_study(tmp_path / "results", "squad_reduced", {"bidaf": (0.1, 0.02, 1.0)}, n=3)
    path = folder / "bidaf.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row.update(inputs_sha256={"squad/train-v1.1.reconstructed.json": "ab12"},
                   outputs={"predictions": f"predictions/bidaf-{row['trial']}.json"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    main([str(folder)])
    text = (folder / "PROVENANCE.md").read_text()
    assert "- `squad/train-v1.1.reconstructed.json`: sha256 ab12 (3 trials)" in text
    assert "- predictions: 3 trials" in text
