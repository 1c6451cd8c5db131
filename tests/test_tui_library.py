"""The library screen (key `l`): every memory, searched as you type, read, edited, archived, deleted,
and MEMORY.md as Claude Code loads it. Pilot tests on a tmp project; no watcher, a fixed clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher, Input, Static, TextArea
from tui_helpers import settle, tui

from curator.memory import memfile, memory_md
from widgets.library import LibraryScreen
from widgets.library_dialogs import ChangeConfirm, MemoryEditor
from widgets.library_table import LibraryTable, Row, fit, row_text
from widgets.queue import QueueTable

SIZE = (160, 45)


@pytest.fixture
def memory(tmp_path) -> Path:
    m = tmp_path / "memory"
    m.mkdir()
    return m


def memory_doc(mid: str, title: str, body_words: str = "", *, category: str = "decision",
               status: str = "active") -> str:
    return (f"---\nid: {mid}\ncategory: {category}\ntitle: {title}\ndescription: {title} in one line\n"
            f"type: project\ntags: [library]\ncreated: 2026-11-01T10:00:00Z\nupdated: 2026-11-01T10:00:00Z\n"
            f"sources:\n  - session: 0d3a8e6f-290f-4105-a327-a2496e5e2a83\n    turns: [1]\nstatus: {status}\n---\n"
            f"## Decision\n{title}. {body_words}\n\n## Rationale\nIt was the simplest choice that works.\n")


def save_memory(memory: Path, mid: str, title: str, body: str = "", **kw) -> Path:
    """A memcurate decision saved as the engine saves it: its file and its MEMORY.md line."""
    path = memory / "decision" / f"{mid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memory_doc(mid, title, body, **kw), encoding="utf-8")
    md = memory / "MEMORY.md"
    text = md.read_text(encoding="utf-8") if md.exists() else ""
    doc = memfile.parse(path.read_text(encoding="utf-8"))
    new = memory_md.apply(text, {"decision": [memory_md.entry_for(doc)]}, {"decision": 40}) \
        if hasattr(memory_md, "entry_for") else None
    if new is not None:
        md.write_text(new, encoding="utf-8")
    return path


async def open_library(pilot) -> LibraryScreen:
    await pilot.press("l")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LibraryScreen)
    await drain(pilot, screen)
    return screen


async def drain(pilot, screen) -> None:
    """Until the library's workers are done (they are the screen's, not the app's)."""
    for _ in range(200):
        await pilot.pause()
        busy = [w for w in screen.workers if w.is_running] if hasattr(screen, "workers") else []
        busy += [w for w in pilot.app.workers if w.is_running and w.group not in ("watch", "pipeline")]
        if not busy:
            await pilot.pause()
            return
        await pilot.app.workers.wait_for_complete(busy)
    raise AssertionError("the library did not settle")


# -- the table, on its own ------------------------------------------------------------------------

def test_a_long_title_keeps_its_end_so_two_titles_with_the_same_start_differ():
    a = "Use the retry budget of the upload client for every call to the storage service in region A"
    b = "Use the retry budget of the upload client for every call to the storage service in region B"
    assert fit(a, 40) != fit(b, 40)
    assert len(fit(a, 40)) == 40 and "…" in fit(a, 40)
    assert fit("short", 40) == "short"


def test_a_row_is_text_not_markup():
    row = Row("decision/x", "decision", "[bold red]not markup[/] \x1b[31m", "2026-11-01T10:00:00Z", "2d", "—",
              (), False, False, False)
    text = row_text(row, 120)
    assert "[bold red]not markup[/]" in text.plain


# -- MEMORY.md as Claude loads it ------------------------------------------------------------------

def test_memory_md_view_marks_the_load_cut_on_a_memory_md_of_250_lines(project, memory):
    lines = [f"- Claude's own note number {n}" for n in range(1, 251)]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pilot.press("m")
        await drain(pilot, screen)
        assert screen.query_one(ContentSwitcher).current == "library-memory-md"
        shown = str(screen.query_one("#memory-md-body", Static).render())
        rows = shown.splitlines()
        cut = next(i for i, r in enumerate(rows) if "stops loading here" in r)
        assert "200 lines" in rows[cut]
        assert rows[cut - 1].split()[0] == "200" and "note number 200" in rows[cut - 1]
        assert rows[cut + 1].split()[0] == "201" and rows[cut + 1].endswith("not loaded")
        assert "50 lines not loaded (from line 201)" in rows[0]
        assert not any("not loaded" in r for r in rows[1:cut])
        await pilot.press("m")
        assert screen.query_one(ContentSwitcher).current == "library-list"

    async def run():
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await scenario(pilot)

    import asyncio
    asyncio.run(run())


def test_escape_returns_to_the_queue_with_its_selection(project, memory):
    app = tui(project, memory, run_pipeline=False)

    async def run():
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            queue = app.query_one(QueueTable)
            before = queue.cursor_row, app.selected()
            screen = await open_library(pilot)
            assert screen.query_one(LibraryTable).has_focus
            await pilot.press("escape")
            await settle(pilot)
            assert not isinstance(app.screen, LibraryScreen)
            assert (app.query_one(QueueTable).cursor_row, app.selected()) == before
            assert app.query_one(QueueTable).has_focus

    import asyncio
    asyncio.run(run())
