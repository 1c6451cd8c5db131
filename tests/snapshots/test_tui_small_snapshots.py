"""The review TUI's snapshots in small terminals (issue 26, Build §3): at 100×30 and 80×24 the budgets, the
footer's ? Help and q Quit and the help hint stay in sight, and titles stay readable. The behaviour behind
them is tested key by key in tests/tui/test_tui_small.py and tests/tui/test_tui_friction.py."""

from __future__ import annotations

from test_tui_library import plain_of
from test_tui_small import check_small
from test_tui_snapshots import app_for, no_tmp_paths, review_queue
from tui_helpers import settle

from memcurate.widgets.panels import BudgetsView


def test_at_100_by_30_the_budgets_footer_keys_and_help_hint_stay_in_sight(
    snap_compare, project, tmp_path
):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        no_tmp_paths(pilot.app, tmp_path)
        budgets = pilot.app.query_one(BudgetsView)
        assert budgets.size.width >= 30 and "MEMORY.md budgets" in plain_of(budgets)
        in_sight = [
            k.key
            for k in pilot.app.screen.query("FooterKey")
            if k.region.width and k.region.right <= 100
        ]
        assert {"question_mark", "q"} <= set(in_sight), in_sight

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_at_80_by_24_snapshot(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        no_tmp_paths(pilot.app, tmp_path)
        check_small(pilot.app, 80, 20)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
