"""``syw curve results/<study>`` labels each family from the family file its records name, also when the
records name the file where it stood before the family files were grouped by case study."""
import json

from syw.curve.readers.records import read_study


def _study(tmp_path, family_file: str):
    (tmp_path / "conf" / "search_space" / "sst5").mkdir(parents=True)
    (tmp_path / "conf" / "search_space" / "sst5" / "sst5_cnn.yaml").write_text("label: CNN\n")
    folder = tmp_path / "results" / "s"
    folder.mkdir(parents=True)
    record = {"study": "s", "family": "cnn", "family_file": family_file, "trial": 0, "status": "ok", "value": 0.4,
              "direction": "max", "duration_seconds": 1.0}
    (folder / "cnn.jsonl").write_text(json.dumps(record) + "\n")
    return folder


def test_the_label_comes_from_the_family_file_the_records_name(tmp_path):
    assert read_study(_study(tmp_path, "conf/search_space/sst5/sst5_cnn.yaml")).frame["family"].tolist() == ["CNN"]


def test_records_naming_the_flat_path_find_the_file_in_its_case_study_folder(tmp_path):
    assert read_study(_study(tmp_path, "conf/search_space/sst5_cnn.yaml")).frame["family"].tolist() == ["CNN"]


def test_without_the_file_the_short_name_is_the_label(tmp_path):
    assert read_study(_study(tmp_path, "conf/search_space/gone.yaml")).frame["family"].tolist() == ["cnn"]
