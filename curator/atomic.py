"""The one place that writes files: atomically, so a reader never sees half a file (or, for
logs, appends whole lines).

Kept free of pathlib and tempfile: the hook imports it on every turn.
"""

from __future__ import annotations

import errno
import json
import os
import time

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


def write_bytes(path, data: bytes, *, durable: bool = True, sync_dir: bool = True) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename.

    A killed process leaves either the old file or the new one, never a mix.
    `durable` fsyncs the data (and, with `sync_dir`, the folder, so the
    rename itself survives a power cut); `durable=False` suits files that can
    be rebuilt (caches).
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = _temp_name(path)
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException as e:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            # os.write names no file, and the temp file's name means nothing to a user: name the target
            e.filename, e.filename2 = path, None
        raise
    if durable and sync_dir:
        fsync_dir(folder)


def write_text(path, text: str, *, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable)


def dump_json(obj, *, compact: bool = False) -> bytes:
    if compact:
        return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    return (json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def write_json(path, obj, *, durable: bool = True, compact: bool = False, sync_dir: bool = True) -> None:
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

        lock = _locks.setdefault("append", threading.Lock())  # setdefault: one lock even if two threads race here
    with lock:  # one line at a time within a process (drafting threads share a log)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def read_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read())
