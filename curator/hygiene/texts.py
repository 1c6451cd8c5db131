"""The memories a check reads, each once: the library's entries (both owners) with their text, and
where a memory file's body starts (the part a fix may mark)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcurate.curator.library.entries import Entry, is_line_ref

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


def memory_texts(engine) -> list[Text]:
    """Every readable memory of the library (archived ones too), with its text."""
    out = []
    for entry in engine.library():
        if entry.broken:
            continue
        try:
            text = engine.library_entry(entry.ref)["text"]
        except (LookupError, OSError, ValueError):  # LibraryError (a KeyError): gone since the listing
            continue
        out.append(Text(entry, text))
    return out
