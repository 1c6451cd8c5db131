"""The TUI friction a new user hits (issue 26, Build §3): approve acts on what the person has seen, a key
pressed too soon is refused with why, an unknown filter word is an error, Esc from MEMORY.md goes back to the
library, A takes what --auto-approve would, an edited title names the new file, and 100×30 still works.
Pilot tests on a tmp project with the offline drafter (tests/tui/test_tui.py's helpers)."""

from __future__ import annotations

import threading

import pytest
from test_tui import (
    edit_staged,
    memory_files,
    open_editor,
    press,
    row,
    run,
    select,
    shown,
    stage_demo,
    staged_text,
    table,
    text_of,
)
from test_tui_claude_writes import said
from test_tui_library import drain, open_library, plain_of
from textual.widgets import ContentSwitcher, Static
from tui_helpers import engine_factory, settle, tui

from memcurate.curator.headless import auto_approve
from memcurate.curator.memory import memfile
from memcurate.widgets.dialogs import ConfirmDialog, EditorScreen, FilterDialog
from memcurate.widgets.library import LibraryScreen
from memcurate.widgets.panels import DocumentView


@pytest.fixture
def memory(tmp_path):
    return tmp_path / "memory"


def document_text(app) -> str:
    return plain_of(app.query_one(DocumentView).query_one("#document-body", Static))


async def review_done(pilot) -> None:
    """Until the review worker (the person's action) is done, whatever the selection worker does meanwhile."""
    app = pilot.app
    await pilot.pause()
    if busy := [
        w for w in app.workers if w.group == "review"
    ]:  # none given, textual would await every worker
        await app.workers.wait_for_complete(busy)
    await pilot.pause()


# -- 1. approve acts on what the person has seen -----------------------------------------------------------


def test_approve_before_the_draft_is_on_screen_is_refused_with_why_and_saves_nothing(
    project, memory
):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "decision")
        decision_title = row(app, "decision").title
        gate = threading.Event()
        real = app.engine.review

        def slow(*args, **kw):  # the selection's document takes its time to be read
            gate.wait(10)
            return real(*args, **kw)

        app.engine.review = slow
        try:
            await pilot.press("j")  # to the constraint: ready, its text not read yet
            await pilot.pause()
            assert app.selected().category == "constraint"
            assert decision_title in document_text(app)  # the panel still shows the row above
            told.clear()
            await pilot.press("a")
            await review_done(pilot)
            assert any(
                m.startswith("the draft is not on screen yet") and sev == "warning"
                for m, sev in told
            ), told
            assert memory_files(memory) == []
        finally:
            gate.set()
        await settle(pilot)
        mem = memfile.parse(staged_text(project, tid, "constraint"))
        assert mem.title in document_text(app)
        await press(pilot, "a")
        assert memory_files(memory) == [f"constraint/{mem.id}.md"]

    run(app, scenario)


def test_a_draft_changed_since_it_was_shown_is_not_approved(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)  # no watcher: the panel keeps the text it showed
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "constraint")
        shown_text = app.review["text"]
        edit_staged(
            project, memory, tid, "constraint", lambda t: t.rstrip("\n") + " Changed elsewhere.\n"
        )
        assert staged_text(project, tid, "constraint") != shown_text
        told.clear()
        await press(pilot, "a")
        assert memory_files(memory) == []
        assert any("changed since it was shown" in m and sev == "error" for m, sev in told), told
        # read again: the new text is on screen, and approving it saves it
        await select(pilot, "constraint")
        await press(pilot, "a")
        (path,) = memory_files(memory)
        assert "Changed elsewhere." in (memory / path).read_text()

    run(app, scenario)


# -- 2. an unknown filter word is an error ----------------------------------------------------------------


def test_an_unknown_filter_word_is_said_and_the_previous_filter_kept(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)
    told = said(app)

    async def filter_by(pilot, words: str) -> None:
        await press(pilot, "slash")
        assert isinstance(app.screen, FilterDialog)
        await pilot.press("ctrl+u", *words)
        await press(pilot, "enter")

    async def scenario(pilot):
        await filter_by(pilot, "dec")  # a category's start is a word the filter knows
        assert shown(app) == ["decision"]
        told.clear()
        await filter_by(pilot, "foo")
        ((message, severity),) = told
        assert severity == "error" and message.startswith("unknown filter word: foo (known: ")
        assert "decision" in message and "block" in message
        assert shown(app) == ["decision"] and "filter: dec" in table(app).border_title
        assert "Nothing waiting" not in document_text(app)

    run(app, scenario)


# -- 3. Esc from MEMORY.md goes back to the library ----------------------------------------------------------


def test_escape_from_the_memory_md_view_goes_back_to_the_library_then_the_queue(project, memory):
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- Claude's own note\n", encoding="utf-8")
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pilot.press("m")
        await drain(pilot, screen)
        assert screen.query_one(ContentSwitcher).current == "library-memory-md"
        await pilot.press("escape")
        await drain(pilot, screen)
        assert app.screen is screen and screen.query_one(ContentSwitcher).current == "library-list"
        assert screen.table.has_focus
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, LibraryScreen)

    run(app, scenario)


# -- 4. A takes what --auto-approve would ------------------------------------------------------------------


def test_approve_clean_leaves_what_the_auto_approve_gate_holds_and_says_so(project, memory):
    (project / ".claude").mkdir(parents=True)
    # (the tests' own config saves cards)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n"
        "auto_approve:\n  min_confidence: 0.9\n  offline_cards: false\n"
    )
    tid = stage_demo(project, memory, drafted=True)
    # written by a person: no issue left
    for cat in (
        "constraint",
        "preference",
        "session_summary",
    ):
        assert not edit_staged(
            project, memory, tid, cat, lambda t: t.rstrip("\n") + " Checked by hand.\n"
        )["issues"]
    app = tui(project, memory)
    offered: list[str] = []

    async def scenario(pilot):
        below = [
            c
            for c in ("constraint", "preference", "session_summary")
            if row(app, c).confidence < 0.9
        ]
        assert below and len(below) < 3  # the gate falls between them
        await press(pilot, "A")
        assert isinstance(app.screen, ConfirmDialog)
        offered.extend(i.category for i in app.clean_items())
        assert all(row(app, c).confidence >= 0.9 for c in offered) and not set(offered) & set(below)
        title = text_of(app.screen.query_one(".dialog-title", Static))
        assert f"Approve {len(offered)} memor" in title
        body = plain_of(Static(app.screen.body))
        assert f"{len(below)} with no issue but a confidence below 0.90" in " ".join(body.split())
        await press(pilot, "n")
        assert memory_files(memory) == []

    run(app, scenario, size=(160, 50))
    engine = engine_factory(project, memory)()
    try:
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert sorted(s["category"] for s in summary["created"]) == sorted(offered)


# -- 5. an edited title gets its file name -----------------------------------------------------------------


def test_an_edited_title_names_the_new_memory_file(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)
    told = said(app)
    new_title = "Deploys wait for the nightly freeze window to close"

    async def scenario(pilot):
        await select(pilot, "constraint")
        old = memfile.parse(staged_text(project, tid, "constraint"))
        area = await open_editor(pilot)
        area.load_text(area.text.replace(f"title: {old.title}", f"title: {new_title}", 1))
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, EditorScreen)
        slug = memfile.slugify(new_title)
        assert any(m == f"the file name follows the new title: {slug}.md" for m, _ in told), told
        await select(pilot, "constraint")
        await press(pilot, "a")
        assert memory_files(memory) == [f"constraint/{slug}.md"]
        assert memfile.parse((memory / "constraint" / f"{slug}.md").read_text()).title == new_title

    run(app, scenario)


def test_an_update_keeps_its_file_name_and_says_so():
    from memcurate.widgets.dialogs import follow_title

    before = (
        "---\nid: jwt-choice\ncategory: decision\ntitle: We chose JWT\ndescription: d\ntype: project\n"
        "tags: []\ncreated: 2026-11-01T10:00:00Z\nupdated: 2026-11-01T10:00:00Z\nstatus: active\n---\n"
        "## Decision\nJWT.\n"
    )
    after = before.replace("title: We chose JWT", "title: We chose signed cookies")
    text, note = follow_title(before, after, "update")
    assert (
        text == after
        and "keeps its name jwt-choice.md" in note
        and "updates an existing memory" in note
    )
    text, note = follow_title(before, after, "create")
    assert memfile.parse(text).id == "we-chose-signed-cookies" and note.endswith(
        "we-chose-signed-cookies.md"
    )
    renamed = after.replace("id: jwt-choice", "id: my-own-name")  # an id the person set is theirs
    assert follow_title(before, renamed, "create") == (renamed, "")


# -- 6. at 100×30 (its snapshot: tests/snapshots/test_tui_small_snapshots.py) ------------------------


def test_help_at_100_by_30_scrolls_and_says_so(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await press(pilot, "question_mark")
        body = app.screen.query_one("#help-body")
        assert "scroll" in str(app.screen.query_one("#help-hint").render())
        assert body.max_scroll_y > 0  # cut at this height: the keys scroll it
        await press(pilot, "pagedown")
        assert body.scroll_y > 0

    run(app, scenario, size=(100, 30))


def test_the_filter_names_each_kind_of_row_once():
    from memcurate.widgets.dialogs import FILTER_CATEGORIES
    from memcurate.widgets.queue import GROUPS

    assert len(FILTER_CATEGORIES) == len(set(FILTER_CATEGORIES)) and set(GROUPS) <= set(
        FILTER_CATEGORIES
    )
