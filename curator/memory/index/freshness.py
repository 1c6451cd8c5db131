"""Freshness: the index made right for a category before it answers for it (the trade-off chosen).

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
- Claude's own topic files (the pseudo-category `claude`, claude_topics.py) are a few files spread over
  the root and its subfolders: never watched, checked whole (a walk that skips the category folders)
  before each lookup that reads them.
- A save run (`MemoryIndex.holding()`: --auto-approve) holds a lookup's few changes in memory
  rather than write each in a transaction of its own (a new file's words rewrite dozens of pages):
  they are written together, `HELD_MAX` of a category at a time, at every other read and when the
  run ends. Meanwhile a lookup searches the indexed rows without them and a private copy of them
  alone (search.py: `with_held`), so what was just saved is found at once. A process killed before
  they are written leaves files the next check indexes: the index is a cache.
- Without inotify (macOS, `watch=False`), every lookup is a full check of
  its category: still exact, but linear in its size: at 10,000 memories the
  median lookup is ~12-20 ms here (the target's edge), and one category of
  10,000 memories would cost ~40 ms. `check_interval` (seconds; default 0)
  lets a caller firing bursts of lookups skip checks made less than that
  long ago, trading freshness for speed.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field

from memcurate.curator.errors import BusyError
from memcurate.curator.memory import claude_topics
from memcurate.curator.memory.index.database import Database, is_busy
from memcurate.curator.memory.index.folders import RACY_NS
from memcurate.curator.memory.index.schema import (
    CLAUDE,
    NO_SIG,
    Change,
    count_rows,
    insert,
    memory_db,
    remove,
    write_counts,
)
from memcurate.curator.memory.index.watcher import ALL, Watcher, inotify_available
from memcurate.curator.memory.store import (
    BrokenMemoryError,
    MemoryStore,
    MissingMemoryError,
    UnsafePathError,
    content_hash,
)
from memcurate.curator.util.paths import ARCHIVE_DIR, ARCHIVED_PREFIX, archived_name

# a watched category is still checked whole this often (events a watch cannot see)
RESCAN_INTERVAL = 60.0
BATCH = 400  # files per write transaction while indexing many
HELD_MAX = 64  # a category's changes a save run holds in memory, then writes in one transaction


@dataclass
class RefreshStats:
    categories: list[str] = field(default_factory=list)
    files: int = 0  # memory files seen
    indexed: int = 0  # read and (re)indexed now: new or changed (broken ones included)
    restamped: int = 0  # signature changed, same bytes: not parsed again
    removed: int = 0  # gone from disk, dropped from the index
    unchanged: int = 0
    # (path, reason): listed, not indexed
    broken: list[tuple[str, str]] = field(default_factory=list)
    pending: int = 0  # changes not written because the database stayed busy (served from memory)
    seconds: float = 0.0

    def add(self, other: RefreshStats) -> None:
        for k in ("files", "indexed", "restamped", "removed", "unchanged", "pending"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.categories += other.categories
        self.broken += other.broken
        self.seconds += other.seconds


class _Busy(BusyError):
    """The database write lock stayed taken past the busy timeout."""


def _signature(st: os.stat_result) -> tuple[int, int, int, int]:
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


class _KnownFiles(dict):
    """A category's `_Known` by file name, with the names of its archived memories (ARCHIVED_PREFIX) and of
    its broken files kept apart as they come and go: a watched check looks at those few each time, without
    a pass over every name (which grows with the store)."""

    def __init__(self, items=()) -> None:
        super().__init__()
        self.archived: set[str] = set()
        self.broken: set[str] = set()
        for name, k in items:
            self[name] = k

    def __setitem__(self, name: str, k: _Known) -> None:
        if name.startswith(ARCHIVED_PREFIX):
            self.archived.add(name)
        if k.broken:
            self.broken.add(name)
        else:
            self.broken.discard(name)
        super().__setitem__(name, k)

    def pop(self, name, *default):
        self.archived.discard(name)
        self.broken.discard(name)
        return super().pop(name, *default)


def _learn(known: dict, ch) -> None:
    """What a change (written or held) tells of its file: a restamp only moves what is known."""
    k = known.get(ch.name)
    if ch.restamp and k is not None:
        k.sig = ch.sig
        k.stamp(ch.checked_ns)
    else:
        known[ch.name] = _Known(ch.sig, ch.checked_ns, ch.hash, ch.broken)


def _current_sig(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _signature(os.stat(path))
    except OSError:
        return None


def _join(folder: str, name: str) -> str:
    """The path of a file the index names: an archived memory's name climbs out of its category folder,
    which need not exist (store.archived_name)."""
    return os.path.normpath(os.path.join(folder, name))


def _regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)


class Freshness:
    """What this process knows of each category's files, and the checks that bring the index in line with them."""

    def __init__(
        self,
        store: MemoryStore,
        db: Database,
        *,
        check_interval: float,
        watch: bool | None,
        rescan_interval: float,
    ) -> None:
        self.store = store
        self.db = db
        self.check_interval = check_interval
        self.rescan_interval = rescan_interval
        # None: watch a category from its second check on, where inotify exists; False: never
        self.watch = inotify_available() if watch is None else watch
        self.watcher: Watcher | None = None
        self._dirty: dict[str, set[str] | None] = {}
        self._scans: dict[str, int] = {}
        self._full_at: dict[str, float] = {}  # category -> when it was last checked whole
        self._known: dict[str, _KnownFiles] = {}
        self._checked_at: dict[str, float] = {}
        self.pending: dict[
            str, dict[str, Change | None]
        ] = {}  # category -> name -> change (None: removed)
        # holding(): a lookup's changes kept here, written together (flush); `known` already has them
        self.holding = 0
        self.held: dict[str, dict[str, Change | None]] = {}
        self._held_dbs: dict[str, sqlite3.Connection] = {}  # category -> a private copy of its held
        # category -> (the database's version then, its file rows): see `rows`
        self._rows: dict[str, tuple[tuple[int, int], int]] = {}
        self._writes = 0  # transactions this process committed (data_version does not count them)
        db.on_reset = self.forget

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None

    def forget(self) -> None:
        """What was known of a database this process no longer holds is void."""
        self._drop_held()
        self._known.clear()
        self._checked_at.clear()
        self.pending.clear()
        self._dirty.clear()
        self._full_at.clear()
        self._rows.clear()

    def refresh(self, categories: list[str]) -> RefreshStats:
        """Bring `categories` in line: each checked whole, unless its watch says which files changed (then only
        those: a save's reindex costs its own files, not a stat of the folder); while the database stays
        locked, list their files from the folders. What a save run holds of them is written with what this
        check finds, in one transaction a category."""
        total = RefreshStats()
        hold = self.holding > 0
        for cat in categories:
            try:
                stats = self._watched_check(cat, hold) or self.full_check(cat, hold)
                self.flush(cat)
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                stats = self._files_only_stats(cat)
            self._checked_at[cat] = time.monotonic()
            total.add(stats)
        return total

    def fresh(self, category: str, *, hold: bool = False) -> None:
        """Make the index right for `category` before reading it (see the module's notes). `hold`: a
        lookup that searches the held changes too (`with_held`) may leave its few changes unwritten while
        a save run holds them; any other reader finds every held change written first."""
        # first: a database replaced by another process resets what we know
        self.db.guarded(self.db.conn)
        hold = hold and self.holding > 0
        if not hold:
            self.flush()
        if self.check_interval > 0:
            last = self._checked_at.get(category)
            if last is not None and time.monotonic() - last < self.check_interval:
                return
        if self._watched_check(category, hold) is None:
            self.full_check(category, hold)
        self._checked_at[category] = time.monotonic()

    def rows(self, category: str) -> int:
        """The index's file rows of `category` (a search weighs its words' counts against them), counted
        again only once the database changed: a commit of another process's (`data_version`) or of ours."""
        # through the kept cursor (Database.rows): a lookup's own cursor per save is a live object more
        version = (self.db.rows("PRAGMA data_version")[0][0], self._writes)
        kept = self._rows.get(category)
        if kept is not None and kept[0] == version:
            return kept[1]
        n = count_rows(self.db.conn(), category)
        self._rows[category] = (version, n)
        return n

    def holds_none(self, category: str) -> bool:
        """After `fresh`: no file of `category` is known, held or waiting to be written, so a lookup
        finds nothing (a category not loaded yet is not known to be empty)."""
        known = self._known.get(category)
        return (
            known is not None
            and not known
            and not self.held.get(category)
            and not self.pending.get(category)
        )

    def flush(self, only: str | None = None) -> None:
        """Write every held change (of category `only`), one transaction a category. One that cannot be written
        now (the write lock stayed busy, the file moved on since it was read) is forgotten and its file
        looked at again by the next check."""
        for category in list(self.held) if only is None else [only]:
            if not self.held.get(category):
                continue
            held = self.held.pop(category)
            self._close_held_db(category)
            changes = [c for c in held.values() if c is not None]
            removed = [n for n, c in held.items() if c is None]
            try:
                stale = self.db.guarded(self._write, category, changes, removed)
            except (_Busy, sqlite3.Error):
                stale = set(held)
            if stale:
                known: dict[str, _Known] = self._known.get(category, {})
                for name in stale:
                    # a removal not written is known again, so that the next check removes it
                    if held.get(name) is None:
                        known[name] = _Known(NO_SIG, 0, None, None)
                    else:
                        known.pop(name, None)
                self._mark_dirty(category, set(stale))

    def _hold(self, category: str, changes: list[Change], removed: list[str]) -> bool:
        """Keep a lookup's changes in memory instead of writing them, as if written (`known` updated);
        False (nothing kept) when they are too many: the caller writes them with those held before."""
        held = self.held.setdefault(category, {})
        if len(held) + len(changes) + len(removed) > HELD_MAX:
            return False
        known = self._load_known(category)
        gone: list[str] = []  # the held copy's changes: texts out, then texts in
        added: list[Change] = []
        for ch in changes:
            before = held.get(ch.name)
            if ch.restamp and before is not None and not before.restamp:
                # the same bytes as the change held: it stays (in the copy too), with the new signature
                ch = Change(ch.name, ch.sig, ch.checked_ns, before.hash, before.doc, before.broken)
                ch._rows = before._rows
            elif not ch.restamp:
                if before is not None:
                    gone.append(ch.name)
                if ch.doc is not None:
                    added.append(ch)
            held[ch.name] = ch
            _learn(known, ch)
        for name in removed:
            if held.get(name) is not None:
                gone.append(name)
            held[name] = None
            known.pop(name, None)
        db = self._held_dbs.get(category)
        if db is not None:
            try:
                if not db.in_transaction:
                    db.execute("BEGIN")  # kept open: see `held_db`
                for name in gone:
                    remove(db, category, name)
                for ch in added:
                    insert(db, category, ch)
            except sqlite3.Error:
                self._close_held_db(category)  # made again from what is held when next searched
        return True

    def _unhold(self, category: str, pending: dict[str, Change | None]) -> None:
        """The database stayed busy: what the run held of the category is served with `pending` (from its
        private copy) and known as not written, so that the next check, a whole one, writes it too."""
        held = self.held.pop(category, {})
        self._close_held_db(category)
        known: dict[str, _Known] = self._known.get(category, {})
        for name, ch in held.items():
            if ch is None:
                known[name] = _Known(NO_SIG, 0, None, None)  # removed: the next check removes it
                pending.setdefault(name, None)
            else:
                known.pop(name, None)
                if not ch.restamp:
                    pending.setdefault(name, ch)

    def held_db(self, category: str) -> sqlite3.Connection:
        """A private in-memory copy of the category's held changes (their texts alone, searched with words
        the index's counts chose: no counts of its own), kept up to date as more are held.

        Its one transaction is never committed (the copy is dropped at `flush`): FTS5 keeps the rows of an
        open transaction in memory and searches them there. A commit at each save would write them as a segment
        and merge it with the others, and the search then read it back: twice the cost, for nothing."""
        db = self._held_dbs.get(category)
        if db is None:
            db = memory_db(category)
            try:
                db.execute("BEGIN")
                for ch in self.held.get(category, {}).values():
                    if ch is not None and ch.doc is not None:
                        insert(db, category, ch)
            except BaseException:
                db.close()
                raise
            self._held_dbs[category] = db
        return db

    def _close_held_db(self, category: str) -> None:
        db = self._held_dbs.pop(category, None)
        if db is not None:
            db.close()

    def _drop_held(self) -> None:
        """Held changes of a database this process no longer holds: forgotten with what it knew, so the
        next check finds their files again."""
        self.held.clear()
        for category in list(self._held_dbs):
            self._close_held_db(category)

    def _watched_check(self, category: str, hold: bool = False) -> RefreshStats | None:
        """The files the watch saw change synced, the rest known unchanged: the category's stats from what is
        known. None when the watch cannot vouch for the category (not watched, a rescan due, changes not
        written yet, a queue overflow): then it must be checked whole."""
        self.db.guarded(self.db.conn)  # a database replaced by another process resets what we know
        w = self.watcher
        if w is not None:
            w.drain(self._dirty)
        full_at = self._full_at.get(category)
        if not (
            w is not None
            and w.watching(category)
            and full_at is not None
            and time.monotonic() - full_at < self.rescan_interval
            and not self.pending.get(category)
            and category in self._known
        ):
            return None
        names = self._dirty.pop(category, set())
        if names is ALL:
            return None
        names = names | self._archived(category)
        stats = (
            self.db.guarded(self._sync, category, names, 0, hold)
            if names
            else RefreshStats(categories=[category])
        )
        if self.pending.get(category):
            return stats  # the database stayed busy: the next check is a whole one
        known = self._known[category]
        folder = os.path.join(self.store.root, category)
        stats.files = len(known)
        stats.unchanged = max(0, len(known) - stats.indexed - stats.restamped)
        stats.broken = sorted((_join(folder, n), known[n].broken) for n in known.broken)
        return stats

    def full_check(self, category: str, hold: bool = False) -> RefreshStats:
        self.db.guarded(self.db.conn)
        self._dirty.pop(category, None)
        self._scans[category] = self._scans.get(category, 0) + 1
        # from the second check on: a long-lived index
        if self.watch and self._scans[category] >= 2 and category != CLAUDE:
            try:
                folder = self.store.category_dir(category)
            except UnsafePathError:
                folder = None  # reported by the check below
            try:
                if self.watcher is None:
                    self.watcher = Watcher()
                if folder is not None:
                    self.watcher.watch(category, folder)
            except (OSError, AttributeError, ImportError):
                self.watch = False  # no inotify here: every check is a stat of the folder
        started = time.monotonic()
        stats = self.db.guarded(self._sync, category, None, 0, hold)
        self._full_at[category] = started
        return stats

    def _load_known(self, category: str) -> _KnownFiles:
        known = self._known.get(category)
        if known is None:
            rows = (
                self.db.conn()
                .execute(
                    "SELECT name, mtime_ns, ctime_ns, size, ino, checked_ns, hash, broken FROM files "
                    "WHERE category = ?",
                    (category,),
                )
                .fetchall()
            )
            known = _KnownFiles(
                (r[0], _Known((r[1], r[2], r[3], r[4]), r[5], r[6], r[7])) for r in rows
            )
            self._known[category] = known
        return known

    def _sync(
        self, category: str, names: set[str] | None = None, depth: int = 0, hold: bool = False
    ) -> RefreshStats:
        """Compare the category folder (or only the files `names`) with what is known; read, parse and
        write only what changed (`hold`: held in memory, while they are few; see `_hold`)."""
        t0 = time.perf_counter()
        stats = RefreshStats(categories=[category])
        if category not in self._known:
            names = None  # nothing known (first check, or the database was rebuilt): check it whole
        known = self._load_known(category)
        checked_ns = time.time_ns()
        try:
            listing = self._stat_files(category, names)
        # a category folder leading outside the root: nothing in it is read
        except UnsafePathError as e:
            listing = []
            stats.broken.append((os.path.join(self.store.root, category), str(e)))
        changes: list[Change] = []
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
            if (
                k is not None
                and st is not None
                and k.trusted
                and k.sig == (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
            ):
                seen.add(name)
                fast += 1
                if k.broken:
                    stats.broken.append(
                        (_join(os.path.join(self.store.root, category), name), k.broken)
                    )
                continue
            # the slow path: new, changed or racy
            if st is None or not _regular(st):
                continue  # vanished while we looked, a dangling link, a folder named x.md: not a memory file
            id, path, problem = self._check_file(category, name)
            seen.add(name)
            stats.files += 1
            if problem is not None:
                if k is None or k.broken != problem or k.hash is not None:
                    changes.append(Change(name, NO_SIG, checked_ns, None, broken=problem))
                stats.broken.append((path, problem))
                continue
            sig = _signature(st)
            try:
                data = self._read_bytes(category, path)
            except (MissingMemoryError, FileNotFoundError):
                seen.discard(name)
                stats.files -= 1
                continue
            except (BrokenMemoryError, claude_topics.TopicError) as e:
                changes.append(Change(name, sig, checked_ns, None, broken=e.reason))
                stats.broken.append((path, e.reason))
                stats.indexed += 1
                continue
            h = content_hash(data)
            if k is not None and k.hash == h:
                if k.sig != sig:
                    changes.append(Change(name, sig, checked_ns, h, restamp=True))
                    stats.restamped += 1
                else:
                    k.stamp(checked_ns)  # racy, re-hashed, same bytes: trusted once old enough
                    if k.trusted:
                        # and so in the index: a row written while racy (every save's is) would
                        # have each later process hash the file again, every file memcurate saved
                        changes.append(Change(name, sig, checked_ns, h, restamp=True))
                    stats.unchanged += 1
                if k.broken:
                    stats.broken.append((path, k.broken))
            else:
                try:
                    doc = self._parse(category, path, data, id, sig)
                except (BrokenMemoryError, claude_topics.TopicError) as e:
                    changes.append(Change(name, sig, checked_ns, h, broken=e.reason))
                    stats.broken.append((path, e.reason))
                else:
                    changes.append(Change(name, sig, checked_ns, h, doc=doc))
                stats.indexed += 1
            if len(changes) >= BATCH:
                flush()
        stats.files += fast
        stats.unchanged += fast
        removed = [
            name
            for name in (known if names is None else names)
            if name in known and name not in seen
        ]
        stats.removed = len(removed)
        if changes or removed or self.pending.get(category):
            try:
                if busy:
                    raise _Busy("busy earlier in this check")
                if not (
                    hold
                    and not self.pending.get(category)
                    and self._hold(category, changes, removed)
                ):
                    self.flush(category)  # too many to hold: those held before go first
                    stale.update(self._write(category, changes, removed))
                self.pending.pop(category, None)
            except _Busy:
                pending: dict[str, Change | None] = {c.name: c for c in changes if not c.restamp}
                pending.update({n: None for n in removed})
                self._unhold(category, pending)
                self.pending[category] = pending
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

    def _archived(self, category: str) -> set[str]:
        """The index names of the category's archived memories, known or in its archive folder: the watch is
        on the category folder alone, so these few (a delete's) are checked each time."""
        prefix = archived_name(category, "")
        files = self._known.get(category)
        known = {n for n in files.archived if n.startswith(prefix)} if files is not None else set()
        try:
            listed = os.listdir(os.path.join(self.store.root, ARCHIVE_DIR, category))
        except OSError:
            listed = []
        return known | {prefix + n for n in listed if n.endswith(".md") and not n.startswith(".")}

    def _mark_dirty(self, category: str, names: set[str]) -> None:
        current = self._dirty.get(category, set())
        if current is not ALL:
            self._dirty[category] = current | names

    def _write(self, category: str, changes: list[Change], removed: list[str]) -> set[str]:
        """Apply changes in one transaction; _Busy when the write lock stayed taken.

        Under the write lock each file is stat'ed again, and a change whose file moved on
        since it was read is not written: another process may have indexed a newer state
        meanwhile, and an older observation must never overwrite it. Returns those names
        (to be checked again)."""
        conn = self.db.conn()
        known = self._load_known(category)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if is_busy(e):
                raise _Busy(str(e)) from None
            raise
        folder = self.folder(category)
        stale: set[str] = set()
        tally: Counter[str] = Counter()  # the word counts' changes, written once for all the files
        try:
            for ch in changes:
                if ch.sig is not NO_SIG and _current_sig(_join(folder, ch.name)) != ch.sig:
                    stale.add(ch.name)
                elif ch.restamp:
                    conn.execute(
                        "UPDATE files SET mtime_ns = ?, ctime_ns = ?, size = ?, ino = ?, checked_ns = ? "
                        "WHERE category = ? AND name = ?",
                        (*ch.sig, ch.checked_ns, category, ch.name),
                    )
                else:
                    remove(conn, category, ch.name, tally=tally)
                    insert(conn, category, ch, tally=tally)
            for name in removed:
                if _current_sig(_join(folder, name)) is not None:
                    stale.add(name)
                else:
                    remove(conn, category, name, tally=tally)
            write_counts(conn, category, tally)
            self._writes += 1  # before it commits: a failed COMMIT may have written
            conn.execute("COMMIT")
        except sqlite3.OperationalError as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if is_busy(e):
                raise _Busy(str(e)) from None
            raise
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for ch in changes:
            if ch.name not in stale:
                _learn(known, ch)
        for name in removed:
            if name not in stale:
                known.pop(name, None)
        return stale

    # -- where a category's files are: a memcurate category folder, or Claude's topic files ---------

    def folder(self, category: str) -> str:
        """What the category's file names are relative to."""
        return self.store.root if category == CLAUDE else os.path.join(self.store.root, category)

    def _stat_files(self, category: str, names):
        if category == CLAUDE:
            return claude_topics.stat_files(self.store.root, names)
        return self.store.stat_files(category, names)

    def _check_file(self, category: str, name: str) -> tuple[str, str, str | None]:
        if category == CLAUDE:
            return (name, *claude_topics.check_file(self.store.root, name))
        return self.store.check_file(category, name)

    def _read_bytes(self, category: str, path: str) -> bytes:
        return claude_topics.read_bytes(path) if category == CLAUDE else self.store.read_bytes(path)

    def _parse(self, category: str, path: str, data: bytes, id: str, sig):
        if category == CLAUDE:
            return claude_topics.document(id, claude_topics.decode(path, data), sig[0])
        return self.store.parse_bytes(path, data, category, id)

    def _files_only_stats(self, category: str) -> RefreshStats:
        stats = RefreshStats(categories=[category])
        if category == CLAUDE:
            stats.files = len(claude_topics.list_files(self.store.root))
            return stats
        for _c, _id, path, doc in self.store.scan([category]):
            stats.files += 1
            if isinstance(doc, BrokenMemoryError):
                stats.broken.append((path, doc.reason))
        return stats
