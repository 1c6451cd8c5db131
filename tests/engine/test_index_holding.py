"""The index while a save run holds its upkeep (MemoryIndex.holding, issue 25 §6): a memory just saved
is found by the very next lookup, by this process and by any other, a file only touched stays found,
and what was held is on disk once the run ends, or found again by the next check when it never is."""

from __future__ import annotations

import os
import sqlite3

import pytest
from test_index import MEMORIES, ids, make, store, watch  # noqa: F401 (fixtures)

from memcurate.curator.memory import memfile
from memcurate.curator.memory.index import MemoryIndex
from memcurate.curator.memory.store import MemoryStore

NEW = (
    "Retry webhooks with exponential backoff",
    "Failed webhook deliveries are retried with backoff",
    "Retry failed webhook deliveries with exponential backoff up to six times.",
    "Receivers go down for minutes; retrying at once floods them.",
)


def on_disk(index: MemoryIndex) -> set[str]:
    """The memories the database file lists (what another process reads before checking any file)."""
    with sqlite3.connect(index.db_path) as db:
        return {n[:-3] for (n,) in db.execute("SELECT name FROM files WHERE broken IS NULL")}


@pytest.fixture
def index(tmp_path, store, watch):  # noqa: F811
    ix = MemoryIndex(tmp_path / "data" / "index.sqlite", store, watch=watch)
    ix.refresh()
    ix.refresh()  # its category folders watched from the second check on
    yield ix
    ix.close()


def test_a_memory_saved_while_held_is_found_at_once_and_written_when_the_run_ends(
    index, store, tmp_path
):
    with index.holding():
        store.create(make("decision", "webhook-retries", *NEW))
        found = index.candidates("decision", "webhook deliveries retried with backoff")
        assert ids(found)[:1] == ["webhook-retries"]
        # held: nothing written for it yet, so a run's saves cost one transaction a category
        assert "webhook-retries" not in on_disk(index)
        # another process checks the files itself: it finds it too
        other = MemoryIndex(tmp_path / "data" / "index.sqlite", MemoryStore(store.root))
        try:
            assert "webhook-retries" in ids(other.candidates("decision", "webhook backoff"))
        finally:
            other.close()
        # a second memory alike: both listed, the held one beside the indexed best
        store.create(make("decision", "webhook-retry-limit", *NEW[:2], "Retry six times.", NEW[3]))
        assert {"webhook-retries", "webhook-retry-limit"} <= set(
            ids(index.candidates("decision", "webhook deliveries retried with backoff"))
        )
    assert {"webhook-retries", "webhook-retry-limit"} <= on_disk(index)


def test_a_memory_touched_while_held_stays_found(index, store):
    """A new signature with the same bytes (a `touch`) is held too: the memory is searched where it is."""
    path = os.path.join(store.root, "decision", "postgres-over-mysql.md")
    with index.holding():
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        assert "postgres-over-mysql" in ids(index.candidates("decision", "ledger postgres"))


def test_a_memory_deleted_while_held_is_gone_from_lookups_and_from_disk(index, store):
    path = os.path.join(store.root, "decision", "redis-page-cache.md")
    with index.holding():
        os.remove(path)
        assert "redis-page-cache" not in ids(index.candidates("decision", "redis pages cache"))
    assert "redis-page-cache" not in on_disk(index)


def test_held_changes_a_process_never_wrote_are_indexed_by_the_next(index, store, tmp_path):
    """A process killed while holding: its index rows are lost, never the memory; the next one finds it."""
    run = index.holding()
    run.__enter__()  # never left: as a kill leaves it
    store.create(make("decision", "webhook-retries", *NEW))
    assert "webhook-retries" in ids(index.candidates("decision", "webhook backoff"))
    index._freshness.held.clear()  # what dies with the process
    index._db.drop()
    assert "webhook-retries" not in on_disk(index)
    again = MemoryIndex(tmp_path / "data" / "index.sqlite", MemoryStore(store.root))
    try:
        assert "webhook-retries" in ids(again.candidates("decision", "webhook backoff"))
    finally:
        again.close()


def test_a_memory_edited_again_while_held_is_found_by_its_new_words_alone(index, store):
    """The held copy of a file changed twice in a run holds its last text: the first one's words find
    nothing, and a second edit leaves one row for it (listed once)."""
    with index.holding():
        store.create(make("decision", "webhook-retries", *NEW))
        assert ids(index.candidates("decision", "webhook backoff"))[:1] == ["webhook-retries"]
        path = os.path.join(store.root, "decision", "webhook-retries.md")
        for old, new in (("webhook", "queue"), ("queue", "mailbox")):
            texts = [t.replace("webhook", new).replace("Webhook", new.title()) for t in NEW]
            with open(path, "w", encoding="utf-8") as f:
                f.write(memfile.render(make("decision", "webhook-retries", *texts)))
            found = ids(index.candidates("decision", f"{new} deliveries retried with backoff"))
            assert found.count("webhook-retries") == 1, found
            assert "webhook-retries" not in ids(index.candidates("decision", f"{old}s {old}"))


def test_the_row_count_a_lookup_keeps_follows_another_process_writes(index, store, tmp_path):
    """A lookup weighs its words against the category's rows, counted once and kept: a commit of another
    process's (data_version) or of this one's counts them again."""
    index.candidates("decision", "ledger postgres")
    before = index._freshness.rows("decision")
    store.create(make("decision", "webhook-retries", *NEW))
    other = MemoryIndex(tmp_path / "data" / "index.sqlite", MemoryStore(store.root))
    try:
        other.refresh("decision")  # the other process indexes it: this one has not looked yet
    finally:
        other.close()
    assert index._freshness.rows("decision") == before + 1
    store.create(make("decision", "webhook-retry-limit", *NEW[:2], "Retry six times.", NEW[3]))
    index.refresh("decision")  # this one's own write
    assert index._freshness.rows("decision") == before + 2
