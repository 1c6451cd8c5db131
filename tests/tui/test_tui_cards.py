"""Offline cards in the TUI (issue 23 §5): the evidence beside the draft, and beside the editor.

A card selected shows what it was made from (the suggested category, the session lines, a runbook's
error → fix) above its text, and the issue that says it is a card; e opens the editor pre-filled with
the card's text and the evidence in a panel beside it; once the person saved their words it is a
normal draft. A draft a model wrote shows none of this.
"""

from __future__ import annotations

import io

from rich.console import Console
from test_tui import open_editor, press, run, select, stage_demo, staged_text
from textual.widgets import Static
from tui_helpers import tui

from memcurate.curator.candidates import cards
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.memory import memfile
from memcurate.widgets.dialogs import EditorScreen
from memcurate.widgets.panels import DocumentView


def plain(renderable) -> str:
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def document(app) -> str:
    return plain(app.query_one(DocumentView).query_one("#document-body", Static).content)


def issues(app) -> str:
    return plain(app.query_one("#issues", Static).content)


class Modelled:
    """The offline drafter's text said to come from a model: a draft that is no card."""

    name = "modelled"
    reason = "test"

    def draft(self, request):
        result = OfflineDrafter().draft(request)
        result.model = "sonnet"
        return result


def test_a_selected_card_shows_its_evidence_and_the_editor_keeps_it_beside_the_text(
    project, tmp_path
):
    memory = tmp_path / "memory"
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "runbook")
        shown = document(app)
        assert "Offline card — suggested category: runbook" in shown
        assert "write the fact in your own words" in shown
        assert "root cause" in shown  # a session line it was made from
        assert "Error → fix" in shown
        assert (
            "failed: python -m pytest tests/test_auth.py -q -> E sqlalchemy.exc.OperationalError"
            in shown
        )
        assert "fixed:  by: Edit tests/conftest.py; passed: python -m pytest -q" in shown
        # the text first, its evidence under it
        assert shown.index("Document") < shown.index("Offline card")
        assert "an offline evidence card" in issues(app)

        await select(pilot, "decision")
        area = await open_editor(pilot)
        assert area.text == staged_text(project, tid, "decision")  # pre-filled with the card's text
        side = plain(app.screen.query_one("#editor-evidence").query_one(Static).content)
        assert "suggested category: decision" in side and "Let's go with JWT" in side
        assert "Around them" in side  # the text around the lines, while writing
        await press(pilot, "escape")
        assert not isinstance(app.screen, EditorScreen)

    run(app, scenario)


def test_a_card_the_person_wrote_is_a_normal_draft_with_its_evidence_still_shown(project, tmp_path):
    memory = tmp_path / "memory"
    tid = stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "decision")
        area = await open_editor(pilot)
        text = area.text.replace("Use JWT", "Access tokens are JWTs", 1)
        area.text = text
        await press(pilot, "ctrl+s")
        assert not isinstance(app.screen, EditorScreen)
        staged, old_id = staged_text(project, tid, "decision"), memfile.parse(text).id
        # the title changed: the new memory's file name follows it (issue 26)
        new_id = memfile.parse(staged).id
        assert new_id == memfile.slugify(memfile.parse(text).title) != old_id
        assert staged == text.replace(f"id: {old_id}", f"id: {new_id}", 1)
        assert app.review["card"] is False and not cards.is_card(app.review)
        assert "an offline evidence card" not in issues(app)
        assert "Drafted offline and edited by you since" in document(app)

    run(app, scenario)


def test_a_models_draft_shows_no_card_and_its_editor_no_evidence(project, tmp_path):
    memory = tmp_path / "memory"
    stage_demo(project, memory)
    app = tui(project, memory, drafter=Modelled())

    async def scenario(pilot):
        await select(pilot, "decision")
        assert app.review["card"] is False
        assert "Offline card" not in document(app) and "Document" in document(app)
        assert "an offline evidence card" not in issues(app)
        await open_editor(pilot)
        assert not app.screen.query("#editor-evidence")
        await press(pilot, "escape")

    run(app, scenario)
