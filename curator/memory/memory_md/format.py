"""MEMORY.md's format: the markers around a memcurate section, its index entries, reading (`parse`)
and rendering a section.

Reading (`parse`) is strict, because a guess could swallow Claude's lines or
lose entries: a begin without an end, an end without a begin, nested or
duplicated sections, mismatched or unknown section names, a line that starts
like a marker (`<!--` … `memcurate:`) but is not exactly one, and inside a
section any line that is not its heading, a blank line or an index entry, all
raise `MemoryMdError` naming the line. Nothing is written then.

Code fences. Claude's own lines may hold fenced code blocks (``` or ~~~, at
most three spaces of indentation, closed by the same character at least as
many times, CommonMark style). A marker-like line that is not a valid marker
inside such a block is Claude's text (an example, a placeholder) and is left
alone. A *valid* marker inside a fence is an error: it could be an example or
a section swallowed by a fence someone forgot to close, and memcurate does not
guess which. For the same reason a section is never appended after a fence
that stays open to the end of the file (the new section would read as code):
that raises too, naming the line the fence opens on.

Entries: `- [<title>](<category>/<id>.md) — <description>`, newest first.
Titles and descriptions come from memory files and are made safe for one
Markdown line: control characters, line breaks and bidi controls become
spaces, whitespace runs collapse, text longer than memfile's limits is cut
with "…", and ``\\``, ``[``, ``]`` and ``<`` are backslash-escaped, so no
text can end the link, start another link, an autolink or an HTML comment,
or add a line. An empty description drops the ` — ` part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcurate.curator.categories import CATEGORIES, NAMES
from memcurate.curator.errors import DamagedError
from memcurate.curator.memory.memfile import DESCRIPTION_MAX, TITLE_MAX
from memcurate.curator.memory.memory_md.entry import EM_DASH, ID_PATTERN, LINK_TEXT, unescape  # noqa: F401 (re-exported)

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_ENTRY = re.compile(rf"- \[({LINK_TEXT})\]\(([a-z_]+)/({ID_PATTERN})\.md\)(?: {EM_DASH} (.*))?\Z")
_MARKER = re.compile(r"<!--\s*memcurate:([A-Za-z_-]*)((?:\s+[^\s=]+=[^\s]*?)*)\s*-->\Z")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|\Z)")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ESCAPE = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]", "<": "\\<"})
# Control characters, line and paragraph separators, bidi controls: all become spaces.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_SPACES = re.compile(r"\s+")


class MemoryMdError(DamagedError, ValueError):
    """MEMORY.md (or a change to it) that memcurate will not interpret. The message names the line."""


# -- files ---------------------------------------------------------------------


def read_text(path: str) -> str | None:
    """The file's text, None when it does not exist; MemoryMdError when it is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return utf8_text(path, data)


def utf8_text(path: str, data: bytes) -> str:
    """`data` (read from `path`) as text; MemoryMdError naming the file when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryMdError(
            f"{path}: not UTF-8 text (byte {e.start}); memcurate will not rewrite it"
        ) from None


# -- entries -------------------------------------------------------------------


def clean(text: str, limit: int) -> str:
    """One safe line of plain text: no control characters or line breaks, at most `limit` characters."""
    text = _SPACES.sub(" ", _UNSAFE.sub(" ", str(text))).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


@dataclass(slots=True)
class IndexLine:
    """One MEMORY.md entry: a link to `<category>/<id>.md` with its title and description."""

    id: str
    category: str
    title: str
    description: str = ""

    @classmethod
    def from_doc(cls, doc) -> IndexLine:
        """The entry of a memfile.MemoryDoc (anything with id, category, title, description)."""
        return cls(doc.id, doc.category, doc.title, doc.description)

    def normalized(self) -> IndexLine:
        """Checked id and category, titles and descriptions cleaned (MemoryMdError when unusable)."""
        if self.category not in CATEGORIES:
            raise MemoryMdError(
                f"unknown category {self.category!r:.60} (known: {', '.join(NAMES)})"
            )
        if not isinstance(self.id, str) or not _SLUG.match(self.id) or len(self.id) > 80:
            raise MemoryMdError(
                f"id {self.id!r:.100} is not lowercase words joined by '-' (a-z, 0-9, at most 80)"
            )
        title = clean(self.title, TITLE_MAX) or self.id
        description = clean(self.description, DESCRIPTION_MAX)
        if title == self.title and description == self.description:
            return self
        return IndexLine(self.id, self.category, title, description)

    @property
    def path(self) -> str:
        return f"{self.category}/{self.id}.md"

    def markdown(self, prefix: str = "") -> str:
        """The entry line (no line break); `prefix` goes before the link path ("../" in the archive)."""
        line = f"- [{self.title.translate(_ESCAPE)}]({prefix}{self.category}/{self.id}.md)"
        if self.description:
            line += f" {EM_DASH} {self.description.translate(_ESCAPE)}"
        return line


# -- parsing -------------------------------------------------------------------


@dataclass
class Section:
    """A memcurate section as found in the text. `start`/`end` are character offsets of its span:
    from the begin marker's first character to the end marker's line break (inclusive)."""

    category: str
    budget: int  # as written in the begin marker
    start: int
    end: int
    line: int  # 1-based line of the begin marker
    end_line: int
    entries: list[IndexLine]
    newline: str  # the begin marker's line break: the one re-rendering uses
    tail: str  # the end marker's line break ("" when the file ends right after it)


@dataclass
class Parsed:
    text: str
    sections: dict[str, Section]  # in the order they appear
    newline: str  # the file's first line break ("\n" when it has none): used for appended sections
    open_fence: int | None = None  # line of a code fence in Claude's text that is never closed

    def outside(self) -> str:
        """Claude's part of the file: the text with every memcurate span cut out."""
        parts, pos = [], 0
        for sec in self.sections.values():
            parts.append(self.text[pos : sec.start])
            pos = sec.end
        parts.append(self.text[pos:])
        return "".join(parts)


def _marker(s: str) -> tuple[str, str, int] | str:
    """(kind, category, budget) of a marker line (stripped), or a string saying why it is not one."""
    m = _MARKER.match(s)
    if not m:
        return "not a valid memcurate marker"
    kind = m.group(1)
    attrs: dict[str, str] = {}
    for item in m.group(2).split():
        key, _, value = item.partition("=")
        if key in attrs:
            return f"{key}= given twice"
        attrs[key] = value
    if kind not in ("begin", "end"):
        return f"unknown marker kind {kind!r:.40} (expected begin or end)"
    allowed = ("section", "budget") if kind == "begin" else ("section",)
    extra = [k for k in attrs if k not in allowed]
    if extra:
        return f"unexpected {extra[0][:40]}= in a {kind} marker"
    if "section" not in attrs:
        return f"{kind} marker without section="
    name = attrs["section"]
    budget = -1
    if kind == "begin":
        if not re.fullmatch(r"\d{1,6}", attrs.get("budget", "")):
            return "begin marker without budget=<number>"
        budget = int(attrs["budget"])
    if name not in CATEGORIES:
        return f"unknown section {name!r:.60} (known: {', '.join(NAMES)})"
    return kind, name, budget


def line_error(lineno: int, what: str) -> MemoryMdError:
    return MemoryMdError(f"line {lineno}: {what}")


def _marker_at(lineno: int, s: str) -> tuple[str, str, int] | None:
    """The marker on line `lineno` (stripped), None when it does not look like one; MemoryMdError
    when it looks like one (`<!--` … `memcurate:`) but is not exactly one."""
    if not (s.startswith("<!--") and "memcurate:" in s):
        return None
    m = _marker(s)
    if isinstance(m, str):
        raise line_error(lineno, f"{m}: {s!r:.120}")
    return m


def parse(text: str) -> Parsed:
    """Find memcurate's sections and their entries. MemoryMdError when anything is ambiguous."""
    n = len(text)
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    sections: dict[str, Section] = {}
    pos = 0
    lineno = 0
    # the open section: [category, budget, start, line, entries, newline, ids, heading seen]
    cur: list | None = None
    fence: tuple[str, int, int] | None = None  # (character, length, line) of an open code fence
    while pos < n:
        lineno += 1
        nl = text.find("\n", pos)
        nxt = n if nl < 0 else nl + 1
        if nl < 0:
            term = ""
            line = text[pos:]
        elif nl > pos and text[nl - 1] == "\r":
            term = "\r\n"
            line = text[pos : nl - 1]
        else:
            term = "\n"
            line = text[pos:nl]
        start = pos
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
            start += 1
        pos = nxt
        if cur is not None:
            s = line.strip()
            if not s:
                continue
            marker = _marker_at(lineno, s)
            if marker is not None:
                kind, name, _ = marker
                if kind == "begin":
                    raise line_error(
                        lineno,
                        f"begin marker for section {name!r} inside section {cur[0]!r} opened "
                        f"at line {cur[3]} (nested sections, or that section's end marker is "
                        "missing)",
                    )
                if name != cur[0]:
                    raise line_error(
                        lineno,
                        f"end marker for section {name!r} closes section {cur[0]!r} "
                        f"opened at line {cur[3]}",
                    )
                sections[name] = Section(
                    name, cur[1], cur[2], nxt, cur[3], lineno, cur[4], cur[5], term
                )
                cur = None
                continue
            if line.startswith("- ["):
                e = _ENTRY.match(line.rstrip())
                if e is None:
                    raise line_error(
                        lineno,
                        f"inside section {cur[0]!r}: not an index entry "
                        f"('- [title](category/id.md) {EM_DASH} description'): {s!r:.120}",
                    )
                title, category, id_, description = e.groups()
                if category != cur[0]:
                    raise line_error(
                        lineno,
                        f"inside section {cur[0]!r}: entry links to {category}/{id_}.md "
                        f"(another category)",
                    )
                if id_ in cur[6]:
                    raise line_error(
                        lineno,
                        f"inside section {cur[0]!r}: entry {id_!r} appears twice "
                        f"(first at line {cur[6][id_]})",
                    )
                cur[6][id_] = lineno
                cur[4].append(
                    IndexLine(id_, category, unescape(title), unescape(description or ""))
                )
                continue
            if _HEADING.match(s) and not cur[7] and not cur[4]:
                cur[7] = True
                continue
            raise line_error(
                lineno,
                f"inside section {cur[0]!r}: a line memcurate does not own "
                f"(only its heading and index entries belong between the markers): {s!r:.120}",
            )
        if fence is not None:
            if fence[0] in line:
                stripped = line.rstrip(" \t")
                body = stripped.lstrip(" ")
                if (
                    len(stripped) - len(body) <= 3
                    and len(body) >= fence[1]
                    and body.strip(fence[0]) == ""
                ):
                    fence = None
                    continue
            s = line.strip()
            if s.startswith("<!--") and "memcurate:" in s and not isinstance(_marker(s), str):
                raise line_error(
                    lineno,
                    f"memcurate marker inside a code fence opened at line {fence[2]}: memcurate "
                    "does not guess whether it is an example or a section (is the fence closed?)",
                )
            continue
        if "``" in line or "~~" in line:
            f = _FENCE_OPEN.match(line)
            if f and not (f.group(1)[0] == "`" and "`" in f.group(2)):
                fence = (f.group(1)[0], len(f.group(1)), lineno)
                continue
        marker = _marker_at(lineno, line.strip())
        if marker is not None:
            kind, name, budget = marker
            if kind == "end":
                raise line_error(lineno, f"end marker for section {name!r} without a begin marker")
            if name in sections:
                raise line_error(
                    lineno, f"section {name!r} appears twice (first at line {sections[name].line})"
                )
            cur = [name, budget, start, lineno, [], term or newline, {}, False]
    if cur is not None:
        raise line_error(cur[3], f"begin marker for section {cur[0]!r} has no end marker")
    return Parsed(text, sections, newline, fence[2] if fence else None)


def render_section(
    category: str,
    budget: int,
    entries: list[IndexLine],
    newline: str = "\n",
    tail: str | None = None,
) -> str:
    """A section's text: markers, heading, entries; ends with `tail` (default: `newline`)."""
    lines = [
        f"<!-- memcurate:begin section={category} budget={budget} -->",
        f"## {CATEGORIES[category].section}",
    ]
    lines.extend(e.markdown() for e in entries)
    lines.append(f"<!-- memcurate:end section={category} -->")
    return newline.join(lines) + (newline if tail is None else tail)


# -- Claude's writes to MEMORY.md ------------------------------------------------------


def section_spans(text: str) -> dict[str, str]:
    """category -> the exact text of its memcurate section, markers included (not its last line break);
    MemoryMdError when `text` cannot be read."""
    p = parse(text)
    return {c: p.text[s.start : s.end].rstrip("\r\n") for c, s in p.sections.items()}


# -- single lines (a line of Claude's dropped or redacted, a line of an archive file redacted) ----------

# the words a caller (curator/library/changes) tells a conflict by
GONE = "changed since it was read"


def line_digest(line: str) -> str:
    """The hash a change names a line by: of its text, stripped (curator/library/entries.line_hash)."""
    from memcurate.curator.util.stamps import content_hash

    return content_hash(line.strip())


def rewrite_lines(text: str, numbers, new: str | None) -> str:
    """`text` with its lines `numbers` (1-based, split at "\\n") removed (`new` None) or their stripped text
    replaced by `new` (one line: its indentation, trailing blanks and line ending kept). Every other byte
    stays: line endings, a byte-order mark, a last line without a break."""
    numbers = set(numbers)
    if new is not None and ("\n" in new or "\r" in new):
        raise MemoryMdError(f"a replacement line cannot hold a line break: {new!r:.120}")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].split("\n")  # each keeps its "\r"; its break follows it
    last = len(lines)
    if new is not None:
        for n in numbers:
            raw = lines[n - 1]
            body = raw.strip()
            if body:
                lead = raw[: len(raw) - len(raw.lstrip())]
                lines[n - 1] = lead + new.strip() + raw[len(raw.rstrip()) :]
        return bom + "\n".join(lines)
    out = [line for n, line in enumerate(lines, 1) if n not in numbers or n == last]
    if last in numbers:
        out[-1] = ""  # the last line has no break of its own: the one before it stays
    return bom + "\n".join(out)
