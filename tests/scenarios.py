"""What the engine, TUI and snapshot tests all stage: engines over a tmp project with the offline
drafter, the bundled demo session, a failure that recurs over three sessions, one of Claude's topic
files. Textual-free, so the engine layer can use it (tests/engine/test_layout.py checks)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memcurate.curator.candidates.incremental import capture
from memcurate.curator.engine import Engine
from memcurate.curator.rules import ledger
from memcurate.curator.rules.signature import failures
from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import data_dir

DEMO = Path(asset(os.path.join("demo", "session.jsonl")))

# One of Claude's topic files and its MEMORY.md, before memcurate adopts it.
CLAUDE_TOPIC = (
    "---\nname: Short commit messages\ndescription: Keep commit subjects under 60 characters\ntype: feedback\n"
    "---\nKeep commit subjects under 60 characters because the log view [bold]cuts[/bold] them.\n"
)
MEMORY_MD = "# Memory\n\n- [Commits](commits.md) — short subjects\n- Use uv, not pip\n"


def engine_factory(project: Path, memory: Path, drafter=None):
    """Engines over `project` with an offline config whose memory root is `memory`."""
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    cfg = project / ".claude" / "memcurate.yaml"
    if not cfg.exists():
        cfg.write_text(
            f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n"
        )
    return lambda: Engine(project, clock=lambda: "2026-11-22T10:04:00Z", drafter=drafter)


def stage_demo(project: Path, memory: Path, *, drafted: bool = False) -> str:
    """Stage the bundled demo session (one triage, six categories); `drafted`: run the pipeline too."""
    engine = engine_factory(project, memory)()
    try:
        report = capture(engine.data, engine.cfg, str(DEMO), event="backfill", summary=True)
        assert report["status"] == "staged"
        if drafted:
            assert set(engine.process(report["triage"]).values()) == {"ready"}
        return report["triage"]
    finally:
        engine.close()


# One pytest failure as sessions see it: the temp path and the duration differ every time.
PYTEST = """============================= test session starts ==============================
collected 3 items

tests/test_store.py F..                                                  [100%]

=================================== FAILURES ===================================
__________________________________ test_save ___________________________________

    def test_save():
>       save('/tmp/tmpq{n}x7/data.json')
E       FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpq{n}x7/data.json'

tests/test_store.py:12: FileNotFoundError
=========================== short test summary info ============================
FAILED tests/test_store.py::test_save - FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpq{n}x7/data.json'
========================= 1 failed, 2 passed in 0.{n}3s =========================
"""
COMMAND = "uv run pytest -x"


def proj_files(project: Path) -> None:
    """The files the failures name."""
    for rel in ("tests/test_store.py", "app/store.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("# code\n")


def seen_output(
    project: Path,
    n: int,
    command: str,
    output: str,
    *,
    error: str | None = None,
    fix: dict | None = None,
) -> ledger.Recorded:
    """The failure `output` shows, in session n, recorded by the real ledger as the failure hook records it."""
    [failure] = failures(command, output, project=str(project))
    return ledger.record(
        data_dir(project),
        failure,
        session=f"session-{n}",
        at=f"2026-11-1{n}T09:3{n}:00Z",
        command=command,
        error=failure.excerpt if error is None else error,
        source="hook",
        fix=fix,
        threshold=3,
    )


def seen(
    project: Path, n: int, *, error: str | None = None, fix: dict | None = None
) -> ledger.Recorded:
    """The pytest failure in session n (another temp path and duration each time)."""
    return seen_output(project, n, COMMAND, PYTEST.format(n=n), error=error, fix=fix)


def recurring(project: Path) -> str:
    """The failure seen in three sessions (the last with markup and an escape in its error, and its fix):
    the candidate's key."""
    seen(project, 1)
    seen(project, 2)
    done = seen(
        project,
        3,
        error="E   FileNotFoundError: [bold red]no data dir[/bold red] \x1b[31mred\x1b[0m",
        fix={
            "text": "create the data dir in a fixture first",
            "files": ["tests/test_store.py"],
            "command": COMMAND,
        },
    )
    assert done.staged and done.sessions == 3
    return done.key


def offline_config(project: Path, root: Path) -> None:
    """`project`'s config: draft offline, into memory root `root`."""
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)


def git_project(project: Path, root: Path) -> None:
    """A git repository at `project` (with an author) whose config drafts offline into memory root `root`."""
    git(project, "init", "-q")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "t")
    offline_config(project, root)


def decisions_project(tmp_path: Path) -> tuple[Path, Path]:
    """(project, memory root) under `tmp_path`: a git project drafting offline into the root, whose
    `decision` folder is made and empty."""
    project, root = tmp_path / "project", tmp_path / "memory"
    (project / ".claude").mkdir(parents=True)
    (root / "decision").mkdir(parents=True)
    git_project(project, root)
    return project, root


def decision_text(id_: str, title: str, body: str) -> str:
    """A decision's file as `render` writes it (its description its title; the longer its id, the newer
    it is), `body` its Decision section."""
    return (
        f"---\nid: {id_}\ncategory: decision\ntitle: {title}\ndescription: {title}\ntype: project\n"
        f"tags: [test]\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-0{1 + len(id_) % 8}T00:00:00Z\n"
        f"sources:\n  - session: s1\n    turns: [1, 2]\nstatus: active\n---\n"
        f"## Decision\n{body}\n## Rationale\nBecause it was needed.\n"
    )
