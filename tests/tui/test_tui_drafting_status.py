"""The TUI's drafting line: the backend chosen and why, with the deprecation warning
(what `status` says is in tests/engine/test_drafting_status.py)."""

from __future__ import annotations

import asyncio
import os

from test_drafting_status import claude_on_path, deprecated_project
from tui_helpers import settle, tui

from memcurate.widgets.panels import DraftingLine


def test_the_tui_shows_the_backend_line_and_the_deprecation_warning(tmp_path, monkeypatch):
    project = deprecated_project(tmp_path / "project")
    claude = claude_on_path(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{claude.parent}{os.pathsep}{os.environ['PATH']}")

    async def scenario() -> str:
        # the engine describes it
        app = tui(project, tmp_path / "memory", drafting=None, run_pipeline=False)
        async with app.run_test(size=(160, 30)) as pilot:
            await settle(pilot)
            return "\n".join(t.plain for t in app.query_one(DraftingLine).content.renderables)

    shown = asyncio.run(scenario())
    assert f"drafting: claude-cli ({claude}) — backend: claude-cli, claude on the PATH" in shown
    assert "⚠ models.sonnet: claude-sonnet-4-5 is deprecated" in shown
