"""The queue of what waits for review, updated in place as staging changes: one row per drafted memory,
one per write of Claude's own held for review (category `claude`) and one per rule-graduation candidate
(category `rule`) and one per proposal of a change to existing memories (category `proposal`). The other kinds
are kept under their own key beside the triages (GROUPS)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from curator.candidates.queue import Item, age
from curator.categories import CATEGORIES
from curator.review.items import CLAUDE_WRITE as CLAUDE_WRITE_KIND
from curator.review.items import RULE as RULE_KIND
from curator.review.items import ReviewItem
from curator.review.proposal_kind import KIND as PROPOSAL_KIND
from curator.util.textsafe import one_line

CATEGORY_ORDER = {name: i for i, name in enumerate(CATEGORIES)}
SEVERITIES = ("block", "advisory", "clean", "failed")
COLUMNS = (("category", 10), ("title", None), ("action", 9), ("conf", 4), ("issues", 11), ("age", 4))
SHORT = {"session_summary": "session"}  # the one category name too long for its column
CLAUDE = "claude"  # the category column of Claude's own memory writes (review mode)
CLAUDE_WRITES = "claude/"  # where the app keeps their rows, beside the triages (their ids start so, not with digits)
RULE = "rule"  # the category column of a rule-graduation candidate (a failure that recurred across sessions)
RULES = "rule/"  # where the app keeps their rows
PROPOSAL = "proposal"  # the category column of a proposal (a change to existing memories: update, merge, adopt...)
PROPOSALS = "proposal/"  # where the app keeps their rows


@dataclass(frozen=True)
class RowKind:
    """A kind of row other than a triage's memories: listed by the Engine as review items of `kind`
    (curator/review/kinds.py), kept under `key` beside the triages, shown as category `category`."""

    category: str
    key: str
    kind: str
    what: str  # how its rows are named when they cannot be read


ROW_KINDS = (RowKind(CLAUDE, CLAUDE_WRITES, CLAUDE_WRITE_KIND, "Claude's staged writes"),
             RowKind(RULE, RULES, RULE_KIND, "the rule candidates"),
             RowKind(PROPOSAL, PROPOSALS, PROPOSAL_KIND, "the proposals"))
GROUPS = {k.category: k.key for k in ROW_KINDS}  # a row's category -> its key (a memory's: its triage's id)
_CATEGORY = {k.kind: k.category for k in ROW_KINDS}


def kind_item(item: ReviewItem) -> Item:
    """A review item of another kind (a staged write of Claude's, a rule candidate) as a queue row: its review
    id (`claude/<id>`, `rule/<key>`) in place of a triage; its title (the front matter's name or the file's
    path, the rule's text); for a rule, the sessions its failure recurred in and why it cannot be written."""
    severities = [i.get("severity") for i in item.issues]
    record: dict = {"where": item.where}
    if item.rule:
        record["sessions"] = item.rule.get("count", 0)
    blocks = [i for i in item.issues if i.get("severity") == "BLOCK"]
    if blocks:
        record["block"] = str(blocks[0].get("message") or "")
    return Item(item.id, _CATEGORY[item.kind], item.state, title=item.title, action=item.action,
                blocks=max(severities.count("BLOCK"), int(item.blocked)), advisories=severities.count("ADVISORY"),
                created=item.created, session=item.session, error=item.error, record=record)


def group_of(item: Item) -> str:
    """Where the app keeps the row: under its kind's key, or its triage's id for a memory."""
    return GROUPS.get(item.category, item.tid)


def is_claude(item: Item | None) -> bool:
    return item is not None and item.category == CLAUDE


def is_memory(item: Item | None) -> bool:
    """A drafted memory of a triage (not a write of Claude's, not a rule candidate)."""
    return item is not None and item.category not in GROUPS


def row_key(item: Item) -> str:
    return f"{item.tid}/{item.category}"


def sort_key(item: Item) -> tuple:
    return (item.tid, CATEGORY_ORDER.get(item.category, -1))


def matches(item: Item, words: list[str]) -> bool:
    """An item passes the filter when it matches one of the category words (if any) and one of the
    severity words (if any)."""
    cats = [w for w in words if w not in SEVERITIES]
    sevs = [w for w in words if w in SEVERITIES]
    if cats and not any(item.category.startswith(w) for w in cats):
        return False
    if sevs:
        have = {"block" if item.blocks else "", "advisory" if item.advisories else "",
                "failed" if item.state in ("failed", "error") else "",
                "clean" if item.state == "ready" and not item.blocks and not item.advisories else ""}
        return any(s in have for s in sevs)
    return True


def cells(item: Item, now: float | None) -> tuple[Text, ...]:
    if item.is_error:
        return (Text("error", style="bold red"), Text(one_line(item.error, 200), style="red"), Text("—"), Text(""),
                Text(""), Text(age(item.created, now) if item.created else ""))
    title = Text(one_line(item.title, 120) or f"({item.category} — {item.state})",
                 style="" if item.title else "dim italic")
    if item.category == RULE:  # in place of an action: how many sessions the failure recurred in
        action = Text(f"seen {item.field('sessions', 0)}×", style="cyan")
    elif item.state == "ready":
        action = Text(item.action or "?", style={"create": "green", "update": "cyan", "noop": "dim",
                                                 "delete": "magenta"}.get(item.action, ""))
    elif item.state == "failed":
        action = Text("failed", style="bold red")
    else:
        action = Text(item.state, style="yellow")
    badges = Text()
    if item.blocks:
        badges.append(f"BLOCK{item.blocks if item.blocks > 1 else ''}", style="bold white on red")
    if item.advisories:
        if badges:
            badges.append(" ")
        badges.append(f"ADV{item.advisories if item.advisories > 1 else ''}", style="black on yellow")
    return (Text(SHORT.get(item.category, item.category)), title, action, confidence_cell(item.confidence), badges,
            Text(age(item.created, now)))


def confidence_cell(value: float | None) -> Text:
    """A draft's confidence in four characters ("0.82"); dim when it is below one half."""
    if value is None:
        return Text("")
    return Text(f"{value:.2f}", style="dim" if value < 0.5 else "")


class QueueTable(DataTable):
    """Rows keyed `<triage id>/<category>`; `sync` adds, updates and removes rows without a rebuild
    when it can, so the cursor stays put while work streams in."""

    BINDINGS = [Binding("j", "cursor_down", "Down", show=False), Binding("k", "cursor_up", "Up", show=False)]
    DEFAULT_CSS = "QueueTable { height: 1fr; }"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for name, width in COLUMNS:
            self.add_column(name, key=name, width=width or 20)
        self.shown: list[Item] = []
        self.call_after_refresh(self.fit_title)

    def on_resize(self) -> None:
        self.fit_title()

    def fit_title(self) -> None:
        """The title takes the width the other columns leave."""
        fixed = sum(w for _, w in COLUMNS if w) + 2 * self.cell_padding * len(COLUMNS) + 2
        column = self.columns.get("title")
        if column is not None:
            column.width = max(12, self.size.width - fixed)
            column.auto_width = False
            self._clear_caches()  # textual is pinned: these two are how DataTable itself re-lays out
            self._require_update_dimensions = True
            self.refresh()

    def selected(self) -> Item | None:
        if not self.shown or self.cursor_row < 0 or self.cursor_row >= len(self.shown):
            return None
        return self.shown[self.cursor_row]

    def sync(self, items: list[Item], now: float | None) -> None:
        """Show `items` (already filtered and sorted)."""
        old = {row_key(i): i for i in self.shown}
        new_keys = [row_key(i) for i in items]
        kept = [k for k in new_keys if k in old]
        added = [i for i in items if row_key(i) not in old]
        old_order = [row_key(i) for i in self.shown if row_key(i) in set(kept)]
        appendable = not added or not kept or sort_key(added[0]) > sort_key(old[kept[-1]])
        if old_order != kept or not appendable:
            self._rebuild(items, now)
            return
        current = self.selected()
        for key in set(old) - set(new_keys):
            self.remove_row(key)
        for item in items:
            k = row_key(item)
            if k in old and old[k] != item:
                for (column, _), value in zip(COLUMNS, cells(item, now), strict=True):
                    self.update_cell(k, column, value)
        for item in added:
            self.add_row(*cells(item, now), key=row_key(item))
        self.shown = list(items)
        if current is not None and row_key(current) not in new_keys:
            self.move_cursor(row=min(self.cursor_row, len(items) - 1))

    def _rebuild(self, items: list[Item], now: float | None) -> None:
        current = self.selected()
        row = self.cursor_row
        self.clear()
        for item in items:
            self.add_row(*cells(item, now), key=row_key(item))
        self.shown = list(items)
        if current is not None:
            keys = [row_key(i) for i in items]
            if row_key(current) in keys:
                row = keys.index(row_key(current))
        if items:
            self.move_cursor(row=max(0, min(row, len(items) - 1)))
