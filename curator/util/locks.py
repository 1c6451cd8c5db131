"""Advisory file locks that die with their holder (fcntl.flock)."""

from __future__ import annotations

import fcntl
import os
import time

from memcurate.curator.errors import BusyError
from memcurate.curator.util.private import file_mode, make_dirs


class LockBusy(BusyError):
    """Another process holds the lock."""


class FileLock:
    """An exclusive lock on a file, waiting up to `wait` seconds for it.

    The kernel drops the lock when the holder dies, so a killed process never
    leaves work locked.
    """

    def __init__(self, path, *, wait: float = 0.0) -> None:
        self.path = os.fspath(path)
        self.wait = wait
        self.fd = -1

    def __enter__(self) -> FileLock:
        make_dirs(os.path.dirname(self.path) or ".")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, file_mode(self.path))
        deadline = time.monotonic() + self.wait
        delay = 0.005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockBusy(self.path) from None
                time.sleep(delay)  # flock has no timeout of its own: poll with backoff
                delay = min(delay * 2, 0.02)
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = -1


def wait_for_writers(fd: int, wait: float) -> bool | None:
    """Wait, up to `wait` seconds, until nobody has the file that `fd` (opened read-only) refers to
    open for writing: True then, False after the wait, None where the system cannot tell.

    A read lease (Linux) is granted only when no one has the file open for writing; it is given
    back at once. Only on a file no longer linked (what a rename replaced): nobody can open it
    again, so the lease never needs breaking (a break would signal this process)."""
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None or os.fstat(fd).st_nlink:
        return None
    deadline = time.monotonic() + wait
    delay = 0.0005
    while True:
        try:
            fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)  # a writer is mid-write: it closes in a moment
            delay = min(delay * 2, 0.02)
            continue
        except OSError:
            return None  # not the file's owner, or a file system without leases
        fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
        return True


class SharedLock:
    """A FileLock shared by the threads of one process: one thread holds it at a time and may take it
    again (re-entrant); another thread waits for it, up to its `wait`, then gets LockBusy, exactly as
    another process would.

    A flock belongs to an open file, not to a thread, so the threads of a process share one FileLock
    (a second flock on a new descriptor would wait on the process's own). The thread lock is made
    here rather than at import: the hook imports this module and never needs `threading`."""

    def __init__(self, path) -> None:
        import threading

        self.path = os.fspath(path)
        self._owner = threading.RLock()  # re-entrant in its owner thread; other threads wait on it
        self._ident = threading.get_ident
        self._holder: int | None = None
        self._file: FileLock | None = None
        self._depth = 0  # changed only by the holder

    def acquire(self, wait: float = 0.0) -> None:
        deadline = time.monotonic() + wait
        if not (
            self._owner.acquire(timeout=wait) if wait > 0 else self._owner.acquire(blocking=False)
        ):
            raise LockBusy(self.path)
        try:
            if self._depth == 0:
                self._file = FileLock(
                    self.path, wait=max(0.0, deadline - time.monotonic())
                ).__enter__()
                self._holder = self._ident()
            self._depth += 1
        except BaseException:
            self._owner.release()
            raise

    def release(self) -> None:
        """Release one level; the file lock goes with the last one."""
        if self._holder != self._ident():
            raise RuntimeError(f"{self.path}: released by a thread that does not hold it")
        self._depth -= 1
        if self._depth == 0:
            self._holder = None
            file, self._file = self._file, None
            if file is not None:  # (always: depth 1 took it)
                file.__exit__(None, None, None)
        self._owner.release()

    def held(self, wait: float = 0.0) -> _Held:
        """The lock as a context manager: `with lock.held(wait=5): ...`."""
        return _Held(self, wait)


class _Held:
    def __init__(self, lock: SharedLock, wait: float) -> None:
        self.lock, self.wait = lock, wait

    def __enter__(self) -> SharedLock:
        self.lock.acquire(self.wait)
        return self.lock

    def __exit__(self, *exc) -> None:
        self.lock.release()
