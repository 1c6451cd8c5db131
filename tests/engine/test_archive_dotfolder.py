"""Archived memories where Claude Code 2.1's recall does not look: `.archive/`, a dot folder.

Claude Code 2.1's recall lists every `.md` of the memory folder to its selector except in dot folders
and under a few first-level folders; an archived memory offered there could be injected as current."""

from __future__ import annotations

import io
import json
import os
import sys
import unicodedata
from pathlib import Path

import pytest

from memcurate.curator import config
from memcurate.curator.engine import Engine
from memcurate.curator.library import edits
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util.paths import resolve_memory_root
from memcurate.curator.util.stamps import content_hash
from memcurate.hooks import dispatch

STAMP = "2026-11-22T10:04:00Z"
OLD_TIME = 1_700_000_000
# Claude Code 2.1.328's recall scan (its `C4`): a path is skipped when any part starts with "." or its first
# part, NFC-normalized, trailing dots and spaces removed, lowercased, is one of these.
RECALL_SKIPPED_TOP = ("team", "logs", "sessions", "proposals")


def recall_scan(root: Path) -> list[str]:
    """Every `.md` Claude Code's recall would list to its selector, relative to the memory folder."""
    out = []
    for p in sorted(root.rglob("*.md")):
        parts = p.relative_to(root).parts
        top = unicodedata.normalize("NFC", parts[0]).rstrip(". ").lower()
        if (
            p.is_file()
            and not any(x.startswith(".") for x in parts)
            and top not in RECALL_SKIPPED_TOP
        ):
            out.append("/".join(parts))
    return out


def doc(id="use-jwt-for-api-auth", category="decision", **kw) -> memfile.MemoryDoc:
    body = {
        "decision": "## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nThe API is stateless.",
        "constraint": "## Rule\nCI jobs cannot reach the internet.\n\n## Impact\nTests use fixtures.",
    }[category]
    fields = dict(
        id=id,
        category=category,
        title="Use JWT for API authentication",
        description="Stateless JWT tokens chosen for the public API",
        tags=["auth"],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "s1"}],
        body=body,
    )
    fields.update(kw)
    return memfile.MemoryDoc(**fields)


@pytest.fixture
def engine(project, tmp_path):
    root = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    root.mkdir()
    e = Engine(project, clock=lambda: STAMP)
    yield e
    e.close()


def save(engine, d: memfile.MemoryDoc) -> str:
    engine.store.create(d)
    memory_md.apply(engine.root, engine.cfg, [("upsert", memory_md.IndexLine.from_doc(d))])
    return content_hash(memfile.render(d))


def test_archiving_moves_the_file_into_the_dot_folder_and_the_library_still_has_it(engine):
    root = Path(engine.root)
    h = save(engine, doc())
    edits.archive(engine, "decision/use-jwt-for-api-auth", h)
    moved = root / ".archive" / "decision" / "use-jwt-for-api-auth.md"
    assert not (root / "decision" / "use-jwt-for-api-auth.md").exists()
    assert memfile.parse(moved.read_text()).status == "archived"
    [entry] = [e for e in engine.library() if e.ref == "decision/use-jwt-for-api-auth"]
    assert (entry.status, entry.where) == ("archived", ".archive/decision/use-jwt-for-api-auth.md")
    assert engine.library_search("stateless") == ["decision/use-jwt-for-api-auth"]
    assert recall_scan(root) == ["MEMORY.md"]


def test_a_restored_memory_moves_back_to_its_category_folder(engine):
    root = Path(engine.root)
    h = save(engine, doc())
    edits.archive(engine, "decision/use-jwt-for-api-auth", h)
    moved = root / ".archive" / "decision" / "use-jwt-for-api-auth.md"
    text = moved.read_text().replace("status: archived", "status: active")
    engine.edit_memory("decision/use-jwt-for-api-auth", text, content_hash(moved.read_bytes()))
    assert not moved.exists() and (root / "decision" / "use-jwt-for-api-auth.md").exists()
    assert "decision/use-jwt-for-api-auth.md" in recall_scan(root)


def old_layout(root: Path) -> dict[str, bytes]:
    """What memcurate before 2.1 left: an archived memory in its category folder (the older front matter),
    its archive entry files, a Claude file it archived, and a file of someone else's in archive/."""
    archived = memfile.render(
        doc(
            id="no-network",
            category="constraint",
            title="No network in CI",
            description="CI runners cannot reach the internet",
            status="archived",
        )
    )
    archived = archived.replace("name: no-network\n", "").replace(
        "metadata:\n  type: project\n", ""
    )
    files = {
        "constraint/no-network.md": archived.encode(),
        "archive/decision.md": "# Archived from MEMORY.md\n\n- [Old](../decision/old.md) \u2014 o\n".encode(),
        "archive/claude/notes/old.md": b"# Old notes of Claude's\r\nkept byte for byte\r\n",
        "archive/someone-else.md": b"not memcurate's\n",
        "notes/api.md": b"# API quirks\n",
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        os.utime(root / rel, (OLD_TIME, OLD_TIME))
    save_active = doc()
    (root / "decision").mkdir(exist_ok=True)
    (root / "decision" / "use-jwt-for-api-auth.md").write_text(memfile.render(save_active))
    return files


def test_an_older_layout_moves_on_the_next_locked_write_bytes_kept_and_claudes_files_untouched(
    engine,
):
    root = Path(engine.root)
    files = old_layout(root)
    assert "constraint/no-network.md" in recall_scan(root) and "archive/decision.md" in recall_scan(
        root
    )
    with engine.root_lock():
        pass
    moves = {
        "constraint/no-network.md": ".archive/constraint/no-network.md",
        "archive/decision.md": ".archive/decision.md",
        "archive/claude/notes/old.md": ".archive/claude/notes/old.md",
    }
    for old, new in moves.items():
        assert not (root / old).exists()
        assert (root / new).read_bytes() == files[old] and (root / new).stat().st_mtime == OLD_TIME
    assert (root / "archive" / "someone-else.md").read_bytes() == files["archive/someone-else.md"]
    assert (root / "notes" / "api.md").read_bytes() == files["notes/api.md"]
    assert (root / "decision" / "use-jwt-for-api-auth.md").exists()  # active: stays
    assert recall_scan(root) == [
        "archive/someone-else.md",
        "decision/use-jwt-for-api-auth.md",
        "notes/api.md",
    ]
    [entry] = [e for e in engine.library() if e.ref == "constraint/no-network"]
    assert entry.status == "archived"
    assert [e.id for e in memory_md.read_archive(engine.root, "decision")] == ["old"]
    # the category folders are not read through again
    assert (root / ".archive" / ".layout").exists()

    before = {
        p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "memcurate.lock" not in p.name
    }
    # a new process: the move is looked for again
    fresh = Engine(engine.project, clock=lambda: STAMP)
    try:
        with fresh.root_lock():
            pass
    finally:
        fresh.close()
    assert {
        p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "memcurate.lock" not in p.name
    } == before


def test_a_move_cut_short_is_finished_and_one_that_would_overwrite_is_left(engine):
    from memcurate.curator.memory import archive_layout

    root = Path(engine.root)
    files = old_layout(root)
    # a crash after the copy, before the removal: the copy is there with the same bytes
    (root / ".archive" / "constraint").mkdir(parents=True)
    (root / ".archive" / "constraint" / "no-network.md").write_bytes(
        files["constraint/no-network.md"]
    )
    # another file already where an entry file would go
    (root / ".archive" / "decision.md").write_bytes(b"other bytes\n")
    moved, left = archive_layout.migrate(root)
    assert (
        "constraint/no-network.md" in moved and not (root / "constraint" / "no-network.md").exists()
    )
    assert left == ["archive/decision.md"]
    assert (root / "archive" / "decision.md").read_bytes() == files["archive/decision.md"]
    assert (root / ".archive" / "decision.md").read_bytes() == b"other bytes\n"


def test_nothing_archived_is_offered_to_claude_codes_recall(engine):
    root = Path(engine.root)
    keep = save(
        engine, doc(id="keep-this", description="Stateless JWT tokens kept for the public API")
    )
    assert keep
    h = save(
        engine,
        doc(
            id="no-network",
            category="constraint",
            title="No network in CI",
            description="CI runners cannot reach the internet",
        ),
    )
    edits.archive(engine, "constraint/no-network", h)
    (root / "notes").mkdir()
    (root / "notes" / "debugging.md").write_bytes(b"# Debugging\nrun with -x\n")
    edits.archive(engine, "claude/notes/debugging.md", content_hash(b"# Debugging\nrun with -x\n"))
    listed = recall_scan(root)
    assert listed == ["MEMORY.md", "decision/keep-this.md"]
    for rel in listed:
        text = (root / rel).read_text()
        assert "status: archived" not in text and "Archived from MEMORY.md" not in text


# -- the guard keeps Claude out of .archive/ -------------------------------------------------------


def call_guard(project: Path, file_path: str) -> str:
    p = {
        "hook_event_name": "PreToolUse",
        "session_id": "s-1",
        "tool_name": "Write",
        "tool_input": {"file_path": file_path, "content": "x"},
        "cwd": str(project),
    }
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        assert (
            dispatch.run(
                json.dumps(p).encode(),
                {**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
                review_auto_memory=False,
            )
            == 0
        )
    finally:
        sys.stdout, sys.stderr = old
    return out.getvalue()


@pytest.mark.parametrize(
    "rel",
    [
        ".archive/decision/x.md",
        ".archive/decision.md",
        ".archive/claude/notes.md",
        "archive/decision.md",
    ],
)
def test_the_guard_denies_claude_writes_into_the_archive(project, rel):
    root = Path(resolve_memory_root(project, config.load(project))["path"])
    root.mkdir(parents=True)
    out = call_guard(project, str(root / rel))
    assert (
        out
        and "managed by memcurate"
        in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    )
    assert call_guard(project, str(root / "notes.md")) == ""  # Claude's own topic file: allowed
