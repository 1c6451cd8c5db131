"""A secret typed into the TUI's editor: staged redacted, shown with the marker, and still blocked
(the engine-side attacks at rest are in tests/engine/test_attack_at_rest.py)."""

from __future__ import annotations

import asyncio

from test_attack_at_rest import GHP, memory, stage_demo, sweep, umask_022  # noqa: F401 (fixtures)
from tui_helpers import settle, tui

from memcurate.curator.candidates.candidate import read_review
from memcurate.curator.util.paths import data_dir
from memcurate.widgets.dialogs import EditorScreen


def test_a_tui_edit_holding_a_token_is_staged_redacted_shown_with_the_marker_and_stays_blocked(
    project, memory
):
    tid = stage_demo(project, memory)
    app = tui(project, memory)

    async def scenario(pilot):
        await settle(pilot)
        rows = app.query_one("QueueTable").shown
        for _ in range(len(rows) + 1):  # the decision row
            if app.selected() and app.selected().category == "decision":
                break
            await pilot.press("j")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditorScreen)
        area = app.screen.query_one("TextArea")
        area.move_cursor(area.document.end)
        area.insert(f"\nThe CI token is {GHP} for now.\n")
        await pilot.press("ctrl+s")
        await settle(pilot)
        staged = read_review(data_dir(project), tid, "decision")
        assert GHP not in staged["text"] and "[REDACTED:github-token]" in staged["text"]
        assert staged["blocked"] and any(i["code"] == "secret" for i in staged["issues"])
        # on screen
        assert "[REDACTED:github-token]" in app.review["text"] and GHP not in app.review["text"]
        row = [i for i in app.query_one("QueueTable").shown if i.category == "decision"][0]
        assert row.blocks
        await pilot.press("a")  # approving is refused: nothing is written
        await settle(pilot)
        assert not list(memory.glob("*/*.md"))

    async def main():
        async with app.run_test(size=(160, 30)) as pilot:
            await scenario(pilot)

    asyncio.run(main())
    sweep(project)
