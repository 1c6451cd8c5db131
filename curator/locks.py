"""Advisory file locks that die with their holder (fcntl.flock)."""

from __future__ import annotations

import fcntl
import os
import time


class LockBusy(Exception):
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

    def __enter__(self) -> "FileLock":
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
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
                delay = min(delay * 2, 0.1)
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = -1
