"""The database file: opened in WAL mode with a busy timeout, its schema checked (another version or
another memory root starts it over: it is a cache), opened again when another process replaced the file,
deleted and rebuilt when unusable, and kept in memory when even that fails."""

from __future__ import annotations

import os
import sqlite3

from memcurate.curator.memory.index.schema import SCHEMA_VERSION, create
from memcurate.curator.util.private import make_dirs, own_file

# SQLITE_BUSY, SQLITE_LOCKED, SQLITE_PROTOCOL (WAL contention): wait, never rebuild
_BUSY_CODES = (
    5,
    6,
    15,
)


def is_busy(e: sqlite3.Error) -> bool:
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    msg = str(e).lower()
    return "locked" in msg or "busy" in msg


class Database:
    """The connection to the index's database, shared by one MemoryIndex's threads (under its lock)."""

    def __init__(self, path: str, root: str, busy_timeout: float) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        # the database file could not be used: this process indexes in memory
        self.in_memory = False
        self.resets = 0  # times the database file was found unusable, deleted and rebuilt
        # called when the connection is dropped: what was known of it is void
        self.on_reset = lambda: None
        self._conn: sqlite3.Connection | None = None
        self._cursor: sqlite3.Cursor | None = None  # rows(): one for the connection's life
        self._db_ino: int | None = None
        self._real_root = os.path.realpath(root)

    def _connect(self, path: str) -> sqlite3.Connection:
        if path != ":memory:":
            # 0600 before SQLite opens it: its -wal, -shm and -journal files take the same mode
            own_file(path)
        conn = sqlite3.connect(
            path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if path != ":memory:":
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                # a cache: losing the last commit to a power cut is fine
                conn.execute("PRAGMA synchronous = NORMAL")
            self._ensure_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        def current() -> bool:
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                return False
            row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
            return row is not None and row[0] == self._real_root

        if current():
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not current():
                # another schema or another memory root: start over (it is a cache)
                # virtual tables first: dropping one drops its shadow tables
                for where in ("sql LIKE 'CREATE VIRTUAL TABLE%'", "name NOT LIKE 'sqlite_%'"):
                    for (table,) in conn.execute(
                        f"SELECT name FROM sqlite_master WHERE type = 'table' AND {where}"
                    ).fetchall():
                        conn.execute(f'DROP TABLE IF EXISTS "{table}"')
                create(conn)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('root', ?)", (self._real_root,)
                )
                # this database's own name: a mark taken of another one (since rebuilt) is not its
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('epoch', ?)",
                    (os.urandom(8).hex(),),
                )
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def conn(self) -> sqlite3.Connection:
        """The connection: opened on first use, and again when another process replaced the file."""
        if self._conn is not None and not self.in_memory:
            try:
                ino = os.stat(self.path).st_ino
            except OSError:
                ino = None
            if ino != self._db_ino:
                self.drop()
        if self._conn is None:
            self._conn = self._connect(":memory:") if self.in_memory else self._open_file()
        return self._conn

    def rows(self, sql: str, params: tuple = ()) -> list:
        """A short read's rows (its owner's lock held), through one cursor kept with the connection: each
        Connection.execute makes a cursor, and sqlite3 keeps a weak reference to every cursor in a list it
        prunes only at every 200th, so reads run for each draft decided (the index's mark) were live
        objects growing with each landing. Read whole: no statement is left open (nor its snapshot)."""
        conn = self.conn()
        if self._cursor is None or self._cursor.connection is not conn:
            self._cursor = conn.cursor()
        return self._cursor.execute(sql, params).fetchall()

    def _open_file(self) -> sqlite3.Connection:
        try:
            make_dirs(os.path.dirname(os.path.abspath(self.path)))
            try:
                conn = self._connect(self.path)
            except sqlite3.DatabaseError as e:
                if is_busy(e):
                    raise
                self._remove_files()  # not a database, or a broken one: start again
                self.resets += 1
                conn = self._connect(self.path)
            self._db_ino = os.stat(self.path).st_ino
            return conn
        except sqlite3.OperationalError as e:
            if is_busy(e):
                raise  # locked for now: this call answers from the files, the next one tries again
            return self._to_memory()
        except (sqlite3.Error, OSError):
            return self._to_memory()

    def _to_memory(self) -> sqlite3.Connection:
        self.in_memory = True
        self.on_reset()
        return self._connect(":memory:")

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(self.path + suffix)
            except OSError:
                pass

    def forked(self) -> None:
        """In a forked child: the parent's connection left as it is, never used here (SQLite's rule: a
        connection does not cross a fork; closing it could disturb the parent's); the next use opens
        this process's own."""
        self._conn = self._cursor = None
        self._db_ino = None

    def drop(self) -> None:
        """Close the connection (the next use opens it again): what was known of the database is void."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = self._cursor = None
        self.on_reset()

    def guarded(self, fn, *args):
        """Run fn; a database that turns out unusable is deleted and rebuilt (the next time, kept in memory).

        Busy errors are the caller's to handle."""
        for attempt in range(3):
            try:
                return fn(*args)
            except sqlite3.DatabaseError as e:
                if is_busy(e) or attempt == 2:
                    raise
                if self._conn is not None and self._conn.in_transaction:
                    try:
                        self._conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                self.drop()
                if attempt == 0 and not self.in_memory:
                    self._remove_files()
                    self.resets += 1
                else:
                    self.in_memory = True
        raise AssertionError("unreachable")
