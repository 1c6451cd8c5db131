"""MEMORY.md: the one module that reads and writes it (DESIGN §7).

memcurate owns only its sections, each between a begin and an end marker
(inclusive), and never changes a byte outside them:

    <!-- memcurate:begin section=decision budget=40 -->
    ## Key Decisions
    - [Use JWT for API authentication](decision/use-jwt-for-api-auth.md) — Stateless JWT chosen over server sessions
    <!-- memcurate:end section=decision -->

Everything else in the file is Claude's own auto memory and stays as it is:
line endings, trailing whitespace, a missing final newline, a byte-order mark.
The only bytes memcurate ever adds outside its markers are the line break
(when the file's last line has none) and the blank line that separate a
section it appends at the end of the file; it never removes any.

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

Budgets and limits (`plan`):
- a section holding more entries than its budget (config
  `categories.<name>.budget`, counting entry lines only) moves its oldest
  entries to the archive; this is enforced for every section on every plan,
  so lowering a budget takes effect at the next write;
- when the whole file is over `memory_md.max_lines` or `max_bytes`, memcurate
  shrinks its own sections, one entry at a time, always from the section that
  is fullest relative to its budget (ties: the one with more entries, then the
  one later in the category order, so session summaries go before decisions),
  archiving the oldest entry of that section. The notes say what shrank and
  why. If the file is still over with every section empty, the sections stay
  (heading, no entries), the plan says so, and Claude's lines are untouched.

Archive: `<root>/archive/<category>.md`, a header line, then entry lines whose
links point back at the memory files (`../<category>/<id>.md`), newest first:
each newly archived batch goes on top, in its MEMORY.md order, so the
section followed by its archive reads as one newest-first list. An id is
there at most once (re-archiving replaces its old line). An entry upserted
back into MEMORY.md, or removed, leaves the archive. Lines of the archive file
that are not entries are kept. `apply` writes the archive before MEMORY.md, so
a crash in between leaves an entry in both places, never in neither.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from .atomic import Unsettled, replace_if_unchanged, write_text
from .categories import CATEGORIES, NAMES
from .memfile import DESCRIPTION_MAX, TITLE_MAX

FILE_NAME = "MEMORY.md"
ARCHIVE_DIR = "archive"
DEFAULT_MAX_LINES = 200
DEFAULT_MAX_BYTES = 25600
EM_DASH = "\u2014"

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_TEXT = r"[^\\\[\]]*(?:\\.[^\\\[\]]*)*"  # link text: brackets only escaped
_ENTRY = re.compile(rf"- \[({_TEXT})\]\(([a-z_]+)/({_ID})\.md\)(?: {EM_DASH} (.*))?\Z")
# An archive entry links from archive/ back to the memory file: ../<category>/<id>.md
_ARCHIVE_ENTRY = re.compile(rf"- \[({_TEXT})\]\((?:\.\./)?([a-z_]+)/({_ID})\.md\)(?: {EM_DASH} (.*))?\Z")
_MARKER = re.compile(r"<!--\s*memcurate:([A-Za-z_-]*)((?:\s+[^\s=]+=[^\s]*?)*)\s*-->\Z")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|\Z)")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_UNESCAPE = re.compile(r"\\([\\\[\]<])")
_ESCAPE = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]", "<": "\\<"})
# Control characters, line and paragraph separators, bidi controls: all become spaces.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_SPACES = re.compile(r"\s+")


class MemoryMdError(ValueError):
    """MEMORY.md (or a change to it) that memcurate will not interpret. The message names the line."""


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
            raise MemoryMdError(f"unknown category {self.category!r:.60} (known: {', '.join(NAMES)})")
        if not isinstance(self.id, str) or not _SLUG.match(self.id) or len(self.id) > 80:
            raise MemoryMdError(f"id {self.id!r:.100} is not lowercase words joined by '-' (a-z, 0-9, at most 80)")
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


def _unescape(s: str) -> str:
    return _UNESCAPE.sub(r"\1", s) if "\\" in s else s


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
            parts.append(self.text[pos:sec.start])
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


def _err(lineno: int, what: str) -> MemoryMdError:
    return MemoryMdError(f"line {lineno}: {what}")


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
            line = text[pos:nl - 1]
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
            if s.startswith("<!--") and "memcurate:" in s:
                m = _marker(s)
                if isinstance(m, str):
                    raise _err(lineno, f"{m}: {s!r:.120}")
                kind, name, _ = m
                if kind == "begin":
                    raise _err(lineno, f"begin marker for section {name!r} inside section {cur[0]!r} opened at "
                                       f"line {cur[3]} (nested sections, or that section's end marker is missing)")
                if name != cur[0]:
                    raise _err(lineno, f"end marker for section {name!r} closes section {cur[0]!r} opened at line {cur[3]}")
                sections[name] = Section(name, cur[1], cur[2], nxt, cur[3], lineno, cur[4], cur[5], term)
                cur = None
                continue
            if line.startswith("- ["):
                e = _ENTRY.match(line.rstrip())
                if e is None:
                    raise _err(lineno, f"inside section {cur[0]!r}: not an index entry "
                                       f"('- [title](category/id.md) {EM_DASH} description'): {s!r:.120}")
                title, category, id_, description = e.groups()
                if category != cur[0]:
                    raise _err(lineno, f"inside section {cur[0]!r}: entry links to {category}/{id_}.md "
                                       f"(another category)")
                if id_ in cur[6]:
                    raise _err(lineno, f"inside section {cur[0]!r}: entry {id_!r} appears twice "
                                       f"(first at line {cur[6][id_]})")
                cur[6][id_] = lineno
                cur[4].append(IndexLine(id_, category, _unescape(title), _unescape(description or "")))
                continue
            if _HEADING.match(s) and not cur[7] and not cur[4]:
                cur[7] = True
                continue
            raise _err(lineno, f"inside section {cur[0]!r}: a line memcurate does not own "
                               f"(only its heading and index entries belong between the markers): {s!r:.120}")
        if fence is not None:
            if fence[0] in line:
                stripped = line.rstrip(" \t")
                body = stripped.lstrip(" ")
                if (len(stripped) - len(body) <= 3 and len(body) >= fence[1] and body.strip(fence[0]) == ""):
                    fence = None
                    continue
            s = line.strip()
            if s.startswith("<!--") and "memcurate:" in s and not isinstance(_marker(s), str):
                raise _err(lineno, f"memcurate marker inside a code fence opened at line {fence[2]}: memcurate "
                                   "does not guess whether it is an example or a section (is the fence closed?)")
            continue
        if "``" in line or "~~" in line:
            f = _FENCE_OPEN.match(line)
            if f and not (f.group(1)[0] == "`" and "`" in f.group(2)):
                fence = (f.group(1)[0], len(f.group(1)), lineno)
                continue
        s = line.strip()
        if s.startswith("<!--") and "memcurate:" in s:
            m = _marker(s)
            if isinstance(m, str):
                raise _err(lineno, f"{m}: {s!r:.120}")
            kind, name, budget = m
            if kind == "end":
                raise _err(lineno, f"end marker for section {name!r} without a begin marker")
            if name in sections:
                raise _err(lineno, f"section {name!r} appears twice (first at line {sections[name].line})")
            cur = [name, budget, start, lineno, [], term or newline, {}, False]
    if cur is not None:
        raise _err(cur[3], f"begin marker for section {cur[0]!r} has no end marker")
    return Parsed(text, sections, newline, fence[2] if fence else None)


# -- planning ------------------------------------------------------------------

@dataclass
class Plan:
    """What a change would do to MEMORY.md. Nothing is written by `plan`."""

    text: str  # the new MEMORY.md
    archived: dict[str, list[IndexLine]]  # per category, newest first: entries that move to the archive
    notes: list[str]  # what happened beyond the changes themselves, in words
    unarchive: dict[str, list[str]] = field(default_factory=dict)  # ids apply() drops from the archive
    lines: int = 0
    bytes: int = 0
    over_limit: bool = False  # still over max_lines/max_bytes with memcurate's sections empty
    changed: bool = False  # text differs from the input


def measure(text: str) -> tuple[int, int]:
    """(lines, bytes) as Claude Code counts them: a last line without a line break still counts."""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return lines, len(text.encode("utf-8"))


def render_section(category: str, budget: int, entries: list[IndexLine], newline: str = "\n",
                   tail: str | None = None) -> str:
    """A section's text: markers, heading, entries; ends with `tail` (default: `newline`)."""
    lines = [f"<!-- memcurate:begin section={category} budget={budget} -->", f"## {CATEGORIES[category].section}"]
    lines.extend(e.markdown() for e in entries)
    lines.append(f"<!-- memcurate:end section={category} -->")
    return newline.join(lines) + (newline if tail is None else tail)


def _separator(before: str, nl: str) -> str:
    """What goes between the file so far and an appended section: one blank line, unless there is one."""
    if not before:
        return ""
    if not before.endswith("\n"):
        last = before[before.rfind("\n") + 1:]
        return nl if not last.strip() else nl + nl
    body = before[:-1]
    last = body[body.rfind("\n") + 1:]
    return "" if not last.strip() else nl


def _limits_text(over_lines: bool, over_bytes: bool, max_lines: int, max_bytes: int) -> str:
    parts = ([f"{max_lines} lines"] if over_lines else []) + ([f"{max_bytes} bytes"] if over_bytes else [])
    return " and ".join(parts)


def plan(text: str, changes, budgets: dict[str, int], max_lines: int = DEFAULT_MAX_LINES,
         max_bytes: int = DEFAULT_MAX_BYTES, *, parsed: Parsed | None = None) -> Plan:
    """The new MEMORY.md after `changes`, within budgets and limits; nothing is written.

    `changes`: ("upsert", IndexLine) puts the entry at the top of its section (replacing the entry
    with the same id); ("remove", category, id) drops it. Pass `parsed` (= parse(text)) to skip parsing.
    """
    p = parsed if parsed is not None else parse(text)
    text = p.text
    lists: dict[str, list[IndexLine]] = {cat: list(sec.entries) for cat, sec in p.sections.items()}
    touched: dict[str, dict[str, str]] = {}  # category -> id -> last operation
    for i, change in enumerate(changes, 1):
        op = change[0] if isinstance(change, (tuple, list)) and change else None
        try:
            if op == "upsert" and len(change) == 2 and isinstance(change[1], IndexLine):
                entry = change[1].normalized()
                cat, id_ = entry.category, entry.id
                lst = lists.setdefault(cat, [])
                for j, e in enumerate(lst):
                    if e.id == id_:
                        del lst[j]
                        break
                lst.insert(0, entry)
            elif op == "remove" and len(change) == 3:
                cat, id_ = change[1], change[2]
                IndexLine(id_, cat, "", "").normalized()  # checks category and id
                lst = lists.get(cat)
                if lst:
                    lists[cat] = [e for e in lst if e.id != id_]
            else:
                raise MemoryMdError(f"expected ('upsert', IndexLine) or ('remove', category, id), found {change!r:.120}")
        except MemoryMdError as e:
            raise MemoryMdError(f"change {i}: {e}") from None
        touched.setdefault(cat, {})[id_] = op

    def budget_of(cat: str) -> int:
        if cat in budgets:
            return max(0, int(budgets[cat]))
        if cat in p.sections:
            return p.sections[cat].budget
        raise MemoryMdError(f"no budget for section {cat!r}")

    new_cats = [c for c in NAMES if c not in p.sections and lists.get(c)]
    order = list(p.sections) + new_cats
    archived: dict[str, list[IndexLine]] = {}
    notes: list[str] = []
    for cat in order:
        b = budget_of(cat)
        lst = lists[cat]
        if len(lst) > b:
            archived[cat] = lst[b:]
            del lst[b:]
            k = len(archived[cat])
            notes.append(f"{cat}: {k} {'entry' if k == 1 else 'entries'} over its budget of {b} lines; "
                         f"moved the {'oldest' if k == 1 else f'{k} oldest'} to {ARCHIVE_DIR}/{cat}.md")

    # The file as pieces: Claude's text between sections, and each section (original bytes while untouched).
    pieces: list[str] = []
    index: dict[str, int] = {}
    dirty: dict[str, bool] = {}
    nls: dict[str, str] = {}
    tails: dict[str, str] = {}
    prev = 0
    for cat, sec in p.sections.items():
        pieces.append(text[prev:sec.start])
        b = budget_of(cat)
        nls[cat], tails[cat] = sec.newline, sec.tail
        dirty[cat] = lists[cat] != sec.entries or b != sec.budget
        index[cat] = len(pieces)
        pieces.append(render_section(cat, b, lists[cat], sec.newline, sec.tail) if dirty[cat] else text[sec.start:sec.end])
        prev = sec.end
    pieces.append(text[prev:])
    if new_cats:
        if p.open_fence is not None:
            raise _err(p.open_fence, "a code fence opened here is never closed, so a memcurate section added at "
                                     "the end of MEMORY.md would read as code; close the fence")
        sep = _separator("".join(pieces), p.newline)
        for cat in new_cats:
            pieces.append(sep)
            index[cat] = len(pieces)
            pieces.append(render_section(cat, budget_of(cat), lists[cat], p.newline))
            dirty[cat], nls[cat], tails[cat] = True, p.newline, p.newline
            sep = p.newline  # after a section's end marker: one blank line

    total_nl = sum(piece.count("\n") for piece in pieces)
    nbytes = sum(len(piece.encode("utf-8")) for piece in pieces)
    last = next((piece for piece in reversed(pieces) if piece), "")
    extra = 1 if last and not last.endswith("\n") else 0
    over_lines, over_bytes = total_nl + extra > max_lines, nbytes > max_bytes
    over_limit = False
    if over_lines or over_bytes:
        before = {cat: len(lists[cat]) for cat in order}
        while total_nl + extra > max_lines or nbytes > max_bytes:
            candidates = [c for c in order if lists[c]]
            if not candidates:
                over_limit = True
                break
            cat = max(candidates, key=lambda c: (len(lists[c]) / max(budget_of(c), 1), len(lists[c]), NAMES.index(c)))
            entry = lists[cat].pop()
            archived.setdefault(cat, []).insert(0, entry)
            if dirty[cat]:
                total_nl -= 1
                nbytes -= len(entry.markdown().encode("utf-8")) + len(nls[cat])
            else:
                old = pieces[index[cat]]
                new = render_section(cat, budget_of(cat), lists[cat], nls[cat], tails[cat])
                total_nl += new.count("\n") - old.count("\n")
                nbytes += len(new.encode("utf-8")) - len(old.encode("utf-8"))
                pieces[index[cat]] = new
                dirty[cat] = True
        why = _limits_text(over_lines, over_bytes, max_lines, max_bytes)
        for cat in order:
            if len(lists[cat]) < before[cat]:
                notes.append(f"shrank {cat} from {before[cat]} to {len(lists[cat])} lines to stay within {why}; "
                             f"the oldest moved to {ARCHIVE_DIR}/{cat}.md")
        for cat in order:
            if dirty[cat]:
                pieces[index[cat]] = render_section(cat, budget_of(cat), lists[cat], nls[cat], tails[cat])
    new_text = "".join(pieces)
    lines, nbytes = measure(new_text)
    if over_limit:
        ours = set(index.values())
        claude_lines, claude_bytes = measure("".join(x for i, x in enumerate(pieces) if i not in ours))
        notes.append(f"MEMORY.md is {lines} lines and {nbytes} bytes even with memcurate's sections empty "
                     f"(limits: {max_lines} lines, {max_bytes} bytes); Claude's own lines take {claude_lines} lines "
                     f"and {claude_bytes} bytes. memcurate keeps its sections with no entries and does not touch "
                     "Claude's lines")
    for cat, entries in archived.items():
        fresh = [e.id for e in entries if touched.get(cat, {}).get(e.id) == "upsert"]
        if fresh:
            shown = ", ".join(fresh[:5]) + (f" and {len(fresh) - 5} more" if len(fresh) > 5 else "")
            notes.append(f"{cat}: no room in MEMORY.md for {shown} from this change: "
                         f"{'it goes' if len(fresh) == 1 else 'they go'} straight to {ARCHIVE_DIR}/{cat}.md")
    unarchive: dict[str, list[str]] = {}
    for cat, ids in touched.items():
        gone = {e.id for e in archived.get(cat, ())}
        keep = [i for i in ids if i not in gone]
        if keep:
            unarchive[cat] = keep
    return Plan(new_text, archived, notes, unarchive, lines, nbytes, over_limit, new_text != text)


# -- files ---------------------------------------------------------------------

def budgets_from(cfg: dict) -> dict[str, int]:
    return {name: cfg["categories"][name]["budget"] for name in NAMES if name in cfg.get("categories", {})}


def limits_from(cfg: dict) -> tuple[int, int]:
    m = cfg.get("memory_md") or {}
    return int(m.get("max_lines", DEFAULT_MAX_LINES)), int(m.get("max_bytes", DEFAULT_MAX_BYTES))


def memory_md_path(memory_root) -> str:
    return os.path.join(os.fspath(memory_root), FILE_NAME)


def archive_path(memory_root, category: str) -> str:
    if category not in CATEGORIES:
        raise MemoryMdError(f"unknown category {category!r:.60}")
    return os.path.join(os.fspath(memory_root), ARCHIVE_DIR, f"{category}.md")


def _read(path: str) -> str | None:
    """The file's text, None when it does not exist; MemoryMdError when it is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return _utf8(path, data)


def _utf8(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryMdError(f"{path}: not UTF-8 text (byte {e.start}); memcurate will not rewrite it") from None


def archive_header(category: str) -> str:
    return (f"# Archived from MEMORY.md: {CATEGORIES[category].section} "
            "(newest first; the memory files themselves are unchanged)\n")


def _archive_entry(line: str, category: str) -> IndexLine | None:
    m = _ARCHIVE_ENTRY.match(line.rstrip())
    if m is None or m.group(2) != category:
        return None
    return IndexLine(m.group(3), category, _unescape(m.group(1)), _unescape(m.group(4) or ""))


def _archive_id(line: str, category: str) -> str | None:
    e = _archive_entry(line, category)
    return e.id if e else None


def archive_add(text: str | None, category: str, batch: list[IndexLine]) -> str:
    """The archive file with `batch` (newest first) on top of its entries; older lines of those ids go."""
    if not text:
        text = archive_header(category) + "\n"
    lines = [ln for ln in re.split(r"(?<=\n)", text) if ln]
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    ids = {e.id for e in batch}
    first = next((i for i, ln in enumerate(lines) if _archive_id(ln, category) is not None), len(lines))
    head = lines[:first]
    if head and not head[-1].endswith("\n"):
        head[-1] += nl
    rest = [ln for ln in lines[first:] if _archive_id(ln, category) not in ids]
    if rest and not rest[-1].endswith("\n"):
        rest[-1] += nl
    return "".join(head) + "".join(e.markdown("../") + nl for e in batch) + "".join(rest)


def archive_drop(text: str, category: str, ids) -> str:
    """The archive file without the entries of `ids`."""
    ids = set(ids)
    return "".join(ln for ln in re.split(r"(?<=\n)", text) if ln and _archive_id(ln, category) not in ids)


def read_archive(memory_root, category: str) -> list[IndexLine]:
    """The archived entries of a category, newest first (empty when there is no archive)."""
    text = _read(archive_path(memory_root, category)) or ""
    return [e for e in (_archive_entry(ln, category) for ln in text.split("\n")) if e is not None]


def read_current(memory_root) -> tuple[str | None, "Parsed"]:
    """MEMORY.md as it is (None when missing) and parsed; MemoryMdError (naming the file) when damaged.

    A save calls this before it writes anything, and hands the result to `apply`.
    """
    path = memory_md_path(os.fspath(memory_root))
    old = _read(path)
    try:
        return old, parse(old or "")
    except MemoryMdError as e:
        raise MemoryMdError(f"{path}: {e}") from None


def apply(memory_root, cfg: dict, changes, *, current: tuple | None = None) -> Plan:
    """Plan `changes` against `<root>/MEMORY.md` and carry the plan out; `current` is what
    `read_current` gave, if the caller has it. The caller holds the root's lock, which keeps other
    memcurate processes out; Claude's own writes to MEMORY.md meanwhile are kept: the file is
    replaced only if it is still the one planned from, else planned again
    (`atomic.replace_if_unchanged`).

    Order: every file is read and the plan made first (an error writes nothing); then the archive
    gains the archived entries; then MEMORY.md is written; then ids that came back or were removed
    leave the archive. Each write is atomic. Returns the plan of the change, its `text` what
    MEMORY.md now holds.
    """
    root = os.fspath(memory_root)
    path = memory_md_path(root)
    budgets, limits = budgets_from(cfg), limits_from(cfg)
    plans: list[Plan] = []

    def render(data: bytes | None) -> bytes | None:
        text = "" if data is None else _utf8(path, data)
        parsed = current[1] if current is not None and text == (current[0] or "") else None
        try:
            result = plan(text, changes, budgets, *limits, parsed=parsed)
        except MemoryMdError as e:
            raise MemoryMdError(f"{path}: {e}") from None
        for apath, t in _archive_adds(root, result):  # before MEMORY.md: an entry is in both, never in neither
            write_text(apath, t)
        plans.append(result)
        return result.text.encode("utf-8") if result.changed or (data is None and result.text) else None

    try:
        replace_if_unchanged(path, render)
    except Unsettled as e:
        raise MemoryMdError(f"{e}; its section entries may lag until the next run finishes the save") from None
    final = plans[-1]  # a last render may find the file as it stands right (what others appended kept)
    result = next((p for p in reversed(plans) if p.changed), final)
    result = replace(result, text=final.text, lines=final.lines, bytes=final.bytes)
    for apath, t in _archive_drops(root, result, [p for p in plans if p is not final]):
        write_text(apath, t)
    return result


def _archive_adds(root: str, result: Plan) -> list[tuple[str, str]]:
    """The archive files with the entries `result` moves out of MEMORY.md (all read before any is written)."""
    writes = []
    for cat in NAMES:
        batch = result.archived.get(cat)
        if batch:
            apath = archive_path(root, cat)
            current = _read(apath)
            added = archive_add(current, cat, batch)
            if added != current:
                writes.append((apath, added))
    return writes


def _archive_drops(root: str, result: Plan, earlier: list[Plan]) -> list[tuple[str, str]]:
    """The archive files without the ids that MEMORY.md lists after `result`: those it brought back or
    removed, and those an `earlier` plan of the same change archived (the file moved under it) but
    the one written kept listed."""
    drops = {cat: set(ids) for cat, ids in result.unarchive.items()}
    listed = None
    for p in earlier:
        for cat, lines in p.archived.items():
            stray = {e.id for e in lines} - {e.id for e in result.archived.get(cat, ())}
            if stray:
                listed = listed if listed is not None else parse(result.text).sections
                kept = {e.id for e in listed[cat].entries} if cat in listed else set()
                drops.setdefault(cat, set()).update(stray & kept)
    writes = []
    for cat in NAMES:
        if drops.get(cat):
            apath = archive_path(root, cat)
            current = _read(apath)
            if current is not None:
                dropped = archive_drop(current, cat, drops[cat])
                if dropped != current:
                    writes.append((apath, dropped))
    return writes


def usage(memory_root, cfg: dict) -> dict:
    """MEMORY.md's budgets for `memcurate status`:
    {"sections": {name: {"used": n, "budget": b}} (every category, in category order),
     "total": {"lines", "bytes", "max_lines", "max_bytes", "entries"}}.
    A missing MEMORY.md counts as empty; MemoryMdError (naming the file and line) when it is damaged."""
    path = memory_md_path(memory_root)
    text = _read(path) or ""
    try:
        p = parse(text)
    except MemoryMdError as e:
        raise MemoryMdError(f"{path}: {e}") from None
    budgets = budgets_from(cfg)
    cats = {name: {"used": len(p.sections[name].entries) if name in p.sections else 0,
                   "budget": budgets.get(name, p.sections[name].budget if name in p.sections else 0)}
            for name in NAMES}
    lines, nbytes = measure(text)
    max_lines, max_bytes = limits_from(cfg)
    return {"sections": cats,
            "total": {"lines": lines, "bytes": nbytes, "max_lines": max_lines, "max_bytes": max_bytes,
                       "entries": sum(c["used"] for c in cats.values())}}
