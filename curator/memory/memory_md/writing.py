"""MEMORY.md and its archive files written: `apply` carries a plan out, `read_current` and `usage` read.

`apply` writes the archive before MEMORY.md, so a crash in between leaves an
entry in both places, never in neither.

Coexistence with what Claude writes to MEMORY.md itself (an index it writes when the file is missing,
its consolidation's rewrites: Claude Code 2.1.328's prompts ask for lines `- [Title](file.md) — one-line
hook` and, in "Phase 4 — Prune and index", to "Remove pointers to memories that are now stale" and "Add
pointers to newly important memories"). Two rules, applied to memcurate's entry upserts:

- a memory file that one of Claude's own lines (outside memcurate's sections) already links gets no
  line of memcurate's: Claude lists it (`claude_lines.links_of_claude`, the link's target relative to
  the root); an entry memcurate had for it is taken out, so the file is not listed twice;
- a section Claude removed is not re-created behind its back: when MEMORY.md exists without a
  category's section while memory files of that category are in the root that neither Claude's lines
  nor the archive file list (memcurate wrote that section when it saved them), `removed_sections`
  names it; its memories are still saved, not listed,
  the plan's notes, `usage` (status) and `check` (section-removed) say so, and only a person re-creates
  it (`restore=`, or its markers put back by hand). So memcurate never fights a consolidation by
  re-adding, on every save, what Claude took out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from memcurate.curator.categories import NAMES
from memcurate.curator.memory.memory_md.archive import (
    archive_add,
    archive_drop,
    archive_path,
    read_archive,
)
from memcurate.curator.memory.memory_md.claude_lines import links_of_claude
from memcurate.curator.memory.memory_md.format import (
    IndexLine,
    MemoryMdError,
    Parsed,
    parse,
    read_text,
    utf8_text,
)
from memcurate.curator.memory.memory_md.loaded import limits_from, loaded  # noqa: F401 (limits_from re-exported)
from memcurate.curator.memory.memory_md.planning import Plan, plan
from memcurate.curator.util.atomic import Unsettled, replace_if_unchanged, write_text

FILE_NAME = "MEMORY.md"


def budgets_from(cfg: dict) -> dict[str, int]:
    return {
        name: cfg["categories"][name]["budget"]
        for name in NAMES
        if name in cfg.get("categories", {})
    }


def memory_md_path(memory_root) -> str:
    return os.path.join(os.fspath(memory_root), FILE_NAME)


def read_current(memory_root) -> tuple[str | None, Parsed]:
    """MEMORY.md as it is (None when missing) and parsed; MemoryMdError (naming the file) when damaged.

    A save calls this before it writes anything, and hands the result to `apply`.
    """
    path = memory_md_path(os.fspath(memory_root))
    old = read_text(path)
    try:
        return old, parse(old or "")
    except MemoryMdError as e:
        raise MemoryMdError(f"{path}: {e}") from None


def apply(
    memory_root,
    cfg: dict,
    changes,
    *,
    current: tuple | None = None,
    restore: tuple = (),
    waiting: Callable[[], dict[str, set[str]]] | None = None,
) -> Plan:
    """Plan `changes` against `<root>/MEMORY.md` and carry the plan out; `current` is what
    `read_current` gave, if the caller has it. Upserts follow the module's coexistence rules;
    `restore`: categories whose removed section a person asked to re-create; `waiting`: the memories
    memcurate wrote whose MEMORY.md change is still to come (category -> ids), asked for only when a
    section looks removed (see `removed_sections`). The caller holds the root's lock, which keeps other
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
        text = "" if data is None else utf8_text(path, data)
        parsed = current[1] if current is not None and text == (current[0] or "") else None
        try:
            parsed = parsed if parsed is not None else parse(text)
            kept, notes = coexist(root, data is not None, parsed, changes, restore, waiting)
            result = plan(text, kept, budgets, *limits, parsed=parsed)
        except MemoryMdError as e:
            raise MemoryMdError(f"{path}: {e}") from None
        result.notes[:0] = notes
        # before MEMORY.md: an entry is in both, never in neither
        for apath, t in _archive_adds(root, result):
            write_text(apath, t)
        plans.append(result)
        return (
            result.text.encode("utf-8")
            if result.changed or (data is None and result.text)
            else None
        )

    try:
        replace_if_unchanged(path, render)
    except Unsettled as e:
        raise MemoryMdError(
            f"{e}; its section entries may lag until the next run finishes the save"
        ) from None
    final = plans[
        -1
    ]  # a last render may find the file as it stands right (what others appended kept)
    result = next((p for p in reversed(plans) if p.changed), final)
    result = replace(result, text=final.text, lines=final.lines, chars=final.chars)
    for apath, t in _archive_drops(root, result, [p for p in plans if p is not final]):
        write_text(apath, t)
    return result


def removed_sections(
    root: str,
    parsed: Parsed,
    exists: bool = True,
    saving: dict | None = None,
    waiting: Callable[[], dict[str, set[str]]] | None = None,
) -> list[str]:
    """The categories whose section someone else removed from an existing MEMORY.md: no section in it, yet
    memory files of that category in the root that nothing else lists (Claude's own lines, the archive
    file) other than `saving`'s (category -> ids saved now) and `waiting()`'s (written, their MEMORY.md
    change to come: an --auto-approve run writes its memory files before its one MEMORY.md write, and
    one killed in between leaves them so): memcurate wrote that section when it saved them."""
    if not exists:
        return []
    out = []
    theirs = None
    pending: dict[str, set[str]] | None = None
    for cat in NAMES:
        if cat in parsed.sections:
            continue
        try:
            names = os.listdir(os.path.join(root, cat))
        except OSError:
            continue
        others = {f"{cat}/{n}" for n in names if n.endswith(".md") and not n.startswith(".")} - {
            f"{cat}/{i}.md" for i in (saving or {}).get(cat, ())
        }
        if others:
            theirs = links_of_claude(parsed.text) if theirs is None else theirs
            others -= set(theirs) | {e.path for e in read_archive(root, cat)}
        if others and waiting is not None:
            pending = waiting() if pending is None else pending
            others -= {f"{cat}/{i}.md" for i in pending.get(cat, ())}
        if others:
            out.append(cat)
    return out


def coexist(
    root: str, exists: bool, parsed: Parsed, changes, restore=(), waiting=None
) -> tuple[list, list[str]]:
    """`changes` as the module's coexistence rules leave them, and notes saying what they held back."""
    changes = list(changes)
    ups = [
        c[1]
        for c in changes
        if isinstance(c, (tuple, list))
        and len(c) == 2
        and c[0] == "upsert"
        and isinstance(c[1], IndexLine)
    ]
    if not ups:
        return changes, []
    theirs = links_of_claude(parsed.text)
    saving: dict[str, set[str]] = {}
    for e in ups:
        saving.setdefault(e.category, set()).add(e.id)
    removed = set(removed_sections(root, parsed, exists, saving, waiting)) - set(restore)
    listed = {(cat, e.id) for cat, sec in parsed.sections.items() for e in sec.entries}
    out, notes = [], []
    for c in changes:
        up = c[1] if isinstance(c, (tuple, list)) and len(c) == 2 and c[0] == "upsert" else None
        if not isinstance(up, IndexLine):
            out.append(c)
        elif f"{up.category}/{up.id}.md" in theirs:
            notes.append(
                f"{up.category}/{up.id}: not listed in memcurate's section: Claude's own line "
                f"{theirs[f'{up.category}/{up.id}.md']} of MEMORY.md links it"
            )
            if (up.category, up.id) in listed:
                out.append(("remove", up.category, up.id))
        elif up.category in removed:
            notes.append(
                f"{up.category}/{up.id}: saved, not listed: memcurate's {up.category} section was removed "
                "from MEMORY.md by someone else (Claude's consolidation?); it is re-created only when "
                "you ask (`memcurate check` says how)"
            )
        else:
            out.append(c)
    return out, notes


def _archive_adds(root: str, result: Plan) -> list[tuple[str, str]]:
    """The archive files with the entries `result` moves out of MEMORY.md (all read before any is written)."""
    writes = []
    for cat in NAMES:
        batch = result.archived.get(cat)
        if batch:
            apath = archive_path(root, cat)
            current = read_text(apath)
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
            current = read_text(apath)
            if current is not None:
                dropped = archive_drop(current, cat, drops[cat])
                if dropped != current:
                    writes.append((apath, dropped))
    return writes


@dataclass(frozen=True)
class SectionUse:
    """A MEMORY.md section against its budget; `removed`: someone else removed the section."""

    used: int
    budget: int
    removed: bool = False


@dataclass(frozen=True)
class LoadTotals:
    """MEMORY.md's lines and characters as Claude Code counts them (loaded.py) against its limits; `cut`
    whether Claude Code would cut it, `bytes` the file's size, `entries` every section's lines."""

    lines: int
    chars: int
    max_lines: int
    max_chars: int
    entries: int
    cut: bool
    bytes: int


@dataclass(frozen=True)
class Budgets:
    """MEMORY.md's budgets (`memcurate status`, the TUI's budgets panel): every category's section in
    category order, the sections someone else removed (`removed_sections`), and the totals."""

    sections: dict[str, SectionUse]
    removed: list[str]
    total: LoadTotals

    def as_dict(self) -> dict:
        """The shape `status --json` prints: a section's "removed" only when it was removed."""
        return {
            "sections": {
                name: {"used": s.used, "budget": s.budget}
                | ({"removed": True} if s.removed else {})
                for name, s in self.sections.items()
            },
            "removed": list(self.removed),
            "total": asdict(self.total),
        }


def usage(memory_root, cfg: dict) -> Budgets:
    """MEMORY.md's budgets. A missing MEMORY.md counts as empty; MemoryMdError (naming the file and line)
    when it is damaged."""
    path = memory_md_path(memory_root)
    text = read_text(path) or ""
    try:
        p = parse(text)
    except MemoryMdError as e:
        raise MemoryMdError(f"{path}: {e}") from None
    budgets = budgets_from(cfg)
    removed = removed_sections(os.fspath(memory_root), p, os.path.exists(path))
    sections = {
        name: SectionUse(
            used=len(p.sections[name].entries) if name in p.sections else 0,
            budget=budgets.get(name, p.sections[name].budget if name in p.sections else 0),
            removed=name in removed,
        )
        for name in NAMES
    }
    max_lines, max_chars = limits_from(cfg)
    seen = loaded(text, max_lines, max_chars)
    return Budgets(
        sections=sections,
        removed=removed,
        total=LoadTotals(
            lines=seen.total_lines if text.strip() else 0,
            chars=seen.total_chars,
            max_lines=max_lines,
            max_chars=max_chars,
            entries=sum(s.used for s in sections.values()),
            cut=seen.cut,
            bytes=len(text.encode("utf-8")),
        ),
    )
