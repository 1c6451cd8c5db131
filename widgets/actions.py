"""Every key of the review queue and of the library, in one table each (as harlequin's actions.py).

Each row is a key, its action (`verb_noun`: the `action_<name>` method of the app or screen that binds it;
`quit` is textual's own), the footer's label, what it does (the help screen, the footer's tooltip and the
command palette say it) and where it applies. BINDINGS, the help screen's rows and the keys a greyed key
explains are all built from these tables, so a key cannot be bound without a help row, or the reverse.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

from memcurate.curator.util.fieldtuple import FieldTuple

# Where a key applies (the app's and the library's check_action and why_not read it).
# From the first frame, whatever is on screen: help and quit.
ANYWHERE = "anywhere"
# Once the queue has loaded, whatever is selected (filter, library).
QUEUE = "queue"
# The selected row of the queue, as its kind and state allow (why_not says why not).
ROW = "row"
# The drafted memories with no issue at all, whatever is selected (A).
CLEAN = "clean"
# The library's selected memory, in the list (why_not says why not).
ENTRY = "entry"
# The library screen, whatever is selected.
SCREEN = "screen"
WHERE = frozenset((ANYWHERE, QUEUE, ROW, CLEAN, ENTRY, SCREEN))

# textual's key names as the footer and help show them
KEY_DISPLAY = {"slash": "/", "question_mark": "?", "escape": "esc"}


class Action(FieldTuple):
    """A key of a table below. A named tuple (util/fieldtuple.py), not a dataclass: a dataclass compiles its
    methods when its module is imported, a millisecond of the first frame's imports."""

    __slots__ = ()
    action: str
    keys: str
    label: str
    description: str
    where: str

    def __new__(cls, action: str, keys: str, label: str, description: str, where: str) -> Action:
        return super().__new__(cls, (action, keys, label, description, where))

    @property
    def display(self) -> str:
        return KEY_DISPLAY.get(self.keys, self.keys)

    @property
    def columns(self) -> tuple[str, str, str, str]:
        """(action, keys, footer label, what it does)."""
        return (self.action, self.keys, self.label, self.description)


QUEUE_ACTIONS = (
    Action("approve_memory", "a", "Approve", "Approve the selected memory", ROW),
    Action("edit_memory", "e", "Edit", "Edit the memory here (validated on save)", ROW),
    Action("edit_external", "E", "$EDITOR", "Edit the memory in $EDITOR", ROW),
    Action("reject_memory", "r", "Reject", "Reject the memory (with an optional reason)", ROW),
    Action(
        "approve_clean",
        "A",
        "Approve clean",
        "Approve every memory draft with no issues at all",
        CLEAN,
    ),
    Action("change_action", "c", "Action", "Change the action: create / update / noop", ROW),
    Action("retry_memory", "x", "Retry", "Retry a failed category", ROW),
    Action("filter_queue", "slash", "Filter", "Filter the queue by category or severity", QUEUE),
    Action("open_library", "l", "Library", "Browse, search and tend every saved memory", QUEUE),
    Action("show_help", "question_mark", "Help", "Show every key", ANYWHERE),
    Action("quit", "q", "Quit", "Quit", ANYWHERE),
)
# keys the help lists that other widgets bind (the queue table, textual's palette)
QUEUE_HELP_EXTRA = (("↑ ↓ j k", "Move in the queue"), ("ctrl+p", "Command palette"))

LIBRARY_ACTIONS = (
    Action("edit_memory", "e", "Edit", "Edit the memory here (re-verified on save)", ENTRY),
    Action("edit_external", "E", "$EDITOR", "Edit the memory in $EDITOR", ENTRY),
    Action("archive_memory", "a", "Archive", "Archive the memory (shows the change first)", ENTRY),
    Action(
        "delete_memory",
        "d",
        "Delete",
        "Delete the memory (a copy goes to the trash; shows the change first)",
        ENTRY,
    ),
    Action(
        "adopt_memory",
        "A",
        "Adopt",
        "Make Claude's own memory a memcurate memory (a proposal to review)",
        ENTRY,
    ),
    Action(
        "tidy_library",
        "t",
        "Tidy",
        "Propose merging near-duplicate and conflicting memories",
        SCREEN,
    ),
    Action("toggle_memory_md", "m", "MEMORY.md", "Show MEMORY.md as Claude Code loads it", SCREEN),
    Action("toggle_archived", "h", "Archived", "Show or hide archived memories", SCREEN),
    Action("focus_search", "slash", "Search", "Search every memory as you type", SCREEN),
    Action("show_help", "question_mark", "Help", "Show the library's keys", SCREEN),
    Action(
        "go_back",
        "escape",
        "Back",
        "Back: to the list from MEMORY.md or the search, else to the review queue",
        SCREEN,
    ),
)
# keys the help lists that other widgets bind (the library table, the app)
LIBRARY_HELP_EXTRA = (("↑ ↓ j k", "Move in the list"), ("q", "Quit"))


def bindings(actions: Iterable[Action]) -> list[BindingType]:
    return [
        Binding(a.keys, a.action, a.label, tooltip=a.description, key_display=a.display)
        for a in actions
    ]


def help_rows(
    actions: Iterable[Action], extra: Iterable[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """The help screen's rows: each key as shown, and what it does."""
    return [(a.display, a.description) for a in actions] + list(extra)


def names(actions: Iterable[Action], *where: str) -> frozenset[str]:
    """The actions that apply in any of `where` (every action without it)."""
    return frozenset(a.action for a in actions if not where or a.where in where)


def by_key(actions: Iterable[Action]) -> dict[str, str]:
    return {a.keys: a.action for a in actions}
