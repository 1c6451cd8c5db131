"""MEMORY.md as Claude Code loads it: every line with its owner and whether it is loaded, where the
cut falls, and each memcurate section against its budget.

Claude Code loads the first `max_lines` lines and `max_bytes` bytes of MEMORY.md, whichever ends
first. A line the byte limit cuts in two is not loaded whole, so it counts as past the cut (what
Claude reads of it is not the memory). The owner of a line is the memcurate category whose markers
enclose it (markers and heading included), else "claude". A file memcurate's strict parser refuses
(a hand edit between the markers) is still shown, every line as Claude's, with `error` saying why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from curator.categories import CLAUDE
from curator.memory.memory_md.format import MemoryMdError, parse
from curator.memory.memory_md.planning import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, measure


@dataclass(frozen=True)
class LoadLine:
    number: int  # 1-based
    text: str  # without its line break
    owner: str  # a memcurate category, or "claude"
    loaded: bool


@dataclass
class LoadView:
    lines: list[LoadLine]
    cut: int | None  # the first line not loaded, None when all are
    sections: dict[str, dict] = field(default_factory=dict)  # category -> {used, budget, loaded, line}
    total_lines: int = 0
    total_bytes: int = 0
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES
    error: str = ""  # why memcurate's sections could not be told apart ("" when they could)

    @property
    def over(self) -> bool:
        return self.cut is not None

    def past_cut(self) -> list[LoadLine]:
        return [ln for ln in self.lines if not ln.loaded]

    def to_dict(self) -> dict:
        return asdict(self)


def load_view(text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES,
              budgets: dict[str, int] | None = None) -> LoadView:
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
            sections[cat] = {"used": len(sec.entries), "budget": budget, "loaded": 0, "line": sec.line}
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()  # the final line break ends the last line; it opens none
    lines: list[LoadLine] = []
    used_bytes = 0
    cut = None
    span_i = 0
    for i, piece in enumerate(raw, 1):
        used_bytes += len(piece.encode("utf-8")) + (1 if i < len(raw) or text.endswith("\n") else 0)
        loaded = i <= max_lines and used_bytes <= max_bytes
        if not loaded and cut is None:
            cut = i
        while span_i < len(spans) and spans[span_i][1] < i:
            span_i += 1
        owner = spans[span_i][2] if span_i < len(spans) and spans[span_i][0] <= i <= spans[span_i][1] else CLAUDE
        shown = piece[:-1] if piece.endswith("\r") else piece
        if i == 1:
            shown = shown.removeprefix("\ufeff")
        if owner != CLAUDE and loaded and shown.startswith("- ["):
            sections[owner]["loaded"] += 1
        lines.append(LoadLine(i, shown, owner, loaded))
    total_lines, total_bytes = measure(text)
    return LoadView(lines, cut, sections, total_lines, total_bytes, max_lines, max_bytes, error)
