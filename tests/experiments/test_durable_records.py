"""Records survive a full disk and a killed writer: a failed append is rolled back to the last complete
line and raises one error naming the file; a cut-off last line is removed by the next writer; a line
that does not parse is skipped once with a note by the runner and refused by check_complete."""
import errno
import json
import os

import pytest

import syw.core.records as records
from syw.core.records import RecordError, RecordsBusy, RecordsWriteError, RecordsWriter, check_complete, claim, iter_records

ONE = {"trial": 0, "status": "failed", "params": None}
LINE = json.dumps(ONE) + "\n"


@pytest.fixture(autouse=True)
def _fresh_notes_and_claims(monkeypatch):
    # each test sees its own notes and claims; claimed locks are released after it
    monkeypatch.setattr(records, "_NOTED", set())
    monkeypatch.setattr(records, "_CLAIMED", {})
    yield
    for lock in records._CLAIMED.values():
        lock.release()


def opened(fd: int) -> str:
    """The name of the file ``fd`` is open on: the faults below hit one file's writes, the records' or the manifest's."""
    return os.readlink(f"/proc/self/fd/{fd}")


def failing_write(monkeypatch, *, after: int, error: int = errno.ENOSPC, on: str = ".jsonl"):
    """os.write that writes ``after`` bytes of the record (a short write), then fails with ``error``; only the writes
    to the file whose name ends with ``on`` (the records file; its manifest's: ".sha256")."""
    real = os.write
    calls = []

    def write(fd, data):
        if not opened(fd).endswith(on):
            return real(fd, data)
        calls.append(len(data))
        if len(calls) == 1 and after:
            return real(fd, bytes(data[:after]))
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(records.os, "write", write)
    return calls


def test_a_full_disk_rolls_the_file_back_to_its_last_complete_line(tmp_path, monkeypatch):
    path = tmp_path / "toy.jsonl"
    path.write_text(LINE)
    with RecordsWriter(path) as writer:
        calls = failing_write(monkeypatch, after=7)
        with pytest.raises(RecordsWriteError) as caught:
            writer.append({**ONE, "trial": 1})
        monkeypatch.undo()
    assert len(calls) == 2  # the short write was followed by a second try for the rest
    assert path.read_text() == LINE  # the 7 bytes written are gone
    err = caught.value
    assert err.filename == str(path) and err.errno == errno.ENOSPC
    assert err.strerror == ("cannot write trial 1's record (No space left on device); the file was rolled back to its last "
                            "complete line; nothing was recorded for it: make room (or fix the disk), then run the same command")


def test_short_writes_go_on_until_the_whole_line_is_written(tmp_path, monkeypatch):
    path = tmp_path / "toy.jsonl"
    real = os.write
    sizes = []
    monkeypatch.setattr(records.os, "write", lambda fd, data: (sizes.append(len(data)) if opened(fd).endswith(".jsonl")
                                                               else None) or real(fd, bytes(data[:5])))
    with RecordsWriter(path) as writer:
        writer.append(ONE)
    monkeypatch.undo()
    assert path.read_text() == LINE and len(sizes) == -(-len(LINE) // 5)


def test_a_failed_fsync_is_rolled_back_too(tmp_path, monkeypatch):
    path = tmp_path / "toy.jsonl"
    path.write_text(LINE)

    real = os.fsync

    def fsync(fd):
        if not opened(fd).endswith(".jsonl"):
            return real(fd)
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with RecordsWriter(path) as writer:
        monkeypatch.setattr(records.os, "fsync", fsync)
        with pytest.raises(RecordsWriteError, match=r"cannot write trial 1's record \(Input/output error\)"):
            writer.append({**ONE, "trial": 1})
        monkeypatch.undo()
    assert path.read_text() == LINE


def test_a_roll_back_that_fails_says_so_and_the_next_writer_removes_the_partial_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_text(LINE)

    real = os.ftruncate

    def ftruncate(fd, size):
        if not opened(fd).endswith(".jsonl"):
            return real(fd, size)
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with RecordsWriter(path) as writer:
        failing_write(monkeypatch, after=9)
        monkeypatch.setattr(records.os, "ftruncate", ftruncate)
        with pytest.raises(RecordsWriteError, match="rolling the file back failed too .Input/output error.: the next run "
                                                    "removes the partial line"):
            writer.append({**ONE, "trial": 1})
        monkeypatch.undo()
    assert path.read_text() == LINE + LINE[:9]
    with RecordsWriter(path):
        pass
    assert path.read_text() == LINE
    assert capsys.readouterr().err == (f"warning: {path}:2: removed the last line, cut off mid-record (9 bytes: its run was "
                                       "stopped while writing it); its trial runs again\n")


def test_an_unwritable_records_file_is_one_error_naming_it(tmp_path):
    path = tmp_path / "toy.jsonl"
    with RecordsWriter(path) as writer:
        path.mkdir()  # the records file's place taken by a folder after the writer opened
        with pytest.raises(RecordsWriteError) as caught:
            writer.append(ONE)
    assert caught.value.filename == str(path) and caught.value.errno == errno.EISDIR


def test_a_last_line_that_is_a_whole_record_gets_its_newline(tmp_path):
    path = tmp_path / "toy.jsonl"
    path.write_text(LINE + json.dumps({**ONE, "trial": 1}))
    with RecordsWriter(path) as writer:
        writer.append({**ONE, "trial": 2})
    assert [r["trial"] for r in iter_records(path)] == [0, 1, 2]


def test_a_skipped_line_is_noted_once_and_its_cause_named_only_when_known(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_bytes((LINE + '{"trial": 1, "status": "fai\n' + LINE + '{"trial": 3, "st').encode())
    for _ in range(3):  # the runner reads a file several times: one note per line all the same
        assert [r["trial"] for r in iter_records(path)] == [0, 0]
    assert capsys.readouterr().err.splitlines() == [  # a line in the middle may be any damage; a last one without
        # its newline is a write that did not finish
        f"warning: {path}:2: skipping a line that is not JSON (Unterminated string starting at column 24); its trial "
        "counts as not run",
        f"warning: {path}:4: skipping a line that is the last line, cut off mid-record (a write that did not finish); "
        "its trial counts as not run",
    ]


def test_a_line_that_is_not_utf8_is_named_by_its_byte(tmp_path, capsys):
    path = tmp_path / "toy.jsonl"
    path.write_bytes(b'{"trial": 1, "error": "\xff"}\n')
    assert list(iter_records(path)) == []
    assert f"{path}:1: skipping a line that is not UTF-8 text (byte 24)" in capsys.readouterr().err


@pytest.mark.parametrize("lines, number, why", [
    (LINE + '{"trial": 1, "va\n' + LINE, 2, "a line that is not JSON (Unterminated string starting at column 14): restore "
                                             "the file (git checkout) or delete the line"),
    (LINE + "{not json}\n", 2, "a line that is not JSON (Expecting property name enclosed in double quotes at column 2): restore"),
    (LINE + LINE + '{"trial": 2', 3, "a line that is the last line, cut off mid-record (a write that did not finish): the same "
                                     "`syw run` command removes it and runs its trial again"),
])
def test_check_complete_names_the_first_line_that_does_not_parse(tmp_path, lines, number, why):
    (tmp_path / "a.jsonl").write_text(LINE)
    study = tmp_path / "sst5" / "reseed"
    study.mkdir(parents=True)
    (study / "cnn.jsonl").write_text(lines)
    with pytest.raises(RecordError) as caught:
        check_complete(tmp_path)
    assert str(caught.value).startswith(f"{study / 'cnn.jsonl'}:{number}: {why}")


def test_check_complete_passes_whole_files_and_skips_hidden_folders(tmp_path):
    (tmp_path / "a.jsonl").write_text(LINE + "\n" + LINE)  # a blank line is no record, and no damage
    (tmp_path / ".tune").mkdir()
    (tmp_path / ".tune" / "x.jsonl").write_text("{torn")
    check_complete(tmp_path)


def test_a_claimed_lock_is_held_for_this_process_and_refuses_another_runner(tmp_path):
    path = tmp_path / "toy" / "toy.jsonl"
    claim(path)
    assert (tmp_path / "toy" / "toy.jsonl.lock").read_text() == str(os.getpid())
    with pytest.raises(RecordsBusy, match=f"another runner \\(pid {os.getpid()}\\) is writing {path}"):
        records._Lock(records._lock_path(path), path)  # another open of the lock file: another runner
    for trial in (0, 1):  # the writers of this process write under the claim, one after another
        with RecordsWriter(path) as writer:
            writer.append({**ONE, "trial": trial})
            with pytest.raises(RecordsBusy, match="this process is writing"):
                RecordsWriter(path).__enter__()
    with pytest.raises(RecordsBusy):  # still held after the writers closed
        records._Lock(records._lock_path(path), path)
    assert [r["trial"] for r in iter_records(path)] == [0, 1]


def test_progress_announces_no_record_the_disk_did_not_take_and_stops(tmp_path, monkeypatch, capsys):
    from types import SimpleNamespace

    from syw.experiments.progress import Progress

    path = tmp_path / "toy.jsonl"
    with RecordsWriter(path) as writer:
        progress = Progress(writer, SimpleNamespace(name="toy"), "score", True, 2, 2, 1, {"study": "toy", "family": "toy"})
        record = {"trial": 0, "params": {}, "status": "ok", "value": 0.5, "duration_seconds": 1.0}
        progress.finish(record)
        failing_write(monkeypatch, after=3)
        progress.finish({**record, "trial": 1})
        monkeypatch.undo()
    assert [r["trial"] for r in iter_records(path)] == [0]
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "1 of 2 recorded" in out[0]
    assert out[1] == "[toy/toy] trial   1 not recorded: the records file took none of it; stopping the study"
    assert progress.data_problem.startswith(f"{path}: cannot write trial 1's record (No space left on device); the file was "
                                            "rolled back to its last complete line")


@pytest.mark.parametrize("which", ["records", "lock"])
@pytest.mark.parametrize("to", ["file", "nothing"])
def test_a_writer_writes_nothing_through_a_link(tmp_path, which, to):
    """The records file and its lock are opened without following a link (O_NOFOLLOW): a link there, to a file
    elsewhere or to none, is refused, the file it points to untouched (a link to nothing is not made a file)."""
    path = tmp_path / "toy.jsonl"
    target = tmp_path / ("precious" if to == "file" else "new")
    if to == "file":
        target.write_text(LINE[:-1])  # a last line without its newline, which a writer would complete
    link = path if which == "records" else path.with_name("toy.jsonl.lock")
    link.symlink_to(target)
    for open_it in [RecordsWriter(path).__enter__, *([lambda: claim(path)] if which == "lock" else [])]:
        with pytest.raises(OSError) as caught:
            open_it()
        assert caught.value.filename == str(link)
        assert caught.value.strerror == f"a symbolic link (to {target}): the runner writes no file through a link; remove it"
        assert (target.read_text() == LINE[:-1]) if to == "file" else not target.exists()
    assert records._CLAIMED == {}
    link.unlink()
    with RecordsWriter(path) as writer:  # the writer that refused let go of its lock
        writer.append(ONE)
    assert path.read_text() == LINE
