"""Proposals in the review TUI: a proposal (here, adopting a topic file of Claude's) is a row of category
`proposal`; selected, the document panel shows the diff of every file; `a` applies what was shown, `e`
edits the memory file it writes, `r` rejects it; the keys that do not apply are greyed out and say why."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenarios import CLAUDE_TOPIC as TOPIC
from scenarios import MEMORY_MD
from test_tui import cursor_to_end, open_editor, press, row, run, select, shown, table, type_text
from test_tui_claude_writes import document, said
from tui_helpers import engine_factory, tui

from memcurate.widgets.app import NOT_FOR_PROPOSAL
from memcurate.widgets.dialogs import ReasonDialog


@pytest.fixture
def adopted(project, tmp_path) -> tuple[Path, Path, str]:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "commits.md").write_text(TOPIC)
    (memory / "MEMORY.md").write_text(MEMORY_MD)
    engine = engine_factory(project, memory)()
    try:
        pid = engine.adopt("claude/commits.md")
    finally:
        engine.close()
    return project, memory, pid


def test_a_proposal_row_shows_its_diff_and_a_applies_it(adopted):
    project, memory, pid = adopted
    app = tui(project, memory)
    notes = said(app)

    async def scenario(pilot):
        assert shown(app) == ["proposal"]
        item = row(app, "proposal")
        assert item.tid == f"proposal/{pid}" and item.action == "adopt"
        await select(pilot, "proposal")
        text = document(app)
        assert "Approving changes preference/short-commit-messages.md" in text
        assert "-- [Commits](commits.md) — short subjects" in text  # Claude's line, dropped
        assert "[bold]cuts[/bold]" in text  # markup in Claude's file is shown as data
        assert not app.check_action("change_action", ()) and not app.check_action(
            "retry_memory", ()
        )
        await press(pilot, "c")
        assert (NOT_FOR_PROPOSAL["change_action"], "warning") in notes
        await press(pilot, "a")
        assert (memory / ".archive" / "claude" / "commits.md").read_text() == TOPIC
        assert not (memory / "commits.md").exists()
        assert (memory / "preference" / "short-commit-messages.md").exists()
        assert "- Use uv, not pip" in (memory / "MEMORY.md").read_text()
        assert shown(app) == [] and table(app).border_title.startswith("Pending 0")

    run(app, scenario)


def test_r_rejects_a_proposal_with_the_reason_and_writes_nothing(adopted):
    project, memory, pid = adopted
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "proposal")
        await press(pilot, "r")
        assert isinstance(app.screen, ReasonDialog)
        await pilot.press(*"keep it Claude's")
        await press(pilot, "enter")
        assert shown(app) == []
        assert (memory / "commits.md").read_text() == TOPIC and (
            memory / "MEMORY.md"
        ).read_text() == MEMORY_MD
        [record] = app.engine.proposals(every=True)
        assert (record["state"], record["decision"]["reason"]) == ("rejected", "keep it Claude's")

    run(app, scenario)


def test_e_edits_the_memory_file_the_proposal_writes_and_a_writes_the_edit(adopted):
    project, memory, pid = adopted
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "proposal")
        area = await open_editor(pilot)
        assert area.text.startswith("---\nid: short-commit-messages\n")
        await cursor_to_end(pilot, area)
        await type_text(pilot, "Edited by a person.")
        await press(pilot, "ctrl+s")
        assert "Edited by a person." in document(app)  # the diff shown is the edited one
        await press(pilot, "a")
        assert (
            (memory / "preference" / "short-commit-messages.md")
            .read_text()
            .rstrip()
            .endswith("Edited by a person.")
        )

    run(app, scenario)
