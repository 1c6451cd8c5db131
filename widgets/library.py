"""The library: every memory of the project, memcurate's and Claude's own, to read, search and tend.

A screen over the Engine's library (curator/library): workers read and write through the Engine and only
post messages (below); the handlers change what is shown. Worker groups: `library-load` (the catalog and
the last check's flags), `library-search` (each keypress cancels the one before), `library-entry` (the
selected memory's text), `library-memory-md` (MEMORY.md as Claude loads it), `library-action` (plans,
edits, archive, delete, adopt, tidy). Every change the person makes is planned first and shown as a diff,
and applied with the hash (or plan fingerprint) of what they saw: a file changed meanwhile is refused,
never overwritten.
"""

from __future__ import annotations

import sqlite3

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Header, Input, Static
from textual.worker import get_current_worker

from memcurate.curator.library.entries import CLAUDE, Opened, is_line_ref
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.textsafe import clean as display

from .actions import (
    ENTRY,
    LIBRARY_ACTIONS,
    LIBRARY_HELP_EXTRA,
    QUEUE_ACTIONS,
    bindings,
    by_key,
    help_rows,
    names,
)
from .external_editor import edit_externally
from .footer import NARROW, TidyFooter, fit_footer
from .library_dialogs import ChangeConfirm, MemoryEditor
from .library_table import FLAG_STYLE, LibraryTable, make_row
from .memory_md_view import render_load_view, summary
from .messages import SAID

# footer keys help still lists
NARROW_HIDDEN = frozenset(("edit_external", "toggle_archived", "tidy_library"))
# The review queue's keys mean something else here, or nothing: said when pressed, and in help.
HELP_NOTES = [
    "These are the library's keys. a archives and A adopts here: in the review queue a approves a "
    "draft and A approves every clean one. Archive and delete show the change and ask first.",
    "The queue's other keys (r reject, c action, x retry) do nothing here: Esc goes back to the queue.",
]
KEY_ACTIONS = by_key(LIBRARY_ACTIONS)
ON_SELECTION = names(LIBRARY_ACTIONS, ENTRY)
# the best matches (a first letter matches nearly everything): the table narrows to them
SEARCH_LIMIT = 500


# -- what the workers post ---------------------------------------------------------------------


class LibraryChanged(Message):
    """The memory root changed (the app's watcher): read the library again."""


class LibraryLoaded(Message):
    def __init__(self, entries: dict, rows: list, flags: dict, error: str = "") -> None:
        super().__init__()
        self.entries, self.rows, self.error = entries, rows, error  # ref -> Entry; table rows
        self.flags = flags  # ref -> the last check's findings


class SearchDone(Message):
    def __init__(self, query: str, refs: list[str] | None, error: str = "") -> None:
        super().__init__()
        self.query, self.refs, self.error = query, refs, error


class EntryRead(Message):
    def __init__(self, ref: str, view: Opened | None, error: str = "") -> None:
        super().__init__()
        self.ref, self.view, self.error = ref, view, error  # view: Engine.library_entry's Opened


class MemoryMdRead(Message):
    def __init__(self, view, error: str = "") -> None:
        super().__init__()
        self.view, self.error = view, error


class ChangePlanned(Message):
    """A change planned for the person to confirm: the ops, and Engine.plan_changes' answer."""

    def __init__(self, question: str, ops: list[dict], planned) -> None:
        super().__init__()
        self.question, self.ops, self.planned = question, ops, planned


class EditRefused(Message):
    """A save in a worker was refused (changed since, a BLOCK): the editor opens again on the person's text."""

    def __init__(self, entry, view: Opened, text: str, error: str) -> None:
        super().__init__()
        self.entry, self.view, self.text, self.error = entry, view, text, error


class LibraryDone(Message):
    """An action finished: what to say, and how."""

    def __init__(self, text: str, severity: str = "information", reload: bool = True) -> None:
        super().__init__()
        self.text, self.severity, self.reload = text, severity, reload


class LibraryScreen(Screen):
    CSS_PATH = "library.tcss"
    BINDINGS = bindings(LIBRARY_ACTIONS)

    def __init__(self, engine, *, now: float | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.now = now  # the app's fixed clock in tests; None: real time
        self.entries: dict = {}  # ref -> Entry
        self.flags: dict = {}  # ref -> the last check's findings (Engine.flags)
        self.view: Opened | None = None  # the selected memory as read
        self.view_ref: str | None = None
        self.query_text = ""
        self.found_count = 0  # how many refs the last search gave
        # the query the table shows the finds of ("" none: everything)
        self.narrowed: str | None = None
        self.loaded = False
        self._enabled: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="")
        yield Input(
            placeholder="search every memory — / to search, Enter or ↓ to the list, Esc back",
            id="library-search",
        )
        with ContentSwitcher(initial="library-list", id="library-body"):
            with Horizontal(id="library-list"):
                yield LibraryTable(id="library-table", now=self.now)
                with VerticalScroll(id="library-text"):
                    yield Static(id="library-doc")
            with VerticalScroll(id="library-memory-md"):
                yield Static(id="memory-md-body")
        yield TidyFooter()

    def on_resize(self, event) -> None:
        fit_footer(self.query_one(TidyFooter), event.size.width < NARROW, NARROW_HIDDEN)

    def on_mount(self) -> None:
        self.sub_title = "Library"
        self.table.border_title = "Library — loading…"
        self.table.focus()
        self._load()

    @property
    def table(self) -> LibraryTable:
        return self.query_one(LibraryTable)

    # -- loading and searching ----------------------------------------------------------------

    @work(thread=True, group="library-load", exclusive=True)
    def _load(self) -> None:
        try:
            entries = self.engine.library()
            flags = self.engine.flags()
            rows = [make_row(e, flags.get(e.ref, ())) for e in entries]
        # the index or the memory root unreadable: said, what is shown kept
        except (*SAID, sqlite3.Error) as e:
            self.post_message(LibraryLoaded({}, [], {}, str(e)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(LibraryLoaded({e.ref: e for e in entries}, rows, flags))

    def on_library_loaded(self, message: LibraryLoaded) -> None:
        if message.error:
            self.notify(f"cannot read the library: {message.error}", severity="error", markup=False)
            if self.loaded:
                return
        self.entries, self.flags, self.loaded = message.entries, message.flags, True
        self.table.show(message.rows)
        self._title()
        if self.query_text:
            self._search(self.query_text)  # what a search found may have changed too
        self.view_ref = None  # the selected file may have changed: read again
        self._selection_changed()

    def on_library_changed(self, message: LibraryChanged) -> None:
        self._load()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value.strip()
        if not self.query_text:
            self.workers.cancel_group(self, "library-search")
            self.table.narrow(None)
            self.narrowed = ""
            self._title()
        else:
            self._search(self.query_text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()

    @work(thread=True, group="library-search", exclusive=True)
    def _search(self, query: str) -> None:
        try:
            refs = self.engine.library_search(query, limit=SEARCH_LIMIT)
        # a query the index cannot take: said, the table as it was
        except (*SAID, sqlite3.Error) as e:
            self.post_message(SearchDone(query, None, str(e)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(SearchDone(query, refs))

    def on_search_done(self, message: SearchDone) -> None:
        if message.query != self.query_text:
            return  # a keypress since: its own search follows
        if message.error:
            self.notify(f"search: {message.error}", severity="warning", markup=False)
            return
        self.found_count = len(message.refs)
        self.table.narrow(set(message.refs))
        self.narrowed = message.query
        self._title()

    def _title(self) -> None:
        table = self.table
        total, shown = len(table.rows), len(table.entries)
        title = f"Library {total}"
        if self.query_text:
            best = " (the best)" if self.found_count >= SEARCH_LIMIT else ""
            title += f" — {shown} found{best} for “{display(self.query_text)}”"
        elif shown != total:
            title += f" — {total - shown} archived hidden"
        table.border_title = title

    # -- the selection ----------------------------------------------------------------------------

    def on_library_table_highlighted(self, message: LibraryTable.Highlighted) -> None:
        self._selection_changed()

    def selected(self):
        row = self.table.selected()
        return self.entries.get(row.ref) if row else None

    def _selection_changed(self) -> None:
        entry = self.selected()
        ref = entry.ref if entry else None
        if ref != self.view_ref:
            self.view_ref, self.view = ref, None
            if ref is None:
                self._show_doc(Text("No memory selected.", style="dim"))
            else:
                self._read(ref)
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        enabled = tuple(bool(self.check_action(a.action, ())) for a in LIBRARY_ACTIONS)
        if enabled != self._enabled:
            self._enabled = enabled
            self.refresh_bindings()

    @work(thread=True, group="library-entry", exclusive=True)
    def _read(self, ref: str) -> None:
        try:
            view = self.engine.library_entry(ref)
        except SAID as e:  # gone since the list was read, unreadable: said in the panel
            self.post_message(EntryRead(ref, None, str(e)))
            return
        self.post_message(EntryRead(ref, view))

    def on_entry_read(self, message: EntryRead) -> None:
        if message.ref != self.view_ref:
            return  # the cursor has moved on
        self.view = message.view
        if message.view is None:
            self._show_doc(
                Text(f"Cannot read {display(message.ref)}: {display(message.error)}", style="red")
            )
        else:
            self._show_doc(self._document(message.view))
        self._refresh_keys()

    def _document(self, view: Opened):
        entry, text = view.entry, view.text
        owner = "Claude's own" if entry.owner == CLAUDE else "memcurate's"
        head = Text.assemble((display(entry.ref), "bold"), (f"  {owner}, {entry.status}", "dim"))
        facts = Text(style="dim")
        facts.append(f"{display(entry.where)} · updated {display(entry.updated)}")
        if entry.sources:
            facts.append(f" · sessions: {display(', '.join(entry.sources))}")
        if entry.tags:
            facts.append(f" · tags: {display(', '.join(entry.tags))}")
        parts = [head, facts]
        if entry.broken:
            parts.append(Text(f"Cannot be read as a memory: {display(entry.broken)}", style="red"))
        for f in self.flags.get(entry.ref, ()):
            parts.append(
                Text.assemble(
                    (f" {f.severity} ", FLAG_STYLE.get(f.severity, "")), f" {display(f.message)}"
                )
            )
        shown = redact_text(text)  # a key on screen is a key leaked (a shared screen, a recording)
        if shown != text:
            parts.append(
                Text(
                    "A secret in it is hidden here: e opens the text as saved, to take it out.",
                    style="bold red",
                )
            )
        lexer = "markdown" if entry.where.endswith(".md") and not is_line_ref(entry.ref) else "text"
        parts += [Text(""), Syntax(display(shown), lexer, theme="ansi_dark", word_wrap=True)]
        return Group(*parts)

    def _show_doc(self, renderable) -> None:
        self.query_one("#library-doc", Static).update(renderable)

    # -- keys --------------------------------------------------------------------------------------

    def why_not(self, action: str) -> str | None:
        """Why `action` does not apply now (said when its key is pressed); None when it does."""
        if action not in ON_SELECTION:
            return None
        if self.query_one(ContentSwitcher).current != "library-list":
            return "m goes back to the memories first"
        entry = self.selected()
        if entry is None:
            return "no memory is selected"
        line = is_line_ref(entry.ref)
        if action in ("edit_memory", "edit_external"):
            if line:
                return "a line of Claude's in MEMORY.md is not edited here: A adopts it, d drops it"
            if self.view is None or self.view_ref != entry.ref:
                return "the memory is still being read"
        if action == "archive_memory":
            if line:
                return "a line of Claude's is not archived: d drops it from MEMORY.md, A adopts it"
            if entry.status == "archived":
                return "already archived"
        if action == "adopt_memory" and entry.owner != CLAUDE:
            return "already memcurate's: adopting is for Claude's own memories"
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if self.why_not(action) else True

    def on_key(self, event) -> None:
        """A greyed key says why (a greyed key's action never runs)."""
        if self.app.screen is not self or isinstance(self.focused, Input):
            return
        action = KEY_ACTIONS.get(event.key)
        why = self.why_not(action) if action else None
        if action is None:
            why = self._queue_key(event.key)
        if why:
            self.notify(why, severity="warning", markup=False)

    def _queue_key(self, key: str) -> str | None:
        """What a key of the review queue's the library does not have would do there (not here), or None."""
        for a in QUEUE_ACTIONS:
            if a.keys == key and a.action != "quit":
                return (
                    f"{a.display} is the review queue's {a.label} key: it does nothing in the "
                    "library; Esc goes back to the queue, ? lists the library's keys"
                )
        return None

    def action_show_help(self) -> None:
        from .dialogs import HelpScreen

        rows = help_rows(LIBRARY_ACTIONS, LIBRARY_HELP_EXTRA)
        self.app.push_screen(HelpScreen(rows, HELP_NOTES, title="Library keys"))

    def action_go_back(self) -> None:
        """Esc goes back one step: from the search to the list, from the MEMORY.md view to the list, from the
        list to the review queue."""
        if isinstance(self.focused, Input):
            self.table.focus()
        elif self.query_one(ContentSwitcher).current != "library-list":
            self.action_toggle_memory_md()
        else:
            self.dismiss()

    def action_focus_search(self) -> None:
        self.query_one("#library-search", Input).focus()

    def action_toggle_archived(self) -> None:
        table = self.table
        table.set_show_archived(not table.show_archived)
        self._title()
        self.notify(
            "archived memories shown (dimmed)"
            if table.show_archived
            else "archived memories hidden",
            markup=False,
        )

    def action_toggle_memory_md(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "library-list":
            switcher.current = "library-memory-md"
            self.query_one("#memory-md-body", Static).update(
                Text("reading MEMORY.md…", style="dim")
            )
            self._read_memory_md()
        else:
            switcher.current = "library-list"
            self.table.focus()
        self._refresh_keys()

    @work(thread=True, group="library-memory-md", exclusive=True)
    def _read_memory_md(self) -> None:
        try:
            self.post_message(MemoryMdRead(self.engine.memory_md_view()))
        except SAID as e:  # a MEMORY.md that cannot be read: said in the panel
            self.post_message(MemoryMdRead(None, str(e)))

    def on_memory_md_read(self, message: MemoryMdRead) -> None:
        body = self.query_one("#memory-md-body", Static)
        if message.view is None:
            body.update(Text(f"Cannot read MEMORY.md: {display(message.error)}", style="red"))
        else:
            body.update(render_load_view(message.view))
            # kept in sight
            self.query_one("#library-memory-md").border_title = summary(message.view).plain

    # -- editing -------------------------------------------------------------------------------------

    def _editing(self, action: str):
        if self.why_not(action):
            return None
        return self.selected(), self.view

    def _saver(self, entry, base_hash: str):
        def save(text: str) -> None:  # in the editor's worker
            self.engine.edit_memory(entry.ref, text, base_hash)

        return save

    def _open_editor(self, entry, view: Opened, text: str, error: str = "") -> None:
        def done(saved: str | None) -> None:
            if saved is not None:
                self.post_message(LibraryDone(f"saved {entry.ref}"))

        self.app.push_screen(
            MemoryEditor(
                f"{entry.category}: {entry.title}",
                text,
                self._saver(entry, view.hash),
                check=entry.owner != CLAUDE,
                error=error,
            ),
            done,
        )

    def action_edit_memory(self) -> None:
        if picked := self._editing("edit_memory"):
            entry, view = picked
            self._open_editor(entry, view, view.text)

    def action_edit_external(self) -> None:
        if not (picked := self._editing("edit_external")):
            return
        entry, view = picked
        text = edit_externally(self.app, view.text, getattr(self.app, "editor", None))
        if text is not None and text != view.text:
            self._save_external(entry, view, text)

    @work(thread=True, group="library-action")
    def _save_external(self, entry, view: Opened, text: str) -> None:
        try:
            self._saver(entry, view.hash)(text)
        # refused (changed since, BLOCK), a full disk: the text is kept, in the editor, to retry
        except (*SAID, sqlite3.Error) as e:
            self.post_message(EditRefused(entry, view, text, str(e) or type(e).__name__))
            return
        self.post_message(LibraryDone(f"saved {entry.ref}"))

    def on_edit_refused(self, message: EditRefused) -> None:
        self._open_editor(message.entry, message.view, message.text, message.error)

    # -- archive, delete, adopt, tidy -------------------------------------------------------------------

    def action_archive_memory(self) -> None:
        if not self.why_not("archive_memory"):
            entry = self.selected()
            self._plan(
                f"Archive {entry.ref}?",
                [{"op": "archive", "ref": entry.ref, "base_hash": entry.hash}],
            )

    def action_delete_memory(self) -> None:
        if self.why_not("delete_memory"):
            return
        entry = self.selected()
        if is_line_ref(entry.ref):
            ops = [{"op": "drop_line", "ref": entry.ref, "base_hash": entry.hash}]
            question = f"Drop Claude's line {entry.line} from MEMORY.md?"
        else:
            ops = [{"op": "delete", "ref": entry.ref, "base_hash": entry.hash}]
            question = f"Delete {entry.ref}? A copy goes to the trash."
        self._plan(question, ops)

    @work(thread=True, group="library-action")
    def _plan(self, question: str, ops: list[dict]) -> None:
        try:
            planned = self.engine.plan_changes(ops)
        except SAID as e:  # a ref gone since the list was read
            self.post_message(LibraryDone(f"cannot plan it: {e}", "error"))
            return
        self.post_message(ChangePlanned(question, ops, planned))

    def on_change_planned(self, message: ChangePlanned) -> None:
        planned = message.planned
        if planned.errors:
            self.notify("; ".join(planned.errors), severity="error", markup=False)
            self._load()
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._apply(message.ops, planned.fingerprint)

        self.app.push_screen(
            ChangeConfirm(message.question, [dict(f) for f in planned.files]), done
        )

    @work(thread=True, group="library-action")
    def _apply(self, ops: list[dict], fingerprint: str) -> None:
        try:
            applied = self.engine.apply_changes(ops, fingerprint=fingerprint)
        # changed since it was planned, a full disk: said, nothing written
        except (*SAID, sqlite3.Error) as e:
            self.post_message(LibraryDone(f"not changed: {e}", "error"))
            return
        written = ", ".join(applied.written) or "nothing"
        self.post_message(LibraryDone(f"done: {written}"))

    def action_adopt_memory(self) -> None:
        if not self.why_not("adopt_memory"):
            self._adopt(self.selected().ref)

    @work(thread=True, group="library-action")
    def _adopt(self, ref: str) -> None:
        try:
            pid = self.engine.adopt(ref)
        except SAID as e:  # gone or changed since it was read, already memcurate's, a full disk
            self.post_message(LibraryDone(f"cannot adopt {ref}: {e}", "error", reload=False))
            return
        text = (
            f"proposed: proposal/{pid} — review it in the queue (Esc)"
            if pid
            else f"{ref} already has a proposal to adopt it: see the queue"
        )
        self.post_message(LibraryDone(text, reload=False))

    def action_tidy_library(self) -> None:
        self.notify("looking for near-duplicate and conflicting memories…", markup=False)
        self._tidy()

    @work(thread=True, group="library-action")
    def _tidy(self) -> None:
        try:
            pids = self.engine.tidy()
        # the index or a memory unreadable, a full disk: said, nothing staged
        except (*SAID, sqlite3.Error) as e:
            self.post_message(LibraryDone(f"tidy failed: {e}", "error", reload=False))
            return
        n = len(pids)
        text = (
            f"tidy: {n} proposal{'' if n == 1 else 's'} to review in the queue (Esc)"
            if n
            else "tidy: nothing to merge"
        )
        self.post_message(LibraryDone(text, reload=False))

    def on_library_done(self, message: LibraryDone) -> None:
        self.notify(message.text, severity=message.severity, markup=False)
        if message.reload:
            self._load()
