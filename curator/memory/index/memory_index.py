"""MemoryIndex: the one lock around the index's parts (the package docstring says how it works)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory import memfile
from memcurate.curator.memory.index import compared, folders, library_rows
from memcurate.curator.memory.index.database import Database, is_busy
from memcurate.curator.memory.index.freshness import RESCAN_INTERVAL, Freshness, RefreshStats
from memcurate.curator.memory.index.schema import CLAUDE, INDEXED, Change
from memcurate.curator.memory.index.search import (
    Candidate,
    Entry,
    entry_of,
    files_db,
    find_candidates,
    get_entry,
    pending_db,
    with_held,
)
from memcurate.curator.memory.index.terms import (
    draft_text,
    query_terms,
    text_hash,
)
from memcurate.curator.memory.store import BrokenMemoryError, MemoryStore, MissingMemoryError


class MemoryIndex:
    """Full-text index of a MemoryStore's files, kept in `db_path` (a cache: rebuilt when lost)."""

    def __init__(
        self,
        db_path,
        store: MemoryStore,
        *,
        busy_timeout: float = 2.0,
        check_interval: float = 0.0,
        watch: bool | None = None,
        rescan_interval: float = RESCAN_INTERVAL,
    ) -> None:
        self.db_path = os.fspath(db_path)
        self.store = store
        self._lock = threading.RLock()  # one connection, shared by this object's callers' threads
        self._db = Database(self.db_path, store.root, busy_timeout)
        self._freshness = Freshness(
            store,
            self._db,
            check_interval=check_interval,
            watch=watch,
            rescan_interval=rescan_interval,
        )

    @property
    def in_memory(self) -> bool:
        """The database file could not be used: this process indexes in memory."""
        return self._db.in_memory

    @property
    def resets(self) -> int:
        """Times the database file was found unusable, deleted and rebuilt."""
        return self._db.resets

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._flush()
            self._db.drop()
            self._freshness.close()

    @contextmanager
    def holding(self) -> Iterator[None]:
        """While in it, a lookup's few changes (the files a save run just wrote) are held in memory and
        written together, rather than each in a transaction of its own (freshness.py); every other read
        writes them first, and so does the end of it."""
        with self._lock:
            self._freshness.holding += 1
        try:
            yield
        finally:
            with self._lock:
                self._freshness.holding -= 1
                if not self._freshness.holding:
                    self._flush()

    def _flush(self) -> None:
        """The held changes written; the index is a cache, so a failure costs their files a look later."""
        try:
            self._freshness.flush()
        except (sqlite3.Error, OSError):
            self._freshness.forget()

    def refresh(self, category: str | None = None) -> RefreshStats:
        """Bring the index in line with the files of `category` (default: every category; Claude's topic
        files, the pseudo-category `claude`, only when named)."""
        if category is not None and category not in INDEXED:
            self.store.category_dir(category)  # raises UnsafePathError naming the categories
        with self._lock:
            return self._freshness.refresh([category] if category is not None else list(CATEGORIES))

    def refresh_changed_folders(self) -> list[str]:
        """Check whole only the categories whose folder changed since their last such check: the cheap
        freshness of a one-shot reader (folders.py says what it trades); returns those categories."""
        with self._lock:
            self._freshness.flush()
            return folders.refresh_changed(
                self._db, self._freshness, self.store.root, list(CATEGORIES)
            )

    def reading(self, fn, *args):
        """fn(connection, *args) in one read transaction (every statement sees one snapshot): for a search
        of its own over the indexed tables (recall). Busy and unusable databases are the caller's to handle."""
        with self._lock:
            self._freshness.flush()
            return self._db.guarded(self._transaction, fn, "BEGIN", *args)

    def candidates(
        self, category: str, text, limit: int = 5, *, include_archived: bool = False
    ) -> list[Candidate]:
        """Existing memories of `category` most like `text`, best first.

        `text` is the draft's title, description and body (one per line, see
        `draft_text`), or the MemoryDoc itself, which also finds an identical
        memory (same title and body: listed first, `identical=True`). Ranked by
        bm25 over the draft's telling words. Archived memories only with
        `include_archived`. While a save run holds its changes (`holding`), up to
        twice `limit`: the best indexed, and the best of those held.
        """
        if category != CLAUDE:
            self.store.category_dir(category)  # UnsafePathError for an unknown category
        if limit <= 0:
            return []
        with self._lock:
            try:
                self._freshness.fresh(category, hold=True)
                # none there (Claude's topic files, often): nothing to find, no words to weigh
                if self._freshness.holds_none(category):
                    return []
                terms, ident = _query(text, category)
                if not terms and ident is None:
                    return []
                return self._db.guarded(
                    self._query, category, terms, ident, limit, include_archived
                )
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                # even reading stayed locked past the timeout: answer from the files themselves
                terms, ident = _query(text, category)
                if not terms and ident is None:
                    return []
                mem = files_db(self.store, category)
                try:
                    return find_candidates(
                        mem, self._folder(category), category, terms, ident, limit, include_archived
                    )
                finally:
                    mem.close()

    def mark(self) -> str:
        """Where the index stands now, for `candidates_since`: this database's name and the last row number
        it gave a file (row numbers are never reused: a file written, or written again, later gets a
        larger one). Take it before a lookup; "" when the index cannot say (a lookup since it is then whole)."""
        with self._lock:
            try:
                return self._db.guarded(self._mark)
            except sqlite3.Error:
                return ""

    def _mark(self) -> str:
        epoch = self._db.rows("SELECT value FROM meta WHERE key = 'epoch'")
        seq = self._db.rows("SELECT seq FROM sqlite_sequence WHERE name = 'files'")
        return f"{epoch[0][0]}:{seq[0][0] if seq else 0}" if epoch else ""

    def candidates_since(
        self, category: str, text, mark: str, limit: int = 5
    ) -> list[Candidate] | None:
        """`candidates` among the memories indexed since `mark` (and those a save run holds): what a decision
        taken at `mark` has not seen. A file changed on disk since is indexed again by the check made first,
        so it is among them; one unchanged is not, whatever its rank now. None when `mark` is not of this
        database (rebuilt since, another one) or changes wait unwritten: then look the category up whole."""
        if category != CLAUDE:
            self.store.category_dir(category)  # UnsafePathError for an unknown category
        epoch, _, at = mark.partition(":")
        if not epoch or not at.isdigit() or limit <= 0:
            return None
        with self._lock:
            try:
                self._freshness.fresh(category, hold=True)
                if self._freshness.pending.get(category):
                    return None
                if self._freshness.holds_none(category):
                    return []

                def run():
                    # the mark is read from a review record, which Claude can write: one of another
                    # database, or ahead of this one (it would hide every memory), is not trusted
                    now_epoch, _, now_at = self._mark().partition(":")
                    if now_epoch != epoch or int(at) > int(now_at or 0):
                        return None
                    terms, ident = _query(text, category)
                    if not terms and ident is None:
                        return []
                    return self._query(category, terms, ident, limit, False, int(at))

                return self._db.guarded(run)
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                return None

    def get(self, category: str, id: str) -> Entry | None:
        """The memory `id` of `category` as indexed (its folder checked first); None when there is no
        such file or it is broken (see `broken()`). UnsafePathError for a hostile category or id."""
        path = self.store.locate(category, id)
        name = self.store.listing_name(category, path)
        with self._lock:
            try:
                self._freshness.fresh(category)
                change = self._freshness.pending.get(category, {}).get(name, False)
                if change is not False:
                    if isinstance(change, Change) and change.doc:
                        return entry_of(change.doc, path, change.hash)
                    return None
                return self._db.guarded(lambda: get_entry(self._db.conn(), category, name, path))
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                try:
                    doc, h = self.store.read(category, id)
                except (MissingMemoryError, BrokenMemoryError):
                    return None
                return entry_of(doc, path, h)

    def broken(self, category: str | None = None) -> list[tuple[str, str]]:
        """(path, reason) of every memory file that could not be indexed (checked now)."""
        return self.refresh(category).broken

    def _folder(self, category: str) -> str:
        return self._freshness.folder(category)

    # -- what a check compares of each file, kept between checks (compared.py) ----------

    def kept_words(self, version: str, limit: int) -> dict[str, tuple[str, ...]]:
        """hash -> the words kept for it (compared.read); none when the database cannot be read now."""
        return self._cache(compared.read, "BEGIN", version, limit) or {}

    def keep_words(
        self, version: str, rows: list[tuple[str, tuple[str, ...]]], live: set[str]
    ) -> None:
        """compared.write; not written when the database cannot be (the next check finds them again)."""
        self._cache(compared.write, "BEGIN IMMEDIATE", version, rows, live)

    def forget_kept_words(self) -> None:
        """Every kept row dropped (one disagreed with its file)."""
        self._cache(compared.forget, "BEGIN IMMEDIATE")

    def _cache(self, fn, begin: str, *args):
        """fn(connection, *args) in a transaction of its own, for a cache of the index's: None when the
        database could not be used now (busy, unwritable, broken)."""
        try:
            with self._lock:
                return self._db.guarded(self._transaction, fn, begin, *args)
        except (sqlite3.Error, OSError):
            return None

    def forked(self) -> None:
        """Called first in a forked child that uses the index: its own connection from now on."""
        self._db.forked()

    def _transaction(self, fn, begin: str, *args):
        """fn(connection, *args) between `begin` and COMMIT; rolled back when it raises."""
        conn = self._db.conn()
        conn.execute(begin)
        try:
            out = fn(conn, *args)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return out

    # -- the library: every memory at once -----------------------------------------------

    def rows(self) -> list[library_rows.Row]:
        """Every indexed file of every category and of Claude's topic files (each checked first), broken
        ones included: one query, for the library's listing."""
        with self._lock:
            return self._over_all(
                library_rows.rows, lambda cats: library_rows.rows_of_files(self, cats)
            )

    def search(
        self, match: str, limit: int = 500, ranked: bool = True
    ) -> list[tuple[str, str, float]]:
        """(category, file name, score) of the files whose text matches the FTS5 expression `match`,
        over every category and Claude's topic files, best first (score: -bm25, higher is better); not
        `ranked`, the first `limit` found (library_rows.search says when that is worth it)."""
        with self._lock:
            return self._over_all(
                lambda conn, cats: library_rows.search(conn, cats, match, limit, ranked),
                lambda cats: library_rows.search_files(self, cats, match, limit, ranked),
            )

    def _over_all(self, read, from_files):
        """read(connection, categories) over every category made fresh; a category whose changes wait
        (the write lock stayed busy) is read from its private copy, and when even reading stays locked
        every category is read from its files."""
        try:
            for category in INDEXED:
                self._freshness.fresh(category)

            def run():
                conn = self._db.conn()
                conn.execute("BEGIN")
                try:
                    waiting = [c for c in INDEXED if self._freshness.pending.get(c)]
                    out = read(conn, [c for c in INDEXED if c not in waiting])
                    for c in waiting:
                        mem = pending_db(conn, c, self._freshness.pending[c])
                        try:
                            out += read(mem, [c])
                        finally:
                            mem.close()
                    return out
                finally:
                    if conn.in_transaction:
                        conn.execute("COMMIT")

            return self._db.guarded(run)
        except sqlite3.OperationalError as e:
            if not is_busy(e):
                raise
            return from_files(list(INDEXED))

    def _query(
        self,
        category: str,
        terms: list[str],
        ident: str | None,
        limit: int,
        include_archived: bool,
        since: int = 0,
    ) -> list[Candidate]:
        held = self._freshness.held.get(category)
        if held:
            # a save run's changes held in memory: the indexed rows but theirs, and a copy of them
            return with_held(
                self._db.conn(),
                self._freshness.held_db(category),
                # a held new signature leaves the row as it is: searched where it is
                {n for n, c in held.items() if c is None or not c.restamp},
                self._folder(category),
                category,
                terms,
                ident,
                limit,
                include_archived,
                since,
                self._freshness.rows(category),
            )
        pending = self._freshness.pending.get(category)
        # changes not written yet (the write lock stayed busy): search a private copy that holds them
        conn = pending_db(self._db.conn(), category, pending) if pending else self._db.conn()
        try:
            return find_candidates(
                conn,
                self._folder(category),
                category,
                terms,
                ident,
                limit,
                include_archived,
                since,
                None if pending else self._freshness.rows(category),
            )
        finally:
            if pending:
                conn.close()


def _query(text, category: str) -> tuple[list[str], str | None]:
    """(the words to search for, the identical-text hash or None) of a lookup's `text` (see `candidates`)."""
    if isinstance(text, memfile.MemoryDoc):
        return query_terms(draft_text(text), category), text_hash(text.title, text.body)
    return query_terms(str(text), category), None
