"""Change notification (Linux inotify): which files of a watched category folder changed."""

from __future__ import annotations

import os

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ONLYDIR = 0x4000, 0x8000, 0x01000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_WATCH_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
)
ALL = None  # "every file of the category may have changed"


def _libc(ctypes):
    """The C library's functions: the ones this process has loaded (dlopen(NULL): Python links libc, so
    inotify's functions are there), else by name. ctypes.util.find_library runs `ldconfig -p` in a
    child process (~10 ms, more in a big process), once per index opened."""
    for name in (None, "libc.so.6"):
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            libc.inotify_init1  # noqa: B018 (present, or AttributeError)
            return libc
        except (OSError, AttributeError):
            continue
    import ctypes.util

    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


class Watcher:
    """inotify watches on category folders: which file names changed since the last drain.

    Only on Linux, and only for a long-lived index (see Freshness.watch): a
    one-shot process would pay for loading ctypes and gain nothing.
    """

    def __init__(self) -> None:
        import ctypes
        import struct
        import weakref

        libc = _libc(ctypes)
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
                name = buf[pos + header.size : pos + header.size + length].rstrip(b"\0")
                pos += header.size + length
                if mask & _IN_Q_OVERFLOW:
                    for folder in list(self._wd_of):
                        dirty[folder] = ALL
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
                if (
                    not name.endswith(b".md")
                    or name.startswith(b".")
                    or dirty.get(category, ()) is ALL
                ):
                    continue  # temp files of atomic writes, editors' swap files: not memories
                names = dirty.setdefault(category, set())
                if names is not ALL:  # (always: an ALL category went on above)
                    names.add(os.fsdecode(name))


def inotify_available() -> bool:
    return os.path.isdir("/proc/sys/fs/inotify")
