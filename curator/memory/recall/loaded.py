"""What Claude already has of MEMORY.md: the part Claude Code loads (its first `memory_md.max_lines`
lines and `memory_md.max_bytes` bytes, whichever ends first), and the memcurate entries in it.

Read tolerantly, line by line, not with memory_md's strict parser: recall never writes the file, and
a MEMORY.md that parser would refuse (a hand edit between the markers) still tells which memory
lines Claude has. A line cut by the byte limit is not loaded whole: its memory counts as past the cut.
"""

from __future__ import annotations

import os
import re

from curator.memory.memory_md.entry import EM_DASH, ID_PATTERN, LINK_TEXT, unescape

MEMORY_MD = "MEMORY.md"
_ENTRY = re.compile(rf"\s*- \[({LINK_TEXT})\]\(([a-z_]+)/({ID_PATTERN})\.md\)(?: {EM_DASH} (.*))?\s*\Z")


def loaded_entries(root: str, max_lines: int, max_bytes: int) -> tuple[dict[str, str], str | None]:
    """({"<category>/<id>": the entry's text as Claude reads it}, problem): the memcurate entries in the
    loaded part of `<root>/MEMORY.md`. No file: nothing loaded. A file that cannot be read or is not
    UTF-8: what can be read of it, and the problem for the log."""
    path = os.path.join(root, MEMORY_MD)
    problem = None
    try:
        with open(path, "rb") as f:
            data = f.read(max(0, max_bytes))
    except FileNotFoundError:
        return {}, None
    except OSError as e:
        return {}, f"{MEMORY_MD} cannot be read ({e.strerror or e}): every memory given in full"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(data) - 3:  # not only a character cut by the byte limit
            problem = f"{MEMORY_MD} is not UTF-8 (byte {e.start}): its lines read as far as they can be"
        text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if len(data) == max_bytes and lines:
        lines.pop()  # cut by the byte limit (or ends exactly there: then Claude has it; a miss costs a repeat)
    found: dict[str, str] = {}
    for line in lines[:max_lines]:
        m = _ENTRY.match(line.removeprefix("\ufeff"))
        if m:
            title, category, id_, description = m.groups()
            found[f"{category}/{id_}"] = f"{unescape(title)} {unescape(description or '')}"
    return found, problem
