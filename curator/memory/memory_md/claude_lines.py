"""Claude's own lines of MEMORY.md (outside memcurate's sections) and the files MEMORY.md links to.

A line of Claude's is a non-blank line outside every memcurate section that is not a heading; MEMORY.md
is small, so it is read live, never indexed. Links are Markdown links to a `.md` file inside the memory
root (`[Debugging](debugging.md)`, `(./notes/api.md#setup)`), named by their path relative to the root.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote

from memcurate.curator.memory.memory_md.entry import unescape
from memcurate.curator.memory.memory_md.format import parse

_LINK = re.compile(r"\[((?:\\.|[^\\\]])*)\]\(\s*<?([^)<>\s]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|\Z)")
_BULLET = re.compile(r"(?:[-*+]|\d+[.)])\s+")
_JOIN = re.compile(r"^\s*(?:\u2014|--?|:|\u2013)\s*")


@dataclass(frozen=True)
class ClaudeLine:
    number: int  # 1-based
    text: str  # the line, stripped
    title: str  # its link's text, else the line without its bullet
    description: str  # what follows its link ("" without one)
    target: str  # the file it links to, relative to the root ("" when none)


def link_target(raw: str) -> str:
    """A link's target as a path relative to the memory root, "" when it names no `.md` file in it."""
    target = unquote(raw.split("#", 1)[0].split("?", 1)[0])
    if not target or target.startswith("/") or ":" in target or "\\" in target:
        return ""
    norm = posixpath.normpath(target)
    if norm.startswith("../") or norm == ".." or not norm.endswith(".md"):
        return ""
    return norm


def _lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.split("\n")


def claude_lines(text: str) -> list[ClaudeLine]:
    """Claude's lines of MEMORY.md, in order. MemoryMdError when its sections cannot be read (then which
    lines are Claude's is not known)."""
    owned = [(s.line, s.end_line) for s in parse(text).sections.values()]
    out = []
    for number, raw in enumerate(_lines(text), 1):
        s = raw.strip()
        if not s or _HEADING.match(s) or any(a <= number <= b for a, b in owned):
            continue
        m = _LINK.search(s)
        if m:
            title = unescape(m.group(1)).strip()
            description = _JOIN.sub("", s[m.end() :]).strip()
            target = link_target(m.group(2))
        else:
            title, description, target = _BULLET.sub("", s, count=1), "", ""
        out.append(ClaudeLine(number, s, title or s, description, target))
    return out


def links(text: str) -> dict[str, int]:
    """file (relative to the root) -> the first MEMORY.md line that links it, any owner's line."""
    out: dict[str, int] = {}
    for number, raw in enumerate(_lines(text), 1):
        if "](" not in raw:
            continue
        for m in _LINK.finditer(raw):
            target = link_target(m.group(2))
            if target:
                out.setdefault(target, number)
    return out


def links_of_claude(text: str) -> dict[str, int]:
    """file (relative to the root) -> the first of Claude's own lines (outside memcurate's sections) that
    links it: a memory Claude's index lists itself. MemoryMdError when the sections cannot be read."""
    out: dict[str, int] = {}
    for line in claude_lines(text):
        for m in _LINK.finditer(line.text) if "](" in line.text else ():
            target = link_target(m.group(2))
            if target:
                out.setdefault(target, line.number)
    return out
