"""The write guard under attack (issue 22): what Claude can write must not switch it off. Every case runs
the real `memcurate hook` process, as Claude Code does, and reads exactly Claude Code's hook JSON back.

Claude reaches the data dir, the project config and the records; the guard must deny writes into
memcurate's files whatever they hold, and deny, with a reason saying what to fix, whenever it cannot
decide about a write that may touch them. Every other write passes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_hook
from test_guard import MEMORY_MD, decision, payload

from memcurate.curator import config
from memcurate.curator.util.paths import resolve_memory_root

OWN = "managed by memcurate"


@pytest.fixture
def setup(project):
    """The project, its auto-memory folder (derived) with a MEMORY.md and a topic file of Claude's, a
    source folder, and the config cache as any earlier hook call leaves it."""
    root = Path(resolve_memory_root(project, config.load(project))["path"])
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY_MD)
    (root / "notes.md").write_text("old note\n")
    (project / "src").mkdir()
    (project / ".claude").mkdir()
    hook(project, "Write", {"file_path": str(project / "src" / "warm.py"), "content": "x"})
    assert (project / ".memcurate" / config.CACHE_NAME).is_file()
    return project, root


def hook(
    project: Path,
    tool: str | None,
    tool_input: dict | None,
    *,
    args=(),
    raw: bytes | None = None,
    cwd=None,
    env: dict | None = None,
) -> tuple[str | None, str]:
    """Run the real hook; (the deny reason or None, stderr)."""
    p = run_hook(
        payload(tool, tool_input, cwd or project),
        cwd=project,
        raw=raw,
        args=list(args),
        env={"CLAUDE_PROJECT_DIR": str(project), **(env or {})},
    )
    assert p.returncode == 0
    return decision(p.stdout.decode()), p.stderr.decode()


def write(path, content: str = "x\n") -> dict:
    return {"file_path": str(path), "content": content}


def log(project: Path) -> str:
    return (project / ".memcurate" / "log" / "memcurate.log").read_text()


# -- 1. the data dir ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,cwd",
    [
        ("{project}/.memcurate/claude-writes/abc123.json", None),
        ("{project}/.memcurate/rules/pytest-e1.json", None),
        ("{project}/.memcurate/config.cache.json", None),
        ("{project}/.memcurate/claude-config-dir.json", None),
        ("{project}/.memcurate/proposals/p1.json", None),
        (".memcurate/staging/t1/state.jsonl", "{project}"),
        ("../.memcurate/backups/x", "{project}/src"),
        ("{project}/src/../.memcurate/config.cache.json", None),
        ("{project}/data-link/config.cache.json", None),
    ],
    ids=[
        "claude-writes",
        "rules",
        "cache",
        "config-dir-record",
        "proposals",
        "relative",
        "relative-up",
        "dotdot",
        "symlink",
    ],
)
def test_writes_into_the_data_dir_are_denied(setup, path, cwd):
    project, _ = setup
    (project / "data-link").symlink_to(project / ".memcurate", target_is_directory=True)
    fill = {"project": project}
    reason, _ = hook(
        project, "Write", write(path.format(**fill), "{}"), cwd=(cwd or "{project}").format(**fill)
    )
    assert reason is not None and ".memcurate" in reason and "only memcurate writes" in reason


# -- 2. the config is the person's --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool,path",
    [
        ("Write", "{project}/.claude/memcurate.yaml"),
        ("Edit", "{home}/.config/memcurate/config.yaml"),
        ("MultiEdit", "~/.config/memcurate/config.yaml"),
    ],
    ids=["project-layer", "user-layer", "user-layer-home-relative"],
)
def test_writes_of_memcurates_config_are_denied(setup, tool, path):
    project, _ = setup
    target = path.format(project=project, home=os.environ["HOME"])
    tool_input = {
        "file_path": target,
        "content": "hooks: {review_auto_memory: false}\n",
        "old_string": "interval_minutes: 0",
        "new_string": "interval_minutes: 1",
        "edits": [{"old_string": "interval_minutes: 0", "new_string": "interval_minutes: 1"}],
    }
    reason, _ = hook(project, tool, tool_input)
    assert reason is not None and "ask the person" in reason and "editor" in reason


def test_memcurates_state_outside_the_project_is_denied(setup):
    """The install records and settings backups that `memcurate uninstall` gives back to Claude Code."""
    project, _ = setup
    for path in (
        "~/.local/state/memcurate/backups/installed.json",
        "~/.local/state/memcurate/backups/x.bak",
    ):
        reason, _ = hook(project, "Write", write(path, "{}"))
        assert reason is not None and "state folder" in reason


def test_memory_root_only_adds_a_protected_folder(setup):
    """memory.root set elsewhere (by a layer Claude can reach) guards that folder whole and leaves
    memcurate's parts of Claude Code's own folder guarded; Claude's own topic file there still passes."""
    project, root = setup
    (project / ".claude" / "memcurate.yaml").write_text("memory:\n  root: team-memory\n")
    assert "memory root" in hook(project, "Write", write(project / "team-memory" / "notes.md"))[0]
    assert OWN in hook(project, "Write", write(root / "decision" / "x.md"))[0]
    assert (
        OWN
        in hook(
            project,
            "Edit",
            {
                "file_path": str(root / "archive" / "decision.md"),
                "old_string": "a",
                "new_string": "b",
            },
        )[0]
    )
    assert (
        "sections of MEMORY.md" in hook(project, "Write", write(root / "MEMORY.md", "# mine\n"))[0]
    )
    assert hook(project, "Write", write(root / "notes.md"))[0] is None


def test_review_mode_is_tighten_only_across_layers(setup):
    """Review mode turned on in the user layer stays on when the project layer (within Claude's reach)
    turns it off: Claude's topic-file write is staged, not made."""
    project, root = setup
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "memcurate" / "config.yaml"
    user.write_text(user.read_text() + "hooks:\n  review_auto_memory: true\n")
    (project / ".claude" / "memcurate.yaml").write_text("hooks:\n  review_auto_memory: false\n")
    reason, _ = hook(project, "Write", write(root / "notes.md", "new note\n"))
    assert reason is not None and "queued for the person's approval" in reason
    assert (root / "notes.md").read_text() == "old note\n"


def test_the_config_dir_record_only_adds_a_protected_folder(setup, tmp_path):
    """The data dir's claude-config-dir.json is Claude's to write: a record naming another config dir
    guards memcurate's parts there too, and never un-guards the folder under the config dir Claude Code
    runs under (CLAUDE_CONFIG_DIR)."""
    project, root = setup
    other = tmp_path / "other-claude"
    (other / "projects").mkdir(parents=True)
    (project / ".memcurate" / "claude-config-dir.json").write_text(json.dumps({"path": str(other)}))
    other_root = other / "projects" / root.parent.name / "memory"
    assert OWN in hook(project, "Write", write(root / "decision" / "x.md"))[0]
    assert OWN in hook(project, "Write", write(other_root / "decision" / "x.md"))[0]
    assert hook(project, "Write", write(root / "notes.md"))[0] is None


# -- 3. a damaged or forged cache -----------------------------------------------------------------------------


def _forge(project: Path, change) -> None:
    cache = project / ".memcurate" / config.CACHE_NAME
    # the config on the first line, the keyword index on the second (kept as it was)
    head, _, index = cache.read_text().partition("\n")
    doc = json.loads(head)
    change(doc)
    cache.write_text(json.dumps(doc) + "\n" + index)


@pytest.mark.parametrize(
    "change,rebuilt",
    [
        (lambda d: d["config"]["memory"].update(root="/nowhere/else"), False),
        (lambda d: d.update(config={}), True),
        (lambda d: d["config"]["hooks"].pop("review_auto_memory"), True),
        (lambda d: d["config"].update(memory="auto"), True),
        (lambda d: d["config"]["rules"].pop("ledger_max_entries"), True),
        (lambda d: d["config"]["rules"].update(ledger_max_bytes="lots"), True),
    ],
    ids=[
        "root-moved",
        "empty-config",
        "key-missing",
        "wrong-type",
        "ledger-cap-missing",
        "ledger-cap-wrong-type",
    ],
)
def test_a_forged_cache_does_not_open_the_guard(setup, change, rebuilt):
    """A cache whose key still matches but whose config moves memory.root changes nothing (a root only adds
    a protected folder); one emptied or of the wrong shape is rebuilt from the YAML layers."""
    project, root = setup
    _forge(project, change)
    reason, err = hook(project, "Write", write(root / "decision" / "x.md"))
    assert reason is not None and OWN in reason and err == ""
    assert (
        "sections of MEMORY.md" in hook(project, "Write", write(root / "MEMORY.md", "# mine\n"))[0]
    )
    assert hook(project, "Write", write(project / "src" / "app.py"))[0] is None
    if rebuilt:
        doc = json.loads(
            (project / ".memcurate" / config.CACHE_NAME).read_text().partition("\n")[0]
        )
        assert (
            doc["config"]["memory"]["root"] == "auto"
            and config.cache_problem(doc["config"]) is None
        )


# -- 4. a config error --------------------------------------------------------------------------------------

BAD_VALUE = "recall:\n  max_chars: 99999\n"


def test_a_config_error_denies_guarded_writes_and_says_what_to_fix(setup):
    """One invalid value in the project config: every write that may touch memcurate's files is denied, with
    a reason naming the file and the key; a write elsewhere and a write of Claude's own topic file pass.

    The choice for Claude's topic files: the auto-memory folder is guarded whole only in review mode, and
    with a config error the guard still reads each layer on its own; a layer that parses and turns review
    mode on (or any layer it cannot read) keeps the folder guarded, see the next tests. Here no layer
    turns it on, so Claude's own memory is not held hostage by an unrelated typo."""
    project, root = setup
    yaml = project / ".claude" / "memcurate.yaml"
    yaml.write_text(BAD_VALUE)
    for target in (
        root / "decision" / "x.md",
        project / ".claude" / "rules" / "memcurate" / "x.md",
        project / ".memcurate" / "rules" / "k.json",
        yaml,
    ):
        reason, _ = hook(project, "Write", write(target))
        assert reason is not None, target
    reason, _ = hook(project, "Write", write(root / "MEMORY.md", "# Claude's notes only\n"))
    assert "sections of MEMORY.md" in reason
    assert hook(project, "Write", write(project / "src" / "app.py"))[0] is None
    assert hook(project, "Write", write(root / "notes.md"))[0] is None
    assert hook(project, "Write", write(root / "MEMORY.md", MEMORY_MD + "- mine\n"))[0] is None
    assert "recall.max_chars" in log(project)


def test_a_config_error_in_review_mode_denies_memory_writes_naming_the_key(setup):
    project, root = setup
    yaml = project / ".claude" / "memcurate.yaml"
    yaml.write_text("hooks:\n  review_auto_memory: true\n" + BAD_VALUE)
    reason, _ = hook(project, "Write", write(root / "notes.md", "new\n"))
    assert reason is not None and str(yaml) in reason and "recall.max_chars" in reason
    reason, _ = hook(
        project, "Write", write(root / "notes.md", "new\n"), args=["--review-auto-memory"]
    )
    assert reason is not None and "recall.max_chars" in reason
    assert (root / "notes.md").read_text() == "old note\n"
    assert hook(project, "Write", write(project / "src" / "app.py"))[0] is None


def test_an_unreadable_config_layer_keeps_the_auto_memory_folder_guarded(setup):
    """A layer that is not even YAML might have turned review mode on: the guard cannot tell, so Claude's
    memory writes are denied until the person fixes it; a memory.root a broken-but-readable layer names
    stays guarded."""
    project, root = setup
    (project / ".claude" / "memcurate.yaml").write_text("hooks: [unclosed\n")
    reason, _ = hook(project, "Write", write(root / "notes.md"))
    assert reason is not None and "memcurate.yaml" in reason
    assert hook(project, "Write", write(project / "src" / "app.py"))[0] is None
    (project / ".claude" / "memcurate.yaml").write_text(
        "memory:\n  root: team-memory\n" + BAD_VALUE
    )
    assert hook(project, "Write", write(project / "team-memory" / "x.md"))[0] is not None
    assert hook(project, "Write", write(root / "notes.md"))[0] is None


# -- 5. input the guard cannot read -------------------------------------------------------------------------


def _raw(project: Path, tool_input: dict, **extra) -> bytes:
    return json.dumps(payload("Write", tool_input, project, **extra), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )


def test_an_oversized_input_is_still_guarded(setup):
    """A Write over the dispatcher's 1 MiB cap replacing MEMORY.md is read whole and denied; one of a source
    file passes; an oversized input of another event is ignored as before."""
    project, root = setup
    big = "x" * (1 << 20) + "\n"
    reason, _ = hook(project, None, None, raw=_raw(project, write(root / "MEMORY.md", big)))
    assert reason is not None and "sections of MEMORY.md" in reason
    reason, _ = hook(project, None, None, raw=_raw(project, write(root / "decision" / "x.md", big)))
    assert reason is not None and OWN in reason
    assert (
        hook(project, None, None, raw=_raw(project, write(project / "src" / "big.py", big)))[0]
        is None
    )
    stop = json.dumps({"hook_event_name": "Stop", "session_id": "s", "padding": big}).encode()
    p = run_hook(None, cwd=project, raw=stop, env={"CLAUDE_PROJECT_DIR": str(project)})
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    assert "larger than" in log(project)


def test_invalid_utf8_is_read_tolerantly(setup):
    """Bytes that are not UTF-8 in a Write's content: the target is still found; denied into memcurate's
    files (the guard cannot read the content to decide), passed anywhere else."""
    project, root = setup
    for target, denied in (
        (root / "decision" / "x.md", True),
        (root / "MEMORY.md", True),
        (project / "src" / "app.py", False),
        (root / "notes.md", False),
    ):
        raw = _raw(project, write(target, "CONTENT")).replace(b"CONTENT", b"bad \xff\xfe bytes")
        reason, _ = hook(project, None, None, raw=raw)
        assert (reason is not None) == denied, target
        assert reason is None or ("could not read" in reason and "not UTF-8" in reason)


def test_invalid_utf8_in_the_path_is_denied_where_it_may_lead(setup):
    project, root = setup
    raw = _raw(project, write(root / "decision" / "PATH.md")).replace(b"PATH", b"\xff")
    assert hook(project, None, None, raw=raw)[0] is not None


def test_an_input_whose_target_cannot_be_found_is_denied(setup):
    """Not JSON at all, but a PreToolUse of Write: without its file_path the guard cannot tell, so it denies.
    A Stop input that is not JSON stays ignored."""
    project, root = setup
    raw = _raw(project, write(root / "decision" / "x.md"))
    cut = raw[: raw.index(b'"file_path"')] + b'"file_\xff'
    reason, _ = hook(project, None, None, raw=cut)
    assert reason is not None and "could not tell which file" in reason
    # the same cut after file_path: the path is found, the target guarded
    cut = raw[: raw.index(b'"content"')] + b'"content": "\xff'
    reason, _ = hook(project, None, None, raw=cut)
    assert reason is not None and "may be one of memcurate's files" in reason
    cut = _raw(project, write(project / "src" / "app.py")).replace(
        b'"content"', b'"content": "\xff", "x"'
    )
    assert hook(project, None, None, raw=cut)[0] is None
    p = run_hook(
        None,
        cwd=project,
        raw=b'{"hook_event_name": "Stop", "session_id": "s", \xff',
        env={"CLAUDE_PROJECT_DIR": str(project)},
    )
    assert (p.returncode, p.stdout) == (0, b"")


def test_a_lone_surrogate_in_the_path_is_denied_where_it_may_lead(setup):
    """Claude Code's runtime writes a lone surrogate as U+FFFD: the write lands in decision/ all the same."""
    project, root = setup
    reason, _ = hook(project, "Write", write(str(root / "decision" / "x") + "\ud800.md"))
    assert reason is not None and "lone surrogate" in reason
    assert hook(project, "Write", write(str(project / "src" / "x") + "\ud800.py"))[0] is None


def test_a_lone_surrogate_in_review_mode_is_denied_not_passed(setup):
    """Staging a content that is no text fails inside memcurate: the write is denied, not let through."""
    project, root = setup
    reason, _ = hook(
        project, "Write", write(root / "notes.md", "a\ud800b"), args=["--review-auto-memory"]
    )
    assert reason is not None
    assert (root / "notes.md").read_text() == "old note\n"


def test_an_internal_error_while_staging_denies(setup):
    """Anything failing while the guard stages a write (here: the records folder is a file) denies it."""
    project, root = setup
    (project / ".memcurate" / "claude-writes").write_text("not a folder")
    reason, err = hook(
        project, "Write", write(root / "notes.md", "new\n"), args=["--review-auto-memory"]
    )
    assert reason is not None and "internal error" in reason
    assert "internal error" in err
    assert (root / "notes.md").read_text() == "old note\n"
    assert (
        hook(project, "Write", write(project / "src" / "app.py"), args=["--review-auto-memory"])[0]
        is None
    )


# -- 6. file systems that ignore case ------------------------------------------------------------------------


def test_case_insensitive_file_systems_are_compared_folded(setup, monkeypatch):
    """On macOS and Windows `.MEMCURATE/`, `Decision/` or `.Claude/MemCurate.yaml` are the same files as
    memcurate's: denied. In-process, with the platform's folding switched on (this file system tells case
    apart, so only the comparison can be shown); Claude's own topic file still passes."""
    from test_guard import call

    from memcurate.hooks import guard

    project, root = setup
    monkeypatch.setattr(guard, "CASE_FOLDING", True, raising=False)
    for target in (
        project / ".MEMCURATE" / "config.cache.json",
        root / "Decision" / "x.md",
        project / ".Claude" / "MemCurate.yaml",
        project / ".claude" / "Rules" / "MEMCURATE" / "x.md",
    ):
        out, _ = call(project, payload("Write", write(target), project))
        assert decision(out) is not None, target
    assert call(project, payload("Write", write(root / "Notes.md"), project))[0] == ""


def test_a_data_dir_that_cannot_be_made_does_not_open_the_guard(setup):
    """`.memcurate` turned into a file (the hook cannot make its data dir, nor log, nor cache): memcurate's
    files stay guarded, other writes pass."""
    project, root = setup
    import shutil

    shutil.rmtree(project / ".memcurate")
    (project / ".memcurate").write_text("not a folder")
    reason, _ = hook(project, "Write", write(root / "decision" / "x.md"))
    assert reason is not None and OWN in reason
    assert (
        hook(project, "Write", write(project / ".claude" / "rules" / "memcurate" / "x.md"))[0]
        is not None
    )
    assert hook(project, "Write", write(project / "src" / "app.py"))[0] is None


# -- 7. memcurate's hooks in Claude Code's settings -------------------------------------------------------------


def test_writes_that_switch_memcurates_hooks_off_are_denied(setup):
    """memcurate installed in the project's local settings: removing its entries, changing their matcher,
    turning disableAllHooks on or breaking the JSON is denied; another setting changes freely."""
    project, _ = setup
    from memcurate.curator import install

    install.install(project, "local", entry=["/usr/local/bin/memcurate"])
    settings = project / ".claude" / "settings.local.json"
    text = settings.read_text()
    doc = json.loads(text)
    without = {**doc, "hooks": {e: g for e, g in doc["hooks"].items() if e != "PreToolUse"}}
    for tool_input in (
        write(settings, json.dumps(without)),
        write(settings, json.dumps({**doc, "disableAllHooks": True})),
        write(settings, text[:-3]),
        {"file_path": str(settings), "old_string": '"Write|Edit"', "new_string": '"Read"'},
    ):
        reason, _ = hook(project, "Edit" if "old_string" in tool_input else "Write", tool_input)
        assert reason is not None and "memcurate's hooks" in reason, tool_input
    assert hook(project, "Write", write(settings, json.dumps({**doc, "model": "opus"})))[0] is None
    assert (
        hook(
            project,
            "Write",
            write(project / ".claude" / "settings.json", '{"disableAllHooks": false}'),
        )[0]
        is None
    )
    assert json.loads(settings.read_text()) == doc


def test_a_linked_worktree_guards_the_main_worktrees_files_too(tmp_path):
    """A session in a linked worktree shares the main worktree's memory folder: the main checkout's data dir
    and rules folder are memcurate's too, its config the person's (the layout `git worktree add` leaves, written
    by hand)."""
    main, wt = tmp_path / "main", tmp_path / "linked"
    gitdir = main / ".git" / "worktrees" / "w"
    gitdir.mkdir(parents=True)
    wt.mkdir()
    (gitdir / "commondir").write_text("../..\n")
    (gitdir / "gitdir").write_text(f"{wt / '.git'}\n")
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    for target in (
        main / ".memcurate" / "config.cache.json",
        main / ".claude" / "rules" / "memcurate" / "x.md",
        wt / ".memcurate" / "config.cache.json",
    ):
        reason, _ = hook(wt, "Write", write(target))
        assert reason is not None and "only memcurate writes" in reason, target
    assert "ask the person" in hook(wt, "Write", write(main / ".claude" / "memcurate.yaml"))[0]
    assert hook(wt, "Write", write(main / "src" / "app.py"))[0] is None
