"""Regular expressions compiled on first use.

`re.compile` runs in Python and costs the hook ~0.1 ms per small pattern; most
patterns are needed only when their input shows up (an ANSI escape, a
secret's prefix, a keyword's anchor), so the hook compiles only those.
"""

from __future__ import annotations

import re


class LazyRegex:
    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *a):
        return self.rx.search(text, *a)

    def match(self, text: str, *a):
        return self.rx.match(text, *a)

    def finditer(self, text: str, *a):
        return self.rx.finditer(text, *a)

    def sub(self, repl, text: str, count: int = 0) -> str:
        return self.rx.sub(repl, text, count)
