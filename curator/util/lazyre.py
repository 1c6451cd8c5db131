"""Regular expressions compiled on first use, and `re` imported on first use.

`re.compile` runs in Python and costs the hook ~0.1 ms per small pattern; most
patterns are needed only when their input shows up (an ANSI escape, a
secret's prefix, a keyword's anchor), so the hook compiles only those.
Importing `re` itself (with enum, functools, collections) costs about a third of
an interpreter start: a hook call whose new text needs no pattern never pays it.
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
    """A pattern, of text or of bytes, compiled the first time it is used."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[Any] | None = None

    @property
    def rx(self) -> re.Pattern[Any]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: Any, *a):
        return self.rx.search(text, *a)

    def match(self, text: Any, *a):
        return self.rx.match(text, *a)

    def finditer(self, text: Any, *a):
        return self.rx.finditer(text, *a)

    def sub(self, repl, text: str, count: int = 0) -> str:
        return self.rx.sub(repl, text, count)
