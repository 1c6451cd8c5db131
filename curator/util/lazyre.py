"""Regular expressions compiled on first use, and `re` imported on first use.

`re.compile` runs in Python and costs the hook ~0.1 ms per small pattern; most
patterns are needed only when their input shows up (an ANSI escape, a
secret's prefix, a keyword's anchor), so the hook compiles only those.
Importing `re` itself (with enum, functools, collections) costs about a third of
an interpreter start: a hook call whose new text needs no pattern never pays it.

A pattern given `needles` (substrings, one of which is in every text it can match) tries them first: a
text holding none of them cannot match, so it is answered without the pattern being compiled or run.
The failure parsers match dozens of patterns line by line where few can ever match; each needle must be
a necessary condition of its pattern (tests/engine/test_pattern_gates.py holds them to the samples).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    import re
    from typing import Any

# re's flags, as the patterns below are given them without importing re (re.I, re.M and re.S)
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16


class LazyRegex:
    """A pattern, of text or of bytes, compiled the first time it is used; with `needles`, the first time
    a text holds one of them (see above)."""

    __slots__ = ("pattern", "flags", "needles", "_compiled")

    def __init__(self, pattern: str | bytes, flags: int = 0, needles: tuple = ()) -> None:
        if needles and flags & IGNORECASE:
            raise ValueError("needles are matched case-sensitively")
        self.pattern = pattern
        self.flags = flags
        self.needles = needles
        self._compiled: re.Pattern[Any] | None = None

    def could_match(self, text: Any) -> bool:
        """False when `text` holds none of the needles, so the pattern cannot match anywhere in it."""
        for needle in self.needles:  # a loop, not any(): no generator per line
            if needle in text:
                return True
        return not self.needles

    @property
    def rx(self) -> re.Pattern[Any]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    # (`self.needles and` first: a pattern without needles pays one attribute test)
    def search(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return None
        return self.rx.search(text, *a)

    def match(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return None
        return self.rx.match(text, *a)

    def finditer(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return iter(())
        return self.rx.finditer(text, *a)

    def sub(self, repl, text: str, count: int = 0) -> str:
        if self.needles and not self.could_match(text):
            return text
        return self.rx.sub(repl, text, count)
