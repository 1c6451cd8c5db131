"""The library's change sets: plan shows every file's diff and writes nothing; apply keeps MEMORY.md
consistent, keeps the bytes of everything it removes, and refuses what changed since it was shown."""

from __future__ import annotations

import errno
import multiprocessing
import os
from dataclasses import replace
from pathlib import Path

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.library import edits
from memcurate.curator.library.changes import ChangeError
from memcurate.curator.library.entries import line_hash, line_ref
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util import atomic
from memcurate.curator.util.stamps import content_hash

STAMP = "2026-11-22T10:04:00Z"
LATER = "2026-11-23T09:00:00Z"
BODY = (
    "## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nThe API must stay stateless."
)
CLAUDE_MD = (
    "# Project memory\r\n\r\n- The build uses make, not npm  \r\n- See [debugging](debugging.md)\r\n"
    "- The build uses make, not npm\r\n\r\n## Notes\r\nlast line without a break"
)


def make_engine(project: Path, tmp_path: Path) -> Engine:
    root = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    return Engine(project, clock=lambda: LATER)


@pytest.fixture
def engine(project, tmp_path):
    e = make_engine(project, tmp_path)
    yield e
    e.close()


def doc(id="use-jwt-for-api-auth", **kw) -> memfile.MemoryDoc:
    fields = dict(
        id=id,
        category="decision",
        title="Use JWT for API authentication",
        description="Stateless JWT chosen over server sessions",
        tags=["auth"],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "s1"}],
        body=BODY,
    )
    fields.update(kw)
    return memfile.MemoryDoc(**fields)


def save(engine, d: memfile.MemoryDoc) -> str:
    """A saved memory listed in MEMORY.md, as a review's approval leaves it; returns its hash."""
    engine.store.create(d)
    memory_md.apply(engine.root, engine.cfg, [("upsert", memory_md.IndexLine.from_doc(d))])
    return content_hash(memfile.render(d))


def root(engine) -> Path:
    return Path(engine.root)


def tree(engine) -> dict[str, bytes]:
    r = root(engine)
    return {
        str(p.relative_to(r)): p.read_bytes()
        for p in sorted(r.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def md(engine) -> str:
    return (root(engine) / "MEMORY.md").read_text()


# -- plan -------------------------------------------------------------------------------


def test_plan_shows_each_file_and_memory_md_and_writes_nothing(engine):
    h = save(engine, doc())
    before = tree(engine)
    new = memfile.render(doc(title="Use signed JWT for API authentication"))
    planned = engine.plan_changes(
        [{"op": "write", "ref": "decision/use-jwt-for-api-auth", "base_hash": h, "text": new}]
    )
    assert planned.errors == []
    by = {f["where"]: f for f in planned.files}
    assert set(by) == {"decision/use-jwt-for-api-auth.md", "MEMORY.md"}
    assert by["decision/use-jwt-for-api-auth.md"]["after"] == new
    assert "+- [Use signed JWT for API authentication]" in by["MEMORY.md"]["diff"]
    assert tree(engine) == before
    assert (
        engine.plan_changes(
            [{"op": "write", "ref": "decision/use-jwt-for-api-auth", "base_hash": h, "text": new}]
        ).fingerprint
        == planned.fingerprint
    )


def test_plan_errors_name_the_op_and_why(engine):
    h = save(engine, doc())
    bad = memfile.render(doc(body="## Decision\nUse JWT."))  # Rationale missing: a BLOCK
    secret = memfile.render(doc(body=BODY + "\nThe key is AKIAIOSFODNN7EXAMPLE."))
    for ops, expected in [
        (
            [{"op": "write", "ref": "decision/use-jwt-for-api-auth", "base_hash": h, "text": bad}],
            "Rationale",
        ),
        (
            [
                {
                    "op": "write",
                    "ref": "decision/use-jwt-for-api-auth",
                    "base_hash": h,
                    "text": secret,
                }
            ],
            "secret",
        ),
        (
            [{"op": "archive", "ref": "decision/use-jwt-for-api-auth", "base_hash": "0" * 64}],
            "changed since",
        ),
        ([{"op": "delete", "ref": "decision/gone", "base_hash": h}], "no longer exists"),
        (
            [
                {
                    "op": "write",
                    "ref": "decision/use-jwt-for-api-auth",
                    "base_hash": None,
                    "text": memfile.render(doc()),
                }
            ],
            "already exists",
        ),
        (
            [
                {
                    "op": "write",
                    "ref": "decision/other-id",
                    "base_hash": None,
                    "text": memfile.render(doc()),
                }
            ],
            "file name",
        ),
        ([{"op": "archive", "ref": "claude/../etc.md", "base_hash": h}], "not a library ref"),
        ([{"op": "frobnicate", "ref": "decision/use-jwt-for-api-auth"}], "not a change op"),
    ]:
        planned = engine.plan_changes(ops)
        assert planned.errors and expected in planned.errors[0], (ops, planned.errors)
        with pytest.raises(ChangeError, match=expected):
            engine.apply_changes(ops)


# -- memcurate's memories ------------------------------------------------------------------


def test_edit_re_verifies_stamps_updated_and_follows_a_new_title_in_memory_md(engine):
    h = save(engine, doc())
    save(engine, doc(id="newer-one", title="A newer decision"))
    text = memfile.render(doc(title="Use signed JWT for API authentication"))
    result = engine.edit_memory("decision/use-jwt-for-api-auth", text, h)
    saved = memfile.parse((root(engine) / "decision" / "use-jwt-for-api-auth.md").read_text())
    assert saved.title == "Use signed JWT for API authentication" and saved.updated == LATER
    assert result["hash"] == content_hash(
        (root(engine) / "decision" / "use-jwt-for-api-auth.md").read_bytes()
    )
    entries = memory_md.parse(md(engine)).sections["decision"].entries
    assert [(e.id, e.title) for e in entries] == [
        ("use-jwt-for-api-auth", "Use signed JWT for API authentication"),
        ("newer-one", "A newer decision"),
    ]
    with pytest.raises(ChangeError, match="changed since") as e:  # the version opened is gone
        engine.edit_memory("decision/use-jwt-for-api-auth", text, h)
    assert e.value.changed


def test_an_edit_with_a_block_is_refused_with_the_issues_and_writes_nothing(engine):
    h = save(engine, doc())
    before = tree(engine)
    with pytest.raises(ChangeError, match="Rationale"):
        engine.edit_memory(
            "decision/use-jwt-for-api-auth", memfile.render(doc(body="## Decision\nUse JWT.")), h
        )
    with pytest.raises(ChangeError, match="category"):
        engine.edit_memory(
            "decision/use-jwt-for-api-auth", memfile.render(doc(category="constraint")), h
        )
    assert tree(engine) == before


def test_archive_moves_the_line_to_the_archive_and_keeps_the_file(engine):
    h = save(engine, doc())
    done = edits.archive(engine, "decision/use-jwt-for-api-auth", h)
    path = root(engine) / ".archive" / "decision" / "use-jwt-for-api-auth.md"
    assert memfile.parse(path.read_text()) == replace(doc(), status="archived")
    assert not (root(engine) / "decision" / "use-jwt-for-api-auth.md").exists()
    assert "use-jwt-for-api-auth" not in md(engine)
    assert [e.id for e in memory_md.read_archive(engine.root, "decision")] == [
        "use-jwt-for-api-auth"
    ]
    assert set(done.written) == {
        "decision/use-jwt-for-api-auth.md",
        ".archive/decision/use-jwt-for-api-auth.md",
        "MEMORY.md",
        ".archive/decision.md",
    }  # the file moved: gone from one, in the other
    assert done.trash == []


def test_archive_line_moves_only_the_line_and_the_memory_stays_active(engine):
    save(engine, doc())
    path = root(engine) / "decision" / "use-jwt-for-api-auth.md"
    before = path.read_bytes()
    done = engine.apply_changes([{"op": "archive_line", "ref": "decision/use-jwt-for-api-auth"}])
    assert path.read_bytes() == before  # not retired: only MEMORY.md had no room for it
    assert "use-jwt-for-api-auth" not in md(engine)
    assert [e.id for e in memory_md.read_archive(engine.root, "decision")] == [
        "use-jwt-for-api-auth"
    ]
    assert set(done.written) == {"MEMORY.md", ".archive/decision.md"}


def test_delete_removes_file_and_line_and_keeps_a_trash_copy(engine):
    h = save(engine, doc())
    data = (root(engine) / "decision" / "use-jwt-for-api-auth.md").read_bytes()
    done = edits.delete(engine, "decision/use-jwt-for-api-auth", h)
    assert not (root(engine) / "decision" / "use-jwt-for-api-auth.md").exists()
    assert "use-jwt-for-api-auth" not in md(engine)
    [copy] = done.trash
    assert Path(copy).read_bytes() == data and Path(copy).parent == Path(engine.data) / "trash"


def test_an_archived_memory_can_be_deleted_and_leaves_the_archive_too(engine):
    h = save(engine, doc())
    edits.archive(engine, "decision/use-jwt-for-api-auth", h)
    archived = content_hash(
        (root(engine) / ".archive" / "decision" / "use-jwt-for-api-auth.md").read_bytes()
    )
    edits.delete(engine, "decision/use-jwt-for-api-auth", archived)
    assert memory_md.read_archive(engine.root, "decision") == []
    assert not (root(engine) / "decision" / "use-jwt-for-api-auth.md").exists()
    assert not (root(engine) / ".archive" / "decision" / "use-jwt-for-api-auth.md").exists()


# -- Claude's own files and lines ----------------------------------------------------------


def claude_file(engine, where="debugging.md", data=b"# Debugging\r\nRun tests with -x\r\n") -> str:
    p = root(engine) / where
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return content_hash(data)


def test_a_claude_file_archived_keeps_its_bytes_under_dot_archive_claude(engine):
    data = b"# Debugging\r\nRun tests with -x \xe2\x80\x94 always\r\n"
    h = claude_file(engine, "notes/debugging.md", data)
    (root(engine) / "MEMORY.md").write_bytes(CLAUDE_MD.encode())
    done = edits.archive(engine, "claude/notes/debugging.md", h)
    assert not (root(engine) / "notes" / "debugging.md").exists()
    assert (root(engine) / ".archive" / "claude" / "notes" / "debugging.md").read_bytes() == data
    # Claude's lines untouched
    assert (root(engine) / "MEMORY.md").read_bytes() == CLAUDE_MD.encode()
    assert set(done.written) == {"notes/debugging.md", ".archive/claude/notes/debugging.md"}


def test_a_claude_file_deleted_keeps_its_bytes_in_the_trash(engine):
    data = b"# Debugging\nRun tests with -x\n"
    h = claude_file(engine, data=data)
    done = edits.delete(engine, "claude/debugging.md", h)
    assert not (root(engine) / "debugging.md").exists()
    assert [Path(p).read_bytes() for p in done.trash] == [data]
    assert oct(os.stat(done.trash[0]).st_mode & 0o777) == "0o600"


def test_a_claude_file_edit_is_written_as_given_but_never_with_a_secret(engine):
    h = claude_file(engine)
    (root(engine) / "MEMORY.md").write_bytes(CLAUDE_MD.encode())
    with pytest.raises(ChangeError, match="secret"):
        engine.edit_memory("claude/debugging.md", "token ghp_" + "a" * 36 + "\n", h)
    result = engine.edit_memory("claude/debugging.md", "# Debugging\nRun tests with -x -q\n", h)
    assert (root(engine) / "debugging.md").read_bytes() == b"# Debugging\nRun tests with -x -q\n"
    assert result["hash"] == content_hash(b"# Debugging\nRun tests with -x -q\n")
    assert (root(engine) / "MEMORY.md").read_bytes() == CLAUDE_MD.encode()


def test_drop_line_removes_exactly_that_line_and_every_copy_of_it_byte_for_byte(engine):
    save(engine, doc())
    with_ours = md(engine)
    text = CLAUDE_MD + "\r\n\r\n" + with_ours.replace("\n", "\r\n")
    (root(engine) / "MEMORY.md").write_bytes(text.encode())
    line = "- The build uses make, not npm"
    done = engine.apply_changes(
        [{"op": "drop_line", "ref": line_ref(line), "base_hash": line_hash(line)}]
    )
    assert [Path(p).read_bytes() for p in done.trash] == [
        text.encode()
    ]  # Claude's lines are never lost
    expected = text.replace("- The build uses make, not npm  \r\n", "").replace(
        "- The build uses make, not npm\r\n", ""
    )
    assert (root(engine) / "MEMORY.md").read_bytes() == expected.encode()
    with pytest.raises(ChangeError, match="changed since"):  # gone now
        engine.apply_changes(
            [{"op": "drop_line", "ref": line_ref(line), "base_hash": line_hash(line)}]
        )


def test_drop_line_of_the_last_line_without_a_break_keeps_the_rest(engine):
    (root(engine)).mkdir(parents=True, exist_ok=True)
    (root(engine) / "MEMORY.md").write_bytes(CLAUDE_MD.encode())
    line = "last line without a break"
    engine.apply_changes([{"op": "drop_line", "ref": line_ref(line), "base_hash": line_hash(line)}])
    assert (root(engine) / "MEMORY.md").read_bytes() == CLAUDE_MD.removesuffix(line).encode()


def test_adopt_like_change_set_is_one_diff_and_one_apply(engine):
    """What part C's adopt stages: a new memory with its line, the Claude file archived, its line dropped."""
    h = claude_file(engine)
    (root(engine) / "MEMORY.md").write_bytes(CLAUDE_MD.encode())
    link = "- See [debugging](debugging.md)"
    ops = [
        {
            "op": "write",
            "ref": "decision/use-jwt-for-api-auth",
            "base_hash": None,
            "text": memfile.render(doc()),
        },
        {"op": "add_line", "ref": "decision/use-jwt-for-api-auth"},
        {"op": "archive", "ref": "claude/debugging.md", "base_hash": h},
        {"op": "drop_line", "ref": line_ref(link), "base_hash": line_hash(link)},
    ]
    planned = engine.plan_changes(ops)
    assert planned.errors == []
    assert [f["where"] for f in planned.files] == [
        "decision/use-jwt-for-api-auth.md",
        "debugging.md",
        ".archive/claude/debugging.md",
        "MEMORY.md",
    ]
    engine.apply_changes(ops, planned.fingerprint)
    after = (root(engine) / "MEMORY.md").read_bytes().decode()
    assert link not in after and "(decision/use-jwt-for-api-auth.md)" in after
    # Claude's other bytes as they were
    assert after.startswith(CLAUDE_MD.replace(link + "\r\n", ""))


# -- refused: what changed since it was shown ---------------------------------------------------


def test_a_hand_edit_between_plan_and_apply_is_refused_and_writes_nothing(engine):
    h = save(engine, doc())
    claude_h = claude_file(engine)
    ops = [
        {"op": "archive", "ref": "claude/debugging.md", "base_hash": claude_h},
        {"op": "archive", "ref": "decision/use-jwt-for-api-auth", "base_hash": h},
    ]
    planned = engine.plan_changes(ops)
    path = root(engine) / "decision" / "use-jwt-for-api-auth.md"
    path.write_text(path.read_text().replace("stateless", "stateless and fast"))
    before = tree(engine)
    # refused by the fingerprint, and by the base hash alone
    for seen in (
        planned.fingerprint,
        None,
    ):
        with pytest.raises(ChangeError, match="changed since"):
            engine.apply_changes(ops, seen)
        assert tree(engine) == before


def test_claude_writing_its_file_while_apply_runs_is_never_overwritten(engine, monkeypatch):
    from memcurate.curator.library import changes

    h = claude_file(engine)
    real = changes.plan

    def plan_then_claude_writes(*a, **kw):
        planned = real(*a, **kw)
        (root(engine) / "debugging.md").write_bytes(b"# Debugging\nClaude's own new line\n")
        return planned

    monkeypatch.setattr(changes, "plan", plan_then_claude_writes)
    with pytest.raises(ChangeError, match="changed since"):
        engine.edit_memory("claude/debugging.md", "# Debugging\nmine\n", h)
    assert (root(engine) / "debugging.md").read_bytes() == b"# Debugging\nClaude's own new line\n"


def test_a_fingerprint_that_is_not_what_apply_would_do_is_refused(engine):
    h = save(engine, doc())
    ops = [{"op": "archive", "ref": "decision/use-jwt-for-api-auth", "base_hash": h}]
    planned = engine.plan_changes(ops)
    save(engine, doc(id="another-one"))  # MEMORY.md moved: the archive's diff is not the one shown
    before = tree(engine)
    with pytest.raises(ChangeError, match="look at it again"):
        engine.apply_changes(ops, planned.fingerprint)
    assert tree(engine) == before
    engine.apply_changes(ops, engine.plan_changes(ops).fingerprint)
    assert "use-jwt-for-api-auth" not in md(engine)


def _archive_in_process(project, tmp, h, queue):
    engine = make_engine(Path(project), Path(tmp))
    try:
        edits.archive(engine, "decision/use-jwt-for-api-auth", h)
        queue.put("ok")
    except ChangeError as e:
        queue.put(str(e))


def test_two_processes_archiving_the_same_memory_one_wins_the_other_is_told_it_changed(
    engine, project, tmp_path
):
    h = save(engine, doc())
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_archive_in_process, args=(str(project), str(tmp_path), h, queue))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = sorted(queue.get(timeout=5) for _ in procs)
    assert results[1] == "ok" and "changed since" in results[0]
    assert [e.id for e in memory_md.read_archive(engine.root, "decision")] == [
        "use-jwt-for-api-auth"
    ]


# -- a full disk loses nothing -------------------------------------------------------------------


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_full_disk_at_any_write_loses_nothing(engine, monkeypatch, fail_at):
    h = save(engine, doc())
    claude_h = claude_file(engine)
    data = (root(engine) / "decision" / "use-jwt-for-api-auth.md").read_bytes()
    claude_data = (root(engine) / "debugging.md").read_bytes()
    ops = [
        {"op": "delete", "ref": "decision/use-jwt-for-api-auth", "base_hash": h},
        {"op": "archive", "ref": "claude/debugging.md", "base_hash": claude_h},
    ]
    real, calls = atomic._temp_file, []

    def full(path, *a, **kw):
        calls.append(path)
        if len(calls) >= fail_at:
            raise atomic._named(OSError(errno.ENOSPC, "No space left on device"), path)
        return real(path, *a, **kw)

    monkeypatch.setattr(atomic, "_temp_file", full)
    with pytest.raises(ChangeError, match="No space left") as e:
        engine.apply_changes(ops)
    assert e.value.errno == errno.ENOSPC
    monkeypatch.setattr(atomic, "_temp_file", real)
    memory = root(engine) / "decision" / "use-jwt-for-api-auth.md"
    trash = [p.read_bytes() for p in (Path(engine.data) / "trash").glob("*")] if fail_at > 1 else []
    assert memory.exists() or data in trash  # every byte somewhere
    assert (root(engine) / "debugging.md").read_bytes() == claude_data
    assert memory.read_bytes() == data  # removals come last: nothing removed yet


# -- the library sees what changed ------------------------------------------------------------


def test_the_library_lists_what_a_change_left(engine):
    h = save(engine, doc())
    claude_h = claude_file(engine)
    engine.library()  # the index is built before the changes: they must refresh it
    edits.archive(engine, "decision/use-jwt-for-api-auth", h)
    edits.delete(engine, "claude/debugging.md", claude_h)
    by_ref = {e.ref: e for e in engine.library()}
    assert by_ref["decision/use-jwt-for-api-auth"].status == "archived"
    assert "claude/debugging.md" not in by_ref
    archived = by_ref["decision/use-jwt-for-api-auth"].hash
    text = memfile.render(replace(doc(), status="archived", title="JWT for the API, retired"))
    engine.edit_memory("decision/use-jwt-for-api-auth", text, archived)
    assert {e.ref: e.title for e in engine.library()}[
        "decision/use-jwt-for-api-auth"
    ] == "JWT for the API, retired"
    assert engine.library_search("retired") == ["decision/use-jwt-for-api-auth"]
    assert "use-jwt-for-api-auth" not in md(engine)  # an archived memory stays out of MEMORY.md


def test_archiving_an_unlisted_memory_still_lists_it_in_the_archive(engine):
    engine.store.create(doc(id="never-listed"))
    h = content_hash(memfile.render(doc(id="never-listed")))
    edits.archive(engine, "decision/never-listed", h)
    assert [e.id for e in memory_md.read_archive(engine.root, "decision")] == ["never-listed"]


def test_a_claude_ref_never_leads_outside_the_root_or_onto_memcurate_files(engine, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_bytes(b"not Claude's memory\n")
    claude_file(engine)
    (root(engine) / "linked.md").symlink_to(outside)
    h = content_hash(outside.read_bytes())
    for ref, expected in [
        ("claude/linked.md", "leads outside"),
        ("claude/decision/x.md", "not a topic file"),
        ("claude/archive/claude/debugging.md", "not a topic file"),
    ]:
        with pytest.raises(ChangeError, match=expected):
            edits.delete(engine, ref, h)
    assert outside.read_bytes() == b"not Claude's memory\n"
