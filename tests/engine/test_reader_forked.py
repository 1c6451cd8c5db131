"""A long stretch read in a forked child while the capture triages what it sends (issue 25 §6): the same
entries, stats and turns as a read in one process; what the child meets is raised in the parent, and a
child that dies is an error, never a silent miss."""

from __future__ import annotations

import errno
import json
import marshal
import os
from pathlib import Path

import pytest
from conftest import needs_shared, shared_transcripts

from memcurate.curator import config
from memcurate.curator.candidates import incremental
from memcurate.curator.capture import transcript
from memcurate.curator.capture.transcript import TranscriptReader, _pack, _unpack
from memcurate.curator.util import cores


def read(path: Path, forked: bool, *, start: int = 0, turn_base: int = 0, meanwhile=None):
    """Entries (packed: every field), stats and turns of `path` read from an open file, as the capture does."""
    with open(path, "rb") as f:
        reader = TranscriptReader(f, start, turn_base=turn_base, outputs_of={"Bash"})
        entries = []
        for e in reader.forked() if forked else reader:
            entries.append(_pack(e))
            if meanwhile:
                meanwhile(f)
    s = reader.stats
    return entries, s.as_dict(), sorted(s.session_ids), s.skipped, reader.turn


def prompts(path: Path, n: int) -> Path:
    """A transcript of `n` short prompts at `path`."""
    path.write_text(
        "".join(
            json.dumps({"type": "user", "message": {"role": "user", "content": f"turn {i}"}}) + "\n"
            for i in range(n)
        )
    )
    return path


def no_child_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_shared
def test_a_forked_read_gives_what_a_read_in_one_process_gives():
    paths = shared_transcripts()
    assert paths
    for path in paths:
        assert read(path, True) == read(path, False), path
        # from an offset inside the file, with the turns before it
        middle = path.stat().st_size // 2
        assert read(path, True, start=middle, turn_base=7) == read(
            path, False, start=middle, turn_base=7
        ), path
    assert no_child_left()


def test_an_entry_comes_out_of_the_pipe_whole():
    e = transcript.Entry("assistant", 3, 10, 20, text="hi", thinking="hm", message_id="m1")
    e.tool_uses = [transcript.ToolUse("t1", "Bash", "make")]
    e.tail, e.is_error = "the end", True
    copy = _unpack(marshal.loads(marshal.dumps(_pack(e))))
    for slot in transcript.Entry.__slots__:  # a slot added to Entry and not to _pack fails here
        mine, theirs = getattr(e, slot), getattr(copy, slot)
        if slot == "tool_uses":
            mine, theirs = [vars_of(u) for u in mine], [vars_of(u) for u in theirs]
        assert mine == theirs, slot


def vars_of(u) -> tuple:
    return tuple(getattr(u, s) for s in transcript.ToolUse.__slots__)


@needs_shared
def test_the_parent_reading_the_file_meanwhile_moves_nothing_under_the_child():
    path = max(shared_transcripts(), key=lambda p: p.stat().st_size)

    def elsewhere(f):  # what session_cwd or a quote does: the shared descriptor's offset moves
        f.seek(17)
        f.read(300)

    assert read(path, True, meanwhile=elsewhere) == read(path, False)


def test_a_last_line_being_written_waits_in_the_child_too(tmp_path):
    path = tmp_path / "t.jsonl"
    done = json.dumps({"type": "user", "message": {"role": "user", "content": "hello there"}})
    path.write_text(done + "\n" + done[:20])
    entries, stats, *_ = read(path, True)
    assert len(entries) == 1 and stats["end"] == len(done) + 1
    assert (entries, stats) == read(path, False)[:2]


@pytest.mark.parametrize(
    "error", [OSError(errno.EIO, "Input/output error"), ValueError("a bug in the reader")]
)
def test_what_the_child_raises_is_raised_in_the_parent(tmp_path, monkeypatch, error):
    path = prompts(tmp_path / "t.jsonl", 600)
    real = TranscriptReader._entries

    def failing(self, lines):
        for n, e in enumerate(real(self, lines)):
            if n == 300:  # after a batch was sent
                raise error
            yield e

    monkeypatch.setattr(TranscriptReader, "_entries", failing)
    got = []
    with pytest.raises(type(error), match=str(error.args[-1])):
        with open(path, "rb") as f:
            got.extend(TranscriptReader(f).forked())
    assert 0 < len(got) <= 300
    assert no_child_left()


def test_a_child_that_dies_is_an_error_not_a_short_read(tmp_path, monkeypatch):
    path = prompts(tmp_path / "t.jsonl", 600)
    seen = []

    def dies(e):
        seen.append(e)
        if len(seen) == 400:
            os._exit(0)  # killed: no last word
        return _pack(e)

    monkeypatch.setattr(transcript, "_pack", dies)
    with pytest.raises(OSError, match="ended without its entries"):
        with open(path, "rb") as f:
            list(TranscriptReader(f).forked())
    assert no_child_left()


def test_a_caller_that_stops_early_leaves_no_child(tmp_path):
    path = prompts(tmp_path / "t.jsonl", 5000)
    with open(path, "rb") as f:
        entries = TranscriptReader(f).forked()
        next(entries)
        entries.close()
    assert no_child_left()


def test_a_fork_needs_a_free_core_and_no_other_thread(monkeypatch):
    import threading

    monkeypatch.setattr(cores, "cpus", lambda: 2)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert cores.free_core()
    monkeypatch.setattr(cores, "cpus", lambda: 1)
    assert not cores.free_core()
    monkeypatch.setattr(cores, "cpus", lambda: 2)
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (2.1, 1.0, 1.0))  # both cores busy
    assert not cores.free_core()
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not cores.free_core()


@needs_shared
@pytest.mark.parametrize("forks", [True, False])
def test_the_capture_of_a_long_stretch_stages_what_a_read_in_one_process_stages(
    tmp_path, monkeypatch, forks
):
    """The capture forks for a long stretch when a core is free, and the files it leaves are the same."""
    src = max(shared_transcripts(), key=lambda p: p.stat().st_size)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    path = tmp_path / "t" / src.name
    path.parent.mkdir()
    raw = src.read_bytes()
    monkeypatch.setattr(transcript, "FORK_BYTES", 0)
    forked = []
    real = TranscriptReader.forked

    def counted(self):
        forked.append(self.start)
        return real(self)

    monkeypatch.setattr(TranscriptReader, "forked", counted)

    def files(data: Path) -> dict:
        out = {}
        for p in sorted(data.rglob("*")):
            rel = str(p.relative_to(data))
            if p.is_file() and not rel.startswith(("log", "locks", "config.cache")):
                doc = p.read_text()
                if rel.startswith("staging"):  # (when it was staged)
                    doc = json.dumps({**json.loads(doc), "created": ""})
                out[rel] = doc
        return out

    runs = {}
    for name in ("a", "b"):  # a: forked when `forks`; b: in one process
        monkeypatch.setattr(cores, "free_core", lambda n=name: forks and n == "a")
        data = tmp_path / f"data-{name}"
        cfg = config.load(project, data)
        for cut in (len(raw) // 3, len(raw)):
            path.write_bytes(raw[:cut])
            incremental.capture(str(data), cfg, str(path), event="Stop")
        runs[name] = files(data)
    assert runs["a"] == runs["b"] and any(k.startswith("staging") for k in runs["a"])
    assert len(forked) == (2 if forks else 0)
    assert no_child_left()


def test_the_childs_pipe_holds_a_dozen_batches(tmp_path, monkeypatch):
    """A batch of entries is ~80 KB, more than a pipe's usual 64 KiB: with no room the reader waited on the
    triage at every batch and the two processes took turns (hook_bench's 100 MB pass: ~15 % longer)."""
    fcntl = pytest.importorskip("fcntl")
    limit = Path("/proc/sys/fs/pipe-max-size")
    if not hasattr(fcntl, "F_GETPIPE_SZ") or not limit.exists():
        pytest.skip("no pipe sizes to set here (not Linux)")
    if int(limit.read_text()) < transcript.PIPE_BYTES:
        pytest.skip("this system caps pipes below PIPE_BYTES")
    pipes = []
    real_pipe = os.pipe

    def pipe():
        fds = real_pipe()
        pipes.append(fds)
        return fds

    monkeypatch.setattr(transcript.os, "pipe", pipe)
    path = prompts(tmp_path / "t.jsonl", 600)
    with open(path, "rb") as f:
        entries = TranscriptReader(f).forked()
        next(entries)
        ((read_end, _),) = pipes
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) >= transcript.PIPE_BYTES
        assert transcript.PIPE_BYTES >= 12 * 80_000
        assert len(list(entries)) == 599
    assert no_child_left()
