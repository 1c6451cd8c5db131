"""MEMORY.md and its archive files written: `apply` carries a plan out, `read_current` and `usage` read.

`apply` writes the archive before MEMORY.md, so a crash in between leaves an
entry in both places, never in neither.
"""

from __future__ import annotations

import os
from dataclasses import replace

from curator.categories import NAMES
from curator.memory.memory_md.archive import archive_add, archive_drop, archive_path
from curator.memory.memory_md.format import MemoryMdError, Parsed, parse, read_text, utf8_text
from curator.memory.memory_md.loaded import limits_from, loaded  # noqa: F401 (limits_from re-exported)
from curator.memory.memory_md.planning import Plan, plan
from curator.util.atomic import Unsettled, replace_if_unchanged, write_text

FILE_NAME = "MEMORY.md"


def budgets_from(cfg: dict) -> dict[str, int]:
    return {name: cfg["categories"][name]["budget"] for name in NAMES if name in cfg.get("categories", {})}


def memory_md_path(memory_root) -> str:
    return os.path.join(os.fspath(memory_root), FILE_NAME)


def read_current(memory_root) -> tuple[str | None, "Parsed"]:
    """MEMORY.md as it is (None when missing) and parsed; MemoryMdError (naming the file) when damaged.

    A save calls this before it writes anything, and hands the result to `apply`.
    """
    path = memory_md_path(os.fspath(memory_root))
    old = read_text(path)
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
        text = "" if data is None else utf8_text(path, data)
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
    result = replace(result, text=final.text, lines=final.lines, chars=final.chars)
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


def usage(memory_root, cfg: dict) -> dict:
    """MEMORY.md's budgets for `memcurate status`:
    {"sections": {name: {"used": n, "budget": b}} (every category, in category order),
     "total": {"lines", "chars", "max_lines", "max_chars", "entries", "cut", "bytes"}}: lines and characters
    as Claude Code counts them (loaded.py), `cut` whether it would cut the file, `bytes` the file's size.
    A missing MEMORY.md counts as empty; MemoryMdError (naming the file and line) when it is damaged."""
    path = memory_md_path(memory_root)
    text = read_text(path) or ""
    try:
        p = parse(text)
    except MemoryMdError as e:
        raise MemoryMdError(f"{path}: {e}") from None
    budgets = budgets_from(cfg)
    cats = {name: {"used": len(p.sections[name].entries) if name in p.sections else 0,
                   "budget": budgets.get(name, p.sections[name].budget if name in p.sections else 0)}
            for name in NAMES}
    max_lines, max_chars = limits_from(cfg)
    seen = loaded(text, max_lines, max_chars)
    return {"sections": cats,
            "total": {"lines": seen.total_lines if text.strip() else 0, "chars": seen.total_chars,
                      "max_lines": max_lines, "max_chars": max_chars, "entries": sum(c["used"] for c in cats.values()),
                      "cut": seen.cut, "bytes": len(text.encode("utf-8"))}}
