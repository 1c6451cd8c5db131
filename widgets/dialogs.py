"""Dialogs: typed modal screens that return a value (None when cancelled)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from memcurate.curator.candidates.queue import Item
from memcurate.curator.memory import memfile
from memcurate.curator.util.textsafe import one_line

from .messages import SAID, RuleEditSaved
from .queue import FILTER_CATEGORIES, SEVERITIES, sort_key

DIALOG_CSS = """
{name} {{ align: center middle; background: $background 60%; }}
{name} > Vertical {{
    width: 70; height: auto; max-height: 90%; padding: 1 2;
    border: thick $primary; background: $surface;
}}
{name} .dialog-title {{ width: 100%; text-style: bold; margin-bottom: 1; }}  /* wraps at a word, never cut */
{name} .dialog-buttons {{ height: auto; align-horizontal: right; margin-top: 1; }}
{name} Button {{ margin-left: 1; }}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; `body`: what saying yes acts on, listed under it (scrolls when long)."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="ConfirmDialog")
        + """
    ConfirmDialog > Vertical.listing { width: 110; max-width: 95%; }
    ConfirmDialog #confirm-body { height: auto; max-height: 24; }
    """
    )
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("y", "confirm", "Yes"),
        Binding("n", "cancel", "No"),
    ]

    def __init__(self, question: str, body: RenderableType | None = None) -> None:
        super().__init__()
        self.question, self.body = question, body

    def compose(self) -> ComposeResult:
        with Vertical(classes="listing" if self.body is not None else ""):
            yield Label(Text(self.question), classes="dialog-title")
            if self.body is not None:
                with VerticalScroll(id="confirm-body"):
                    yield Static(self.body)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes", variant="primary", id="yes")
                yield Button("No", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


def approve_all_list(
    clean: list[Item], held: list[Item], unsure: list[Item] = (), least: float = 0.0
) -> Table:
    """What approve-all saves, one memory a line: its category, title, confidence and issues (none: that is
    what A takes); then how many drafts it leaves to be reviewed one by one: with issues (`held`), and with
    none but a confidence below `least`, the gate --auto-approve holds them at (`unsure`)."""
    table = Table(box=None, pad_edge=False, expand=True, show_edge=False)
    table.add_column("category", style="bold", no_wrap=True)
    table.add_column("title", ratio=1, overflow="fold")
    table.add_column("conf", justify="right", no_wrap=True)
    table.add_column("issues", no_wrap=True)
    for item in sorted(clean, key=sort_key):
        conf = f"{item.confidence:.2f}" if item.confidence is not None else "—"
        table.add_row(
            item.category,
            Text(one_line(item.title, 200) or "(untitled)"),
            conf,
            Text("none", style="green"),
        )
    if held:
        blocked = sum(1 for i in held if i.blocks)
        table.add_row(
            "",
            Text(
                f"left for review one by one: {len(held)} with issues ({blocked} BLOCK, "
                f"{len(held) - blocked} ADVISORY only)",
                style="dim",
            ),
            "",
            "",
        )
    if unsure:
        table.add_row(
            "",
            Text(
                f"left for review one by one: {len(unsure)} with no issue but a confidence below "
                f"{least:.2f}, where --auto-approve holds them too (auto_approve.min_confidence)",
                style="dim",
            ),
            "",
            "",
        )
    return table


class TextDialog(ModalScreen[str | None]):
    """A dialog that returns text (what its input holds when Enter is pressed), None when cancelled."""

    # a type selector: it styles the subclasses too
    DEFAULT_CSS = DIALOG_CSS.format(name="TextDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReasonDialog(TextDialog):
    """Reject: an optional reason. Returns the reason ("" for none), None when cancelled."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Reject {self.what}?"), classes="dialog-title")
            yield Input(
                placeholder="reason (optional) — Enter to reject, Esc to cancel", id="reason"
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reject", variant="error", id="reject")
                yield Button("Cancel", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(
            self.query_one("#reason", Input).value.strip() if event.button.id == "reject" else None
        )


class ActionDialog(TextDialog):
    """Change the proposed action: returns create / update / noop (or delete where offered)."""

    HELP = {
        "create": "a new memory file",
        "update": "merge into the closest existing memory",
        "noop": "save nothing: the memory is already known",
        "delete": "retire the existing memory",
    }

    def __init__(
        self, current: str, choices: tuple[str, ...] = ("create", "update", "noop")
    ) -> None:
        super().__init__()
        self.current, self.choices = current, choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Change the action (now: {self.current})"), classes="dialog-title")
            yield OptionList(
                *[
                    Option(Text.assemble((c, "bold"), f"  {self.HELP[c]}"), id=c)
                    for c in self.choices
                ],
                id="actions",
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.choices:
            options.highlighted = self.choices.index(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class FilterDialog(TextDialog):
    """Filter the queue: category names and severities (block, advisory, clean, failed), space-separated."""

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Filter by category or severity", classes="dialog-title")
            yield Input(
                self.current,
                placeholder="e.g. decision block — empty shows everything",
                id="filter",
            )
            yield Static(
                Text(
                    f"categories: {' '.join(FILTER_CATEGORIES)}\nseverities: {' '.join(SEVERITIES)}\n"
                    "a word may be a category's start (tech, session); several are alternatives",
                    style="dim",
                ),
                id="filter-hint",
            )


_ID_LINE = re.compile(r"^id:[^\n]*$", re.MULTILINE)


def follow_title(before: str, after: str, action: str) -> tuple[str, str]:
    """The edited text of a draft, with the file name (its id) following a title the person changed: for a new
    memory (`action` create) whose id they left alone, the id becomes the new title's slug. An update keeps
    the existing file's name; the note (what to tell the person, "" for nothing) says so."""
    try:
        old, new = memfile.parse(before), memfile.parse(after)
    except memfile.MemoryFormatError:
        return after, ""  # verification says what is wrong with it
    if new.title == old.title or new.id != old.id or action not in ("create", "update"):
        return after, ""
    if action == "update":
        return after, (
            f"the title changed, the file keeps its name {old.id}.md: this updates an existing memory "
            "(c changes the action to create a new one)"
        )
    slug = memfile.slugify(new.title)
    end = after.find("\n---", 3)  # the front matter's closing line: the id is replaced there only
    if slug == old.id or end < 0:
        return after, ""
    head, n = _ID_LINE.subn(f"id: {slug}", after[:end], count=1)
    return (
        (head + after[end:], f"the file name follows the new title: {slug}.md")
        if n
        else (after, "")
    )


class EditorScreen(ModalScreen[str | None]):
    """Edit the memory text in place. Saving checks the document first and stays open while it has problems."""

    DEFAULT_CSS = """
    EditorScreen { align: center middle; background: $background 60%; }
    EditorScreen > Vertical { width: 95%; height: 95%; border: thick $primary; background: $surface; }
    EditorScreen TextArea { height: 1fr; }
    EditorScreen #editor-problems { height: auto; max-height: 8; color: $error; }
    EditorScreen .dialog-title { width: 100%; text-style: bold; }
    /* writing an offline card: the editor and, beside it, the evidence the card was made from */
    EditorScreen #editor-body { height: 1fr; }
    EditorScreen #editor-body TextArea { width: 3fr; }
    EditorScreen #editor-evidence { width: 2fr; border-left: solid $panel; padding: 0 1; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, title: str, text: str, evidence: list[RenderableType] | None = None) -> None:
        """`evidence`: what the text was made from (an offline card's), shown beside the editor while editing."""
        super().__init__()
        self.heading, self.text, self.evidence = title, text, evidence

    def compose(self) -> ComposeResult:
        with Vertical():
            hint = (
                " — write it in your own words, the evidence is on the right"
                if self.evidence
                else ""
            )
            yield Label(
                Text(f"Editing {self.heading}{hint} — Ctrl+S saves, Esc cancels"),
                classes="dialog-title",
            )
            if self.evidence:
                with Horizontal(id="editor-body"):
                    yield TextArea(self.text, id="editor", soft_wrap=True)
                    with VerticalScroll(id="editor-evidence"):
                        yield Static(Group(*self.evidence))
            else:
                yield TextArea(self.text, id="editor", soft_wrap=True)
            yield Static("", id="editor-problems")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        found = document_problems(text)
        if found:
            self.query_one("#editor-problems", Static).update(Text("\n".join(found)))
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        """Leave the editor; with unsaved changes, only once the person says to discard them."""
        if self.query_one(TextArea).text == self.text:
            self.dismiss(None)
            return

        def done(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(
            ConfirmDialog("Discard your changes? (n or Esc goes back to the editor)"), done
        )


def document_problems(text: str) -> list[str]:
    """Why `text` is not a memory document (front matter, required sections); [] when it is."""
    try:
        doc = memfile.parse(text)
    except memfile.MemoryFormatError as e:
        return [str(e)]
    return [f"{where}: {what}" for where, what in memfile.problems(doc)]


@dataclass(frozen=True)
class RuleEdit:
    """A rule candidate as the person edited it: the rule text, its topic (the file's name) and its
    `paths:` globs (none: a project-wide rule)."""

    rule: str
    topic: str
    paths: tuple[str, ...] = ()


class RuleEditScreen(ModalScreen[RuleEdit | None]):
    """Edit a rule candidate: its text, topic and paths (one glob per line). Ctrl+S hands the edit to
    `save` (in a worker: it writes the candidate), which raises ValueError with the reason when the edit
    is invalid: the reason is shown, nothing is saved, and the dialog stays open. Returns the edit saved,
    None when cancelled."""

    DEFAULT_CSS = """
    RuleEditScreen { align: center middle; background: $background 60%; }
    RuleEditScreen > Vertical { width: 90; height: auto; max-height: 95%; padding: 1 2;
                                border: thick $primary; background: $surface; }
    RuleEditScreen .dialog-title { width: 100%; text-style: bold; margin-bottom: 1; }
    RuleEditScreen Label { margin-top: 1; }
    RuleEditScreen #rule-text { height: 6; }
    RuleEditScreen #rule-paths { height: 6; }
    RuleEditScreen #rule-problems { height: auto; color: $error; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, heading: str, current: RuleEdit, save: Callable[[RuleEdit], object]) -> None:
        super().__init__()
        self.heading, self.current, self.save = heading, current, save

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                Text(f"Editing the rule {self.heading} — Ctrl+S saves, Esc cancels"),
                classes="dialog-title",
            )
            yield Label("Rule (a short imperative: what to do or avoid)")
            yield TextArea(self.current.rule, id="rule-text", soft_wrap=True)
            yield Label("Topic (the file .claude/rules/memcurate/<topic>.md)")
            yield Input(self.current.topic, id="rule-topic")
            yield Label("Paths it applies to, one glob per line (none: the whole project)")
            yield TextArea("\n".join(self.current.paths), id="rule-paths", soft_wrap=False)
            yield Static("", id="rule-problems")

    def on_mount(self) -> None:
        self.query_one("#rule-text", TextArea).focus()

    def edited(self) -> RuleEdit:
        paths = self.query_one("#rule-paths", TextArea).text.splitlines()
        return RuleEdit(
            self.query_one("#rule-text", TextArea).text.strip(),
            self.query_one("#rule-topic", Input).value.strip(),
            tuple(p.strip() for p in paths if p.strip()),
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_save()

    def action_save(self) -> None:
        self._save(self.edited())

    @work(thread=True, exclusive=True, group="rule-edit")
    def _save(self, edit: RuleEdit) -> None:
        try:
            self.save(edit)
        except ValueError as e:  # invalid: the reason, and nothing saved
            self.post_message(RuleEditSaved(edit, str(e)))
        # a full disk, a damaged candidate: said here, the edit kept in the dialog
        except SAID as e:
            self.post_message(RuleEditSaved(edit, f"could not save: {e}"))
        else:
            self.post_message(RuleEditSaved(edit))

    def on_rule_edit_saved(self, message: RuleEditSaved) -> None:
        if message.error:
            self.query_one("#rule-problems", Static).update(Text(message.error))
        else:
            self.dismiss(message.edit)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = (
        DIALOG_CSS.format(name="HelpScreen")
        + """
    HelpScreen > Vertical { height: 90%; }  /* help is long: the dialog takes the height, the body what is left */
    HelpScreen #help-body { height: 1fr; }  /* so the hint under it stays in sight, whatever the height */
    HelpScreen #help-hint { margin-top: 1; }
    """
    )
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(
        self, bindings: list[tuple[str, str]], notes: list[str] = (), title: str = "Keys"
    ) -> None:
        super().__init__()
        self.rows, self.notes, self.heading = bindings, list(notes), title

    def compose(self) -> ComposeResult:
        # a description that wraps keeps its indent, beside its key
        keys = Table.grid(padding=(0, 2))
        keys.add_column(justify="right", style="bold", width=12, no_wrap=True)
        keys.add_column(ratio=1)
        for key, what in self.rows:
            keys.add_row(key, what)
        notes = Text()
        for note in self.notes:
            notes.append(f"\n{note}\n")
        notes.append("\nCtrl+P opens the command palette with the same actions.", style="dim")
        with Vertical():
            yield Label(self.heading, classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(Group(keys, notes))
            yield Label(Text("↑ ↓ PgUp PgDn scroll — Esc closes", style="dim"), id="help-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()  # the arrow keys scroll what a small terminal cuts

    def action_close(self) -> None:
        self.dismiss(None)
