"""Claude Code's own topic files in the memory root: which files they are, and how one reads as a memory.

Claude's topic files are every `*.md` under the memory root, at most DEPTH path parts deep
(`debugging.md`, `notes/api.md`, `a/b/c.md`), except MEMORY.md, memcurate's category folders, an older
memcurate's `archive/`, and any name or folder starting with a dot (memcurate's `.archive/`). Each is named
by `where`, its path relative to the root in posix form. Their front matter, when there is one, is Claude
Code's (`name`, `description`, `metadata.type` or an older `type`), read here without YAML (the index must
not load it): title = name, else the first heading, else the file name; description = description, else
the body's first sentence.

Read-only: nothing here writes a byte of Claude's.
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod

from memcurate.curator.categories import CATEGORIES, CLAUDE
from memcurate.curator.errors import DamagedError
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES
from memcurate.curator.util.paths import ARCHIVE_DIR, LEGACY_ARCHIVE_DIR, is_inside
from memcurate.curator.util.safe_open import read_path
from memcurate.curator.util.stamps import STAMP_FORMAT

DEPTH = 3
MEMORY_MD = "MEMORY.md"
TITLE_MAX = 120
DESCRIPTION_MAX = 200
# memcurate's own: its category folders, its archive (a dot folder; an older memcurate's archive/ until it is
# moved) and MEMORY.md
_SKIP_TOP = frozenset([*CATEGORIES, ARCHIVE_DIR, LEGACY_ARCHIVE_DIR, MEMORY_MD])
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class TopicError(DamagedError):
    """A topic file that cannot be read as text (not UTF-8, too big, a link leading out). `reason` says why."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def is_topic(where: str) -> bool:
    """Whether `where` (posix, relative to the root) names a place a topic file of Claude's may be."""
    parts = where.split("/")
    return (
        where.endswith(".md")
        and 0 < len(parts) <= DEPTH
        and parts[0] not in _SKIP_TOP
        and not any(p in ("", ".", "..") or p.startswith(".") for p in parts)
    )


def stat_files(root: str, names=None) -> list[tuple[str, os.stat_result | None]]:
    """(where, lstat-followed stat or None) of every topic file (or of just `names`), unsorted; folders
    that are links are not entered (a loop, or a folder elsewhere). Like MemoryStore.stat_files: raw and
    fast for the index's freshness check; `check_file` says whether a new one may be read."""
    out: list[tuple[str, os.stat_result | None]] = []
    if names is not None:
        for where in names:
            if is_topic(where):
                try:
                    out.append((where, os.stat(os.path.join(root, where))))
                except OSError:
                    out.append((where, None))
        return out

    def walk(folder: str, prefix: str, depth: int) -> None:
        try:
            it = os.scandir(folder)
        except OSError:
            return
        with it:
            for entry in it:
                name = entry.name
                if name[:1] == "." or (depth == 1 and name in _SKIP_TOP):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < DEPTH:
                            walk(entry.path, f"{prefix}{name}/", depth + 1)
                        continue
                except OSError:
                    continue
                if not name.endswith(".md"):
                    continue
                try:
                    out.append((prefix + name, entry.stat()))
                except OSError:
                    # a dangling link, unreadable: check_file says which
                    out.append((prefix + name, None))

    walk(root, "", 1)
    return out


def list_files(root: str) -> list[tuple[str, str]]:
    """(where, absolute path) of every regular topic file, sorted by where."""
    return sorted(
        (w, os.path.join(root, w))
        for w, st in stat_files(root)
        if st is not None and stat_mod.S_ISREG(st.st_mode)
    )


def check_file(root: str, where: str) -> tuple[str, str | None]:
    """(path, problem) of a topic file; problem None when it may be read."""
    path = os.path.join(root, *where.split("/"))
    if not is_topic(where):
        return path, "is not a topic file of Claude's"
    if os.path.islink(path) and not is_inside(os.path.realpath(path), os.path.realpath(root)):
        return path, "is a link leading outside the memory root"
    return path, None


def read_bytes(path: str) -> bytes:
    try:
        data = read_path(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise TopicError(path, f"cannot be read ({e.strerror or e})") from None
    if len(data) > MAX_FILE_BYTES:
        raise TopicError(path, f"is larger than {MAX_FILE_BYTES} bytes: not a memory file")
    return data


def decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TopicError(path, f"is not UTF-8 text (byte {e.start})") from None


def stamp(mtime_ns: int) -> str:
    import time

    return time.strftime(STAMP_FORMAT, time.gmtime(mtime_ns // 1_000_000_000))


def _unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        try:
            v = json.loads(value)
            return v if isinstance(v, str) else value
        except ValueError:
            return value.strip('"')
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def split(text: str) -> tuple[dict[str, str], str]:
    """(Claude Code's front matter fields, body). No front matter, or one never closed: ({}, the text)."""
    t = text[1:] if text.startswith("\ufeff") else text
    lines = t.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, t
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            fields = {}
            parent = ""
            for line in lines[1:i]:
                key, sep, value = line.partition(":")
                if not sep or not key.strip().isidentifier():
                    continue
                if not line[:1].isspace():
                    fields[key.strip()] = _unquote(value)
                    parent = key.strip()
                elif parent == "metadata" and key.strip() == "type":
                    # Claude Code 2.1's key, read before `type`
                    fields["metadata.type"] = _unquote(value)
            return fields, "\n".join(lines[i + 1 :])
    return {}, t


def _one_line(text: str, limit: int) -> str:
    from memcurate.curator.util.textsafe import one_line

    return one_line(text, limit)


def describe(where: str, text: str) -> tuple[str, str, str, str]:
    """(title, description, type, body) of a topic file's text."""
    fields, body = split(text)
    title = _one_line(fields.get("name", ""), TITLE_MAX)
    prose = []
    for line in body.split("\n"):
        m = _HEADING.match(line.strip())
        if m:
            if not title:
                title = _one_line(m.group(1), TITLE_MAX)
            continue
        if line.strip():
            prose.append(line.strip())
    if not title:
        title = where.rsplit("/", 1)[-1].removesuffix(".md")
    description = _one_line(fields.get("description", ""), DESCRIPTION_MAX)
    if not description and prose:
        para = " ".join(prose[:6]).lstrip("-*> ")
        description = _one_line(_SENTENCE_END.split(para, 1)[0], DESCRIPTION_MAX)
    kind = fields.get("metadata.type") or fields.get("type", "")
    return title, description, _one_line(kind, 40), body.strip("\n")


def document(where: str, text: str, mtime_ns: int):
    """The topic file as a memfile.MemoryDoc of category CLAUDE (id: `where`), for the index."""
    from memcurate.curator.memory.memfile import MemoryDoc

    title, description, kind, body = describe(where, text)
    when = stamp(mtime_ns)
    return MemoryDoc(
        id=where,
        category=CLAUDE,
        title=title,
        description=description,
        tags=[],
        created=when,
        updated=when,
        type=kind,
        body=body,
    )
