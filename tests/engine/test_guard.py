"""The write guard (PreToolUse on Write, Edit, MultiEdit): a table of targets → exactly Claude Code's hook
JSON or nothing, in-process through hooks.dispatch.run and, for a few rows, through the real process."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import run_hook

from memcurate.curator import config
from memcurate.curator.util.paths import resolve_memory_root
from memcurate.hooks import dispatch

MEMORY_MD = """# Claude's notes
- the build runs with `make all`

<!-- memcurate:begin section=decision budget=40 -->
## Key Decisions
- [Use JWT for API auth](decision/use-jwt.md) \u2014 stateless tokens
<!-- memcurate:end section=decision -->

- a last note of Claude's
"""


@pytest.fixture
def setup(project):
    """The project, its memory root (derived, as Claude Code derives it) with a MEMORY.md, and a symlink
    `project/mem` into the root."""
    root = Path(resolve_memory_root(project, config.load(project))["path"])
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD)
    (root / "notes.md").write_text("old note\n")
    (project / "src").mkdir()
    (project / "mem").symlink_to(root, target_is_directory=True)
    return project, root


def payload(tool: str, tool_input: dict, cwd, **extra) -> dict:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s-1",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": str(cwd),
        **extra,
    }


def call(project, p: dict, *, review: bool = False, raw: bytes | None = None) -> tuple[str, str]:
    """Run the hook in-process; (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = dispatch.run(
            raw if raw is not None else json.dumps(p).encode(),
            {**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
            review_auto_memory=review,
        )
    finally:
        sys.stdout, sys.stderr = old
    assert code == 0
    return out.getvalue(), err.getvalue()


def decision(stdout: str) -> str | None:
    """The deny reason when stdout is exactly Claude Code's PreToolUse deny, None when stdout is empty."""
    if stdout == "":
        return None
    doc = json.loads(stdout)
    reason = doc["hookSpecificOutput"]["permissionDecisionReason"]
    assert doc == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    assert isinstance(reason, str) and reason
    return reason


OWN = "managed by memcurate"
SAY = "say it in the conversation"
# (name, tool, file_path with {root} {project} {home}, cwd ({project} default), expected: None or a reason fragment)
TABLE = [
    ("category file", "Write", "{root}/decision/use-jwt.md", None, OWN),
    ("nested in a category", "Write", "{root}/runbook/sub/x.md", None, OWN),
    ("archive", "Edit", "{root}/archive/decision.md", None, OWN),
    ("lock file", "Write", "{root}/.memcurate.lock", None, "lock or temporary"),
    ("temp file", "Write", "{root}/.MEMORY.md.4242.7.tmp", None, "lock or temporary"),
    ("claude's topic file", "Write", "{root}/notes.md", None, None),
    ("sibling with the same start", "Write", "{root}-old/decision/x.md", None, None),
    ("category name outside the root", "Write", "{project}/decision/x.md", None, None),
    (".. back into the root", "Write", "{root}/../memory/decision/x.md", None, OWN),
    (".. out of a category", "Write", "{root}/decision/../../x.md", None, None),
    ("..  out and in through a sibling", "Write", "{root}-old/../memory/archive/x.md", None, OWN),
    ("symlink into the root", "Write", "{project}/mem/decision/x.md", None, OWN),
    ("relative through the symlink", "Write", "mem/preference/x.md", "{project}", OWN),
    ("relative from a subfolder", "Write", "../mem/tech_debt/x.md", "{project}/src", OWN),
    ("relative source file", "Write", "src/app.py", "{project}", None),
    ("home-relative", "MultiEdit", "~/.claude/projects/{key}/memory/constraint/x.md", None, OWN),
    ("rules folder", "Write", "{project}/.claude/rules/memcurate/testing.md", None, "rules folder"),
    (
        "rules through ..",
        "Edit",
        "{project}/src/../.claude/rules/memcurate/x.md",
        None,
        "rules folder",
    ),
    ("other rules", "Write", "{project}/.claude/rules/style.md", None, None),
    ("a project source file", "Edit", "{project}/src/app.py", None, None),
]


def fill(s: str, project: Path, root: Path) -> str:
    return s.format(root=root, project=project, key=root.parent.name)


@pytest.mark.parametrize("name,tool,path,cwd,expected", TABLE, ids=[row[0] for row in TABLE])
def test_guard_table(setup, name, tool, path, cwd, expected):
    project, root = setup
    tool_input = {
        "file_path": fill(path, project, root),
        "content": "x",
        "old_string": "a",
        "new_string": "b",
        "edits": [{"old_string": "a", "new_string": "b"}],
    }
    out, err = call(project, payload(tool, tool_input, fill(cwd or "{project}", project, root)))
    reason = decision(out)
    assert err == ""
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason and SAY in reason


def edit(old: str, new: str, path) -> dict:
    return {"file_path": str(path), "old_string": old, "new_string": new}


@pytest.mark.parametrize(
    "tool,make,denied",
    [
        ("Edit", lambda p: edit("- a last note of Claude's", "- a changed note", p), False),
        ("Edit", lambda p: edit("# Claude's notes\n", "# Claude's notes\n- new line\n", p), False),
        ("Edit", lambda p: edit("stateless tokens", "stateful tokens", p), True),
        ("Edit", lambda p: edit("<!-- memcurate:end section=decision -->\n", "", p), True),
        (
            "Write",
            lambda p: {"file_path": str(p), "content": MEMORY_MD + "- appended by Claude\n"},
            False,
        ),
        ("Write", lambda p: {"file_path": str(p), "content": "# Claude's notes only\n"}, True),
        (
            "MultiEdit",
            lambda p: {
                "file_path": str(p),
                "edits": [
                    {"old_string": "make all", "new_string": "make build"},
                    {"old_string": "## Key Decisions", "new_string": "## Decisions"},
                ],
            },
            True,
        ),
        (
            "MultiEdit",
            lambda p: {
                "file_path": str(p),
                "edits": [
                    {"old_string": "make all", "new_string": "make build"},
                    {"old_string": "a last note", "new_string": "the last note"},
                ],
            },
            False,
        ),
        (
            "Edit",
            lambda p: edit("not in the file", "x", p),
            False,
        ),  # Claude Code's Edit fails it anyway
    ],
    ids=[
        "claude-line",
        "claude-insert",
        "entry",
        "marker",
        "write-keeps",
        "write-drops",
        "multi-in",
        "multi-out",
        "no-match",
    ],
)
def test_memory_md_edits_inside_sections_are_denied(setup, tool, make, denied):
    project, root = setup
    out, _ = call(project, payload(tool, make(root / "MEMORY.md"), project))
    reason = decision(out)
    assert (reason is not None) == denied
    if denied:
        assert "memcurate" in reason and "MEMORY.md" in reason
    assert (root / "MEMORY.md").read_text() == MEMORY_MD  # the guard itself never writes it


@pytest.mark.parametrize(
    "tool_input",
    [{}, {"file_path": 3}, {"file_path": "/tmp/a\0b"}, "not an object", {"file_path": ""}],
    ids=["missing", "number", "nul", "string", "empty"],
)
def test_malformed_tool_input_passes_and_logs(setup, tool_input):
    project, _ = setup
    out, err = call(project, payload("Write", tool_input, project))
    assert out == "" and err == ""
    log = (project / ".memcurate" / "log" / "memcurate.log").read_text()
    assert "without a usable tool_input.file_path: passed" in log


@pytest.mark.parametrize("tool", ["Read", "Bash", "NotebookEdit", None])
def test_other_tools_pass_silently(setup, tool):
    project, root = setup
    out, err = call(project, payload(tool, {"file_path": str(root / "decision" / "x.md")}, project))
    assert (out, err) == ("", "")


def test_configured_root_elsewhere_is_guarded_whole(setup):
    project, auto = setup
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text("memory:\n  root: team-memory\n")
    out, _ = call(
        project,
        payload(
            "Write",
            {"file_path": str(project / "team-memory" / "notes.md"), "content": "x"},
            project,
        ),
    )
    assert "memory root" in decision(out)
    # memory.root only adds a protected folder: memcurate's parts of Claude Code's own auto-memory folder
    # stay guarded (a config in Claude's reach must not open them), Claude's own files there pass.
    out, _ = call(
        project,
        payload("Write", {"file_path": str(auto / "decision" / "x.md"), "content": "x"}, project),
    )
    assert OWN in decision(out)
    out, _ = call(
        project, payload("Write", {"file_path": str(auto / "notes.md"), "content": "x"}, project)
    )
    assert out == ""


@pytest.mark.parametrize("rel,denied", [("memory/decision/x.md", True), ("src/app.py", False)])
def test_internal_error_fails_closed_where_it_guards(setup, monkeypatch, rel, denied):
    """A bug in deciding denies a write that may touch memcurate's files (with one stderr line), and still
    lets any other write through."""
    project, root = setup
    from memcurate.hooks import guard

    def boom(*a, **k):
        raise RuntimeError("bug")

    monkeypatch.setattr(guard, "decide", boom)
    target = project / rel if rel.startswith("src") else root.parent / rel
    out, err = call(project, payload("Write", {"file_path": str(target), "content": "x"}, project))
    assert (decision(out) is not None) == denied
    if denied:
        assert "internal error" in decision(out)
    assert err.count("\n") == 1 and "internal error" in err
    assert (
        "internal error: RuntimeError: bug"
        in (project / ".memcurate" / "log" / "memcurate.log").read_text()
    )


@pytest.mark.parametrize(
    "rel,expected", [("decision/x.md", OWN), ("notes.md", None), ("MEMORY.md", None)]
)
def test_real_process(setup, rel, expected):
    """The real `memcurate hook` process prints exactly the deny JSON, or nothing, and exits 0."""
    project, root = setup
    content = MEMORY_MD + "- more\n" if rel == "MEMORY.md" else "x"
    p = run_hook(
        payload("Write", {"file_path": str(root / rel), "content": content}, project),
        cwd=project,
        env={"CLAUDE_PROJECT_DIR": str(project)},
    )
    assert p.returncode == 0 and p.stderr == b""
    reason = decision(p.stdout.decode())
    assert (reason is None) if expected is None else (expected in reason)


def test_real_process_review_flag_stages(setup):
    project, root = setup
    p = run_hook(
        payload("Write", {"file_path": str(root / "notes.md"), "content": "new note\n"}, project),
        cwd=project,
        env={"CLAUDE_PROJECT_DIR": str(project)},
        args=["--review-auto-memory"],
    )
    assert p.returncode == 0 and p.stderr == b""
    assert "queued for the person's approval as claude/" in decision(p.stdout.decode())
    assert (root / "notes.md").read_text() == "old note\n"


_PROBE = """
import json, sys
from memcurate.curator.cli import main
rc = main(["hook", *sys.argv[1:]])
sys.stdout.write("\\n" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize(
    "rel,args",
    [
        ("src/app.py", []),
        ("memory/decision/x.md", []),
        ("memory/MEMORY.md", []),
        ("memory/notes.md", ["--review-auto-memory"]),
    ],
    ids=["pass", "deny", "memory-md", "stage"],
)
def test_guard_path_imports_stay_light(setup, rel, args):
    """Every guard decision, staging included, loads no yaml, sqlite, textual, rich, anthropic or widgets."""
    import subprocess

    from conftest import ROOT

    project, root = setup
    target = project / rel if rel.startswith("src") else root.parent / rel
    content = MEMORY_MD + "- more\n" if rel.endswith("MEMORY.md") else "x\n"
    # the config cache exists, as after any earlier hook call
    config.load(project, project / ".memcurate")
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=project,
        capture_output=True,
        timeout=60,
        input=json.dumps(
            payload("Write", {"file_path": str(target), "content": content}, project)
        ).encode(),
        env={**os.environ, "PYTHONPATH": str(ROOT / "dev"), "CLAUDE_PROJECT_DIR": str(project)},
    )
    assert p.returncode == 0, p.stderr
    out, _, probe = p.stdout.decode().rpartition("\n")
    assert (decision(out) is None) == (rel in ("src/app.py", "memory/MEMORY.md"))
    modules = json.loads(probe)["modules"]
    for name in ("yaml", "sqlite3", "textual", "rich", "anthropic", "widgets"):
        assert not any(m == name or m.startswith(name + ".") for m in modules), name
