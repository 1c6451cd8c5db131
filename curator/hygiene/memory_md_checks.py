"""MEMORY.md's own hygiene: past Claude Code's load limit (over-limit), lines linking files that are
gone (missing-link), memory files no line links (unlinked).

MEMORY.md is read once; lines are told apart with memory_md.load_view (a memcurate category's or
Claude's). Claude's lines are only ever proposed for removal (`drop_line`), never edited.
"""

from __future__ import annotations

import os
import re

from curator.hygiene import Finding, fix
from curator.memory.memory_md.format import read_text
from curator.memory.memory_md.loading import CLAUDE, LoadView, load_view
from curator.memory.memory_md.planning import plan
from curator.memory.memory_md.writing import budgets_from, limits_from, memory_md_path
from curator.util.stamps import content_hash

MEMORY_MD = "MEMORY.md"
# A Markdown link's target: [text](target) or [text](<target>), title ignored.
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"\s{0,3}#{1,6}(?:\s|\Z)")


def line_ref(text: str) -> str:
    """The library ref of one of Claude's MEMORY.md lines (stable when it moves)."""
    return f"claude/{MEMORY_MD}#{content_hash(text.strip())[:12]}"


def claude_lines(view: LoadView):
    """Claude's lines that are entries: non-blank, not a heading (LoadLines)."""
    return [ln for ln in view.lines if ln.owner == CLAUDE and ln.text.strip() and not _HEADING.match(ln.text)]


def drop_line(text: str) -> dict:
    return {"op": "drop_line", "ref": line_ref(text), "base_hash": content_hash(text.strip())}


def local_links(line: str) -> list[str]:
    """The link targets of a line that name a file (no URL, no anchor-only link), anchors cut off."""
    out = []
    for target in _LINK.findall(line):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        target = target.split("#", 1)[0]
        if target:
            out.append(target)
    return out


def read_view(engine) -> tuple[str | None, LoadView]:
    text = read_text(memory_md_path(engine.root))
    max_lines, max_bytes = limits_from(engine.cfg)
    return text, load_view(text or "", max_lines, max_bytes, budgets_from(engine.cfg))


def detect(engine) -> list[Finding]:
    text, view = read_view(engine)
    if text is None:
        return []
    findings = over_limit(engine, text, view)
    findings += missing_links(engine, view)
    return findings


def _file_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return content_hash(f.read())
    except OSError:
        return None


def over_limit(engine, text: str, view: LoadView) -> list[Finding]:
    if view.cut is None:
        return []
    past = view.past_cut()
    mine = [ln for ln in past if ln.owner != CLAUDE and ln.text.startswith("- [")]
    theirs = [ln for ln in claude_lines(view) if not ln.loaded]
    limits = f"{view.max_lines} lines / {view.max_bytes} bytes"
    message = (f"MEMORY.md is {view.total_lines} lines / {view.total_bytes} bytes, past Claude Code's load limit of "
               f"{limits}: lines {view.cut}-{view.lines[-1].number} are never loaded "
               f"({len(mine)} of memcurate's entries, {len(theirs)} of Claude's lines)")
    detail = {"cut": view.cut, "lines": view.total_lines, "bytes": view.total_bytes,
              "max_lines": view.max_lines, "max_bytes": view.max_bytes,
              "past_cut": [ln.number for ln in past]}
    refs: list[str] = []
    ops: list[dict] = []
    if not view.error:
        # What memcurate's own planning would move out to fit: the oldest entries, fullest section first.
        shrunk = plan(text, [], budgets_from(engine.cfg), view.max_lines, view.max_bytes)
        for cat, entries in shrunk.archived.items():
            for e in entries:
                base = _file_hash(os.path.join(engine.root, e.path))
                if base is not None:
                    refs.append(f"{cat}/{e.id}")
                    ops.append({"op": "archive", "ref": f"{cat}/{e.id}", "base_hash": base})
        still = load_view(shrunk.text, view.max_lines, view.max_bytes) if shrunk.over_limit else None
        if still is not None:
            # Only the person can trim Claude's own lines: proposed, never done.
            for ln in claude_lines(still):
                if not ln.loaded:
                    refs.append(line_ref(ln.text))
                    ops.append(drop_line(ln.text))
    if not refs:
        refs = [line_ref(ln.text) for ln in theirs] or ["claude/MEMORY.md"]
    kind = "unlink" if any(op["op"] == "drop_line" for op in ops) else "archive"
    finding_fix = None
    if ops:
        archived = sum(op["op"] == "archive" for op in ops)
        dropped = len(ops) - archived
        said = []
        if archived:
            said.append(f"archive the {archived} oldest of memcurate's entries")
        if dropped:
            said.append(f"remove {dropped} of Claude's own lines past the cut (only you can decide that)")
        finding_fix = fix(kind, f"Bring MEMORY.md within {limits}",
                          f"MEMORY.md runs to line {view.total_lines}; Claude Code stops reading at line "
                          f"{view.cut - 1}. Proposed: {' and '.join(said)}.", ops)
    if finding_fix:
        detail["fix"] = finding_fix
    return [Finding("over-limit", "high", tuple(dict.fromkeys(refs)), message, detail)]


def missing_links(engine, view: LoadView) -> list[Finding]:
    findings = []
    root = engine.root
    for ln in view.lines:
        if ln.owner == CLAUDE:
            continue
        m = re.match(r"- \[.*\]\(([a-z_]+)/([a-z0-9-]+)\.md\)", ln.text)
        if m and not os.path.exists(os.path.join(root, m.group(1), f"{m.group(2)}.md")):
            ref = f"{m.group(1)}/{m.group(2)}"
            findings.append(Finding(
                "missing-link", "medium", (ref,),
                f"MEMORY.md line {ln.number} links {ref}.md, which does not exist",
                {"line": ln.number, "target": f"{ref}.md",
                 "fix": fix("unlink", f"Remove the MEMORY.md entry of the missing {ref}.md",
                            f"Line {ln.number} of MEMORY.md links {ref}.md, but there is no such file; Claude "
                            "would follow a dead link.", [{"op": "delete", "ref": ref, "base_hash": None}])}))
    for ln in claude_lines(view):
        gone = [t for t in local_links(ln.text) if not os.path.exists(os.path.join(root, _unquote(t)))]
        if gone:
            ref = line_ref(ln.text)
            findings.append(Finding(
                "missing-link", "medium", (ref,),
                f"MEMORY.md line {ln.number} (Claude's) links {gone[0]}, which does not exist",
                {"line": ln.number, "target": gone[0], "targets": gone,
                 "fix": fix("unlink", f"Remove Claude's MEMORY.md line linking the missing {gone[0]}",
                            f"Line {ln.number} of MEMORY.md, one of Claude's own, links {', '.join(gone)}, which "
                            "does not exist. Only you can remove one of Claude's lines.", [drop_line(ln.text)])}))
    return findings


def _unquote(target: str) -> str:
    from urllib.parse import unquote

    return unquote(target)
