"""Snapshots of the library screen (pytest-textual-snapshot's `snap_compare`): the list with the last
check's flags, and MEMORY.md as Claude Code loads it with the cut. Deterministic: a fixed size, theme and
clock, no watcher, no pipeline; the stamps of memories and Claude's files are pinned to the fixed clock.

Regenerate with `pytest tests/snapshots/test_tui_library_snapshots.py --snapshot-update`, then look at the SVGs in
tests/snapshots/__snapshots__/test_tui_library_snapshots/.
"""

from __future__ import annotations

import os
from pathlib import Path

from test_tui_library import drain, memory_doc, save_memories
from test_tui_snapshots import SIZE, app_for, no_tmp_paths
from tui_helpers import FIXED_NOW, engine_factory, settle

from memcurate.widgets.library import LibraryScreen

KEY = "sk-ant-api03-" + "Q7v" * 30  # a key Claude wrote into its own notes


def pin_mtimes(memory: Path, age_seconds: int) -> None:
    """Claude's files are dated by their mtime: set it relative to the fixed clock."""
    for path in memory.rglob("*.md"):
        os.utime(path, (FIXED_NOW - age_seconds, FIXED_NOW - age_seconds))


def flagged_library(project: Path, memory: Path) -> None:
    """memcurate's memories (two that say the same thing, one archived) and Claude's own (a topic file
    holding a key, a note, a line linking a file that is gone), checked: the findings are the flags."""
    same = (
        "Stateless JWT tokens signed with RS256 for every public API call, verified by the gateway."
    )
    save_memories(
        project,
        memory,
        {
            "decision/use-jwt-for-api-auth": memory_doc(
                "use-jwt-for-api-auth", "Use JWT for API authentication", same
            ),
            "decision/jwt-for-the-api": memory_doc(
                "jwt-for-the-api", "Use JWT for API authentication", same
            ),
            "decision/keep-sessions-in-redis": memory_doc(
                "keep-sessions-in-redis",
                "Keep sessions in Redis [bold]x[/]",
                "Shared by every worker.",
            ),
            "decision/old-session-cookies": memory_doc(
                "old-session-cookies",
                "Session cookies for the admin UI",
                "Replaced since.",
                status="archived",
            ),
        },
    )
    (memory / "deploy-notes.md").write_text(
        f"---\nname: Deploy notes\ndescription: how the staging deploy works\ntype: project\n---\n"
        f"Deploy with the staging token {KEY}.\n",
        encoding="utf-8",
    )
    with open(memory / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write(
            "\n- [Deploy notes](deploy-notes.md) — how the staging deploy works\n"
            "- [Old runbook](old-runbook.md) — gone since\n- Always run the tests with -x\n"
        )
    pin_mtimes(memory, 3 * 86400)
    engine = engine_factory(project, memory)()
    try:
        assert {f.code for f in engine.check()} >= {"duplicate", "secret", "missing-link"}
    finally:
        engine.close()


def test_library_with_flags(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    flagged_library(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("l")
        screen = pilot.app.screen
        assert isinstance(screen, LibraryScreen)
        await drain(pilot, screen)
        assert screen.table.move_to("claude/deploy-notes.md")
        await drain(pilot, screen)
        assert screen.view is not None
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_memory_md_view_with_the_cut(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    notes = [f"- Claude's own note number {n}\n" for n in range(1, 241)]
    (memory / "MEMORY.md").write_text("".join(notes[:188]), encoding="utf-8")
    save_memories(
        project,
        memory,
        {  # memcurate's section after Claude's lines, just before the cut
            f"decision/{mid}": memory_doc(mid, title)
            for mid, title in (
                ("use-jwt-for-api-auth", "Use JWT for API authentication"),
                ("keep-sessions-in-redis", "Keep sessions in Redis"),
            )
        },
    )
    with open(memory / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("".join(notes[188:]))
    pin_mtimes(memory, 86400)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("l")
        screen = pilot.app.screen
        await drain(pilot, screen)
        await pilot.press("m")
        await drain(pilot, screen)
        view = screen.query_one("#library-memory-md")
        view.scroll_to(y=175, animate=False, immediate=True)  # memcurate's section, then the cut
        await pilot.pause()
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
