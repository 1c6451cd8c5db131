"""The one place that writes files: atomically, so a reader never sees half a file (or, for
logs, appends whole lines).

Kept free of pathlib and tempfile: the hook imports it on every turn.
"""

from __future__ import annotations

import errno
import os
import time

from memcurate.curator.errors import BusyError
from memcurate.curator.util import fastjson
from memcurate.curator.util.private import FILE_MODE, file_mode, is_private, make_dirs
from memcurate.curator.util.safe_open import read_path

TYPE_CHECKING = False
if TYPE_CHECKING:  # threading: imported where a save writes early, not on the hook's path
    import threading

_counter = 0
# A write failing with one of these means no other write will succeed either (full disk, quota,
# read-only file system): a batch stops writing rather than fail on every item.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
_locks: dict = {}  # "append" -> the lock of appends; made on first use (the hook never appends)


def failure(e: Exception) -> str:
    """A failed write for a person: the file and the OS's reason, without the errno number."""
    where, why = getattr(e, "filename", None), getattr(e, "strerror", None)
    return f"{where}: {why}" if where and why else (why or str(e))


def fsync_dir(path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _temp_name(path: str) -> str:
    global _counter
    _counter += 1
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{os.getpid()}.{_counter}.tmp")


def _temp_owner(name: str) -> int | None:
    """The pid in a temp file name of ours (`.<name>.<pid>.<n>.tmp`), None for any other name."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name[1:-4].rsplit(".", 2)
    if len(parts) != 3 or not parts[0] or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    return int(parts[1])


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of our temp files'."""
    return _temp_owner(name) is not None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def sweep_temps(folder, *, grace: float = 5.0, stale: float = 3600.0) -> int:
    """Remove the temp files killed writers left in `folder` (not below it); returns how many.

    One goes when its process is gone and it is older than `grace` seconds (a writer in
    another pid namespace is not mistaken for a dead one mid-write), or when it is older than
    `stale` whoever owns the pid now. Other names are never touched."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    now = time.time()
    for name in names:
        pid = _temp_owner(name)
        if pid is None:
            continue
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            age = now - st.st_mtime
            if age > stale or (age > grace and pid != os.getpid() and not _alive(pid)):
                os.unlink(path)
                removed += 1
        except OSError:
            pass
    return removed


class _Made:
    """A temp file made ahead of its write (`ahead`), its fd open until the write takes it. `data`: the
    bytes it is made to hold early, by `ahead`'s thread, which creates, writes and fsyncs it; the file
    is there (`fd` >= 0) and durable once `syncing` is released, unless that `failed`: then the write
    makes its own temp file."""

    __slots__ = ("tmp", "fd", "mode", "data", "syncing", "failed")

    def __init__(self, tmp: str, fd: int, mode: int | None, data: bytes | None = None) -> None:
        self.tmp, self.fd, self.mode, self.data = tmp, fd, mode, data
        self.syncing: threading.Lock | None = None  # held until it is made, written and fsynced
        self.failed = False

    def discard(self) -> None:
        if self.fd >= 0:  # made (by this process, O_EXCL): ours to remove
            os.close(self.fd)
            _unlink(self.tmp)


# path -> the temp file made by `ahead` for the path's next write
_ahead: dict[str, _Made] = {}


def _new_temp(path: str, mode: int | None, *, make_folder: bool = True) -> tuple[str, int]:
    if make_folder:
        make_dirs(os.path.dirname(path) or ".")
    tmp = _temp_name(path)
    return tmp, _create(tmp, mode)


def _create(tmp: str, mode: int | None) -> int:
    return os.open(
        tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode & 0o600
    )


class ahead:
    """Temp files made before a batch's writes, each taken by the next write of its path (`_temp_file`):
    creating a file in a folder just after an fsync waits for that fsync's journal commit, so a batch
    whose files are all created first pays that wait once, not once a file.

    `data` (path -> the bytes its write is expected to hold): those temp files are created, written and
    fsynced by a thread while the caller goes on (a save's duplicate lookups): the write then finds its
    bytes durable and only renames, so the disk's waits (a file created in a folder, an fsync) overlap
    the work instead of following it. A write of other bytes makes its own temp file. The renames are
    as they were (by the write, a file at a time, each after its bytes are durable). What no write took
    is removed on leaving; a killed process leaves them as it leaves any write's temp file, for
    `sweep_temps`. A path that refuses one (or whose folder is not there yet, or whose early write
    fails) is left to its write, to make the folder or fail there and say why."""

    def __init__(self, paths, data: dict[str, bytes] | None = None) -> None:
        self.paths = [os.fspath(p) for p in paths]
        self.data = data or {}
        self.mine: list[str] = []
        self.done: threading.Lock | None = None

    def __enter__(self) -> ahead:
        early = []
        for path in self.paths:
            if path in _ahead:
                continue
            mode = FILE_MODE if is_private(path) else None
            if path in self.data:
                made = _Made(_temp_name(path), -1, mode, self.data[path])
                early.append(made)
            else:
                try:
                    made = _Made(*_new_temp(path, mode, make_folder=False), mode)
                except OSError:
                    continue
            _ahead[path] = made
            self.mine.append(path)
        if early:
            self.done = _syncer().sync(early)
            for made in early:
                made.syncing = self.done
        return self

    def __exit__(self, *exc) -> None:
        if self.done is not None:
            _wait(self.done)  # no fd of ours is closed while the thread uses it
        for path in self.mine:
            left = _ahead.pop(path, None)
            if left is not None:
                left.discard()


class _Syncer:
    """The thread that makes early writes (`ahead`), one for the process: a thread made a triage cost
    more than its waits saved. A batch's `done` lock is released once its files are made and fsynced."""

    def __init__(self) -> None:
        import queue
        import threading  # not on the hook's path: only a save writes early

        self.lock = threading.Lock
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.pid = os.getpid()
        threading.Thread(target=self._run, name="memcurate-early", daemon=True).start()

    def sync(self, made: list[_Made]) -> threading.Lock:
        done = self.lock()
        done.acquire()
        self.jobs.put((made, done))
        return done

    def _run(self) -> None:
        while True:
            made, done = self.jobs.get()
            try:
                _make_all(made)
            finally:
                done.release()


def _make_all(made: list[_Made]) -> None:
    """Each temp file created and written, then each fsynced: one that fails is `failed` (its write
    makes its own, and says why)."""
    for m in made:
        try:
            m.fd = _create(m.tmp, m.mode)
        except OSError:
            m.failed = True
            continue
        try:
            if m.mode is not None:
                os.fchmod(m.fd, m.mode)
            _write_all(m.fd, m.data or b"")
        except OSError:
            m.failed = True
    for m in made:
        if not m.failed:
            try:
                os.fsync(m.fd)
            except OSError:
                m.failed = True


_syncers: list[_Syncer] = []


def _syncer() -> _Syncer:
    if not _syncers or _syncers[0].pid != os.getpid():  # a forked child has no such thread
        _syncers[:] = [_Syncer()]
    return _syncers[0]


def _wait(done: threading.Lock) -> None:
    done.acquire()
    done.release()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _temp_file(path: str, data: bytes, durable: bool, mode: int | None = None) -> str:
    """A temp file beside `path` holding `data` (fsynced when `durable`); returns its name. Every
    file memcurate writes whole is made here (a test's full disk is made here too). `mode`: its
    permission bits, set before a byte is written (a file holding secrets is never readable by others);
    by default 0600 below the data dir (private.py), else 0644 less the umask."""
    if mode is None and is_private(path):
        mode = FILE_MODE
    made = _ahead.pop(path, None) if _ahead else None
    if made is not None:
        if made.syncing is not None:
            _wait(made.syncing)
        mine = made.mode == mode and not made.failed  # made for this write's mode, and made whole
        if mine and made.data == data:
            os.close(made.fd)  # written early, and durable: only the rename is left
            return made.tmp
        if not mine or made.data is not None:  # another mode, failed, or holding other bytes
            made.discard()
            made = None
    try:
        tmp, fd = (made.tmp, made.fd) if made is not None else _new_temp(path, mode)
    except OSError as e:
        raise _named(e, path) from None
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    except BaseException as e:
        os.close(fd)
        _unlink(tmp)
        if isinstance(e, OSError):
            raise _named(e, path) from None
        raise
    os.close(fd)
    return tmp


def _named(e: OSError, path: str) -> OSError:
    """os.write names no file, and a temp file's name means nothing to a user: name the target."""
    e.filename, e.filename2 = path, None
    return e


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_bytes(
    path, data: bytes, *, durable: bool = True, sync_dir: bool = True, mode: int | None = None
) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename.

    A killed process leaves either the old file or the new one, never a mix.
    `durable` fsyncs the data (and, with `sync_dir`, the folder, so the
    rename itself survives a power cut); `durable=False` suits files that can
    be rebuilt (caches). `mode`: the file's permission bits (default 0600 below the data dir, else 0644 less
    the umask).
    """
    path = os.fspath(path)
    tmp = _temp_file(path, data, durable, mode)
    try:
        os.replace(tmp, path)
    except BaseException as e:
        _unlink(tmp)
        if isinstance(e, OSError):
            raise _named(e, path) from None
        raise
    if durable and sync_dir:
        fsync_dir(os.path.dirname(path) or ".")


def write_new(path, data: bytes, *, durable: bool = True) -> bool:
    """Create `path` holding `data` unless it exists; returns whether this call created it.

    Made whole in a temp file, then linked into place (a link never replaces a file): of two
    writers racing, exactly one creates it, and a writer killed half-way leaves no half file."""
    path = os.fspath(path)
    tmp = _temp_file(path, data, durable)
    try:
        made = _put(tmp, path, -1)
    except BaseException as e:
        _unlink(tmp)
        if isinstance(e, OSError):
            raise _named(e, path) from None
        raise
    if not made:
        _unlink(tmp)
    elif durable:
        fsync_dir(os.path.dirname(path) or ".")
    return made


def write_text(path, text: str, *, durable: bool = True, sync_dir: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable, sync_dir=sync_dir)


def dump_json(obj, *, compact: bool = False) -> bytes:
    if compact:
        return (fastjson.dumps_compact(obj) + "\n").encode("utf-8")
    return (fastjson.dumps_indented(obj) + "\n").encode("utf-8")


def write_json(
    path, obj, *, durable: bool = True, compact: bool = False, sync_dir: bool = True
) -> None:
    write_bytes(path, dump_json(obj, compact=compact), durable=durable, sync_dir=sync_dir)


def append_line(path, line: bytes) -> None:
    """Append one line (ending in a line break) to a log, creating it; no fsync.

    A kill can leave only the last line unfinished. Readers skip what follows the last line
    break; a line left unfinished is closed here first, so it stays one bad line, skipped,
    rather than spoiling this one.
    """
    lock = _locks.get("append")
    if lock is None:
        import threading

        # setdefault: one lock even if two threads race here
        lock = _locks.setdefault("append", threading.Lock())
    with lock:  # one line at a time within a process (drafting threads share a log)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, file_mode(path))
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


class Unsettled(BusyError, OSError):
    """The file kept changing under `replace_if_unchanged`; no other writer's change was overwritten."""


def replace_if_unchanged(path, render, *, tries: int = 20, mode: int | None = None) -> bool:
    """Replace `path` with `render(what it holds)` without losing what other writers write meanwhile.

    `render(base)` gets the file's bytes (None when it does not exist) and returns the new bytes, or
    None to keep `base`. It is called again whenever the file moved under it; its last call says
    what the file holds. Other writers' changes are kept:
    - bytes appended to the file while ours was made go at the end of ours just before the rename
      (if that changes what a render makes of the file, it is rendered again);
    - a file renamed into its place (a new inode): the path is checked to still be the file read,
      a few system calls before our rename; else render again;
    - bytes written into the replaced file after our rename, by a writer that had it open (it is
      no longer linked, so they would be lost): once no writer has it open, it is read again, and
      what it gained is rendered into the next round, in order before anything appended to ours.
    `mode`: the permission bits of the new file (default 0600 below the data dir, else 0644 less the umask).
    Returns whether it wrote. Unsettled after `tries` rounds that each met another change (what a
    replaced file gained is appended in place first: nothing is lost).
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    carry = None  # what the file must keep from a file our last rename replaced
    wrote = False
    for _ in range(tries):
        fd, disk = _open_read(path)
        tmp = None
        try:
            base = carry(disk) if carry else disk
            new = render(base)
            new = base if new is None else new
            if new is None or new == disk:  # None: render kept a file that does not exist
                return wrote
            tmp = _temp_file(path, new, durable=True, mode=mode)
            seen, extra = disk or b"", b""  # (no file: returned before seen is read)
            if fd >= 0 and disk is not None:  # (the one is the other: an open file was read)
                late = _read_fd(fd)
                if not late.startswith(disk):
                    continue  # rewritten in place meanwhile: render again
                seen, extra = late, late[len(disk) :]
                if extra:
                    _append(tmp, extra)  # appended meanwhile: at the end of ours too, not yet shown
            if not _put(tmp, path, fd):
                continue  # another writer's file took the place of the one read: never overwrite it
            tmp, wrote = None, True
            fsync_dir(folder)
            if fd < 0 or base is None:  # (the one is the other: no file, nothing carried)
                return True
            carry = _settle(fd, seen, base + extra, new + extra, render, carry, bool(extra))
            if carry is None:
                return True
        finally:
            if fd >= 0:
                os.close(fd)
            if tmp is not None:
                _unlink(tmp)
    if carry is not None and carry.extra:
        _append(path, carry.extra)  # what a replaced file gained is kept, if out of place
    raise Unsettled(
        f"{path}: another program kept changing it ({tries} tries); nothing of its changes was lost"
    )


def _settle(fd: int, seen: bytes, base: bytes, ours: bytes, render, carry, appended: bool):
    """After our rename of `ours` (rendered from `base`, plus what was `appended` meanwhile) over the
    file open as `fd`, whose bytes were `seen`: once no writer has that file open (where the system
    can tell), what it holds is final. Returns None when the file is settled, else the _Carry of
    the next round."""
    from memcurate.curator.util.locks import wait_for_writers

    wait_for_writers(fd, wait=1.0)
    late = _read_fd(fd)
    if late != seen:  # written into after our rename
        return _Carry(ours, carry(late) if carry else late, base)
    if appended and render(ours) not in (None, ours):  # what was appended changes more than the end
        return _Carry(ours, ours, ours)  # render again from the file as it is
    return None


def _open_read(path: str) -> tuple[int, bytes | None]:
    """The file open for reading and its bytes; (-1, None) when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return -1, None
    try:
        return fd, _read_fd(fd)
    except BaseException:
        os.close(fd)
        raise


def _read_fd(fd: int) -> bytes:
    parts, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _put(tmp: str, path: str, fd: int) -> bool:
    """Rename `tmp` onto `path` if the path still is the file open as `fd` (-1: still no file).
    The check and the rename are as close as the system calls allow."""
    if fd < 0:
        try:
            os.link(tmp, path)  # fails if a file appeared: a new file never replaces one unseen
        except FileExistsError:
            return False
        except OSError:  # no hard links on this file system: check, then rename
            if os.path.lexists(path):
                return False
            os.replace(tmp, path)
            return True
        _unlink(tmp)
        return True
    own = os.fstat(fd)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    if (st.st_ino, st.st_dev) != (own.st_ino, own.st_dev):
        return False
    os.replace(tmp, path)
    return True


class _Carry:
    """What a file our rename replaced gained from writers that had it open, to keep in the versions
    that follow ours: `kept` is that file as they left it (with what was carried before)."""

    def __init__(self, ours: bytes, kept: bytes, base: bytes) -> None:
        self.ours, self.kept = ours, kept
        self.extra = kept[len(base) :] if kept.startswith(base) else None  # what they appended

    def __call__(self, current: bytes | None) -> bytes | None:
        if current is not None and current.startswith(self.ours):
            # ours, perhaps appended to since: theirs first
            return self.kept + current[len(self.ours) :]
        if self.extra is not None:
            # ours was replaced by yet another version: theirs after it
            return (current or b"") + self.extra
        return current  # two other writers each rewrote an older version: the later one wins


def _append(path: str, data: bytes) -> None:
    """Append `data` to `path` in place (O_APPEND: what other appenders write stays)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode(path))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def read_json(path):
    return fastjson.loads(read_path(os.fspath(path)))
