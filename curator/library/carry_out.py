"""A planned change set carried out (`changes.apply` calls `run` under the memory root's lock).

The order is what keeps every byte somewhere whenever a step fails (a crash, a full disk, a file
someone changed meanwhile): copies first (the trash copy of a file deleted, the archive copy of a
Claude file archived), then the memory files, then MEMORY.md with its archive files (the archive
before MEMORY.md, curator/memory/memory_md's order), then Claude's lines dropped, and the removals
last. Each write is atomic and replaces a file only while it holds the bytes the plan was made
from; a step that finds otherwise stops the run (`ChangeError`, changed), leaving what was done.
"""

from __future__ import annotations

import os

from curator.library.entries import CLAUDE
from curator.library.changes import CHANGED, MEMORY_MD, TRASH_DIR, Applied, ChangeError, Planned, drop_line
from curator.memory import memfile, memory_md
from curator.util.atomic import failure, fsync_dir, replace_if_unchanged, write_bytes, write_new


class _Moved(Exception):
    """A file is no longer the bytes planned against."""


def run(engine, planned: Planned) -> Applied:
    from curator.memory.store import ConflictError, StoreError

    w = planned._work
    done = Applied()
    try:
        for kind, where, path, data, dest in w.copies:
            if kind == "trash":
                done.trash.append(_trash(engine, where, data))
            else:
                _copy(engine, dest, data)
        for step in w.writes:
            _write(engine, step)
        if w.md_changes:
            memory_md.apply(engine.root, engine.cfg, w.md_changes)
        if w.drops:
            _drop_lines(engine, w.drops)
        for where, path, data in w.removals:
            _remove(path, data, where)
    except (_Moved, ConflictError) as e:
        raise ChangeError(f"{e}; stopped there, nothing lost: look at it again", partial=True) from None
    except OSError as e:
        raise ChangeError(f"{failure(e)}; stopped there, nothing lost (copies are made before anything is "
                          "removed): free space, then apply again", partial=True, errno=e.errno) from None
    except (StoreError, memory_md.MemoryMdError) as e:
        raise ChangeError(f"{e}; stopped there, nothing lost", partial=True) from None
    finally:
        _reindex(engine, w)
    done.written = [f["where"] for f in planned.files]
    return done


def _trash(engine, where: str, data: bytes) -> str:
    """A copy of `data` (the file at `where`) in `<data>/trash/<UTC stamp>-<where flattened>`, readable
    by the owner only (it may hold what the person deleted for a reason); returns its path."""
    folder = os.path.join(engine.data, TRASH_DIR)
    stamp = engine.now().replace("-", "").replace(":", "")
    base = os.path.join(folder, f"{stamp}-{where.replace('/', '__')}")
    path, n = base, 1
    while os.path.lexists(path):  # under the root lock: no other memcurate names a trash copy meanwhile
        n += 1
        path = f"{base}.{n}"
    write_bytes(path, data, mode=0o600)
    return path


def _copy(engine, dest: str, data: bytes) -> None:
    path = os.path.join(engine.root, *dest.split("/"))
    if not write_new(path, data) and _read(path) != data:
        raise _Moved(f"{dest}: {CHANGED} (a file appeared there)")
    engine.record_written(path, data.decode("utf-8", "replace"))


def _write(engine, step) -> None:
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


def _drop_lines(engine, drops) -> None:
    """Claude's lines out of MEMORY.md as it is now (what else changed in it meanwhile is kept)."""
    path = memory_md.memory_md_path(engine.root)

    def render(current: bytes | None) -> bytes:
        try:
            text = (current or b"").decode("utf-8")
            for ref, base in drops:
                text = drop_line(text, ref, base)
        except (UnicodeDecodeError, ValueError) as e:
            raise _Moved(f"{MEMORY_MD}: {e}") from None
        return text.encode("utf-8")

    replace_if_unchanged(path, render)


def _remove(path: str, data: bytes, where: str) -> None:
    if _read(path) != data:
        raise _Moved(f"{where}: {CHANGED}; its copy is kept")
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(os.path.dirname(path))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _reindex(engine, w) -> None:
    """The index follows what was written (it is a cache: a failure costs a later refresh, never the change)."""
    import sqlite3

    from curator.memory.store import StoreError

    for category in sorted(w.categories) + ([CLAUDE] if w.claude else []):  # CLAUDE: Claude's topic files
        try:
            engine.index.refresh(category)
        except (sqlite3.Error, OSError, StoreError):
            pass
