"""Claude's own memory writes held for review (review mode) in the review TUI: they show in the queue
as category `claude`, with the text approving writes, its diff and issues; `a` approves and `r` rejects
them through the Engine; the keys that do not apply are greyed out and say why.

The memory root here is Claude Code's own auto-memory folder (no memory.root in the config), as in
tests/engine/test_claude_writes.py, whose `stage` calls the real hook function in review mode.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from conftest import run_hook
from rich.console import Console
from test_claude_writes import TOPIC, only_record, stage
from test_guard import MEMORY_MD, payload, setup  # noqa: F401 (setup is a fixture)
from test_tui import press, row_text, run, select, shown, table, text_of, type_text
from textual.widgets import Static
from tui_helpers import tui, until, watching

from memcurate.curator.candidates import claude_writes
from memcurate.curator.engine import Engine
from memcurate.curator.review import claude_write_actions
from memcurate.widgets.app import NOT_FOR_CLAUDE
from memcurate.widgets.dialogs import (
    ActionDialog,
    ConfirmDialog,
    EditorScreen,
    HelpScreen,
    ReasonDialog,
)
from memcurate.widgets.panels import DocumentView, IssuesView


@pytest.fixture
def review(setup):
    """`setup`'s project and memory root, with a config that leaves the memory root where Claude Code keeps
    its auto memory (the TUI helpers would otherwise point it elsewhere)."""
    project, root = setup
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        "backend: offline\ndrafting:\n  backoff_seconds: 0.0\n"
    )
    return project, root


def app_for(project: Path, **kw):
    # the config above wins: the memory argument is not used
    return tui(project, project / "unused", **kw)


def document(app) -> str:
    """The document panel's text as shown (its rich renderables rendered to plain text)."""
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(app.query_one(DocumentView).query_one("#document-body", Static).content)
    return console.export_text()


def said(app) -> list[tuple[str, str]]:
    """Spy on the app's notifications: (message, severity) of each, in order."""
    out: list[tuple[str, str]] = []
    real = app.notify

    def notify(message, *, severity="information", **kw):
        out.append((message, severity))
        return real(message, severity=severity, **kw)

    app.notify = notify
    return out


def claude_rows(app) -> list[tuple[str, str]]:
    """(title, action) of the claude rows, top to bottom."""
    return [(i.title, i.action) for i in table(app).shown if i.category == "claude"]


async def select_title(pilot, title: str) -> None:
    rows = table(pilot.app).shown
    (target,) = [n for n, i in enumerate(rows) if i.title == title]
    for _ in range(len(rows) + 1):
        if table(pilot.app).cursor_row == target:
            break
        await pilot.press("j" if table(pilot.app).cursor_row < target else "k")
    await select(pilot, "claude", rows[target].tid)


def test_a_staged_write_shows_in_the_queue_with_its_text_diff_and_issues(review):
    project, root = review
    edit = stage(
        project,
        "Edit",
        {"file_path": str(root / "notes.md"), "old_string": "old", "new_string": "new"},
    )
    write = stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})
    secret = stage(
        project,
        "Write",
        {"file_path": str(root / "aws.md"), "content": "key AKIA" + "ABCDEFGHIJKLMNOP\n"},
    )
    app = app_for(project)

    async def scenario(pilot):
        assert shown(app) == ["claude"] * 3
        assert {i.tid for i in table(app).shown} == {
            edit,
            write,
            secret,
        }  # the ids memcurate approve takes
        assert sorted(claude_rows(app)) == [
            ("aws.md", "create"),
            ("build commands", "create"),
            ("notes.md", "update"),
        ]
        assert table(app).border_title.startswith("Pending 3")
        rows = [i.title for i in table(app).shown]
        assert "BLOCK" in row_text(app, rows.index("aws.md"))["issues"]
        assert row_text(app, rows.index("build commands"))["category"] == "claude"

        await select_title(pilot, "notes.md")
        text = document(app)
        assert "Claude's own write: notes.md" in text and edit in text
        assert "Diff against notes.md as it was" in text
        assert "-old note" in text and "+new note" in text
        assert text.rstrip().endswith("new note")  # the text approving writes, last
        issues = text_of(app.query_one(IssuesView))
        assert "ADVISORY" in issues and "MEMORY.md" in issues  # no MEMORY.md line links to notes.md

        await select_title(pilot, "aws.md")
        # the secret is never on screen (nor stored): its tag is, and the BLOCK keeps it from being saved
        assert "A new file" in document(app) and "AKIA" + "ABCDEFGHIJKLMNOP" not in document(app)
        assert "[REDACTED:aws-access-key]" in document(app)
        assert "BLOCK" in text_of(app.query_one(IssuesView))
        # a BLOCK greys out approve, as for a memory
        assert app.check_action("approve_memory", ()) is None
        await press(pilot, "a")
        assert not (root / "aws.md").exists() and len(shown(app)) == 3

    run(app, scenario)


def test_a_writes_exactly_the_file_and_the_row_goes(review):
    project, root = review
    stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})
    app = app_for(project)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "claude")
        await press(pilot, "a")
        assert (root / "build.md").read_bytes() == TOPIC.encode()
        assert (root / "MEMORY.md").read_text() == MEMORY_MD  # nothing else touched
        assert only_record(project)["state"] == "saved"
        assert shown(app) == [] and table(app).border_title.startswith("Pending 0")
        assert told[-1] == ("saved Claude's write: build.md", "information")

    run(app, scenario)


def test_a_on_an_edit_of_memory_md_keeps_memcurates_sections(review):
    project, root = review
    stage(
        project,
        "Edit",
        {
            "file_path": str(root / "MEMORY.md"),
            "old_string": "- a last note of Claude's",
            "new_string": "- a last note of Claude's, edited",
        },
    )
    app = app_for(project)

    async def scenario(pilot):
        await select(pilot, "claude")
        assert "memcurate's sections are kept" in document(app)
        await press(pilot, "a")
        assert (root / "MEMORY.md").read_text() == MEMORY_MD.replace(
            "Claude's\n", "Claude's, edited\n"
        )

    run(app, scenario)


def test_r_with_a_reason_writes_nothing_and_keeps_the_reason(review):
    project, root = review
    stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})
    app = app_for(project)

    async def scenario(pilot):
        await select(pilot, "claude")
        await press(pilot, "r")
        assert isinstance(app.screen, ReasonDialog)
        assert "Claude's write “build commands”" in text_of(
            app.screen.query_one(".dialog-title", Static)
        )
        await type_text(pilot, "we build with nix now")
        await press(pilot, "enter")
        rec = only_record(project)
        assert (rec["state"], rec["history"][-1]["why"]) == ("rejected", "we build with nix now")
        assert not (root / "build.md").exists() and shown(app) == []

    run(app, scenario)


def test_a_conflict_is_said_and_nothing_is_written(review):
    project, root = review
    stage(
        project,
        "Edit",
        {"file_path": str(root / "notes.md"), "old_string": "old", "new_string": "new"},
    )
    app = app_for(project)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "claude")
        # after staging, before the person approves
        (root / "notes.md").write_text("changed by hand\n")
        await press(pilot, "a")
        message, severity = told[-1]
        assert severity == "error" and "notes.md changed since Claude's write was staged" in message
        assert "nothing was written" in message
        assert (root / "notes.md").read_text() == "changed by hand\n"
        assert only_record(project)["state"] == "pending" and shown(app) == ["claude"]

    run(app, scenario)


def test_keys_that_do_not_apply_are_greyed_out_and_say_why(review):
    project, root = review
    stage(project, "Write", {"file_path": str(root / "topic.md"), "content": TOPIC})
    stage(
        project,
        "Edit",
        {
            "file_path": str(root / "MEMORY.md"),
            "old_string": "# Claude's notes\n",
            "new_string": "# Claude's notes\n- [topic](topic.md)\n",
        },
    )
    app = app_for(project)
    told = said(app)

    async def scenario(pilot):
        await select_title(pilot, "build commands")
        # clean: MEMORY.md's pending write links it
        assert text_of(app.query_one(IssuesView)) == "No issues."
        for action, key in (
            ("edit_memory", "e"),
            ("edit_external", "E"),
            ("change_action", "c"),
            ("retry_memory", "x"),
        ):
            assert app.check_action(action, ()) is None, action  # greyed out in the footer
            await press(pilot, key)
            assert not isinstance(app.screen, (EditorScreen, ActionDialog)), key
            assert told[-1] == (NOT_FOR_CLAUDE[action], "warning"), key
        assert app.check_action("approve_memory", ()) and app.check_action("reject_memory", ())
        # A approves drafted memories only, as its help says: Claude's writes wait for a and r, one by one
        assert app.check_action("approve_clean", ()) is None
        await press(pilot, "A")
        assert not isinstance(app.screen, ConfirmDialog)
        assert not (root / "topic.md").exists()
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = "\n".join(text_of(s) for s in app.screen.query(Static))
        assert "Claude's own memory writes" in help_text and "A leaves them to you" in help_text

    run(app, scenario)


def test_a_write_the_hook_stages_while_the_app_runs_appears_and_goes_when_approved_elsewhere(
    review,
):
    project, root = review
    app = app_for(project, watch=True)
    target = root / "deploy.md"

    async def hook(tool: str, tool_input: dict) -> str:
        """Claude Code runs `memcurate hook --review-auto-memory` on a PreToolUse: the deny's reason."""
        p = await asyncio.to_thread(
            run_hook,
            payload(tool, tool_input, project),
            cwd=project,
            env={"CLAUDE_PROJECT_DIR": str(project)},
            args=["--review-auto-memory"],
        )
        assert p.returncode == 0 and p.stderr == b""
        return json.loads(p.stdout)["hookSpecificOutput"]["permissionDecisionReason"]

    async def scenario(pilot):
        assert shown(app) == []
        await watching(pilot)
        reason = await hook("Write", {"file_path": str(target), "content": TOPIC})
        await until(pilot, lambda: shown(app) == ["claude"], "the staged write to show up")
        (item,) = table(app).shown
        assert item.tid in reason and item.title == "build commands"
        await select(pilot, "claude")
        assert "+Build with `make all`" not in document(app)  # a new file: the text, no diff
        assert "Build with `make all`" in document(app)
        # Claude edits the file again: the same pending write, its new text on screen
        assert item.tid in await hook(
            "Edit",
            {"file_path": str(target), "old_string": "make all", "new_string": "make everything"},
        )
        await until(
            pilot, lambda: "make everything" in document(app), "the selected write's new text"
        )
        assert [i.tid for i in table(app).shown] == [item.tid]
        # approved from a script meanwhile: the row goes without a key pressed here
        await asyncio.to_thread(lambda: claude_write_actions.approve(Engine(project), item.tid))
        await until(pilot, lambda: shown(app) == [], "the approved write to leave the queue")
        assert target.read_text() == TOPIC.replace("make all", "make everything")
        assert claude_writes.records(project / ".memcurate")[0]["state"] == "saved"

    run(app, scenario)


def test_markup_and_escapes_in_claudes_text_show_literally(review):
    """What Claude writes is data (DESIGN §13): markup is shown as typed, escapes never reach the terminal."""
    project, root = review
    markup = "[bold red]x[/] [link=http://evil]click[/link]"
    text = f"---\nname: '{markup}'\ndescription: d\ntype: project\n---\nbody {markup} \x1b[31mred\x1b[0m \x1b]0;title\x07\n"
    stage(project, "Write", {"file_path": str(root / "odd.md"), "content": text})
    app = app_for(project)

    async def scenario(pilot):
        # the front matter's name, as text: no markup applied
        assert row_text(app, 0)["title"] == markup
        on_screen = table(app).render_line(1).text  # line 0 is the header
        assert markup in on_screen and "\x1b" not in on_screen
        await select(pilot, "claude")
        shown_text = document(app)
        assert (
            f"body {markup} red" in shown_text
            and "\x1b" not in shown_text
            and "\x07" not in shown_text
        )
        await press(pilot, "r")
        assert markup in text_of(app.screen.query_one(".dialog-title", Static))
        await press(pilot, "escape")
        assert only_record(project)["state"] == "pending"

    run(app, scenario, size=(200, 50))


def test_an_unreadable_staged_write_is_an_error_row_and_the_others_still_review(review):
    project, root = review
    stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})
    (project / ".memcurate" / "claude-writes" / "20200101T000000Z-broken00.json").write_text(
        "{not json"
    )
    app = app_for(project)

    async def scenario(pilot):
        (bad,) = [i for i in table(app).shown if i.is_error]
        assert bad.tid == "claude/20200101T000000Z-broken00" and "cannot be read" in bad.error
        await select(pilot, "claude", bad.tid)
        assert "This staged write of Claude's cannot be read" in document(app)
        assert (
            app.check_action("approve_memory", ()) is None
            and app.check_action("reject_memory", ()) is None
        )
        await select_title(pilot, "build commands")
        await press(pilot, "a")
        assert (root / "build.md").read_text() == TOPIC
        assert [i.tid for i in table(app).shown] == [bad.tid]

    run(app, scenario)
