"""Secrets in any memory file: memcurate's memories, Claude's topic files, MEMORY.md (line by line)
and the archive files. Each is high severity; its proposal replaces the secrets with [REDACTED:<kind>]
(curator/util/redact.py): a memory or topic file is written whole, redacted; MEMORY.md and the archive
files change only the lines holding one (`replace_line`: a line of Claude's, a memcurate entry line, a
line of an archive file), every other byte as it was."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.hygiene import Finding, fix
from memcurate.curator.hygiene.texts import memory_texts
from memcurate.curator.library.entries import CLAUDE, file_ref, line_hash, line_ref
from memcurate.curator.memory.memory_md.format import (
    _ENTRY,
    IndexLine,
    MemoryMdError,
    parse,
    read_text,
)
from memcurate.curator.memory.memory_md.writing import memory_md_path
from memcurate.curator.util.paths import ARCHIVE_DIR

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

MEMORY_MD_REF = f"{CLAUDE}/MEMORY.md"


def detect(engine: Context) -> list[Finding]:
    from memcurate.curator.util.redact import find_secrets, may_hold_secrets, redact_text

    findings = []
    # MEMORY.md's lines are checked with the file, below
    texts = [t for t in memory_texts(engine) if not t.is_line]
    for i in may_hold_secrets([t.text for t in texts]):
        t = texts[i]
        kinds = find_secrets(t.text)
        if kinds:
            findings.append(
                _finding(
                    t.ref,
                    t.entry.where,
                    t.text,
                    kinds,
                    [
                        {
                            "op": "write",
                            "ref": t.ref,
                            "base_hash": t.entry.hash,
                            "text": redact_text(t.text),
                        }
                    ],
                )
            )
    for where, text in _archive_files(engine.root):
        kinds = find_secrets(text)
        if kinds:
            ref = file_ref(where)
            ops: dict[str, dict] = {}
            for line in text.split("\n"):
                if line.strip() and find_secrets(line):
                    ops.setdefault(line_hash(line), _replace(ref, line, redact_text(line.strip())))
            findings.append(_finding(ref, where, text, kinds, list(ops.values())))
    findings += _memory_md(engine, find_secrets, redact_text)
    return findings


def _replace(ref: str, line: str, new: str) -> dict:
    return {"op": "replace_line", "ref": ref, "base_hash": line_hash(line), "text": new}


def _finding(
    ref: str, where: str, text: str, kinds: list[str], ops: list[dict], refs=None, lines=None
) -> Finding:
    lines = lines or [n for n, line in enumerate(text.split("\n"), 1) if _has_secret(line)]
    at = f" line {lines[0]}" if lines else ""
    said = ", ".join(kinds)
    detail = {"where": where, "kinds": kinds, "lines": lines}
    if ops:
        detail["fix"] = fix(
            "update",
            f"Redact the secret in {where}",
            f"{where} holds {said}; every session that loads it sees the secret. Proposed: the "
            "same text with the secret replaced by [REDACTED:<kind>] (rotate the secret too).",
            ops,
        )
    return Finding(
        "secret", "high", tuple(refs or (ref,)), f"{where}{at} holds a secret ({said})", detail
    )


def _has_secret(line: str) -> bool:
    from memcurate.curator.util.redact import find_secrets

    return bool(find_secrets(line))


def _archive_files(root: str):
    """(where, text) of every Markdown file under the archive folder (its entry files and Claude's archived
    topic files; the archived memories in `.archive/<category>/` are memories, checked with the others)."""
    top = os.path.join(root, ARCHIVE_DIR)
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not (folder == top and d in CATEGORIES)
        )
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                path = os.path.join(folder, name)
                try:
                    text = read_text(path)
                except ValueError:
                    continue  # not UTF-8: no text to look in
                if text:
                    yield os.path.relpath(path, root).replace(os.sep, "/"), text


def _memory_md(engine: Context, find_secrets, redact_text) -> list[Finding]:
    path = memory_md_path(engine.root)
    try:
        text = read_text(path)
    except ValueError:
        return []
    if not text or not find_secrets(text):
        return []
    # numbered as memory_md numbers them
    parts = (text[1:] if text.startswith("\ufeff") else text).split("\n")
    hits = [i for i, line in enumerate(parts) if find_secrets(line)]
    kinds = sorted({k for i in hits for k in find_secrets(parts[i])}) or find_secrets(text)
    owned: dict[int, str] | None
    try:
        owned = {
            n: cat for cat, s in parse(text).sections.items() for n in range(s.line, s.end_line + 1)
        }
    except MemoryMdError:
        owned = None  # which lines are whose is not known: found, no fix proposed (check says why it is damaged)
    ops: dict[str, dict] = {}
    refs: list[str] = []
    for i in hits if owned is not None else ():
        line = parts[i].strip()
        # Claude's: the line redacted, every other byte of the file as it was
        if i + 1 not in (owned or {}):
            refs.append(line_ref(line))
            ops.setdefault(refs[-1], _replace(refs[-1], line, redact_text(line)))
            continue
        m = _ENTRY.match(line)
        if m is None:
            continue  # a marker or heading cannot hold one and still be read
        e = IndexLine(m.group(3), m.group(2), m.group(1), m.group(4) or "")
        ref = f"{e.category}/{e.id}"
        redacted = IndexLine(e.id, e.category, *(redact_text(x) for x in _unescaped(e)))
        refs.append(ref)
        ops.setdefault(ref, _replace(ref, line, redacted.markdown()))
    refs = list(dict.fromkeys(refs)) or [line_ref(parts[i]) for i in hits] or [MEMORY_MD_REF]
    return [
        _finding(
            MEMORY_MD_REF,
            "MEMORY.md",
            text,
            kinds,
            list(ops.values()),
            refs=refs,
            lines=[i + 1 for i in hits],
        )
    ]


def _unescaped(e: IndexLine) -> tuple[str, str]:
    from memcurate.curator.memory.memory_md.entry import unescape

    return unescape(e.title), unescape(e.description)
