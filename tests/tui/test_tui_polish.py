"""The review screen respects the reviewer (issue 14, item 5): each point a new user tripped over on real
drafts, driven through Pilot on a tmp project with the offline drafter (tests/tui/test_tui.py's helpers)."""

from __future__ import annotations

import asyncio
import dataclasses
import io

from rich.console import Console
from test_tui import (  # noqa: F401 (memory: the fixture)
    DEMO,
    Failing,
    edit_staged,
    memory,
    memory_files,
    open_editor,
    press,
    row_text,
    run,
    select,
    stage_demo,
    staged_text,
    state_of,
    table,
    text_of,
    type_text,
)
from test_tui_claude_writes import said
from textual.widgets import Static, TextArea
from textual.widgets._toast import Toast
from tui_helpers import FIXED_NOW, engine_factory, settle, tui

from memcurate.curator.candidates.incremental import capture
from memcurate.curator.categories import CATEGORIES
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.memory import memfile
from memcurate.widgets.app import AGE_TICK, REVIEW_ACTIONS
from memcurate.widgets.dialogs import ConfirmDialog, EditorScreen, FilterDialog
from memcurate.widgets.panels import BudgetsView, IssuesView, issue_text
from memcurate.widgets.queue import SAME_GROUP, SEVERITIES, fit_title, shared_prefixes

DEMO_SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"
OTHER_SESSION = "0b0e0f00-1111-4222-8333-944445555666"
# Two decision titles that share their first 90 characters: cut at the end, both would read the same.
ALIKE = "When the API gateway rejects a request with 401 right after the token refresh succeeded, check first "
ALIKE_TITLES = (
    ALIKE + "the clock skew between the gateway and the issuer",
    ALIKE + "the audience claim of the token",
)


def stage_other_session(project, memory, tmp_path, *, drafted: bool = True) -> str:
    """The demo transcript again, as another session (another triage, another session id)."""
    other = tmp_path / "other.jsonl"
    other.write_text(
        DEMO.read_text(encoding="utf-8").replace(DEMO_SESSION, OTHER_SESSION), encoding="utf-8"
    )
    engine = engine_factory(project, memory)()
    try:
        report = capture(engine.data, engine.cfg, str(other), event="backfill", summary=True)
        assert report["status"] == "staged"
        if drafted:
            engine.process(report["triage"])
        return report["triage"]
    finally:
        engine.close()


class AlikeTitles:
    """The offline drafter, except that each decision it drafts takes the next of `titles`."""

    name = "alike"
    reason = "test"

    def __init__(self, titles) -> None:
        self.titles, self.inner = list(titles), OfflineDrafter()

    def draft(self, request):
        result = self.inner.draft(request)
        if request.category == "decision" and result.doc is not None and self.titles:
            result.doc = dataclasses.replace(result.doc, title=self.titles.pop(0))
            result.text = memfile.render(result.doc)
        return result


def toasts(told) -> list[str]:
    return [message for message, _ in told]


# -- 1. a key that cannot act says why -------------------------------------------------------------


def test_keys_on_a_row_still_to_be_drafted_say_so_and_change_nothing(project, memory):
    tid = stage_demo(project, memory)
    app = tui(project, memory, run_pipeline=False)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "decision")
        for key in ("a", "e", "c", "x"):
            told.clear()
            await press(pilot, key)
            assert len(told) == 1 and "waiting to be drafted" in told[0][0], (key, told)
        assert (
            state_of(project, tid, "decision")["state"] == "triaged" and memory_files(memory) == []
        )
        assert app.check_action("approve_memory", ()) is None  # greyed out in the footer too

    run(app, scenario)


def test_keys_on_a_failed_draft_say_it_failed_and_what_to_do(project, memory):
    stage_demo(project, memory)
    app = tui(project, memory, drafter=Failing({"runbook"}))
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "runbook")
        await press(pilot, "a")
        (message,) = toasts(told)
        assert message.startswith(
            "drafting runbook failed (the model said no"
        ) and message.endswith("): x retries it, r rejects it")
        told.clear()
        await select(pilot, "decision")
        await press(pilot, "x")  # retry a draft that did not fail
        assert len(told) == 1 and "only a failed draft is retried" in told[0][0]

    run(app, scenario)


def test_approving_a_blocked_draft_names_the_block(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    edit_staged(
        project, memory, tid, "decision", lambda t: t.replace("## Rationale", "## Thoughts")
    )
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        await select(pilot, "decision")
        await press(pilot, "a")
        (message,) = toasts(told)
        assert message.startswith("BLOCK: ") and "Rationale" in message and "e edits it" in message
        assert state_of(project, tid, "decision")["state"] == "ready" and memory_files(memory) == []

    run(app, scenario)


def test_keys_with_nothing_selected_or_nothing_clean_say_why(project, memory):
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        assert app.selected() is None
        await press(pilot, "a")
        await press(pilot, "A")
        assert toasts(told) == [
            "nothing selected: the queue is empty",
            "no drafted memory is free of issues: approve them one by one with a "
            "(A takes only those with none)",
        ]
        told.clear()
        await press(pilot, "slash")  # a key that always applies says nothing
        assert isinstance(app.screen, FilterDialog) and told == []

    run(app, scenario)


# -- 2. the queue's title ---------------------------------------------------------------------------


def test_the_queue_title_counts_ready_drafting_and_failed(project, memory, tmp_path):
    stage_demo(project, memory)
    stage_other_session(project, memory, tmp_path, drafted=False)
    app = tui(project, memory, run_pipeline=False)

    async def scenario(pilot):
        assert table(app).border_title == "Pending 12 — 0 ready · 12 drafting"

    run(app, scenario)

    app = tui(project, memory, drafter=Failing({"runbook"}))

    async def drafted(pilot):
        assert table(app).border_title == "Pending 12 — 10 ready · 0 drafting · 2 failed"

    run(app, drafted)


# -- 3. rows: session, grouping, whole categories, titles that tell apart --------------------------


def test_rows_name_their_session_once_per_triage_and_show_the_category_whole(
    project, memory, tmp_path
):
    first = stage_demo(project, memory, drafted=True)
    second = stage_other_session(project, memory, tmp_path)
    app = tui(project, memory)

    async def scenario(pilot):
        rows = table(app).shown
        assert [i.tid for i in rows] == sorted(i.tid for i in rows)  # a triage's rows are together
        groups = [row_text(app, n)["session"] for n in range(len(rows))]
        by_tid = {first: DEMO_SESSION[:8], second: OTHER_SESSION[:8]}
        for n, item in enumerate(rows):
            starts = n == 0 or rows[n - 1].tid != item.tid
            assert groups[n] == (by_tid[item.tid] if starts else SAME_GROUP), (n, groups)
        assert groups.count(DEMO_SESSION[:8]) == 1 and groups.count(OTHER_SESSION[:8]) == 1
        categories = {row_text(app, n)["category"] for n in range(len(rows))}
        assert categories == set(CATEGORIES)  # session_summary whole, never "session"
        # the cursor walks every row: there is no header row to land on
        for n in range(len(rows)):
            assert table(app).cursor_row == n and app.selected() is rows[n]
            await pilot.press("j")

    run(app, scenario)


def test_two_titles_alike_for_longer_than_their_column_differ_on_screen(project, memory, tmp_path):
    stage_demo(project, memory)
    stage_other_session(project, memory, tmp_path, drafted=False)
    app = tui(project, memory, drafter=AlikeTitles(ALIKE_TITLES))

    async def scenario(pilot):
        decisions = [n for n, i in enumerate(table(app).shown) if i.category == "decision"]
        assert sorted(table(app).shown[n].title for n in decisions) == sorted(ALIKE_TITLES)
        shown_titles = [row_text(app, n)["title"] for n in decisions]
        width = table(app).title_width
        assert width < len(ALIKE) and all(len(t) <= width for t in shown_titles)
        assert shown_titles[0] != shown_titles[1], shown_titles
        on_screen = [table(app).render_line(1 + n).text for n in decisions]
        assert on_screen[0] != on_screen[1]
        # its start, an ellipsis, what tells it apart
        for n, t in zip(decisions, shown_titles, strict=True):
            head, tail = t.split("…", 1)
            full = table(app).shown[n].title
            assert full.startswith(head) and tail.rstrip("…") in full[len(ALIKE) - 3 :]

    run(app, scenario)


def test_fit_title_cuts_at_the_end_while_the_difference_shows():
    a, b = "Use JWT for the public API", "Use JWT for the admin API"
    shared = shared_prefixes([a, b, "Something else"])
    assert shared[a] == shared[b] == len("Use JWT for the ")
    assert fit_title(a, 20, shared[a]) == "Use JWT for the pub…"  # the difference is in view
    assert fit_title(a, 40, shared[a]) == a  # it fits
    x, y = ALIKE_TITLES
    n = shared_prefixes([x, y])[x]
    fitted = fit_title(x, 30, n), fit_title(y, 30, n)
    assert fitted[0] != fitted[1] and all(len(f) == 30 for f in fitted)
    # the same title twice is not told apart (nothing to tell)
    assert shared_prefixes([x, x])[x] == 0


# -- 4. approve-all lists what it saves ---------------------------------------------------------------


def test_approve_all_lists_each_memory_it_saves_before_asking(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    # BLOCK
    edit_staged(
        project, memory, tid, "decision", lambda t: t.replace("## Rationale", "## Thoughts")
    )
    # written by a person: no longer offline cards, so clean
    for cat in (
        "constraint",
        "preference",
    ):
        edit_staged(project, memory, tid, cat, lambda t: t.rstrip("\n") + " Checked by hand.\n")
    app = tui(project, memory)

    async def scenario(pilot):
        clean = app.clean_items()
        assert clean and all(i.category != "decision" for i in clean)
        await press(pilot, "A")
        assert isinstance(app.screen, ConfirmDialog)
        console = Console(width=110, record=True, file=io.StringIO())
        console.print(app.screen.body)  # the listing the dialog shows
        text = console.export_text()
        lines = text.splitlines()
        for item in clean:
            line = next(line for line in lines if line.strip().startswith(item.category + " "))
            assert item.title[:20] in line and f"{item.confidence:.2f}" in line and "none" in line
        assert "left for review one by one: " in text and "1 BLOCK" in text
        await press(pilot, "n")
        assert memory_files(memory) == []

    run(app, scenario, size=(160, 50))


# -- 5. the editor asks before dropping an edit -----------------------------------------------------------


def test_leaving_the_editor_with_unsaved_changes_asks_first(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    before = staged_text(project, tid, "decision")
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "decision")
        await open_editor(pilot)
        await press(pilot, "escape")  # nothing changed: it closes at once
        assert not isinstance(app.screen, (EditorScreen, ConfirmDialog))

        area = await open_editor(pilot)
        await type_text(pilot, "typed ")
        edited = area.text
        await press(pilot, "escape")
        assert isinstance(app.screen, ConfirmDialog) and "Discard" in text_of(
            app.screen.query_one(".dialog-title")
        )
        await press(pilot, "n")  # back to the editor, the edit kept
        assert (
            isinstance(app.screen, EditorScreen) and app.screen.query_one(TextArea).text == edited
        )
        await press(pilot, "escape")
        await press(pilot, "y")  # discarded: the editor closes, nothing staged changed
        assert not isinstance(app.screen, (EditorScreen, ConfirmDialog))
        assert staged_text(project, tid, "decision") == before

    run(app, scenario)


# -- 6. toasts do not cover the budgets ----------------------------------------------------------------------


def test_a_toast_does_not_cover_the_budgets(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def main() -> None:
        # run() leaves toasts out
        async with app.run_test(size=(160, 50), notifications=True) as pilot:
            await settle(pilot)
            await scenario(pilot)

    async def scenario(pilot):
        await select(pilot, "constraint")
        await press(pilot, "a")  # the save is said in a toast
        shown_toasts = list(app.screen.query(Toast))
        assert shown_toasts
        budgets = app.query_one(BudgetsView).region
        for toast in shown_toasts:
            assert not toast.region.overlaps(budgets), (toast.region, budgets)

    asyncio.run(main())


# -- 7. the age column ticks --------------------------------------------------------------------------------


def test_the_age_column_ticks_without_redrawing_the_other_cells(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        queue = table(app)
        ages = {row_text(app, n)["age"] for n in range(len(queue.shown))}
        updated = []
        real = queue.update_cell

        def spy(row_key, column_key, value, **kw):
            updated.append(column_key)
            return real(row_key, column_key, value, **kw)

        queue.update_cell = spy
        # staged now, in real time: ten years on from the fixed clock
        later = FIXED_NOW + 10 * 365 * 86400
        assert queue.tick_ages(later) == len(queue.shown)
        assert set(updated) == {"age"}
        assert {row_text(app, n)["age"] for n in range(len(queue.shown))} != ages
        updated.clear()
        assert queue.tick_ages(later) == 0 and updated == []  # nothing changed: nothing redrawn

    run(app, scenario)


def test_the_age_timer_runs_only_on_the_real_clock(project, memory):
    intervals = {}
    for clock in (lambda: FIXED_NOW, None):
        app = tui(project, memory, clock=clock)
        asked = intervals.setdefault(clock is None, [])
        real = app.set_interval

        def record(interval, callback, *a, _asked=asked, _real=real, **kw):
            _asked.append((interval, getattr(callback, "__name__", "")))
            return _real(interval, callback, *a, **kw)

        app.set_interval = record

        async def scenario(pilot):
            pass

        run(app, scenario)
    assert (AGE_TICK, "_tick_ages") in intervals[True]
    assert not any(name == "_tick_ages" for _, name in intervals[False])


# -- 8. the filter's hint --------------------------------------------------------------------------------------


def test_the_filter_hint_names_every_category_and_severity(project, memory):
    app = tui(project, memory)

    async def scenario(pilot):
        await press(pilot, "slash")
        hint = text_of(app.screen.query_one("#filter-hint", Static))
        words = set(hint.replace("\n", " ").split())
        assert set(CATEGORIES) | {"claude", "rule", "proposal"} | set(SEVERITIES) <= words

    run(app, scenario)


# -- 9. the palette lists each action once ---------------------------------------------------------------------


def test_the_palette_lists_each_review_action_once(project, memory):
    stage_demo(project, memory, drafted=True)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "constraint")
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        assert len(titles) == len(set(titles)), titles
        for action, _keys, label, desc in REVIEW_ACTIONS:
            if action in ("show_help", "quit"):
                continue  # textual's own Keys and Quit (once: the titles are unique)
            if app.check_action(action, ()):
                (command,) = [c for c in commands if c.title == desc]
                assert desc.lower() not in command.help.lower() and label in command.help

    run(app, scenario)


# -- 10. an issue does not repeat its heading ----------------------------------------------------------------------


def test_a_block_in_the_issues_panel_does_not_repeat_its_heading(project, memory):
    tid = stage_demo(project, memory, drafted=True)
    edit_staged(
        project, memory, tid, "runbook", lambda t: t.replace("## Verification", "## Checking")
    )
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "runbook")
        issues = app.review["issues"]
        block = next(
            i for i in issues if i["severity"] == "BLOCK" and i["where"] == "## Verification"
        )
        # what verification says, heading and all
        assert block["message"].startswith("## Verification")
        panel = text_of(app.query_one(IssuesView))
        line = next(line for line in panel.splitlines() if line.startswith("BLOCK"))
        assert line.count("## Verification") == 1 and "required section is missing" in line, panel
        assert "(## Verification): ## Verification" not in panel  # the confidence's why neither

    run(app, scenario)


def test_an_issue_said_in_one_line_drops_what_its_heading_says():
    """The BLOCK a toast names is cut by the same function as the panel's line."""
    issue = {
        "severity": "BLOCK",
        "where": "## Verification",
        "message": "## Verification required section is missing",
    }
    assert issue_text(issue) == "## Verification: required section is missing"
    assert (
        issue_text({"severity": "BLOCK", "where": "", "message": "BLOCK: a secret"}) == "a secret"
    )
    assert (
        issue_text({"severity": "BLOCK", "where": "title", "message": "titles say what"})
        == "title: titles say what"
    )
