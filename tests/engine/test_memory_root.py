"""Where memories go (DESIGN §4) and what the hook may open.

The memory root is derived from the repository the way Claude Code derives its
auto-memory folder (one per repository: its subfolders and worktrees share it),
`autoMemoryDirectory` moves it, auto memory switched off stops saving, and no
hook payload can move it. The hook reads transcripts only from Claude Code's
projects folder or the project, and creates its data dir only in the project
Claude Code names (CLAUDE_PROJECT_DIR, else its own cwd)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from synthetic import Transcript, text, tool

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.engine import Engine
from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import (
    CONFIG_DIR_RECORD,
    AutoMemoryOff,
    main_worktree,
    project_key,
)

DEMO = Path(asset(os.path.join("demo", "session.jsonl")))
SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"


# -- helpers ---------------------------------------------------------------------------------


def config_dir() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"])


def derived(repo: Path, config: Path | None = None) -> Path:
    """Claude Code's auto-memory folder of the repository whose main worktree is `repo`."""
    return (config or config_dir()) / "projects" / project_key(os.path.realpath(repo)) / "memory"


def offline(project: Path) -> None:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")


def session_file(folder: Path, n: int = 1) -> Path:
    """The demo session (it drafts offline into every category), as session number `n`."""
    session = f"5e55a1d0-de70-4c1a-9a5e-{n:012d}"
    path = folder / f"{session}.jsonl"
    path.write_bytes(
        DEMO.read_bytes()
        .replace(SESSION.encode(), session.encode())
        .replace(b"JWT", f"JWT{n}".encode())
    )
    return path


def decision_session(tag: str = "postgres") -> Transcript:
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
    )


def hook(
    cwd: Path, transcript, event: str = "Stop", env: dict | None = None, **extra
) -> subprocess.CompletedProcess:
    """One hook call from a session in `cwd` (Claude Code runs hooks there and names it in the payload)."""
    doc = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": event,
    }
    doc.update(extra)
    p = run_hook(doc, cwd=cwd, env=env)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p.stderr
    return p


def feed(cwd: Path, transcript: Path, env: dict | None = None) -> None:
    for event in ("Stop", "SessionEnd"):
        hook(cwd, transcript, event, env)


def status(cwd: Path, env: dict | None = None) -> dict:
    p = run_cli("status", "--json", cwd=cwd, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def auto_approve(cwd: Path, env: dict | None = None) -> dict:
    p = run_cli("--auto-approve", "--json", cwd=cwd, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def saved_paths(summary: dict) -> list[str]:
    return [
        i["path"] for k in ("created", "updated", "deleted") for i in summary[k] if i.get("path")
    ]


def log_lines(project: Path) -> list[str]:
    p = project / ".memcurate" / "log" / "memcurate.log"
    return p.read_text().splitlines() if p.exists() else []


def staged(project: Path) -> list[str]:
    return staging.triage_ids(str(project / ".memcurate"))


def git(*args: str, cwd: Path) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


@pytest.fixture
def repo(tmp_path) -> dict[str, Path]:
    """A real repository made by git: the main worktree, a linked worktree, a subfolder."""
    main, wt = tmp_path / "repo", tmp_path / "repo-feature"
    (main / "sub").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=main)
    (main / "sub" / "README").write_text("x\n")
    git("add", "sub/README", cwd=main)
    git("commit", "-q", "-m", "init", cwd=main)
    git("worktree", "add", "-q", "-b", "feature", str(wt), cwd=main)
    for p in (main, wt):
        offline(p)
    return {"main": main, "wt": wt, "sub": main / "sub"}


# -- the root never moves ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "relative", "foreign", "another-project", "worktree"])
def test_no_hook_payload_moves_the_memory_root(kind, repo, tmp_path):
    main, wt = repo["main"], repo["wt"]
    root = derived(main)
    feed(main, session_file(claude_transcripts(project_key(main)), 1))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd, transcript = {
        "missing": (main, claude_transcripts("-no-such-project") / "gone.jsonl"),
        "relative": (main, "notes/s.jsonl"),
        "foreign": (main, session_file(elsewhere, 2)),
        "another-project": (main, session_file(claude_transcripts("-home-dev-other"), 3)),
        "worktree": (wt, session_file(claude_transcripts(project_key(wt)), 4)),
    }[kind]
    if kind == "relative":
        (main / "notes").mkdir()
        session_file(main / "notes", 5).rename(main / transcript)
    feed(cwd, transcript)

    for where in (main, wt, repo["sub"]):
        assert status(where)["memory_root"] == str(root)
    for project in (main, wt):
        engine = Engine(project)
        assert engine.root == str(root)
        engine.close()
    for project in (main, wt):
        for path in saved_paths(auto_approve(project)):
            assert path.startswith(str(root) + os.sep), path
    assert (root / "MEMORY.md").is_file()
    seen = Path(transcript) if os.path.isabs(transcript) else cwd / transcript
    assert not (seen.parent / "memory").exists()  # what the old record would have made the root
    assert not list(tmp_path.rglob(".memcurate/memory-root.json"))


def test_sessions_in_two_worktrees_and_a_subfolder_save_into_one_folder(repo):
    main, wt, sub = repo["main"], repo["wt"], repo["sub"]
    root = derived(main)
    # Claude Code keeps each session's transcript under the folder it started in...
    feed(main, session_file(claude_transcripts(project_key(main)), 1))
    feed(wt, session_file(claude_transcripts(project_key(wt)), 2))
    feed(
        sub,
        session_file(claude_transcripts(project_key(sub)), 3),
        env={"CLAUDE_PROJECT_DIR": str(sub)},
    )
    # ...and one auto-memory folder for the whole repository.
    # main saves its own and the subfolder's session
    first, second = (
        auto_approve(main),
        auto_approve(wt),
    )
    saved = saved_paths(first) + saved_paths(second)
    assert first["created"] and all(p.startswith(str(root) + os.sep) for p in saved), saved
    assert not derived(wt).exists() and not derived(sub).exists()
    # The worktree's session was decided against the memories the main worktree saved: the same folder.
    assert second["noop"] and not second["created"]
    assert not first["failed"] and not second["failed"]


def _hand_made(
    tmp_path: Path, *, relative: bool = False, back: str | None = None
) -> tuple[Path, Path]:
    """The files `git worktree add` leaves, written by hand: <main>/.git/worktrees/w and <wt>/.git."""
    main, wt = tmp_path / "main", tmp_path / "linked"
    gitdir = main / ".git" / "worktrees" / "w"
    gitdir.mkdir(parents=True)
    (wt / "deep" / "er").mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    (gitdir / "gitdir").write_text(f"{back or wt / '.git'}\n")
    (wt / ".git").write_text(f"gitdir: {os.path.relpath(gitdir, wt) if relative else gitdir}\n")
    return main, wt


@pytest.mark.parametrize("relative", [False, True])
def test_a_hand_made_linked_worktree_shares_the_main_worktrees_folder(tmp_path, relative):
    main, wt = _hand_made(tmp_path, relative=relative)
    assert main_worktree(wt) == str(main)
    assert main_worktree(wt / "deep" / "er") == str(main)
    assert main_worktree(main) == str(main)
    offline(wt)
    engine = Engine(wt)
    assert engine.root == str(derived(main))
    engine.close()


def test_a_git_file_that_does_not_point_back_keeps_its_own_folder(tmp_path):
    # A `.git` file naming another repository's worktree entry cannot borrow that repository's memory.
    main, wt = _hand_made(tmp_path, back=str(tmp_path / "somewhere-else" / ".git"))
    assert main_worktree(wt) == str(wt)
    # A submodule's `.git` file points at a git dir with no commondir: its own repository.
    sub = tmp_path / "submodule"
    (main / ".git" / "modules" / "s").mkdir(parents=True)
    sub.mkdir()
    (sub / ".git").write_text(f"gitdir: {main / '.git' / 'modules' / 's'}\n")
    assert main_worktree(sub) == str(sub)
    # Outside git: the folder itself.
    lone = tmp_path / "lone"
    lone.mkdir()
    assert main_worktree(lone) == str(lone)


# -- autoMemoryDirectory -----------------------------------------------------------------------------


def _settings(path: Path, **doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_auto_memory_directory_from_user_settings_with_a_tilde(project, isolated_home):
    offline(project)
    _settings(config_dir() / "settings.json", autoMemoryDirectory="~/claude-memory")
    doc = status(project)
    assert doc["memory_root"] == str(isolated_home / "claude-memory")
    assert doc["memory_root_source"] == "autoMemoryDirectory"
    assert str(config_dir() / "settings.json") in doc["memory_root_from"]
    feed(project, session_file(claude_transcripts(project_key(project))))
    saved = saved_paths(auto_approve(project))
    assert saved and all(p.startswith(str(isolated_home / "claude-memory") + os.sep) for p in saved)
    assert not derived(project).exists()


def test_local_settings_win_over_user_settings(project, tmp_path):
    offline(project)
    _settings(config_dir() / "settings.json", autoMemoryDirectory=str(tmp_path / "user-choice"))
    _settings(
        project / ".claude" / "settings.local.json",
        autoMemoryDirectory=str(tmp_path / "local-choice"),
    )
    doc = status(project)
    assert doc["memory_root"] == str(tmp_path / "local-choice")
    assert str(project / ".claude" / "settings.local.json") in doc["memory_root_from"]


@pytest.mark.parametrize(
    "where,value",
    [("project", "/tmp/evil"), ("user", "relative/folder"), ("local", "~user/folder")],
)
def test_auto_memory_directory_claude_code_would_not_take_is_ignored(where, value, project):
    # The docs: accepted from policy, local and user settings, not from the shared project settings
    # (a cloned repository must not redirect memory writes); the path must be absolute or start with ~/.
    offline(project)
    path = {
        "project": project / ".claude" / "settings.json",
        "user": config_dir() / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }[where]
    _settings(path, autoMemoryDirectory=value)
    doc = status(project)
    assert doc["memory_root"] == str(derived(project))
    assert doc["memory_root_source"] == "derived"
    assert any(str(path) in n and "ignored" in n for n in doc["memory_root_notes"])
    text = run_cli("status", cwd=project)
    assert text.returncode == 0 and "ignored" in text.stdout


# -- auto memory off -------------------------------------------------------------------------------

OFF = {
    "env": ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, None, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"),
    "user-settings": ({}, "user", "autoMemoryEnabled: false"),
    "project-settings": ({}, "project", "autoMemoryEnabled: false"),
}


def _switch_off(case: str, project: Path) -> dict:
    env, where, _ = OFF[case]
    if where == "user":
        _settings(config_dir() / "settings.json", autoMemoryEnabled=False)
    elif where == "project":
        _settings(project / ".claude" / "settings.json", autoMemoryEnabled=False)
    return env


@pytest.mark.parametrize("case", sorted(OFF))
def test_auto_memory_off_refuses_to_save_with_one_clear_line_and_capture_still_stages(
    case, project
):
    offline(project)
    env = _switch_off(case, project)
    feed(project, session_file(claude_transcripts(project_key(project))), env=env)
    assert staged(project)  # capture goes on: nothing is lost
    p = run_cli("--auto-approve", cwd=project, env=env)
    assert p.returncode == 1 and p.stdout == ""
    [line] = p.stderr.splitlines()
    assert "auto memory is off" in line and OFF[case][2] in line and "memory.root" in line
    assert "Traceback" not in p.stderr
    assert not derived(project).exists()
    doc = status(project, env)
    assert doc["auto_memory"]["enabled"] is False and OFF[case][2] in doc["auto_memory"]["why"]
    assert "auto memory  OFF" in run_cli("status", cwd=project, env=env).stdout


def test_the_environment_variable_set_to_0_turns_auto_memory_on_over_the_settings(project):
    offline(project)
    _settings(project / ".claude" / "settings.json", autoMemoryEnabled=False)
    env = {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}
    feed(project, session_file(claude_transcripts(project_key(project))), env=env)
    assert saved_paths(auto_approve(project, env))
    assert (derived(project) / "MEMORY.md").is_file()


def test_with_auto_memory_off_a_configured_memory_root_still_saves(project, tmp_path):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {tmp_path / 'mine'}\n"
    )
    env = {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    feed(project, session_file(claude_transcripts(project_key(project))), env=env)
    saved = saved_paths(auto_approve(project, env))
    assert saved and all(p.startswith(str(tmp_path / "mine") + os.sep) for p in saved)


def test_approving_in_the_tui_with_auto_memory_off_marks_nothing_approved(project, monkeypatch):
    offline(project)
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "true")
    engine = Engine(project)
    try:
        capture(engine.data, engine.cfg, str(DEMO), event="backfill", summary=True)
        [tid] = staging.triage_ids(engine.data)
        ready = [c for c, s in engine.process(tid).items() if s == "ready"]
        assert ready
        with pytest.raises(AutoMemoryOff, match="memory.root"):
            engine.approve_all(tid, ready)
        assert {staging.category_state(engine.data, tid, c)["state"] for c in ready} == {"ready"}
    finally:
        engine.close()
    assert not derived(project).exists()


# -- the config dir the hook ran under ---------------------------------------------------------------


def test_the_hook_records_its_config_dir_only_for_this_projects_transcripts(project, tmp_path):
    offline(project)
    alt = tmp_path / "alt-claude"
    env = {"CLAUDE_CONFIG_DIR": str(alt)}
    # A session of another project under that config dir proves nothing about this one.
    other = alt / "projects" / "-home-dev-other"
    other.mkdir(parents=True)
    feed(project, session_file(other, 1), env=env)
    assert "config dir not recorded" in log_lines(project)[-1]
    assert status(project)["memory_root"] == str(derived(project))
    # This project's own session there does: the TUI, started from a shell without that
    # CLAUDE_CONFIG_DIR, then finds the folder Claude Code really uses.
    mine = alt / "projects" / project_key(project)
    mine.mkdir(parents=True)
    feed(project, session_file(mine, 2), env=env)
    doc = status(project)
    assert doc["memory_root"] == str(derived(project, alt))
    assert doc["claude_config_dir"] == str(alt)
    assert CONFIG_DIR_RECORD in doc["claude_config_dir_from"]
    assert all(p.startswith(str(derived(project, alt))) for p in saved_paths(auto_approve(project)))


# -- what the hook may open ---------------------------------------------------------------------------


def _hostile_transcript(case: str, project: Path, tmp_path: Path) -> str:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = decision_session().write(elsewhere / "s.jsonl")
    if case == "outside":
        return str(outside)
    if case == "symlink-out-of-projects":
        link = claude_transcripts() / "link.jsonl"
        link.symlink_to(outside)
        return str(link)
    if case == "dotdot-out-of-projects":
        decision_session().write(config_dir() / "not-a-session.jsonl")
        return str(claude_transcripts()) + "/../../not-a-session.jsonl"
    if case == "relative":
        decision_session().write(project / "s.jsonl")
        return "s.jsonl"
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case", ["outside", "symlink-out-of-projects", "dotdot-out-of-projects", "relative"]
)
def test_the_hook_reads_no_file_outside_claudes_projects_folder_and_the_project(
    case, project, tmp_path
):
    transcript = _hostile_transcript(case, project, tmp_path)
    hook(project, transcript)
    [line] = log_lines(project)
    assert "not read" in line and "internal error" not in line
    assert staged(project) == []
    assert not (project / ".memcurate" / "offsets").exists()


def test_the_hook_reads_transcripts_inside_the_project_and_triage_reads_any_path(project, tmp_path):
    inside = decision_session("kafka").write(project / "notes" / "s.jsonl")
    hook(project, inside)
    assert len(staged(project)) == 1
    # Paths given on the command line are the person's own choice: allowed anywhere.
    (tmp_path / "elsewhere").mkdir()
    outside = decision_session("redis").write(tmp_path / "elsewhere" / "s.jsonl")
    p = run_cli("triage", str(outside), cwd=project)
    assert p.returncode == 0, p.stderr
    assert len(staged(project)) == 2


@pytest.mark.parametrize("key", ["transcript_path", "cwd"])
@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])
def test_a_nul_or_a_lone_surrogate_in_a_path_is_a_clean_skip(key, bad, project):
    good = decision_session().write(claude_transcripts() / "s.jsonl")
    doc = {
        "session_id": SESSION,
        "transcript_path": str(good),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }
    doc[key] += bad
    p = run_hook(doc, cwd=project)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p.stderr
    [line] = log_lines(project)
    assert key in line and "skipped" in line and "internal error" not in line
    assert staged(project) == []


# -- where the hook creates its data dir ---------------------------------------------------------------


def test_a_payload_cwd_outside_the_project_creates_nothing_there(project, tmp_path):
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    path = decision_session().write(claude_transcripts() / "s.jsonl")
    p = run_hook(
        {
            "session_id": SESSION,
            "transcript_path": str(path),
            "cwd": str(other),
            "hook_event_name": "Stop",
        },
        cwd=project,
    )
    assert p.returncode == 0 and p.stderr == b""
    assert not (other / ".memcurate").exists()
    assert len(staged(project)) == 1


def test_claude_project_dir_names_the_project(project, tmp_path):
    other, neutral = tmp_path / "other", tmp_path / "neutral"
    (other / ".git").mkdir(parents=True)
    neutral.mkdir()
    path = decision_session().write(claude_transcripts() / "s.jsonl")
    p = run_hook(
        {
            "session_id": SESSION,
            "transcript_path": str(path),
            "cwd": str(other),
            "hook_event_name": "Stop",
        },
        cwd=neutral,
        env={"CLAUDE_PROJECT_DIR": str(project / "src")},
    )
    # CLAUDE_PROJECT_DIR must be a folder: a missing one falls back to the hook's cwd.
    assert p.returncode == 0 and p.stderr == b""
    assert (neutral / ".memcurate").is_dir() and not (other / ".memcurate").exists()
    (project / "src").mkdir()
    p = run_hook(
        {
            "session_id": SESSION,
            "transcript_path": str(path),
            "cwd": str(other),
            "hook_event_name": "Stop",
        },
        cwd=neutral,
        env={"CLAUDE_PROJECT_DIR": str(project / "src")},
    )
    assert p.returncode == 0 and p.stderr == b""
    assert len(staged(project)) == 1 and not (other / ".memcurate").exists()


# -- the demo ---------------------------------------------------------------------------------------------


def test_demo_auto_approve_saves_into_its_own_folder(tmp_path, isolated_home):
    home_before = sorted(isolated_home.rglob("*"))  # the fixture's user config only
    p = run_cli("demo", "--auto-approve", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    root = Path(doc["project"]).parent
    try:
        assert Path(doc["memory_root"]).is_relative_to(root / "claude" / "projects")
        assert doc["created"] and all(Path(i["path"]).is_relative_to(root) for i in doc["created"])
        assert sorted(isolated_home.rglob("*")) == home_before
    finally:
        shutil.rmtree(root, ignore_errors=True)
