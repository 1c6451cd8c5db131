"""A kind registered in one line (tests/engine/test_kind_protocol.py's NoteKind) is listed, shown,
gated and approved by key in the TUI, which names no kind."""

from __future__ import annotations

import pytest
from test_kind_protocol import NoteKind, stage_note
from test_tui import press, run, select, shown
from test_tui_claude_writes import document, said
from tui_helpers import tui

from memcurate.curator.review import kinds


@pytest.fixture
def noted(project, tmp_path, monkeypatch):
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, NoteKind()))
    stage_note(project, "Deploys happen on Fridays.\n")
    return project, tmp_path / "memory"


def test_a_new_kind_is_listed_shown_and_approved_by_key_in_the_tui(noted):
    project, memory = noted
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        assert shown(app) == ["note"]
        await select(pilot, "note")
        assert app.selected().tid == "note/n1"
        text = document(app)
        assert "a note to keep" in text and "Deploys happen on Fridays." in text
        # a key its kind says does not apply is greyed out, and says why
        assert app.check_action("change_action", ()) is None
        await press(pilot, "c")
        assert told[-1] == ("a note is kept or dropped as written", "warning")
        await press(pilot, "a")
        assert (project / "NOTES.md").read_text() == "Deploys happen on Fridays.\n"
        assert told[-1] == ("note kept: NOTES.md", "information")
        assert shown(app) == []

    run(app, scenario)


def test_a_new_kind_refuses_in_the_tui_what_changed_since_it_was_shown(noted):
    project, memory = noted
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "note")
        stage_note(project, "Deploys happen on Mondays.\n")  # after it was shown
        await press(pilot, "a")
        assert not (project / "NOTES.md").exists()
        message, severity = told[-1]
        assert severity == "error" and "changed since you looked" in message

    run(app, scenario)
