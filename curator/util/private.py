"""What memcurate keeps to its owner: everything below the data dir (`<project>/.memcurate/`) is made
readable by its owner alone, files 0600 and folders 0700 whatever the umask. It holds session text,
drafts, a person's edits, logs and the trash: nobody else on the machine reads them.

The one rule, by path (a `.memcurate` folder anywhere above it), so every writer follows it without
being told: atomic.py, the logs, the locks, the index's database. Kept to os and os.path: the hook
imports it on every turn.
"""

from __future__ import annotations

import os

DATA_DIR_NAME = ".memcurate"
FILE_MODE = 0o600
FOLDER_MODE = 0o700
_MARK = os.sep + DATA_DIR_NAME + os.sep
_LOOSE = 0o077  # any permission for the group or others


def is_private(path) -> bool:
    """Whether `path` is the data dir or below it (whatever the name of the project holding it)."""
    return _MARK in os.sep + os.fspath(path) + os.sep


def file_mode(path, public: int = 0o644) -> int:
    """The permission bits a new file at `path` is made with: 0600 below the data dir, else `public`."""
    return FILE_MODE if is_private(path) else public


def make_dirs(path) -> None:
    """Create the folder `path` and its missing parents, as os.makedirs(exist_ok=True) does; those below
    the data dir 0700 (os.makedirs would give the parents 0777 less the umask: 0755)."""
    path = os.fspath(path)
    if not is_private(path):
        os.makedirs(path, exist_ok=True)
        return
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and parent != path:
        make_dirs(parent)
    try:
        os.mkdir(path, FOLDER_MODE)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
        return
    os.chmod(path, FOLDER_MODE)  # a umask that takes the owner's own bits is undone too


def own_file(path) -> None:
    """Create the file `path` empty unless it exists, and make it 0600 if it is not (a link is refused:
    OSError). For files another library creates (SQLite makes its -wal, -shm and -journal files with the
    mode of the database file)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def tighten(folder) -> int:
    """Make every folder below `folder` (itself included) 0700 and every file 0600: a data dir an older
    memcurate made with the umask's modes. Links are never followed (one planted there points anywhere)
    and nothing else is changed. Returns how many modes were changed; best effort, never raises."""
    changed = 0
    todo = [os.fspath(folder)]
    while todo:
        path = todo.pop()
        if os.path.islink(path):
            continue
        if _fix(path, FOLDER_MODE, os.O_DIRECTORY):
            changed += 1
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif (
                    entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mode & _LOOSE
                ):
                    changed += _fix(entry.path, FILE_MODE, 0)
            except OSError:
                pass
    return changed


def _fix(path: str, mode: int, flags: int) -> bool:
    """Set `path`'s mode through a descriptor opened without following a link (no race with a link
    put in its place); whether it changed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | flags)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_mode & 0o777 == mode:
            return False
        os.fchmod(fd, mode)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
