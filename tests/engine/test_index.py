"""The candidate index: ranking, freshness against hand edits, a lost or corrupt database, concurrency."""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import weakref
from pathlib import Path

import pytest

from memcurate.curator.memory import index as index_mod
from memcurate.curator.memory import memfile
from memcurate.curator.memory.index import Candidate, MemoryIndex, match_expression, query_terms
from memcurate.curator.memory.index.watcher import inotify_available
from memcurate.curator.memory.store import MemoryStore, UnsafePathError

STAMP = "2026-11-22T10:04:00Z"
SECTIONS = {
    "decision": ("Decision", "Rationale"),
    "constraint": ("Rule", "Impact"),
    "runbook": ("Symptom", "Steps", "Verification"),
}

MEMORIES = {
    ("decision", "use-jwt-for-api-auth"): (
        "Use JWT for API authentication",
        "Stateless JWT tokens chosen over server sessions for the public API",
        "Use signed JWT bearer tokens for every public API endpoint.",
        "Sessions need sticky load balancing; JWT tokens keep the API stateless.",
    ),
    ("decision", "postgres-over-mysql"): (
        "Postgres over MySQL for the ledger",
        "Postgres chosen for the ledger service database",
        "The ledger service stores balances in Postgres.",
        "We need transactional DDL and strict constraints on balances.",
    ),
    ("decision", "redis-page-cache"): (
        "Cache rendered pages in Redis",
        "Rendered pages cached in Redis for ten minutes",
        "Cache rendered HTML pages in Redis with a ten minute TTL.",
        "Rendering is slow and pages change rarely.",
    ),
    ("decision", "monorepo-workspaces"): (
        "One monorepo with workspaces",
        "A single repository with package workspaces",
        "Keep the web app, the API and shared packages in one monorepo.",
        "Atomic changes across packages; one CI pipeline.",
    ),
    ("constraint", "no-network-in-ci"): (
        "No network in CI",
        "CI runners have no outbound network access",
        "CI jobs cannot reach the internet.",
        "Tests must use fixtures, never live API calls.",
    ),
}


def make(category, id, title, description, first, second, **kw) -> memfile.MemoryDoc:
    names = SECTIONS[category]
    body = memfile.join_sections(
        {names[0]: first, names[1]: second, **{n: "Done." for n in names[2:]}}
    )
    return memfile.MemoryDoc(
        id=id,
        category=category,
        title=title,
        description=description,
        tags=kw.pop("tags", ["project"]),
        created=STAMP,
        updated=STAMP,
        body=body,
        **kw,
    )


@pytest.fixture
def store(tmp_path) -> MemoryStore:
    s = MemoryStore(tmp_path / "memory")
    for (cat, id), texts in MEMORIES.items():
        s.create(make(cat, id, *texts))
    return s


@pytest.fixture(params=[False, True], ids=["stat", "watch"])
def watch(request):
    if request.param and not inotify_available():
        pytest.skip("inotify is Linux only")
    return request.param


@pytest.fixture
def index(tmp_path, store, watch):
    ix = MemoryIndex(tmp_path / "data" / "index.sqlite", store, watch=watch)
    yield ix
    ix.close()


def ids(found: list[Candidate]) -> list[str]:
    return [c.id for c in found]


def hand_write(store: MemoryStore, category: str, id: str, text: str) -> str:
    """Edit a file in place, as an editor that truncates and writes would (no rename)."""
    path = os.path.join(store.root, category, f"{id}.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# -- ranking ---------------------------------------------------------------------------------


def test_finds_the_right_candidate_among_several(index):
    found = index.candidates(
        "decision", "Authenticate API calls with JWT\nbearer tokens instead of sessions"
    )
    assert found and found[0].id == "use-jwt-for-api-auth" and found[0].category == "decision"
    assert found[0].path.endswith("decision/use-jwt-for-api-auth.md") and found[0].score > 0
    assert found[0].title == "Use JWT for API authentication" and len(found[0].hash) == 64
    found = index.candidates(
        "decision", "Which database for the ledger\nPostgres transactional DDL"
    )
    assert found[0].id == "postgres-over-mysql"
    # other category
    assert "no-network-in-ci" not in ids(index.candidates("decision", "No network in CI"))


def test_an_identical_document_ranks_first_and_is_marked(index, store):
    d, _ = store.read("decision", "redis-page-cache")
    draft = memfile.MemoryDoc(
        **{**d.__dict__, "id": "new-draft", "description": "another description"}
    )
    found = index.candidates("decision", draft)
    assert found[0].id == "redis-page-cache" and found[0].identical
    assert not any(c.identical for c in found[1:])
    # as text too (no identical flag without the document): still first
    found = index.candidates("decision", index_mod.draft_text(d))
    assert found[0].id == "redis-page-cache" and not found[0].identical
    assert found[0].score >= max(c.score for c in found)


def test_scores_are_ordered_and_limit_is_honoured(index):
    found = index.candidates("decision", "pages API ledger monorepo Redis JWT Postgres", limit=2)
    assert len(found) == 2 and found[0].score >= found[1].score
    assert index.candidates("decision", "pages API", limit=0) == []


def test_stop_words_only_or_empty_text_finds_nothing(index):
    assert index.candidates("decision", "") == []
    assert index.candidates("decision", "the and of to a") == []


@pytest.mark.parametrize(
    "hostile",
    [
        '"',
        '""',
        "'",
        "*",
        "AND",
        "OR NOT",
        "NEAR(a b)",
        "title: x",
        "{title body}: jwt",
        "jwt*",
        "^jwt",
        'jwt" OR "x',
        "(((",
        ")",
        "-",
        "a:b:c",
        "\x00",
        "jwt\x00tokens",
        "ドキュメント",
        "x" * 5000,
        "col:jwt OR title:",
    ],
)
def test_hostile_query_text_never_reaches_match_raw(index, hostile):
    found = index.candidates("decision", hostile)
    assert isinstance(found, list)


def test_match_expression_quotes_every_term():
    assert match_expression(["jwt", 'a"b', "or"]) == '"jwt" OR "a""b" OR "or"'
    assert query_terms(
        "The JWT tokens AND sessions\n(desc) NEAR OR\n## Decision\ntokens tokens", "decision"
    ) == ["jwt", "tokens", "sessions", "desc", "near"]


def test_archived_memories_are_left_out_unless_asked(tmp_path, watch):
    store = MemoryStore(tmp_path / "memory")
    store.create(
        make("constraint", "no-network-in-ci", *MEMORIES[("constraint", "no-network-in-ci")])
    )
    _, h = store.read("constraint", "no-network-in-ci")
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=watch) as ix:
        assert ids(ix.candidates("constraint", "network CI")) == ["no-network-in-ci"]
        store.retire("constraint", "no-network-in-ci", h)
        assert ix.candidates("constraint", "network CI") == []
        [c] = ix.candidates("constraint", "network CI", include_archived=True)
        assert c.status == "archived"


def test_unknown_category_and_hostile_ids(index):
    with pytest.raises(UnsafePathError):
        index.candidates("../decision", "jwt")
    with pytest.raises(UnsafePathError):
        index.get("decision", "../constraint/no-network-in-ci")
    with pytest.raises(UnsafePathError):
        index.refresh("nope")


# -- freshness ---------------------------------------------------------------------------------


def test_notices_a_hand_edit_without_a_rebuild(index, store):
    assert index.candidates("decision", "kubernetes operators") == []
    index.candidates("decision", "warm up: a second check starts watching")
    d, _ = store.read("decision", "monorepo-workspaces")
    text = memfile.render(
        memfile.MemoryDoc(**{**d.__dict__, "title": "Kubernetes operators in one monorepo"})
    )
    hand_write(store, "decision", "monorepo-workspaces", text)
    found = index.candidates("decision", "kubernetes operators")
    assert (
        ids(found) == ["monorepo-workspaces"]
        and found[0].title == "Kubernetes operators in one monorepo"
    )
    assert (
        index.get("decision", "monorepo-workspaces").title == "Kubernetes operators in one monorepo"
    )


def test_notices_a_same_size_edit_within_the_same_second(index, store):
    path = os.path.join(store.root, "decision", "redis-page-cache.md")
    index.candidates("decision", "warm up")
    index.candidates("decision", "warm up")
    st = os.stat(path)
    text = Path(path).read_text()
    assert "Redis" in text
    hand_write(store, "decision", "redis-page-cache", text.replace("Redis", "Valky"))
    # same size, same mtime: only the bytes differ
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert ids(index.candidates("decision", "Valky")) == ["redis-page-cache"]


def test_notices_added_and_deleted_files(index, store):
    assert index.candidates("runbook", "flaky test timeout") == []
    index.candidates("decision", "warm up")
    store.create(
        make(
            "runbook",
            "flaky-timeout",
            "Flaky test timeout in CI",
            "Raise the pytest timeout",
            "A test times out under load.",
            "Raise the timeout to 30 s.",
        )
    )
    assert ids(index.candidates("runbook", "flaky test timeout")) == ["flaky-timeout"]
    # a file copied in by hand, not through the store
    d = make(
        "runbook",
        "disk-full",
        "Disk full on the runner",
        "Clean docker images",
        "No space left on device.",
        "Run docker system prune.",
    )
    with open(os.path.join(store.root, "runbook", "disk-full.md"), "w") as f:
        f.write(memfile.render(d))
    assert ids(index.candidates("runbook", "no space left on device docker")) == ["disk-full"]
    os.unlink(os.path.join(store.root, "decision", "use-jwt-for-api-auth.md"))
    assert "use-jwt-for-api-auth" not in ids(index.candidates("decision", "JWT tokens API"))
    assert index.get("decision", "use-jwt-for-api-auth") is None
    os.rename(
        os.path.join(store.root, "decision", "redis-page-cache.md"),
        os.path.join(store.root, "decision", ".redis-page-cache.md.bak"),
    )
    assert "redis-page-cache" not in ids(index.candidates("decision", "Redis pages cache"))


def _counted(db: str, category: str) -> dict[str, int]:
    """The index's word counts of a category (rows at 0 left out) and, from its texts, what they must be."""
    from memcurate.curator.memory.index.schema import fts_table
    from memcurate.curator.memory.index.terms import words

    conn = sqlite3.connect(db)
    try:
        kept = dict(
            conn.execute("SELECT term, df FROM terms WHERE category = ? AND df != 0", (category,))
        )
        texts = conn.execute(
            f"SELECT title, description, tags, body FROM {fts_table(category)}"
        ).fetchall()
    finally:
        conn.close()
    recount: dict[str, int] = {}
    for row in texts:
        for w in set(words("\n".join(row))):
            recount[w] = recount.get(w, 0) + 1
    return kept, recount


def test_word_counts_follow_edits_additions_and_removals(tmp_path, index, store):
    """A search weighs words by how many memories hold them: after files are edited, added and removed
    (several in one check), every count is what the texts say."""
    db = str(tmp_path / "data" / "index.sqlite")
    index.candidates("decision", "warm up")
    kept, recount = _counted(db, "decision")
    assert kept == recount and kept["redis"] == 1 and "zebra" not in kept
    for id in ("use-jwt-for-api-auth", "postgres-over-mysql"):
        d, _ = store.read("decision", id)
        retitled = {**d.__dict__, "title": d.title + " zebra"}
        hand_write(store, "decision", id, memfile.render(memfile.MemoryDoc(**retitled)))
    os.unlink(os.path.join(store.root, "decision", "redis-page-cache.md"))
    store.create(make("decision", "page-cache-two", "Zebra pages", "cache", "Cache.", "Cache."))
    index.candidates("decision", "cache")
    kept, recount = _counted(db, "decision")
    assert kept == recount and kept["zebra"] == 3 and "redis" not in kept


def test_a_folder_deleted_and_made_again(index, store):
    import shutil

    index.candidates("constraint", "network")
    index.candidates("constraint", "network")
    shutil.rmtree(os.path.join(store.root, "constraint"))
    assert index.candidates("constraint", "network CI") == []
    store.create(
        make("constraint", "no-network-in-ci", *MEMORIES[("constraint", "no-network-in-ci")])
    )
    assert ids(index.candidates("constraint", "network CI")) == ["no-network-in-ci"]


def test_broken_files_are_listed_not_indexed_and_come_back_when_fixed(index, store):
    path = os.path.join(store.root, "decision", "postgres-over-mysql.md")
    good = Path(path).read_text()
    hand_write(store, "decision", "postgres-over-mysql", "---\ntitle: [Postgres\n---\nledger\n")
    with open(os.path.join(store.root, "decision", "My Notes.md"), "w") as f:
        f.write("ledger notes\n")
    stats = index.refresh()
    assert sorted(os.path.basename(p) for p, _ in stats.broken) == [
        "My Notes.md",
        "postgres-over-mysql.md",
    ]
    assert all(reason for _, reason in stats.broken)
    assert "postgres-over-mysql" not in ids(index.candidates("decision", "Postgres ledger"))
    assert index.get("decision", "postgres-over-mysql") is None
    assert len(index.broken("decision")) == 2
    hand_write(store, "decision", "postgres-over-mysql", good)
    assert ids(index.candidates("decision", "Postgres ledger"))[0] == "postgres-over-mysql"
    assert [os.path.basename(p) for p, _ in index.broken()] == ["My Notes.md"]


def test_refresh_counts(tmp_path, store):
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=False) as ix:
        first = ix.refresh()
        assert (first.files, first.indexed, first.unchanged, first.removed) == (5, 5, 0, 0)
        assert first.categories == [
            "decision",
            "constraint",
            "runbook",
            "tech_debt",
            "preference",
            "session_summary",
        ]
        os.unlink(os.path.join(store.root, "decision", "redis-page-cache.md"))
        again = ix.refresh("decision")
        assert (again.files, again.removed) == (3, 1)
    # a new process: nothing to parse
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=False) as ix:
        later = ix.refresh()
        assert later.indexed == 0 and later.files == 4


def test_a_category_folder_linked_outside_is_reported_and_not_read(tmp_path, store, watch):
    outside = tmp_path / "outside"
    outside.mkdir()
    d = make("runbook", "stolen", "Secret runbook", "outside the root", "x", "y")
    (outside / "stolen.md").write_text(memfile.render(d))
    os.symlink(outside, os.path.join(store.root, "runbook"))
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=watch) as ix:
        stats = ix.refresh()
        assert [os.path.basename(p) for p, _ in stats.broken] == ["runbook"]
        with pytest.raises(UnsafePathError):
            ix.candidates("runbook", "secret runbook")
        assert ix.candidates("decision", "JWT")  # the others still work


def test_check_interval_trades_freshness_for_speed(tmp_path, store):
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=False, check_interval=3600) as ix:
        ix.candidates("decision", "JWT")
        os.unlink(os.path.join(store.root, "decision", "use-jwt-for-api-auth.md"))
        # not checked yet
        assert "use-jwt-for-api-auth" in ids(ix.candidates("decision", "JWT tokens"))
        ix.refresh("decision")
        assert "use-jwt-for-api-auth" not in ids(ix.candidates("decision", "JWT tokens"))


def test_get(index, store):
    e = index.get("decision", "use-jwt-for-api-auth")
    assert (
        e.title == "Use JWT for API authentication"
        and e.tags == ["project"]
        and e.status == "active"
    )
    assert e.hash == store.read("decision", "use-jwt-for-api-auth")[1] and "## Decision" in e.body
    assert index.get("decision", "not-there") is None


# -- a lost, corrupt or shared database --------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "truncated", "zero", "deleted"])
def test_survives_a_corrupted_or_lost_database(tmp_path, store, damage):
    db = tmp_path / "data" / "index.sqlite"
    with MemoryIndex(db, store, watch=False) as ix:
        ix.refresh()
    size = db.stat().st_size
    assert size > 0
    if damage == "garbage":
        db.write_bytes(os.urandom(size))
    elif damage == "truncated":
        with open(db, "r+b") as f:
            f.seek(100)
            f.write(os.urandom(size // 2))
            f.truncate(size // 2)
    elif damage == "zero":
        db.write_bytes(b"")
    else:
        db.unlink()
    with MemoryIndex(db, store, watch=False) as ix:
        assert ids(ix.candidates("decision", "JWT tokens public API"))[0] == "use-jwt-for-api-auth"
        assert ix.get("constraint", "no-network-in-ci").title == "No network in CI"
        assert not ix.in_memory
        assert ix.refresh().files == 5


def test_a_database_replaced_under_an_open_index_is_followed(tmp_path, store):
    db = tmp_path / "index.sqlite"
    with MemoryIndex(db, store, watch=False) as a:
        assert a.candidates("decision", "JWT")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(str(db) + suffix):
                os.unlink(str(db) + suffix)
        assert ids(a.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"
        assert db.exists()


def test_an_unwritable_place_falls_back_to_memory(tmp_path, store):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    with MemoryIndex(blocker / "index.sqlite", store, watch=False) as ix:
        assert ids(ix.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"
        assert ix.in_memory


def test_a_database_of_another_root_or_schema_is_rebuilt(tmp_path, store):
    db = tmp_path / "index.sqlite"
    other = MemoryStore(tmp_path / "other")
    other.create(
        make("decision", "other-thing", "Other thing", "elsewhere", "JWT elsewhere", "because")
    )
    with MemoryIndex(db, other, watch=False) as ix:
        assert ids(ix.candidates("decision", "JWT")) == ["other-thing"]
    with MemoryIndex(db, store, watch=False) as ix:
        assert "other-thing" not in ids(ix.candidates("decision", "JWT elsewhere"))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with MemoryIndex(db, store, watch=False) as ix:
        assert ids(ix.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"


def test_two_connections_at_once(tmp_path, store, watch):
    db = tmp_path / "index.sqlite"
    a = MemoryIndex(db, store, watch=watch)
    b = MemoryIndex(db, store, watch=watch)
    try:
        assert ids(a.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"
        assert ids(b.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"
        for i in range(3):
            store.create(
                make(
                    "decision",
                    f"queue-choice-{i}",
                    f"Kafka queue choice {i}",
                    "Kafka for events",
                    f"Use Kafka partitions {i}.",
                    "Ordering per key.",
                )
            )
            assert f"queue-choice-{i}" in ids(a.candidates("decision", f"Kafka queue choice {i}"))
            assert f"queue-choice-{i}" in ids(b.candidates("decision", f"Kafka queue choice {i}"))
        os.unlink(os.path.join(store.root, "decision", "queue-choice-0.md"))
        assert "queue-choice-0" not in ids(b.candidates("decision", "Kafka queue choice 0"))
        assert "queue-choice-0" not in ids(a.candidates("decision", "Kafka queue choice 0"))
    finally:
        a.close()
        b.close()


def test_a_write_lock_held_elsewhere_does_not_break_a_lookup(tmp_path, store):
    db = tmp_path / "index.sqlite"
    with MemoryIndex(db, store, busy_timeout=0.05, watch=False) as ix:
        ix.refresh()
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
        try:
            d, _ = store.read("decision", "redis-page-cache")
            hand_write(
                store,
                "decision",
                "redis-page-cache",
                memfile.render(
                    memfile.MemoryDoc(**{**d.__dict__, "title": "Memcached for rendered pages"})
                ),
            )
            store.create(
                make(
                    "decision",
                    "grpc-internal",
                    "gRPC between internal services",
                    "gRPC inside",
                    "Internal calls use gRPC.",
                    "Typed contracts.",
                )
            )
            os.unlink(os.path.join(store.root, "decision", "monorepo-workspaces.md"))
            assert ids(ix.candidates("decision", "memcached rendered")) == ["redis-page-cache"]
            assert ids(ix.candidates("decision", "gRPC internal services"))[0] == "grpc-internal"
            assert ix.candidates("decision", "monorepo workspaces") == []
            assert ix.get("decision", "redis-page-cache").title == "Memcached for rendered pages"
            assert ix.get("decision", "monorepo-workspaces") is None
            assert ix._freshness.pending.get("decision")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert ids(ix.candidates("decision", "memcached rendered")) == ["redis-page-cache"]
        assert not ix._freshness.pending.get("decision")  # written now
    with MemoryIndex(db, store, watch=False) as again:
        assert again.refresh("decision").indexed == 0


def test_a_database_locked_even_for_reading_falls_back_to_the_files(tmp_path, store):
    db = tmp_path / "index.sqlite"
    with MemoryIndex(db, store, watch=False) as ix:
        ix.refresh()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("PRAGMA journal_mode = DELETE")
    other.execute("BEGIN EXCLUSIVE")  # not even readers get in
    try:
        with MemoryIndex(db, store, busy_timeout=0.05, watch=False) as ix:
            assert ids(ix.candidates("decision", "JWT tokens"))[0] == "use-jwt-for-api-auth"
            assert (
                ix.get("decision", "use-jwt-for-api-auth").title == "Use JWT for API authentication"
            )
            assert ix.refresh().files == 5
    finally:
        other.execute("ROLLBACK")
        other.close()


CHILD = textwrap.dedent("""
    import os, sys
    from memcurate.curator.memory import memfile
    from memcurate.curator.memory.index import MemoryIndex
    from memcurate.curator.memory.store import MemoryStore
    root, db, tag = sys.argv[1:4]
    store = MemoryStore(root)
    ix = MemoryIndex(db, store, busy_timeout=5)
    for i in range(25):
        id = f"{tag}-note-{i}"
        d = memfile.MemoryDoc(id=id, category="decision", title=f"{tag} zebra note {i}", description="d",
                              tags=["x1"], created="2026-11-22T10:04:00Z", updated="2026-11-22T10:04:00Z",
                              body=f"## Decision\\n{tag} choice {i}.\\n\\n## Rationale\\nreason {i}.")
        with open(os.path.join(root, "decision", id + ".md"), "w") as f:
            f.write(memfile.render(d))
        found = [c.id for c in ix.candidates("decision", f"{tag} zebra note {i}", limit=50)]
        assert id in found, (id, found)
        if i % 5 == 4:
            ix.refresh()
    ix.close()
    print("ok")
""")


def test_two_processes_at_once(tmp_path, store):
    db = tmp_path / "data" / "index.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, store.root, str(db), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alpha", "beta")
    ]
    with MemoryIndex(db, store, busy_timeout=5) as ix:
        deadline = time.monotonic() + 60
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            assert (
                ids(ix.candidates("decision", "JWT tokens public API"))[0] == "use-jwt-for-api-auth"
            )
        outs = [p.communicate(timeout=60) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0 and out.strip() == "ok", err
        found = ix.candidates("decision", "zebra note", limit=100)
        assert len([c for c in found if "-note-" in c.id]) == 50
    with MemoryIndex(db, store, watch=False) as fresh:
        stats = fresh.refresh()
        # what the processes wrote is all there, nothing stale
        assert stats.indexed == 0 and stats.files == 55


def test_a_watched_lookup_looks_only_at_what_changed(tmp_path, store, monkeypatch):
    if not inotify_available():
        pytest.skip("inotify is Linux only")
    calls = []
    real = MemoryStore.stat_files

    def counting(self, category, names=None):
        calls.append((category, None if names is None else sorted(names)))
        return real(self, category, names)

    monkeypatch.setattr(MemoryStore, "stat_files", counting)
    with MemoryIndex(tmp_path / "index.sqlite", store) as ix:  # watch=None: on where inotify exists
        ix.candidates("decision", "JWT")
        ix.candidates("decision", "JWT")
        assert ix._freshness.watcher is not None and ix._freshness.watcher.watching("decision")
        assert calls == [("decision", None), ("decision", None)]  # two full checks, then the watch
        calls.clear()
        assert ix.candidates("decision", "JWT tokens")[0].id == "use-jwt-for-api-auth"
        assert calls == []  # nothing changed: no stat at all
        d, h = store.read("decision", "postgres-over-mysql")
        store.update(memfile.MemoryDoc(**{**d.__dict__, "title": "CockroachDB for the ledger"}), h)
        assert ids(ix.candidates("decision", "CockroachDB ledger"))[0] == "postgres-over-mysql"
        assert calls == [
            ("decision", ["postgres-over-mysql.md"])
        ]  # the temp file of the atomic write is ignored


def test_one_shot_use_never_loads_the_watcher(tmp_path, store):
    with MemoryIndex(tmp_path / "index.sqlite", store) as ix:
        ix.candidates("decision", "JWT")
        ix.candidates("constraint", "network")
        assert ix._freshness.watcher is None


def test_a_rescan_still_happens_while_watched(tmp_path, store):
    if not inotify_available():
        pytest.skip("inotify is Linux only")
    with MemoryIndex(tmp_path / "index.sqlite", store, rescan_interval=0) as ix:
        ix.candidates("decision", "JWT")
        ix.candidates("decision", "JWT")
        ix._freshness.watcher.unwatch("decision")  # as if the watch missed an edit (NFS)
        os.unlink(os.path.join(store.root, "decision", "use-jwt-for-api-auth.md"))
        assert "use-jwt-for-api-auth" not in ids(ix.candidates("decision", "JWT tokens"))


# -- the mark --------------------------------------------------------------------------------


def _weakrefs() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is weakref.ReferenceType)


def test_the_mark_leaves_no_object_behind_per_call(tmp_path, store):
    """The mark is taken for every draft decided (ten a landing). Each Connection.execute makes a cursor, and
    sqlite3 keeps a weak reference to every cursor until its 200th: the mark reads through one cursor."""
    with MemoryIndex(tmp_path / "index.sqlite", store) as ix:
        ix.candidates("decision", "JWT")  # the index built
        first = ix.mark()
        before = _weakrefs()
        marks = {ix.mark() for _ in range(150)}
        assert _weakrefs() - before < 10  # 300 cursors made ~100 (the last 200th pruned the rest)
        assert marks == {first} and first.partition(":")[2].isdigit()


def test_the_mark_sees_what_another_process_indexed_since(tmp_path, store):
    """The mark's cursor is read to its end: no statement stays open, holding an old snapshot of the
    database (a later mark would not see what was indexed since)."""
    db = tmp_path / "index.sqlite"
    with MemoryIndex(db, store) as ix, MemoryIndex(db, store) as other:
        ix.candidates("decision", "JWT")
        before = ix.mark()
        store.create(make("decision", "use-redis-for-queues", *MEMORIES[next(iter(MEMORIES))][:4]))
        other.refresh("decision")
        after = ix.mark()
        assert after.partition(":")[0] == before.partition(":")[0]
        assert int(after.partition(":")[2]) > int(before.partition(":")[2])


def test_a_memory_saved_twice_in_a_run_leaves_one_text_to_search(tmp_path, store):
    """A save run's held copy (freshness.py) searches each held memory's newest text. A memory saved
    again within the run had its first text left behind (its file row gone, its text not): the search
    dropped it, but only after it had taken one of the lookup's places."""
    with MemoryIndex(tmp_path / "index.sqlite", store) as ix:
        ix.candidates("decision", "ledger")  # indexed before the run
        with ix.holding():
            for title in ("CockroachDB for the ledger", "Spanner for the ledger"):
                d, h = store.read("decision", "postgres-over-mysql")
                store.update(memfile.MemoryDoc(**{**d.__dict__, "title": title}), h)
                assert ids(ix.candidates("decision", title))[0] == "postgres-over-mysql"
            held = ix._freshness._held_dbs["decision"]
            texts = held.execute("SELECT title FROM fts_decision").fetchall()
            assert texts == [("Spanner for the ledger",)]
