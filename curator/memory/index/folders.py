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

from curator.memory.index.database import Database, is_busy
from curator.memory.index.freshness import RACY_NS, Freshness

KEY = "folder:"  # meta key prefix, one per category
RECHECK_NS = 3600 * 10**9  # a category trusted by its folder stamp is still checked whole this often


def _stamp(folder: str) -> tuple[int, int]:
    try:
        st = os.stat(folder)
    except OSError:
        return (0, 0)  # no folder (yet): its creation changes the stamp
    return (st.st_mtime_ns, st.st_ino)


def refresh_changed(db: Database, freshness: Freshness, root: str, categories: list[str]) -> list[str]:
    """Check whole the categories whose folder changed since their last check (or that were never
    checked, or not for RECHECK_NS); returns them. Stamps that cannot be written (the database is
    busy) are not kept: the next call checks those categories again."""
    conn = db.guarded(db.conn)
    known = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (KEY + "%",)).fetchall())
    now = time.time_ns()
    stale: dict[str, tuple[int, int]] = {}
    for cat in categories:
        stamp = _stamp(os.path.join(root, cat))
        old = known.get(KEY + cat, "").split(":")
        if len(old) == 3 and old[:2] == [str(stamp[0]), str(stamp[1])] and now - int(old[2]) < RECHECK_NS:
            continue
        stale[cat] = stamp
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


def _write(db: Database, rows: list[tuple[str, str]]) -> None:
    conn = db.conn()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
