"""A planned change set carried out (`changes.apply` calls `run` under the memory root's lock).

The order is what keeps every byte somewhere whenever a step fails (a crash, a full disk, a file
someone changed meanwhile): copies first (the trash copy of a file deleted, the archive copy of a
Claude file archived), then the memory files, then MEMORY.md with its archive files (the archive
before MEMORY.md, curator/memory/memory_md's order; MEMORY.md in one write, Claude's lines dropped or
redacted in it too), and the removals last. Each write is atomic and replaces a file only while it
holds the bytes the plan was made from; a removal first moves the file aside, so that what Claude Code
writes meanwhile (it takes no lock of memcurate's) is never the file unlinked. A step that finds a
file changed stops the run (`Stopped`; changes.apply says ChangeError), leaving what was done.
Also the file fact planning shares: a file's bytes.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from memcurate.curator.errors import Refusal, StaleError
from memcurate.curator.library.entries import CLAUDE
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util.atomic import (
    failure,
    fsync_dir,
    is_temp_name,
    replace_if_unchanged,
    write_bytes,
    write_new,
)

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

TRASH_DIR = "trash"  # in the data dir: a copy of every file memcurate removes, redacted, kept library.trash_days
DAY = 86400.0
CHANGED = "changed since it was read"


class Stopped(Refusal):
    """A step failed: the run stopped there (what was done stays, and nothing is lost). `errno`: the OS's."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        self.errno = errno
        super().__init__(message)


class _Moved(StaleError):
    """A file is no longer the bytes planned against."""


def run(engine: Context, w) -> list[str]:
    """Carry out the steps of a plan (changes._Work); returns the trash copies made. Stopped when a step fails."""
    from memcurate.curator.memory.store import ConflictError, StoreError

    trash: list[str] = []
    if any(c[0] == "trash" for c in w.copies):
        # before this run's copies: none of them goes before the file it keeps is removed
        forget_trash(engine)
    try:
        for kind, where, _path, data, dest in w.copies:
            if kind == "trash":
                trash.append(_trash(engine, where, data))
            else:
                _copy(engine, dest, data)
        for step in w.writes:
            _write(engine, step)
        if w.md_changes:
            memory_md.apply(engine.root, engine.cfg, w.md_changes)
        for where, path, data in w.removals:
            _remove(path, data, where)
    except (_Moved, ConflictError) as e:
        raise Stopped(f"{e}; stopped there, nothing lost: look at it again") from None
    except OSError as e:
        raise Stopped(
            f"{failure(e)}; stopped there, nothing lost (copies are made before anything is "
            "removed): free space, then apply again",
            e.errno,
        ) from None
    # MemoryMdError is a ValueError, and so is a folder where a file was
    except (
        StoreError,
        ValueError,
    ) as e:
        raise Stopped(f"{e}; stopped there, nothing lost") from None
    finally:
        _reindex(engine, w)
    return trash


def _trash(engine: Context, where: str, data: bytes) -> str:
    """A copy of `data` (the file at `where`) in `<data>/trash/<UTC stamp>-<where flattened>`, readable
    by the owner only, with every secret redacted: the trash is there to undo a deletion, and a secret is
    not worth keeping (the person may have deleted the memory for it; it is to be revoked, not restored).
    Returns its path."""
    data = _redacted(data)
    folder = os.path.join(engine.data, TRASH_DIR)
    stamp = engine.now().replace("-", "").replace(":", "")
    base = os.path.join(folder, f"{stamp}-{where.replace('/', '__')}")
    path, n = base, 1
    # under the root lock: no other memcurate names a trash copy meanwhile
    while os.path.lexists(path):
        n += 1
        path = f"{base}.{n}"
    write_bytes(path, data, mode=0o600)
    return path


def _redacted(data: bytes) -> bytes:
    """`data` with every secret redacted; bytes that are not UTF-8 are kept as they are."""
    from memcurate.curator.util.redact import redact_text

    return redact_text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def forget_trash(engine: Context, now: float | None = None) -> int:
    """Remove the trash copies older than `library.trash_days` days (0: every copy made before now), by
    their mtime; returns how many went. Called before a change set puts a copy in the trash, and by
    `memcurate check`. Only files (and links, never followed) directly in the trash are removed. A copy
    kept that holds a secret (an older memcurate's, kept whole) is redacted in place, its age kept."""
    days = engine.settings.library.trash_days
    folder = os.path.join(engine.data, TRASH_DIR)
    cutoff = (time.time() if now is None else now) - days * DAY
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            if st.st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
            elif entry.is_file(follow_symlinks=False) and not is_temp_name(entry.name):
                _redact_kept(entry.path, st)
        except OSError:
            pass
    return removed


def _redact_kept(path: str, st: os.stat_result) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    clean = _redacted(data)
    if clean != data:
        write_bytes(path, clean, mode=0o600)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _copy(engine: Context, dest: str, data: bytes) -> None:
    path = os.path.join(engine.root, *dest.split("/"))
    if not write_new(path, data) and read_bytes(path) != data:
        raise _Moved(f"{dest}: {CHANGED} (a file appeared there)")
    engine.record_written(path, data.decode("utf-8", "replace"))


def _write(engine: Context, step) -> None:
    if step[0] == "memory":
        _, where, doc, base, source = step
        text = memfile.render(doc)
        if base is None:
            path = engine.store.create(doc, parsed_from=source)
        else:
            path = engine.store.update(doc, base, parsed_from=source)
        engine.record_written(path, text)
        return
    _, where, path, before, after = step

    def render(current: bytes | None) -> bytes:
        if current != before:
            raise _Moved(f"{where}: {CHANGED}")
        return after

    replace_if_unchanged(path, render)
    engine.record_written(path, after.decode("utf-8", "replace"))


def _remove(path: str, data: bytes, where: str) -> None:
    """Remove the file at `path` if it holds `data`. Claude Code writes its files without memcurate's lock,
    so the file is first renamed aside (atomic: from then on a write of Claude's makes a new file at
    `path`, which stays), then compared; one that is not the bytes planned against is put back and the
    step fails ("changed since"; the trash copy stays too)."""
    aside = os.path.join(
        os.path.dirname(path), f".{os.path.basename(path)}.memcurate-removing-{os.getpid()}"
    )
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if read_bytes(aside) != data:
        try:
            os.link(aside, path)  # back where it was, unless a newer file took its name meanwhile
        except FileExistsError:
            raise _Moved(
                f"{where}: {CHANGED}, and written again since: the version before is kept at "
                f"{aside}"
            ) from None
        os.unlink(aside)
        fsync_dir(os.path.dirname(path))
        raise _Moved(f"{where}: {CHANGED}; its copy is kept")
    os.unlink(aside)
    fsync_dir(os.path.dirname(path))


def read_bytes(path: str) -> bytes | None:
    """A file's bytes, None when there is none; ValueError for a folder in its place."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, not a memory file") from None


def _reindex(engine: Context, w) -> None:
    """The index follows what was written (it is a cache: a failure costs a later refresh, never the change)."""
    import sqlite3

    from memcurate.curator.memory.store import StoreError

    # CLAUDE: Claude's topic files
    for category in sorted(w.categories) + ([CLAUDE] if w.claude else []):
        try:
            engine.index.refresh(category)
        except (sqlite3.Error, OSError, StoreError):
            pass
