"""Transcript text is data: strip what could change a terminal or a file's structure."""

from __future__ import annotations

from .lazyre import LazyRegex

# CSI / OSC / other ESC sequences.
_ANSI = LazyRegex(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# C0/C1 controls except \t and \n, line/paragraph separators, bidi overrides and isolates.
_DROP = {c: None for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
                           0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def clean(text: str) -> str:
    """Drop ANSI escapes and control characters (bidi overrides included); keep tabs and newlines."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_DROP)


def one_line(text: str, limit: int = 300) -> str:
    """A single display line: cleaned, whitespace folded, cut at `limit` characters."""
    text = " ".join(clean(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
