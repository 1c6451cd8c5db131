"""Parsers of checker output, one module per family of tools; each finds the failures one output shows.

A parser takes an `Output` (the cleaned, bounded lines, their text, the
command and what `classify` said of it) and returns
`Found` records in raw form (paths as printed, message not normalised);
`curator.rules.signature` normalises them into `Failure`s. A parser that does
not recognise the output returns nothing, and the next one is asked.
"""

from __future__ import annotations


class Found:
    """One failure as a parser read it: raw message and paths, the output lines that show it."""

    __slots__ = ("kind", "tool", "test", "error_type", "message", "files", "excerpt")

    def __init__(
        self,
        kind: str,
        tool: str,
        *,
        test: str = "",
        error_type: str = "",
        message: str = "",
        files=(),
        excerpt=(),
    ) -> None:
        self.kind, self.tool, self.test, self.error_type = kind, tool, test, error_type
        self.message, self.files, self.excerpt = message, list(files), list(excerpt)

    def __repr__(self) -> str:
        return f"Found({self.kind}, {self.tool}, {self.test!r}, {self.error_type!r}, {self.message!r}, {self.files})"


class Output:
    """What every parser reads: the output's lines and text (cleaned, bounded), the command, its class."""

    __slots__ = ("lines", "text", "command", "kind", "tool")

    def __init__(self, lines: list[str], command: str, classified: tuple[str, str] | None) -> None:
        self.lines, self.command = lines, command
        self.text = "\n".join(lines)
        self.kind, self.tool = classified or ("", "")
