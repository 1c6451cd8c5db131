"""Secrets in any memory file: memcurate's memories, Claude's topic files, MEMORY.md (line by line)
and the archive files. Each is high severity; its proposal writes the file with the secrets redacted
([REDACTED:<kind>], curator/capture/redact.py), and for MEMORY.md changes only the lines holding one."""

from __future__ import annotations

import os

from curator.hygiene import Finding, fix
from curator.hygiene.texts import memory_texts
from curator.library.entries import CLAUDE, file_ref, line_ref
from curator.memory.memory_md.format import read_text
from curator.memory.memory_md.writing import memory_md_path
from curator.util.paths import ARCHIVE_DIR
from curator.util.stamps import content_hash

MEMORY_MD_REF = f"{CLAUDE}/MEMORY.md"


def detect(engine) -> list[Finding]:
    from curator.capture.redact import find_secrets, redact_text

    findings = []
    for t in memory_texts(engine):
        if t.is_line:
            continue  # MEMORY.md is checked whole below
        kinds = find_secrets(t.text)
        if kinds:
            findings.append(_finding(t.ref, t.entry.where, t.text, t.entry.hash, kinds, redact_text(t.text)))
    for where, text in _archive_files(engine.root):
        kinds = find_secrets(text)
        if kinds:
            findings.append(_finding(file_ref(where), where, text, content_hash(text), kinds, redact_text(text)))
    findings += _memory_md(engine, find_secrets, redact_text)
    return findings


def _finding(ref: str, where: str, text: str, base: str, kinds: list[str], redacted: str, refs=None,
             lines=None) -> Finding:
    lines = lines or [n for n, line in enumerate(text.split("\n"), 1) if _has_secret(line)]
    at = f" line {lines[0]}" if lines else ""
    said = ", ".join(kinds)
    return Finding(
        "secret", "high", tuple(refs or (ref,)), f"{where}{at} holds a secret ({said})",
        {"where": where, "kinds": kinds, "lines": lines,
         "fix": fix("update", f"Redact the secret in {where}",
                    f"{where} holds {said}; every session that loads it sees the secret. Proposed: the same "
                    "text with the secret replaced by [REDACTED:<kind>] (rotate the secret too).",
                    [{"op": "write", "ref": ref, "base_hash": base, "text": redacted}])})


def _has_secret(line: str) -> bool:
    from curator.capture.redact import find_secrets

    return bool(find_secrets(line))


def _archive_files(root: str):
    """(where, text) of every Markdown file under the archive folder (memcurate's and Claude's archived)."""
    top = os.path.join(root, ARCHIVE_DIR)
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                path = os.path.join(folder, name)
                try:
                    text = read_text(path)
                except ValueError:
                    continue  # not UTF-8: no text to look in
                if text:
                    yield os.path.relpath(path, root).replace(os.sep, "/"), text


def _memory_md(engine, find_secrets, redact_text) -> list[Finding]:
    path = memory_md_path(engine.root)
    try:
        text = read_text(path)
    except ValueError:
        return []
    if not text or not find_secrets(text):
        return []
    parts = text.split("\n")
    hits = [i for i, line in enumerate(parts) if find_secrets(line)]
    kinds = sorted({k for i in hits for k in find_secrets(parts[i])}) or find_secrets(text)
    for i in hits:
        parts[i] = redact_text(parts[i])  # the line only: every other byte of the file stays
    refs = [line_ref(text.split("\n")[i]) for i in hits] or [MEMORY_MD_REF]
    return [_finding(MEMORY_MD_REF, "MEMORY.md", text, content_hash(text.encode("utf-8")), kinds, "\n".join(parts),
                     refs=refs, lines=[i + 1 for i in hits])]
