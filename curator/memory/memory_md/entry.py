"""The grammar of one memcurate entry line of MEMORY.md, `- [Title](category/id.md) — description`:
its parts as patterns, and the unescaping of its text. format.py builds the full parser on it; the
recall hook reads the loaded lines with it alone (no dataclasses, no memory file format).
"""

from __future__ import annotations

import re

EM_DASH = "\u2014"
ID_PATTERN = r"[a-z0-9]+(?:-[a-z0-9]+)*"
LINK_TEXT = r"[^\\\[\]]*(?:\\.[^\\\[\]]*)*"  # link text: brackets only escaped
_UNESCAPE = re.compile(r"\\([\\\[\]<])")


def unescape(s: str) -> str:
    return _UNESCAPE.sub(r"\1", s) if "\\" in s else s
