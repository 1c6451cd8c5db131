"""A memory folder memcurate may not write into (issue 26): `--auto-approve` stops, saying the folder is
read-only, lists what it saved and what it left, exits 1 and loses nothing: once the folder is writable
again, the next run saves what was left."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_headless_failures import CATEGORIES, run, setup, stage, states

READ_ONLY = "the memory folder is read-only"


class ReadOnlyFolder:
    """os.open refusing, with EACCES as the kernel does, every open for writing of a file in `folder`
    (its lock file, the temp file of an atomic write); reads go on."""

    WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def __init__(self, folder: Path) -> None:
        self.folder = os.path.realpath(folder) + os.sep
        self.real = os.open
        self.refused: list[str] = []

    def __call__(self, path, flags, *args, **kw):
        full = os.path.realpath(os.fspath(path)) if kw.get("dir_fd") is None else ""
        if flags & self.WRITING and full.startswith(self.folder):
            self.refused.append(full)
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return self.real(path, flags, *args, **kw)


def accounted(summary: dict, tids: list[str]) -> list[tuple[str, str]]:
    """(triage, category) of every candidate the summary names: saved, failed or left (a whole triage left
    names all its categories)."""
    saved = summary["created"] + summary["updated"] + summary["failed"]
    return sorted(
        [(c["triage"], c["category"]) for c in saved]
        + [
            (x["triage"], c)
            for x in summary["left"]
            for c in ([x["category"]] if x["category"] else CATEGORIES)
        ]
    )


@pytest.mark.parametrize("lock_file", [False, True], ids=["first-run", "lock-file-there"])
def test_a_read_only_memory_folder_stops_the_run_and_loses_nothing(
    project, tmp_path, capsys, monkeypatch, lock_file
):
    """The lock file cannot be made (a first run), or it is there from an earlier run and every memory file's
    write is refused: either way the run stops on the folder, lists every candidate as left, exits 1, and the
    next run (the folder writable again) saves them all."""
    memory = setup(project, tmp_path)
    # an earlier run made it: the lock is taken, the writes into the folder are refused
    if lock_file:
        memory.mkdir()
        (memory / ".memcurate.lock").touch()
    tids = [stage(project, tmp_path, 1, same=True), stage(project, tmp_path, 2)]
    folder = ReadOnlyFolder(memory)
    monkeypatch.setattr(os, "open", folder)
    code, out, err = run(project, capsys, "--json")
    assert code == 1 and "Traceback" not in err
    summary = json.loads(out)
    assert folder.refused, "nothing was refused: the test did not make the folder read-only"
    assert READ_ONLY in summary["stopped"] and str(memory) in summary["stopped"]
    assert not summary["created"] and not summary["failed"]  # nothing saved, nothing called failed
    assert accounted(summary, tids) == sorted((t, c) for t in tids for c in CATEGORIES)
    # stopped on the folder, not tried again and again for every triage
    assert len(folder.refused) <= 6
    assert not [p for p in memory.rglob("*") if p.is_file() and p.name != ".memcurate.lock"]

    monkeypatch.undo()  # writable again: the next run saves what was left
    code, out, _ = run(project, capsys, "--json")
    assert code == 0, out
    assert all(s == "saved" for tid in tids for s in states(project)[tid].values())
    assert len(list((memory).glob("*/*.md"))) == 12


def test_the_text_report_says_the_folder_is_read_only_and_what_was_left(
    project, tmp_path, capsys, monkeypatch
):
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1)
    monkeypatch.setattr(os, "open", ReadOnlyFolder(memory))
    code, out, err = run(project, capsys)
    assert code == 1
    said = err.strip().splitlines()[-1]
    # nothing failed: no "; " first
    assert said.startswith("memcurate: stopped: ") and READ_ONLY in said, said
    lines = out.splitlines()
    assert "created   0" in lines and "failed    0" in lines
    assert any(ln.startswith("left ") and "next run" in ln for ln in lines)
    assert any(ln.startswith("stopped ") and READ_ONLY in ln for ln in lines)
    assert "retry in the TUI" not in out


def _as_nobody() -> list[str] | None:
    """setpriv's prefix running this interpreter's memcurate as nobody (uid and gid 65534), when root can
    use it and nobody can import memcurate with it (a virtual environment in a folder private to root,
    as CI's mktemp -d makes, is not nobody's to read)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = [*prefix, sys.executable, "-c", "import yaml, memcurate.curator.cli"]
    try:
        usable = subprocess.run(probe, capture_output=True, cwd="/", timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        usable = False
    return prefix if usable else None


@pytest.mark.skipif(
    _as_nobody() is None,
    reason="needs root and setpriv, and an interpreter nobody may use, to run memcurate as an "
    "unprivileged user (root writes into a chmod 555 folder)",
)
def test_a_folder_the_user_may_not_write_into_as_the_kernel_refuses_it():
    """The real thing: memcurate run by an unprivileged user whose memory folder is not writable."""
    # pytest's own folder is root's alone (0700)
    base = Path(tempfile.mkdtemp(prefix="memcurate-readonly-"))
    try:
        base.chmod(0o755)
        project = base / "project"
        (project / ".git").mkdir(parents=True)
        memory = setup(project, base)
        tid = stage(project, base, 1)
        home = base / "home"
        home.mkdir()
        memory.mkdir()
        for p in [base, *base.rglob("*")]:
            os.chown(p, 65534, 65534, follow_symlinks=False)
        memory.chmod(0o555)
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "XDG_CONFIG_HOME": str(home / ".config"),
        }
        code = "import sys; from memcurate.curator.cli import main; sys.exit(main(sys.argv[1:]))"
        r = subprocess.run(
            [
                *_as_nobody(),
                sys.executable,
                "-c",
                code,
                "--auto-approve",
                "--json",
                "--project",
                str(project),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert r.returncode == 1 and "Traceback" not in r.stderr and r.stdout, r.stderr
        summary = json.loads(r.stdout)
        assert READ_ONLY in summary["stopped"]
        assert accounted(summary, [tid]) == sorted((tid, c) for c in CATEGORIES)
        assert not any(memory.iterdir())
    finally:
        shutil.rmtree(base, ignore_errors=True)
