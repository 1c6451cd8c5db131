"""An index of the memory root for candidate search (DESIGN §8): SQLite FTS5, a rebuildable cache.

    index = MemoryIndex(os.path.join(data_dir, "index.sqlite"), MemoryStore(root))
    for c in index.candidates("decision", draft):      # draft: a MemoryDoc, or its text
        print(c.id, c.score, c.identical)

The memory files are the truth. The database remembers, per file, its stat
signature (mtime_ns, ctime_ns, size, inode), the sha256 of its bytes and, for
a file that parses, its fields under full-text search (one FTS5 table per
category, porter-stemmed, ranked by bm25 with the title weighing most) and
the document frequency of its words. Deleting or corrupting the database
costs a rebuild, never an error. Broken files are listed, not indexed.

Freshness: the trade-off chosen
-------------------------------
Memory files are edited by hand, outside memcurate, so the index cannot
trust itself. Before every `candidates()` and `get()` it makes the one
category it reads right, and only that one: other categories cannot change
this answer and are left for when they are queried (`refresh()` with no
category checks them all, for a status report or the broken-file list).

- A full check of a category is a `stat` of each of its files (~3.5 µs a
  file on the development VM, where every stat is a syscall: ~7 ms for the
  2,000 files of a category in a 10,000-memory root, ~10 ms for 2,800),
  compared with signatures (mtime_ns, ctime_ns, size, inode) this process
  keeps in memory. Only files whose signature changed are read; only those
  whose bytes changed are parsed and re-indexed; files gone are dropped. A
  signature taken less than two seconds after the file's mtime or ctime is
  "racy" (a same-size edit within the timestamp granularity keeps it) and
  the file is re-hashed on each check until it is old enough, as git does.
- On Linux, from a category's second check on (so a one-shot process never
  pays for it), an inotify watch on the category folder says which files
  changed; a lookup then stats and re-reads just those, so it costs the
  query alone (~2-3 ms at 10,000 memories), and a hand edit is seen by the
  very next lookup. The watch is placed before a full check, so nothing slips
  between. A full check still runs every `rescan_interval` seconds (60) for
  what a watch cannot see (an edit made on another machine over NFS, a
  memory file that is a link to a file elsewhere, a category folder
  re-linked), and at once on a queue overflow or when the
  folder itself is deleted or moved.
- Without inotify (macOS, `watch=False`), every lookup is a full check of
  its category: still exact, but linear in its size: at 10,000 memories the
  median lookup is ~12-20 ms here (the target's edge), and one category of
  10,000 memories would cost ~40 ms. `check_interval` (seconds; default 0)
  lets a caller firing bursts of lookups skip checks made less than that
  long ago, trading freshness for speed.

Search cost is bounded too: bm25 is computed for every row that matches,
so the query keeps only the draft's words that are rare in the category
(document frequency at most 10 % of its memories, or 25 memories in a small
one, from the `terms` table; at most 16 words, rarest first; only the three
least common when all are common). A word in most memories would add almost
nothing to bm25 (its IDF is near zero) and would make every memory a match.
Terms are quoted strings, OR-ed: user text never reaches MATCH as syntax.

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

import hashlib
import os
import re
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from . import memfile
from .categories import CATEGORIES
from .redact import redact_document, redact_text
from .store import BrokenMemoryError, MemoryStore, MissingMemoryError, UnsafePathError, content_hash

SCHEMA_VERSION = 2
RESCAN_INTERVAL = 60.0  # a watched category is still checked whole this often (events a watch cannot see)
RACY_NS = 2_000_000_000  # a signature younger than this (vs the file's mtime/ctime) is re-hashed on each check
BATCH = 400  # files per write transaction while indexing many
DRAFT_TERMS = 60  # words considered from a draft
MAX_TERMS = 16  # words searched for
COMMON = 0.10  # a word in more than this share of a category's memories is not searched for (when n > 250)
WEIGHTS = (8.0, 4.0, 3.0, 1.0)  # bm25 column weights: title, description, tags, body
_TOKENIZE = "porter unicode61 remove_diacritics 2"
_WORD = re.compile(r"[^\W_]+")  # a unicode61 token: letters and digits; '_' separates

_STOP = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could did didn do does doesn doing don down during each else
etc few for from further get got had has have having he her here hers him his how i if in into is
isn it its itself just let me more most must my no nor not now of off on once one only or other our
ours out over own same she should so some such than that the their them then there these they this
those through to too under until up upon us use used using very via was we were what when where
which while who whom why will with would yes yet you your
""".split())

_BUSY_CODES = (5, 6, 15)  # SQLITE_BUSY, SQLITE_LOCKED, SQLITE_PROTOCOL (WAL contention): wait, never rebuild


# -- results -----------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """An existing memory that may match a draft. `score` is -bm25: higher is better.

    `identical`: same title and body as the draft, case and spacing aside (as
    curator.decide.identical; known only when `candidates` got a MemoryDoc); such
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


@dataclass
class RefreshStats:
    categories: list[str] = field(default_factory=list)
    files: int = 0  # memory files seen
    indexed: int = 0  # read and (re)indexed now: new or changed (broken ones included)
    restamped: int = 0  # signature changed, same bytes: not parsed again
    removed: int = 0  # gone from disk, dropped from the index
    unchanged: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): listed, not indexed
    pending: int = 0  # changes not written because the database stayed busy (served from memory)
    seconds: float = 0.0

    def add(self, other: RefreshStats) -> None:
        for k in ("files", "indexed", "restamped", "removed", "unchanged", "pending"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.categories += other.categories
        self.broken += other.broken
        self.seconds += other.seconds


class _Busy(Exception):
    """The database write lock stayed taken past the busy timeout."""


# -- text --------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def text_hash(title: str, body: str) -> str:
    """What 'identical' means (as curator.decide.identical): same title and body, case and spacing aside."""
    return hashlib.sha1(f"{_norm(title)}\n{_norm(body)}".encode()).hexdigest()


def draft_text(doc: memfile.MemoryDoc) -> str:
    """A document as search text: title, description, tags and body, one per line."""
    return f"{doc.title}\n{doc.description}\n{' '.join(doc.tags)}\n{doc.body}"


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if 1 < len(w) <= 64 and w not in _STOP]


def query_terms(text: str, category: str | None = None, limit: int = DRAFT_TERMS) -> list[str]:
    """The words of `text` worth searching for: no stop words, no section headings; the first two
    lines' words (a draft's title and description) first, then the rest by how often they occur."""
    skip: frozenset[str] | set[str] = frozenset()
    if category in CATEGORIES:
        cat = CATEGORIES[category]
        skip = {w for name in cat.required + cat.optional for w in _WORD.findall(name.lower())}
    head, _, rest = text.partition("\n")
    head2, _, rest = rest.partition("\n")
    out: dict[str, None] = {}
    for w in _words(f"{head} {head2}"):
        if w not in skip:
            out.setdefault(w)
    for w, _n in Counter(w for w in _words(rest) if w not in skip).most_common():
        if len(out) >= limit:
            break
        out.setdefault(w)
    return list(out)[:limit]


def match_expression(terms: list[str]) -> str:
    """An FTS5 MATCH string for `terms`: each one a quoted string (never raw user text), OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def _doc_terms(d: memfile.MemoryDoc) -> set[str]:
    return set(_words(draft_text(d)))


# -- the database ------------------------------------------------------------------

def _fts(category: str) -> str:
    return "fts_" + re.sub(r"[^a-z0-9_]", "", category)


_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS files(
        doc INTEGER PRIMARY KEY,       -- the rowid in fts_<category> when indexed
        category TEXT NOT NULL,
        name TEXT NOT NULL,            -- file name: <id>.md
        mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL,
        checked_ns INTEGER NOT NULL,   -- when the signature was taken (racy when close to mtime or ctime)
        hash TEXT,                     -- sha256 of the bytes
        id TEXT, title TEXT, status TEXT, text_hash TEXT,
        broken TEXT,                   -- why it is not indexed (NULL when it is)
        UNIQUE(category, name))""",
    "CREATE INDEX IF NOT EXISTS files_text ON files(category, text_hash)",
    "CREATE INDEX IF NOT EXISTS files_status ON files(category, status)",
    """CREATE TABLE IF NOT EXISTS terms(category TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
        PRIMARY KEY(category, term)) WITHOUT ROWID""",
] + [f"CREATE VIRTUAL TABLE IF NOT EXISTS {_fts(c)} USING fts5(title, description, tags, body, "
     f"tokenize = '{_TOKENIZE}')" for c in CATEGORIES]


def _create(conn: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        conn.execute(statement)


def _is_busy(e: sqlite3.Error) -> bool:
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    msg = str(e).lower()
    return "locked" in msg or "busy" in msg


def _insert(conn: sqlite3.Connection, category: str, ch: _Change) -> None:
    """Add one file's row (and, when it parsed, its text and word counts). The caller removed any old row.

    The text is redacted on its way in: a secret typed into a memory by hand is a finding about
    that file, never a copy in the index. 'Identical' is still judged on the file's own text."""
    d = ch.doc
    same = text_hash(d.title, d.body) if d else None
    if d is not None:
        d = redact_document(d, keep_id=True)[0]
    cur = conn.execute(
        "INSERT INTO files(category, name, mtime_ns, ctime_ns, size, ino, checked_ns, hash, id, title, status, "
        "text_hash, broken) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (category, ch.name, *ch.sig, ch.checked_ns, ch.hash, d.id if d else None, d.title if d else None,
         d.status if d else None, same, ch.broken and redact_text(ch.broken)))  # a reason may quote the file
    if d is None:
        return
    conn.execute(f"INSERT INTO {_fts(category)}(rowid, title, description, tags, body) VALUES (?, ?, ?, ?, ?)",
                 (cur.lastrowid, d.title, d.description, " ".join(d.tags), d.body))
    conn.executemany("INSERT INTO terms(category, term, df) VALUES (?, ?, 1) "
                     "ON CONFLICT(category, term) DO UPDATE SET df = df + 1",
                     [(category, t) for t in _doc_terms(d)])


def _remove(conn: sqlite3.Connection, category: str, name: str) -> None:
    row = conn.execute("SELECT doc, broken FROM files WHERE category = ? AND name = ?", (category, name)).fetchone()
    if row is None:
        return
    doc, broken = row
    if broken is None:
        fts = _fts(category)
        old = conn.execute(f"SELECT title, description, tags, body FROM {fts} WHERE rowid = ?", (doc,)).fetchone()
        if old is not None:
            # rows left at 0 cost nothing and are reused when the word comes back
            conn.executemany("UPDATE terms SET df = df - 1 WHERE category = ? AND term = ?",
                             [(category, t) for t in set(_words("\n".join(old)))])
            conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (doc,))
    conn.execute("DELETE FROM files WHERE doc = ?", (doc,))


def _memory_db() -> sqlite3.Connection:
    mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    _create(mem)
    return mem


# -- per-file bookkeeping ------------------------------------------------------------

def _sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


class _Known:
    """What this process believes the index holds for one file."""

    __slots__ = ("sig", "checked_ns", "hash", "broken", "trusted")

    def __init__(self, sig, checked_ns, hash, broken):
        self.sig = sig
        self.hash = hash
        self.broken = broken
        self.stamp(checked_ns)

    def stamp(self, checked_ns: int) -> None:
        self.checked_ns = checked_ns
        # the signature proves the bytes unchanged only once it is older than the timestamp granularity
        self.trusted = self.sig[0] < checked_ns - RACY_NS and self.sig[1] < checked_ns - RACY_NS


class _Change:
    """A file to write into the index: its parsed document, or why it is broken, or only a new signature."""

    __slots__ = ("name", "sig", "checked_ns", "hash", "doc", "broken", "restamp")

    def __init__(self, name, sig, checked_ns, hash, doc=None, broken=None, restamp=False):
        self.name = name
        self.sig = sig
        self.checked_ns = checked_ns
        self.hash = hash
        self.doc = doc
        self.broken = broken
        self.restamp = restamp


_NO_SIG = (0, 0, 0, 0)


# -- change notification (Linux inotify) ---------------------------------------------------

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ONLYDIR = 0x4000, 0x8000, 0x01000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_WATCH_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
               | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
ALL = None  # "every file of the category may have changed"


class _Watcher:
    """inotify watches on category folders: which file names changed since the last drain.

    Only on Linux, and only for a long-lived index (see MemoryIndex.watch): a
    one-shot process would pay for loading ctypes and gain nothing.
    """

    def __init__(self) -> None:
        import ctypes
        import ctypes.util
        import struct
        import weakref

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = (ctypes.c_int, ctypes.c_int)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self._header = struct.Struct("iIII")
        self._by_wd: dict[int, str] = {}
        self._wd_of: dict[str, int] = {}
        self._close = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        self._close()

    def watching(self, category: str) -> bool:
        return category in self._wd_of

    def watch(self, category: str, folder: str) -> bool:
        """Start watching `folder` (before the full check that follows, so nothing slips between)."""
        self.unwatch(category)
        wd = self._add(self.fd, os.fsencode(folder), _WATCH_MASK)
        if wd < 0:
            return False  # missing folder, watch limit reached...: this category is checked by stat
        self._by_wd[wd] = category
        self._wd_of[category] = wd
        return True

    def unwatch(self, category: str) -> None:
        wd = self._wd_of.pop(category, None)
        if wd is not None:
            self._by_wd.pop(wd, None)
            self._rm(self.fd, wd)

    def drain(self, dirty: dict[str, set[str] | None]) -> None:
        """Add what changed since the last drain to `dirty`: category -> file names, or ALL."""
        header = self._header
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            pos = 0
            while pos + header.size <= len(buf):
                wd, mask, _cookie, length = header.unpack_from(buf, pos)
                name = buf[pos + header.size:pos + header.size + length].rstrip(b"\0")
                pos += header.size + length
                if mask & _IN_Q_OVERFLOW:
                    for category in list(self._wd_of):
                        dirty[category] = ALL
                    continue
                category = self._by_wd.get(wd)
                if category is None:
                    continue
                if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED):
                    # the folder itself went away or was moved: check it whole, watch it again
                    self._by_wd.pop(wd, None)
                    if self._wd_of.get(category) == wd:
                        del self._wd_of[category]
                    dirty[category] = ALL
                    continue
                if not name.endswith(b".md") or name.startswith(b".") or dirty.get(category, ()) is ALL:
                    continue  # temp files of atomic writes, editors' swap files: not memories
                dirty.setdefault(category, set()).add(os.fsdecode(name))


def _inotify_available() -> bool:
    return os.path.isdir("/proc/sys/fs/inotify")


# -- the index -----------------------------------------------------------------------

class MemoryIndex:
    """Full-text index of a MemoryStore's files, kept in `db_path` (a cache: rebuilt when lost)."""

    def __init__(self, db_path, store: MemoryStore, *, busy_timeout: float = 2.0,
                 check_interval: float = 0.0, watch: bool | None = None,
                 rescan_interval: float = RESCAN_INTERVAL) -> None:
        self.db_path = os.fspath(db_path)
        self.store = store
        self.busy_timeout = busy_timeout
        self.check_interval = check_interval
        self.rescan_interval = rescan_interval
        # None: watch a category from its second check on, where inotify exists; False: never
        self.watch = _inotify_available() if watch is None else watch
        self._watcher: _Watcher | None = None
        self._dirty: dict[str, set[str] | None] = {}
        self._scans: dict[str, int] = {}
        self._full_at: dict[str, float] = {}  # category -> when it was last checked whole
        self.in_memory = False  # the database file could not be used: this process indexes in memory
        self.resets = 0  # times the database file was found unusable, deleted and rebuilt
        self._lock = threading.RLock()  # one connection, shared by this object's callers' threads
        self._conn: sqlite3.Connection | None = None
        self._db_ino: int | None = None
        self._known: dict[str, dict[str, _Known]] = {}
        self._checked_at: dict[str, float] = {}
        self._pending: dict[str, dict[str, _Change | None]] = {}  # category -> name -> change (None: removed)
        self._real_root = os.path.realpath(store.root)

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._drop_connection()
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None

    # -- public API -------------------------------------------------------------------

    def refresh(self, category: str | None = None) -> RefreshStats:
        """Bring the index in line with the files of `category` (default: every category)."""
        if category is not None and category not in CATEGORIES:
            self.store.category_dir(category)  # raises UnsafePathError naming the categories
        with self._lock:
            total = RefreshStats()
            for cat in [category] if category is not None else list(CATEGORIES):
                try:
                    stats = self._full_check(cat)
                except sqlite3.OperationalError as e:
                    if not _is_busy(e):
                        raise
                    stats = self._files_only_stats(cat)
                self._checked_at[cat] = time.monotonic()
                total.add(stats)
            return total

    def candidates(self, category: str, text, limit: int = 5, *,
                   include_archived: bool = False) -> list[Candidate]:
        """Existing memories of `category` most like `text`, best first.

        `text` is the draft's title, description and body (one per line, see
        `draft_text`), or the MemoryDoc itself, which also finds an identical
        memory (same title and body: listed first, `identical=True`). Ranked by
        bm25 over the draft's telling words. Archived memories only with
        `include_archived`.
        """
        self.store.category_dir(category)  # UnsafePathError for an unknown category
        ident = None
        if isinstance(text, memfile.MemoryDoc):
            ident = text_hash(text.title, text.body)
            text = draft_text(text)
        terms = query_terms(str(text), category)
        if limit <= 0 or (not terms and ident is None):
            return []
        with self._lock:
            try:
                self._fresh(category)
                return self._guarded(self._query, category, terms, ident, limit, include_archived)
            except sqlite3.OperationalError as e:
                if not _is_busy(e):
                    raise
                # even reading stayed locked past the timeout: answer from the files themselves
                mem = self._files_db(category)
                try:
                    return self._search(mem, category, terms, ident, limit, include_archived)
                finally:
                    mem.close()

    def get(self, category: str, id: str) -> Entry | None:
        """The memory `id` of `category` as indexed (its folder checked first); None when there is no
        such file or it is broken (see `broken()`). UnsafePathError for a hostile category or id."""
        path = self.store.path_for(category, id)
        name = f"{id}.md"
        with self._lock:
            try:
                self._fresh(category)
                change = self._pending.get(category, {}).get(name, False)
                if change is not False:
                    return _entry(change.doc, path, change.hash) if change and change.doc else None
                row = self._guarded(self._get_row, category, name)
            except sqlite3.OperationalError as e:
                if not _is_busy(e):
                    raise
                try:
                    doc, h = self.store.read(category, id)
                except (MissingMemoryError, BrokenMemoryError):
                    return None
                return _entry(doc, path, h)
            if row is None:
                return None
            rid, title, status, h, desc, tags, body = row
            return Entry(rid, category, title, desc, tags.split() if tags else [], status, path, h, body)

    def broken(self, category: str | None = None) -> list[tuple[str, str]]:
        """(path, reason) of every memory file that could not be indexed (checked now)."""
        return self.refresh(category).broken

    # -- connection ---------------------------------------------------------------------

    def _connect(self, path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if path != ":memory:":
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # a cache: losing the last commit to a power cut is fine
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
                    for (table,) in conn.execute(f"SELECT name FROM sqlite_master WHERE type = 'table' AND {where}"
                                                 ).fetchall():
                        conn.execute(f'DROP TABLE IF EXISTS "{table}"')
                _create(conn)
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('root', ?)", (self._real_root,))
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _db(self) -> sqlite3.Connection:
        """The connection: opened on first use, and again when another process replaced the file."""
        if self._conn is not None and not self.in_memory:
            try:
                ino = os.stat(self.db_path).st_ino
            except OSError:
                ino = None
            if ino != self._db_ino:
                self._drop_connection()
        if self._conn is None:
            self._conn = self._connect(":memory:") if self.in_memory else self._open_file()
        return self._conn

    def _open_file(self) -> sqlite3.Connection:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.db_path)), exist_ok=True)
            try:
                conn = self._connect(self.db_path)
            except sqlite3.DatabaseError as e:
                if _is_busy(e):
                    raise
                self._remove_files()  # not a database, or a broken one: start again
                self.resets += 1
                conn = self._connect(self.db_path)
            self._db_ino = os.stat(self.db_path).st_ino
            return conn
        except sqlite3.OperationalError as e:
            if _is_busy(e):
                raise  # locked for now: this call answers from the files, the next one tries again
            return self._to_memory()
        except (sqlite3.Error, OSError):
            return self._to_memory()

    def _to_memory(self) -> sqlite3.Connection:
        self.in_memory = True
        self._forget()
        return self._connect(":memory:")

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(self.db_path + suffix)
            except OSError:
                pass

    def _forget(self) -> None:
        self._known.clear()
        self._checked_at.clear()
        self._pending.clear()
        self._dirty.clear()
        self._full_at.clear()

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        self._forget()

    def _guarded(self, fn, *args):
        """Run fn; a database that turns out unusable is deleted and rebuilt (the next time, kept in memory).

        Busy errors are the caller's to handle."""
        for attempt in range(3):
            try:
                return fn(*args)
            except sqlite3.DatabaseError as e:
                if _is_busy(e) or attempt == 2:
                    raise
                if self._conn is not None and self._conn.in_transaction:
                    try:
                        self._conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                self._drop_connection()
                if attempt == 0 and not self.in_memory:
                    self._remove_files()
                    self.resets += 1
                else:
                    self.in_memory = True
        raise AssertionError("unreachable")

    # -- freshness --------------------------------------------------------------------------

    def _fresh(self, category: str) -> None:
        """Make the index right for `category` before reading it (see the module's notes)."""
        self._guarded(self._db)  # first: a database replaced by another process resets what we know
        now = time.monotonic()
        if self.check_interval > 0:
            last = self._checked_at.get(category)
            if last is not None and now - last < self.check_interval:
                return
        w = self._watcher
        if w is not None:
            w.drain(self._dirty)
        full_at = self._full_at.get(category)
        if (w is not None and w.watching(category) and full_at is not None and now - full_at < self.rescan_interval
                and not self._pending.get(category) and category in self._known):
            names = self._dirty.pop(category, set())
            if names is ALL:
                self._full_check(category)
            elif names:
                self._guarded(self._sync, category, names)
        else:
            self._full_check(category)
        self._checked_at[category] = time.monotonic()

    def _full_check(self, category: str) -> RefreshStats:
        self._guarded(self._db)
        self._dirty.pop(category, None)
        self._scans[category] = self._scans.get(category, 0) + 1
        if self.watch and self._scans[category] >= 2:  # from the second check on: a long-lived index
            try:
                folder = self.store.category_dir(category)
            except UnsafePathError:
                folder = None  # reported by the check below
            try:
                if self._watcher is None:
                    self._watcher = _Watcher()
                if folder is not None:
                    self._watcher.watch(category, folder)
            except (OSError, AttributeError, ImportError):
                self.watch = False  # no inotify here: every check is a stat of the folder
        started = time.monotonic()
        stats = self._guarded(self._sync, category)
        self._full_at[category] = started
        return stats

    def _load_known(self, category: str) -> dict[str, _Known]:
        known = self._known.get(category)
        if known is None:
            rows = self._db().execute(
                "SELECT name, mtime_ns, ctime_ns, size, ino, checked_ns, hash, broken FROM files "
                "WHERE category = ?", (category,)).fetchall()
            known = {r[0]: _Known((r[1], r[2], r[3], r[4]), r[5], r[6], r[7]) for r in rows}
            self._known[category] = known
        return known

    def _sync(self, category: str, names: set[str] | None = None, depth: int = 0) -> RefreshStats:
        """Compare the category folder (or only the files `names`) with what is known; read, parse and
        write only what changed."""
        t0 = time.perf_counter()
        stats = RefreshStats(categories=[category])
        if category not in self._known:
            names = None  # nothing known (first check, or the database was rebuilt): check it whole
        known = self._load_known(category)
        checked_ns = time.time_ns()
        try:
            listing = self.store.stat_files(category, names)
        except UnsafePathError as e:  # a category folder leading outside the root: nothing in it is read
            listing = []
            stats.broken.append((os.path.join(self.store.root, category), str(e)))
        changes: list[_Change] = []
        seen: set[str] = set()
        busy = False

        stale: set[str] = set()

        def flush() -> None:
            nonlocal busy
            if changes and not busy:
                try:
                    stale.update(self._write(category, changes, []))
                    changes.clear()
                except _Busy:
                    busy = True  # keep them: served from memory below, written on a later call

        get = known.get
        fast = 0
        for name, st in listing:
            k = get(name)
            if k is not None and st is not None and k.trusted and k.sig == (
                    st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino):
                seen.add(name)
                fast += 1
                if k.broken:
                    stats.broken.append((os.path.join(self.store.root, category, name), k.broken))
                continue
            # the slow path: new, changed or racy
            if st is None or not _regular(st):
                continue  # vanished while we looked, a dangling link, a folder named x.md: not a memory file
            id, path, problem = self.store.check_file(category, name)
            seen.add(name)
            stats.files += 1
            if problem is not None:
                if k is None or k.broken != problem or k.hash is not None:
                    changes.append(_Change(name, _NO_SIG, checked_ns, None, broken=problem))
                stats.broken.append((path, problem))
                continue
            sig = _sig(st)
            try:
                data = self.store.read_bytes(path)
            except MissingMemoryError:
                seen.discard(name)
                stats.files -= 1
                continue
            except BrokenMemoryError as e:
                changes.append(_Change(name, sig, checked_ns, None, broken=e.reason))
                stats.broken.append((path, e.reason))
                stats.indexed += 1
                continue
            h = content_hash(data)
            if k is not None and k.hash == h:
                if k.sig != sig:
                    changes.append(_Change(name, sig, checked_ns, h, restamp=True))
                    stats.restamped += 1
                else:
                    k.stamp(checked_ns)  # racy, re-hashed, same bytes: trusted once old enough
                    stats.unchanged += 1
                if k.broken:
                    stats.broken.append((path, k.broken))
            else:
                try:
                    doc = self.store.parse_bytes(path, data, category, id)
                except BrokenMemoryError as e:
                    changes.append(_Change(name, sig, checked_ns, h, broken=e.reason))
                    stats.broken.append((path, e.reason))
                else:
                    changes.append(_Change(name, sig, checked_ns, h, doc=doc))
                stats.indexed += 1
            if len(changes) >= BATCH:
                flush()
        stats.files += fast
        stats.unchanged += fast
        removed = [name for name in (known if names is None else names) if name in known and name not in seen]
        stats.removed = len(removed)
        if changes or removed or self._pending.get(category):
            try:
                if busy:
                    raise _Busy("busy earlier in this check")
                stale.update(self._write(category, changes, removed))
                self._pending.pop(category, None)
            except _Busy:
                pending = {c.name: c for c in changes if not c.restamp}
                pending.update({n: None for n in removed})
                self._pending[category] = pending
                stats.pending = len(pending)
        if stale and depth < 3:
            # files that changed while we read them: look again now (and on the next check, if still moving)
            again = self._sync(category, stale, depth + 1)
            stats.indexed += again.indexed
            stats.restamped += again.restamped
        elif stale:
            self._mark_dirty(category, stale)
        stats.broken.sort()
        stats.seconds = time.perf_counter() - t0
        return stats

    def _mark_dirty(self, category: str, names: set[str]) -> None:
        current = self._dirty.get(category, set())
        if current is not ALL:
            self._dirty[category] = current | names

    def _write(self, category: str, changes: list[_Change], removed: list[str]) -> set[str]:
        """Apply changes in one transaction; _Busy when the write lock stayed taken.

        Under the write lock each file is stat'ed again, and a change whose file moved on
        since it was read is not written: another process may have indexed a newer state
        meanwhile, and an older observation must never overwrite it. Returns those names
        (to be checked again)."""
        conn = self._db()
        known = self._load_known(category)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if _is_busy(e):
                raise _Busy(str(e)) from None
            raise
        folder = os.path.join(self.store.root, category)
        stale: set[str] = set()
        try:
            for ch in changes:
                if ch.sig is not _NO_SIG and _current_sig(os.path.join(folder, ch.name)) != ch.sig:
                    stale.add(ch.name)
                elif ch.restamp:
                    conn.execute("UPDATE files SET mtime_ns = ?, ctime_ns = ?, size = ?, ino = ?, checked_ns = ? "
                                 "WHERE category = ? AND name = ?", (*ch.sig, ch.checked_ns, category, ch.name))
                else:
                    _remove(conn, category, ch.name)
                    _insert(conn, category, ch)
            for name in removed:
                if _current_sig(os.path.join(folder, name)) is not None:
                    stale.add(name)
                else:
                    _remove(conn, category, name)
            conn.execute("COMMIT")
        except sqlite3.OperationalError as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if _is_busy(e):
                raise _Busy(str(e)) from None
            raise
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for ch in changes:
            if ch.name in stale:
                continue
            k = known.get(ch.name)
            if ch.restamp and k is not None:
                k.sig = ch.sig
                k.stamp(ch.checked_ns)
            else:
                known[ch.name] = _Known(ch.sig, ch.checked_ns, ch.hash, ch.broken)
        for name in removed:
            if name not in stale:
                known.pop(name, None)
        return stale

    def _files_only_stats(self, category: str) -> RefreshStats:
        stats = RefreshStats(categories=[category])
        for _c, _id, path, doc in self.store.scan([category]):
            stats.files += 1
            if isinstance(doc, BrokenMemoryError):
                stats.broken.append((path, doc.reason))
        return stats

    # -- queries ------------------------------------------------------------------------------

    def _query(self, category: str, terms: list[str], ident: str | None, limit: int,
               include_archived: bool) -> list[Candidate]:
        pending = self._pending.get(category)
        if not pending:
            return self._search(self._db(), category, terms, ident, limit, include_archived)
        mem = self._pending_db(category, pending)
        try:
            return self._search(mem, category, terms, ident, limit, include_archived)
        finally:
            mem.close()

    def _search(self, conn: sqlite3.Connection, category: str, terms: list[str], ident: str | None, limit: int,
                include_archived: bool) -> list[Candidate]:
        # one read transaction: every statement sees the same snapshot, even while another process
        # replaces rows between them (a row id found by MATCH must still name its file row)
        conn.execute("BEGIN")
        try:
            return self._search_in(conn, category, terms, ident, limit, include_archived)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    def _search_in(self, conn: sqlite3.Connection, category: str, terms: list[str], ident: str | None, limit: int,
                   include_archived: bool) -> list[Candidate]:
        folder = os.path.join(self.store.root, category)
        rows: dict[int, float] = {}
        same: set[int] = set()
        if ident is not None:
            same = {r[0] for r in conn.execute(
                "SELECT doc FROM files WHERE category = ? AND text_hash = ? AND broken IS NULL", (category, ident))}
        chosen = self._choose_terms(conn, category, terms)
        if chosen:
            extra = 0 if include_archived else conn.execute(
                "SELECT count(*) FROM files WHERE category = ? AND status = 'archived'", (category,)).fetchone()[0]
            fts = _fts(category)
            weights = ", ".join(str(w) for w in WEIGHTS)
            rows = dict(conn.execute(
                f"SELECT rowid, bm25({fts}, {weights}) AS s FROM {fts} WHERE {fts} MATCH ? ORDER BY s LIMIT ?",
                (match_expression(chosen), limit + extra + len(same))).fetchall())
        docs = list(rows) + [d for d in same if d not in rows]
        if not docs:
            return []
        marks = ",".join("?" * len(docs))
        found = []
        for doc, name, id, title, status, h in conn.execute(
                f"SELECT doc, name, id, title, status, hash FROM files WHERE doc IN ({marks})", docs):
            if status != "active" and not include_archived:
                continue
            score = -rows[doc] if doc in rows else 0.0
            found.append(Candidate(id, category, title, score, os.path.join(folder, name), doc in same, status, h or ""))
        found.sort(key=lambda c: (not c.identical, -c.score, c.id))
        return found[:limit]

    @staticmethod
    def _choose_terms(conn: sqlite3.Connection, category: str, terms: list[str]) -> list[str]:
        """The draft's words rare enough in the category to be worth bm25's time, rarest first."""
        if not terms:
            return []
        marks = ",".join("?" * len(terms))
        df = dict(conn.execute(f"SELECT term, df FROM terms WHERE category = ? AND term IN ({marks})",
                               (category, *terms)).fetchall())
        n = conn.execute("SELECT count(*) FROM files WHERE category = ?", (category,)).fetchone()[0]
        ceiling = max(25, COMMON * n)  # a small category costs nothing to search: keep more words
        # words the index has never seen keep their place (a stemmed form may still match)
        ranked = sorted(range(len(terms)), key=lambda i: (df.get(terms[i], 0), i))
        chosen = [terms[i] for i in ranked if df.get(terms[i], 0) <= ceiling][:MAX_TERMS]
        return chosen or [terms[i] for i in ranked[:3]]  # only common words: the three least common

    def _pending_db(self, category: str, pending: dict[str, _Change | None]) -> sqlite3.Connection:
        """The category as it is on disk, when its changes could not be written: indexed rows minus what
        changed, plus the changes, in a private in-memory database."""
        mem = _memory_db()
        try:
            fts = _fts(category)
            rows = self._db().execute(
                f"SELECT f.name, f.mtime_ns, f.ctime_ns, f.size, f.ino, f.checked_ns, f.hash, f.id, d.title, "
                f"d.description, d.tags, d.body, f.status FROM files f JOIN {fts} d ON d.rowid = f.doc "
                f"WHERE f.category = ? AND f.broken IS NULL", (category,)).fetchall()
            mem.execute("BEGIN")
            for name, *sig, checked, h, id, title, desc, tags, body, status in rows:
                if name in pending:
                    continue
                doc = memfile.MemoryDoc(id=id, category=category, title=title, description=desc,
                                        tags=tags.split() if tags else [], created="", updated="", status=status,
                                        body=body)
                _insert(mem, category, _Change(name, tuple(sig), checked, h, doc=doc))
            for ch in pending.values():
                if ch is not None and ch.doc is not None:
                    _insert(mem, category, ch)
            mem.execute("COMMIT")
            return mem
        except BaseException:
            mem.close()
            raise

    def _files_db(self, category: str) -> sqlite3.Connection:
        """The slow way, when the database cannot even be read: the category's files parsed into memory."""
        mem = _memory_db()
        mem.execute("BEGIN")
        for _cat, id, _path, doc in self.store.scan([category]):
            if isinstance(doc, memfile.MemoryDoc):
                _insert(mem, category, _Change(f"{id}.md", _NO_SIG, 0, "", doc=doc))
        mem.execute("COMMIT")
        return mem

    def _get_row(self, category: str, name: str):
        fts = _fts(category)
        return self._db().execute(
            f"SELECT f.id, f.title, f.status, f.hash, d.description, d.tags, d.body FROM files f "
            f"JOIN {fts} d ON d.rowid = f.doc WHERE f.category = ? AND f.name = ? AND f.broken IS NULL",
            (category, name)).fetchone()


def _entry(d: memfile.MemoryDoc, path: str, h: str) -> Entry:
    return Entry(d.id, d.category, d.title, d.description, list(d.tags), d.status, path, h, d.body)


def _current_sig(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _sig(os.stat(path))
    except OSError:
        return None


def _regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)
