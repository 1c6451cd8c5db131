"""The live review app: a thin view over the engine.

Workers do the I/O and only post messages (widgets/messages.py); the handlers
here change state. Each long-running job has its own worker group: `watch`
(watchfiles over staging and the memory root: widgets/watch.py), `load` (reading
staged items), `pipeline` (drafting unclaimed triages: widgets/drafting.py),
`selection` (the selected row's document and archive preview), `budgets`,
`review` (the person's actions).

The first frame comes before the engine: `engine` builds it in a worker once the
screen is painted (its config, SQLite index and imports are most of a start), and
EngineReady starts everything else. Until then the queue says "loading…" and the
review keys are greyed out ("starting"); tests await `app.ready()`.

Every other kind of review (curator/review/kinds.py: Claude's own memory writes held
for review, rule-graduation candidates, proposals...) sits beside the triages'
memories, its rows kept under its kind's prefix (`claude/`) and labelled with its
kind's label. The app knows no kind by name: the watcher reports a kind's folders as
its prefix, the load worker lists its items through the Engine, the detail is the
kind's typed Detail, and every key acts through the Engine's generic verbs; what does
not apply to a kind is greyed out and says why (the kind's why_not).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import DataTable
from textual.worker import get_current_worker

from memcurate.curator.candidates import staging, usage
from memcurate.curator.review.names import (
    APPROVE,
    CHANGE,
    CLAUDE_WRITE,
    EDIT,
    EDIT_TEXT,
    FIELDS,
    REJECT,
    RETRY,
    RULE,
    TEXT,
)
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.textsafe import one_line

from .actions import (
    ANYWHERE,
    QUEUE,
    QUEUE_ACTIONS,
    QUEUE_HELP_EXTRA,
    bindings,
    by_key,
    help_rows,
    names,
)
from .drafting import WAITING, Pipeline, PipelineEvent
from .footer import NARROW, TidyFooter, fit_footer
from .header import TitleBar
from .messages import (
    SAID,
    ActionDone,
    BudgetsLoaded,
    DetailLoaded,
    DraftingDescribed,
    EngineReady,
    ItemsLoaded,
    StagingChanged,
)
from .queue import (
    FILTER_CATEGORIES,
    SEVERITIES,
    QueueTable,
    group_of,
    is_memory,
    kind_item,
    kind_name,
    matches,
    queue_title,
    review_item,
    sort_key,
    unknown_words,
)
from .reasons import why_not_now

# the item shapes (dataclasses, compiled when imported) come with the engine, after the first frame
if TYPE_CHECKING:
    from memcurate.curator.candidates.queue import Item, TriageProgress
    from memcurate.curator.drafting import DraftingStatus
    from memcurate.curator.engine import Engine
    from memcurate.curator.review.items import Detail, Kind
# The dialogs (.dialogs) are imported where a key opens one: their widgets (TextArea, Input, OptionList) are
# a tenth of the imports before the first frame. The panels (.panels) come after the first frame
# (_mount_panels), and their module with them: each widget class textual sets up costs about a millisecond.

STALE = ("stale",)  # what the detail panels show when it must be read again, whatever is selected
SELECT_SETTLE = 0.03  # seconds the cursor rests on a row before its document is read
PANELS_CSS = "panels.tcss"  # the panels' rules, read as they are mounted (next to CSS_PATH)
LOADING = "loading…"  # the queue's title until the engine is up and the first load is shown
# why a key is greyed out before the engine
STARTING = "starting: the keys work once the queue has loaded"
NOT_ON_SCREEN = (
    "the draft is not on screen yet: press the key again once the document panel shows it"
)
# the footer's keys left out there (help still lists them)
NARROW_HIDDEN = frozenset(("edit_external",))
# columns below which the footer leaves out TIGHT_HIDDEN too (at 80, ? Help and q Quit fit)
TIGHT = 100
# keys for a row in one state or another
TIGHT_HIDDEN = frozenset(("change_action", "retry_memory"))
AGE_TICK = 60.0  # seconds between updates of the age column (it counts in minutes after the first)
# seconds after mounting: the engine starts even if no frame hook came (first paint ~0.3 s)
ENGINE_FALLBACK = 1.0

# (action, keys, footer label, what it does) of each key (widgets/actions.py), as tests read them
REVIEW_ACTIONS = [a.columns for a in QUEUE_ACTIONS]
ACTION_NAMES = names(QUEUE_ACTIONS)
# until EngineReady: help and quit work from the first frame
STARTING_GREYED = ACTION_NAMES - names(QUEUE_ACTIONS, ANYWHERE)
# keys that apply whatever is selected
ALWAYS = names(QUEUE_ACTIONS, ANYWHERE, QUEUE)
KEY_ACTIONS = by_key(QUEUE_ACTIONS)
# The verb each review key asks an item's kind about (items.Kind.why_not): what does not apply to a kind
# is greyed out and says why in the kind's words.
VERBS = {
    "approve_memory": APPROVE,
    "edit_memory": EDIT,
    "edit_external": EDIT_TEXT,
    "reject_memory": REJECT,
    "change_action": CHANGE,
    "retry_memory": RETRY,
}
# The built-in kinds' words for the keys that do not apply to them, by the key's action (tests compare what a
# key says with them): read from the kinds' why_not, where they live.
_NOT_FOR = {"NOT_FOR_CLAUDE": CLAUDE_WRITE, "NOT_FOR_RULE": RULE, "NOT_FOR_PROPOSAL": "proposal"}


def __getattr__(name: str) -> dict[str, str]:
    if name not in _NOT_FOR:
        raise AttributeError(name)
    from memcurate.curator.review.kinds import named

    kind = named(_NOT_FOR[name])
    return {a: why for a, verb in VERBS.items() if (why := kind.why_not(verb, None))}


HELP_NOTES = [
    "Rows are grouped by triage: the session column names the Claude Code session it read (the first 8 "
    "characters of its id) on the group's first row, │ on the others. A greyed key says why when pressed.",
    "Rows of category claude are Claude's own memory writes, held for your review "
    "(memcurate hook --review-auto-memory): a writes exactly that file, r rejects it; "
    "they cannot be edited, and A leaves them to you one by one.",
    "Rows of category rule are failures that recurred across sessions: a writes the rule into "
    ".claude/rules/memcurate/<topic>.md, e edits its text, topic and paths, r rejects it (never "
    "proposed again); A leaves them to you one by one.",
    "Drafted offline (no model), a draft is an evidence card: text quoted from the session by rules, "
    "shown with the lines it came from, the category they suggest and a runbook's error → fix. e opens it "
    "pre-filled with the evidence beside it: write the fact in your own words. --auto-approve leaves "
    "cards you have not written to you (unless auto_approve.offline_cards is true).",
    "Rows of category proposal are changes to existing memories (update, merge, archive, adopt, unlink) "
    "found by memcurate check, tidy or the library: a applies the diff shown, e edits the memory file "
    "it writes, r rejects it (never proposed again for the same files).",
]


class MemcurateApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "memcurate"
    BINDINGS = bindings(QUEUE_ACTIONS)

    def __init__(
        self,
        engine_factory: Callable[[], Engine],
        *,
        watch: bool = True,
        run_pipeline: bool = True,
        clock: Callable[[], float] | None = None,
        editor: str | None = None,
        subtitle: str | None = None,
        drafting: Callable[[], DraftingStatus] | None = None,
        project: str | None = None,
    ) -> None:
        super().__init__()
        self.subtitle = subtitle
        self.project = project  # the header's until the engine names it
        self.engine_factory = engine_factory
        # The person's actions and reads (the pipeline has its own): built by the `engine` worker after
        # the first frame; None until EngineReady.
        self.engine: Engine | None = None
        self.board = None
        self._drafting = drafting  # tests pass a fixed one; else the engine's drafting_status
        self.describe_drafting: Callable[[], DraftingStatus] | None = None
        self._engine_up = asyncio.Event()  # set once the engine is up and its first load asked for
        self._first_frame = True  # until the first frame is written (post_display_hook)
        self._panels: list[AwaitMount] = []  # the panels' mounts, until the engine is up
        self.watch_enabled, self.pipeline_enabled = watch, run_pipeline
        self.clock = clock
        self.editor = editor
        self.items: dict[str, list[Item]] = {}
        self.outcomes: dict[
            str, TriageProgress
        ] = {}  # every staged triage's skips and model use (the progress panel)
        self.overall = usage.empty()  # the model use of every staged triage
        self.filter_words: list[str] = []
        # the selected item as the person reviews it (its kind's Detail), once read
        self.detail: Detail | None = None
        self.review_key: tuple[str, str] | None = None
        # the registered kinds (the Engine's), and those whose rows are kept under their own prefix
        self.kinds: dict[str, Kind] = {}
        self.row_kinds: tuple[Kind, ...] = ()
        self._shown: tuple | None = STALE  # (key, state, verified) of what the detail panels show
        # What the issues and progress panels and the footer show: each is redrawn only when it changes
        # (a panel's update lays the whole screen out again; the footer's recompose rebuilds its keys,
        # and textual 8.2.8 never frees the old ones: see bench/README.md, tui_bench.py).
        self._issues_shown: tuple | None = None
        self._progress_shown: tuple | None = None
        self._enabled_actions: tuple | None = None
        self._fitted: tuple = (False, frozenset())  # (narrow, the footer's hidden keys): _fit
        # triages to read again (None: all; the first load is due)
        self._dirty: set[str] | None = None
        self._loading = False
        self._stop = threading.Event()
        self.pipeline = Pipeline(engine_factory, self.post_message, self._stop)
        # set while the pipeline waits for work (tests await it)
        self.pipeline_idle = self.pipeline.idle

    @property
    def review(self) -> dict | None:
        """The selection's Detail as its kind's view (what the panels draw), once read."""
        return self.detail.view if self.detail is not None else None

    # -- layout ---------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        # The queue's screen lays the queue's column and the selection's side by side itself (app.tcss #main):
        # textual lays out, styles and draws each widget, container or not, and a Horizontal around the two
        # columns cost the first frame a tenth of what memcurate adds to it.
        return Screen(id="main")

    def compose(self) -> ComposeResult:
        yield TitleBar()
        # The pipeline's panels (under the queue) and the selection's (#right), empty until the engine is up,
        # are mounted after the first frame (_mount_panels), for the same reason.
        with Vertical(id="left"):
            yield QueueTable(id="queue")
        yield TidyFooter()

    def _mount_panels(self) -> list[AwaitMount]:
        from .panels import (
            BudgetsView,
            DocumentView,
            DraftingLine,
            GraduationView,
            IssuesView,
            ProgressView,
        )

        # their rules (app.tcss has the first frame's): textual styles each widget with the rules there are
        # when it is mounted, so these, which match none of the first frame's, are read before them
        path = os.path.join(os.path.dirname(__file__), PANELS_CSS)
        with open(path, encoding="utf-8") as f:
            self.stylesheet.add_source(f.read(), read_from=(path, ""))
        progress = ProgressView(id="progress")
        progress.set_compact(self._fitted[0])  # a narrow terminal's, as _fit makes it
        return [
            self.query_one("#left", Vertical).mount(DraftingLine(id="drafting"), progress),
            self.screen_stack[0].mount(
                Vertical(
                    DocumentView(id="document"),
                    IssuesView(id="issues"),
                    Horizontal(
                        BudgetsView(id="budgets"), GraduationView(id="graduation"), id="bottom"
                    ),
                    id="right",
                )
            ),
        ]

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """Below NARROW columns the layout gives way (app.tcss `.-narrow`): the panels stack, the queue over the
        whole width, the pipeline panel on one line, and the footer drops its spacing and the keys help still
        lists (NARROW_HIDDEN, and below TIGHT columns TIGHT_HIDDEN) so that ? Help and q Quit stay in sight."""
        narrow = width < NARROW
        hidden = (
            NARROW_HIDDEN | (TIGHT_HIDDEN if width < TIGHT else frozenset())
            if narrow
            else frozenset()
        )
        if (narrow, hidden) == self._fitted:
            return  # as laid out (the first layout is the wide one: a wide start does nothing here)
        self._fitted = (narrow, hidden)
        self.set_class(narrow, "-narrow")
        for progress in self.query("#progress"):  # once mounted (_mount_panels sets it then)
            progress.set_compact(narrow)
        for footer in self.query(TidyFooter):
            if footer.hidden != hidden:
                fit_footer(footer, narrow, hidden)

    def on_notify(self, event) -> None:
        """Toasts stand at the bottom left of the queue, over its empty rows, above the drafting line and the
        pipeline panel (their text stays readable) and away from the budgets (bottom right) they report on.
        Placed at each notification: the pipeline panel grows and shrinks as categories are drafted."""
        screen = self.screen
        try:
            # textual's, by its type name (its class is private)
            rack = screen.query_one("ToastRack")
            above = screen.query_one("#drafting").region.y if screen is self.screen_stack[0] else 0
        except NoMatches:
            return
        # 1: textual's own margin elsewhere
        lift = max(1, screen.size.height - above) if above else 1
        if rack.styles.margin.bottom != lift:
            rack.styles.margin = (0, 0, lift, 0)

    def on_mount(self) -> None:
        self._fit(self.size.width)
        self.sub_title = self.subtitle if self.subtitle is not None else (self.project or "")
        queue = self.query_one(QueueTable)
        queue.focus()
        queue.border_title = LOADING
        if self.clock is None:  # a fixed clock (tests, snapshots): the ages never move
            self.set_interval(AGE_TICK, self._tick_ages)
        # should textual not call the hook below
        self.set_timer(ENGINE_FALLBACK, self._after_first_frame)

    def post_display_hook(self) -> None:
        """After each frame written (textual): the first one starts the engine (the first paint is not
        slowed by it); the timer set in on_mount starts it anyway, should this hook never be called."""
        self._after_first_frame()

    def _after_first_frame(self) -> None:
        if self._first_frame:
            self._first_frame = False
            if not gc.isenabled():  # cli._review turned collection off for the start
                gc.freeze()  # what the start built lives as long as the process: never walked again
                gc.enable()
            # before the engine, whose EngineReady waits for them (on_engine_ready)
            self._panels = self._mount_panels()
            self._start_engine()

    @work(thread=True, group="engine")
    def _start_engine(self) -> None:
        import sqlite3  # the engine's index: loaded by it anyway, after the first frame

        try:
            engine = self.engine_factory()
            board = engine.board()
        # a bad config, an unreadable data dir or index: said, and the app leaves
        except (*SAID, sqlite3.Error) as e:
            self.post_message(EngineReady(None, None, str(e) or e.__class__.__name__))
            return
        self.post_message(EngineReady(engine, board))

    async def on_engine_ready(self, message: EngineReady) -> None:
        panels, self._panels = self._panels, []
        for mounted in panels:  # what the engine's first load fills
            await mounted
        self._engine_up.set()  # its handlers run before an awaiting test resumes
        if message.engine is None:
            from rich.text import Text  # not markup: the error may hold brackets

            self.exit(return_code=1, message=Text(f"memcurate: cannot start: {message.error}"))
            return
        self.engine, self.board = message.engine, message.board
        self.kinds = {k.name: k for k in self.engine.review_kinds()}
        self.row_kinds = tuple(k for k in self.kinds.values() if k.prefix)
        self.describe_drafting = self._drafting or self.engine.drafting_status
        if self.subtitle is None:
            self.sub_title = self.engine.project
        self._request_load(None)
        self._describe_drafting()
        if self.watch_enabled:
            self._watch()
        if self.pipeline_enabled:
            # the first load wakes it when a triage waits for drafting (on_items_loaded)
            self.run_worker(self.pipeline.run, name="pipeline", group="pipeline", thread=True)

    async def ready(self) -> Engine | None:
        """Await the engine (tests: what a person can do once the queue has loaded needs it); None when it
        could not be built (the app is leaving)."""
        await self._engine_up.wait()
        return self.engine

    def on_unmount(self) -> None:
        self._stop.set()
        self.pipeline.wake()

    @property
    def now(self) -> float | None:
        return self.clock() if self.clock else None

    # -- the queue --------------------------------------------------------------------

    def _request_load(self, tids: set[str] | None) -> None:
        """Coalesce reloads: one load runs at a time and the next takes everything asked meanwhile."""
        if tids is None or self._dirty is None:
            self._dirty = None
        else:
            self._dirty |= tids
        if not self._loading and self.engine is not None:  # EngineReady asks for the first load
            tids, self._dirty = self._dirty, set()
            self._loading = True
            self._load(tids)

    @work(thread=True, group="load")
    def _load(self, tids: set[str] | None) -> None:
        try:
            groups = {k.prefix for k in self.row_kinds}
            items = self.board.load(None if tids is None else sorted(tids - groups))
        except SAID as e:  # the staging dir itself unreadable: say so, keep what is shown
            self.post_message(ActionDone(f"cannot read the staging dir: {e}", set(), "error"))
            items = {}
        outcomes = {tid: self.board.outcome(tid) for tid in items}
        full = tids is None and bool(items)
        for kind in self.row_kinds:
            if tids is None or kind.prefix in tids:
                try:
                    items[kind.prefix] = [
                        kind_item(i, kind) for i in self.engine.review_items(kind=kind.name)
                    ]
                # the folder unreadable (one bad record is an error row): said, rows kept
                except SAID as e:
                    self.post_message(ActionDone(f"cannot read {kind.what}: {e}", set(), "error"))
        self.post_message(ItemsLoaded(items, full=full, outcomes=outcomes))

    def on_items_loaded(self, message: ItemsLoaded) -> None:
        self._loading = False
        if message.full:
            self.items, self.outcomes = {}, {}
        self.outcomes.update(message.outcomes)
        for tid, outcome in message.outcomes.items():
            if outcome.blank:
                del self.outcomes[tid]  # it shows nothing beyond its rows
        self.overall = usage.empty()
        for outcome in self.outcomes.values():
            usage.add(self.overall, outcome.usage)
        for tid, rows in message.items.items():
            if rows:
                self.items[tid] = rows
            else:
                self.items.pop(tid, None)
        selected = self.selected()
        if selected is not None and not is_memory(selected) and group_of(selected) in message.items:
            self._shown = STALE  # a later write of Claude's to the same file, or a rule's edit, changes what it shows
        self._show_queue()
        if self._dirty is None or self._dirty:
            self._request_load(set() if self._dirty is not None else None)
        if any(i.state in WAITING for rows in message.items.values() for i in rows):
            self.pipeline.wake()

    def visible(self) -> list[Item]:
        rows = [i for tid in sorted(self.items) for i in self.items[tid]]
        if self.filter_words:
            rows = [i for i in rows if matches(i, self.filter_words)]
        return sorted(rows, key=sort_key)

    def _show_queue(self) -> None:
        table = self.query_one(QueueTable)
        table.sync(self.visible(), self.now)
        table.border_title = queue_title(self.items) + (
            f" — filter: {' '.join(self.filter_words)}" if self.filter_words else ""
        )
        # the graduation panel counts the rule kind's rows
        group = self.kinds[RULE].prefix if RULE in self.kinds else None
        rules = [i for i in self.items.get(group, []) if not i.is_error] if group else []
        from .panels import GraduationView

        self.query_one(GraduationView).show(sorted(rules, key=sort_key))
        self._selection_changed()

    def selected(self) -> Item | None:
        return self.query_one(QueueTable).selected()

    def _tick_ages(self) -> None:
        """The age column as time passes: only the age cells that changed are redrawn."""
        self.query_one(QueueTable).tick_ages(self.now)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._selection_changed()

    def _selection_changed(self) -> None:
        from .panels import DocumentView, IssuesView

        item = self.selected()
        key = item.key if item else None
        shown = (key, item.state, item.field("verified")) if item else None
        if shown != self._shown:
            self._shown = shown
            self.detail, self.review_key = None, key
            ready = item is not None and item.state == "ready"
            if not ready:
                self.query_one(DocumentView).show(None, self._placeholder(item))
            self._load_selection(item if ready else None)
        last = self._issues_shown
        if last is None or last[0] != item or last[1] is not self.review:
            self._issues_shown = (item, self.review)
            self.query_one(IssuesView).show(item, self.review)
        self._show_progress(item)
        enabled = tuple(bool(self.check_action(a.action, ())) for a in QUEUE_ACTIONS)
        if enabled != self._enabled_actions:
            self._enabled_actions = enabled
            self.refresh_bindings()

    def _show_progress(self, item: Item | None) -> None:
        # Claude's writes and rules are not drafted by the pipeline
        tid = item.tid if is_memory(item) else None
        rows = [i for i in self.items.get(tid, []) if not i.is_error] if tid else []
        busy = sum(
            1
            for t, v in self.items.items()
            if t != tid and any(i.state in staging.IN_FLIGHT for i in v)
        )
        from memcurate.curator.candidates.queue import TriageProgress  # loaded with the engine

        from .panels import ProgressView

        outcome = (self.outcomes.get(tid) if tid else None) or TriageProgress()
        shown = (tid, rows, busy, outcome, self.overall)
        if shown != self._progress_shown:
            self._progress_shown = shown
            self.query_one(ProgressView).show(
                tid, rows + list(outcome.skipped), busy, outcome.usage, self.overall
            )

    @work(thread=True, group="selection", exclusive=True)
    def _load_selection(self, item: Item | None) -> None:
        """The selection's Detail, read through its kind (a ready row's; None: nothing to read), and
        the budgets with what approving it would archive. A held arrow key moves the cursor many times
        a second: each move cancels the one before, which gives up after a short wait, so only where
        the cursor stops is read."""
        self._stop.wait(SELECT_SETTLE)
        if get_current_worker().is_cancelled:
            return
        detail = None
        if item is not None:
            try:
                # without `show --json`'s part (a rule's every session): the app draws the kind's view
                detail = replace(self.engine.detail(review_item(item)), shown={})
                self.post_message(DetailLoaded(item.key, detail))
            except Exception as e:  # a malformed record is shown, never fatal
                self.post_message(DetailLoaded(item.key, None, str(e)))
        self.post_message(self._budgets(item if is_memory(item) and detail else None, detail))

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        item = self.selected()
        if item is None or item.key != message.key:
            return
        from .panels import DocumentView, IssuesView

        self.detail = message.detail
        if message.detail is not None:
            self.query_one(DocumentView).show_detail(message.detail, root=self.engine.root)
        else:
            self.query_one(DocumentView).show(None, message.error)
        self._issues_shown = (item, self.review)
        self.query_one(IssuesView).show(item, self.review)

    @work(thread=True, group="budgets", exclusive=True)
    def _load_budgets(self, item: Item | None) -> None:
        self.post_message(self._budgets(item))

    def _budgets(self, item: Item | None, detail: Detail | None = None) -> BudgetsLoaded:
        """In a worker: MEMORY.md's usage, and what approving `item` (a ready memory; its `detail` may
        be read already) would move to the archive."""
        key = item.key if item is not None else None
        try:
            usage = self.engine.budgets()
            if item is not None and detail is None:
                detail = self.engine.detail(review_item(item))
            if detail is not None and detail.note:  # MEMORY.md could not be read for its preview
                return BudgetsLoaded(None, {}, key, detail.note.removeprefix("MEMORY.md: "))
            moves = detail.archive if item is not None and detail is not None else {}
            return BudgetsLoaded(usage, moves, key)
        except SAID as e:  # a damaged MEMORY.md is reported in the panel
            return BudgetsLoaded(None, {}, key, str(e))

    def on_budgets_loaded(self, message: BudgetsLoaded) -> None:
        if message.key != _archiving(self.selected()):
            return  # for a row the cursor has left
        from .panels import BudgetsView

        self.query_one(BudgetsView).show(message.usage, message.moves, message.error)

    # -- watching and drafting ----------------------------------------------------------

    @work(thread=True, group="describe")
    def _describe_drafting(self) -> None:
        """Which backend drafts and why: a look at the environment and the PATH, and the SDK's
        deprecation table read as text (never an import of the SDK)."""
        try:
            info = self.describe_drafting()
        except SAID as e:  # an unreadable PATH entry or SDK table: the line says so
            from memcurate.curator.drafting import DraftingStatus

            info = DraftingStatus.unknown(str(e))
        self.post_message(DraftingDescribed(info))

    def on_drafting_described(self, message: DraftingDescribed) -> None:
        from .panels import DraftingLine

        self.query_one(DraftingLine).show(message.info)

    @work(thread=True, group="watch")
    def _watch(self) -> None:
        from . import watch  # after the first frame: it is no part of the start

        engine = self.engine
        prefixes = {k.name: k.prefix for k in self.row_kinds}
        folders = watch.Folders(
            engine.staging_dir,
            engine.root,
            # each kind's folder -> its rows' key
            {
                folder: prefixes[name]
                for folder, name in engine.review_folders().items()
                if prefixes.get(name)
            },
        )
        try:
            watch.run(
                folders,
                self._stop,
                lambda changed: self.post_message(StagingChanged(changed.keys, changed.memory)),
            )
        # a folder gone, too many watches (OSError); watchfiles' own failure is a RuntimeError
        except (OSError, RuntimeError) as e:
            self.post_message(
                ActionDone(
                    f"stopped watching for new work ({e}); restart memcurate to resume",
                    set(),
                    "error",
                )
            )

    def on_staging_changed(self, message: StagingChanged) -> None:
        from . import watch

        tids = message.tids
        if tids is not None:
            # the other kinds' issues and plans (a link in MEMORY.md, a stale proposal) follow the memory files
            follow = {k.prefix for k in self.row_kinds}
            tids = watch.to_read(watch.Changed(tids, message.memory), self.items, follow)
        if tids is None or tids:
            self._request_load(tids)
        if message.memory:
            selected = self.selected()
            self._load_budgets(selected if _archiving(selected) else None)
            for screen in self.screen_stack:
                if _library_open(self, screen):
                    from .library import LibraryChanged

                    screen.post_message(LibraryChanged())

    def on_pipeline_event(self, message: PipelineEvent) -> None:
        if message.state == "look-failed":  # its keyword categories go on; the next run looks again
            self.notify(
                f"the second look at the session of {message.tid} failed: the next run tries it again",
                severity="warning",
                markup=False,
            )
        self._request_load({message.tid})

    # -- review actions -------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Grey out (None) what does not apply to the selection (why_not says why)."""
        if self.engine is None and action in STARTING_GREYED:
            return None  # starting (why_not says so)
        # its keys (and its help's): the queue's wait
        if any(_library_open(self, s) for s in self.screen_stack):
            return action == "quit" if action in ACTION_NAMES else True
        if action not in ACTION_NAMES or action in ALWAYS:
            return True
        return None if self.why_not(action, self.selected()) else True

    def why_not(self, action: str, item: Item | None) -> str | None:
        """Why `action` does not apply to `item`, in words the person is shown on pressing its key: starting,
        nothing selected, its kind (the kind's why_not), its state (still drafting, failed, unreadable) or a BLOCK (which
        issue); None when it applies."""
        if self.engine is None and action in STARTING_GREYED:
            return STARTING
        if action not in ACTION_NAMES or action in ALWAYS:
            return None
        if action == "approve_clean":
            if self.clean_items():
                return None
            if unsure := self.unsure_items():
                return (
                    f"no drafted memory is free of issues at or above the --auto-approve gate: {len(unsure)} with "
                    f"none {'is' if len(unsure) == 1 else 'are'} below confidence {self.gate():.2f} "
                    "(auto_approve.min_confidence): approve them one by one with a"
                )
            return "no drafted memory is free of issues: approve them one by one with a (A takes only those with none)"
        if item is None:
            return "nothing selected: the queue is empty"
        detail = self.detail if self.review_key == item.key else None
        why = self._kind_says(VERBS[action], item, detail) if action in VERBS else None
        if why is None:
            why = why_not_now(action, item, detail.view if detail is not None else None)
        return why

    def _kind_says(self, verb: str, item: Item, detail: Detail | None) -> str | None:
        """Why the item's kind says `verb` does not apply (items.Kind.why_not); a kind's editor and the
        pipeline's own keys (change the action, retry: a triage's drafts only) say the rest."""
        kind = self.kinds.get(kind_name(item))
        if kind is None:  # not loaded yet
            return None
        why = kind.why_not(verb, review_item(item), detail)
        noun = kind.noun or item.category
        if why is None and verb in (CHANGE, RETRY) and not is_memory(item):
            why = f"a {noun} was not drafted by memcurate: approve (a) or reject (r) it"
        if why is None and detail is not None and verb in (EDIT, EDIT_TEXT):
            if not detail.editor or (verb == EDIT_TEXT and detail.editor != TEXT):
                why = f"this {noun} has nothing to edit as text: approve (a) or reject (r) it"
        return why

    def gate(self) -> float:
        """The confidence --auto-approve saves a draft at (auto_approve.min_confidence): A takes no less."""
        return self.engine.settings.auto_approve.min_confidence if self.engine is not None else 1.0

    def _no_issues(self) -> list[Item]:
        return [
            i
            for rows in self.items.values()
            for i in rows
            if i.state == "ready" and not i.blocks and not i.advisories and is_memory(i)
        ]

    def clean_items(self) -> list[Item]:
        """What `A` approves: what --auto-approve would save, drafted memories with no issue at all (an offline
        card carries one) whose confidence reaches the gate (Claude's own writes and rules, one by one, with
        `a`)."""
        least = self.gate()
        return [i for i in self._no_issues() if i.confidence is not None and i.confidence >= least]

    def unsure_items(self) -> list[Item]:
        """Drafted memories with no issue whose confidence is below the gate (or unknown): A leaves them."""
        least = self.gate()
        return [i for i in self._no_issues() if i.confidence is None or i.confidence < least]

    def on_key(self, event) -> None:
        """A key greyed out for the selection's kind says why (a greyed key's action never runs)."""
        if len(self.screen_stack) > 1:
            return
        action = KEY_ACTIONS.get(event.key)
        why = self.why_not(action, self.selected()) if action else None
        if why:
            self.notify(why, severity="warning", markup=False)

    def get_system_commands(self, screen):
        yield from super().get_system_commands(screen)
        # Each review action once, its help the key that runs it (not its title again); help and quit are
        # textual's own Keys and Quit.
        for a in QUEUE_ACTIONS:
            if a.where != ANYWHERE and self.check_action(a.action, ()):
                yield SystemCommand(
                    a.description,
                    f"key {a.display} · {a.label}",
                    getattr(self, f"action_{a.action}"),
                )

    def _applicable(self, action: str, *, reviewed: bool = False) -> Item | None:
        """The selection, when `action` applies to it (on_key said why not) and, with `reviewed`, when the
        document panel shows its review: a row turns ready a moment before its text is read and shown, and
        a key pressed then is refused, saying so (never dropped without a word)."""
        item = self.selected()
        if item is None or not self.check_action(action, ()):
            return None
        if reviewed and (self.review_key != item.key or self.detail is None):
            self.notify(NOT_ON_SCREEN, severity="warning", markup=False)
            return None
        return item

    def action_approve_memory(self) -> None:
        """Approve what the document panel shows, and only that: the approval carries its fingerprint
        (`seen`), and one whose item changed since (redrafted, edited elsewhere) is refused with nothing
        saved."""
        if item := self._applicable("approve_memory", reviewed=True):
            self._run_review("approve", item, seen=self.detail)

    def action_reject_memory(self) -> None:
        from .dialogs import ReasonDialog

        if not (item := self._applicable("reject_memory")):
            return

        def done(reason: str | None) -> None:
            if reason is not None:
                self._run_review("reject", item, reason=reason)

        kind = self.kinds.get(kind_name(item))
        what = (kind.noun if kind is not None else "") or item.category
        self.push_screen(ReasonDialog(f"{what} “{item.title or item.tid}”"), done)

    def action_edit_memory(self) -> None:
        from .dialogs import EditorScreen

        if not (item := self._applicable("edit_memory", reviewed=True)):
            return
        detail = self.detail
        if detail is None or detail.editor not in (TEXT, FIELDS):
            return  # why_not said why
        if detail.editor == FIELDS:
            self._edit_fields(item, detail)
            return
        before = detail.text or ""

        def done(text: str | None) -> None:
            if text is not None:
                self._save_edit(item, detail, before, text)

        from .panels import card_evidence

        ev = detail.view.get("evidence")
        side = (
            card_evidence(ev, bool(detail.view.get("card")), editing=True)
            if isinstance(ev, dict)
            else None
        )
        heading = f"{'offline card ' if side else ''}{item.category}: {item.title}"
        self.push_screen(EditorScreen(heading, before, evidence=side), done)

    def _edit_fields(self, item: Item, detail: Detail) -> None:
        """The rule edit dialog (Detail.editor FIELDS: a rule's text, topic and paths): its save (in the
        dialog's worker) is the Engine's edit_item, which refuses an invalid edit with the reason; the
        dialog closes once it is saved."""
        from .dialogs import RuleEdit, RuleEditScreen

        chosen, view, group = review_item(item), detail.view, group_of(item)

        def save(edit: RuleEdit) -> None:
            fields = {"rule": edit.rule, "topic": edit.topic, "paths": list(edit.paths)}
            self.engine.edit_item(chosen, fields)

        def done(edit: RuleEdit | None) -> None:
            if edit is not None:
                self.post_message(ActionDone(f"rule edited: {one_line(edit.rule, 80)}", {group}))

        current = RuleEdit(
            str(view.get("rule") or ""),
            str(view.get("topic") or ""),
            tuple(str(p) for p in view.get("paths") or ()),
        )
        self.push_screen(RuleEditScreen(f"“{one_line(item.title, 60)}”", current, save), done)

    def action_edit_external(self) -> None:
        if not (item := self._applicable("edit_external", reviewed=True)):
            return
        from .external_editor import edit_externally

        detail = self.detail
        if detail is None or detail.text is None:
            return
        before = detail.text
        text = edit_externally(self, before, self.editor)
        if text is not None and text != before:
            self._save_edit(item, detail, before, text)

    def _save_edit(self, item: Item, detail: Detail, before: str, text: str) -> None:
        """Save an edit of a text: a new memory's file name follows a title the person changed (said)."""
        if detail.renames:
            from .dialogs import follow_title

            text, note = follow_title(before, text, item.action)
            if note:
                self.notify(note, markup=False)
        self._run_review("edit", item, text=text)

    def action_change_action(self) -> None:
        from .dialogs import ActionDialog

        if not (item := self._applicable("change_action")):
            return

        def done(action: str | None) -> None:
            if action and action != item.action:
                self._run_review("change", item, action=action)

        self.push_screen(ActionDialog(item.action), done)

    def action_retry_memory(self) -> None:
        if item := self._applicable("retry_memory"):
            self._run_review("retry", item)

    def action_approve_clean(self) -> None:
        from .dialogs import ConfirmDialog, approve_all_list

        clean = self.clean_items()
        if not clean:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._approve_all(clean)

        held = [
            i
            for rows in self.items.values()
            for i in rows
            if is_memory(i) and i.state == "ready" and (i.blocks or i.advisories)
        ]
        self.push_screen(
            ConfirmDialog(
                f"Approve {len(clean)} memor{'y' if len(clean) == 1 else 'ies'} "
                "with no issues at all?",
                body=approve_all_list(clean, held, self.unsure_items(), self.gate()),
            ),
            done,
        )

    def action_filter_queue(self) -> None:
        from .dialogs import FilterDialog

        def done(value: str | None) -> None:
            if value is None:
                return
            words = value.lower().split()
            labels = tuple(k.label for k in self.row_kinds if k.label not in FILTER_CATEGORIES)
            if unknown := unknown_words(words, labels):
                known = " ".join((*FILTER_CATEGORIES, *labels, *SEVERITIES))
                self.notify(
                    f"unknown filter word{'s' if len(unknown) > 1 else ''}: {' '.join(unknown)} "
                    f"(known: {known}); the filter is unchanged",
                    severity="error",
                    markup=False,
                )
                return
            self.filter_words = words
            self._show_queue()

        self.push_screen(FilterDialog(" ".join(self.filter_words)), done)

    def action_open_library(self) -> None:
        # Back from it, the queue is read again: an adopt or a tidy there stages proposals for review here.
        from .library import LibraryScreen

        self.push_screen(
            LibraryScreen(self.engine, now=self.now), lambda _: self._request_load(None)
        )

    def action_show_help(self) -> None:
        from .dialogs import HelpScreen

        self.push_screen(HelpScreen(help_rows(QUEUE_ACTIONS, QUEUE_HELP_EXTRA), HELP_NOTES))

    @work(thread=True, group="review")
    def _run_review(self, what: str, row: Item, **kw) -> None:
        """In the review worker: one action on the row's item through the Engine's generic verbs (change
        the action and retry: a triage's draft's own). What it did, or why it was refused (changed since
        it was shown, a BLOCK, a full disk), is said; nothing is fatal."""
        from memcurate.curator.review.items import Detail, Outcome  # loaded with the engine

        item, reload = review_item(row), {group_of(row)}
        name = row.category if is_memory(row) else row.tid  # how a toast names it
        try:
            if what == "approve":
                seen = kw.get("seen")
                shown = {item.id: seen.fingerprint} if isinstance(seen, Detail) else None
                [outcome] = self.engine.approve_items([item], shown)
            elif what == "reject":
                [outcome] = self.engine.reject_items([item], kw["reason"])
            elif what == "edit":
                outcome = self.engine.edit_item(item, kw["text"])
            elif what == "change":
                record = self.engine.change_action(*row.key, kw["action"])
                outcome = Outcome(item.id, True, said=f"now {record['decision']['action']}")
            elif what == "retry":
                state = self.engine.retry(*row.key).get(row.category)
                outcome = Outcome(item.id, True, said=f"retried {row.category}: {state}")
            else:
                raise ValueError(what)
        except LockBusy:
            outcome = Outcome(item.id, False, busy=True)
        # a refusal the kind raised, a full disk, a damaged file: said, not fatal
        except Exception as e:
            outcome = Outcome(item.id, False, error=str(e) or e.__class__.__name__)
        if outcome.done:
            self.post_message(ActionDone(outcome.said or f"{what} {name}: done", reload))
        elif outcome.busy:
            busy = f"{what} {name}: busy (another process is working on it); try again in a moment"
            self.post_message(ActionDone(busy, reload, "warning"))
        else:
            self.post_message(ActionDone(f"{what} {name}: {outcome.error}", reload, "error"))

    @work(thread=True, group="review")
    def _approve_all(self, rows: list[Item]) -> None:
        import sqlite3  # the index a save updates: loaded with the engine

        chosen = [review_item(r) for r in rows]
        try:
            outcomes = self.engine.approve_items(chosen)
        # auto memory off, busy or unreadable: left for review, counted below
        except (*SAID, sqlite3.Error):
            outcomes = []
        saved = sum(1 for o in outcomes if o.done)
        refused = len(chosen) - saved
        self.post_message(
            ActionDone(
                f"approved {saved}" + (f", {refused} left for review" if refused else ""),
                {group_of(r) for r in rows},
                "warning" if refused else "information",
            )
        )

    def _placeholder(self, item: Item | None) -> str:
        """What the document panel says for a row with nothing to show (not ready, or unreadable)."""
        if item is None:
            return "Nothing waiting for review. New work appears here as Claude Code sessions end."
        kind = self.kinds.get(kind_name(item))
        # unreadable, or damaged (a forged target): never acted on
        if item.is_error and not is_memory(item) and kind is not None:
            return f"This {kind.one} cannot be read or does not check out: {item.error}"
        if item.is_error:
            return f"This triage cannot be read: {item.error}"
        if item.state == "failed":
            return "Drafting failed: x retries, r rejects."
        return f"{item.category}: {item.state}…"

    def on_action_done(self, message: ActionDone) -> None:
        self.notify(message.text, severity=message.severity, markup=False)
        # read the selection's review and budgets again, even with nothing selected
        self._shown = STALE
        self._request_load(message.tids)


def _library_open(app: App, screen=None) -> bool:
    """Whether `screen` (default: the app's top one) is the library. Its module is imported only when the
    library is first opened (it is not on the start path), so before that no screen can be it."""
    library = sys.modules.get("memcurate.widgets.library")
    return library is not None and isinstance(screen or app.screen, library.LibraryScreen)


def _archiving(item: Item | None) -> tuple[str, str] | None:
    """The key of the selection whose archive moves the budgets panel shows: a ready memory's (a write of
    Claude's moves nothing to the archive)."""
    return item.key if is_memory(item) and item.state == "ready" else None


def make_app(
    project,
    *,
    engine_factory: Callable[[], Engine] | None = None,
    watch: bool = True,
    run_pipeline: bool = True,
    clock: Callable[[], float] | None = None,
    editor: str | None = None,
    subtitle: str | None = None,
    drafting: Callable[[], DraftingStatus] | None = None,
) -> MemcurateApp:
    """The app for one project. Tests pass an engine factory (a tmp project, a fake drafter),
    `watch=False`, `run_pipeline=False`, a fixed `clock`, `subtitle` and `drafting` (what the
    backend line says, else Engine.drafting_status) for deterministic screens."""
    factory = engine_factory or (lambda: _engine(project))
    return MemcurateApp(
        factory,
        watch=watch,
        run_pipeline=run_pipeline,
        clock=clock,
        editor=editor,
        subtitle=subtitle,
        drafting=drafting,
        project=os.fspath(project),
    )


def _engine(project) -> Engine:
    from memcurate.curator.engine import Engine  # in the engine worker, after the first frame

    return Engine(project)


def run(project) -> int:
    app = make_app(project)
    app.run()
    return app.return_code or 0
