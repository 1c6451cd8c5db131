"""Transcript text is data: strip what could change a terminal or a file's structure."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

# CSI / OSC / other ESC sequences.
_ANSI = LazyRegex(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# C0/C1 controls except \t and \n, line/paragraph separators, bidi overrides and isolates.
_CONTROL = LazyRegex("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


def clean(text: str) -> str:
    """Drop ANSI escapes and control characters (bidi overrides included); keep tabs and newlines."""
    # Most text is clean: two C-speed checks spare compiling and running the regex.
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", text)


def one_line(text: str, limit: int = 300) -> str:
    """A single display line: cleaned, whitespace folded, cut at `limit` characters."""
    text = " ".join(clean(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:  # end at a word when one is near
        cut = cut[:space]
    return cut + "…"
