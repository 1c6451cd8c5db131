"""The memories a check reads, each once: the library's entries (both owners) with their text, and
where a memory file's body starts (the part a fix may mark)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcurate.curator.categories import CLAUDE
from memcurate.curator.library.entries import Entry, is_line_ref
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

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


def memory_texts(engine: Context, entries=None) -> list[Text]:
    """Every readable memory of the library (archived ones too; of `entries` when given), with its text."""
    from memcurate.curator.library import catalog

    out = []
    lines: dict[str, str] | None = None  # Claude's MEMORY.md lines, read once for all of them
    for entry in catalog.entries(engine) if entries is None else entries:
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
    """The entry's text (a MEMORY.md line of Claude's: the line); None when it is gone or unreadable since
    listed (the next run sees it). memcurate's files are read straight from the path the index gave, not
    parsed: the one who needs the document parses it, once (library_entry would parse each file and
    MEMORY.md again for every memory: 10,000 of them took minutes). Claude's through the library, which
    knows their encodings and lines."""
    if entry.owner != CLAUDE and getattr(entry, "path", ""):
        try:
            with open(entry.path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
            # its line breaks as they are
            return data.decode("utf-8") if len(data) <= MAX_FILE_BYTES else None
        except (OSError, UnicodeDecodeError):
            return None
    from memcurate.curator.library import catalog

    try:
        return catalog.entry(engine, entry.ref).text
    except (LookupError, OSError, ValueError):  # LibraryError (a KeyError): gone since the listing
        return None
