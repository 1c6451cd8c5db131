"""More TUI friction a new user hits (issue 26, Build §3): the library says what its keys mean there (a
archives and A adopts, where the queue's approve) and the queue's other keys say they do nothing there; dialog
titles wrap at a word instead of being cut; toasts stand clear of the pipeline panel. Pilot tests on a tmp
project with the offline drafter (tests/tui/test_tui.py's helpers)."""

from __future__ import annotations

import asyncio

import pytest
from test_tui import press, run, select, stage_demo
from test_tui_claude_writes import said
from test_tui_library import open_library, plain_of
from textual.geometry import Region
from textual.widgets import Label
from tui_helpers import settle, tui

from memcurate.widgets.dialogs import ConfirmDialog, HelpScreen, ReasonDialog


@pytest.fixture
def memory(tmp_path):
    return tmp_path / "memory"


# -- 1. one meaning per key, or a screen that says what its key means ------------------------------------------


def test_the_library_has_its_own_help_naming_archive_and_adopt_and_what_they_mean_in_the_queue(
    project, memory
):
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        body = plain_of(app.screen.query_one("#help-body Static"))
        rows = {line.split(maxsplit=1)[0]: line for line in body.splitlines() if line.strip()}
        assert "Archive" in rows["a"] and "Approve" not in rows["a"]
        assert "Claude's own memory" in rows["A"]
        assert "in the review queue a approves" in " ".join(body.split())
        footer = [k.key for k in app.screen.query("FooterKey")] + [
            k.key for k in screen.query("FooterKey")
        ]
        # the queue's keys are not offered behind the library
        assert "r" not in footer and "c" not in footer
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen

    run(app, scenario)


def test_a_queue_key_pressed_in_the_library_says_it_does_nothing_there_and_does_nothing(
    project, memory
):
    app = tui(project, memory, run_pipeline=False)
    told = said(app)

    async def scenario(pilot):
        screen = await open_library(pilot)
        told.clear()
        for key in ("r", "c", "x"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen  # no reject dialog, no action dialog
        words = [m for m, sev in told if sev == "warning"]
        assert len(words) == 3, told
        assert words[0].startswith(
            "r is the review queue's Reject key: it does nothing in the library"
        )
        assert all("Esc goes back to the queue" in m for m in words)

    run(app, scenario)


def test_the_library_footer_keeps_help_and_back_in_sight_at_100_columns(project, memory):
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        screen = await open_library(pilot)
        in_sight = [
            k.key for k in screen.query("FooterKey") if k.region.width and k.region.right <= 100
        ]
        assert {"question_mark", "escape", "a", "A", "d"} <= set(in_sight), in_sight

    run(app, scenario, size=(100, 30))


# -- 2. dialog titles wrap at a word -----------------------------------------------------------------------


@pytest.mark.parametrize("size", [(100, 30), (160, 48)])
def test_a_long_dialog_title_wraps_at_a_word_inside_its_dialog(project, memory, size):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)
    long = "Use JWT: short-lived access tokens, fifteen minutes, HS256, signed with a secret from the environment"

    async def scenario(pilot):
        for dialog in (
            ReasonDialog(f"decision “{long}”"),
            ConfirmDialog(f"Approve {long} and every other one?"),
        ):
            app.push_screen(dialog)
            await settle(pilot)
            title = dialog.query_one(".dialog-title", Label)
            box = title.parent.content_region
            assert title.region.x >= box.x and title.region.right <= box.right, (title.region, box)
            assert title.size.height >= 2  # wrapped: the whole question is on screen
            lines = [strip.text.strip() for strip in title.render_lines(Region(0, 0, *title.size))]
            assert long in " ".join(line for line in lines if line)  # each line ends at a word
            await press(pilot, "escape")

    run(app, scenario, size=size)


# -- 3. toasts clear of the pipeline panel ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [(100, 30), (160, 48)])
def test_a_toast_does_not_cover_the_pipeline_panel_or_the_drafting_line(project, memory, size):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def main() -> None:
        async with app.run_test(size=size, notifications=True) as pilot:  # run() leaves toasts out
            await settle(pilot)
            await scenario(pilot)

    async def scenario(pilot):
        await select(pilot, "decision")
        app.notify(
            "a notification long enough to take three lines of a toast at a narrow width, as the "
            "warnings a greyed key gives do",
            severity="warning",
        )
        await settle(pilot)
        toasts = [t for t in app.screen.query("Toast") if t.region.height]
        assert toasts
        top = app.query_one("#drafting").region.y
        for toast in toasts:
            assert toast.region.bottom <= top, (toast.region, top)
            assert not toast.region.overlaps(app.query_one("#progress").region)
            assert not toast.region.overlaps(app.query_one("#budgets").region)

    asyncio.run(main())
