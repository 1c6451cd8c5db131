"""Parsers of checker output, one module per family of tools; each finds the failures one output shows.

A parser takes the cleaned, bounded output lines and the command, and returns
`Found` records in raw form (paths as printed, message not normalised);
`curator.rules.signature` normalises them into `Failure`s. A parser that does
not recognise the output returns nothing, and the next one is asked.
"""

from __future__ import annotations


class Found:
    """One failure as a parser read it: raw message and paths, the output lines that show it."""

    __slots__ = ("kind", "tool", "test", "error_type", "message", "files", "excerpt")

    def __init__(self, kind: str, tool: str, *, test: str = "", error_type: str = "", message: str = "",
                 files=(), excerpt=()) -> None:
        self.kind, self.tool, self.test, self.error_type = kind, tool, test, error_type
        self.message, self.files, self.excerpt = message, list(files), list(excerpt)

    def __repr__(self) -> str:
        return f"Found({self.kind}, {self.tool}, {self.test!r}, {self.error_type!r}, {self.message!r}, {self.files})"
