"""An older memcurate's archive moved where Claude Code 2.1's recall does not look (docs/design.md §6).

Claude Code 2.1's recall lists every `.md` of the memory folder to its selector, except in dot folders.
memcurate before it left archived memories in their category folders (`status: archived`) and its
archive in `archive/` (`archive/<category>.md`, Claude's archived topic files in `archive/claude/`): all
offered to the selector. `migrate` moves them into `.archive/` (ARCHIVE_DIR): an archived memory to
`.archive/<category>/<id>.md`, the rest to the same path under `.archive/`.

Run under the memory root's lock (Engine.root_lock, on its first use). Only memcurate's own files move: a
category folder's memory whose front matter says it is archived and names that id and category, the
entry files of known categories and what is under `archive/claude/`; anything else in `archive/` stays.
Each move keeps the bytes and the mtime: the copy is made and fsynced, then the original removed, so a
crash midway leaves the file in both places, never in neither; a copy already there with the same bytes
finishes the move, one with other bytes leaves both as they are (reported). Running it again moves nothing;
once the category folders were looked through with nothing left behind, `.archive/.layout` says so and
later runs cost two stats (reading every memory file costs ~0.25 ms each: 2.5 s at 10,000 memories).
"""

from __future__ import annotations

import os
import stat

from memcurate.curator.categories import CATEGORIES, CLAUDE
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES, MemoryFormatError, light_fields
from memcurate.curator.util.atomic import fsync_dir, write_new
from memcurate.curator.util.paths import ARCHIVE_DIR, LEGACY_ARCHIVE_DIR
from memcurate.curator.util.safe_open import read_at_most

# Left in `.archive/` once the category folders were looked through: later runs skip them (a few stats).
MARKER = ".layout"


def migrate(root) -> tuple[list[str], list[str]]:
    """Move an older layout's archive into `.archive/`: (moved, left), each as paths relative to the root
    (`left`: a file whose place in `.archive/` holds other bytes). Once the category folders were looked
    through (MARKER), nothing to move costs a few stats."""
    root = os.fspath(root)
    moved: list[str] = []
    left: list[str] = []
    legacy = os.path.join(root, LEGACY_ARCHIVE_DIR)
    marker = os.path.join(root, ARCHIVE_DIR, MARKER)
    # this memcurate never archives into a category folder: once is enough
    looked = os.path.exists(marker)
    for category in () if looked else CATEGORIES:
        folder = os.path.join(root, category)
        for name in _files(folder):
            if _archived_memory(os.path.join(folder, name), category, name[:-3]):
                _move(root, f"{category}/{name}", f"{ARCHIVE_DIR}/{category}/{name}", moved, left)
    stayed = bool(left)
    if _is_dir(legacy):
        for category in CATEGORIES:
            if _regular(os.path.join(legacy, f"{category}.md")):
                _move(
                    root,
                    f"{LEGACY_ARCHIVE_DIR}/{category}.md",
                    f"{ARCHIVE_DIR}/{category}.md",
                    moved,
                    left,
                )
        claude = os.path.join(legacy, CLAUDE)
        if _is_dir(claude):
            for folder, dirs, files in os.walk(claude):
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
                for name in files:
                    if name.endswith(".md") and _regular(os.path.join(folder, name)):
                        rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                        _move(root, rel, f"{ARCHIVE_DIR}/{rel.split('/', 1)[1]}", moved, left)
            _prune(claude)
        _prune(legacy)
    if not looked and not stayed and any(os.path.isdir(os.path.join(root, c)) for c in CATEGORIES):
        try:
            write_new(marker, b"archived memories live in .archive/<category>/ (memcurate)\n")
        except OSError:
            pass  # looked through again next time
    return moved, left


def _files(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".md") and not n.startswith("."))
    except OSError:
        return []


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _regular(path: str) -> bool:
    """A plain file (a link is never followed out, nor moved)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _archived_memory(path: str, category: str, id: str) -> bool:
    """Whether the file is memcurate's memory `id` of `category`, marked archived."""
    if not _regular(path):
        return False
    try:
        with open(path, "rb") as f:
            data = read_at_most(f, MAX_FILE_BYTES)
        if b"status: archived" not in data:
            return False  # most files: no parse
        fields, _ = light_fields(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, MemoryFormatError):
        return False
    return (
        len(data) <= MAX_FILE_BYTES
        and fields.get("status") == "archived"
        and fields.get("id") == id
        and fields.get("category") == category
    )


def _move(root: str, src_where: str, dest_where: str, moved: list[str], left: list[str]) -> None:
    src = os.path.join(root, *src_where.split("/"))
    dest = os.path.join(root, *dest_where.split("/"))
    try:
        st = os.lstat(src)
        with open(src, "rb") as f:
            data = f.read()
        # made whole, fsynced and linked into place: never over a file
        if not write_new(dest, data):
            with open(dest, "rb") as f:
                if f.read() != data:
                    left.append(src_where)
                    return
        os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.unlink(src)
        fsync_dir(os.path.dirname(src))
    except OSError:
        left.append(src_where)
        return
    moved.append(src_where)


def _prune(top: str) -> None:
    """Remove the folders under `top` (and `top`) left empty; a folder holding anything stays."""
    for folder, _dirs, _files in os.walk(top, topdown=False):
        try:
            os.rmdir(folder)
        except OSError:
            pass
