"""Candidate search: bm25 over a category's FTS5 table, an identical memory first.

Search cost is bounded too: bm25 is computed for every row that matches,
so the query keeps only the draft's words that are rare in the category
(document frequency at most 10 % of its memories, or 25 memories in a small
one, and never more than 50, from the `terms` table; at most 16 words, rarest
first; only the three least common when all are common). A word in most
memories would add almost nothing to bm25 (its IDF is near zero) and would
make every memory a match; with the cap, the rows a lookup walks do not grow
with the store (at most 16 x 50, or the three least common words' when none is
rarer), nor do the memories a save then reads and compares again.
Terms are quoted strings, OR-ed: user text never reaches MATCH as syntax.

While a save run holds the category's few changes in memory (freshness.py),
the search runs on the indexed rows without those files and on a private copy
of them alone (`with_held`). A search since a mark (a save's duplicate check)
first looks at the file rows written since: when there are none, the indexed
rows are not searched at all (`_written_since`). When the category's changes could not be written
(the write lock stayed busy), the search runs on a private in-memory copy: the indexed rows minus
what changed, plus the changes. When even reading stays locked, on the
category's files parsed straight into such a copy.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memcurate.curator.memory import claude_topics, memfile
from memcurate.curator.memory.index.schema import (
    CLAUDE,
    NO_SIG,
    WEIGHTS,
    Change,
    count_rows,
    fts_table,
    insert,
    memory_db,
    write_counts,
)
from memcurate.curator.memory.index.terms import match_expression
from memcurate.curator.memory.store import MemoryStore, content_hash

MAX_TERMS = 16  # words searched for
COMMON = 0.10  # a word in more than this share of a category's memories is not searched for (when n > 250)
RARE_MAX = 50  # nor one in more than this many memories, however large the category


@dataclass(frozen=True)
class Candidate:
    """An existing memory that may match a draft. `score` is -bm25: higher is better.

    `identical`: same title and body as the draft, case and spacing aside (as
    curator.verify.decide.identical; known only when `candidates` got a MemoryDoc); such
    a candidate comes first. `hash` is the file's hash when it was indexed
    (empty on the slow path): re-read the file with MemoryStore.read before
    basing an UPDATE or DELETE on it.
    """

    id: str
    category: str
    title: str
    score: float
    path: str
    identical: bool = False
    status: str = "active"
    hash: str = ""


@dataclass(frozen=True)
class Entry:
    """One indexed memory, as `get` returns it."""

    id: str
    category: str
    title: str
    description: str
    tags: list[str]
    status: str
    path: str
    hash: str
    body: str


def entry_of(d: memfile.MemoryDoc, path: str, h: str) -> Entry:
    return Entry(d.id, d.category, d.title, d.description, list(d.tags), d.status, path, h, d.body)


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: every statement sees the same snapshot, even while another process
    replaces rows between them (a row id found by MATCH must still name its file row)."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def find_candidates(
    conn: sqlite3.Connection,
    folder: str,
    category: str,
    terms: list[str],
    ident: str | None,
    limit: int,
    include_archived: bool,
    since: int = 0,
    rows: int | None = None,
) -> list[Candidate]:
    """The best `limit` memories of `category` (their files in `folder`) for `terms`, an identical one first;
    `since`: only rows written after that row number (MemoryIndex.mark); `rows`: the category's file rows
    in `conn`, when the caller knows them (`_choose_terms`)."""
    with _snapshot(conn):
        if since and not _written_since(conn, category, since):
            return []
        chosen = _choose_terms(conn, category, terms, rows)
        return _search_in(
            conn, folder, category, terms, ident, limit, include_archived, chosen, since=since
        )


def with_held(
    conn: sqlite3.Connection,
    held_db: sqlite3.Connection,
    held: set[str],
    folder: str,
    category: str,
    terms: list[str],
    ident: str | None,
    limit: int,
    include_archived: bool,
    since: int = 0,
    rows: int | None = None,
) -> list[Candidate]:
    """The best `limit` indexed memories but the files `held` (changes not written yet; `since`: of the
    rows written after that row number), and the best `limit` of those held (in `held_db`, a copy of them
    alone), searched for the same words: up to twice `limit`, an identical one first. Two corpora's bm25
    scores do not compare, so neither list cuts the other: what was just saved is always among them when
    it matches. `rows`: as for `find_candidates`."""
    with _snapshot(conn):
        chosen = _choose_terms(conn, category, terms, rows)
        found = (
            _search_in(
                conn, folder, category, terms, ident, limit, include_archived, chosen, held, since
            )
            if not since or _written_since(conn, category, since, held)
            else []
        )
    found += _search_in(held_db, folder, category, terms, ident, limit, include_archived, chosen)
    found.sort(key=lambda c: (not c.identical, -c.score, c.id))
    return found


def _written_since(
    conn: sqlite3.Connection,
    category: str,
    since: int,
    skip: set[str] | frozenset[str] = frozenset(),
) -> bool:
    """Whether a file row of `category` was written after row number `since`, a file `skip` names aside.
    When none was, a search since then finds nothing: skipped, it costs the rows written since (a range
    of row numbers, seeked: `+category` keeps the category's index out of it), not a bm25 query whose
    words are looked up in every segment of the category's text."""
    for (name,) in conn.execute(
        "SELECT name FROM files WHERE doc > ? AND +category = ?", (since, category)
    ):
        if name not in skip:
            return True
    return False


def _search_in(
    conn: sqlite3.Connection,
    folder: str,
    category: str,
    terms: list[str],
    ident: str | None,
    limit: int,
    include_archived: bool,
    chosen: list[str] | None = None,
    skip: set[str] | frozenset[str] = frozenset(),
    since: int = 0,
) -> list[Candidate]:
    """The search (in the caller's transaction); `chosen`: the words to match, when another database's
    document frequencies chose them; `skip`: file names left out; `since`: only the rows written after
    that row number (FTS5 seeks past the rest: what a lookup costs then does not grow with the store)."""
    rows: dict[int, float] = {}
    same: set[int] = set()
    if ident is not None:
        same = {
            r[0]
            for r in conn.execute(
                "SELECT doc FROM files WHERE category = ? AND text_hash = ? AND broken IS NULL "
                "AND doc > ?",
                (category, ident, since),
            )
        }
    if chosen is None:
        chosen = _choose_terms(conn, category, terms)
    if chosen:
        extra = (
            0
            if include_archived
            else conn.execute(
                "SELECT count(*) FROM files WHERE category = ? AND status = 'archived'", (category,)
            ).fetchone()[0]
        )
        fts = fts_table(category)
        weights = ", ".join(str(w) for w in WEIGHTS)
        rows = dict(
            conn.execute(
                f"SELECT rowid, bm25({fts}, {weights}) AS s FROM {fts} WHERE {fts} MATCH ? "
                "AND rowid > ? ORDER BY s LIMIT ?",
                (match_expression(chosen), since, limit + extra + len(same) + len(skip)),
            ).fetchall()
        )
    docs = list(rows) + [d for d in same if d not in rows]
    if not docs:
        return []
    marks = ",".join("?" * len(docs))
    found = []
    for doc, name, id, title, status, h in conn.execute(
        f"SELECT doc, name, id, title, status, hash FROM files WHERE doc IN ({marks})", docs
    ):
        if (status != "active" and not include_archived) or name in skip:
            continue
        score = -rows[doc] if doc in rows else 0.0
        found.append(
            Candidate(
                id,
                category,
                title,
                score,
                os.path.normpath(os.path.join(folder, name)),
                doc in same,
                status,
                h or "",
            )
        )
    found.sort(key=lambda c: (not c.identical, -c.score, c.id))
    return found[:limit]


def _choose_terms(
    conn: sqlite3.Connection, category: str, terms: list[str], rows: int | None = None
) -> list[str]:
    """The draft's words rare enough in the category to be worth bm25's time, rarest first; `rows`: the
    category's file rows in `conn` when the caller knows them (counting them walks every one)."""
    if not terms:
        return []
    marks = ",".join("?" * len(terms))
    df = dict(
        conn.execute(
            f"SELECT term, df FROM terms WHERE category = ? AND term IN ({marks})",
            (category, *terms),
        ).fetchall()
    )
    n = rows if rows is not None else count_rows(conn, category)
    # a small category costs nothing to search: keep more words; a large one, none in more than 50 memories
    ceiling = min(max(25, COMMON * n), RARE_MAX)
    # words the index has never seen keep their place (a stemmed form may still match)
    ranked = sorted(range(len(terms)), key=lambda i: (df.get(terms[i], 0), i))
    chosen = [terms[i] for i in ranked if df.get(terms[i], 0) <= ceiling][:MAX_TERMS]
    return chosen or [terms[i] for i in ranked[:3]]  # only common words: the three least common


def pending_db(
    conn: sqlite3.Connection, category: str, pending: dict[str, Change | None]
) -> sqlite3.Connection:
    """The category as it is on disk, when its changes could not be written: indexed rows minus what
    changed, plus the changes, in a private in-memory database."""
    mem = memory_db()
    try:
        fts = fts_table(category)
        rows = conn.execute(
            f"SELECT f.name, f.mtime_ns, f.ctime_ns, f.size, f.ino, f.checked_ns, f.hash, f.id, d.title, "
            f"d.description, d.tags, d.body, f.status, f.created, f.updated, f.sources FROM files f "
            f"JOIN {fts} d ON d.rowid = f.doc WHERE f.category = ? AND f.broken IS NULL",
            (category,),
        ).fetchall()
        mem.execute("BEGIN")
        tally: Counter[str] = Counter()
        for (
            name,
            *sig,
            checked,
            h,
            id,
            title,
            desc,
            tags,
            body,
            status,
            created,
            updated,
            sources,
        ) in rows:
            if name in pending:
                continue
            doc = memfile.MemoryDoc(
                id=id,
                category=category,
                title=title,
                description=desc,
                tags=tags.split() if tags else [],
                created=created or "",
                updated=updated or "",
                status=status,
                body=body,
                sources=[{"session": s} for s in (sources or "").split()],
            )
            insert(mem, category, Change(name, tuple(sig), checked, h, doc=doc), tally=tally)
        for ch in pending.values():
            if ch is not None and ch.doc is not None:
                insert(mem, category, ch, tally=tally)
        write_counts(mem, category, tally)
        mem.execute("COMMIT")
        return mem
    except BaseException:
        mem.close()
        raise


def files_db(store: MemoryStore, category: str) -> sqlite3.Connection:
    """The slow way, when the database cannot even be read: the category's files parsed into memory."""
    mem = memory_db()
    mem.execute("BEGIN")
    tally: Counter[str] = Counter()
    if category == CLAUDE:
        for where, path in claude_topics.list_files(store.root):
            try:
                data = claude_topics.read_bytes(path)
                doc = claude_topics.document(
                    where, claude_topics.decode(path, data), os.stat(path).st_mtime_ns
                )
            except (OSError, claude_topics.TopicError):
                continue
            insert(
                mem, category, Change(where, NO_SIG, 0, content_hash(data), doc=doc), tally=tally
            )
        write_counts(mem, category, tally)
        mem.execute("COMMIT")
        return mem
    for _cat, _id, path, doc in store.scan([category]):
        if isinstance(doc, memfile.MemoryDoc):
            name = store.listing_name(category, path)
            insert(mem, category, Change(name, NO_SIG, 0, "", doc=doc), tally=tally)
    write_counts(mem, category, tally)
    mem.execute("COMMIT")
    return mem


def get_entry(conn: sqlite3.Connection, category: str, name: str, path: str) -> Entry | None:
    """The indexed memory in file `name` of `category` (at `path`); None when there is none or it is broken."""
    row = conn.execute(
        f"SELECT f.id, f.title, f.status, f.hash, d.description, d.tags, d.body FROM files f "
        f"JOIN {fts_table(category)} d ON d.rowid = f.doc WHERE f.category = ? AND f.name = ? AND f.broken IS NULL",
        (category, name),
    ).fetchone()
    if row is None:
        return None
    rid, title, status, h, desc, tags, body = row
    return Entry(rid, category, title, desc, tags.split() if tags else [], status, path, h, body)
