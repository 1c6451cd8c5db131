"""MEMORY.md shared with Claude Code 2.1 (issue 24, Build §2): an index Claude wrote itself gains memcurate's
sections with every byte of Claude's kept, a file Claude's own lines link gets no line of memcurate's, and a
consolidation that rewrites the file is never fought: a section it removed comes back only when the person
puts it back, and `status`/`check` say so.

Claude Code 2.1.328 asks for index lines "`- [Title](file.md) — one-line hook`", "The index has no
frontmatter", and its consolidation ("# Dream: Memory Consolidation", Phase 4 — Prune and index) to "Remove
pointers to memories that are now stale" and "Add pointers to newly important memories"; its memory files
carry `name`, `description`, `metadata: {type}` front matter and **Why:** / **How to apply:** lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_recall import make_project, memory_root, write_memory

from memcurate.curator import config
from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import check
from memcurate.curator.memory.memory_md import IndexLine, apply, parse, usage

# As Claude Code writes it when MEMORY.md is missing: its own topic files at the top level, one pointer each.
# no final \n
CLAUDE_INDEX = (
    "- [Prefers terse answers](user_terse.md) \u2014 no trailing summaries; the diff speaks for itself\n"
    "- [Merge freeze](project_merge_freeze.md) \u2014 non-critical merges frozen after 2026-11-26 "
    "(mobile release cut)\n"
    "- [Auth is JWT](decision/use-jwt-for-api-auth.md) \u2014 stateless tokens; see the file"
)


def claude_file(root: Path, name: str, type_: str, description: str, body: str) -> None:
    (root / name).write_text(
        f"---\nname: {name[:-3].replace('_', '-')}\ndescription: {description}\nmetadata:\n"
        f"  type: {type_}\n---\n\n{body}\n"
    )


@pytest.fixture
def shared(tmp_path) -> Path:
    """A project whose MEMORY.md Claude Code wrote itself, linking its own files and one of memcurate's."""
    (tmp_path / "memory").mkdir()
    project = make_project(tmp_path)
    root = memory_root(project)
    claude_file(
        root,
        "user_terse.md",
        "feedback",
        "The user wants terse answers without summaries",
        "No summary at the end of a response.\n**Why:** they read the diff.\n**How to apply:** stop after "
        "the change.",
    )
    claude_file(
        root,
        "project_merge_freeze.md",
        "project",
        "Merge freeze after 2026-11-26 for the mobile release",
        "Only critical fixes merge after 2026-11-26.\n**Why:** mobile cuts a release branch.\n"
        "**How to apply:** flag non-critical PRs.",
    )
    write_memory(
        root,
        "decision",
        "use-jwt-for-api-auth",
        "Use JWT for API authentication",
        "## Decision\nStateless JWT.\n\n## Rationale\nNo session store.",
    )
    (root / "MEMORY.md").write_bytes(CLAUDE_INDEX.encode())
    return project


def cfg(project: Path) -> dict:
    return config.load(project, str(project / ".memcurate"))


def findings(project: Path) -> list:
    return check.run(Engine(project), stage=False)


def save(project: Path, *entries: IndexLine, restore=()):
    """What an approval does to MEMORY.md once the memory files are written."""
    root = memory_root(project)
    for e in entries:
        if not (root / e.category / f"{e.id}.md").exists():
            write_memory(
                root,
                e.category,
                e.id,
                e.title,
                f"## Decision\n{e.title}.\n\n## Rationale\nIt fits.",
            )
    return apply(
        root,
        cfg(project),
        [("upsert", e) for e in entries],
        **({"restore": restore} if restore else {}),
    )


SQLITE = IndexLine(
    "use-sqlite", "decision", "Use SQLite, not Postgres", "single-machine tool: no server"
)
JWT = IndexLine("use-jwt-for-api-auth", "decision", "Use JWT for API authentication", "stateless")


def test_claudes_index_gains_memcurates_section_and_keeps_every_byte(shared):
    p = save(shared, SQLITE, JWT)
    text = (memory_root(shared) / "MEMORY.md").read_text()
    # Claude's bytes as they were; only a line break to end its last
    assert text.startswith(CLAUDE_INDEX + "\n")
    section = parse(text).sections["decision"]
    assert [e.id for e in section.entries] == [
        "use-sqlite"
    ]  # JWT: Claude's own line 3 links it already
    assert any("decision/use-jwt-for-api-auth: not listed" in n and "line 3" in n for n in p.notes)
    assert text.count("decision/use-jwt-for-api-auth.md") == 1
    # check calls none of Claude's lines broken, nor its files unlinked, nor a section removed
    assert [(f.code, f.refs) for f in findings(shared)] == []


def test_memcurates_own_line_goes_when_claude_links_the_file_itself(shared):
    root = memory_root(shared)
    (root / "MEMORY.md").write_text(
        "- [Prefers terse answers](user_terse.md) \u2014 no trailing summaries\n"
    )
    save(shared, JWT)
    assert [e.id for e in parse((root / "MEMORY.md").read_text()).sections["decision"].entries] == [
        JWT.id
    ]
    # a consolidation adds a pointer of Claude's own to the same file ("Add pointers to newly important memories")
    text = (
        root / "MEMORY.md"
    ).read_text() + "- [JWT auth](decision/use-jwt-for-api-auth.md) \u2014 tokens\n"
    (root / "MEMORY.md").write_text(text)
    # an update of it: memcurate's line goes, Claude's stays, the file is listed once
    save(shared, JWT)
    after = (root / "MEMORY.md").read_text()
    assert after.count("decision/use-jwt-for-api-auth.md") == 1 and after.endswith(
        "\u2014 tokens\n"
    )


def consolidate(project: Path) -> str:
    """Claude's consolidation rewrites MEMORY.md: memcurate's markers gone, one memory kept as its own line."""
    root = memory_root(project)
    rewritten = (
        "- [Prefers terse answers](user_terse.md) \u2014 terse, no summaries\n"
        "- [SQLite](decision/use-sqlite.md) \u2014 single machine, never a server dependency\n"
    )
    (root / "MEMORY.md").write_text(rewritten)
    return rewritten


def test_a_section_the_consolidation_removed_is_not_re_added(shared):
    root = memory_root(shared)
    save(shared, SQLITE, IndexLine("pin-ruff", "decision", "Pin ruff", "one lint version"))
    # pin-ruff's line is gone with the section; use-sqlite is Claude's line now
    rewritten = consolidate(shared)
    p = save(shared, IndexLine("use-uv", "decision", "Use uv for installs", "fast, locked"))
    assert (root / "MEMORY.md").read_text() == rewritten  # not re-created: no fight over the file
    assert any("decision section was removed from MEMORY.md by someone else" in n for n in p.notes)
    assert (root / "decision" / "use-uv.md").is_file()  # the memory itself is saved
    u = usage(root, cfg(shared)).as_dict()
    assert u["removed"] == ["decision"] and u["sections"]["decision"]["removed"] is True
    found = findings(shared)
    assert [(f.code, f.refs) for f in found] == [
        ("section-removed", ("claude/MEMORY.md",)),
        ("unlinked", ("claude/project_merge_freeze.md",)),
    ]  # Claude pruned it
    # pin-ruff and use-uv: no unlinked finding, whose fix would fight the consolidation; the section says it
    begin, end = found[0].detail["markers"]
    # the person puts the section back as check says: the next save lists there, Claude's lines untouched
    (root / "MEMORY.md").write_text(rewritten + begin + "\n" + end + "\n")
    save(shared, IndexLine("use-uv", "decision", "Use uv for installs", "fast, locked"))
    text = (root / "MEMORY.md").read_text()
    assert text.startswith(rewritten) and [
        e.id for e in parse(text).sections["decision"].entries
    ] == ["use-uv"]
    assert "section-removed" not in [f.code for f in findings(shared)]


def test_a_person_can_ask_for_the_removed_section_back(shared):
    root = memory_root(shared)
    save(shared, SQLITE)
    rewritten = consolidate(shared)
    save(shared, IndexLine("use-uv", "decision", "Use uv", "fast"), restore=("decision",))
    text = (root / "MEMORY.md").read_text()
    assert text.startswith(rewritten) and "decision" in parse(text).sections


def test_a_section_the_consolidation_moved_is_updated_where_it_stands(shared):
    root = memory_root(shared)
    save(shared, SQLITE)
    text = (root / "MEMORY.md").read_text()
    section = text[text.index("<!-- memcurate:begin") :]
    moved = section + "\n# Index\n- [Terse](user_terse.md) \u2014 rewritten by the dream\n"
    (root / "MEMORY.md").write_text(moved)
    save(shared, IndexLine("use-uv", "decision", "Use uv", "fast"))
    after = (root / "MEMORY.md").read_text()
    assert after.endswith("\n# Index\n- [Terse](user_terse.md) \u2014 rewritten by the dream\n")
    assert [e.id for e in parse(after).sections["decision"].entries] == ["use-uv", "use-sqlite"]
    assert after.count("memcurate:begin") == 1


def test_status_says_which_section_someone_else_removed(shared):
    from conftest import run_cli

    save(shared, SQLITE, IndexLine("pin-ruff", "decision", "Pin ruff", "one lint version"))
    consolidate(shared)
    said = run_cli("status", cwd=shared).stdout
    assert "removed by someone else: decision" in said, said
