"""The archive: the entries MEMORY.md has no room for, one file per category.

`<root>/.archive/<category>.md` holds a header line, then entry lines whose
links point back at the memory files (`../<category>/<id>.md`), newest first:
each newly archived batch goes on top, in its MEMORY.md order, so the
section followed by its archive reads as one newest-first list. An id is
there at most once (re-archiving replaces its old line). An entry upserted
back into MEMORY.md, or removed, leaves the archive. Lines of the archive file
that are not entries are kept.
"""

from __future__ import annotations

import os
import re

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory.memory_md.format import (
    EM_DASH,
    GONE,
    ID_PATTERN,
    LINK_TEXT,
    IndexLine,
    MemoryMdError,
    line_digest,
    read_text,
    rewrite_lines,
    unescape,
)
from memcurate.curator.util.paths import ARCHIVE_DIR

# An archive entry links from .archive/ back to the memory file: ../<category>/<id>.md
_ARCHIVE_ENTRY = re.compile(
    rf"- \[({LINK_TEXT})\]\((?:\.\./)?([a-z_]+)/({ID_PATTERN})\.md\)(?: {EM_DASH} (.*))?\Z"
)


def archive_path(memory_root, category: str) -> str:
    if category not in CATEGORIES:
        raise MemoryMdError(f"unknown category {category!r:.60}")
    return os.path.join(os.fspath(memory_root), ARCHIVE_DIR, f"{category}.md")


def archive_header(category: str) -> str:
    # Two kinds of lines land here: past the section's budget (the memory itself unchanged, in <category>/),
    # and archived memories (their files moved to .archive/<category>/): the header says both.
    return (
        f"# Archived from MEMORY.md: {CATEGORIES[category].section} (newest first: lines past the "
        f"section's budget, their memories unchanged in {category}/; and archived memories, their files in "
        f"{ARCHIVE_DIR}/{category}/)\n"
    )


def _archive_entry(line: str, category: str) -> IndexLine | None:
    m = _ARCHIVE_ENTRY.match(line.rstrip())
    if m is None or m.group(2) != category:
        return None
    return IndexLine(m.group(3), category, unescape(m.group(1)), unescape(m.group(4) or ""))


def _archive_id(line: str, category: str) -> str | None:
    e = _archive_entry(line, category)
    return e.id if e else None


def archive_add(text: str | None, category: str, batch: list[IndexLine]) -> str:
    """The archive file with `batch` (newest first) on top of its entries; older lines of those ids go.
    Only the header is looked at line by line (and the entries when one of the ids is named): the cost of a
    large archive is a copy, not a parse of every line."""
    if not text:
        text = archive_header(category) + "\n"
    nl = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
    first = 0  # where the first entry starts: the header is the lines above it
    while first < len(text):
        end = text.find("\n", first)
        end = len(text) if end < 0 else end + 1
        if _archive_id(text[first:end], category) is not None:
            break
        first = end
    head, rest = text[:first], text[first:]
    if head and not head.endswith("\n"):
        head += nl
    ids = {e.id for e in batch}
    if _names_any(rest, category, ids):
        rest = "".join(
            ln for ln in re.split(r"(?<=\n)", rest) if ln and _archive_id(ln, category) not in ids
        )
    if rest and not rest.endswith("\n"):
        rest += nl
    return head + "".join(e.markdown("../") + nl for e in batch) + rest


def archive_drop(text: str, category: str, ids) -> str:
    """The archive file without the entries of `ids`."""
    ids = set(ids)
    if not _names_any(text, category, ids):
        return text  # the common case (a saved memory that was never archived): no line parsed
    return "".join(
        ln for ln in re.split(r"(?<=\n)", text) if ln and _archive_id(ln, category) not in ids
    )


def _names_any(text: str, category: str, ids) -> bool:
    """Whether `text` may hold an entry of one of `ids`: each entry links `<category>/<id>.md)`, so an id
    whose link is nowhere in the text has no entry (a substring search, not a parse of every line)."""
    return any(f"{category}/{id}.md)" in text for id in ids)


def archive_replace_line(text: str, base: str, new: str) -> str:
    """An archive file (memcurate's `.archive/<category>.md` or a topic file of Claude's archived under
    `.archive/claude/`) with the line(s) whose stripped text hashes to `base` replaced by `new` (what a
    secret's redaction does); every other byte as it was. MemoryMdError when no line is that one."""
    lines = (text[1:] if text.startswith("\ufeff") else text).split("\n")
    hits = {n for n, line in enumerate(lines, 1) if line.strip() and line_digest(line) == base}
    if not hits:
        raise MemoryMdError(f"that line is gone ({GONE})")
    return rewrite_lines(text, hits, new)


def read_archive(memory_root, category: str) -> list[IndexLine]:
    """The archived entries of a category, newest first (empty when there is no archive)."""
    text = read_text(archive_path(memory_root, category)) or ""
    return [e for e in (_archive_entry(ln, category) for ln in text.split("\n")) if e is not None]
