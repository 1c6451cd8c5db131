"""The review TUI driven through Textual's Pilot: keys in, files on disk and the screen out.

Every test runs the real app (widgets.app) over a tmp project with the offline drafter and
awaits the app's own workers (tui_helpers.settle); nothing sleeps and nothing is timed.
There is no asyncio plugin here: each test runs its scenario with asyncio.run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import io
import shlex
import shutil
import sys
import threading
import weakref
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_hook
from rich.console import Console
from scenarios import DEMO, stage_demo
from textual.widgets import Input, OptionList, Static, TextArea
from tui_helpers import engine_factory, settle, tui, until, watching

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.candidate import read_review
from memcurate.curator.candidates.pipeline import process
from memcurate.curator.drafting import DraftResult
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util.paths import data_dir
from memcurate.widgets.app import REVIEW_ACTIONS
from memcurate.widgets.dialogs import (
    ActionDialog,
    ConfirmDialog,
    EditorScreen,
    FilterDialog,
    HelpScreen,
    ReasonDialog,
)
from memcurate.widgets.footer import TidyFooter
from memcurate.widgets.panels import DocumentView
from memcurate.widgets.queue import COLUMNS, QueueTable

DEMO_CATEGORIES = [
    "decision",
    "constraint",
    "runbook",
    "tech_debt",
    "preference",
    "session_summary",
]
SIZE = (160, 30)


@pytest.fixture
def memory(tmp_path) -> Path:
    return tmp_path / "memory"


# -- setting up staged work ---------------------------------------------------------------


def edit_staged(project: Path, memory: Path, tid: str, cat: str, change) -> dict:
    """Edit a staged draft through the engine (as another front end would): `change(text) -> text`."""
    engine = engine_factory(project, memory)()
    try:
        return engine.edit(tid, cat, change(engine.review(tid, cat)["text"]))
    finally:
        engine.close()


def staged_text(project: Path, tid: str, cat: str) -> str:
    return read_review(data_dir(project), tid, cat)["text"]


def state_of(project: Path, tid: str, cat: str) -> dict:
    return staging.category_states(data_dir(project), tid)[cat]


def memory_files(memory: Path) -> list[str]:
    """The memory files written, as category/file.md."""
    return sorted(
        str(p.relative_to(memory)) for p in memory.glob("*/*.md") if p.parent.name != "archive"
    )


def listed(memory: Path) -> set[tuple[str, str]]:
    """(category, id) of every entry MEMORY.md lists."""
    parsed = memory_md.parse((memory / "MEMORY.md").read_text())
    return {(e.category, e.id) for s in parsed.sections.values() for e in s.entries}


class Failing:
    """The offline drafter, except that the categories in `fail` fail until they are removed."""

    name = "failing"
    reason = "test"

    def __init__(self, fail: set[str]) -> None:
        self.fail, self.inner = set(fail), OfflineDrafter()

    def draft(self, request):
        if request.category in self.fail:
            return DraftResult(doc=None, text="", model="fake", error="the model said no")
        return self.inner.draft(request)


class Titled:
    """The offline drafter, with `title` as the decision's title (text that comes from a transcript)."""

    name = "titled"
    reason = "test"

    def __init__(self, title: str) -> None:
        self.title, self.inner = title, OfflineDrafter()

    def draft(self, request):
        result = self.inner.draft(request)
        if request.category == "decision" and result.doc is not None:
            result.doc = dataclasses.replace(result.doc, title=self.title)
            result.text = memfile.render(result.doc)
        return result


# -- driving the app ---------------------------------------------------------------------


def run(app, scenario, size=SIZE) -> None:
    """Run `scenario(pilot)` against `app` once its first load and drafting have settled."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


def table(app) -> QueueTable:
    return app.query_one(QueueTable)


def shown(app) -> list[str]:
    """The categories of the rows shown, top to bottom."""
    return [i.category for i in table(app).shown]


def row(app, cat: str):
    (item,) = [i for i in table(app).shown if i.category == cat]
    return item


def row_text(app, index: int) -> dict[str, str]:
    """The plain text of each cell of a row, as the queue shows it, by column name."""
    return {
        name: getattr(cell, "plain", str(cell))
        for (name, _), cell in zip(COLUMNS, table(app).get_row_at(index), strict=True)
    }


def text_of(widget: Static) -> str:
    """What a Static shows, as plain text: its Text, or any other renderable (a Group) drawn wide."""
    content = widget.content
    if hasattr(content, "plain"):
        return content.plain
    if isinstance(content, str):
        return content
    console = Console(width=1000, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


async def select(pilot, cat: str, tid: str | None = None) -> None:
    """Move the cursor (j/k) to the row of `cat` (of triage `tid` if given; "" is an error row's
    category) and wait for its detail to load."""
    app = pilot.app
    rows = table(app).shown
    (target,) = [n for n, i in enumerate(rows) if i.category == cat and tid in (None, i.tid)]
    for _ in range(len(rows) + 1):
        if table(app).cursor_row == target:
            break
        await pilot.press("j" if table(app).cursor_row < target else "k")
    item = app.selected()
    assert item is not None and item.category == cat and tid in (None, item.tid)
    await settle(pilot)


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


async def type_text(pilot, text: str) -> None:
    """Type `text` key by key (newlines as Enter)."""
    await pilot.press(*["enter" if ch == "\n" else ch for ch in text])


async def open_editor(pilot) -> TextArea:
    await press(pilot, "e")
    assert isinstance(pilot.app.screen, EditorScreen)
    return pilot.app.screen.query_one(TextArea)


async def cursor_to_row(pilot, area: TextArea, target: int) -> None:
    """Move the editor's cursor to line `target` with the arrow keys (soft wrap: several presses a line)."""
    for _ in range(400):
        current = area.cursor_location[0]
        if current == target:
            return
        await pilot.press("down" if current < target else "up")
    raise AssertionError(f"cursor stuck at {area.cursor_location}, wanted line {target}")


async def cursor_to_end(pilot, area: TextArea) -> None:
    for _ in range(50):
        if area.cursor_location == area.document.end:
            return
        await pilot.press("pagedown", "end")
    raise AssertionError(f"cursor stuck at {area.cursor_location}")


def no_suspend(app) -> None:
    """App.suspend raises SuspendNotSupported under the headless test driver: run $EDITOR in place."""
    app.suspend = contextlib.nullcontext


# -- 1. approve -----------------------------------------------------------------------------


def test_approve_saves_the_selected_memory_lists_it_in_memory_md_and_the_row_leaves(
    project, memory
):
    tid = stage_demo(project, memory)
    app = tui(project, memory)

    async def scenario(pilot):
        assert shown(app) == DEMO_CATEGORIES  # drafted by the app's own pipeline
        assert all(i.state == "ready" for i in table(app).shown)
        await select(pilot, "constraint")
        mem = memfile.parse(staged_text(project, tid, "constraint"))
        await press(pilot, "a")
        assert memory_files(memory) == [f"constraint/{mem.id}.md"]
        saved = memfile.parse((memory / "constraint" / f"{mem.id}.md").read_text())
        assert (saved.title, saved.body) == (mem.title, mem.body)
        assert listed(memory) == {("constraint", mem.id)}
        assert "constraint" not in shown(app) and len(shown(app)) == 5
        assert state_of(project, tid, "constraint")["state"] == "saved"
        assert table(app).border_title.startswith("Pending 5")

    run(app, scenario)


# -- 2. edit in the app ----------------------------------------------------------------------


def test_edit_in_the_app_changes_the_staged_text_and_approving_writes_the_edit(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "decision")
        area = await open_editor(pilot)
        assert area.text == staged_text(project, tid, "decision")
        await cursor_to_end(pilot, area)
        await type_text(pilot, "Edited by a person.")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, EditorScreen)
        text = staged_text(project, tid, "decision")
        assert text.rstrip().endswith("tolerable.\nEdited by a person.")
        assert row(app, "decision").state == "ready" and not row(app, "decision").blocks
        assert app.review["text"] == text  # the detail shows the edited text
        await press(pilot, "a")
        (path,) = memory_files(memory)
        doc = memfile.parse((memory / path).read_text())
        assert doc.sections["Consequences"].endswith("tolerable.\nEdited by a person.")
        assert "decision" not in shown(app)

    run(app, scenario)


def test_an_edit_that_breaks_the_front_matter_keeps_the_editor_open_and_changes_nothing(
    project, memory
):
    tid = stage_demo(project, memory, drafted=True)
    before = staged_text(project, tid, "decision")
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "decision")
        area = await open_editor(pilot)
        assert area.cursor_location == (0, 0)
        await pilot.press("delete", "delete", "delete")  # the opening '---' goes
        assert not area.text.startswith("---")
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, EditorScreen)  # still open, with the problem shown
        problems = text_of(app.screen.query_one("#editor-problems", Static))
        assert "line 1" in problems and "front matter" in problems
        assert staged_text(project, tid, "decision") == before
        await press(pilot, "escape")
        assert not isinstance(app.screen, EditorScreen)
        assert staged_text(project, tid, "decision") == before
        assert state_of(project, tid, "decision")["state"] == "ready"
        assert memory_files(memory) == []

    run(app, scenario)


# -- 3. $EDITOR -----------------------------------------------------------------------------------


def write_editor(tmp_path: Path, line: str, code: int = 0) -> str:
    """A stand-in for $EDITOR: appends `line` to the file it is given, exits with `code`."""
    script = tmp_path / f"editor-{code}.py"
    script.write_text(
        "import sys\n"
        f"with open(sys.argv[1], 'a', encoding='utf-8') as f:\n    f.write({line + chr(10)!r})\n"
        f"sys.exit({code})\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_external_editor_changes_the_staged_text(project, memory, tmp_path):
    tid = stage_demo(project, memory, drafted=True)
    before = staged_text(project, tid, "runbook")
    app = tui(project, memory, editor=write_editor(tmp_path, "Edited in $EDITOR."))
    no_suspend(app)

    async def scenario(pilot):
        await select(pilot, "runbook")
        await press(pilot, "E")
        after = staged_text(project, tid, "runbook")
        assert after == before + "Edited in $EDITOR.\n"
        assert row(app, "runbook").state == "ready"
        assert state_of(project, tid, "runbook")["state"] == "ready"

    run(app, scenario)


def test_an_external_editor_that_fails_changes_nothing(project, memory, tmp_path):
    tid = stage_demo(project, memory, drafted=True)
    before = staged_text(project, tid, "runbook")
    app = tui(project, memory, editor=write_editor(tmp_path, "Half an edit.", code=1))
    no_suspend(app)

    async def scenario(pilot):
        await select(pilot, "runbook")
        await press(pilot, "E")
        assert staged_text(project, tid, "runbook") == before
        assert row(app, "runbook").state == "ready"

    run(app, scenario)


def test_external_editor_where_the_terminal_cannot_be_handed_over_does_not_crash(
    project, memory, tmp_path
):
    tid = stage_demo(project, memory, drafted=True)
    before = staged_text(project, tid, "runbook")
    app = tui(project, memory, editor=write_editor(tmp_path, "Edited in $EDITOR."))

    async def scenario(pilot):
        await select(pilot, "runbook")
        await press(pilot, "E")
        assert staged_text(project, tid, "runbook") == before
        await press(pilot, "a")  # and the app still works
        assert len(memory_files(memory)) == 1

    run(app, scenario)


# -- 4. reject --------------------------------------------------------------------------------


def test_reject_with_a_reason_marks_the_category_rejected_and_writes_nothing(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "tech_debt")
        await press(pilot, "r")
        assert isinstance(app.screen, ReasonDialog)
        await type_text(pilot, "not worth keeping")
        await press(pilot, "enter")
        assert not isinstance(app.screen, ReasonDialog)
        rec = state_of(project, tid, "tech_debt")
        assert (rec["state"], rec["reason"]) == ("rejected", "not worth keeping")
        assert "tech_debt" not in shown(app) and len(shown(app)) == 5
        assert memory_files(memory) == [] and not (memory / "MEMORY.md").exists()

    run(app, scenario)


def test_escape_in_the_reject_dialog_rejects_nothing(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "tech_debt")
        await press(pilot, "r")
        await type_text(pilot, "never mind")
        await press(pilot, "escape")
        assert state_of(project, tid, "tech_debt")["state"] == "ready"
        assert "tech_debt" in shown(app)

    run(app, scenario)


# -- 5. approve everything clean ------------------------------------------------------------------


def test_approve_all_saves_every_clean_memory_and_leaves_those_with_issues(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    blocked = edit_staged(
        project, memory, tid, "decision", lambda t: t.replace("## Rationale", "## Thoughts")
    )
    assert blocked["blocked"]
    long = "\n\n" + "A paragraph the reviewer should shorten. " * 110
    advised = edit_staged(project, memory, tid, "tech_debt", lambda t: t.rstrip("\n") + long + "\n")
    assert not advised["blocked"] and any(i["code"] == "overlong" for i in advised["issues"])
    # the runbook's Verification says only that the tests pass: an advisory (form.py), so not clean
    clean = [c for c in DEMO_CATEGORIES if c not in ("decision", "tech_debt", "runbook")]
    # written by a person: no longer an offline card (an unwritten card is never clean)
    for cat in clean:
        assert not edit_staged(
            project, memory, tid, cat, lambda t: t.rstrip("\n") + " Checked by hand.\n"
        )["issues"]
    app = tui(project, memory)

    async def scenario(pilot):
        assert row(app, "decision").blocks and not row(app, "tech_debt").blocks
        assert row(app, "tech_debt").advisories
        assert "BLOCK" in row_text(app, shown(app).index("decision"))["issues"]
        assert "ADV" in row_text(app, shown(app).index("tech_debt"))["issues"]
        await press(pilot, "A")
        assert isinstance(app.screen, ConfirmDialog)
        assert "Approve 3 memories" in text_of(app.screen.query_one(".dialog-title", Static))
        await press(pilot, "y")
        assert [f.split("/")[0] for f in memory_files(memory)] == sorted(clean)
        assert {c for c, _ in listed(memory)} == set(clean)
        assert shown(app) == ["decision", "runbook", "tech_debt"]
        for cat in clean:
            assert state_of(project, tid, cat)["state"] == "saved"
        for cat in ("decision", "runbook", "tech_debt"):
            assert state_of(project, tid, cat)["state"] == "ready"
        assert app.check_action("approve_clean", ()) is None  # nothing clean is left

    run(app, scenario)


def test_approve_all_answered_no_saves_nothing(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await press(pilot, "A")
        await press(pilot, "n")
        assert memory_files(memory) == [] and shown(app) == DEMO_CATEGORIES

    run(app, scenario)


# -- 6. retry ------------------------------------------------------------------------------------


def test_retry_drafts_a_failed_category_again(project, memory):
    tid = stage_demo(project, memory)
    drafter = Failing({"runbook"})
    app = tui(project, memory, drafter=drafter)

    async def scenario(pilot):
        assert row(app, "runbook").state == "failed"  # the app's pipeline drafted the triage
        assert row(app, "decision").state == "ready"
        await select(pilot, "runbook")
        assert row_text(app, shown(app).index("runbook"))["action"] == "failed"
        # its retries, as the drafting chain recorded them
        assert "DRAFTING haiku: failed · 2 retries" in text_of(app.query_one("#issues", Static))
        assert app.check_action("retry_memory", ()) is True
        assert app.check_action("approve_memory", ()) is None
        drafter.fail.clear()  # the model answers again
        await press(pilot, "x")
        assert row(app, "runbook").state == "ready"
        assert row_text(app, shown(app).index("runbook"))["action"] == "create"
        assert state_of(project, tid, "runbook")["state"] == "ready"
        assert app.check_action("retry_memory", ()) is None
        assert app.check_action("approve_memory", ()) is True

    run(app, scenario)


# -- 7. a BLOCK -------------------------------------------------------------------------------------


def test_a_block_prevents_approval_until_an_edit_in_the_app_fixes_it(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    edit_staged(
        project, memory, tid, "decision", lambda t: t.replace("## Rationale", "## Thoughts")
    )
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "decision")
        assert row(app, "decision").blocks
        assert app.check_action("approve_memory", ()) is None  # greyed out
        assert "Rationale" in text_of(app.query_one("#issues", Static))
        await press(pilot, "a")
        assert memory_files(memory) == [] and "decision" in shown(app)
        assert state_of(project, tid, "decision")["state"] == "ready"

        area = await open_editor(pilot)
        await cursor_to_row(pilot, area, area.text.split("\n").index("## Thoughts"))
        await pilot.press("end", *["backspace"] * len("Thoughts"))
        await type_text(pilot, "Rationale")
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, EditorScreen)
        assert "## Rationale" in staged_text(project, tid, "decision")
        assert not row(app, "decision").blocks
        assert app.check_action("approve_memory", ()) is True

        await press(pilot, "a")
        (path,) = memory_files(memory)
        assert path.startswith("decision/")
        assert "Rationale" in memfile.parse((memory / path).read_text()).sections
        assert "decision" not in shown(app)

    run(app, scenario)


# -- 8. live: the real hook stages while the app runs ------------------------------------------------


def feed(project: Path, transcript: Path, session: str) -> None:
    """What Claude Code does: Stop at the end of the turn, SessionEnd at the end of the session."""
    for event in ("Stop", "SessionEnd"):
        p = run_hook(
            {
                "hook_event_name": event,
                "session_id": session,
                "transcript_path": str(transcript),
                "cwd": str(project),
            },
            cwd=project,
        )
        assert p.returncode == 0 and p.stdout == b"", p.stderr


def test_a_triage_the_hook_stages_while_the_app_runs_appears_and_is_drafted_without_a_key(
    project, memory, tmp_path
):
    session = "5e55a1d0-de70-4c1a-9a5e-000000000001"
    transcript = claude_transcripts() / f"{session}.jsonl"
    shutil.copyfile(DEMO, transcript)
    app = tui(project, memory, watch=True)

    async def scenario(pilot):
        assert shown(app) == []
        await watching(pilot)
        await asyncio.to_thread(feed, project, transcript, session)
        staged = staging.triage_ids(data_dir(project))  # Stop and SessionEnd: a triage each
        assert staged

        def drafted() -> bool:
            rows = table(app).shown
            return {i.tid for i in rows} == set(staged) and all(i.state == "ready" for i in rows)

        await until(pilot, drafted, "the hook's triages to show up drafted")
        assert "decision" in shown(app) and "session_summary" in shown(app)
        await select(pilot, "decision")
        await press(pilot, "a")
        assert [f.split("/")[0] for f in memory_files(memory)] == ["decision"]

    run(app, scenario)


# -- 9. a malformed staging file ---------------------------------------------------------------------


def test_a_malformed_triage_is_an_error_row_and_the_app_keeps_working(project, memory):
    tid = stage_demo(project, memory)
    bad = "20261122T120000Z-deadbeef"
    folder = Path(data_dir(project)) / "staging" / bad
    folder.mkdir(parents=True)
    (folder / "triage.json").write_text("{not json at all")
    app = tui(project, memory)

    async def scenario(pilot):
        items = table(app).shown
        errors = [i for i in items if i.is_error]
        assert [i.tid for i in errors] == [bad]
        assert sorted(i.category for i in items if not i.is_error) == sorted(DEMO_CATEGORIES)
        cells = row_text(app, items.index(errors[0]))
        assert cells["category"] == "error" and "unreadable" in cells["title"]

        await select(pilot, "", bad)
        assert "cannot be read" in text_of(app.query_one(DocumentView).query_one(Static))
        for action in (
            "approve_memory",
            "edit_memory",
            "edit_external",
            "reject_memory",
            "change_action",
            "retry_memory",
        ):
            assert app.check_action(action, ()) is None, action
        await press(pilot, "a", "r", "e", "x", "c")
        assert not app.screen.is_modal and len(table(app).shown) == 7

        await select(pilot, "decision")
        await press(pilot, "a")
        assert [f.split("/")[0] for f in memory_files(memory)] == ["decision"]
        assert state_of(project, tid, "decision")["state"] == "saved"
        assert [i.tid for i in table(app).shown if i.is_error] == [bad]

    run(app, scenario)


# -- 10. markup and escapes in drafted text ------------------------------------------------------------

MARKUP = "[bold red]x[/] [link=http://evil]click[/link] \x1b[31mred\x1b[0m [/]"


def test_markup_and_escapes_in_a_title_show_literally(project, memory):
    tid = stage_demo(project, memory)
    app = tui(project, memory, drafter=Titled(MARKUP))
    literal = "[bold red]x[/] [link=http://evil]click[/link] red [/]"  # the escape dropped, the rest as typed

    async def scenario(pilot):
        assert row(app, "decision").title == MARKUP  # what the draft says, escape and all
        index = shown(app).index("decision")
        cell = row_text(app, index)[
            "title"
        ]  # the cell is text: no markup applied, no escape (cut to its column)
        assert len(cell) > 20 and literal.startswith(cell.rstrip("…"))
        on_screen = table(app).render_line(1 + index).text  # line 0 is the header
        assert "[bold red]x[/] [link=http" in on_screen and "\x1b" not in on_screen
        await select(pilot, "decision")
        assert app.review["text"] == staged_text(project, tid, "decision")  # the document is shown
        await press(pilot, "r")  # the reject dialog names the title, literally
        assert isinstance(app.screen, ReasonDialog)
        assert "[bold red]x[/] [link=http://evil]" in text_of(
            app.screen.query_one(".dialog-title", Static)
        )
        await type_text(pilot, "[/]")
        await press(pilot, "enter")
        assert (
            state_of(project, tid, "decision")["state"],
            state_of(project, tid, "decision")["reason"],
        ) == ("rejected", "[/]")
        assert "decision" not in shown(app) and len(shown(app)) == 5  # and the app goes on

    run(app, scenario, size=(200, 50))


@pytest.mark.parametrize(
    "title", ["Use JWT \x1b[31mnow\x1b[0m", "Use JWT\tnow"], ids=["escape", "tab"]
)
def test_a_title_with_a_control_character_is_blocked_not_stuck_half_approved(
    project, memory, title
):
    tid = stage_demo(project, memory)
    app = tui(project, memory, drafter=Titled(title))

    async def scenario(pilot):
        await select(pilot, "decision")
        await press(pilot, "a")
        rec = state_of(project, tid, "decision")
        assert rec["state"] == "ready", rec["state"]  # refused: not saved, not left `approved`
        # shown blocked
        assert row(app, "decision").blocks and app.check_action("reject_memory", ()) is True

    run(app, scenario)


# -- 11. change the action -----------------------------------------------------------------------------


def test_changing_the_action_to_noop_then_approving_writes_no_file(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "preference")
        assert row(app, "preference").action == "create"
        await press(pilot, "c")
        assert isinstance(app.screen, ActionDialog)
        options = app.screen.query_one(OptionList)
        assert options.highlighted_option.id == "create"
        await pilot.press("down", "down")
        assert options.highlighted_option.id == "noop"
        await press(pilot, "enter")
        assert row(app, "preference").action == "noop"
        assert row_text(app, shown(app).index("preference"))["action"] == "noop"
        assert read_review(data_dir(project), tid, "preference")["decision"]["action"] == "noop"
        await press(pilot, "a")
        assert memory_files(memory) == []
        rec = state_of(project, tid, "preference")
        assert (rec["state"], rec["saved_action"]) == ("saved", "noop")
        assert "preference" not in shown(app)

    run(app, scenario)


# -- 12. filter and help ---------------------------------------------------------------------------------


def test_filter_shows_only_matching_rows_and_an_empty_filter_shows_all(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    # a BLOCK
    edit_staged(project, memory, tid, "runbook", lambda t: t.replace("## Steps", "## Things"))
    app = tui(project, memory)

    async def scenario(pilot):
        await press(pilot, "slash")
        assert isinstance(app.screen, FilterDialog)
        await type_text(pilot, "decision")
        await press(pilot, "enter")
        assert shown(app) == ["decision"]
        assert "filter: decision" in table(app).border_title

        await press(pilot, "slash")
        assert app.screen.query_one(Input).value == "decision"
        await pilot.press("end")  # the current filter is selected: typing would replace it
        await type_text(pilot, " block")  # decision rows with a BLOCK: none
        await press(pilot, "enter")
        assert shown(app) == []

        await press(pilot, "slash")
        await pilot.press("ctrl+u")
        await type_text(pilot, "block")
        await press(pilot, "enter")
        assert shown(app) == ["runbook"]

        await press(pilot, "slash")
        await pilot.press("ctrl+u")
        await press(pilot, "enter")
        assert shown(app) == DEMO_CATEGORIES
        assert "filter" not in table(app).border_title

    run(app, scenario)


def test_help_lists_every_key(project, memory):
    app = tui(project, memory)
    display = {"slash": "/", "question_mark": "?"}

    async def scenario(pilot):
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        from test_tui_library import plain_of  # the body is a key table and the notes, not one Text

        text = "\n".join(plain_of(s) for s in app.screen.query(Static))
        for _, keys, _, description in REVIEW_ACTIONS:
            assert f"{display.get(keys, keys)}  {description}" in text, keys
        await press(pilot, "escape")
        assert not isinstance(app.screen, HelpScreen)

    run(app, scenario)


# -- the command palette and the mouse --------------------------------------------------------------


def test_the_command_palette_offers_the_review_actions_that_apply(project, memory):
    from textual.command import CommandPalette

    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "constraint")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Approve the selected memory" in titles and "Retry a failed category" not in titles
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await type_text(pilot, "approve the selected")
        await press(pilot, "enter")
        await settle(pilot)
        mem = memfile.parse(staged_text(project, tid, "constraint"))
        assert memory_files(memory) == [f"constraint/{mem.id}.md"]

    run(app, scenario)


def test_a_click_selects_a_row(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        assert table(app).cursor_row == 0
        target = shown(app).index("tech_debt")
        await pilot.click(QueueTable, offset=(20, target + 2))  # +2: the border and the header row
        await settle(pilot)
        assert app.selected().category == "tech_debt"
        # its document shown
        assert app.review_key == app.selected().key and "tech_debt" in app.review["text"]

    run(app, scenario)


# -- work another process holds ------------------------------------------------------------------


class Gated:
    """An offline drafter that waits for a gate: drafting stays in progress until the test opens it."""

    name = "gated"
    reason = "test"

    def __init__(self) -> None:
        self.gate, self.inner = threading.Event(), OfflineDrafter()

    def draft(self, request):
        self.gate.wait(60)
        return self.inner.draft(request)


def test_the_drafting_chain_of_the_selection_shows_in_its_issues_and_model_column(project, memory):
    from memcurate.curator.candidates.queue import Item
    from memcurate.widgets.panels import _model

    tid = stage_demo(project, memory, drafted=True)
    chain = [
        {
            "model": "sonnet",
            "outcome": "failed",
            "retries": 2,
            "elapsed": 3.5,
            "error": "anthropic: 529 overloaded_error: Overloaded (after 3 attempts)",
        },
        {"model": "haiku", "outcome": "ok", "retries": 0, "elapsed": 1.25},
    ]
    staging.set_state(
        str(data_dir(project)), tid, "decision", "ready", model="claude-haiku-4-5", attempts=chain
    )
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        await select(pilot, "decision")
        issues = text_of(app.query_one("#issues", Static))
        assert (
            "DRAFTING sonnet: failed · 2 retries · 3.5s · anthropic: 529 overloaded_error" in issues
        )
        assert "DRAFTING haiku: ok · 1.2s" in issues
        assert _model(row(app, "decision")) == "sonnet→haiku"
        assert (
            _model(Item(tid, "runbook", "ready", record={"model": "haiku", "attempts": chain[1:]}))
            == "haiku"
        )

    run(app, scenario)


def test_the_progress_of_a_triage_another_process_holds_shows_live(project, memory):
    tid = stage_demo(project, memory)
    app = tui(project, memory, watch=True, run_pipeline=False)
    gated = Gated()
    # the other holder: its own engine and claim
    other = engine_factory(project, memory, drafter=gated)()

    async def scenario(pilot):
        await watching(pilot)
        holder = asyncio.get_running_loop().run_in_executor(None, process, other, tid)

        def in_progress() -> bool:
            return {i.state for i in table(app).shown} == {"drafting"}

        await until(pilot, in_progress, "the other holder's drafting to show")
        assert app.check_action("approve_memory", ()) is None  # nothing to approve while it drafts
        screen = app.export_screenshot()  # what a person sees: the progress panel's draft stages
        assert "running" in screen and "Pipeline" in screen
        gated.gate.set()
        assert set((await holder).values()) == {"ready"}

        def drafted() -> bool:
            return {i.state for i in table(app).shown} == {"ready"}

        await until(pilot, drafted, "the other holder's drafts to show ready")
        assert len(shown(app)) == 6

    try:
        run(app, scenario)
    finally:
        gated.gate.set()
        other.close()


def test_the_footer_lets_go_of_the_keys_it_replaces(project, memory):
    """Moving between rows whose actions differ greys approve or not in the footer's own keys, updated in
    place: none is replaced, so none is left behind (textual keeps replaced keys' caches alive: a long-running
    app would grow without bound)."""
    tid = stage_demo(project, memory, drafted=True)
    # a BLOCK
    edit_staged(project, memory, tid, "runbook", lambda t: t.replace("## Steps", "## Things"))
    app = tui(project, memory)

    def greyed(footer) -> dict[str, bool]:
        return {key.action: key.has_class("-disabled") for key in footer.query("FooterKey")}

    async def scenario(pilot):
        footer = app.query_one(TidyFooter)
        await select(pilot, "runbook")
        assert greyed(footer)["approve_memory"] is True
        keys = list(footer.query("FooterKey"))
        assert keys
        # every key the footer shows on the way, held weakly: counted, not kept alive (a scan of every
        # object would also find earlier tests' apps, which a later app's gc.freeze may have frozen)
        seen = weakref.WeakSet(keys)
        for _ in range(2):
            await select(pilot, "tech_debt")
            seen.update(footer.query("FooterKey"))
            assert greyed(footer)["approve_memory"] is False
            await select(pilot, "runbook")
            seen.update(footer.query("FooterKey"))
            assert greyed(footer)["approve_memory"] is True
        assert list(footer.query("FooterKey")) == keys
        gc.collect()
        left = [k for k in seen if k not in keys]
        assert not left, f"{len(left)} footer keys replaced and still alive"

    run(app, scenario)


def test_each_draft_shows_its_confidence_in_the_queue_and_why_in_its_issues(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    # An edit that adds an advisory (an overlong body) lowers the decision's confidence, and says why.
    before = read_review(data_dir(project), tid, "decision")["confidence"]["value"]
    record = edit_staged(
        project, memory, tid, "decision", lambda t: t + "\n" + "Padding words. " * 400
    )
    after = record["confidence"]
    assert after["value"] < before
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        await select(pilot, "decision")
        cells = row_text(app, table(app).cursor_row)
        assert cells["conf"] == f"{after['value']:.2f}"  # the queue's conf column
        for other in table(app).shown:
            conf = read_review(data_dir(project), tid, other.category)["confidence"]["value"]
            assert other.confidence == conf
        issues = text_of(app.query_one("#issues", Static))
        assert f"CONF     {after['value']:.2f} · evidence " in issues
        # the factor that pulled it down, and why
        assert "-0.25 advisory: overlong (body): the body is" in issues

    run(app, scenario)
