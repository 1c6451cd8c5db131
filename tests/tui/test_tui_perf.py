"""What keeps the live review app light over a long session (issue 26 §4; bench/tui_bench.py measures it):
an engine that runs as long as the TUI keeps nothing of the triages it is done with."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT
from test_concurrency import roomy_engine
from test_engine import stage
from test_tui import run, select
from test_tui_claude_writes import document
from test_tui_rules import COMMAND, proj, seen  # noqa: F401  (proj: the fixture)
from textual import _two_way_dict
from tui_helpers import tui

from memcurate.curator.util.locks import LockBusy
from memcurate.widgets.panels import EVIDENCE_SESSIONS


def test_an_engine_keeps_no_claim_lock_for_a_triage_once_its_work_is_done(project, tmp_path):
    """The TUI's engines live for hours and claim every triage that lands (drafting, each approval): the
    lock of a claim goes with the last thread using it, so the engine does not grow by one per triage."""
    engine = roomy_engine(project, tmp_path)
    (tid,) = stage(engine)
    states = engine.process(tid)
    assert "ready" in states.values()
    ready = sorted(cat for cat, state in states.items() if state == "ready")
    engine.approve(tid, ready[0])
    engine.reject(tid, ready[1], "not durable")
    assert engine.claims == {}
    engine.close()


def test_a_claim_still_shuts_out_other_threads_while_one_holds_it(project, tmp_path):
    """Letting the lock go with its last user must not let a second thread in beside the first: while one
    thread holds the claim, another waiting for it gets LockBusy, and gets it once it is let go."""
    engine = roomy_engine(project, tmp_path)
    tid = "20260101T000000Z-0000abcd"
    holding, release, results = threading.Event(), threading.Event(), []

    def hold() -> None:
        with engine.claim(tid):
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    with pytest.raises(LockBusy):
        with engine.claim(tid, wait=0.05):
            pass
    assert list(engine.claims) == [tid]  # the holder's, kept while it is held
    release.set()
    holder.join(30)
    with engine.claim(tid, wait=5):
        results.append("got it")
    assert results == ["got it"] and engine.claims == {}
    engine.close()


def _start_modules(argv: list[str], cwd: Path) -> dict:
    """What `memcurate <argv>` has imported when it hands over to the TUI (cli._review, stubbed), and the
    project it hands over."""
    code = (
        "import json, sys\nfrom memcurate.curator import cli\n"
        "cli._review = lambda p: print(json.dumps({'project': p, 'argparse': 'argparse' in sys.modules}))"
        f" or 0\nsys.exit(cli.main({argv!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd
    )
    return json.loads(out.stdout)


def test_the_tui_command_lines_reach_the_app_without_building_the_parser(project):
    """`memcurate` and `memcurate --project DIR` open the TUI without building the command line's parser
    (its subcommands cost a tenth of the CPU before the first frame); the project is the one the parser
    would have given (a subfolder: its git root)."""
    sub = project / "src"
    sub.mkdir()
    for argv, cwd in (([], sub), (["--project", str(sub)], ROOT), ([f"--project={sub}"], ROOT)):
        assert _start_modules(argv, cwd) == {"project": str(project), "argparse": False}, argv
    # anything else is the parser's: its checks and errors stay as they were
    assert _start_modules(["--project", str(sub), "--debug"], ROOT)["argparse"] is True


def test_the_queue_keeps_nothing_of_a_triage_once_every_category_is_decided(
    project, tmp_path, monkeypatch
):
    """The review queue (candidates/queue.py Board) reads every staged triage at a full reload: one whose
    every category is saved, rejected or skipped is pending no more, so it is not read again and nothing
    of it is kept (the TUI's live objects grew by ~130 a landed triage it had seen decided)."""
    from memcurate.curator.candidates import queue, staging

    engine = roomy_engine(project, tmp_path)
    (tid,) = stage(engine)
    states = engine.process(tid)
    board = queue.Board(engine.data)
    assert board.load()[tid], "its drafts wait for review"
    for cat, state in states.items():
        if state in staging.PENDING:
            engine.reject(tid, cat, "not durable")
    assert board.load() == {tid: []}
    assert board._docs == {} and board._outcomes == {}  # offline: it cost nothing

    reads = []
    real = staging.category_states
    monkeypatch.setattr(
        staging, "category_states", lambda *a, **k: reads.append(a[1]) or real(*a, **k)
    )
    assert board.load() == {tid: []}
    assert reads == []  # decided: not read again
    every = board.load(wanted=staging.FINAL)[tid]  # what `list --all` shows still reads it
    assert {i.state for i in every} == {"rejected"} | ({"skipped"} & set(states.values()))
    engine.close()


def test_a_rule_that_keeps_recurring_shows_its_last_sessions_not_every_one(proj):
    """A failure that recurs in every session grows its rule's evidence by one session each time it lands:
    the document shows the newest EVIDENCE_SESSIONS of them and says how many earlier ones it leaves out,
    so what the panel draws (and the app keeps of it) stays the same size however often it recurs."""
    project, memory = proj
    sessions = EVIDENCE_SESSIONS + 4
    for n in range(1, sessions + 1):
        seen(project, n)
    app = tui(project, memory)

    async def scenario(pilot):
        await select(pilot, "rule")
        text = document(app)
        assert f"failed the same way in {sessions} sessions" in text
        assert "… 4 earlier sessions not shown" in text
        assert text.count(f"$ {COMMAND}") == EVIDENCE_SESSIONS
        assert f"session session-{sessions}" in text and "session session-4" not in text
        assert "session session-5" in text  # the oldest of those shown

    run(app, scenario)


def test_the_app_keeps_of_a_recurring_rule_only_the_sessions_it_draws(proj):
    """What the app keeps of the selected rule (its Detail) holds the sessions its document draws, not every
    one the failure recurred in (`memcurate show --json` lists them all): a failure that recurs in every
    session grew what stayed live by one session's record each time it landed (tui_bench's live objects
    once the landings left, with the rule row selected)."""
    project, memory = proj
    sessions = EVIDENCE_SESSIONS + 4
    for n in range(1, sessions + 1):
        seen(project, n)
    app = tui(project, memory)

    def records(root) -> list[dict]:
        """The sessions' records reachable from `root` (not the process's: other tests leave theirs)."""
        seen_ids, todo, out = set(), [root], []
        while todo:
            o = todo.pop()
            if id(o) in seen_ids or isinstance(o, (type, str, int, float)):
                continue
            seen_ids.add(id(o))
            if isinstance(o, dict) and {"session", "at", "command"} <= o.keys():
                out.append(o)
            todo.extend(gc.get_referents(o))
        return out

    async def scenario(pilot):
        await select(pilot, "rule")
        assert f"failed the same way in {sessions} sessions" in document(app)
        assert app.detail is not None
        kept = sorted(str(o["session"]) for o in records(app.detail))
        assert kept == sorted(f"session-{n}" for n in range(5, sessions + 1))

    run(app, scenario)
    engine = app.engine
    assert engine is not None
    (item,) = [i for i in engine.review_items(kind="rule")]
    shown = engine.detail(item).as_dict()["evidence"]  # `show --json`: every session
    assert [o["session"] for o in shown] == [f"session-{n}" for n in range(1, sessions + 1)]
    engine.close()


def _compiled() -> int:
    """The patterns in re's module cache (3.11: `_cache`; 3.12 adds `_cache2`)."""
    return sum(len(getattr(re, name, {})) for name in ("_cache", "_cache2"))


def test_drafting_a_new_session_compiles_no_pattern_for_each_of_its_words():
    """The TUI's pipeline drafts every session that lands, in the app's process, for hours: the offline
    drafter looks up each word of a draft's text (tags.subject_words). Had each lookup been a pattern
    compiled for that word, re's module cache (512 patterns) would fill with one-off words, kept by the
    app and pushing out the patterns every draft uses again."""
    from memcurate.curator.drafting.offline.tags import subject_words

    def draft_text(words: list[str]) -> str:
        return "We chose " + ", ".join(f"the {w} module" for w in words) + " for the cache."

    subject_words(["cache"], [draft_text(["parser", "loader"])])
    before = _compiled()
    fresh = [f"zq{n}x{n}" for n in range(40)]  # words no draft has used before
    words = subject_words(["cache"], [draft_text(fresh)])
    assert "zq7x7" in words  # still found, as written
    assert _compiled() - before <= 2


def test_the_first_frame_waits_for_no_markup_emoji_table(project, tmp_path):
    """The queue's column labels are plain text: given as strings, each would be read as markup, and the
    first one loads rich's emoji table (a dict of ~3,600 names, ~5 ms) before the first frame can be
    written. The engine is built after the first frame: what is imported when it is built came before."""
    code = (
        "import asyncio, json, sys\n"
        "from memcurate.widgets.app import make_app\n"
        "seen = []\n"
        "def factory():\n"
        "    seen.append('rich._emoji_codes' in sys.modules)\n"
        "    raise OSError('no engine needed')\n"
        f"app = make_app({str(project)!r}, engine_factory=factory, watch=False, run_pipeline=False)\n"
        "async def main():\n"
        "    async with app.run_test(size=(160, 45)):\n"
        "        await app.ready()\n"
        "asyncio.run(main())\n"
        "print(json.dumps(seen))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert json.loads(out.stdout.splitlines()[-1]) == [False]


def _items(triages: int) -> list:
    """`triages` drafted triages of five ready rows each, as the queue shows them."""
    from memcurate.curator.candidates.queue import Item
    from memcurate.widgets.queue import sort_key

    rows = [
        Item(
            f"20261120T{n // 60:02d}{n % 60:02d}00Z-{n:08x}",
            category,
            "ready",
            title=f"{category} fact number {n}",
            action="create",
            created="2026-11-20T00:00:00Z",
            session=f"{n:08x}-0000",
            record={"confidence": 0.8},
        )
        for n in range(triages)
        for category in ("decision", "constraint", "runbook", "tech_debt", "preference")
    ]
    return sorted(rows, key=sort_key)


def _on_a_queue(scenario, highlighted: list[int] | None = None) -> None:
    """Run `scenario(pilot, table)` in an app that shows the queue alone, at 160×45; the rows it
    highlights go to `highlighted`."""
    from textual.app import App
    from textual.widgets import DataTable

    from memcurate.widgets.queue import QueueTable

    class Queue(App):
        def compose(self):
            yield QueueTable()

        def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
            if highlighted is not None:
                highlighted.append(event.cursor_row)

    async def run_it() -> None:
        app = Queue()
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            await scenario(pilot, app.query_one(QueueTable))

    asyncio.run(run_it())


def test_a_long_queue_is_filled_without_measuring_its_cells(monkeypatch):
    """textual's DataTable measures every cell of every new row for its auto-width columns (2,000 rows:
    14,000 measures, most of the time before they show); the queue's columns all have a width of their own,
    so its rows go in at once and no cell is measured. The rows, the cursor on the first of them and the
    row highlighted (what the document panel follows) are as before."""
    from textual.widgets import _data_table

    from memcurate.widgets.queue import row_key

    measured = []
    real = _data_table.measure
    monkeypatch.setattr(
        _data_table, "measure", lambda *a, **k: measured.append(a[1]) or real(*a, **k)
    )
    highlighted: list[int] = []
    items = _items(200)

    async def scenario(pilot, table) -> None:
        measured.clear()
        table.sync(items, None)
        await pilot.pause()
        assert measured == []
        assert table.row_count == len(items) == 1000
        assert [k.value for k in list(table.rows)[:3]] == [row_key(i) for i in items[:3]]
        assert table.selected() == items[0] and highlighted == [0]
        assert table.virtual_size.height == len(items) + 1  # the rows and the header
        # a landing: its rows appended, the cursor where it was
        table.move_cursor(row=10)
        await pilot.pause()
        more = items + _items(201)[-5:]
        table.sync(more, None)
        await pilot.pause()
        assert measured == [] and table.row_count == len(more)
        assert table.selected() == items[10]
        assert table.get_row_at(len(more) - 1)[2].plain == more[-1].title

    _on_a_queue(scenario, highlighted)


def test_the_queue_draws_its_lines_as_datatable_does_with_one_style_and_one_blank_a_frame(
    monkeypatch,
):
    """textual's DataTable works out its style (a walk of its ancestors' styles) and offsets for each line it
    draws, and its StylesCache borders each, blank lines under the rows too (a loading queue's first frame:
    40 of them). The queue does the first once a frame, and draws one blank line for all: every line, rows,
    header and blank, scrolled or not, bordered or not, is the line DataTable draws."""
    from textual.geometry import Region
    from textual.widgets import DataTable

    from memcurate.widgets.queue import QueueTable

    walks: list[int] = []
    style = DataTable.rich_style.fget
    monkeypatch.setattr(QueueTable, "rich_style", property(lambda t: walks.append(1) or style(t)))

    async def scenario(pilot, table) -> None:
        drawn: dict[int, object] = {}
        real = table.render_line

        def spy(y: int):
            drawn[y] = real(y)
            return drawn[y]

        table.render_line = spy  # what textual's StylesCache calls for each line it draws
        table.styles.border = ("round", "green")  # as the app's queue, titled
        table.border_title = "Pending"
        for items, scroll in ((_items(1), 0), (_items(20), 30), ([], 0)):
            table.sync(items, None)
            await pilot.pause()
            table.scroll_to(y=scroll, animate=False)
            await pilot.pause()
            assert table.scroll_y == scroll
            w, h = table.region.size
            drawn.clear()
            walks.clear()
            table._styles_cache.clear()  # every line drawn again, as in a first frame
            whole = table.render_lines(Region(0, 0, w, h))
            assert len(walks) == 1 and len(whole) == h  # the style worked out once for the frame
            for y, line in drawn.items():
                assert list(line) == list(DataTable.render_line(table, y)), (len(items), y)
            # the lines under the rows: one drawn, the others the same line
            blank = max(table.size.height - 1 - (len(items) - scroll), 0)
            assert len(drawn) == table.size.height - max(blank - 1, 0)
            assert sum(1 for line in drawn.values() if not line.text.strip()) == min(blank, 1)
            # with the border, background and title, whole or in part: as textual draws it line by line
            for crop in (Region(0, 0, w, h), Region(0, 5, w, 10), Region(3, 20, 50, h - 20)):
                table._styles_cache.clear()
                mine = table.render_lines(crop)
                table._styles_cache.clear()
                assert [list(s) for s in mine] == [
                    list(s) for s in DataTable.render_lines(table, crop)
                ], (len(items), crop)

    _on_a_queue(scenario)


def test_a_filter_removes_a_long_queue_s_rows_at_once(monkeypatch):
    """textual's remove_row numbers every row again for each row it removes: a filter that leaves one
    category of 1,000 rows would renumber the table 800 times (half a million steps). The queue removes
    them at once, numbering what stays once; the rows left, their order, the selection and the cursor
    are as the filter asks."""
    from memcurate.widgets.queue import matches, row_key

    renumbered = []
    real = _two_way_dict.TwoWayDict.__setitem__
    monkeypatch.setattr(
        _two_way_dict.TwoWayDict,
        "__setitem__",
        lambda self, k, v: renumbered.append(k) or real(self, k, v),
    )

    items = _items(200)

    async def scenario(pilot, table) -> None:
        table.sync(items, None)
        await pilot.pause()
        table.move_cursor(row=12)  # a runbook row (the third of its triage)
        await pilot.pause()
        chosen = table.selected()
        assert chosen is not None and chosen.category == "runbook"
        left = [i for i in items if matches(i, ["runbook"])]
        renumbered.clear()
        table.sync(left, None)
        await pilot.pause()
        assert len(renumbered) < len(items), len(renumbered)
        assert table.row_count == len(left) == 200
        assert [k.value for k in table.rows] == [row_key(i) for i in left]
        assert [table.get_row_at(n)[2].plain for n in (0, 199)] == [
            left[0].title,
            left[199].title,
        ]
        assert table.selected() in left
        # and the rows come back in place with the filter cleared
        table.sync(items, None)
        await pilot.pause()
        assert [k.value for k in table.rows][:6] == [row_key(i) for i in items[:6]]
        assert table.row_count == 1000

    _on_a_queue(scenario)


def test_a_long_queue_makes_a_text_only_for_what_differs_from_row_to_row(monkeypatch):
    """Each row was seven rich Texts (2,000 rows: 14,000 made before the first frame with rows). The
    cells many rows show alike (category, action, confidence, issues, the group's │) are one Text each;
    a row makes its own only for its title, its age and its group's session. What each cell shows and
    its style are as before."""
    from rich.text import Text

    made = []
    real = Text.__init__
    monkeypatch.setattr(
        Text, "__init__", lambda self, *a, **k: made.append(1) or real(self, *a, **k)
    )

    items = _items(200)

    async def scenario(pilot, table) -> None:
        made.clear()
        table.sync(items, None)
        assert len(made) < 3 * len(items), len(made)
        first, second = table.get_row_at(0), table.get_row_at(1)
        assert [c.plain for c in first] == [
            "00000000",
            "decision",
            "decision fact number 0",
            "create",
            "0.80",
            "",
            first[6].plain,
        ]
        assert first[6].plain and str(first[3].style) == "green"
        assert (second[0].plain, str(second[0].style)) == ("│", "dim")
        assert second[1].plain == "constraint" and second[3] is first[3]

    _on_a_queue(scenario)


@pytest.mark.parametrize("seed", range(5))
def test_the_key_benchs_two_halves_press_the_same_keys_from_and_to_the_same_row(seed):
    """tui_bench counts the app's objects after the key presses' first half and after the second: the counts
    compare what a key press leaves only if both halves end on the same row (each shows its row's document,
    drawn line by line) and the second shows no row the first did not (a row shown once caches its item)."""
    import random

    sys.path.insert(0, str(ROOT / "bench"))
    import tui_bench

    rows, start, warmup, presses = 2004, 1002, 3, 242
    keys, half = tui_bench.key_walk(random.Random(seed), start, rows, warmup, presses)
    assert len(keys) == warmup + presses
    at = [start]
    for key in keys:
        at.append(at[-1] + tui_bench.MOVE[key])
    second = len(keys) - half
    assert second == presses // 4 * 2 and half >= warmup
    assert at[half] == at[-1]
    assert keys[half:] == keys[half - second : half]
    assert set(at[half:]) == set(at[half - second : half + 1])
    assert all(0 <= row < rows for row in at) and len(set(at[half:])) > 1
