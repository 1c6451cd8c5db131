"""MEMORY.md's own hygiene: past Claude Code's load limit (over-limit: exactly when Claude Code would cut it,
memory_md/loaded.py), lines linking files that are gone (missing-link), memory files no line links
(unlinked), memcurate's sections unreadable (damaged: a marker edited by hand, to fix by hand; the limit is
still reported, its lines taken from the view), a section someone else removed (section-removed:
memory_md/writing.py's coexistence rule; memcurate re-creates it only when the person does).

MEMORY.md is read once; lines are told apart with memory_md.load_view (a memcurate category's or
Claude's). Claude's lines are only ever proposed for removal (`drop_line`), never edited.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.hygiene import Finding, fix
from memcurate.curator.hygiene.texts import library_entries
from memcurate.curator.library.entries import CLAUDE, MEMCURATE, is_line_ref, line_hash, line_ref
from memcurate.curator.memory.memory_md import claude_lines as md_lines
from memcurate.curator.memory.memory_md.archive import read_archive
from memcurate.curator.memory.memory_md.format import parse, read_text
from memcurate.curator.memory.memory_md.loading import LoadView, load_view
from memcurate.curator.memory.memory_md.planning import plan
from memcurate.curator.memory.memory_md.writing import (
    budgets_from,
    limits_from,
    memory_md_path,
    removed_sections,
)

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

_ENTRY = re.compile(r"- \[.*\]\(([a-z_]+)/([a-z0-9-]+)\.md\)")


def claude_lines(view: LoadView):
    """Claude's lines that are memories (non-blank, not a heading), as LoadLines. When memcurate's
    sections cannot be told apart (`view.error`), every line the view gives Claude that is no heading
    nor a marker: what Claude reads past the cut is still known."""
    if view.error:
        return [
            ln
            for ln in view.lines
            if ln.owner == CLAUDE
            and ln.text.strip()
            and not ln.text.lstrip().startswith(("#", "<!--"))
        ]
    ours = {ln.number for ln in md_lines.claude_lines("\n".join(ln.text for ln in view.lines))}
    return [ln for ln in view.lines if ln.number in ours]


def _numbers(first: int, last: int) -> str:
    return f"line {first} is" if first == last else f"lines {first}-{last} are"


def drop_line(text: str) -> dict:
    return {"op": "drop_line", "ref": line_ref(text), "base_hash": line_hash(text)}


def read_view(engine: Context) -> tuple[str | None, LoadView]:
    text = read_text(memory_md_path(engine.root))
    max_lines, max_chars = limits_from(engine.cfg)
    return text, load_view(text or "", max_lines, max_chars, budgets_from(engine.cfg))


def detect(engine: Context) -> list[Finding]:
    text, view = read_view(engine)
    if text is None:
        return []
    findings = over_limit(engine, text, view)
    if view.error:
        findings.append(damaged(view))
    else:
        removed = removed_sections(engine.root, parse(text))
        findings += missing_links(engine, view)
        findings += [section_removed(engine, cat) for cat in removed]
        findings += unlinked(engine, text, removed)
    return findings


def section_removed(engine: Context, category: str) -> Finding:
    """A memcurate section someone else (Claude's consolidation) took out of MEMORY.md: said, with how to put
    it back; never re-created by memcurate on its own (that would fight the consolidation on every save)."""
    budget = budgets_from(engine.cfg).get(category, 0)
    begin = f"<!-- memcurate:begin section={category} budget={budget} -->"
    end = f"<!-- memcurate:end section={category} -->"
    return Finding(
        "section-removed",
        "medium",
        ("claude/MEMORY.md",),
        f"memcurate's {category} section was removed from MEMORY.md by someone else (Claude's "
        f"consolidation?): its memories are saved but not listed, and memcurate does not re-create it "
        f"on its own. To have it back, put these two lines where it should stand: {begin} {end}",
        {"category": category, "markers": [begin, end]},
    )


def damaged(view: LoadView) -> Finding:
    """MEMORY.md whose memcurate sections cannot be read (a marker damaged by hand): said, never fixed."""
    return Finding(
        "damaged",
        "high",
        ("claude/MEMORY.md",),
        f"MEMORY.md cannot be read as memcurate keeps it ({view.error}): fix it by hand (its "
        "links are checked again once it reads)",
        {"error": view.error},
    )


def over_limit(engine: Context, text: str, view: LoadView) -> list[Finding]:
    if view.cut is None:
        return []
    past = view.past_cut()
    mine = [ln for ln in past if ln.owner != CLAUDE and ln.text.startswith("- [")]
    theirs = [ln for ln in claude_lines(view) if not ln.loaded and not ln.dropped]
    limits = f"{view.max_lines} lines / {view.max_chars:,} characters"
    message = (
        f"MEMORY.md is {view.total_lines} lines / {view.total_chars:,} characters as Claude Code counts them "
        f"(comment lines not counted), past its load limit of {limits}: "
        f"{_numbers(view.cut, past[-1].number if past else view.cut)} never loaded "
        f"({len(mine)} of memcurate's entries, {len(theirs)} of Claude's lines)"
    )
    detail = {
        "cut": view.cut,
        "lines": view.total_lines,
        "chars": view.total_chars,
        "max_lines": view.max_lines,
        "max_chars": view.max_chars,
        "warning": view.warning,
        "claude_code": view.checked_against,
        "past_cut": [ln.number for ln in past],
    }
    refs: list[str] = []
    ops: list[dict] = []
    if not view.error:
        # What memcurate's own planning would move out to fit: the oldest entries, fullest section first.
        shrunk = plan(text, [], budgets_from(engine.cfg), view.max_lines, view.max_chars)
        for cat, entries in shrunk.archived.items():
            for e in entries:
                # a stat: its bytes are not needed
                if os.path.isfile(os.path.join(engine.root, e.path)):
                    refs.append(f"{cat}/{e.id}")
                    # only the line moves: the memory stays active (as a section over its budget does)
                    ops.append({"op": "archive_line", "ref": f"{cat}/{e.id}"})
        still = (
            load_view(shrunk.text, view.max_lines, view.max_chars) if shrunk.over_limit else None
        )
        if still is not None:
            # Only the person can trim Claude's own lines: proposed, never done.
            for ln in claude_lines(still):
                # a comment line Claude Code drops costs nothing
                if not ln.loaded and not ln.dropped:
                    refs.append(line_ref(ln.text))
                    ops.append(drop_line(ln.text))
    if not refs:
        refs = [line_ref(ln.text) for ln in theirs] or ["claude/MEMORY.md"]
    kind = "unlink" if any(op["op"] == "drop_line" for op in ops) else "archive"
    finding_fix = None
    if ops:
        archived = sum(op["op"] == "archive_line" for op in ops)
        dropped = len(ops) - archived
        said = []
        if archived:
            said.append(
                f"move the {archived} oldest of memcurate's MEMORY.md lines to its archive files "
                "(the memories stay)"
            )
        if dropped:
            said.append(
                f"remove {dropped} of Claude's own lines past the cut (only you can decide that)"
            )
        finding_fix = fix(
            kind,
            f"Bring MEMORY.md within {limits}",
            f"MEMORY.md runs to line {view.lines[-1].number}; Claude Code stops reading "
            f"before line {view.cut}. Proposed: {' and '.join(said)}.",
            ops,
        )
    if finding_fix:
        detail["fix"] = finding_fix
    return [Finding("over-limit", "high", tuple(dict.fromkeys(refs)), message, detail)]


def missing_links(engine: Context, view: LoadView) -> list[Finding]:
    findings = []
    root = engine.root
    for ln in view.lines:
        if ln.owner == CLAUDE:
            continue
        m = _ENTRY.match(ln.text)
        if m and not os.path.exists(os.path.join(root, m.group(1), f"{m.group(2)}.md")):
            ref = f"{m.group(1)}/{m.group(2)}"
            findings.append(
                Finding(
                    "missing-link",
                    "medium",
                    (ref,),
                    f"MEMORY.md line {ln.number} links {ref}.md, which does not exist",
                    {
                        "line": ln.number,
                        "target": f"{ref}.md",
                        "fix": fix(
                            "unlink",
                            f"Remove the MEMORY.md entry of the missing {ref}.md",
                            f"Line {ln.number} of MEMORY.md links {ref}.md, but there is no such file; Claude "
                            "would follow a dead link.",
                            [{"op": "delete", "ref": ref, "base_hash": None}],
                        ),
                    },
                )
            )
    for cl in md_lines.claude_lines("\n".join(x.text for x in view.lines)):
        gone = (
            [cl.target] if cl.target and not os.path.exists(os.path.join(root, cl.target)) else []
        )
        if gone:
            ref = line_ref(cl.text)
            findings.append(
                Finding(
                    "missing-link",
                    "medium",
                    (ref,),
                    f"MEMORY.md line {cl.number} (Claude's) links {gone[0]}, which does not exist",
                    {
                        "line": cl.number,
                        "target": gone[0],
                        "targets": gone,
                        "fix": fix(
                            "unlink",
                            f"Remove Claude's MEMORY.md line linking the missing {gone[0]}",
                            f"Line {cl.number} of MEMORY.md, one of Claude's own, links {', '.join(gone)}, which "
                            "does not exist. Only you can remove one of Claude's lines.",
                            [drop_line(cl.text)],
                        ),
                    },
                )
            )
    return findings


def unlinked(engine: Context, text: str, removed=()) -> list[Finding]:
    """Active memory files no MEMORY.md line links, nor an archive file (what MEMORY.md had no room for);
    not those of a `removed` section (section-removed says so: listing them waits for the person)."""
    linked = set(md_lines.links(text))
    for cat in CATEGORIES:
        linked.update(e.path for e in read_archive(engine.root, cat))
    findings = []
    for entry in library_entries(engine):
        if (
            entry.status != "active"
            or entry.broken
            or is_line_ref(entry.ref)
            or entry.where in linked
        ):
            continue
        if entry.owner == MEMCURATE and entry.where.split("/", 1)[0] in removed:
            continue
        if entry.owner == MEMCURATE:
            findings.append(
                Finding(
                    "unlinked",
                    "low",
                    (entry.ref,),
                    f"{entry.where} is an active memory that no MEMORY.md line links: Claude never sees it",
                    {
                        "where": entry.where,
                        "fix": fix(
                            "update",
                            f"Link {entry.ref} from MEMORY.md",
                            f"{entry.where} is active, but no line of MEMORY.md (nor its archive) links it, so "
                            "Claude never loads it. Proposed: its entry in its section.",
                            [{"op": "add_line", "ref": entry.ref}],
                        ),
                    },
                )
            )
        elif entry.owner == CLAUDE:
            findings.append(
                Finding(
                    "unlinked",
                    "low",
                    (entry.ref,),
                    f"{entry.where} (Claude's) is linked from no MEMORY.md line; press adopt in the library to "
                    "make it a memcurate memory with its line",
                    {"where": entry.where},
                )
            )
    return findings
