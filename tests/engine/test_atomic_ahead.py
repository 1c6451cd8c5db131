"""atomic.ahead: temp files made, written and fsynced before their writes (a save's files while its
duplicate lookups run); a write takes its temp file only when it holds the write's own bytes, durable."""

from __future__ import annotations

import os
import threading

import pytest

from memcurate.curator.util import atomic


def temps(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if atomic.is_temp_name(n))


def test_a_write_of_the_early_bytes_takes_them_durable_and_only_renames(tmp_path, monkeypatch):
    path = str(tmp_path / "a.md")
    main_fsyncs = []
    fsync = os.fsync

    def counted(fd):
        main_fsyncs.append(threading.current_thread() is threading.main_thread())
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", counted)
    with atomic.ahead([path], {path: b"early\n"}):
        atomic.write_bytes(path, b"early\n", sync_dir=False)
        assert main_fsyncs == [False]  # the early fsync only, by the block's thread
    assert open(path, "rb").read() == b"early\n"
    assert temps(tmp_path) == []


def test_a_write_of_other_bytes_writes_its_own_and_the_early_ones_go(tmp_path):
    path = str(tmp_path / "a.md")
    with atomic.ahead([path], {path: b"what was approved\n"}):
        atomic.write_bytes(path, b"what an edit made of it since\n", sync_dir=False)
        assert temps(tmp_path) == []
    assert open(path, "rb").read() == b"what an edit made of it since\n"


def test_an_early_fsync_that_fails_leaves_the_write_to_make_its_own_and_say_why(
    tmp_path, monkeypatch
):
    path = str(tmp_path / "a.md")
    fsync = os.fsync

    def failing_off_main(fd):
        if threading.current_thread() is not threading.main_thread():
            raise OSError(5, "Input/output error")
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_off_main)
    with atomic.ahead([path], {path: b"x\n"}):
        atomic.write_bytes(path, b"x\n", sync_dir=False)  # its own temp file, fsynced here
    assert open(path, "rb").read() == b"x\n"
    assert temps(tmp_path) == []

    def failing(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing)
    with atomic.ahead([path], {path: b"y\n"}):
        with pytest.raises(OSError) as e:
            atomic.write_bytes(path, b"y\n", sync_dir=False)
    assert e.value.filename == path and e.value.errno == 28
    assert open(path, "rb").read() == b"x\n" and temps(tmp_path) == []


def test_early_bytes_no_write_took_are_removed_on_leaving(tmp_path):
    paths = [str(tmp_path / f"{n}.md") for n in "abc"]
    with atomic.ahead(paths, {p: b"unsaved\n" for p in paths}):
        atomic.write_bytes(paths[0], b"unsaved\n", sync_dir=False)
    assert temps(tmp_path) == [] and os.listdir(tmp_path) == ["a.md"]


def test_a_private_files_early_bytes_are_never_readable_by_others(tmp_path):
    data = tmp_path / ".memcurate"
    data.mkdir()
    path = str(data / "review.json")
    with atomic.ahead([path], {path: b"{}\n"}) as block:
        atomic._wait(block.done)  # the block's thread has made it
        (tmp,) = temps(data)
        assert os.stat(data / tmp).st_mode & 0o077 == 0
        atomic.write_bytes(path, b"{}\n", sync_dir=False)
    assert os.stat(path).st_mode & 0o077 == 0


def test_a_folder_not_there_yet_is_made_by_the_write_itself(tmp_path):
    path = str(tmp_path / "new" / "a.md")
    with atomic.ahead([path], {path: b"first\n"}):
        atomic.write_bytes(path, b"first\n", sync_dir=False)
    assert open(path, "rb").read() == b"first\n" and temps(tmp_path / "new") == []


def test_a_file_planted_under_the_early_temp_name_is_left_alone(tmp_path, monkeypatch):
    """The early temp file is made with O_EXCL: a file already there (planted by whoever guessed the name)
    makes it fail, and the block removes only what it made."""
    path = str(tmp_path / "a.md")
    planted = tmp_path / ".a.md.planted.tmp"
    planted.write_bytes(b"not ours\n")
    names = iter([str(planted)])
    real = atomic._temp_name
    monkeypatch.setattr(atomic, "_temp_name", lambda p: next(names, None) or real(p))
    with atomic.ahead([path], {path: b"mine\n"}):
        atomic.write_bytes(path, b"mine\n", sync_dir=False)
    assert planted.read_bytes() == b"not ours\n"
    assert open(path, "rb").read() == b"mine\n"
