"""What the library lists: one Entry per memory, memcurate's or Claude's own, and the ref that names it.

A ref is one string that names a memory anywhere in the library (the shared design of issue 14):

    decision/use-jwt-for-api-auth      a memcurate memory: <category>/<id>
    claude/debugging.md                a topic file of Claude's: claude/<path under the memory root, posix>
    claude/MEMORY.md#1f3a09c2b7e4      a line of Claude's in MEMORY.md: 12 hex of the sha256 of the line,
                                       stripped (stable when lines move; identical lines are one entry)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcurate.curator.categories import CATEGORIES, CLAUDE
from memcurate.curator.errors import Refusal
from memcurate.curator.util.paths import ARCHIVE_DIR
from memcurate.curator.util.stamps import content_hash

MEMCURATE = "memcurate"
MEMORY_MD = "MEMORY.md"
LINE_HASH_HEX = 12
_LINE_REF = re.compile(rf"{re.escape(MEMORY_MD)}#[0-9a-f]{{{LINE_HASH_HEX}}}\Z")


class LibraryError(Refusal, KeyError):
    """A ref that names nothing (any more), or a memory that cannot be read. The message says which."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Entry:
    """One memory as the library shows it (memcurate's from the index, Claude's files and lines)."""

    ref: str
    owner: str  # MEMCURATE | CLAUDE
    category: str  # a memcurate category, or CLAUDE
    title: str
    description: str
    where: str  # the file, relative to the memory root (a Claude line: the file it links, else MEMORY.md)
    path: str  # absolute
    status: str  # "active" | "archived" ("active" for Claude's)
    created: str  # ISO UTC; a Claude file: its mtime; a Claude line: MEMORY.md's mtime
    updated: str
    sources: tuple[str, ...]  # session ids
    tags: tuple[str, ...]
    hash: str  # sha256 of the file's bytes; a Claude line: of its text (stripped)
    line: int  # 1-based MEMORY.md line: a Claude line's own; a file's first linking line; 0: none
    broken: str  # "" or why it cannot be read


@dataclass(frozen=True)
class Opened:
    """A memory read now to act on (Engine.library_entry): its entry, the text (a Claude line: the line
    itself), and the hash a change must name as its base."""

    entry: Entry
    text: str
    hash: str


def memory_ref(category: str, id: str) -> str:
    return f"{category}/{id}"


def file_ref(where: str) -> str:
    """The ref of Claude's topic file at `where` (posix, relative to the memory root)."""
    return f"{CLAUDE}/{where}"


def line_hash(text: str) -> str:
    """The hash of a Claude line of MEMORY.md (its base hash in a change): of the line, stripped."""
    return content_hash(text.strip())


def line_ref(text: str) -> str:
    return f"{CLAUDE}/{MEMORY_MD}#{line_hash(text)[:LINE_HASH_HEX]}"


def is_line_ref(ref: str) -> bool:
    return ref.startswith(f"{CLAUDE}/{MEMORY_MD}#")


def parse_ref(ref) -> tuple[str, str, str]:
    """(owner, category, rest) of a ref: rest is the id, the topic file's path, or `MEMORY.md#<hash>`.
    ValueError naming the ref when it names nothing the library could hold (a path leaving the root...)."""
    if not isinstance(ref, str) or not ref or "\x00" in ref or "\\" in ref:
        raise ValueError(f"not a library ref: {ref!r:.120}")
    head, sep, rest = ref.partition("/")
    if not sep or not rest:
        raise ValueError(
            f"not a library ref: {ref!r:.120} (expected <category>/<id> or claude/<path>)"
        )
    if head == CLAUDE:
        if "#" in rest:
            if not _LINE_REF.match(rest):
                raise ValueError(
                    f"not a library ref: {ref!r:.120} (a line of Claude's is claude/MEMORY.md#<12 hex>)"
                )
            return CLAUDE, CLAUDE, rest
        parts = rest.split("/")
        # a file archived by memcurate (its lines are redacted in place)
        if parts[0] == ARCHIVE_DIR:
            parts = parts[1:]
        if (
            not rest.endswith(".md")
            or rest.startswith("/")
            or any(p in ("", ".", "..") for p in parts)
            or any(p.startswith(".") for p in parts)
        ):
            raise ValueError(
                f"not a library ref: {ref!r:.120} (a topic file of Claude's is claude/<path>.md "
                "inside the memory root)"
            )
        return CLAUDE, CLAUDE, rest
    if head not in CATEGORIES:
        raise ValueError(
            f"not a library ref: {ref!r:.120} (unknown category {head!r:.40}; expected one of "
            f"{', '.join(CATEGORIES)} or {CLAUDE})"
        )
    if "/" in rest or rest.startswith(".") or rest.endswith(".md"):
        # a file whose name is no valid id is still named (listed as broken, and can be removed)
        raise ValueError(
            f"not a library ref: {ref!r:.120} (a memory is <category>/<id>, its file "
            f"<category>/<id>.md)"
        )
    return MEMCURATE, head, rest
