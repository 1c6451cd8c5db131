"""The library's table: every memory, grouped by category, drawn line by line.

A DataTable of 10,000 rows costs tens of milliseconds to refill, and search refills it on every keypress;
this table keeps its rows as plain values and renders only the lines on screen (textual's line API), so
narrowing to what a search found is a list comprehension and a repaint. A group is a heading line the
cursor skips; the column heading stays on the first line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memcurate.curator.candidates.queue import age
from memcurate.curator.categories import CATEGORIES
from memcurate.curator.library.entries import CLAUDE, is_line_ref
from memcurate.curator.util.textsafe import one_line

GROUP_ORDER = (*CATEGORIES, CLAUDE)
# What a check finding (curator/hygiene Finding.code) is called in the flags column, kept short.
FLAG_LABEL = {
    "stale-file": "stale",
    "stale-command": "stale",
    "stale-symbol": "stale",
    "churn": "churn",
    "contradiction": "contra",
    "duplicate": "dup",
    "secret": "secret",
    "over-limit": "cut",
    "missing-link": "link",
    "unlinked": "unlinked",
}
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
FLAG_STYLE = {"high": "bold white on red", "medium": "black on yellow", "low": "cyan"}
# (name, width); the title takes what the others leave
COLUMNS = (("", 1), ("category", 15), ("title", 0), ("age", 4), ("sources", 13), ("flags", 16))


@dataclass(frozen=True)
class Row:
    """One memory as the table shows it: plain values, turned into text only when on screen."""

    ref: str
    group: str
    label: (
        str  # the category column: the group, or "claude line" for a line of Claude's in MEMORY.md
    )
    title: str
    updated: str  # ISO UTC: the age column, worked out when the row is drawn
    sources: str
    flags: tuple[tuple[str, str], ...]  # (label, severity), worst first
    archived: bool
    claude: bool
    broken: bool
    # its MEMORY.md line (a line of Claude's: where it is; a file: the first line linking it)
    line: int = 0


def make_row(entry, findings=()) -> Row:
    """A library Entry (curator/library/entries.py) and its check findings as a row."""
    sources = tuple(entry.sources)
    worst: dict[str, str] = {}
    for f in findings:
        label = FLAG_LABEL.get(f.code, f.code)
        if label not in worst or SEVERITY_RANK.get(f.severity, 3) < SEVERITY_RANK.get(
            worst[label], 3
        ):
            worst[label] = f.severity
    flags = tuple(sorted(worst.items(), key=lambda kv: (SEVERITY_RANK.get(kv[1], 3), kv[0])))
    group = entry.category if entry.category in GROUP_ORDER else CLAUDE
    return Row(
        ref=entry.ref,
        group=group,
        label=f"{CLAUDE} line" if is_line_ref(entry.ref) else group,
        title=one_line(entry.title or entry.where or entry.ref, 400),
        updated=entry.updated,
        sources=(f"{len(sources)} · {sources[0][:8]}" if sources else "—"),
        flags=flags,
        archived=entry.status == "archived",
        claude=entry.owner == CLAUDE,
        broken=bool(entry.broken),
        line=entry.line,
    )


def fit(text: str, width: int) -> str:
    """`text` in `width` cells; a longer one loses its middle, so two titles that share a long start still
    differ on screen."""
    if len(text) <= width:
        return text
    if width < 8:
        return text[: max(0, width - 1)] + "…"
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def widths(total: int) -> list[int]:
    """Each column's width in `total` cells (one space between columns)."""
    fixed = sum(w for _, w in COLUMNS) + len(COLUMNS) - 1
    return [w or max(12, total - fixed) for _, w in COLUMNS]


@lru_cache(maxsize=64)
def _style(name: str) -> Style:
    return Style.parse(name) if name else Style()


def _cell(text: str, width: int) -> str:
    """`text` in exactly `width` cells: padded, or cut with an ellipsis."""
    if cell_len(text) > width:
        return set_cell_size(text, max(0, width - 1)) + "…" if width else ""
    return set_cell_size(text, width)


def row_cells(row: Row, total: int, now: float | None = None) -> list[tuple[str, str]]:
    """(text, style) pieces of a row, exactly `total` cells wide together: plain strings, no markup."""
    cols = widths(total)
    claude = "magenta" if row.claude else ""
    pieces = [
        (_cell("C" if row.claude else "", cols[0]), "bold magenta"),
        (" ", ""),
        (_cell(row.label, cols[1]), claude),
        (" ", ""),
        (_cell(fit(row.title, cols[2]), cols[2]), "red" if row.broken else ""),
        (" ", ""),
        (_cell(age(row.updated, now), cols[3]), ""),
        (" ", ""),
        (_cell(row.sources, cols[4]), "dim"),
        (" ", ""),
    ]
    room = cols[5]
    for label, severity in row.flags:  # the worst first: what does not fit is the least urgent
        if room <= 0:
            break
        if room != cols[5]:
            pieces.append((" ", ""))
            room -= 1
        piece = _cell(label, min(room, cell_len(label)))
        pieces.append((piece, FLAG_STYLE.get(severity, "")))
        room -= cell_len(piece)
    if room > 0:
        pieces.append((" " * room, ""))
    return pieces


def row_text(row: Row, total: int, now: float | None = None) -> Text:
    """The row as rich Text (what the table draws, for tests and exports)."""
    text = Text(no_wrap=True)
    for piece, style in row_cells(row, total, now):
        text.append(piece, style=style)
    return text


class LibraryTable(ScrollView, can_focus=True):
    """Rows grouped by category (memcurate's six in order, then Claude's own); `show(rows)` replaces them,
    `narrow(refs)` keeps those found by a search, `show_archived` shows or hides the archived ones. The
    cursor stays on its memory through both while the memory is still shown."""

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "first", show=False),
        Binding("end", "last", show=False),
    ]
    COMPONENT_CLASSES = {"library-table--header", "library-table--group", "library-table--cursor"}
    DEFAULT_CSS = """
    LibraryTable { height: 1fr; }
    LibraryTable > .library-table--header { text-style: bold; }
    LibraryTable > .library-table--group { color: $accent; text-style: bold; }
    LibraryTable > .library-table--cursor { background: $block-cursor-background; }
    """

    class Highlighted(Message):
        """The cursor is on `ref` (None: nothing is shown)."""

        def __init__(self, table: LibraryTable, ref: str | None) -> None:
            super().__init__()
            self.table, self.ref = table, ref

    def __init__(self, *, now: float | None = None, **kw) -> None:
        super().__init__(**kw)
        self.now = now  # a fixed clock (tests); None: the time each row is drawn
        self.rows: list[Row] = []
        self.groups: list[tuple[str, list[Row]]] = []  # the rows of each group, in order
        self.found: set[str] | None = None  # the refs a search found; None: no search
        self.show_archived = True
        self.lines: list[
            Row | tuple[str, int]
        ] = []  # rows and group headings (group, count), as drawn
        self.entries: list[int] = []  # the line of each row shown, in order
        self.cursor = 0  # an index into `entries`
        self._highlighted: str | None = None

    # -- what is shown --------------------------------------------------------------

    def show(self, rows: list[Row]) -> None:
        # Claude's lines share MEMORY.md's time: in its order
        rows = sorted(rows, key=lambda r: (r.line, r.ref))
        rows.sort(key=lambda r: r.updated, reverse=True)  # newest first within a group
        # Claude's files, then its lines
        rows.sort(key=lambda r: (GROUP_ORDER.index(r.group), r.archived, r.label))
        self.rows = rows
        groups: dict[str, list[Row]] = {}
        for row in rows:
            groups.setdefault(row.group, []).append(row)
        self.groups = list(groups.items())
        self._relayout()

    def narrow(self, refs: set[str] | None) -> None:
        self.found = refs
        self._relayout()

    def set_show_archived(self, show: bool) -> None:
        self.show_archived = show
        self._relayout()

    def shown(self) -> list[Row]:
        return [self.lines[i] for i in self.entries]

    def selected(self) -> Row | None:
        return self.lines[self.entries[self.cursor]] if self.entries else None

    def _relayout(self) -> None:
        """Lay out the rows a search found (and the archived, when shown) under their headings: one pass
        over the rows, a set lookup each (a keypress of the search pays for this and the lines on screen)."""
        current = self.selected()
        found, archived = self.found, self.show_archived
        lines: list = []
        entries: list[int] = []
        position = None
        for group, rows in self.groups:
            kept = [
                r
                for r in rows
                if (archived or not r.archived) and (found is None or r.ref in found)
            ]
            if not kept:
                continue
            lines.append((group, len(kept)))
            start = len(lines)
            lines.extend(kept)
            if position is None and current is not None and current.group == group:
                at = next((i for i, r in enumerate(kept) if r.ref == current.ref), None)
                position = None if at is None else len(entries) + at
            entries.extend(range(start, len(lines)))
        self.lines, self.entries = lines, entries
        self._resize_virtual()
        if position is None:
            position = min(self.cursor, len(entries) - 1)
        self._move(max(0, position))
        self.refresh()

    # -- the cursor -------------------------------------------------------------------

    def _move(self, position: int) -> None:
        self.cursor = max(0, min(position, len(self.entries) - 1)) if self.entries else 0
        if self.entries:
            line = self.entries[self.cursor]
            top, height = int(self.scroll_y), max(1, self.scrollable_content_region.height - 1)
            if self.cursor == 0:
                line = 0  # its group heading too
            if line < top:
                self.scroll_to(y=line, animate=False, immediate=True)
            elif line >= top + height:
                self.scroll_to(y=line - height + 1, animate=False, immediate=True)
        self.refresh()
        ref = self.selected().ref if self.entries else None
        if ref != self._highlighted:
            self._highlighted = ref
            self.post_message(self.Highlighted(self, ref))

    def move_to(self, ref: str) -> bool:
        refs = [self.lines[i].ref for i in self.entries]
        if ref in refs:
            self._move(refs.index(ref))
            return True
        return False

    def action_cursor_up(self) -> None:
        self._move(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._move(self.cursor + 1)

    def action_page_up(self) -> None:
        self._move(self.cursor - max(1, self.scrollable_content_region.height - 2))

    def action_page_down(self) -> None:
        self._move(self.cursor + max(1, self.scrollable_content_region.height - 2))

    def action_first(self) -> None:
        self._move(0)

    def action_last(self) -> None:
        self._move(len(self.entries) - 1)

    def on_click(self, event: events.Click) -> None:
        line = int(self.scroll_y) + event.y - 1
        if event.y >= 1 and 0 <= line < len(self.lines) and not isinstance(self.lines[line], tuple):
            self._move(self.entries.index(line))

    def on_resize(self) -> None:
        self._resize_virtual()

    def _resize_virtual(self) -> None:
        """The scrollable height follows the lines; only this widget's scrollbars change, so the screen is
        not laid out again (a `virtual_size` assignment would, on every keypress of a search: textual is
        pinned, and this is what its ScrollView does for a size it is given without a layout)."""
        size = Size(self.size.width, len(self.lines) + 1)
        if size != self.virtual_size:
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)

    # -- drawing ------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            names = " ".join(
                _cell(name, w) for (name, _), w in zip(COLUMNS, widths(width), strict=True)
            )
            return self._strip(names, width, self.get_component_rich_style("library-table--header"))
        index = int(self.scroll_y) + y - 1
        if index >= len(self.lines):
            if not self.lines and y == 1:
                return self._strip(self.empty_text(), width, _style("dim italic"))
            return Strip.blank(width, self.rich_style)
        line = self.lines[index]
        if isinstance(line, tuple):
            group, count = line
            return self._strip(
                f"{group} · {count}", width, self.get_component_rich_style("library-table--group")
            )
        base = self.rich_style
        if self.entries and index == self.entries[self.cursor]:
            base = base + self.get_component_rich_style("library-table--cursor")
        if line.archived:
            base = base + _style("dim")
        return Strip(
            [
                Segment(piece, base + _style(style) if style else base)
                for piece, style in row_cells(line, width, self.now)
            ],
            width,
        )

    def empty_text(self) -> str:
        if not self.rows:
            return "No memories yet."
        return (
            "Nothing matches the search."
            if self.found is not None
            else "Every memory is archived (h shows them)."
        )

    def _strip(self, text: str, width: int, style: Style) -> Strip:
        return Strip([Segment(set_cell_size(text, width), self.rich_style + style)], width)
