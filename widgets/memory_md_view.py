"""MEMORY.md as Claude Code loads it (curator/memory/memory_md/loading.LoadView), drawn: every line
numbered, a rule where loading stops, what falls past it dimmed and marked "not loaded", the comment lines
Claude Code drops (memcurate's markers) marked so, and each of
memcurate's sections headed with its entries against its budget. The file's text is data (escaped)."""

from __future__ import annotations

from rich.text import Text

from memcurate.curator.categories import CLAUDE
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.textsafe import clean as display


def _limit(view) -> str:
    return f"{view.max_lines} lines / {view.max_chars:,} characters"


def summary(view) -> Text:
    head = Text.assemble(
        ("MEMORY.md", "bold"),
        f": {view.total_lines} lines, {view.total_chars:,} characters as loaded — Claude Code "
        f"loads {_limit(view)}: ",
    )
    past = len(view.past_cut())
    if past:
        head.append(
            f"{past} line{'' if past == 1 else 's'} not loaded (from line {view.cut})",
            style="bold red",
        )
    else:
        head.append("every line is loaded", style="green")
    return head


def render_load_view(view) -> Text:
    """The lines (the summary is the panel's title: kept in sight as it scrolls, and said once)."""
    out = Text()
    if view.error:
        out.append(
            f"memcurate's sections cannot be told apart: {display(view.error)}\n", style="yellow"
        )
    if not view.lines:
        out.append("MEMORY.md is empty or missing.\n", style="dim")
    headed: set[str] = set()
    width = max(3, len(str(len(view.lines))))
    for line in view.lines:
        if line.number == view.cut:
            out.append(
                f"{'─' * 8} Claude Code stops loading here: {_limit(view)} {'─' * 8}\n",
                style="bold red",
            )
        dropped = getattr(line, "dropped", False)
        gutter = f"{line.number:>{width}} " + ("│ " if line.loaded else "· " if dropped else "✗ ")
        out.append(gutter, style="dim" if line.loaded or dropped else "red")
        text = display(redact_text(line.text))  # a key on screen is a key leaked
        style = "" if line.owner == CLAUDE else "cyan"
        if not line.loaded:
            style = "dim"
        out.append(text, style=style)
        section = view.sections.get(line.owner) if line.owner != CLAUDE else None
        if section is not None and line.owner not in headed and text.startswith("#"):
            headed.add(line.owner)  # the section's heading: its entries against its budget
            used, budget = section.get("used", 0), section.get("budget", 0)
            out.append(
                f"  {used}/{budget}", style="bold red" if budget and used > budget else "bold green"
            )
            if section.get("loaded", used) < used:
                out.append(f" ({used - section['loaded']} not loaded)", style="red")
        if dropped and line.text.strip():
            out.append("  (a comment: Claude Code drops it)", style="italic dim")
        elif not line.loaded:
            out.append("  not loaded", style="italic red")
        out.append("\n")
    return out
