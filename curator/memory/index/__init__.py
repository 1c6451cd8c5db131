"""An index of the memory root for candidate search (docs/design.md §8): SQLite FTS5, a rebuildable cache.

    index = MemoryIndex(os.path.join(data_dir, "index.sqlite"), MemoryStore(root))
    for c in index.candidates("decision", draft):      # draft: a MemoryDoc, or its text
        print(c.id, c.score, c.identical)

The memory files are the truth. The database remembers, per file, its stat
signature (mtime_ns, ctime_ns, size, inode), the sha256 of its bytes and, for
a file that parses, its fields under full-text search (one FTS5 table per
category, porter-stemmed, ranked by bm25 with the title weighing most) and
the document frequency of its words. Deleting or corrupting the database
costs a rebuild, never an error. Broken files are listed, not indexed.

Its modules: terms.py (the words searched by), schema.py (the tables, one
file's rows added or removed), database.py (the database file: opened,
rebuilt, or kept in memory), freshness.py (each category checked against its
files before it is read: the trade-off chosen), folders.py (the cheaper check of a one-shot reader:
a category folder's stamp, and its read-only fast path), watcher.py (inotify),
search.py (bm25 ranking of the candidates). MemoryIndex (memory_index.py) is
what callers use: one lock around all of it.

Two processes at once
---------------------
WAL mode (readers never wait for the writer) and a busy timeout. Writes are
short transactions (a build commits every few hundred files, parsing outside
them), each idempotent (upsert by file), so two processes indexing the same
change agree. Under the write lock each file is stat'ed again, and a change
read from a version that has moved on since is not written (an older
observation never overwrites a newer one; the file is looked at again). A
lookup reads in one transaction, so its statements see one snapshot. When
the write lock stays busy past the timeout, the answer is still right: the
category's indexed rows minus what changed, plus the changes, go into a
private in-memory table (slower, same results), and the write is tried
again on the next call. When even reading stays locked, the category's
files are parsed straight into such a table. When the database cannot be
read at all it is deleted and rebuilt; if that fails too, this process
indexes in memory.
"""

from __future__ import annotations

from memcurate.curator.util.lazy import lazy_names

# Names resolved on first use (PEP 562): a one-shot reader such as the recall hook imports one light
# module of this package (folders.py, schema.py) without loading the store, the watcher and the rest.
_HOMES = {
    "MemoryIndex": "memory_index",
    "Candidate": "search",
    "Entry": "search",
    "RefreshStats": "freshness",
    "draft_text": "terms",
    "match_expression": "terms",
    "query_terms": "terms",
    "text_hash": "terms",
}
__all__ = sorted(_HOMES)

__getattr__ = lazy_names(__name__, _HOMES)
