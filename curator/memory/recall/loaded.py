"""What Claude already has of MEMORY.md: the part Claude Code loads (memory_md/loaded.py, its model of
Claude Code's loader: comment lines dropped, 200 lines, 25,000 characters), and the memcurate entries in it.

Read tolerantly, line by line, not with memory_md's strict parser: recall never writes the file, and
a MEMORY.md that parser would refuse (a hand edit between the markers) still tells which memory
lines Claude has. A line cut by the character limit is not loaded whole: its memory counts as past the cut.
"""

from __future__ import annotations

import os
import re

from memcurate.curator.memory.memory_md.entry import EM_DASH, ID_PATTERN, LINK_TEXT, unescape
from memcurate.curator.memory.memory_md.loaded import (
    FILE_NAME,
    LOADED,
    MAX_CHARS,
    MAX_LINES,
    loaded,
)

MEMORY_MD = FILE_NAME
READ_MAX = 4 << 20  # Claude Code skips a MEMORY.md larger than this (4 MiB): then nothing is loaded
_ENTRY = re.compile(
    rf"\s*- \[({LINK_TEXT})\]\(([a-z_]+)/({ID_PATTERN})\.md\)(?: {EM_DASH} (.*))?\s*\Z"
)


def loaded_entries(
    root: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS
) -> tuple[dict[str, str], str | None]:
    """({"<category>/<id>": the entry's text as Claude reads it}, problem): the memcurate entries in the
    loaded part of `<root>/MEMORY.md`. No file: nothing loaded. A file that cannot be read or is not
    UTF-8: what can be read of it, and the problem for the log."""
    path = os.path.join(root, MEMORY_MD)
    problem = None
    try:
        with open(path, "rb") as f:
            data = f.read(READ_MAX + 1)
    except FileNotFoundError:
        return {}, None
    except OSError as e:
        return {}, f"{MEMORY_MD} cannot be read ({e.strerror or e}): every memory given in full"
    if len(data) > READ_MAX:
        return {}, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        problem = f"{MEMORY_MD} is not UTF-8 (byte {e.start}): its lines read as far as they can be"
        text = data.decode("utf-8", "replace")
    states = loaded(text, max_lines, max_chars).lines
    found: dict[str, str] = {}
    for line, state in zip(text.split("\n"), states):
        m = _ENTRY.match(line.removeprefix("\ufeff")) if state == LOADED else None
        if m:
            title, category, id_, description = m.groups()
            found[f"{category}/{id_}"] = f"{unescape(title)} {unescape(description or '')}"
    return found, problem
