"""The library's table: every memory, grouped by category, drawn line by line.

A DataTable of 10,000 rows costs tens of milliseconds to refill, and search refills it on every keypress;
this table keeps its rows as plain values and renders only the lines on screen (textual's line API), so
narrowing to what a search found is a list comprehension and a repaint. A group is a heading line the
cursor skips; the column heading stays on the first line.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from curator.candidates.queue import age
from curator.categories import CATEGORIES
from curator.library.entries import CLAUDE, is_line_ref
from curator.util.textsafe import one_line

GROUP_ORDER = (*CATEGORIES, CLAUDE)
# What a check finding (curator/hygiene Finding.code) is called in the flags column, kept short.
FLAG_LABEL = {"stale-file": "stale", "stale-command": "stale", "stale-symbol": "stale", "churn": "churn",
              "contradiction": "contra", "duplicate": "dup", "secret": "secret", "over-limit": "cut",
              "missing-link": "link", "unlinked": "unlinked"}
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
FLAG_STYLE = {"high": "bold white on red", "medium": "black on yellow", "low": "cyan"}
# (name, width); the title takes what the others leave
COLUMNS = (("", 1), ("category", 15), ("title", 0), ("age", 4), ("sources", 13), ("flags", 16))


@dataclass(frozen=True)
class Row:
    """One memory as the table shows it: plain values, turned into text only when on screen."""

    ref: str
    group: str
    label: str  # the category column: the group, or "claude line" for a line of Claude's in MEMORY.md
    title: str
    updated: str
    age: str
    sources: str
    flags: tuple[tuple[str, str], ...]  # (label, severity), worst first
    archived: bool
    claude: bool
    broken: bool


def make_row(entry, findings=(), now: float | None = None) -> Row:
    """A library Entry (curator/library/entries.py) and its check findings as a row."""
    sources = tuple(entry.sources)
    worst: dict[str, str] = {}
    for f in findings:
        label = FLAG_LABEL.get(f.code, f.code)
        if label not in worst or SEVERITY_RANK.get(f.severity, 3) < SEVERITY_RANK.get(worst[label], 3):
            worst[label] = f.severity
    flags = tuple(sorted(worst.items(), key=lambda kv: (SEVERITY_RANK.get(kv[1], 3), kv[0])))
    group = entry.category if entry.category in GROUP_ORDER else CLAUDE
    return Row(ref=entry.ref, group=group, label=f"{CLAUDE} line" if is_line_ref(entry.ref) else group,
               title=one_line(entry.title or entry.where or entry.ref, 400), updated=entry.updated,
               age=age(entry.updated, now),
               sources=(f"{len(sources)} · {sources[0][:8]}" if sources else "—"), flags=flags,
               archived=entry.status == "archived", claude=entry.owner == CLAUDE, broken=bool(entry.broken))


def fit(text: str, width: int) -> str:
    """`text` in `width` cells; a longer one loses its middle, so two titles that share a long start still
    differ on screen."""
    if len(text) <= width:
        return text
    if width < 8:
        return text[: max(0, width - 1)] + "…"
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail:]


def widths(total: int) -> list[int]:
    """Each column's width in `total` cells (one space between columns)."""
    fixed = sum(w for _, w in COLUMNS) + len(COLUMNS) - 1
    return [w or max(12, total - fixed) for _, w in COLUMNS]


def row_text(row: Row, total: int) -> Text:
    cols = widths(total)
    text = Text(no_wrap=True, overflow="crop")
    marker = Text("C", style="bold magenta") if row.claude else Text(" ")
    category = Text(row.label, style="magenta" if row.claude else "")
    title = Text(fit(row.title, cols[2]), style="red" if row.broken else "")
    flags = Text()
    for label, severity in row.flags:
        if flags:
            flags.append(" ")
        flags.append(label, style=FLAG_STYLE.get(severity, ""))
    for i, cell in enumerate((marker, category, title, Text(row.age), Text(row.sources, style="dim"), flags)):
        cell.truncate(cols[i], overflow="ellipsis", pad=True)
        if i:
            text.append(" ")
        text.append_text(cell)
    if row.archived:
        text.stylize("dim")
    return text


class LibraryTable(ScrollView, can_focus=True):
    """Rows grouped by category (memcurate's six in order, then Claude's own); `show(rows)` replaces them,
    `narrow(refs)` keeps those found by a search, `show_archived` shows or hides the archived ones. The
    cursor stays on its memory through both while the memory is still shown."""

    BINDINGS = [Binding("up,k", "cursor_up", "Up", show=False), Binding("down,j", "cursor_down", "Down", show=False),
                Binding("pageup", "page_up", show=False), Binding("pagedown", "page_down", show=False),
                Binding("home", "first", show=False), Binding("end", "last", show=False)]
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

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.rows: list[Row] = []
        self.found: set[str] | None = None  # the refs a search found; None: no search
        self.show_archived = True
        self.lines: list[Row | tuple[str, int]] = []  # rows and group headings (group, count), as drawn
        self.entries: list[int] = []  # the line of each row shown, in order
        self.cursor = 0  # an index into `entries`
        self._highlighted: str | None = None

    # -- what is shown --------------------------------------------------------------

    def show(self, rows: list[Row]) -> None:
        rows = sorted(rows, key=lambda r: r.ref)
        rows.sort(key=lambda r: r.updated, reverse=True)  # newest first within a group
        rows.sort(key=lambda r: (GROUP_ORDER.index(r.group), r.archived))
        self.rows = rows
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
        current = self.selected()
        found, archived = self.found, self.show_archived
        kept = [r for r in self.rows if (archived or not r.archived) and (found is None or r.ref in found)]
        lines: list = []
        entries: list[int] = []
        group = None
        for row in kept:
            if row.group != group:
                group = row.group
                lines.append((group, 0))
            entries.append(len(lines))
            lines.append(row)
        for i, line in enumerate(lines):  # each heading's count
            if isinstance(line, tuple):
                lines[i] = (line[0], sum(1 for r in kept if r.group == line[0]))
        self.lines, self.entries = lines, entries
        self.virtual_size = Size(self.size.width, len(lines) + 1)
        position = 0
        if current is not None:
            refs = [lines[i].ref for i in entries]
            position = refs.index(current.ref) if current.ref in refs else min(self.cursor, len(entries) - 1)
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
        self.virtual_size = Size(self.size.width, len(self.lines) + 1)

    # -- drawing ------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            names = Text(" ".join(f"{name:<{w}}"[:w] for (name, _), w in zip(COLUMNS, widths(width), strict=True)))
            return self._strip(names, width, self.get_component_rich_style("library-table--header"))
        index = int(self.scroll_y) + y - 1
        if index >= len(self.lines):
            if not self.lines and y == 1:
                return self._strip(Text(self.empty_text(), style="dim italic"), width)
            return Strip.blank(width, self.rich_style)
        line = self.lines[index]
        if isinstance(line, tuple):
            group, count = line
            return self._strip(Text(f"{group} · {count}"), width,
                               self.get_component_rich_style("library-table--group"))
        style = None
        if self.entries and index == self.entries[self.cursor]:
            style = self.get_component_rich_style("library-table--cursor")
        return self._strip(row_text(line, width), width, style)

    def empty_text(self) -> str:
        if not self.rows:
            return "No memories yet."
        return "Nothing matches the search." if self.found is not None else "Every memory is archived (h shows them)."

    def _strip(self, text: Text, width: int, style: Style | None = None) -> Strip:
        segments = list(text.render(self.app.console))
        strip = Strip([s for s in segments if s.text != "\n"] or [Segment("")]).adjust_cell_length(width,
                                                                                                  self.rich_style)
        return strip.apply_style(self.rich_style + style if style else self.rich_style)

