"""The library screen (key `l`): every memory, searched as you type, read, edited, archived, deleted,
and MEMORY.md as Claude Code loads it. Pilot tests on a tmp project; no watcher, a fixed clock."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import ContentSwitcher, Input, Static, TextArea
from tui_helpers import engine_factory, settle, tui

from memcurate.curator.candidates.queue import age
from memcurate.curator.library.entries import Entry
from memcurate.curator.memory import memfile
from memcurate.curator.memory.memory_md.format import parse as parse_memory_md
from memcurate.curator.proposals import store as proposal_store
from memcurate.widgets.library import LibraryScreen
from memcurate.widgets.library_dialogs import ChangeConfirm, MemoryEditor
from memcurate.widgets.library_table import LibraryTable, fit, make_row, row_text
from memcurate.widgets.messages import StagingChanged
from memcurate.widgets.queue import QueueTable

SIZE = (160, 30)


@pytest.fixture
def memory(tmp_path) -> Path:
    m = tmp_path / "memory"
    m.mkdir()
    return m


def memory_doc(
    mid: str,
    title: str,
    body_words: str = "",
    *,
    category: str = "decision",
    status: str = "active",
) -> str:
    return (
        f"---\nid: {mid}\ncategory: {category}\ntitle: {title}\ndescription: {title} in one line\n"
        f"type: project\ntags: [library]\ncreated: 2026-11-01T10:00:00Z\nupdated: 2026-11-01T10:00:00Z\n"
        f"sources:\n  - session: 0d3a8e6f-290f-4105-a327-a2496e5e2a83\n    turns: [1]\nstatus: {status}\n---\n"
        f"## Decision\n{title}. {body_words}\n\n## Rationale\nIt was the simplest choice that works.\n"
    )


def save_memories(project: Path, memory: Path, docs: dict[str, str]) -> None:
    """memcurate memories saved through the Engine's change sets: each file and its MEMORY.md line."""
    engine = engine_factory(project, memory)()
    try:
        ops = []
        for ref, text in docs.items():
            ops += [
                {"op": "write", "ref": ref, "base_hash": None, "text": text},
                {"op": "add_line", "ref": ref},
            ]
        engine.apply_changes(ops)
    finally:
        engine.close()


def memory_md_ids(memory: Path) -> dict[str, list[str]]:
    """MEMORY.md parsed by memcurate's strict parser: each section's ids, newest first."""
    parsed = parse_memory_md((memory / "MEMORY.md").read_text(encoding="utf-8"))
    return {cat: [e.id for e in sec.entries] for cat, sec in parsed.sections.items()}


def run(app, scenario, size=SIZE) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


def plain_of(widget: Static) -> str:
    """What a Static shows, as plain text (its content may be a Group of Text and Syntax)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


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
        busy += [
            w for w in pilot.app.workers if w.is_running and w.group not in ("watch", "pipeline")
        ]
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


def test_a_row_is_text_not_markup_and_carries_no_escape_sequence():
    entry = Entry(
        ref="decision/x",
        owner="memcurate",
        category="decision",
        title="[bold red]not markup[/] \x1b[31mred\x1b[0m",
        description="",
        where="decision/x.md",
        path="/m/decision/x.md",
        status="active",
        created="2026-11-01T10:00:00Z",
        updated="2026-11-01T10:00:00Z",
        sources=(),
        tags=(),
        hash="",
        line=0,
        broken="",
    )
    text = row_text(make_row(entry), 120)
    assert "[bold red]not markup[/]" in text.plain
    assert (
        "\x1b" not in text.plain
        and not text.spans[2:3]
        or all(s.style != "bold red" for s in text.spans)
    )


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
        shown = plain_of(screen.query_one("#memory-md-body", Static))
        rows = shown.splitlines()
        cut = next(i for i, r in enumerate(rows) if "stops loading here" in r)
        assert "200 lines" in rows[cut]
        assert rows[cut - 1].split()[0] == "200" and "note number 200" in rows[cut - 1]
        assert rows[cut + 1].split()[0] == "201" and rows[cut + 1].endswith("not loaded")
        title = str(screen.query_one("#library-memory-md").border_title)  # said once, kept in sight
        assert "50 lines not loaded (from line 201)" in title and "not loaded (from" not in shown
        assert not any("not loaded" in r for r in rows[:cut])
        await pilot.press("m")
        assert screen.query_one(ContentSwitcher).current == "library-list"

    run(app, scenario)


def test_escape_returns_to_the_queue_with_its_selection(project, memory):
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        queue = app.query_one(QueueTable)
        before = queue.cursor_row, app.selected()
        screen = await open_library(pilot)
        assert screen.query_one(LibraryTable).has_focus
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, LibraryScreen)
        assert (app.query_one(QueueTable).cursor_row, app.selected()) == before
        assert app.query_one(QueueTable).has_focus

    run(app, scenario)


# -- reading, editing, archiving, deleting ---------------------------------------------------------

JWT = memory_doc("use-jwt-for-api-auth", "Use JWT for API authentication", "Stateless tokens.")
REDIS = memory_doc("keep-sessions-in-redis", "Keep sessions in Redis", "Shared by every worker.")
DOCS = {"decision/use-jwt-for-api-auth": JWT, "decision/keep-sessions-in-redis": REDIS}
CLAUDE_NOTE = "---\nname: Debugging notes\ndescription: how to debug the worker\ntype: project\n---\nUse pdb.\n"


def with_memories(project: Path, memory: Path) -> None:
    save_memories(project, memory, DOCS)
    (memory / "debugging.md").write_text(CLAUDE_NOTE, encoding="utf-8")


async def pick(pilot, screen, ref: str) -> None:
    assert screen.table.move_to(ref), [r.ref for r in screen.table.shown()]
    await drain(pilot, screen)
    assert screen.view is not None and screen.view_ref == ref


async def edit_jwt(pilot) -> tuple:
    """The library open, the JWT decision selected and `e` pressed: (library, editor, its text area)."""
    screen = await open_library(pilot)
    await pick(pilot, screen, "decision/use-jwt-for-api-auth")
    await pilot.press("e")
    await settle(pilot)
    editor = pilot.app.screen
    assert isinstance(editor, MemoryEditor)
    return screen, editor, editor.query_one(TextArea)


def refs_shown(screen) -> list[str]:
    return [r.ref for r in screen.table.shown()]


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


def test_the_library_lists_every_memory_grouped_with_claudes_own_last(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        assert refs_shown(screen) == [
            "decision/keep-sessions-in-redis",
            "decision/use-jwt-for-api-auth",
            "claude/debugging.md",
        ]
        assert [r.claude for r in screen.table.shown()] == [False, False, True]
        await pick(pilot, screen, "claude/debugging.md")
        doc = plain_of(screen.query_one("#library-doc", Static))
        assert "Claude's own" in doc and "Use pdb." in doc

    run(app, scenario)


def test_claudes_lines_are_listed_in_memory_md_order_after_its_files_and_ages_stay_short(
    project, memory
):
    with_memories(project, memory)
    md = memory / "MEMORY.md"
    lines = [
        f"- Claude remembers fact {i}" for i in range(12)
    ]  # hashes in another order than the file's
    md.write_text("\n".join(lines) + "\n" + md.read_text(encoding="utf-8"), encoding="utf-8")
    old = memory / "decision" / "keep-sessions-in-redis.md"
    # seven years old: an age of "7y", not a number of days the column cuts
    old.write_text(
        re.sub(
            r"(?m)^updated: .*$", "updated: 2019-01-01T00:00:00Z", old.read_text(encoding="utf-8")
        ),
        encoding="utf-8",
    )
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        claude = [r for r in screen.table.shown() if r.claude]
        assert claude[0].ref == "claude/debugging.md"  # Claude's files before its lines
        assert [r.title for r in claude[1:]] == [line[2:] for line in lines]
        [redis] = [r for r in screen.table.shown() if r.ref == "decision/keep-sessions-in-redis"]
        assert age(redis.updated, app.now) == f"{int((app.now - 1546300800) // (365 * 86400))}y"

    run(app, scenario)


def test_a_secret_in_a_memory_is_never_shown_on_screen(project, memory):
    key = "AKIAIOSFODNN7EXAMPLE"
    with_memories(project, memory)
    (memory / "debugging.md").write_text(
        f"# Debugging\nThe staging AWS key is {key} for now.\n", encoding="utf-8"
    )
    md = memory / "MEMORY.md"
    md.write_text(
        f"- the key {key} opens staging\n" + md.read_text(encoding="utf-8"), encoding="utf-8"
    )
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "claude/debugging.md")
        doc = plain_of(screen.query_one("#library-doc", Static))
        assert key not in doc and "[REDACTED:" in doc and "A secret in it is hidden here" in doc
        await pilot.press("m")
        await drain(pilot, screen)
        shown = plain_of(screen.query_one("#memory-md-body", Static))
        assert key not in shown and "the key [REDACTED:" in shown

    run(app, scenario)


def test_edit_in_the_app_saves_the_memory_and_its_memory_md_line_follows_the_new_title(
    project, memory
):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)
    path = memory / "decision" / "use-jwt-for-api-auth.md"

    async def scenario(pilot):
        screen, editor, area = await edit_jwt(pilot)
        area.load_text(
            area.text.replace(
                "title: Use JWT for API authentication", "title: Use JWT for the public API"
            )
        )
        await pilot.press("ctrl+s")
        await drain(pilot, editor)
        await drain(pilot, screen)
        assert app.screen is screen
        saved = memfile.parse(path.read_text(encoding="utf-8"))
        assert saved.title == "Use JWT for the public API"
        assert sorted(memory_md_ids(memory)["decision"]) == [
            "keep-sessions-in-redis",
            "use-jwt-for-api-auth",
        ]
        assert "[Use JWT for the public API](decision/use-jwt-for-api-auth.md)" in (
            memory / "MEMORY.md"
        ).read_text(encoding="utf-8")
        assert "Use JWT for the public API" in [r.title for r in screen.table.shown()]  # reloaded

    run(app, scenario)


def test_a_hand_edit_between_open_and_save_is_said_and_nothing_is_overwritten(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)
    path = memory / "decision" / "use-jwt-for-api-auth.md"

    async def scenario(pilot):
        screen, editor, area = await edit_jwt(pilot)
        mine = area.text.replace("Stateless tokens.", "Stateless tokens, signed with RS256.")
        area.load_text(mine)
        by_hand = JWT.replace("Stateless tokens.", "Edited by hand meanwhile.")
        path.write_text(by_hand, encoding="utf-8")
        await pilot.press("ctrl+s")
        await drain(pilot, editor)
        assert app.screen is editor  # still open, with the person's text
        assert area.text == mine
        assert "changed since" in plain_of(editor.query_one("#editor-problems", Static))
        assert path.read_text(encoding="utf-8") == by_hand

    run(app, scenario)


def test_an_edit_that_blocks_is_refused_with_the_reason_and_the_text_kept(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)
    path = memory / "decision" / "use-jwt-for-api-auth.md"

    async def scenario(pilot):
        before = path.read_bytes()
        screen, editor, area = await edit_jwt(pilot)
        area.load_text(
            area.text.replace(
                "It was the simplest choice that works.", "Key sk-ant-api03-" + "x" * 90
            )
        )
        await pilot.press("ctrl+s")
        await drain(pilot, editor)
        assert app.screen is editor and "sk-ant-api03-" in area.text
        assert plain_of(editor.query_one("#editor-problems", Static)).strip()
        assert path.read_bytes() == before

    run(app, scenario)


def test_archive_shows_the_diff_then_moves_the_line_to_the_archive_and_keeps_the_file(
    project, memory
):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "decision/use-jwt-for-api-auth")
        await pilot.press("a")
        await drain(pilot, screen)
        dialog = app.screen
        assert isinstance(dialog, ChangeConfirm)
        assert "MEMORY.md" in [f["where"] for f in dialog.files]
        await pilot.press("y")
        await drain(pilot, screen)
        doc = memfile.parse(
            (memory / ".archive" / "decision" / "use-jwt-for-api-auth.md").read_text(
                encoding="utf-8"
            )
        )
        assert doc.status == "archived"
        assert memory_md_ids(memory)["decision"] == ["keep-sessions-in-redis"]
        assert "use-jwt-for-api-auth" in (memory / ".archive" / "decision.md").read_text(
            encoding="utf-8"
        )
        row = next(r for r in screen.table.shown() if r.ref == "decision/use-jwt-for-api-auth")
        assert row.archived
        await pilot.press("h")  # archived ones hidden
        assert "decision/use-jwt-for-api-auth" not in refs_shown(screen)

    run(app, scenario)


def test_delete_asks_then_removes_file_and_line_keeping_a_copy_in_the_trash(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "decision/keep-sessions-in-redis")
        before = (memory / "decision" / "keep-sessions-in-redis.md").read_bytes()
        await pilot.press("d")
        await drain(pilot, screen)
        assert isinstance(app.screen, ChangeConfirm)
        await pilot.press("n")  # no: nothing changes
        await drain(pilot, screen)
        assert (memory / "decision" / "keep-sessions-in-redis.md").exists()
        await pilot.press("d")
        await drain(pilot, screen)
        await pilot.press("y")
        await drain(pilot, screen)
        assert not (memory / "decision" / "keep-sessions-in-redis.md").exists()
        assert memory_md_ids(memory)["decision"] == ["use-jwt-for-api-auth"]
        trash = list((Path(app.engine.data) / "trash").iterdir())
        assert [p.read_bytes() for p in trash] == [before]
        assert refs_shown(screen) == ["decision/use-jwt-for-api-auth", "claude/debugging.md"]

    run(app, scenario)


def test_a_key_that_does_not_apply_says_why(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "decision/use-jwt-for-api-auth")
        assert screen.check_action("adopt_memory", ()) is None
        await pilot.press("A")
        await drain(pilot, screen)
        assert any("already memcurate's" in n for n in notes(app))
        assert (
            list(Path(proposal_store.folder(app.engine.data)).glob("*.json")) == []
            if Path(proposal_store.folder(app.engine.data)).exists()
            else True
        )

    run(app, scenario)


def test_adopt_stages_a_proposal_for_claudes_own_file_and_changes_nothing(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)
    before = (memory / "MEMORY.md").read_bytes()

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "claude/debugging.md")
        await pilot.press("A")
        await drain(pilot, screen)
        pending = app.engine.proposals()
        assert [p["kind"] for p in pending] == ["adopt"]
        assert any(f"proposal/{pending[0]['id']}" in n for n in notes(app))
        assert (memory / "debugging.md").read_text(encoding="utf-8") == CLAUDE_NOTE
        assert (memory / "MEMORY.md").read_bytes() == before

    run(app, scenario)


def test_search_narrows_as_you_type_and_clearing_it_shows_everything_again(project, memory):
    with_memories(project, memory)
    save_memories(
        project,
        memory,
        {
            "decision/rotate-keys-monthly": memory_doc(
                "rotate-keys-monthly", "Rotate signing keys monthly", "Keys."
            ),
            "decision/prefer-postgres-for-reports": memory_doc(
                "prefer-postgres-for-reports", "Prefer Postgres for reports", "Reporting."
            ),
        },
    )
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        everything = refs_shown(screen)
        assert len(everything) == 5
        await pick(pilot, screen, "decision/use-jwt-for-api-auth")
        await pilot.press("slash")
        assert isinstance(screen.focused, Input)
        counts = []
        for letter in "redis":
            await pilot.press(letter)
            await drain(pilot, screen)
            assert (
                screen.table.found is not None and screen.query_text == "redis"[: len(counts) + 1]
            )
            counts.append(len(refs_shown(screen)))
        assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
        assert refs_shown(screen) == ["decision/keep-sessions-in-redis"]
        assert "1 found" in screen.table.border_title
        for _ in "redis":
            await pilot.press("backspace")
            await drain(pilot, screen)
        assert refs_shown(screen) == everything
        # the cursor stayed on it
        assert screen.table.selected().ref == "decision/keep-sessions-in-redis"
        await pilot.press("a", "u", "t", "h")  # a prefix: authentication
        await drain(pilot, screen)
        assert refs_shown(screen) == ["decision/use-jwt-for-api-auth"]
        await pilot.press("escape")  # out of the search, the query kept
        assert screen.query_one(LibraryTable).has_focus and app.screen is screen

    run(app, scenario)


def test_tidy_proposes_merging_two_memories_that_say_the_same_thing(project, memory):
    text = (
        "Stateless JWT tokens signed with RS256 for every public API call, verified by the gateway."
    )
    save_memories(
        project,
        memory,
        {
            "decision/use-jwt-for-api-auth": memory_doc(
                "use-jwt-for-api-auth", "Use JWT for API authentication", text
            ),
            "decision/jwt-for-the-api": memory_doc(
                "jwt-for-the-api", "Use JWT for API authentication", text
            ),
        },
    )
    app = tui(project, memory, run_pipeline=False)
    before = {p: p.read_bytes() for p in memory.rglob("*") if p.is_file()}

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pilot.press("t")
        await drain(pilot, screen)
        pending = app.engine.proposals()
        assert [p["kind"] for p in pending] == ["merge"]
        assert any("tidy: 1 proposal to review" in n for n in notes(app))
        assert {
            p: p.read_bytes() for p in memory.rglob("*") if p.is_file()
        } == before  # only proposed

    run(app, scenario)


def test_a_memory_change_the_app_sees_reloads_the_open_library(project, memory):
    with_memories(project, memory)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        assert "claude/notes.md" not in refs_shown(screen)
        (memory / "notes.md").write_text(
            "# Notes\nA note Claude wrote meanwhile.\n", encoding="utf-8"
        )
        app.post_message(StagingChanged(set(), memory=True))  # what the app's watcher posts
        await settle(pilot)
        await drain(pilot, screen)
        assert "claude/notes.md" in refs_shown(screen)

    run(app, scenario)


def test_a_refused_external_edit_opens_the_editor_on_the_text_with_why(
    project, memory, monkeypatch
):
    """The save runs in a worker; its refusal comes back as a message (EditRefused), and the editor opens
    on the person's text with the reason, nothing lost."""
    with_memories(project, memory)
    broken = "not a memory any more\n"
    monkeypatch.setattr(
        "memcurate.widgets.library.edit_externally", lambda app, text, editor: broken
    )
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pick(pilot, screen, "decision/use-jwt-for-api-auth")
        await pilot.press("E")
        await drain(pilot, screen)
        await settle(pilot)
        editor = pilot.app.screen
        assert isinstance(editor, MemoryEditor) and editor.error
        assert editor.query_one(TextArea).text == broken

    run(app, scenario)
