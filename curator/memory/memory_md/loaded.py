"""MEMORY.md as Claude Code loads it: the one model of its cut (budgets, `check`, the library's view and
recall all ask this module). Checked against Claude Code 2.1.328 (its native binary's own code):

1. a YAML front matter block (`---` ... `---`) is dropped;
2. HTML comments that stand on lines of their own are dropped, with their lines and the blank lines after
   them: a line that opens with `<!--` (up to three spaces before it, outside code fences and list items)
   through the line that closes it (`-->`, a multi-line comment too); whatever else stands on those lines
   stays (`<!-- x --> text` keeps ` text`). memcurate's markers go this way;
3. the text is trimmed of leading and trailing whitespace;
4. over 200 lines: the first 200 kept; then over 25,000 characters (UTF-16 code units, not bytes: an emoji
   counts 2): cut at the last line break at or before the 25,000th, or at 25,000 when line 1 is longer;
5. a cut file gets a blank line and a warning appended (`> WARNING: MEMORY.md is ...`).

To re-check a new Claude Code: put a MEMORY.md in the memory folder of a private HOME, run `claude -p` against
a scripted Messages API on 127.0.0.1, and compare the MEMORY.md text in its first request with
`loaded(text).text` (tests/engine/test_memory_md_loaded.py holds the cases and what 2.1.328 loaded of them).

Pure and small (no file access, standard library only): the recall hook imports it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CHECKED_AGAINST = "2.1.328"  # the Claude Code version whose loader this models
MAX_LINES = 200
MAX_CHARS = 25_000  # UTF-16 code units
FILE_NAME = "MEMORY.md"

DROPPED, LOADED, CUT = "dropped", "loaded", "cut"  # what Claude Code does with a line of the file

# JavaScript's String.prototype.trim: its WhiteSpace and LineTerminator (a byte-order mark included).
_JS_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_FRONT_MATTER = re.compile(r"---\s*\n[\s\S]*?---\s*\n?")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_COMMENT_START = re.compile(r" {0,3}<!--")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_LIST_ITEM = re.compile(r"( {0,3})([-+*]|\d{1,9}[.)])( {1,4}|[ \t]*$)")
_BREAKS = re.compile(r"\r\n?|[\u2028\u2029]")
_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_KEEP_FORMAT = {0x200C, 0x200D, 0xFE0E, 0xFE0F}


@dataclass(frozen=True)
class Loaded:
    """What Claude Code makes of a MEMORY.md text."""

    text: str  # what Claude reads (the warning included when cut)
    lines_kept: int  # lines of it loaded whole (comment lines not counted), the warning not counted
    cut: bool  # part of the file is not loaded
    why: str  # the warning Claude Code appends when it cuts ("" when it does not)
    lines: tuple[str, ...] = ()  # per line of the file (split at "\n"): DROPPED, LOADED or CUT
    total_lines: int = 0  # lines as Claude Code counts them (comments dropped, trimmed)
    total_chars: int = 0  # UTF-16 code units, counted the same way

    def first_cut(self) -> int | None:
        """The first line of the file (1-based) that is not loaded whole, None when none is."""
        return next((n for n, s in enumerate(self.lines, 1) if s == CUT), None)


def limits_from(cfg: dict) -> tuple[int, int]:
    """(lines, characters) memcurate keeps MEMORY.md within, as Claude Code loads it: config
    `memory_md.max_lines` and `memory_md.max_bytes` (counted in UTF-16 code units as Claude Code counts;
    the key keeps its old name). Their defaults are Claude Code's own; lower keeps a smaller index, higher
    is for a Claude Code that loads more than the one checked."""
    m = cfg.get("memory_md") or {}
    return int(m.get("max_lines", MAX_LINES)), int(m.get("max_bytes", MAX_CHARS))


def utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def _split(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _without_comments(lines: list[str], first: int) -> list[tuple[int, str]]:
    """(line number, text) of what stays once comment-only lines are dropped (step 2), from `lines`
    (numbered from `first`)."""
    out: list[tuple[int, str]] = []
    fence: tuple[str, int] | None = None
    list_indent: int | None = None  # content indentation of the open list item
    blank_before = True
    i = 0
    while i < len(lines):
        line = lines[i]
        body = line.rstrip("\r\n")
        if fence is not None:
            out.append((first + i, line))
            stripped = body.strip()
            if (
                len(body) - len(body.lstrip(" ")) <= 3
                and stripped
                and set(stripped) == {fence[0]}
                and len(stripped) >= fence[1]
            ):
                fence = None
            i += 1
            continue
        indent = len(body) - len(body.lstrip(" "))
        if list_indent is not None and body.strip() and indent < list_indent and blank_before:
            list_indent = None  # a list item ends at an unindented line after a blank one
        inside_item = list_indent is not None and body.strip() and indent >= list_indent
        if _COMMENT_START.match(body) and not inside_item:
            start = body.index("<!--")
            j, end = i, line.find("-->", start + 2)
            while end < 0 and j + 1 < len(lines):
                j += 1
                end = lines[j].find("-->")
            if end < 0:  # never closed: an HTML block to the end, kept as it is
                out.extend((first + k, lines[k]) for k in range(i, len(lines)))
                break
            k = j + 1
            while k < len(lines) and lines[k] in ("\n", "\r\n"):
                k += 1
            raw = "".join(lines[i:k])
            rest = _COMMENT.sub("", raw.replace("\r\n", "\n"))
            if rest.strip(_JS_SPACE):
                out.extend((first + i + n, piece) for n, piece in enumerate(_split(rest)))
            list_indent, blank_before = None, k > j + 1
            i = k
            continue
        f = _FENCE.match(body)
        if f and not (f.group(1)[0] == "`" and "`" in f.group(2)) and not inside_item:
            fence = (f.group(1)[0], len(f.group(1)))
            list_indent = None
        else:
            m = _LIST_ITEM.match(body)
            if m and (list_indent is None or indent < list_indent):
                list_indent = (
                    len(m.group(0))
                    if m.group(3).strip(" \t") == "" and len(m.group(3)) <= 4
                    else indent + 2
                )
        out.append((first + i, line))
        blank_before = not body.strip()
        i += 1
    return out


def _cleaned(text: str) -> str:
    """What Claude Code does to the loaded text after the cut: line breaks made "\\n", control and format
    characters dropped (tab and line break kept)."""
    text = _ASCII_CONTROLS.sub("", _BREAKS.sub("\n", text))
    if text.isascii():
        return text
    drop = {
        ord(c): None
        for c in set(text)
        if ord(c) > 0x7F
        and ord(c) not in _KEEP_FORMAT
        and unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn", "Cs")
    }
    return text.translate(drop) if drop else text


def _size(n: int) -> str:
    """Claude Code's size words (`an`): bytes below 1 KB, else KB with one decimal ("24.4KB", "25KB")."""
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f}".removesuffix(".0") + "KB"


def _shortened(text: str, n: int) -> str:
    """At most `n` UTF-16 units, cut at a word with "…" (Claude Code's `pU`: JavaScript lengths and slices
    count UTF-16 units, so an emoji counts two and a cut may split one; the contract suite checks it)."""
    if utf16_len(text) <= n:
        return text
    head = text.encode("utf-16-le", "surrogatepass")[: 2 * (n - 1)].decode(
        "utf-16-le", "surrogatepass"
    )
    m = re.search(r"\s\S*$", head)
    word = head[: m.start()].rstrip() if m else ""
    return (word if utf16_len(word) > n / 2 else head.rstrip()) + "\u2026"


def loaded(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> Loaded:
    """MEMORY.md's `text` as Claude Code loads it. Other `max_lines`/`max_chars` than Claude Code's own
    (memcurate's tighter ceiling, `limits_from`) cut there; the warning names them then."""
    file_lines = _split(text)
    states = [LOADED] * len(file_lines)
    body = text[1:] if text.startswith("\ufeff") else text
    first = 0
    if body.find("---", 3) >= 0:
        fm = _FRONT_MATTER.match(body)
        if fm:
            first = fm.group(0).count("\n") + (0 if fm.group(0).endswith("\n") else 1)
            rest_of_line = (
                len(_split(body[: fm.end()])[-1]) if not fm.group(0).endswith("\n") else 0
            )
            if rest_of_line:  # the closing --- has text after it on its line: that line stays
                first -= 1
            for n in range(first):
                states[n] = DROPPED
    content_lines = file_lines[first:]
    if any("<!--" in ln for ln in content_lines):
        kept = _without_comments(content_lines, first)
        seen = {n for n, _ in kept}
        for n in range(first, len(file_lines)):
            if n not in seen:
                states[n] = DROPPED
    else:
        kept = list(enumerate(content_lines, first))
    whole = "".join(piece for _, piece in kept)
    lead = len(whole) - len(whole.lstrip(_JS_SPACE))
    trimmed = whole.strip(_JS_SPACE)
    total_lines, total_chars = trimmed.count("\n") + 1, utf16_len(trimmed)
    over_lines, over_chars = total_lines > max_lines, total_chars > max_chars
    if not over_lines and not over_chars:
        return Loaded(
            _cleaned(trimmed),
            total_lines if trimmed else 0,
            False,
            "",
            tuple(states),
            total_lines,
            total_chars,
        )
    k = "\n".join(trimmed.split("\n")[:max_lines]) if over_lines else trimmed
    if utf16_len(k) > max_chars:
        units = k.encode("utf-16-le")
        # characters starting by max_chars
        upto = len(units[: 2 * (max_chars + 1)].decode("utf-16-le", "ignore"))
        z = k.rfind("\n", 0, upto)
        k = k[:z] if z > 0 else units[: 2 * max_chars].decode("utf-16-le", "ignore")
    kept_lines = k.count("\n") + 1 if trimmed[len(k) : len(k) + 1] == "\n" else 0
    # Which lines of the file are loaded whole: the kept lines' pieces up to the end of `k`.
    pos, end = 0, lead + len(k)
    for n, piece in kept:
        if pos + len(piece.rstrip("\r\n")) > end and piece.strip(_JS_SPACE):
            states[n] = CUT
        pos += len(piece)
    nxt = trimmed.find("\n", len(k) + 1)
    next_line = trimmed[len(k) + 1 : nxt if nxt >= 0 else None].strip(_JS_SPACE)
    if kept_lines == 0:
        lost = f"everything after the first {len(k)} characters of line 1 was cut off"
    else:
        lost = (
            f"{total_lines - kept_lines} of {total_lines} lines were cut off, starting at line {kept_lines + 1}"
            + (f' ("{_shortened(next_line, 80)}")' if next_line else "")
        )
    if over_chars and not over_lines:
        size = f"{_size(total_chars)} (limit: {_size(max_chars)}) \u2014 index entries are too long"
    elif over_lines and not over_chars:
        size = f"{total_lines} lines (limit: {max_lines})"
    else:
        size = f"{total_lines} lines and {_size(total_chars)}"
    why = (
        f"{FILE_NAME} is {size}. Only part of it was loaded: {lost}. Keep index entries to one line under "
        "~200 chars; move detail into topic files."
    )
    return Loaded(
        _cleaned(k + "\n\n> WARNING: " + why),
        kept_lines,
        True,
        why,
        tuple(states),
        total_lines,
        total_chars,
    )


def fits(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> bool:
    """Whether Claude Code loads all of `text` (within `max_lines` and `max_chars`)."""
    return not loaded(text, max_lines, max_chars).cut
