"""Issue 22: what the capture reads is the file it checked (curator/util/safe_open.py). A payload's
transcript path is a name Claude can swap between the hook's check and its read: a final symlink is
never followed, the opened file is checked by its descriptor, a FIFO never blocks, and every byte of a
pass comes from the one descriptor opened, whatever the path names meanwhile."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from synthetic import Transcript, text, tool

import memcurate.hooks.capture as hooks_capture
from memcurate.curator.candidates import incremental
from memcurate.curator.capture.transcript import read_entries
from memcurate.curator.util.paths import data_dir

SECRET = "zanzibarquokka"  # the word only the file outside the allowed folders holds
SESSION = "0b5e6a34-1111-4222-8333-444455556666"


def session(tag: str) -> bytes:
    """A short session that triggers `decision`, naming `tag`."""
    return (
        Transcript()
        .user(
            f"We decided to go with {tag} because it is simpler to operate than the alternatives."
        )
        .assistant(
            text(f"Understood: we will use {tag}, since it keeps the deployment simpler."),
            tool("toolu_a1", "Bash", command="ls"),
        )
        .result("toolu_a1", "README.md\nsrc")
        .assistant(text("Done."))
    ).bytes()


def payload(transcript, project: Path) -> dict:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }


def log_lines(project: Path) -> list[str]:
    p = project / ".memcurate" / "log" / "memcurate.log"
    return p.read_text().splitlines() if p.exists() else []


def staged(project: Path) -> list[str]:
    d = project / ".memcurate" / "staging"
    return sorted(n for n in os.listdir(d) if not n.startswith(".")) if d.is_dir() else []


def leaked(project: Path) -> list[str]:
    """The files of the data dir that hold the secret word."""
    d = project / ".memcurate"
    return (
        [str(p) for p in d.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
        if d.is_dir()
        else []
    )


@pytest.fixture
def outside(tmp_path) -> Path:
    """A transcript outside Claude Code's projects folder and the project: the file an attacker wants read."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "s.jsonl").write_bytes(session(SECRET))
    return d / "s.jsonl"


def handle(project: Path, transcript) -> int:
    """The capture hook in-process (as the dispatcher calls it)."""
    return hooks_capture.handle(
        payload(transcript, project),
        str(project),
        data_dir(project),
        env=dict(os.environ),
        session_dirs=[str(project)],
    )


def swap_at_check(monkeypatch, swap) -> list[bool]:
    """Make the hook's path check run `swap` right after it passed: the window between check and open."""
    real, done = hooks_capture.hook_may_read, []

    def check(path, project, env=None, **kw):
        why = real(path, project, env, **kw)
        if not done:
            done.append(True)
            swap()
        return why

    monkeypatch.setattr(hooks_capture, "hook_may_read", check)
    return done


# -- final symlinks: never followed --------------------------------------------------------------------


@pytest.mark.parametrize("target", ["outside", "inside-the-project"])
def test_a_final_symlink_is_never_followed(target, tmp_path, project, outside):
    """The real hook process: a transcript path that is a symlink is not read, wherever it points
    (what it points to can change between any check and the read)."""
    if target == "outside":
        pointee = outside
    else:
        pointee = project / "notes.jsonl"
        pointee.write_bytes(session(SECRET))
    link = claude_transcripts() / "s.jsonl"
    link.symlink_to(pointee)
    p = run_hook(payload(link, project), cwd=project, timeout=30)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p.stderr
    assert staged(project) == [] and leaked(project) == []
    (line,) = log_lines(project)
    assert "not read" in line or "not followed" in line, line


# -- swapped between the check and the open -------------------------------------------------------------


@pytest.mark.parametrize("how", ["final-symlink", "folder-symlink"])
def test_a_path_swapped_after_the_check_is_not_read(how, monkeypatch, tmp_path, project, outside):
    """The path passes the check as a real transcript in Claude Code's folder; right after, it is made
    to lead outside: the file itself becomes a symlink, or the folder holding it does (which no
    O_NOFOLLOW catches: the opened file is checked by its descriptor)."""
    folder = claude_transcripts()
    path = folder / "s.jsonl"
    path.write_bytes(session("postgres"))

    def swap():
        if how == "final-symlink":
            (folder / "tmp-link").symlink_to(outside)
            os.replace(folder / "tmp-link", path)
        else:
            folder.rename(folder.with_name("moved"))
            folder.symlink_to(outside.parent, target_is_directory=True)

    done = swap_at_check(monkeypatch, swap)
    assert handle(project, path) == 0
    assert done  # the swap happened
    assert staged(project) == [] and leaked(project) == []
    assert any("not read" in ln or "not followed" in ln for ln in log_lines(project)), log_lines(
        project
    )


def _in_thread(fn, seconds: float = 10):
    """Run `fn` in a thread; (finished, result or exception)."""
    out: list = []

    def run():
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return (not t.is_alive()), (out[0] if out else None)


def _release(fifo: Path) -> None:
    """Give a reader blocked on `fifo` its end of file (so a failing run leaves no thread hanging)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("swapped_in", ["fifo", "symlink-outside"])
def test_every_byte_of_a_pass_is_read_from_the_file_opened(
    swapped_in, monkeypatch, tmp_path, project, outside
):
    """Once the capture has started (here: as it takes its lock), the path is swapped for a FIFO or a
    symlink out: the pass neither blocks nor reads it, and triages the transcript it checked."""
    folder = claude_transcripts()
    path = folder / "s.jsonl"
    path.write_bytes(session("postgres"))
    fifo = tmp_path / "fifo"
    real_lock = incremental.FileLock

    def lock(*a, **kw):
        if swapped_in == "fifo":
            os.mkfifo(fifo)
            os.replace(fifo, path)
        else:
            (folder / "tmp-link").symlink_to(outside)
            os.replace(folder / "tmp-link", path)
        return real_lock(*a, **kw)

    monkeypatch.setattr(incremental, "FileLock", lock)
    try:
        finished, result = _in_thread(lambda: handle(project, path))
    finally:
        if swapped_in == "fifo":
            _release(path)
    assert finished, "the capture blocked on a FIFO swapped in for the transcript"
    assert result == 0
    assert leaked(project) == []
    tids = staged(project)
    assert len(tids) == 1  # the transcript that was checked, read whole
    doc = json.loads((project / ".memcurate" / "staging" / tids[0] / "triage.json").read_text())
    assert "postgres" in json.dumps(doc["categories"]["decision"])


# -- FIFOs and devices never block ---------------------------------------------------------------------------


def test_a_fifo_transcript_returns_promptly_with_a_log_line(tmp_path, project):
    """The real hook process, given a FIFO nobody writes to: it returns at once and says why."""
    fifo = claude_transcripts() / "s.jsonl"
    os.mkfifo(fifo)
    try:
        p = run_hook(payload(fifo, project), cwd=project, timeout=20)
    finally:
        _release(fifo)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p.stderr
    (line,) = log_lines(project)
    assert "not a regular file" in line, line
    assert staged(project) == []


@pytest.mark.parametrize("read", ["reader", "digest"])
def test_a_later_read_of_a_transcript_never_blocks_on_a_fifo(tmp_path, read):
    """The readers that open by path (the transcript reader, the session digest the second look sends): a
    FIFO is refused, not waited on."""
    from memcurate.curator import config
    from memcurate.curator.capture.digest import digest

    cfg = config.load(tmp_path)
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    try:
        finished, result = _in_thread(
            lambda: read_entries(str(fifo)) if read == "reader" else digest(str(fifo), cfg)
        )
    finally:
        _release(fifo)
    assert finished, "reading a FIFO blocked"
    assert isinstance(result, OSError) and "regular file" in str(result)


# -- what still works ----------------------------------------------------------------------------------------


def test_a_regular_transcript_is_still_read_also_through_a_symlinked_projects_folder(
    tmp_path, project
):
    """The real hook process: Claude Code's projects folder reached through a symlink (a moved config
    dir, a dotfiles checkout) is still Claude Code's projects folder."""
    real_projects = tmp_path / "elsewhere" / "projects"
    (real_projects / "-home-dev-app").mkdir(parents=True)
    config = tmp_path / "linked-config"
    config.mkdir()
    (config / "projects").symlink_to(real_projects, target_is_directory=True)
    path = config / "projects" / "-home-dev-app" / "s.jsonl"
    path.write_bytes(session("postgres"))
    p = run_hook(
        payload(path, project), cwd=project, env={"CLAUDE_CONFIG_DIR": str(config)}, timeout=60
    )
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    (line,) = log_lines(project)
    assert "staged bytes" in line, line
    assert len(staged(project)) == 1


def test_backfill_refuses_a_symlink_and_names_it(tmp_path, project, outside):
    """`memcurate triage PATH` opens the same way: a symlink given is refused with a clear error (its
    target, given instead, is read)."""
    link = tmp_path / "link.jsonl"
    link.symlink_to(outside)
    p = run_cli("triage", str(link), cwd=project)
    assert p.returncode == 1
    assert "symbolic link" in p.stderr, p.stderr
    assert staged(project) == []
    p = run_cli("triage", str(outside), cwd=project)
    assert p.returncode == 0, p.stderr
    assert len(staged(project)) == 1
