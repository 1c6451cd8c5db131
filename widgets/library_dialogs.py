"""The library's dialogs: editing a saved memory (saved from the dialog, kept open when the save is refused)
and confirming a change with the diff it makes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Label, Static, TextArea

from memcurate.curator.util.textsafe import clean as display

from .dialogs import ConfirmDialog, EditorScreen, document_problems
from .messages import SAID


class MemoryEditSaved(Message):
    """The editor's save finished: `error` says why it was refused ("" when saved)."""

    def __init__(self, text: str, error: str = "") -> None:
        super().__init__()
        self.text, self.error = text, error


class MemoryEditor(EditorScreen):
    """Edit a saved memory. Ctrl+S hands the text to `save` (in a worker: Engine.edit_memory with the hash of
    the text opened); a refusal (a BLOCK, the file changed since it was opened, a full disk) is shown here and
    the text stays in the editor to fix or copy. `check`: a memcurate memory's text is checked as a memory
    document before it is handed over (Claude's own files have no such form). Returns the text saved."""

    def __init__(
        self,
        title: str,
        text: str,
        save: Callable[[str], object],
        *,
        check: bool = True,
        error: str = "",
    ) -> None:
        super().__init__(title, text)
        self.save, self.check, self.error = save, check, error

    def on_mount(self) -> None:
        super().on_mount()
        if self.error:
            self._say(self.error)

    def _say(self, error: str) -> None:
        self.query_one("#editor-problems", Static).update(Text(display(error)))

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        found = document_problems(text) if self.check else []
        if found:
            self._say("\n".join(found))
            return
        self._save(text)

    @work(thread=True, exclusive=True, group="memory-edit")
    def _save(self, text: str) -> None:
        try:
            self.save(text)
        # ChangeError (changed since, BLOCK), a full disk: said, the text kept
        except (*SAID, sqlite3.Error) as e:
            self.post_message(MemoryEditSaved(text, str(e) or type(e).__name__))
        else:
            self.post_message(MemoryEditSaved(text))

    def on_memory_edit_saved(self, message: MemoryEditSaved) -> None:
        if message.error:
            self._say(message.error)
        else:
            self.dismiss(message.text)


class ChangeConfirm(ConfirmDialog):
    """Yes / no to a planned change, with each file's diff (Engine.plan_changes' files) shown as data."""

    DEFAULT_CSS = """
    ChangeConfirm > Vertical { width: 110; max-height: 90%; }
    ChangeConfirm #change-diff { height: auto; max-height: 30; border: round $panel; }
    """

    def __init__(self, question: str, files: list[dict]) -> None:
        super().__init__(question)
        self.files = files

    def compose(self) -> ComposeResult:
        parts: list = []
        for f in self.files:
            parts += [
                Text(display(str(f.get("where", ""))), style="bold"),
                Syntax(
                    display(str(f.get("diff") or "")).rstrip("\n"),
                    "diff",
                    theme="ansi_dark",
                    word_wrap=True,
                ),
                Text(""),
            ]
        with Vertical():
            yield Label(Text(self.question), classes="dialog-title")
            with VerticalScroll(id="change-diff"):
                yield Static(Group(*parts) if parts else Text("no file changes", style="dim"))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes", variant="primary", id="yes")
                yield Button("No", id="no")
