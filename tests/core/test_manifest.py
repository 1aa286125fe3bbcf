"""Tamper-evident records (issue 75, item 23): each records file's manifest of chained hashes names the first line
edited, removed or appended by hand; the writer appends a record's hash with the record, before it, and rolls both
back when a write fails; a run stopped between the two leaves a hash the next writer drops."""
import errno
import hashlib
import json
import os
import shutil
from datetime import date
from pathlib import Path

import pytest

import syw.core.manifest as manifest
import syw.core.records as records
from syw.core.manifest import HEADER, Chain, Mismatch, check, manifest_of, require_verified
from syw.core.paths import REPO
from syw.core.records import RecordError, RecordsWriteError, RecordsWriter, claim, iter_records

ONE = {"trial": 50, "status": "ok", "value": 0.41, "params": {"lr": 0.1}}


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(records, "_NOTED", set())
    monkeypatch.setattr(records, "_CLAIMED", {})
    monkeypatch.setattr(manifest, "_WARNED", set())
    monkeypatch.delenv(manifest.ALLOW_ENV, raising=False)
    yield
    for lock in records._CLAIMED.values():
        lock.release()


@pytest.fixture
def lr(tmp_path) -> Path:
    """A copy of the committed sst5 LR records (50 lines) and their manifest."""
    for name in ("lr.jsonl", "lr.jsonl.sha256"):
        shutil.copy(REPO / "results" / "sst5" / name, tmp_path / name)
    return tmp_path / "lr.jsonl"


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def edit_score(path: Path, number: int) -> None:
    """Line ``number``'s value changed in its last digit, as an edit by hand would."""
    rows = lines(path)
    record = json.loads(rows[number - 1])
    record["value"] = round(record["value"] + 0.001, 6)
    rows[number - 1] = (json.dumps(record) + "\n").encode()
    path.write_bytes(b"".join(rows))


def test_the_chain_is_sha256_of_the_hash_before_and_the_line(lr):
    digest = b""
    for line in lines(lr):
        digest = hashlib.sha256(digest + line).digest()
    written = manifest_of(lr).read_text().splitlines()
    assert written[0].startswith(HEADER) and len(written) == 51 and written[-1] == digest.hex()
    assert check(lr).ok and check(lr).lines == 50


def test_an_edited_score_is_named_by_its_line(lr):
    edit_score(lr, 17)
    found = check(lr)
    assert (found.ok, found.matched) == (False, 16)
    assert found.text() == f"MISMATCH {lr}:17: does not match its hash (lr.jsonl.sha256:18): changed since it was written"
    with pytest.raises(Mismatch, match=f"^{lr}:17: does not match its hash"):
        require_verified(lr.parent)


def test_truncated_records_or_manifest_are_found(lr):
    mark = manifest_of(lr)
    whole, hashes = lr.read_bytes(), mark.read_bytes()
    lr.write_bytes(b"".join(lines(lr)[:-1]))  # the last record removed
    assert (check(lr).matched, check(lr).problem.split(":")[0]) == (49, "missing")
    assert "the manifest holds 50 hashes, the file 49 lines" in check(lr).problem
    lr.write_bytes(whole)
    mark.write_bytes(b"".join(lines(mark)[:-1]))  # the last hash removed
    assert (check(lr).matched, check(lr).problem) == (49, "not in the manifest: appended without its hash (by hand, or "
                                                          "not by syw run)")
    mark.write_bytes(hashes[:-20])  # cut inside the last hash
    assert (check(lr).matched, check(lr).problem) == (49, "its hash (lr.jsonl.sha256:51) is no sha256 hash: the manifest "
                                                          "was edited or cut off")
    mark.write_bytes(hashes)
    assert check(lr).ok


def test_a_record_appended_by_hand_is_found_and_the_writer_refuses_to_go_on(lr, monkeypatch, capsys):
    with lr.open("a") as handle:
        handle.write(json.dumps(ONE) + "\n")
    assert (check(lr).matched, check(lr).problem.startswith("not in the manifest")) == (50, True)
    with pytest.raises(RecordError, match=f"^{lr}:51: not in the manifest.*SYW_ALLOW_UNVERIFIED=1 appends anyway$"):
        RecordsWriter(lr).__enter__()
    records._Lock(records._lock_path(lr), lr).release()  # the refusal released the lock
    before = manifest_of(lr).read_bytes()
    monkeypatch.setenv(manifest.ALLOW_ENV, "1")
    with RecordsWriter(lr) as writer:
        writer.append({**ONE, "trial": 51})
    assert f"warning: {lr}:51: not in the manifest" in capsys.readouterr().err
    assert manifest_of(lr).read_bytes().startswith(before) and len(lines(manifest_of(lr))) == 52
    assert check(lr).matched == 50  # still found: the line appended by hand stays unattested


def test_appending_through_the_writer_keeps_the_manifest_valid(lr, tmp_path):
    with RecordsWriter(lr) as writer:
        writer.append(ONE)
        writer.append({**ONE, "trial": 51, "value": 0.42})
    assert check(lr).ok and check(lr).lines == 52
    fresh = tmp_path / "new" / "cnn.jsonl"
    with RecordsWriter(fresh) as writer:
        for trial in range(3):
            writer.append({**ONE, "trial": trial})
    header = manifest_of(fresh).read_text().splitlines()[0]
    assert header == f"{HEADER}; begun {date.today().isoformat()} with the records file"
    assert check(fresh).ok and [r["trial"] for r in iter_records(fresh)] == [0, 1, 2]


def test_a_file_without_a_manifest_warns_once_and_its_next_record_starts_one(lr, capsys):
    manifest_of(lr).unlink()
    require_verified(lr.parent)
    require_verified(lr.parent)
    assert capsys.readouterr().err == (f"warning: 1 records file without a manifest (*.jsonl.sha256), read unverified: {lr} "
                                       "(syw run starts one at its next record)\n")
    with RecordsWriter(lr) as writer:
        writer.append(ONE)
    header = manifest_of(lr).read_text().splitlines()[0]
    assert header.endswith(f"begun {date.today().isoformat()} from the 50 lines already there, which it attests only from then")
    assert check(lr).ok and check(lr).lines == 51


def _fail_on(monkeypatch, name: str, suffix: str, error: int = errno.ENOSPC) -> None:
    """os.<name> fails with ``error`` for the file whose name ends with ``suffix`` only."""
    real = getattr(os, name)

    def fail(fd, *args):  # os.write(fd, data), os.fsync(fd)
        if os.readlink(f"/proc/self/fd/{fd}").endswith(suffix):
            raise OSError(error, os.strerror(error))
        return real(fd, *args)

    monkeypatch.setattr(records.os, name, fail)


def test_a_hash_that_cannot_be_written_records_nothing(lr, monkeypatch):
    before, hashes = lr.read_bytes(), manifest_of(lr).read_bytes()
    with RecordsWriter(lr) as writer:
        _fail_on(monkeypatch, "write", ".sha256")
        with pytest.raises(RecordsWriteError) as caught:
            writer.append(ONE)
        monkeypatch.undo()
    assert (lr.read_bytes(), manifest_of(lr).read_bytes()) == (before, hashes)
    assert caught.value.filename == str(manifest_of(lr)) and caught.value.strerror == (
        "cannot write trial 50's record's hash (No space left on device; the manifest was rolled back to its last hash); "
        "nothing was recorded for it: make room (or fix the disk), then run the same command")


@pytest.mark.parametrize("adopted", [False, True])
def test_a_record_that_cannot_be_written_takes_its_hash_back(lr, monkeypatch, adopted):
    if adopted:  # the first record of a file without a manifest: the manifest it made goes too
        manifest_of(lr).unlink()
    before, hashes = lr.read_bytes(), manifest_of(lr).read_bytes() if not adopted else None
    with RecordsWriter(lr) as writer:
        _fail_on(monkeypatch, "write", ".jsonl", errno.EIO)
        with pytest.raises(RecordsWriteError, match=r"cannot write trial 50's record \(Input/output error\); the file was "
                                                    "rolled back to its last complete line; nothing was recorded"):
            writer.append(ONE)
        monkeypatch.undo()
        writer.append({**ONE, "value": 0.43})  # the disk is back: the same writer goes on
    assert lr.read_bytes() == before + (json.dumps({**ONE, "value": 0.43}) + "\n").encode()
    assert check(lr).ok and (adopted or manifest_of(lr).read_bytes().startswith(hashes))


def test_a_run_stopped_between_a_hash_and_its_record_leaves_a_hash_the_next_writer_drops(lr, capsys):
    Chain(lr).add((json.dumps(ONE) + "\n").encode())  # the hash written; the process stops before the record
    assert check(lr).matched == 50 and check(lr).problem.startswith("missing: the manifest holds 51 hashes, the file 50")
    claim(lr)  # a runner holding the lock: an append in flight, not a removal
    assert check(lr).ok
    with RecordsWriter(lr) as writer:
        assert check(lr).ok
        writer.append({**ONE, "value": 0.44})
    assert check(lr).ok and check(lr).lines == 51 and len(lines(manifest_of(lr))) == 52
    assert capsys.readouterr().err == (f"warning: {manifest_of(lr)}:52: removed the last hash, whose record was never written "
                                       "(its run stopped between the two)\n")


def test_a_record_cut_off_mid_line_is_removed_with_its_hash(lr):
    line = (json.dumps(ONE) + "\n").encode()
    Chain(lr).add(line)
    with lr.open("ab") as handle:
        handle.write(line[:20])  # the record's write cut off
    assert check(lr).matched == 50 and "(it is the last line, cut off mid-record" in check(lr).problem
    with RecordsWriter(lr):
        pass
    assert check(lr).ok and check(lr).lines == 50


def test_a_removed_records_file_is_found_by_its_manifest(lr):
    lr.unlink()
    found = require_found(lr.parent)
    assert found == [f"MISMATCH {lr}:1: the records file is gone; lr.jsonl.sha256 holds 50 hashes"]


def require_found(folder: Path) -> list[str]:
    return [c.text() for c in manifest.check_folder(folder)]
