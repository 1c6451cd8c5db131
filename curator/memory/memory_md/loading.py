"""MEMORY.md as Claude Code loads it: every line with its owner and whether it is loaded, where the
cut falls, and each memcurate section against its budget.

What is loaded is loaded.py's model (Claude Code's own loader): comment-only lines (memcurate's markers)
are dropped and not counted, then 200 lines and 25,000 characters (or memcurate's tighter ceiling). A line
the character limit cuts in two is not loaded whole, so it counts as past the cut (what Claude reads of it
is not the memory). The owner of a line is the memcurate category whose markers enclose it (markers and
heading included), else "claude". A file memcurate's strict parser refuses (a hand edit between the
markers) is still shown, every line as Claude's, with `error` saying why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from memcurate.curator.categories import CLAUDE
from memcurate.curator.memory.memory_md.format import MemoryMdError, parse
from memcurate.curator.memory.memory_md.loaded import (
    CHECKED_AGAINST,
    CUT,
    DROPPED,
    LOADED,
    MAX_CHARS,
    MAX_LINES,
    loaded,
)


@dataclass(frozen=True)
class LoadLine:
    number: int  # 1-based
    text: str  # without its line break
    owner: str  # a memcurate category, or "claude"
    loaded: bool  # loaded whole
    dropped: bool = False  # a comment line (or front matter) Claude Code drops before counting: never past the cut


@dataclass
class LoadView:
    lines: list[LoadLine]
    cut: int | None  # the first line not loaded, None when all are
    # category -> {used, budget, loaded, line}
    sections: dict[str, dict] = field(default_factory=dict)
    total_lines: int = 0  # as Claude Code counts them (comment lines not counted)
    total_chars: int = 0  # UTF-16 code units, counted the same way
    max_lines: int = MAX_LINES
    max_chars: int = MAX_CHARS
    error: str = ""  # why memcurate's sections could not be told apart ("" when they could)
    warning: str = ""  # what Claude Code appends when it cuts the file ("" when it does not)
    checked_against: str = CHECKED_AGAINST  # the Claude Code version the model was checked against

    @property
    def over(self) -> bool:
        return self.cut is not None

    def past_cut(self) -> list[LoadLine]:
        return [ln for ln in self.lines if not ln.loaded and not ln.dropped]

    def to_dict(self) -> dict:
        return asdict(self)


def load_view(
    text: str,
    max_lines: int = MAX_LINES,
    max_chars: int = MAX_CHARS,
    budgets: dict[str, int] | None = None,
) -> LoadView:
    """The view of `text` (MEMORY.md's content; "" when there is none). `budgets` (category -> lines)
    default to those written in the begin markers."""
    error = ""
    spans: list[tuple[int, int, str]] = []  # (first line, last line, category)
    sections: dict[str, dict] = {}
    try:
        parsed = parse(text)
    except MemoryMdError as e:
        error = str(e)
    else:
        for cat, sec in parsed.sections.items():
            spans.append((sec.line, sec.end_line, cat))
            budget = (budgets or {}).get(cat, sec.budget)
            sections[cat] = {
                "used": len(sec.entries),
                "budget": budget,
                "loaded": 0,
                "line": sec.line,
            }
    seen = loaded(text, max_lines, max_chars)
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()  # the final line break ends the last line; it opens none
    lines: list[LoadLine] = []
    span_i = 0
    for i, piece in enumerate(raw, 1):
        state = seen.lines[i - 1] if i <= len(seen.lines) else LOADED
        while span_i < len(spans) and spans[span_i][1] < i:
            span_i += 1
        owner = (
            spans[span_i][2]
            if span_i < len(spans) and spans[span_i][0] <= i <= spans[span_i][1]
            else CLAUDE
        )
        shown = piece[:-1] if piece.endswith("\r") else piece
        if i == 1:
            shown = shown.removeprefix("\ufeff")
        if owner != CLAUDE and state == LOADED and shown.startswith("- ["):
            sections[owner]["loaded"] += 1
        lines.append(LoadLine(i, shown, owner, state == LOADED, state == DROPPED))
    cut = next((ln.number for ln, s in zip(lines, seen.lines) if s == CUT), None)
    return LoadView(
        lines,
        cut,
        sections,
        seen.total_lines if text.strip() else 0,
        seen.total_chars,
        max_lines,
        max_chars,
        error,
        seen.why,
    )
