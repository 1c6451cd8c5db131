"""The memories a check reads, each once: the library's entries (both owners) with their text, and
where a memory file's body starts (the part a fix may mark). Within `reading` (check.run), the library
is listed and each file read once for every detector: at 10,000 memories each listing costs a third of
a second and each reading of the files another."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from memcurate.curator.categories import CLAUDE
from memcurate.curator.library.entries import Entry, is_line_ref
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES
from memcurate.curator.util.safe_open import read_path

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

T = TypeVar("T")

_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^---[ \t]*\r?$\n?", re.S | re.M)


@dataclass(frozen=True)
class Text:
    entry: Entry
    text: str  # the file's text; a MEMORY.md line of Claude's: the line

    @property
    def ref(self) -> str:
        return self.entry.ref

    @property
    def is_line(self) -> bool:
        return is_line_ref(self.entry.ref)

    @property
    def body_start(self) -> int:
        """Offset of the text after its front matter (0 when it has none)."""
        m = _FRONT.match(self.text)
        return m.end() if m else 0


@dataclass
class _Read:
    """What one check has read: the library's entries, and each file's text by (ref, where)."""

    engine: object
    entries: list[Entry] | None = None
    texts: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # what a detector derives of them once for the others (duplicates' memories): in memory only
    derived: dict[str, object] = field(default_factory=dict)


# per thread (a check may run in a worker of the TUI while its other threads read the library)
_READ: ContextVar[_Read | None] = ContextVar("hygiene_read", default=None)


@contextmanager
def reading(engine: Context) -> Iterator[None]:
    """Within it, `library_entries` and `text_of` of `engine` read the library once: what one check's detectors
    see is one listing of it (none of them writes a memory)."""
    token = _READ.set(_Read(engine))
    try:
        yield
    finally:
        _READ.reset(token)


def _read(engine: Context) -> _Read | None:
    read = _READ.get()
    return read if read is not None and read.engine is engine else None


def library_entries(engine: Context) -> list[Entry]:
    """The library's entries (catalog.entries), listed once within `reading`."""
    from memcurate.curator.library import catalog

    read = _read(engine)
    if read is None:
        return catalog.entries(engine)
    if read.entries is None:
        read.entries = catalog.entries(engine)
    return read.entries


def once(engine: Context, key: str, fn: Callable[[], T], *, again: bool = False) -> T:
    """`fn()`, found once within `reading` for every detector (and a forked child after); `again`: found
    now, in place of what was found before. Held in this process alone, for one check."""
    read = _read(engine)
    if read is None:
        return fn()
    if again or key not in read.derived:
        read.derived[key] = fn()
    return read.derived[key]  # type: ignore[return-value]


def peek(engine: Context, key: str) -> object | None:
    """What `once` found for `key` within this `reading`; None when nothing asked for it."""
    read = _read(engine)
    return None if read is None else read.derived.get(key)


def memory_texts(engine: Context, entries=None) -> list[Text]:
    """Every readable memory of the library (archived ones too; of `entries` when given), with its text."""
    from memcurate.curator.library import catalog

    out = []
    lines: dict[str, str] | None = None  # Claude's MEMORY.md lines, read once for all of them
    for entry in library_entries(engine) if entries is None else entries:
        if entry.broken:
            continue
        if is_line_ref(entry.ref):
            if lines is None:
                lines = catalog.line_texts(engine)
            text = lines.get(entry.ref)
        else:
            text = text_of(engine, entry)
        if text is not None:
            out.append(Text(entry, text))
    return out


def text_of(engine: Context, entry) -> str | None:
    """`_text_of`, each file read once within `reading`."""
    read = _read(engine)
    if read is None:
        return _text_of(engine, entry)
    key = (entry.ref, getattr(entry, "where", ""))
    if key not in read.texts:
        read.texts[key] = _text_of(engine, entry)
    return read.texts[key]


def known_text(engine: Context, entry, text: str) -> None:
    """`entry`'s text, read by a forked child: `text_of` gives it within `reading` without reading it
    again."""
    read = _read(engine)
    if read is not None:
        read.texts.setdefault((entry.ref, getattr(entry, "where", "")), text)


def _text_of(engine: Context, entry) -> str | None:
    """The entry's text (a MEMORY.md line of Claude's: the line); None when it is gone or unreadable since
    listed (the next run sees it). memcurate's files are read straight from the path the index gave, not
    parsed: the one who needs the document parses it, once (library_entry would parse each file and
    MEMORY.md again for every memory: 10,000 of them took minutes). Claude's through the library, which
    knows their encodings and lines."""
    if entry.owner != CLAUDE and getattr(entry, "path", ""):
        try:
            # open, read, close (a buffered file's five calls more: a tenth of a check's reading)
            data = read_path(entry.path, MAX_FILE_BYTES)
            # its line breaks as they are
            return data.decode("utf-8") if len(data) <= MAX_FILE_BYTES else None
        except (OSError, UnicodeDecodeError):
            return None
    from memcurate.curator.library import catalog

    try:
        return catalog.entry(engine, entry.ref).text
    except (LookupError, OSError, ValueError):  # LibraryError (a KeyError): gone since the listing
        return None
