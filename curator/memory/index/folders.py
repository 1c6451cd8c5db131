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

A one-shot reader does not bring the index up to date itself (that loads the indexer and the memory
file format, ~50 ms): `open_for_reading` compares a changed folder with the index's signatures and
hands the reader the few files added or changed since, to read itself; the engine indexes them on its
next look. A folder found unchanged gets its stamp back.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import time

from memcurate.curator.errors import MemcurateError
from memcurate.curator.memory.index.schema import SCHEMA_VERSION
from memcurate.curator.memory.memory_md.entry import ID_PATTERN
from memcurate.curator.util.paths import ARCHIVE_DIR, archived_name

KEY = "folder:"  # meta key prefix, one per category
# a category trusted by its folder stamp is still checked whole this often
RECHECK_NS = 3600 * 10**9


def _folders(root: str, category: str) -> tuple[tuple[str, str], ...]:
    """(folder, prefix of its names in the index) of a category: its folder, and its archive folder."""
    return (os.path.join(root, category), ""), (
        os.path.join(root, ARCHIVE_DIR, category),
        archived_name(category, ""),
    )


def _stamp(root: str, category: str) -> tuple[int, ...]:
    """(mtime_ns, inode) of the category folder, then of its archive folder."""
    out: list[int] = []
    for folder, _prefix in _folders(root, category):
        try:
            st = os.stat(folder)
        except OSError:
            out += [0, 0]  # no folder (yet): its creation changes the stamp
            continue
        out += [st.st_mtime_ns, st.st_ino]
    return tuple(out)


def _stale(
    conn: sqlite3.Connection, root: str, categories: list[str], now: int
) -> dict[str, tuple[int, ...]]:
    """category -> its folders' stamp now, for each category not trusted as indexed."""
    known = dict(
        conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (KEY + "%",)).fetchall()
    )
    stale: dict[str, tuple[int, ...]] = {}
    for cat in categories:
        stamp = _stamp(root, cat)
        old = known.get(KEY + cat, "").split(":")
        if (
            len(old) == len(stamp) + 1
            and old[:-1] == [str(v) for v in stamp]
            and now - int(old[-1]) < RECHECK_NS
        ):
            continue
        stale[cat] = stamp
    return stale


def _kept(cat: str, stamp: tuple[int, ...], now: int) -> tuple[str, str] | None:
    """The meta row of a stamp to keep; None for one too young to trust (a change within the granularity)."""
    if max(stamp[0::2]) >= now - RACY_NS:
        return None
    return KEY + cat, ":".join(str(v) for v in (*stamp, now))


# files a reader reads itself in changed folders; more, and the index is brought up to date
MAX_UNINDEXED = 20
RACY_NS = 2_000_000_000  # a signature or stamp younger than this (vs the mtime) is not trusted: freshness.py too
_NAME = re.compile(rf"{ID_PATTERN}\.md")


class Unindexed:
    """What a reader must look at itself in the category folders that changed since the index last
    checked them: `changed` {category: [file names new or changed since indexed]}, `gone` {category:
    {file names indexed but no longer there}}."""

    def __init__(self) -> None:
        self.changed: dict[str, list[str]] = {}
        self.gone: dict[str, set[str]] = {}

    def __bool__(self) -> bool:
        return bool(self.changed or self.gone)


def open_for_reading(path: str, root: str, categories: list[str], busy_timeout: float = 2.0):
    """(connection, Unindexed) for the index at `path` when it indexes `root`: the reader's fast path,
    which loads neither the indexer nor the memory file format. A category whose folder stamp changed is
    compared file by file with the index's signatures: what was added or changed since is listed for the
    reader to read itself (the index is left to the engine, which updates it on its next look); a folder
    found unchanged gets its stamp back. None when in doubt (no file, another schema or root, more than
    MAX_UNINDEXED changes, an odd entry, a database error): the caller takes the full path (MemoryIndex),
    which checks, rebuilds and refreshes."""
    if not os.path.isfile(path):
        return None
    conn = None
    try:
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
            if row is not None and row[0] == os.path.realpath(root):
                now = time.time_ns()
                found = Unindexed()
                settled = []
                for cat, stamp in _stale(conn, root, categories, now).items():
                    diff = _unindexed(conn, root, cat)
                    if diff is None:
                        raise _Doubt
                    changed, gone = diff
                    if changed or gone:
                        found.changed[cat], found.gone[cat] = changed, gone
                    elif kept := _kept(cat, stamp, now):
                        settled.append(kept)
                if sum(map(len, found.changed.values())) <= MAX_UNINDEXED:
                    _settle(conn, settled)
                    return conn, found
    except (sqlite3.Error, OSError, _Doubt):
        pass
    if conn is not None:
        conn.close()
    return None


class _Doubt(MemcurateError):
    """Something in a folder the fast path does not judge: the full path does."""


def _unindexed(
    conn: sqlite3.Connection, root: str, category: str
) -> tuple[list[str], set[str]] | None:
    """(names new or changed since indexed, names indexed but gone) of a category's folders, by stat
    signature as the index takes it; None for an entry the fast path does not judge (a link, a file
    that is not regular, a name that is no memory id)."""
    known = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT name, mtime_ns, ctime_ns, size, ino FROM files WHERE category = ?", (category,)
        )
    }
    changed: list[str] = []
    seen: set[str] = set()
    for folder, prefix in _folders(root, category):
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            names = [n for n in os.listdir(dfd) if n[:1] != "." and n.endswith(".md")]
            for name in names:
                try:
                    # no path joins: ~2 µs a file
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # gone while we looked
                seen.add(prefix + name)
                if known.get(prefix + name) == (
                    st.st_mtime_ns,
                    st.st_ctime_ns,
                    st.st_size,
                    st.st_ino,
                ):
                    continue
                if not stat.S_ISREG(st.st_mode) or not _NAME.fullmatch(name):
                    return None
                changed.append(prefix + name)
        finally:
            os.close(dfd)
    return changed, set(known) - seen


def _settle(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    """Keep the stamps of folders found unchanged; a busy database keeps them for another call."""
    if not rows:
        return
    try:
        # as the indexer's own connection: a cache, no fsync a commit
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", rows)
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def refresh_changed(db, freshness, root: str, categories: list[str]) -> list[str]:
    """(db: database.Database, freshness: freshness.Freshness; imported by the caller, not here.) Check whole the categories whose folder changed since their last check (or that were never
    checked, or not for RECHECK_NS); returns them. Stamps that cannot be written (the database is
    busy) are not kept: the next call checks those categories again."""
    from memcurate.curator.memory.index.database import is_busy

    now = time.time_ns()
    stale = _stale(db.guarded(db.conn), root, categories, now)
    for cat in stale:
        freshness.full_check(cat)
    # changes left unwritten (busy) or a folder changed within the timestamp granularity: check again next time
    keep = [
        row
        for cat, stamp in stale.items()
        if not freshness.pending.get(cat)
        for row in [_kept(cat, stamp, now)]
        if row
    ]
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
