"""A cheap freshness check for one-shot readers (the recall hook): a category whose folder has not
changed since it was last checked whole is trusted as indexed, without a stat of each of its files.

Every memcurate save is an atomic rename into the category folder, and so is a retire or a removal:
each changes the folder's mtime, so a folder stamp (mtime_ns, inode) tells a category that changed.
A hand edit in place does not change it: such a reader re-reads the files it picks (what it shows is
current and still exists), and a stale index costs only a miss until the folder changes again or
RECHECK_NS passes, when the category is checked whole anyway. A stamp taken less than RACY_NS after
the folder's mtime is not kept (a change within the timestamp granularity would keep it), so the next
call checks again. Stamps live in the index's own `meta` table: a rebuilt database has none, and every
category is checked whole once.
"""

from __future__ import annotations

import os
import sqlite3
import time

from curator.memory.index.schema import SCHEMA_VERSION

KEY = "folder:"  # meta key prefix, one per category
RECHECK_NS = 3600 * 10**9  # a category trusted by its folder stamp is still checked whole this often


def _stamp(folder: str) -> tuple[int, int]:
    try:
        st = os.stat(folder)
    except OSError:
        return (0, 0)  # no folder (yet): its creation changes the stamp
    return (st.st_mtime_ns, st.st_ino)


def _stale(conn: sqlite3.Connection, root: str, categories: list[str], now: int) -> dict[str, tuple[int, int]]:
    """category -> its folder's stamp now, for each category not trusted as indexed."""
    known = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (KEY + "%",)).fetchall())
    stale: dict[str, tuple[int, int]] = {}
    for cat in categories:
        stamp = _stamp(os.path.join(root, cat))
        old = known.get(KEY + cat, "").split(":")
        if len(old) == 3 and old[:2] == [str(stamp[0]), str(stamp[1])] and now - int(old[2]) < RECHECK_NS:
            continue
        stale[cat] = stamp
    return stale


def fresh_connection(path: str, root: str, categories: list[str], busy_timeout: float = 2.0):
    """A connection to the index at `path` when it indexes `root` and no category folder changed since it
    was last checked, else None: the reader's fast path, which loads neither the store nor the memory
    file format. Any doubt (no file, another schema or root, a folder changed, a database error) is None,
    and the caller takes the full path (MemoryIndex), which checks, rebuilds and refreshes."""
    if not os.path.isfile(path):
        return None
    conn = None
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
            if row is not None and row[0] == os.path.realpath(root) and not _stale(conn, root, categories,
                                                                                   time.time_ns()):
                return conn
    except sqlite3.Error:
        pass
    if conn is not None:
        conn.close()
    return None


def refresh_changed(db, freshness, root: str, categories: list[str]) -> list[str]:
    """(db: database.Database, freshness: freshness.Freshness; imported by the caller, not here.) Check whole the categories whose folder changed since their last check (or that were never
    checked, or not for RECHECK_NS); returns them. Stamps that cannot be written (the database is
    busy) are not kept: the next call checks those categories again."""
    from curator.memory.index.database import is_busy
    from curator.memory.index.freshness import RACY_NS

    now = time.time_ns()
    stale = _stale(db.guarded(db.conn), root, categories, now)
    for cat in stale:
        freshness.full_check(cat)
    # changes left unwritten (busy) or a folder changed within the timestamp granularity: check again next time
    keep = [(KEY + cat, f"{m}:{ino}:{now}") for cat, (m, ino) in stale.items()
            if m < now - RACY_NS and not freshness.pending.get(cat)]
    if keep:
        try:
            db.guarded(_write, db, keep)
        except sqlite3.OperationalError as e:
            if not is_busy(e):
                raise
    return list(stale)


def _write(db, rows: list[tuple[str, str]]) -> None:
    conn = db.conn()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
