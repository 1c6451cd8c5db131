"""The library's catalog: every memory of both owners with the fields the library shows, refs that
name each one and read back the same entry, damaged files listed as broken, Claude's files followed."""

from __future__ import annotations

import os
import sqlite3

import pytest
from library_helpers import MEMORY_MD, jwt, library_engine, no_network

from memcurate.curator.library.entries import CLAUDE, LibraryError, line_hash, parse_ref
from memcurate.curator.memory.index.schema import SCHEMA_VERSION
from memcurate.curator.memory.memory_md.format import MemoryMdError  # noqa: F401 (the error a damaged MEMORY.md raises)
from memcurate.curator.util.stamps import content_hash

AWS_ID = "AKIAZ7Q3R5T7V9X2B4D6"


@pytest.fixture
def engine(project, tmp_path):
    e = library_engine(project, tmp_path / "memory")
    yield e
    e.close()


def mtime_stamp(path) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.stat(path).st_mtime))


def populate(engine):
    root = engine.store.root
    jwt(engine)
    no_network(engine, status="archived", sessions=("sess-2", "sess-3"), tags=("ci", "network"))
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(MEMORY_MD)
    with open(os.path.join(root, "debugging.md"), "w") as f:
        f.write(
            "---\nname: Debugging notes\ndescription: 'How we debug: pdb, then logs'\ntype: project\n---\n\n"
            "Start with pdb on the failing test.\n"
        )
    os.makedirs(os.path.join(root, "notes", "deeper"))
    with open(os.path.join(root, "notes", "api.md"), "w") as f:
        f.write("# API quirks\n\nThe API returns 204 on an empty page. Retries are safe.\n")
    with open(os.path.join(root, "notes", "deeper", "plain.md"), "w") as f:
        f.write("no heading here, just words\n")
    # not Claude's topic files: too deep, archived, hidden, a category folder's stray, MEMORY.md itself
    os.makedirs(os.path.join(root, "notes", "deeper", "deepest"))
    for rel in (
        "notes/deeper/deepest/far.md",
        "archive/claude/old.md",
        ".hidden/x.md",
        ".dot.md",
        "notes/.secret.md",
        "decision/README.txt",
    ):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write("# not a topic file\n")
    return root


def by_ref(engine):
    return {e.ref: e for e in engine.library()}


def test_entries_of_both_owners_carry_the_fields_the_library_shows(engine):
    root = populate(engine)
    entries = by_ref(engine)
    assert set(entries) == {
        "decision/use-jwt-for-api-auth",
        "constraint/no-network-in-ci",
        "claude/debugging.md",
        "claude/notes/api.md",
        "claude/notes/deeper/plain.md",
        f"claude/MEMORY.md#{line_hash('- [Debugging notes](debugging.md) — how we debug the API')[:12]}",
        f"claude/MEMORY.md#{line_hash('- Always run the test suite with -x before pushing')[:12]}",
    }

    mine = entries["decision/use-jwt-for-api-auth"]
    path = os.path.join(root, "decision", "use-jwt-for-api-auth.md")
    assert (mine.owner, mine.category, mine.title, mine.description) == (
        "memcurate",
        "decision",
        "Use JWT for API authentication",
        "Stateless tokens chosen over server sessions",
    )
    assert (mine.where, mine.path, mine.status) == (
        "decision/use-jwt-for-api-auth.md",
        path,
        "active",
    )
    assert (mine.created, mine.updated, mine.sources, mine.tags) == (
        "2026-01-02T03:04:05Z",
        "2026-02-03T04:05:06Z",
        ("sess-1",),
        ("project",),
    )
    assert mine.hash == content_hash(open(path, "rb").read())
    assert mine.line == 9 and mine.broken == ""
    archived = entries["constraint/no-network-in-ci"]
    assert (archived.status, archived.sources, archived.tags, archived.line) == (
        "archived",
        ("sess-2", "sess-3"),
        ("ci", "network"),
        0,
    )

    topic = entries["claude/debugging.md"]
    assert (topic.owner, topic.category, topic.title, topic.description) == (
        CLAUDE,
        CLAUDE,
        "Debugging notes",
        "How we debug: pdb, then logs",
    )
    assert (topic.where, topic.status, topic.line) == ("debugging.md", "active", 3)
    assert topic.created == topic.updated == mtime_stamp(topic.path)
    assert topic.hash == content_hash(open(topic.path, "rb").read())
    api = entries["claude/notes/api.md"]
    assert (api.title, api.description, api.line) == (
        "API quirks",
        "The API returns 204 on an empty page.",
        0,
    )
    assert entries["claude/notes/deeper/plain.md"].title == "plain"

    lines = [e for e in entries.values() if "#" in e.ref]
    linked = next(e for e in lines if e.line == 3)
    assert (linked.title, linked.description, linked.where) == (
        "Debugging notes",
        "how we debug the API",
        "debugging.md",
    )
    plain = next(e for e in lines if e.line == 4)  # the same line twice is one entry: the first
    assert (plain.title, plain.where, plain.path) == (
        "Always run the test suite with -x before pushing",
        "MEMORY.md",
        os.path.join(root, "MEMORY.md"),
    )
    assert plain.hash == line_hash("- Always run the test suite with -x before pushing")
    assert plain.created == mtime_stamp(os.path.join(root, "MEMORY.md"))


def test_every_ref_round_trips_to_the_same_entry_read_from_the_file(engine):
    populate(engine)
    for entry in engine.library():
        owner, category, rest = parse_ref(entry.ref)
        assert (owner, category) == (entry.owner, entry.category)
        got = engine.library_entry(entry.ref)
        assert got.entry == entry and got.hash == entry.hash
        if "#" in entry.ref:
            assert got.text == MEMORY_MD.split("\n")[entry.line - 1]
        else:
            assert got.text == open(entry.path, encoding="utf-8").read()


@pytest.mark.parametrize(
    "ref",
    [
        "",
        "decision",
        "nope/x",
        "decision/",
        "decision/a/b",
        "decision/.x",
        "claude/../escape.md",
        "claude/a/../../b.md",
        "claude/.hidden.md",
        "claude/notes.txt",
        "claude/MEMORY.md#xyz",
        "claude//x.md",
        "decision\\x",
    ],
)
def test_a_ref_that_names_nothing_the_library_holds_is_refused_by_name(engine, ref):
    with pytest.raises(ValueError) as e:
        parse_ref(ref)
    assert repr(ref)[:20] in str(e.value)
    with pytest.raises(LibraryError):
        engine.library_entry(ref)


def test_a_ref_whose_memory_is_gone_is_a_library_error_naming_it(engine):
    populate(engine)
    refs = by_ref(engine)
    for ref in refs:
        if "#" not in ref:
            os.unlink(refs[ref].path)
    with open(os.path.join(engine.root, "MEMORY.md"), "w") as f:
        f.write("# empty now\n")
    for ref in refs:
        with pytest.raises(LibraryError, match=ref.replace(".", r"\.")):
            engine.library_entry(ref)
    assert engine.library() == []


def test_a_hand_damaged_memory_file_is_an_entry_with_why_it_is_broken(engine):
    path = jwt(engine)
    path.write_text("---\ntitle: [unclosed\n---\nbody\n")
    (entry,) = engine.library()
    assert entry.ref == "decision/use-jwt-for-api-auth" and entry.broken
    assert entry.hash == content_hash(path.read_bytes())
    got = engine.library_entry(entry.ref)
    assert got.entry.broken and got.text == path.read_text()
    path.write_bytes(b"---\nid: \xff\n---\n")
    (entry,) = engine.library()
    assert "UTF-8" in entry.broken
    bad = path.parent / "Not An Id.md"
    bad.write_text("x")
    broken = by_ref(engine)["decision/Not An Id"]
    assert "not a valid memory id" in broken.broken
    # still readable, so it can be looked at and removed
    assert engine.library_entry(broken.ref).text == "x"


def test_claude_files_added_changed_and_removed_are_seen_by_the_next_call(engine):
    root = populate(engine)
    engine.library()
    new = os.path.join(root, "fresh.md")
    with open(new, "w") as f:
        f.write("# Fresh topic\n\nSomething Claude learnt today.\n")
    assert by_ref(engine)["claude/fresh.md"].title == "Fresh topic"
    with open(new, "w") as f:
        f.write("---\nname: Renamed topic\n---\nSomething else entirely, and longer.\n")
    entry = by_ref(engine)["claude/fresh.md"]
    assert entry.title == "Renamed topic" and entry.hash == content_hash(open(new, "rb").read())
    assert engine.library_search("entirely") == ["claude/fresh.md"]
    os.unlink(new)
    assert "claude/fresh.md" not in by_ref(engine)
    assert engine.library_search("entirely") == []


def test_secrets_in_claudes_files_and_lines_are_not_shown_in_the_listing(engine):
    root = engine.store.root
    with open(os.path.join(root, "keys.md"), "w") as f:
        f.write(
            f"---\nname: AWS access\ndescription: the key is {AWS_ID}\n---\nuse {AWS_ID} for deploys\n"
        )
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(f"- deploy key {AWS_ID}\n")
    listing = engine.library()
    assert len(listing) == 2 and not any(AWS_ID in str(e) for e in listing)
    assert engine.library_search(AWS_ID) == []  # the index holds it redacted
    assert AWS_ID in engine.library_entry("claude/keys.md").text  # the file itself, to act on


def test_a_damaged_memory_md_is_listed_broken_and_its_lines_are_not_guessed(engine):
    jwt(engine)
    with open(os.path.join(engine.root, "MEMORY.md"), "w") as f:
        f.write(
            "- a line of Claude's\n<!-- memcurate:begin section=decision budget=40 -->\n## Key Decisions\n"
        )
    entries = by_ref(engine)
    assert set(entries) == {"decision/use-jwt-for-api-auth", "claude/MEMORY.md"}
    assert "no end marker" in entries["claude/MEMORY.md"].broken


def test_an_index_of_the_previous_schema_is_rebuilt_with_the_library_fields(engine, project):
    populate(engine)
    engine.library()
    db = engine.index.db_path
    engine.close()
    os.unlink(db)
    # the layout of schema 2: no library fields, no table for Claude's files
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files(doc INTEGER PRIMARY KEY, category TEXT NOT NULL, name TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL,
            checked_ns INTEGER NOT NULL, hash TEXT, id TEXT, title TEXT, status TEXT, text_hash TEXT, broken TEXT,
            UNIQUE(category, name));
        PRAGMA user_version = 2;""")
    conn.execute("INSERT INTO meta VALUES ('root', ?)", (os.path.realpath(engine.root),))
    conn.commit()
    conn.close()
    again = library_engine(project, type(project)(engine.root))
    try:
        entries = {e.ref: e for e in again.library()}
        assert entries["decision/use-jwt-for-api-auth"].sources == ("sess-1",)
        assert entries["claude/debugging.md"].title == "Debugging notes"
        assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        again.close()
