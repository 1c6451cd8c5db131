"""A file opened once, and the opened file checked by its descriptor (issue 22).

A path is a name, checked at one moment and opened at another: a symlink swapped in between (or a
FIFO, which blocks whoever opens it) turned the capture hook into a reader of any file, or hung it.
Here the path is opened once, never through a final symlink and never blocking, and what was opened
is checked: a regular file, where the kernel says it is. Transcripts are read this way, and any
small file in the data dir that Claude could have replaced. Stdlib only, and light: the hooks import it.
"""

from __future__ import annotations

import errno
import os
import stat

from memcurate.curator.errors import DamagedError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO


class Refused(DamagedError, OSError):
    """The file was opened, and what was opened is not to be read: not a regular file, or a
    file the caller may not read (the message, `strerror`, says why)."""


# O_NOFOLLOW: a final symlink is refused, not followed; O_NONBLOCK: a FIFO or a device never blocks the open
# (nor a read: only a regular file is read). Platforms without a flag get 0 (and the checks that follow).
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)


def open_regular(path: str, may_read: Callable[[str], str | None] | None = None) -> BinaryIO:
    """`path` opened once for reading, the opened file checked by its descriptor: everything that follows
    reads from it, so the file checked is the file read, whatever the path points to meanwhile.

    A final symlink is refused (ELOOP), a FIFO or device is opened without blocking and refused (Refused);
    `may_read`, when given, is asked about where the opened file really is (symlinks of the folders
    above resolved, by the kernel) and answers why not (Refused), None to read it. Raises OSError."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(errno.EINVAL, "is not a regular file")
        if may_read is not None:
            where = opened_path(fd, path, st)
            why = "changed while it was opened" if where is None else may_read(where)
            if why:
                raise Refused(errno.EACCES, why)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def opened_path(fd: int, path: str, st: os.stat_result) -> str | None:
    """Where the file open on `fd` is, every symlink resolved: the kernel's word (/proc/self/fd) where
    there is one, else `path` resolved, when it is still this very file (device and inode); None when
    that cannot be told (the file was moved or removed since it was opened)."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        where = None
    if where is not None and os.path.isabs(where) and not where.endswith(" (deleted)"):
        return where
    real = os.path.realpath(path)
    try:
        now = os.stat(real)
    except OSError:
        return None
    return real if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) else None


_PAGE = 1 << 16


def read_at_most(f: BinaryIO, limit: int) -> bytes:
    """The file's bytes from where it is, up to `limit` + 1 of them (more than `limit`: too large, for
    the caller to refuse), a page at a time: `read(limit + 1)` allocates that much whatever the file
    holds, which cost several times the reading of a small memory file (a check reads them all)."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        more = f.read(min(_PAGE, limit + 1 - total))
        if not more:
            break
        chunks.append(more)
        total += len(more)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_path(path: str, limit: int | None = None) -> bytes:
    """What `open(path, "rb")` reads (a final symlink followed, as there): the whole file, or with `limit`
    what `read_at_most` returns, in the system calls a read needs: open, read to the end, close. A buffered
    file object also asks for the file's size (twice), whether it is a terminal and where it stands: five
    calls more, for each of the memory files a save reads to check its duplicates. Errors name `path`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks: list[bytes] = []
        total = 0
        while limit is None or total <= limit:
            more = os.read(fd, _PAGE if limit is None else min(_PAGE, limit + 1 - total))
            if not more:
                break
            chunks.append(more)
            total += len(more)
    except OSError as e:
        e.filename = path  # os.read names no file (a folder fails here: IsADirectoryError)
        raise
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_text_path(path: str) -> str:
    """What `open(path, encoding="utf-8").read()` returns (line ends made "\\n", as text mode does), by
    `read_path`. UnicodeDecodeError (a ValueError) for bytes that are not UTF-8."""
    text = read_path(path).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
