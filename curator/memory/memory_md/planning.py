"""The plan of a change to MEMORY.md: its sections within their budgets and the file within its limits.

Budgets and limits (`plan`):
- a section holding more entries than its budget (config
  `categories.<name>.budget`, counting entry lines only) moves its oldest
  entries to the archive; this is enforced for every section on every plan,
  so lowering a budget takes effect at the next write;
- when Claude Code would cut the file (loaded.py: its model of what Claude Code
  loads, within memcurate's own ceiling `memory_md.max_lines`/`max_bytes`), memcurate
  shrinks its own sections, one entry at a time, always from the section that
  is fullest relative to its budget (ties: the one with more entries, then the
  one later in the category order, so session summaries go before decisions),
  archiving the oldest entry of that section. The notes say what shrank and
  why. If the file is still over with every section empty, the sections stay
  (heading, no entries), the plan says so, and Claude's lines are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcurate.curator.categories import NAMES
from memcurate.curator.memory.memory_md.archive import ARCHIVE_DIR
from memcurate.curator.memory.memory_md.format import (
    _ENTRY,
    EM_DASH,
    GONE,
    IndexLine,
    MemoryMdError,
    Parsed,
    line_digest,
    line_error,
    parse,
    render_section,
    rewrite_lines,
    unescape,
)
from memcurate.curator.memory.memory_md.loaded import MAX_CHARS, MAX_LINES, loaded, utf16_len


@dataclass
class Plan:
    """What a change would do to MEMORY.md. Nothing is written by `plan`."""

    text: str  # the new MEMORY.md
    archived: dict[
        str, list[IndexLine]
    ]  # per category, newest first: entries that move to the archive
    notes: list[str]  # what happened beyond the changes themselves, in words
    # ids apply() drops from the archive
    unarchive: dict[str, list[str]] = field(default_factory=dict)
    lines: int = 0  # as Claude Code counts them (comment lines not counted)
    chars: int = 0  # UTF-16 code units, counted the same way
    over_limit: bool = False  # Claude Code would still cut it with memcurate's sections empty
    changed: bool = False  # text differs from the input


def measure(text: str) -> tuple[int, int]:
    """(lines, characters) as Claude Code counts them (loaded.py): comment lines not counted, trimmed,
    UTF-16 code units; an empty file is 0 lines."""
    seen = loaded(text)
    return (seen.total_lines if text.strip() else 0), seen.total_chars


def _separator(before: str, nl: str) -> str:
    """What goes between the file so far and an appended section: one blank line, unless there is one."""
    if not before:
        return ""
    if not before.endswith("\n"):
        last = before[before.rfind("\n") + 1 :]
        return nl if not last.strip() else nl + nl
    body = before[:-1]
    last = body[body.rfind("\n") + 1 :]
    return "" if not last.strip() else nl


def _limits_text(over_lines: bool, over_chars: bool, max_lines: int, max_chars: int) -> str:
    parts = ([f"{max_lines} lines"] if over_lines else []) + (
        [f"{max_chars} characters"] if over_chars else []
    )
    return " and ".join(parts) or f"{max_lines} lines and {max_chars} characters"


def plan(
    text: str,
    changes,
    budgets: dict[str, int],
    max_lines: int = MAX_LINES,
    max_chars: int = MAX_CHARS,
    *,
    parsed: Parsed | None = None,
) -> Plan:
    """The new MEMORY.md after `changes`, within budgets and limits; nothing is written.

    `changes`: ("upsert", IndexLine) puts the entry at the top of its section (replacing the entry
    with the same id); ("archive", IndexLine) moves the entry (whether listed or not) to the archive file;
    ("remove", category, id) drops it. Single lines, the rest of the file byte for byte as it was:
    ("drop_line", base) removes the line(s) of Claude's whose stripped text hashes to `base` (every copy);
    ("replace_line", base, new, None) puts `new` in place of such a line of Claude's (any line outside
    memcurate's sections, a heading too); ("replace_line", base, new, "<category>/<id>") puts the entry
    `new` in place of that memory's entry line, where it stands. A line no longer there raises
    MemoryMdError ("changed since it was read"). Pass `parsed` (= parse(text)) to skip parsing.
    """
    p = parsed if parsed is not None else parse(text)
    original = p.text
    changes = list(changes)
    lines_ops = [c for c in changes if isinstance(c, (tuple, list)) and c and c[0] in _LINE_CHANGES]
    if lines_ops:
        changes = [
            c for c in changes if not (isinstance(c, (tuple, list)) and c and c[0] in _LINE_CHANGES)
        ]
        p, entry_edits = _claude_line_changes(p, lines_ops)
    else:
        entry_edits = []
    text = p.text
    lists: dict[str, list[IndexLine]] = {cat: list(sec.entries) for cat, sec in p.sections.items()}
    # an entry line rewritten where it stands (its section re-rendered)
    for (
        cat,
        k,
        entry,
    ) in entry_edits:
        lists[cat][k] = entry
    touched: dict[str, dict[str, str]] = {}  # category -> id -> last operation
    moved: dict[str, list[IndexLine]] = {}  # category -> entries archived by an "archive" change
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
            elif op == "archive" and len(change) == 2 and isinstance(change[1], IndexLine):
                # a memory archived by a person: its line leaves the section for the archive file
                entry = change[1].normalized()
                cat, id_ = entry.category, entry.id
                if cat in lists:
                    lists[cat] = [e for e in lists[cat] if e.id != id_]
                moved.setdefault(cat, []).append(entry)
            elif op == "remove" and len(change) == 3:
                cat, id_ = change[1], change[2]
                IndexLine(id_, cat, "", "").normalized()  # checks category and id
                kept = lists.get(cat)
                if kept:
                    lists[cat] = [e for e in kept if e.id != id_]
            else:
                raise MemoryMdError(
                    f"expected ('upsert', IndexLine), ('archive', IndexLine) or ('remove', category, "
                    f"id), found {change!r:.120}"
                )
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
    archived: dict[
        str, list[IndexLine]
    ] = {  # the last of each id, unless a later change brought it back
        cat: list({e.id: e for e in lst if touched[cat].get(e.id) == "archive"}.values())
        for cat, lst in moved.items()
    }
    notes: list[str] = []
    for cat in order:
        b = budget_of(cat)
        lst = lists[cat]
        if len(lst) > b:
            k = len(lst) - b
            archived.setdefault(cat, []).extend(lst[b:])
            del lst[b:]
            notes.append(
                f"{cat}: {k} {'entry' if k == 1 else 'entries'} over its budget of {b} lines; "
                f"moved the {'oldest' if k == 1 else f'{k} oldest'} to {ARCHIVE_DIR}/{cat}.md"
            )

    # The file as pieces: Claude's text between sections, and each section (original bytes while untouched).
    pieces: list[str] = []
    index: dict[str, int] = {}
    dirty: dict[str, bool] = {}
    nls: dict[str, str] = {}
    tails: dict[str, str] = {}
    prev = 0
    for cat, sec in p.sections.items():
        pieces.append(text[prev : sec.start])
        b = budget_of(cat)
        nls[cat], tails[cat] = sec.newline, sec.tail
        dirty[cat] = lists[cat] != sec.entries or b != sec.budget
        index[cat] = len(pieces)
        pieces.append(
            render_section(cat, b, lists[cat], sec.newline, sec.tail)
            if dirty[cat]
            else text[sec.start : sec.end]
        )
        prev = sec.end
    pieces.append(text[prev:])
    if new_cats:
        if p.open_fence is not None:
            raise line_error(
                p.open_fence,
                "a code fence opened here is never closed, so a memcurate section added at "
                "the end of MEMORY.md would read as code; close the fence",
            )
        sep = _separator("".join(pieces), p.newline)
        for cat in new_cats:
            pieces.append(sep)
            index[cat] = len(pieces)
            pieces.append(render_section(cat, budget_of(cat), lists[cat], p.newline))
            dirty[cat], nls[cat], tails[cat] = True, p.newline, p.newline
            sep = p.newline  # after a section's end marker: one blank line

    seen = loaded("".join(pieces), max_lines, max_chars)
    over_limit = False
    if seen.cut:
        over_lines, over_chars = seen.total_lines > max_lines, seen.total_chars > max_chars
        before = {cat: len(lists[cat]) for cat in order}
        while seen.cut:
            # An entry line is one loaded line and its characters: drop as many as the excess asks, then
            # ask the model again (what is left at the end of the file is trimmed: the count can be off).
            lines_over, chars_over = seen.total_lines - max_lines, seen.total_chars - max_chars
            touched_now: set[str] = set()
            while lines_over > 0 or chars_over > 0 or not touched_now:
                candidates = [c for c in order if lists[c]]
                if not candidates:
                    break
                cat = max(
                    candidates,
                    key=lambda c: (
                        len(lists[c]) / max(budget_of(c), 1),
                        len(lists[c]),
                        NAMES.index(c),
                    ),
                )
                entry = lists[cat].pop()
                archived.setdefault(cat, []).insert(0, entry)
                lines_over, chars_over = (
                    lines_over - 1,
                    chars_over - utf16_len(entry.markdown()) - 1,
                )
                touched_now.add(cat)
            if not touched_now:
                over_limit = True
                break
            for cat in touched_now:
                pieces[index[cat]] = render_section(
                    cat, budget_of(cat), lists[cat], nls[cat], tails[cat]
                )
            seen = loaded("".join(pieces), max_lines, max_chars)
        why = _limits_text(over_lines, over_chars, max_lines, max_chars)
        for cat in order:
            if len(lists[cat]) < before[cat]:
                notes.append(
                    f"shrank {cat} from {before[cat]} to {len(lists[cat])} lines to stay within {why}; "
                    f"the oldest moved to {ARCHIVE_DIR}/{cat}.md"
                )
    new_text = "".join(pieces)
    lines, chars = seen.total_lines if new_text.strip() else 0, seen.total_chars
    if over_limit:
        ours = set(index.values())
        claude_lines, claude_chars = measure(
            "".join(x for i, x in enumerate(pieces) if i not in ours)
        )
        notes.append(
            f"MEMORY.md is {lines} lines and {chars} characters as Claude Code loads it even with "
            f"memcurate's sections empty (limits: {max_lines} lines, {max_chars} characters); Claude's own "
            f"lines take {claude_lines} lines and {claude_chars} characters. memcurate keeps its sections "
            "with no entries and does not touch Claude's lines"
        )
    for cat, entries in archived.items():
        fresh = [e.id for e in entries if touched.get(cat, {}).get(e.id) == "upsert"]
        if fresh:
            shown = ", ".join(fresh[:5]) + (f" and {len(fresh) - 5} more" if len(fresh) > 5 else "")
            notes.append(
                f"{cat}: no room in MEMORY.md for {shown} from this change: "
                f"{'it goes' if len(fresh) == 1 else 'they go'} straight to {ARCHIVE_DIR}/{cat}.md"
            )
    unarchive: dict[str, list[str]] = {}
    for cat, ids in touched.items():
        gone = {e.id for e in archived.get(cat, ())}
        keep = [i for i in ids if i not in gone]
        if keep:
            unarchive[cat] = keep
    return Plan(
        new_text, archived, notes, unarchive, lines, chars, over_limit, new_text != original
    )


_LINE_CHANGES = ("drop_line", "replace_line")


def _claude_line_changes(p: Parsed, changes) -> tuple[Parsed, list[tuple[str, int, IndexLine]]]:
    """The file with the line changes of Claude's lines made (parsed again), and the entry edits:
    (category, index in its section, new entry)."""
    from memcurate.curator.memory.memory_md.claude_lines import claude_lines

    text = p.text
    owned = {n for s in p.sections.values() for n in range(s.line, s.end_line + 1)}
    raw = text[1:].split("\n") if text.startswith("\ufeff") else text.split("\n")
    edits: list[tuple[str, int, IndexLine]] = []
    for i, change in enumerate(changes, 1):
        op = change[0]
        try:
            if op == "drop_line" and len(change) == 2 and isinstance(change[1], str):
                hits = {c.number for c in claude_lines(text) if line_digest(c.text) == change[1]}
                if not hits:
                    raise MemoryMdError(f"that line of Claude's is gone ({GONE})")
                text = rewrite_lines(text, hits, None)
                raw = text[1:].split("\n") if text.startswith("\ufeff") else text.split("\n")
                owned = {
                    n for s in parse(text).sections.values() for n in range(s.line, s.end_line + 1)
                }
            elif (
                op == "replace_line"
                and len(change) == 4
                and isinstance(change[1], str)
                and isinstance(change[2], str)
                and (change[3] is None or isinstance(change[3], str))
            ):
                _, base, new, ref = change
                if ref is None:
                    hits = {
                        n
                        for n, line in enumerate(raw, 1)
                        if n not in owned and line.strip() and line_digest(line) == base
                    }
                    if not hits:
                        raise MemoryMdError(f"that line of Claude's is gone ({GONE})")
                    text = rewrite_lines(text, hits, new)
                    raw = text[1:].split("\n") if text.startswith("\ufeff") else text.split("\n")
                    continue
                edits.append(_entry_edit(parse(text), raw, base, new, ref))
            else:
                raise MemoryMdError(
                    f"expected ('drop_line', base) or ('replace_line', base, text, ref or None), "
                    f"found {change!r:.120}"
                )
        except MemoryMdError as e:
            raise MemoryMdError(f"line change {i}: {e}") from None
    return (parse(text) if text != p.text else p), edits


def _entry_edit(
    p: Parsed, raw: list[str], base: str, new: str, ref: str
) -> tuple[str, int, IndexLine]:
    """(category, index, entry): the entry of `ref` whose line hashes to `base`, as `new` has it."""
    cat, _, id_ = ref.partition("/")
    sec = p.sections.get(cat)
    k = next((k for k, e in enumerate(sec.entries) if e.id == id_), None) if sec else None
    if k is None or sec is None:
        raise MemoryMdError(f"{ref} has no line in MEMORY.md ({GONE})")
    lines = [
        raw[n - 1].strip()
        for n in range(sec.line + 1, sec.end_line)
        if raw[n - 1].strip().startswith("- [")
    ]
    if line_digest(lines[k]) != base:
        raise MemoryMdError(f"the MEMORY.md line of {ref} {GONE}")
    m = _ENTRY.match(new.strip())
    if m is None or (m.group(2), m.group(3)) != (cat, id_):
        raise MemoryMdError(
            f"{new!r:.120} is not an entry line of {ref} ('- [title]({ref}.md) {EM_DASH} description')"
        )
    return (
        cat,
        k,
        IndexLine(id_, cat, unescape(m.group(1)), unescape(m.group(4) or "")).normalized(),
    )


def keep_sections(text: str, now: str | None) -> str:
    """`text` (MEMORY.md as Claude means it) with memcurate's sections as `now` holds them: each
    section of `text` replaced by its current version (dropped when gone), sections added since
    appended; Claude's lines stay as `text` has them. MemoryMdError when either cannot be read."""
    mine, current = parse(text), parse(now or "")
    parts, pos = [], 0
    for cat, sec in mine.sections.items():
        parts.append(mine.text[pos : sec.start])
        if cat in current.sections:
            cur = current.sections[cat]
            parts.append(current.text[cur.start : cur.end].rstrip("\r\n") + (sec.tail or ""))
        pos = sec.end
    parts.append(mine.text[pos:])
    out = "".join(parts)
    for cat, cur in current.sections.items():
        if cat in mine.sections:
            continue
        out += (
            _separator(out, mine.newline)
            + current.text[cur.start : cur.end].rstrip("\r\n")
            + mine.newline
        )
    return out
