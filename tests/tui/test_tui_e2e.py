"""The review TUI end to end, as a person uses it: the real `memcurate` console script in a terminal.

A project gets the demo session staged by the real hook (`memcurate hook`, Stop then SessionEnd, as
Claude Code calls it), then `memcurate --project DIR` runs in a pseudo-terminal of a fixed size
(160x45, TERM=xterm-256color). What it writes is fed to a terminal emulator (pyte) and the test reads
that screen, the characters a person would see, never the app's objects. Keys are written to the
terminal. Nothing sleeps a fixed time: every wait reads the terminal until its condition holds or
30 s pass (and then fails with the screen in the message).
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import claude_transcripts, memcurate_exe, run_hook

from memcurate.curator.candidates import staging
from memcurate.curator.memory import memfile
from memcurate.curator.util.assets import asset

pyte = pytest.importorskip("pyte")  # in the `test` extra; without it the test cannot read a screen

pytestmark = pytest.mark.skipif(
    not hasattr(os, "openpty") or sys.platform == "win32", reason="needs a Unix pseudo-terminal"
)

COLS, ROWS = 160, 45
TIMEOUT = 30.0
DEMO = Path(asset(os.path.join("demo", "session.jsonl")))
SESSION = "5e55a1d0-de70-4c1a-9a5e-0000000e2e01"


class Terminal:
    """A program running in a pseudo-terminal, its output kept on a pyte screen."""

    def __init__(
        self, argv: list[str], *, cwd: Path, env: dict, cols: int = COLS, rows: int = ROWS
    ) -> None:
        import fcntl
        import struct
        import termios

        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        # The size comes from the terminal only: COLUMNS/LINES would override it.
        env = {
            k: v
            for k, v in env.items()
            if k not in ("COLUMNS", "LINES", "NO_COLOR") and not k.startswith("TEXTUAL")
        }
        env["TERM"] = "xterm-256color"

        try:  # a session of its own (no preexec_fn: pytest may run threads), the pty on stdin/out/err
            self.proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        finally:
            os.close(slave)
        self.fd = master
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.eof = False

    def _pump(self, timeout: float) -> None:
        """Feed what the program wrote within `timeout` to the screen."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return
        try:
            data = os.read(self.fd, 1 << 16)
        except OSError:  # EIO: the program exited and closed the terminal
            data = b""
        if data:
            self.stream.feed(data)
        else:
            self.eof = True

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, what: str, cond, timeout: float = TIMEOUT) -> str:
        """Read the terminal until `cond(screen text)` holds; fail after `timeout` s with the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if cond(screen):
                return screen
            left = deadline - time.monotonic()
            if left <= 0 or self.eof:
                why = "the program exited" if self.eof else f"{timeout:.0f} s passed"
                raise AssertionError(f"waiting for {what}: {why}; the screen:\n{screen}")
            self._pump(min(left, 0.1))

    def press(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        """Read until the program closes the terminal, then its exit code."""
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            self._pump(min(0.1, deadline - time.monotonic()))
        return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.fd)


def stage_demo(project: Path, memory: Path, tmp_path: Path) -> Path:
    """The project (offline drafter, memories in `memory`) and the demo session, staged by the real hook:
    Stop at the end of the turn, SessionEnd at the end of the session (what `feed()` does in
    test_engine_processes.py)."""
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\n"
    )
    transcript = claude_transcripts() / f"{SESSION}.jsonl"
    shutil.copyfile(DEMO, transcript)
    for event in ("Stop", "SessionEnd"):
        p = run_hook(
            {
                "hook_event_name": event,
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": str(project),
            },
            cwd=project,
        )
        assert p.returncode == 0 and p.stdout == b"", p.stderr
    return project / ".memcurate"


def queue_rows(screen: str) -> list[list[str]]:
    """The queue's rows as a person reads them: the left pane, between its header line and its border,
    split on runs of 2+ spaces (session, category, title, action, ...; the session is "│" on a triage's
    second and later rows)."""
    rows, inside = [], False
    for line in screen.splitlines():
        left = line.split("││")[0].split("│╭")[0].split("│╰")[0]
        cells = [c for c in re.split(r"\s{2,}", left.removeprefix("│").strip()) if c]
        if cells[:3] == ["session", "category", "title"]:
            inside = True
            continue
        if inside:
            if not cells or left.startswith("╰"):
                break
            rows.append(cells)
    return rows


def test_review_the_demo_in_a_terminal_approve_and_quit(project, tmp_path):
    memory = tmp_path / "memory"
    data = stage_demo(project, memory, tmp_path)
    staged = staging.triage_ids(str(data))
    # the turn's triage (5 categories) and the session end's (session_summary)
    assert len(staged) == 2

    term = Terminal(
        memcurate_exe() + ["--project", str(project)], cwd=project, env=dict(os.environ)
    )
    try:
        # The queue: the demo's six memories, drafted by the app's pipeline, each a `create`.
        screen = term.wait_for(
            "six ready memories in the queue",
            lambda s: (
                "Pending 6" in s
                and len([r for r in queue_rows(s) if len(r) >= 4 and r[3] == "create"]) == 6
            ),
        )
        # Grouped by triage, each group's first row naming the session: the turn's five, the session end's one.
        groups = [r[0] for r in queue_rows(screen)]
        assert groups == [SESSION[:8], "│", "│", "│", "│", SESSION[:8]], groups
        rows = [r[1:] for r in queue_rows(screen)]
        assert [r[0] for r in rows] == [
            "decision",
            "constraint",
            "runbook",
            "tech_debt",
            "preference",
            "session_summary",
        ]
        records = {
            cat: rec
            for tid in staged
            for cat, rec in staging.category_states(str(data), tid).items()
        }
        assert sorted(r["state"] for r in records.values()) == ["ready"] * 6
        for cat, title, *_ in rows:
            full = records[cat]["title"]
            # cut to the column
            assert len(title) >= 12 and full.startswith(title.rstrip("…")), (
                cat,
                title,
                full,
            )
        assert rows[0][1].startswith("Use JWT: short-lived")
        assert "Login with JWT access" in screen  # the session summary, titled by the work it did
        assert not list(memory.glob("*/*.md"))

        # The first row is selected: its document shows on the right (its front matter fills the pane's top).
        term.wait_for(
            "the decision's document", lambda s: "category: decision" in s and "metadata:" in s
        )

        # `a` approves it: its file appears in the memory root, its row leaves the queue.
        term.press("a")
        term.wait_for(f"a decision file in {memory}", lambda s: any(memory.glob("decision/*.md")))
        (saved,) = memory.glob("decision/*.md")
        doc = memfile.parse(saved.read_text())
        assert doc.category == "decision" and doc.title == records["decision"]["title"]
        # (a frame is written line by line: wait for the whole of it)
        term.wait_for(
            "the decision gone from the queue",
            lambda s: (
                "Pending 5" in s
                and [r[1] for r in queue_rows(s)]
                == ["constraint", "runbook", "tech_debt", "preference", "session_summary"]
            ),
        )
        term.wait_for("the notification of the save", lambda s: "create:" in s)
        assert doc.id in (memory / "MEMORY.md").read_text()

        # `q` quits, exit code 0.
        term.press("q")
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_quitting_while_claude_drafts_does_not_wait_for_it(project, tmp_path):
    """`q` while every draft waits on a `claude` child that would answer in 10 minutes: the app exits at
    once (exit 0), the children are killed, and the drafts left half-done are there for the next run."""
    memory = tmp_path / "memory"
    data = stage_demo(project, memory, tmp_path)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: claude-cli\nmemory:\n  root: {memory}\n"
    )
    bin_dir, pids = tmp_path / "bin", tmp_path / "pids"
    bin_dir.mkdir()
    pids.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(
        f"#!{sys.executable}\nimport os, sys, time\nsys.stdin.read()\n"
        f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()\ntime.sleep(600)\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("ANTHROPIC_API_KEY", None)

    term = Terminal(memcurate_exe() + ["--project", str(project)], cwd=project, env=env)
    try:
        term.wait_for(
            "the drafts running", lambda s: "running" in s and len(list(pids.iterdir())) >= 2
        )
        running = [int(p.name) for p in pids.iterdir()]
        term.press("q")
        assert term.wait_exit() == 0  # well before the children would have answered
        deadline = time.monotonic() + TIMEOUT
        while running and time.monotonic() < deadline:  # killed: gone once init reaps them
            running = [pid for pid in running if _alive(pid)]
            term._pump(0.05)
        assert running == []
        states = {
            c: r["state"]
            for tid in staging.triage_ids(str(data))
            for c, r in staging.category_states(str(data), tid).items()
        }
        # resumed by the next run
        assert "drafting" in states.values() and not list(memory.glob("*/*.md"))
    finally:
        term.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
