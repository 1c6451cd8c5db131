"""The library's search as you type: full text over memcurate's memories and Claude's topic files (the
index's FTS5 tables), the last word a prefix while it is being typed, plus Claude's lines of MEMORY.md
matched as plain text.

The query is never FTS5 syntax: it is cut into words the way the index's tokenizer cuts text, each one
quoted, all of them required (each word typed narrows the list), so `"`, `*`, `-`, `NEAR` or unbalanced
parentheses are words or nothing, never an error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memcurate.curator.library.entries import CLAUDE, file_ref, line_ref, memory_ref

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

_WORD = re.compile(r"[^\W_]+")  # a token of the index's unicode61 tokenizer: letters and digits
MAX_WORDS = 16
RANKED_FROM = 3  # letters typed before the matches are ranked: "a" matches nearly every memory


def match_expression(query: str) -> str:
    """The FTS5 MATCH string for what was typed: every word required, the last one a prefix unless a
    space follows it; "" when the query holds no word."""
    words = _WORD.findall(query.lower())[:MAX_WORDS]
    if not words:
        return ""
    quoted = ['"' + w + '"' for w in words]  # a token holds no quote: nothing to escape
    if not query[-1:].isspace():
        quoted[-1] += "*"
    return " AND ".join(quoted)


def search(engine: Context, query: str, limit: int = 500) -> list[str]:
    """Refs matching `query`, best first (bm25, the title weighing most), then Claude's lines holding
    it; an empty query (or one without a word): every ref, as `Engine.library` lists them."""
    query = query if isinstance(query, str) else ""
    expr = match_expression(query)
    if not expr:
        from memcurate.curator.library import catalog

        return [e.ref for e in catalog.entries(engine)]
    ranked = sum(len(w) for w in _WORD.findall(query)) >= RANKED_FROM
    refs = [
        file_ref(name)
        if category == CLAUDE
        # an archived memory's name is a path: its id ends it
        else memory_ref(category, name.rsplit("/", 1)[-1].removesuffix(".md"))
        for category, name, _score in engine.index.search(expr, limit, ranked)
    ]
    needle = " ".join(query.split()).lower()
    if needle and len(refs) < limit:
        refs += [r for r in _lines_holding(engine, needle) if r not in refs]
    return refs[:limit]


def _lines_holding(engine: Context, needle: str) -> list[str]:
    """Claude's lines holding `needle` as they are shown: a secret in one is never found by its value."""
    from memcurate.curator.library.catalog import claude_lines
    from memcurate.curator.util.redact import redact_text

    return list(
        dict.fromkeys(
            line_ref(line.text)
            for line in claude_lines(engine.root)
            if needle in " ".join(redact_text(line.text).split()).lower()
        )
    )
