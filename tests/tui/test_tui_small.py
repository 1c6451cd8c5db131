"""The review TUI in small terminals (issue 26, Build §3): at 80×24 and 100×30 the queue keeps readable titles,
the document, issues, pipeline and budgets keep a place, the footer keeps ? Help and q Quit, help scrolls and
its wrapped rows keep their indent; and the app does not grow as keys are pressed and work lands (Build §4)."""

from __future__ import annotations

import gc
import io

from rich.console import Console
from test_tui import press, run, stage_demo, table
from test_tui_library import open_library, plain_of
from test_tui_snapshots import app_for, review_queue
from textual.widgets import Static
from tui_helpers import settle, tui

from memcurate.widgets.messages import StagingChanged
from memcurate.widgets.panels import BudgetsView, DocumentView, IssuesView, ProgressView


def footer_keys_in_sight(app, width: int) -> set[str]:
    return {
        k.key for k in app.screen.query("FooterKey") if k.region.width and k.region.right <= width
    }


def titles_cut_below(app, least: int) -> list[str]:
    """The queue's title cells shown shorter than `least` characters while their title is longer."""
    q = table(app)
    cut = []
    for n, item in enumerate(q.shown):
        cell = q.get_row_at(n)[2].plain
        if len(cell) < min(least, len(item.title)):
            cut.append(cell)
    return cut


def check_small(app, width: int, least_title: int) -> None:
    assert {"question_mark", "q"} <= footer_keys_in_sight(app, width)
    q = table(app)
    # every column in sight, none scrolled off
    assert q.virtual_size.width <= q.scrollable_content_region.width
    assert q.region.width == width  # the whole width: the panels stack
    assert not titles_cut_below(app, least_title), titles_cut_below(app, least_title)
    document = app.query_one(DocumentView)
    assert document.region.height >= 8 and document.region.width >= 40
    assert "Document" in plain_of(document.query_one("#document-body", Static))
    assert app.query_one(IssuesView).region.height >= 3
    budgets = app.query_one(BudgetsView)
    assert (
        budgets.region.width >= 30
        and budgets.region.height >= 4
        and "MEMORY.md budgets" in plain_of(budgets)
    )
    progress = app.query_one(ProgressView)
    # the pipeline, on one line
    assert progress.region.height >= 1 and "6 ready" in plain_of(progress)


def test_at_80_by_24_titles_document_issues_pipeline_budgets_and_footer_keys_fit(project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def scenario(pilot):
        check_small(app, 80, 20)
        q = table(app)
        assert "age" not in q.columns
        assert "summary" in [
            q.get_row_at(n)[1].plain for n in range(len(q.shown))
        ]  # session_summary, said short

    run(app, scenario, size=(80, 24))


def test_at_100_by_30_titles_keep_30_characters_and_every_column(project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def scenario(pilot):
        check_small(app, 100, 30)
        assert [c.value for c in table(app).columns] == [
            "session",
            "category",
            "title",
            "action",
            "conf",
            "issues",
            "age",
        ]

    run(app, scenario, size=(100, 30))


def test_from_wide_to_80_and_back_the_cursor_stays_on_its_row(project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def scenario(pilot):
        await press(pilot, "j", "j")
        before = app.selected().key
        for size in ((80, 24), (160, 45)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert app.selected().key == before
            # the columns follow the width, both ways
            assert ("age" in table(app).columns) == (size[0] >= 96)

    run(app, scenario, size=(160, 45))


def help_lines(app) -> list[str]:
    """The help dialog's key rows as drawn in its body's width (before the notes)."""
    static = app.screen.query_one("#help-body").query_one(Static)
    console = Console(width=static.content_region.width, record=True, file=io.StringIO())
    console.print(static.content)
    lines = console.export_text().splitlines()
    return lines[: lines.index("")]


def test_help_at_80_by_24_scrolls_and_says_so_in_sight(project, tmp_path):
    memory = tmp_path / "memory"
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await press(pilot, "question_mark")
        body, hint = app.screen.query_one("#help-body"), app.screen.query_one("#help-hint")
        assert "scroll" in str(hint.render())
        dialog = app.screen.query_one("HelpScreen > Vertical")
        # not cut off
        assert hint.region.height == 1 and dialog.content_region.contains_region(hint.region)
        assert body.max_scroll_y > 0
        await press(pilot, "pagedown")
        assert body.scroll_y > 0

    run(app, scenario, size=(80, 24))


def test_help_rows_that_wrap_keep_their_indent_at_100_columns(project, tmp_path):
    app = tui(project, tmp_path / "memory", run_pipeline=False)

    async def scenario(pilot):
        await open_library(pilot)
        await press(pilot, "question_mark")
        lines = help_lines(app)
        wrapped = [line for line in lines if not line[:12].strip()]
        assert wrapped, lines  # the library's Esc row is longer than the dialog
        assert all(line.startswith(" " * 14) for line in wrapped), wrapped

    run(app, scenario, size=(100, 30))


def test_moving_onto_a_blocked_row_greys_approve_in_the_same_footer_keys(project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def scenario(pilot):
        keys = list(app.screen.query("FooterKey"))
        approve = next(k for k in keys if k.key == "a")
        assert not approve.has_class("-disabled")
        await press(pilot, "j", "j")  # the runbook: BLOCKed
        assert app.selected().category == "runbook"
        assert approve.has_class("-disabled")  # greyed where it does not apply
        await press(pilot, "k")
        assert not approve.has_class("-disabled")
        # the same widgets: none rebuilt, none left behind
        assert list(app.screen.query("FooterKey")) == keys

    run(app, scenario, size=(160, 30))


def live_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_key_presses_and_reloads_leave_no_objects_behind(project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def rounds(pilot, n: int) -> None:
        for i in range(n):
            await press(pilot, "j" if i % 10 < 5 else "k")  # over the BLOCKed runbook and back
            app.post_message(StagingChanged(None, False))  # every row read and shown again
            await settle(pilot)

    async def scenario(pilot):
        await rounds(pilot, 6)  # warm: caches filled, every row drawn
        before = live_objects()
        await rounds(pilot, 20)
        assert (live_objects() - before) / 20 < 20

    run(app, scenario, size=(160, 30))
