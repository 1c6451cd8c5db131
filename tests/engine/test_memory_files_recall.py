"""Memory files that serve both of Claude Code 2.1's modes: the front matter it writes itself (name,
description, metadata.type), a description its recall selector can pick by, a file within what recall
injects (4,096 bytes), bounded sources, and mtimes (the age Claude Code shows) touched only by a change."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.memory import claude_topics, memfile, memory_md
from memcurate.curator.memory.front_matter import light_fields
from memcurate.curator.memory.store import MemoryStore
from memcurate.curator.util.stamps import content_hash
from memcurate.curator.verify.checks import ADVISORY, BLOCK, verify

STAMP = "2026-11-22T10:04:00Z"
BODY = (
    "## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nThe API must stay stateless."
)
OLD_FORM = f"""---
id: use-jwt-for-api-auth
category: decision
title: Use JWT for API authentication
description: Stateless JWT tokens chosen for the public API
type: project
tags: [auth]
created: "{STAMP}"
updated: "{STAMP}"
sources:
  - session: s1
status: active
---
{BODY}
"""
OLD_TIME = 1_700_000_000  # an mtime in the past: a write would replace it with now


def doc(**kw) -> memfile.MemoryDoc:
    fields = dict(
        id="use-jwt-for-api-auth",
        category="decision",
        title="Use JWT for API authentication",
        description="Stateless JWT tokens chosen for the public API",
        tags=["auth"],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "s1"}],
        body=BODY,
    )
    fields.update(kw)
    return memfile.MemoryDoc(**fields)


def codes(issues, code: str) -> list:
    return [i for i in issues if i.code == code]


# -- the front matter, both forms ------------------------------------------------------------------


def test_a_memory_is_written_with_claude_code_2_1s_keys_and_the_older_type():
    text = memfile.render(doc())
    front = text.split("---\n")[1].split("\n")
    keys = [line.split(":")[0] for line in front if line and not line.startswith(" ")]
    assert keys[:8] == [
        "id",
        "name",
        "category",
        "title",
        "description",
        "type",
        "metadata",
        "tags",
    ]
    assert (
        "name: use-jwt-for-api-auth" in front
        and front[front.index("metadata:") + 1] == "  type: project"
    )
    assert "type: project" in front  # older Claude Code reads the top-level key
    assert memfile.parse(text) == doc()


def test_a_file_in_the_older_form_is_read_and_rewritten_only_with_a_change(tmp_path):
    store = MemoryStore(tmp_path)
    path = tmp_path / "decision" / "use-jwt-for-api-auth.md"
    path.parent.mkdir()
    path.write_text(OLD_FORM)
    os.utime(path, (OLD_TIME, OLD_TIME))
    old, h = store.read("decision", "use-jwt-for-api-auth")
    assert old == doc() and old.type == "project"
    store.update(old, h)  # nothing changed: the file is left as it is
    assert path.read_text() == OLD_FORM and path.stat().st_mtime == OLD_TIME
    store.update(replace(old, description="Stateless JWT tokens chosen over server sessions"), h)
    assert (
        "name: use-jwt-for-api-auth\n" in path.read_text()
        and "metadata:\n  type: project\n" in path.read_text()
    )


def test_metadata_type_wins_over_a_top_level_type_that_disagrees():
    forged = memfile.render(doc()).replace("metadata:\n  type: project", "metadata:\n  type: user")
    assert memfile.parse(forged).type == "user"
    assert light_fields(forged)[0]["type"] == "user"  # the recall hook reads it the same way
    claudes = "---\nname: api\ndescription: the API's quirks\ntype: project\nmetadata:\n  type: reference\n---\nx\n"
    assert claude_topics.describe("api.md", claudes)[2] == "reference"


# -- a description the recall selector can pick by ------------------------------------------------


@pytest.mark.parametrize(
    "description, why",
    [
        ("Use JWT for API authentication", "repeats the title"),
        ("A decision was made", "generic"),
        ("Project notes", "generic"),
        ("Bananas ripen faster in paper bags", "shares no word"),
    ],
)
def test_a_description_that_cannot_serve_the_selector_is_an_advisory(description, why):
    issues = verify(memfile.render(doc(description=description)), category="decision")
    [issue] = codes(issues, "description-unselectable")
    assert issue.severity == ADVISORY and issue.where == "description" and why in issue.message


def test_a_specific_description_passes_and_an_empty_one_blocks():
    assert (
        codes(verify(memfile.render(doc()), category="decision"), "description-unselectable") == []
    )
    issues = verify(memfile.render(doc(description="")), category="decision")
    assert any(i.severity == BLOCK and i.where == "description" for i in issues)


# -- within what recall injects, and bounded sources ------------------------------------------------


def test_a_file_over_4096_bytes_is_an_issue_that_names_its_size():
    small = memfile.render(doc())
    assert codes(verify(small, category="decision"), "recall-cut") == []
    big = memfile.render(
        doc(body=BODY.replace("stateless.", "stateless. " + "Each token is checked. " * 190))
    )
    [issue] = codes(verify(big, category="decision"), "recall-cut")
    assert (
        issue.severity == ADVISORY
        and f"{len(big.encode())} bytes" in issue.message
        and "4096" in issue.message
    )


def test_sources_keep_the_first_and_the_newest_with_a_count_of_the_rest():
    many = [{"session": f"session-{n:02d}", "turns": [n]} for n in range(12)]
    back = memfile.parse(memfile.render(doc(sources=many)))
    assert [s["session"] for s in back.sources] == [
        "session-00",
        "session-08",
        "session-09",
        "session-10",
        "session-11",
    ]
    assert back.sources[1]["more"] == 7  # sessions 01 to 07, not listed
    again = memfile.parse(
        memfile.render(replace(back, sources=back.sources + [{"session": "session-12"}]))
    )
    assert [s["session"] for s in again.sources][0] == "session-00" and again.sources[-1][
        "session"
    ] == "session-12"
    assert sum(1 + s.get("more", 0) for s in again.sources) == 13  # every session counted


def test_an_older_file_with_a_long_source_list_is_read():
    lines = "".join(f"  - session: s{n}\n    turns: [{n}]\n" for n in range(40))
    text = OLD_FORM.replace("sources:\n  - session: s1\n", f"sources:\n{lines}")
    assert len(memfile.parse(text).sources) == 40
    assert len(memfile.parse(memfile.render(memfile.parse(text))).sources) == 5


# -- mtimes touched only when content changes -------------------------------------------------------


@pytest.fixture
def engine(project, tmp_path):
    root = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    e = Engine(project, clock=lambda: STAMP)
    yield e
    e.close()


def aged(paths: list[Path]) -> dict[Path, float]:
    for p in paths:
        os.utime(p, (OLD_TIME, OLD_TIME))
    return {p: p.stat().st_mtime for p in paths}


# An older file as a hand edit leaves it: no name or metadata, time stamps unquoted (the same memory).
HAND_EDITED = OLD_FORM.replace(f'"{STAMP}"', STAMP)


def test_a_re_save_a_check_and_a_line_already_there_leave_the_mtimes_alone(engine):
    root = Path(engine.root)
    path = root / "decision" / "use-jwt-for-api-auth.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_EDITED)
    memory_md.apply(engine.root, engine.cfg, [("upsert", memory_md.IndexLine.from_doc(doc()))])
    files = [path, root / "MEMORY.md"]
    before = aged(files)
    # the library's editor saves the text it showed (the file as memcurate renders it), unchanged
    engine.edit_memory(
        "decision/use-jwt-for-api-auth", memfile.render(doc()), content_hash(HAND_EDITED.encode())
    )
    engine.check(stage=False)
    # the line is there already
    engine.apply_changes([{"op": "add_line", "ref": "decision/use-jwt-for-api-auth"}])
    assert {p: p.stat().st_mtime for p in files} == before and path.read_text() == HAND_EDITED


def test_a_change_rewrites_an_older_file_in_the_new_form(engine):
    path = Path(engine.root) / "decision" / "use-jwt-for-api-auth.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_EDITED)
    aged([path])
    changed = doc(description="Stateless JWT tokens chosen over server sessions")
    engine.edit_memory(
        "decision/use-jwt-for-api-auth", memfile.render(changed), content_hash(HAND_EDITED.encode())
    )
    assert path.read_text() == memfile.render(changed) and path.stat().st_mtime != OLD_TIME
