"""The review TUI paints its first frame before the engine exists (widgets/app.py: the `engine` worker),
then loads the queue; until then the queue says so and the review keys say why they wait. The start path
imports nothing only the engine needs (bench/tui_bench.py `--only start` times it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from tui_helpers import FIXED_DRAFTING, FIXED_NOW, engine_factory, settle

from memcurate.curator.candidates.incremental import capture
from memcurate.curator.config import ConfigError
from memcurate.curator.util.assets import asset
from memcurate.widgets.app import LOADING, STARTING, make_app
from memcurate.widgets.panels import DocumentView
from memcurate.widgets.queue import QueueTable

DEMO = asset(os.path.join("demo", "session.jsonl"))
SIZE = (160, 30)
ROOT = Path(__file__).resolve().parents[2]


def drafted_demo(project: Path, memory: Path) -> int:
    """The demo session staged and drafted offline; how many rows it waits with."""
    engine = engine_factory(project, memory)()
    try:
        report = capture(engine.data, engine.cfg, DEMO, event="backfill", summary=True)
        states = engine.process(report["triage"])
        return sum(1 for s in states.values() if s == "ready")
    finally:
        engine.close()


def app_over(project: Path, factory):
    return make_app(
        project,
        engine_factory=factory,
        watch=False,
        run_pipeline=False,
        clock=lambda: FIXED_NOW,
        subtitle="project",
        drafting=lambda: FIXED_DRAFTING,
    )


def said(app) -> list[str]:
    out: list[str] = []
    real = app.notify

    def notify(message, **kw):
        out.append(message)
        return real(message, **kw)

    app.notify = notify
    return out


def test_the_first_frame_comes_before_the_engine_then_the_rows(project, tmp_path):
    memory = tmp_path / "memory"
    rows = drafted_demo(project, memory)
    assert rows
    gate, built = threading.Event(), []
    real = engine_factory(project, memory)

    def factory():  # held until the test has looked at the screen the person sees while it starts
        assert gate.wait(60), "the test never let the engine be built"
        built.append(real())
        return built[-1]

    app = app_over(project, factory)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            try:
                await pilot.pause()
                queue = app.query_one(QueueTable)
                assert app.screen.is_current and queue.border_title == LOADING
                assert app.engine is None and not built
                assert app.check_action("approve_memory", ()) is None
                assert app.check_action("filter_queue", ()) is None
                assert app.check_action("quit", ()) and app.check_action("show_help", ())
                notes = said(app)
                await pilot.press("a")
                await pilot.pause()
                assert notes == [STARTING]
            finally:
                gate.set()
            engine = await app.ready()
            assert engine is built[0]
            await settle(pilot)
            assert str(queue.border_title).startswith(f"Pending {rows}")
            assert len(queue.shown) == rows
            assert app.check_action("approve_memory", ()) and app.check_action("filter_queue", ())

    asyncio.run(scenario())


def test_the_first_frame_leaves_the_panels_for_after_it(project, tmp_path):
    """The first frame lays out, styles and draws the header, the queue and the footer; the pipeline's panels
    (under the queue) and the selection's (empty until the engine is up, in their column #right) are mounted
    once it is written, in their places, and before the engine's first load reaches them. The app's rules
    for them (panels.tcss) are parsed then too: textual parses every rule of the stylesheet before the
    first frame, whatever it matches."""
    memory = tmp_path / "memory"
    rows = drafted_demo(project, memory)
    app = app_over(project, engine_factory(project, memory))
    first: list[set[str]] = []
    real = app.post_display_hook

    def styled() -> set[str]:  # the names the app's own rules (not textual's defaults) select
        return {n for r in app.stylesheet.rules if not r.is_default_rules for n in r.selector_names}

    def hook() -> None:
        if not first:
            shown = list(app.screen.walk_children())
            first.append({type(w).__name__ for w in shown} | {f"#{w.id}" for w in shown if w.id})
            first.append(styled())
        real()

    app.post_display_hook = hook

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await app.ready()
            await settle(pilot)
            assert first, "no frame was written"
            assert {"TitleBar", "QueueTable", "TidyFooter"} <= first[0]
            panels = {
                "DraftingLine",
                "ProgressView",
                "DocumentView",
                "IssuesView",
                "BudgetsView",
                "GraduationView",
            }
            assert not panels & first[0] and "#right" not in first[0]
            ids = {
                "#right",
                "#drafting",
                "#progress",
                "#document",
                "#issues",
                "#budgets",
                "#graduation",
            }
            assert {"#left", "#queue"} <= first[1] and not ids & first[1]
            assert ids <= styled()
            left = app.query_one("#left")
            assert [(type(w).__name__, w.id) for w in left.children] == [
                ("QueueTable", "queue"),
                ("DraftingLine", "drafting"),
                ("ProgressView", "progress"),
            ]
            right = app.query_one("#right")
            assert [(type(w).__name__, w.id) for w in right.walk_children()] == [
                ("DocumentView", "document"),
                ("Static", "document-body"),
                ("IssuesView", "issues"),
                ("Horizontal", "bottom"),
                ("BudgetsView", "budgets"),
                ("GraduationView", "graduation"),
            ]
            assert len(app.query_one(QueueTable).shown) == rows
            assert app.selected() is not None and app.review is not None  # the document shown
            # the pipeline's panel shows the selection's triage
            assert app.query_one("#progress")._last[0] == app.selected().tid

    asyncio.run(scenario())


def test_the_first_frame_draws_no_widget_it_does_not_show(project):
    """textual lays out, styles and draws every widget of a frame, container or not: the first frame's are the
    title bar, the queue's column (the pipeline's panels join it later), the queue and the footer, beside
    what textual's screen holds of its own (toasts, tooltip). The queue's screen lays the two columns side by
    side itself: no Horizontal around them."""
    app = app_over(project, lambda: None)
    first: list[list[tuple[str, str | None]]] = []

    def hook() -> None:  # the engine is never started: only the first frame matters here
        if not first:
            first.append([(type(w).__name__, w.id) for w in app.screen.walk_children()])

    app.post_display_hook = hook
    app._after_first_frame = lambda: None  # nor by the fallback timer

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert first, "no frame was written"
            textuals = {"ToastRack", "Tooltip"}
            assert [w for w in first[0] if w[0] not in textuals] == [
                ("TitleBar", None),
                ("Vertical", "left"),
                ("QueueTable", "queue"),
                ("TidyFooter", None),
            ]
            assert app.screen.id == "main"

    asyncio.run(scenario())


def test_the_queues_column_is_not_drawn_under_what_covers_it(project, tmp_path):
    """textual draws every widget's lines, covered or not. The queue's column (#left) is covered whole by the
    queue and, once mounted, the pipeline's panels: it is left undrawn (hidden) and they are drawn, in the
    first frame and after it. Made visible, the region it would draw is the one they cover, wide and narrow."""
    memory = tmp_path / "memory"
    drafted_demo(project, memory)
    app = app_over(project, engine_factory(project, memory))
    first: list[tuple[bool, bool]] = []
    real = app.post_display_hook

    def drawn() -> tuple[bool, bool]:
        left, shown = app.query_one("#left"), app.screen._compositor.visible_widgets
        return left in shown, all(w in shown for w in left.children)

    def hook() -> None:
        if not first:
            first.append(drawn())
        real()

    app.post_display_hook = hook

    async def covered(pilot) -> None:
        left = app.query_one("#left")
        under = [w.region for w in left.children]
        left.styles.visibility = "visible"
        await pilot.pause()
        try:
            whole = left.region
            assert whole.area and sum(r.area for r in under) == whole.area
            assert all(whole.contains_region(r) for r in under)
        finally:
            left.styles.clear_rule("visibility")
            await pilot.pause()

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await app.ready()
            await settle(pilot)
            assert first == [(False, True)]
            assert [w.id for w in app.query_one("#left").children] == [
                "queue",
                "drafting",
                "progress",
            ]
            assert drawn() == (False, True)
            await covered(pilot)
            await pilot.resize_terminal(90, 30)  # narrow: the panels stack
            await settle(pilot)
            assert app.has_class("-narrow") and drawn() == (False, True)
            await covered(pilot)

    asyncio.run(scenario())


def test_an_engine_that_cannot_be_built_ends_the_app_with_why(project):
    def factory():
        raise ConfigError("memory.root: [not a folder]")

    app = app_over(project, factory)
    exits = []
    real_exit = app.exit

    def spy(*a, **kw):
        exits.append(kw)
        return real_exit(*a, **kw)

    app.exit = spy

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            assert await app.ready() is None
            await pilot.pause()

    asyncio.run(scenario())
    assert app.return_code == 1
    assert [str(kw.get("message")) for kw in exits] == [
        "memcurate: cannot start: memory.root: [not a folder]"
    ]


def test_the_start_path_imports_nothing_only_the_engine_needs():
    """What `memcurate` imports before the TUI's first frame (cli, commands, the app module): no engine,
    no config YAML, no SQLite, no watcher, no dialog widgets, no panels (mounted after the first frame), no
    textual Header (TitleBar draws it), no syntax highlighter, no item shapes (their dataclasses are compiled when imported: a tenth of what
    memcurate added to the first paint)."""
    later = [
        "memcurate.curator.review.items",
        "memcurate.curator.candidates.queue",
        "memcurate.curator.engine",
        "yaml",
        "sqlite3",
        "watchfiles",
        "memcurate.curator.memory.index",
        "memcurate.curator.candidates.pipeline",
        "memcurate.curator.candidates.incremental",
        "memcurate.curator.verify.checks",
        "memcurate.curator.drafting",
        "memcurate.widgets.library",
        "memcurate.widgets.dialogs",
        "memcurate.widgets.panels",
        "textual.widgets._header",
        "rich.syntax",
        "pygments",
    ]
    code = (
        "import json, sys\nimport memcurate.curator.cli, memcurate.curator.commands, memcurate.widgets.app\n"
        f"print(json.dumps([m for m in {later!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert json.loads(out.stdout) == []


def test_collection_left_off_for_the_start_is_back_on_after_the_first_frame(project, tmp_path):
    """`memcurate` turns the garbage collector off while it starts (cli._review); the app turns it on again
    once its first frame is written, or cycles would pile up for as long as the app runs."""
    import gc

    drafted_demo(project, tmp_path / "memory")
    app = app_over(project, engine_factory(project, tmp_path / "memory"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await app.ready()
            await settle(pilot)
            assert gc.isenabled()

    gc.disable()
    try:
        asyncio.run(scenario())
    finally:
        gc.enable()
        gc.unfreeze()  # the app froze what the test process held: hand it back to the collector


def test_the_engine_starts_even_when_no_frame_hook_is_called(project, tmp_path):
    """post_display_hook starts the engine after the first paint; should textual not call it, the timer set
    when the app mounts starts it all the same."""
    memory = tmp_path / "memory"
    drafted_demo(project, memory)
    app = app_over(project, engine_factory(project, memory))
    app.post_display_hook = lambda: None  # a textual that never calls it

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await asyncio.wait_for(app._engine_up.wait(), 60)
            await settle(pilot)
            assert app.engine is not None and app.query_one(QueueTable).border_title != LOADING

    asyncio.run(scenario())


def test_the_panels_come_to_the_queues_screen_under_a_dialog_opened_before_them(
    project, tmp_path, monkeypatch
):
    """Help works from the first frame: opened before the selection's panels are mounted (the engine starts
    with them), it stays open, and the panels and the rows come to the queue's screen under it."""
    from memcurate.widgets import app as app_module
    from memcurate.widgets.dialogs import HelpScreen

    memory = tmp_path / "memory"
    rows = drafted_demo(project, memory)
    # the panels wait until the test says the first frame is written: neither the hook after each
    # frame nor the fallback timer (1 s, which a loaded machine can pass before the key) starts them
    monkeypatch.setattr(app_module, "ENGINE_FALLBACK", 3600.0)
    app = app_over(project, engine_factory(project, memory))
    app.post_display_hook = lambda: None

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen) and not app.query(DocumentView)
            app._after_first_frame()  # what the first frame's hook does
            await asyncio.wait_for(app._engine_up.wait(), 60)
            await settle(pilot)
            assert isinstance(app.screen, HelpScreen)
            main = app.screen_stack[0]
            assert main.query_one("#right").query_one(DocumentView).id == "document"
            assert len(main.query_one(QueueTable).shown) == rows

    asyncio.run(scenario())


def test_memcurate_opens_the_tui_without_the_commands_or_the_config(tmp_path):
    """`memcurate --project DIR` in a terminal, up to the app's `run` (its first frame follows): the
    command modules and the config (YAML layers, checks) are the engine's, loaded after that frame."""
    import pty

    code = (
        "import json, sys\nimport memcurate.widgets.app as app\n"
        "mods = ('memcurate.curator.commands', 'memcurate.curator.config')\n"
        "def run(project):\n"
        "    print(json.dumps([project, [m for m in mods if m in sys.modules]]), file=sys.stderr)\n"
        "    return 0\n"
        "app.run = run\nfrom memcurate.curator.cli import main\n"
        f"sys.exit(main(['--project', {str(tmp_path)!r}]))"
    )
    primary, secondary = pty.openpty()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            stdin=secondary,
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
            cwd=ROOT,
        )
    finally:
        os.close(secondary)
        os.close(primary)
    assert json.loads(out.stderr) == [str(tmp_path), []]


def test_the_first_frame_draws_the_queues_columns_at_their_settled_widths(project, tmp_path):
    """The queue's title column takes the width the others leave (QueueTable.fit_title), and a narrow queue
    shows the compact columns: both are settled in the layout that sizes the queue, so its first frame
    (loading, no rows) draws the columns and their labels where they stay once the rows are in."""
    memory = tmp_path / "memory"
    rows = drafted_demo(project, memory)

    def columns(queue: QueueTable) -> tuple[dict, str]:
        widths = {str(k.value): c.get_render_width(queue) for k, c in queue.columns.items()}
        return widths, queue.render_line(0).text  # the labels' line, as drawn

    for size in ((160, 48), (100, 30), (80, 24)):  # 80: the compact columns
        app = app_over(project, engine_factory(project, memory))
        first: list[tuple[dict, str]] = []
        real = app.post_display_hook

        def hook(app=app, first=first, real=real) -> None:
            if not first:
                first.append(columns(app.query_one(QueueTable)))
            real()

        app.post_display_hook = hook

        async def scenario(app=app, first=first, size=size) -> None:
            async with app.run_test(size=size) as pilot:
                await app.ready()
                await settle(pilot)
                queue = app.query_one(QueueTable)
                assert len(queue.shown) == rows and first, "no frame was written"
                assert first[0] == columns(queue), size
                widths, labels = first[0]
                assert "title" in labels and ("age" in widths) == (size[0] > 80)
                # the title takes the room the others leave (fit_title keeps two cells spare)
                assert sum(widths.values()) == queue.size.width - 2, (size, widths)

        asyncio.run(scenario())
