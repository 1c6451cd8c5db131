"""The queue of what waits for review, updated in place as staging changes: one row per drafted memory,
and one per item of every other kind of review (curator/review/kinds.py: Claude's own writes held for
review, rule-graduation candidates, proposals...), kept under its kind's prefix beside the triages and
shown with its kind's label as the category."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets._data_table import (
    CellKey,
    DuplicateKey,
    Row,
    RowDoesNotExist,
    RowKey,
)

from memcurate.curator.candidates.staging import IN_FLIGHT
from memcurate.curator.categories import CATEGORIES, CLAUDE, base
from memcurate.curator.review.names import MEMORY
from memcurate.curator.util.textsafe import one_line

# The item shapes and `age` are imported where a row is made or shown: their modules' dataclasses are
# compiled when imported, which the first frame (no rows yet) does not wait for.
if TYPE_CHECKING:
    from memcurate.curator.candidates.queue import Item
    from memcurate.curator.review.items import ReviewItem

CATEGORY_ORDER = {name: i for i, name in enumerate(CATEGORIES)}
SEVERITIES = ("block", "advisory", "clean", "failed")
# The session column names each triage's session (its first 8 hex) on the first of its rows, "│" on the
# others: a triage's rows read as one group. The category is shown whole (session_summary takes 15).
COLUMNS = (
    ("session", 8),
    ("category", 15),
    ("title", None),
    ("action", 9),
    ("conf", 4),
    ("issues", 11),
    ("age", 4),
)
# A table narrower than COMPACT_BELOW (an 80-column terminal) leaves out the age and shows a category in 10: the
# title keeps 24 characters or more there.
COMPACT_BELOW = 96
COMPACT_COLUMNS = (
    ("session", 8),
    ("category", 10),
    ("title", None),
    ("action", 9),
    ("conf", 4),
    ("issues", 11),
)
SHORT_CATEGORY = {
    "session_summary": "summary"
}  # the one category longer than 10 characters, said short
# the table keeps the rendered lines of this many screens (textual's default: 1,000 lines)
CACHED_SCREENS = 3
SAME_GROUP = "│"  # the session cell of a triage's second and later rows
# The built-in kinds other than memories, their queue label -> the prefix their rows are kept under: the
# filter's words (the app learns every registered kind, and its label and prefix, from the Engine).
GROUPS = {CLAUDE: "claude/", "rule": "rule/", "proposal": "proposal/"}


def kind_item(item: ReviewItem, kind) -> Item:
    """A review item of a kind other than memories (items.Kind: a staged write of Claude's, a rule
    candidate, a proposal...) as a queue row: its review id (`claude/<id>`) in place of a triage, the
    kind's label as its category; the item itself, its kind and the key its rows are kept under in
    its record; for a rule, the sessions its failure recurred in."""
    from memcurate.curator.candidates.queue import Item

    severities = [i.get("severity") for i in item.issues]
    record: dict = {
        "where": item.where,
        "review_kind": kind.name,
        "review_group": kind.prefix,
        "review_item": item,
    }
    if item.rule:
        record["sessions"] = item.rule.get("count", 0)
    blocks = [i for i in item.issues if i.get("severity") == "BLOCK"]
    if blocks:
        record["block"] = str(blocks[0].get("message") or "")
    return Item(
        item.id,
        kind.label,
        item.state,
        title=item.title,
        action=item.action,
        blocks=max(severities.count("BLOCK"), int(item.blocked)),
        advisories=severities.count("ADVISORY"),
        created=item.created,
        session=item.session,
        error=item.error,
        record=record,
    )


def review_item(row: Item) -> ReviewItem:
    """The review item a row shows (a triage's memory: built from the row)."""
    from memcurate.curator.review.items import ReviewItem

    item = row.field("review_item")
    if isinstance(item, ReviewItem):
        return item
    return ReviewItem(
        f"{row.tid}/{row.category}",
        MEMORY,
        row.state,
        category=row.category,
        title=row.title,
        action=row.action,
        confidence=row.confidence,
        blocked=bool(row.blocks),
        session=row.session,
        created=row.created,
        error=row.error,
    )


def kind_name(row: Item) -> str:
    return str(row.field("review_kind") or MEMORY)


def group_of(item: Item) -> str:
    """Where the app keeps the row: under its kind's prefix, or its triage's id for a memory."""
    return str(item.field("review_group") or item.tid)


def is_memory(item: Item | None) -> bool:
    """A drafted memory of a triage (its progress, its confidence against the gate), not an item of
    another kind."""
    return item is not None and not item.field("review_group")


def row_key(item: Item) -> str:
    return f"{item.tid}/{item.category}"


def sort_key(item: Item) -> tuple:
    # a category's facts in turn
    return (
        item.tid,
        CATEGORY_ORDER.get(base(item.category), -1),
        item.category,
    )


# Every word the filter takes for a category: the six categories, then the other kinds of rows (claude, rule,
# proposal: GROUPS, whether or not any is queued).
FILTER_CATEGORIES = (*CATEGORIES, *GROUPS)


def unknown_words(words: list[str], more: tuple[str, ...] = ()) -> list[str]:
    """The filter words no row can ever match (neither a severity nor the start of a category's name, nor
    of a kind's label in `more`): a typo would empty the queue and read as "nothing waiting"."""
    known = (*FILTER_CATEGORIES, *more)
    return [w for w in words if w not in SEVERITIES and not any(c.startswith(w) for c in known)]


def matches(item: Item, words: list[str]) -> bool:
    """An item passes the filter when it matches one of the category words (if any) and one of the
    severity words (if any)."""
    cats = [w for w in words if w not in SEVERITIES]
    sevs = [w for w in words if w in SEVERITIES]
    if cats and not any(item.category.startswith(w) for w in cats):
        return False
    if sevs:
        have = {
            "block" if item.blocks else "",
            "advisory" if item.advisories else "",
            "failed" if item.state in ("failed", "error") else "",
            "clean" if item.state == "ready" and not item.blocks and not item.advisories else "",
        }
        return any(s in have for s in sevs)
    return True


def queue_title(items: dict[str, list[Item]]) -> str:
    """The queue's title: how many rows wait, how many are ready, still drafting, and failed (when any)."""
    rows = [i for group in items.values() for i in group]
    ready = sum(1 for i in rows if i.state == "ready")
    drafting = sum(1 for i in rows if i.state in DRAFTING)
    failed = sum(1 for i in rows if i.state == "failed" or i.is_error)
    return f"Pending {len(rows)} — {ready} ready · {drafting} drafting" + (
        f" · {failed} failed" if failed else ""
    )


DRAFTING = frozenset(("triaged", *IN_FLIGHT))  # a row not drafted yet, or being drafted


@functools.lru_cache(maxsize=256)
def shared_text(plain: str, style: str = "") -> Text:
    """A cell many rows show alike (a category, an action, a confidence, badges): one Text for all of
    them, since the table only reads its cells (2,000 rows: 14,000 Texts made before the first frame
    with rows, ~4,000 so)."""
    return Text(plain, style=style)


def cells(
    item: Item, now: float | None, *, first: bool = True, title: str | None = None
) -> tuple[Text, ...]:
    """A row's cells; `first`: the first row of its group (its session is named there); `title`: the title
    as it fits its column (fit_title), else the whole title."""
    from memcurate.curator.candidates.queue import age

    group = Text(short_session(item), style="bold") if first else shared_text(SAME_GROUP, "dim")
    if item.is_error:
        return (
            group,
            shared_text("error", "bold red"),
            Text(one_line(item.error, 200), style="red"),
            shared_text("—"),
            shared_text(""),
            shared_text(""),
            Text(age(item.created, now) if item.created else ""),
        )
    shown = one_line(item.title, TITLE_MAX) if title is None else title
    title_cell = Text(
        shown or f"({item.category} — {item.state})", style="" if item.title else "dim italic"
    )
    if (
        item.field("sessions") is not None
    ):  # in place of an action: the sessions a failure recurred in
        action = Text(f"seen {item.field('sessions', 0)}×", style="cyan")
    elif item.state == "ready":
        action = shared_text(
            item.action or "?",
            {"create": "green", "update": "cyan", "noop": "dim", "delete": "magenta"}.get(
                item.action, ""
            ),
        )
    elif item.state == "failed":
        action = shared_text("failed", "bold red")
    else:
        action = shared_text(item.state, "yellow")
    return (
        group,
        shared_text(item.category),
        title_cell,
        action,
        confidence_cell(item.confidence),
        _badges(item.blocks, item.advisories),
        Text(age(item.created, now)),
    )


@functools.lru_cache(maxsize=64)
def _badges(blocks: int, advisories: int) -> Text:
    """The issues cell (shared_text's: one Text for the rows alike)."""
    badges = Text()
    if blocks:
        badges.append(f"BLOCK{blocks if blocks > 1 else ''}", style="bold white on red")
    if advisories:
        if badges:
            badges.append(" ")
        badges.append(f"ADV{advisories if advisories > 1 else ''}", style="black on yellow")
    return badges


def short_category(category: str) -> str:
    """A category in at most 10 characters: session_summary (and its further facts) as summary."""
    name, sep, n = category.partition("-")
    return SHORT_CATEGORY.get(name, name) + sep + n


TITLE_MAX = 200  # characters of a title considered at all (one line)


def short_session(item: Item) -> str:
    """The session a row came from, as its first 8 characters (a Claude Code session id is a UUID)."""
    return one_line(item.session, 40)[:8] or "—"


def firsts(items: list[Item]) -> list[bool]:
    """For each row (in order): whether it starts a group, i.e. comes from another triage than the row above."""
    return [n == 0 or items[n - 1].tid != item.tid for n, item in enumerate(items)]


def shared_prefixes(titles: list[str]) -> dict[str, int]:
    """How many leading characters each title shares with the most alike other (different) title: sorted,
    a title's most alike neighbour is next to it."""
    ordered = sorted(set(titles))
    shared = dict.fromkeys(ordered, 0)
    for a, b in zip(ordered, ordered[1:]):
        n = len(os.path.commonprefix((a, b)))
        shared[a], shared[b] = max(shared[a], n), max(shared[b], n)
    return shared


def fit_title(title: str, width: int, shared: int = 0) -> str:
    """`title` in `width` characters, never ambiguous: cut at the end while what tells it apart from the most
    alike title (`shared`: the characters they share) still shows; else its start, an ellipsis, and from just
    before where it differs."""
    if len(title) <= width:
        return title
    if shared < width - 1:
        return title[: width - 1] + "…"
    head = max(4, width // 3)
    rest = title[max(head, shared - 3) :]
    room = width - head - 1
    if len(rest) > room:
        rest = rest[: room - 1] + "…"
    return title[:head] + "…" + rest


def confidence_cell(value: float | None) -> Text:
    """A draft's confidence in four characters ("0.82"); dim when it is below one half."""
    if value is None:
        return shared_text("")
    return shared_text(f"{value:.2f}", "dim" if value < 0.5 else "")


class QueueTable(DataTable):
    """Rows keyed `<triage id>/<category>`; `sync` adds, updates and removes rows without a rebuild
    when it can, so the cursor stays put while work streams in. What each row shows is kept as its view
    (item, first of its group, title as fitted, age): a row is redrawn only when its view changes."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = "QueueTable { height: 1fr; }"

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.shown: list[Item] = []
        self.views: dict[str, tuple] = {}  # row key -> what the row shows (_views)
        self.title_width = 20
        # the clock the ages were last shown with (None: the real one)
        self.now: float | None = None
        self.spec = COLUMNS  # the columns shown (COMPACT_COLUMNS in a narrow table)
        self._rendered_at = 0  # DataTable's update count when its render caches were last emptied
        self._frame: tuple | None = None  # while a frame's lines are drawn: render_lines

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self._add_columns()

    def _add_columns(self) -> None:
        # labels as Text: a str label is parsed as markup, whose emoji table (~5 ms) the first frame waited for
        for name, width in self.spec:
            self.add_column(Text(name), key=name, width=width or 20)

    def _update_dimensions(self, new_rows) -> None:
        """textual measures every cell of every new row for the widths of auto-width columns (2,000 rows:
        14,000 measures, most of the time before they show); every column here has its width set and
        every row one line, so only the table's size is left to compute. textual is pinned: this is the
        end of its own _update_dimensions."""
        if any(c.auto_width for c in self.columns.values()) or self._labelled_row_exists:
            super()._update_dimensions(new_rows)
            return
        width = sum(c.get_render_width(self) for c in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(
            width + self._row_label_column_width, self._total_row_height + header
        )

    def _append_rows(self, rows: list[tuple[str, tuple[Text, ...]]]) -> None:
        """textual's add_row for many rows at once: what it does once per row (the cursor set again and its
        watchers run, an idle prompt, the columns ordered twice) done once. textual is pinned: these are
        add_row's own steps, for one-line rows without labels."""
        if not rows:
            return
        keys = [c.key for c in self.ordered_columns]
        empty = not self.rows
        for key, row in rows:
            row_key = RowKey(key)
            if row_key in self._row_locations:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            self._row_locations[row_key] = len(self.rows)
            self._data[row_key] = dict(zip(keys, row, strict=True))
            self.rows[row_key] = Row(row_key, 1)
            self._new_rows.add(row_key)
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if empty and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()  # a row for the cursor where there was none: RowHighlighted
        self._update_count += 1
        self.check_idle()

    def _remove_rows(self, keys: set[str]) -> None:
        """textual's remove_row for many rows at once: it numbers every row again for each row removed (a
        filter that leaves 400 of 2,000 rows: 3 million steps), here once. textual is pinned: these are
        remove_row's own steps."""
        if not keys:
            return
        gone = {RowKey(k) for k in keys}
        for key in gone:
            if key not in self._row_locations:
                raise RowDoesNotExist(f"Row key {key!r} is not valid.")
        locations = self._row_locations
        kept = sorted((locations.get(key), key) for key in locations if key not in gone)
        self._row_locations = TwoWayDict({key: n for n, (_, key) in enumerate(kept)})
        for key in gone:
            # the removed cells must not ask for dimension updates
            for column_key in self._data[key]:
                self._updated_cells.discard(CellKey(key, column_key))
            del self.rows[key]
            del self._data[key]
        self._require_update_dimensions = True
        self.check_idle()
        self.cursor_coordinate = self.cursor_coordinate
        self.hover_coordinate = self.hover_coordinate
        self._update_count += 1
        self.refresh(layout=True)

    def render_lines(self, crop: Region) -> list[Strip]:
        """textual's DataTable works out where it is scrolled, its width and style (a walk of its ancestors'
        styles) for each line it draws, and a line under the last row is drawn blank through all of it, border
        and background put on by textual's StylesCache (a loading queue's first frame: 40 such lines): here
        the offsets and style once for the lines of a frame, and one blank line for all of them."""
        scroll_x, scroll_y = self.scroll_offset
        width, style = self.size.width, self.rich_style
        header = self.header_height if self.show_header else 0
        blank = Strip.blank(width, style)  # DataTable's line under the rows
        rows = self._total_row_height
        self._frame = (scroll_x, scroll_y, width, header, style, rows, blank)
        try:
            # textual's StylesCache puts the border and background on each line: the lines under the rows
            # (between the borders, all alike) are drawn once and the first of them stands for the others
            gutter = self.styles.gutter
            start = max(crop.y, gutter.top + header + max(rows - scroll_y, 0))
            end = min(crop.bottom, self.region.height - gutter.bottom)
            if self.fixed_rows or end - start < 2:
                return super().render_lines(crop)
            lines = super().render_lines(Region(crop.x, crop.y, crop.width, start + 1 - crop.y))
            lines += [lines[-1]] * (end - start - 1)
            if crop.bottom > end:
                lines += super().render_lines(Region(crop.x, end, crop.width, crop.bottom - end))
            return lines
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        """DataTable's render_line (textual is pinned) with the frame's offsets and style (render_lines); a
        line drawn on its own, or a table with fixed rows, is DataTable's."""
        if self._frame is None or self.fixed_rows:
            return super().render_line(y)
        scroll_x, scroll_y, width, header, style, rows, blank = self._frame
        if y >= header:
            y += scroll_y
            if y - header >= rows:
                return blank
        return self._render_line(y, scroll_x, scroll_x + width, style)

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """The columns are fitted (and the caches bounded) in the layout that sizes the table, before its
        lines are drawn: the Resize event comes after that frame, which drew the old widths (the first
        frame's title 20 wide, fitted in the second). textual is pinned: the compositor calls this for each
        widget it lays out, before it draws."""
        # the outer size last laid out (`size` reads the compositor's, new already)
        before = self._size
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if size != before:
            self._bound_caches()
            if size.width != before.width:
                self.fit_title()
        return resized

    def _bound_caches(self) -> None:
        """textual's DataTable keeps up to 1,000 rendered rows and lines and 10,000 cells, every one keyed by its
        update count: each change of a row (a landing, a state) and each cursor move adds renders, and they stay
        until 1,000 newer ones push them out (tens of thousands of objects every collection walks). Here the
        caches hold what a few screens need."""
        lines = CACHED_SCREENS * max(self.size.height, 16)
        for cache, size in (
            (self._row_render_cache, lines),
            (self._row_renderable_cache, lines),
            (self._line_cache, lines),
            (self._cell_render_cache, lines * len(self.spec)),
        ):
            cache.maxsize = size
            cache.clear()  # LRUCache decides it is full once: emptied, it counts again

    def _drop_stale_renders(self) -> None:
        """Every render cached before a change is keyed by the old update count, never read again: let it go."""
        if self._update_count != self._rendered_at:
            self._clear_caches()  # textual is pinned: DataTable's own way to forget its renders
            self._rendered_at = self._update_count

    def fit_title(self) -> None:
        """The title takes the width the other columns leave; titles are fitted to it again. A narrow table
        shows COMPACT_COLUMNS."""
        spec = COMPACT_COLUMNS if 0 < self.size.width < COMPACT_BELOW else COLUMNS
        if spec != self.spec:
            self._relayout(spec)
        fixed = sum(w for _, w in self.spec if w) + 2 * self.cell_padding * len(self.spec) + 2
        column = self.columns.get("title")
        if column is not None:
            column.width = max(12, self.size.width - fixed)
            column.auto_width = False
            self._clear_caches()  # textual is pinned: these two are how DataTable itself re-lays out
            self._require_update_dimensions = True
            if column.width != self.title_width:
                self.title_width = column.width
                if self.shown:  # (the first layout has none: the row shapes' imports wait for rows)
                    self.sync(self.shown, self.now)
            self.refresh()

    def selected(self) -> Item | None:
        if not self.shown or self.cursor_row < 0 or self.cursor_row >= len(self.shown):
            return None
        return self.shown[self.cursor_row]

    def _views(self, items: list[Item], now: float | None) -> dict[str, tuple]:
        from memcurate.curator.candidates.queue import age

        shared = shared_prefixes([one_line(i.title, TITLE_MAX) for i in items])
        views = {}
        for item, first in zip(items, firsts(items), strict=True):
            title = one_line(item.title, TITLE_MAX)
            views[row_key(item)] = (
                item,
                first,
                fit_title(title, self.title_width, shared.get(title, 0)),
                age(item.created, now) if item.created else "",
            )
        return views

    def _cells(self, view: tuple, now: float | None) -> tuple[Text, ...]:
        item, first, title, _ = view
        row = cells(item, now, first=first, title=title)
        if self.spec is COLUMNS:
            return row
        category = row[1] if item.is_error else shared_text(short_category(item.category))
        return (row[0], category, *row[2 : len(self.spec)])

    def _relayout(self, spec: tuple) -> None:
        """Show `spec`'s columns: the rows drawn again, the cursor kept on its row."""
        current, row = self.selected(), self.cursor_row
        self.spec = spec
        self.clear(columns=True)
        self._add_columns()
        self._bound_caches()
        self._rebuild(
            self.shown, self._views(self.shown, self.now), self.now, keep=current, row=max(row, 0)
        )

    def sync(self, items: list[Item], now: float | None) -> None:
        """Show `items` (already filtered and sorted)."""
        self.now = now
        views = self._views(items, now)
        old = {row_key(i): i for i in self.shown}
        new_keys = [row_key(i) for i in items]
        kept = [k for k in new_keys if k in old]
        added = [i for i in items if row_key(i) not in old]
        old_order = [row_key(i) for i in self.shown if row_key(i) in set(kept)]
        appendable = not added or not kept or sort_key(added[0]) > sort_key(old[kept[-1]])
        if old_order != kept or not appendable:
            self._rebuild(items, views, now)
            return
        current = self.selected()
        self._remove_rows(set(old) - set(new_keys))
        for k in kept:
            if self.views.get(k) != views[k]:
                for (column, _), value in zip(self.spec, self._cells(views[k], now), strict=True):
                    self.update_cell(k, column, value)
        self._append_rows([(row_key(i), self._cells(views[row_key(i)], now)) for i in added])
        self.shown, self.views = list(items), views
        if current is not None and row_key(current) not in new_keys:
            self.move_cursor(row=min(self.cursor_row, len(items) - 1))
        self._drop_stale_renders()

    def tick_ages(self, now: float | None) -> int:
        """Show the ages as of `now` (None: the real clock): only the age cells that changed are updated.
        Returns how many."""
        from memcurate.curator.candidates.queue import age

        self.now = now
        changed = 0
        for k, view in self.views.items():
            item = view[0]
            shown = age(item.created, now) if item.created else ""
            if shown != view[3]:
                if "age" in self.columns:
                    self.update_cell(k, "age", Text(shown))
                self.views[k] = (*view[:3], shown)
                changed += 1
        self._drop_stale_renders()
        return changed

    def _rebuild(
        self,
        items: list[Item],
        views: dict[str, tuple],
        now: float | None,
        *,
        keep: Item | None = None,
        row: int | None = None,
    ) -> None:
        """All rows anew; the cursor stays on the selected row (`keep`, at `row`, when the table was cleared)."""
        current = keep or self.selected()
        row = self.cursor_row if row is None else row
        self.clear()
        self._append_rows([(row_key(i), self._cells(views[row_key(i)], now)) for i in items])
        self.shown, self.views = list(items), views
        if current is not None:
            keys = [row_key(i) for i in items]
            if row_key(current) in keys:
                row = keys.index(row_key(current))
        if items:
            self.move_cursor(row=max(0, min(row, len(items) - 1)))
        self._drop_stale_renders()
