"""The library's catalog: every memory of the project as an Entry, and one memory read whole.

memcurate's memories come from the index (one query, however many there are: the index checks its files
first), Claude's topic files too (the index's pseudo-category `claude`), Claude's lines from MEMORY.md
read live (it is small). `entry(ref)` reads the file itself: what a person opens, edits or acts on is
the bytes on disk now, with their hash.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.library.entries import (
    CLAUDE,
    MEMCURATE,
    MEMORY_MD,
    Entry,
    LibraryError,
    Opened,
    file_ref,
    line_hash,
    line_ref,
    parse_ref,
)
from memcurate.curator.memory import claude_topics
from memcurate.curator.util.safe_open import read_at_most
from memcurate.curator.util.stamps import content_hash
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

_ORDER = {c: i for i, c in enumerate([*CATEGORIES, CLAUDE])}


class _MemoryMd:
    """MEMORY.md read once: its text (None when missing), its mtime stamp, its links, why it is unreadable."""

    def __init__(self, root: str) -> None:
        from memcurate.curator.memory.memory_md.claude_lines import links

        self.path = os.path.join(root, MEMORY_MD)
        self.text: str | None = None
        self.stamp = ""
        self.error = ""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
                self.stamp = claude_topics.stamp(os.fstat(f.fileno()).st_mtime_ns)
        except FileNotFoundError:
            data = None
        except OSError as e:
            data, self.error = None, f"cannot be read ({e.strerror or e})"
        if data is not None:
            try:
                self.text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                self.error = f"is not UTF-8 text (byte {e.start})"
        self.links = links(self.text) if self.text else {}

    def lines(self):
        """Claude's lines; MemoryMdError when its sections cannot be read."""
        from memcurate.curator.memory.memory_md.claude_lines import claude_lines

        return claude_lines(self.text) if self.text else []


def _line_entry(md: _MemoryMd, root: str, line) -> Entry:
    where = line.target or MEMORY_MD
    return Entry(
        line_ref(line.text),
        CLAUDE,
        CLAUDE,
        _shown(line.title, 120),
        _shown(line.description, 200),
        where,
        os.path.join(root, *where.split("/")),
        "active",
        md.stamp,
        md.stamp,
        (),
        (),
        line_hash(line.text),
        line.number,
        "",
    )


def _shown(text: str, limit: int) -> str:
    """A line of Claude's is shown as the index keeps text: one safe line, secrets redacted."""
    from memcurate.curator.util.redact import redact_text

    return one_line(redact_text(text), limit)


def _md_broken(md: _MemoryMd, root: str, why: str) -> Entry:
    return Entry(
        file_ref(MEMORY_MD),
        CLAUDE,
        CLAUDE,
        MEMORY_MD,
        "",
        MEMORY_MD,
        md.path,
        "active",
        md.stamp,
        md.stamp,
        (),
        (),
        "",
        1,
        one_line(why),
    )


def entries(engine: Context) -> list[Entry]:
    """Every memory: memcurate's (archived included) by category, Claude's topic files, Claude's lines."""
    from memcurate.curator.memory.memory_md.format import MemoryMdError

    root = engine.root
    md = _MemoryMd(root)
    links = md.links
    out = []
    base = root.rstrip(os.sep) + os.sep
    # 10,000 of them: plain concatenation, text cleaned only when it needs it
    for (
        category,
        name,
        id,
        title,
        description,
        status,
        created,
        updated,
        sources,
        tags,
        h,
        broken,
        mtime_ns,
    ) in engine.index.rows():
        if category == CLAUDE:
            when = claude_topics.stamp(mtime_ns) if mtime_ns else (created or "")
            out.append(
                Entry(
                    file_ref(name),
                    CLAUDE,
                    CLAUDE,
                    title or name,
                    description or "",
                    name,
                    os.path.join(root, *name.split("/")),
                    "active",
                    when,
                    when,
                    (),
                    (),
                    h or "",
                    links.get(name, 0),
                    broken or "",
                )
            )
            continue
        id = id or name.rsplit("/", 1)[-1].removesuffix(".md")
        # an archived one's: .archive/<category>/<id>.md (a plain file name needs no normalising)
        where = (
            f"{category}/{name}"
            if "/" not in name and name not in ("", ".", "..")
            else posixpath.normpath(f"{category}/{name}")
        )
        title = title or id
        description = description or ""
        out.append(
            Entry(
                f"{category}/{id}",
                MEMCURATE,
                category,
                title if title.isprintable() else one_line(title, 120),
                description if description.isprintable() else one_line(description, 200),
                where,
                base + where,
                status or "active",
                created or "",
                updated or "",
                tuple(sources.split()) if sources else (),
                tuple(tags.split()) if tags else (),
                h or "",
                links.get(where, 0) if links else 0,
                broken or "",
            )
        )
    out.sort(key=lambda e: (_ORDER.get(e.category, 99), e.where))
    if md.error:
        out.append(_md_broken(md, root, md.error))
        return out
    try:
        seen = set()
        for line in md.lines():
            entry = _line_entry(md, root, line)
            if entry.ref not in seen:  # identical lines are one entry: the first
                seen.add(entry.ref)
                out.append(entry)
    except MemoryMdError as e:
        out.append(_md_broken(md, root, f"which lines are Claude's is not known: {e}"))
    return out


def claude_lines(root: str) -> list:
    """Claude's lines of MEMORY.md (memory_md.claude_lines.ClaudeLine); none when it cannot be read."""
    from memcurate.curator.memory.memory_md.format import MemoryMdError

    md = _MemoryMd(root)
    try:
        return [] if md.error else md.lines()
    except MemoryMdError:
        return []


def entry(engine: Context, ref: str) -> Opened:
    """The memory `ref` names, read now; LibraryError naming the ref when it names nothing (any more)."""
    try:
        owner, category, rest = parse_ref(ref)
    except ValueError as e:
        raise LibraryError(str(e)) from None
    if owner == MEMCURATE:
        return _memory(engine, ref, category, rest)
    if "#" in rest:
        return _line(engine, ref)
    return _topic(engine, ref, rest)


def line_texts(engine: Context) -> dict[str, str]:
    """Claude's lines of MEMORY.md by ref, MEMORY.md read once ({} when it is missing, unreadable, or which
    lines are Claude's is not known): what `entry` gives of each line, for all of them at once."""
    from memcurate.curator.memory.memory_md.format import MemoryMdError

    md = _MemoryMd(engine.root)
    if md.error:
        return {}
    try:
        return {line_ref(line.text): line.text for line in md.lines()}
    except MemoryMdError:
        return {}


def _read(path: str, ref: str) -> bytes:
    from memcurate.curator.memory.front_matter import MAX_FILE_BYTES

    try:
        with open(path, "rb") as f:
            data = read_at_most(f, MAX_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise LibraryError(f"{ref}: no such memory (any more)") from None
    except OSError as e:
        raise LibraryError(f"{ref}: cannot be read ({e.strerror or e})") from None
    if len(data) > MAX_FILE_BYTES:
        raise LibraryError(f"{ref}: is larger than {MAX_FILE_BYTES} bytes: not a memory file")
    return data


def _memory(engine: Context, ref: str, category: str, id: str) -> Opened:
    from memcurate.curator.memory.store import BrokenMemoryError, UnsafePathError, valid_id
    from memcurate.curator.util.paths import is_inside

    store = engine.store
    where = f"{category}/{id}.md"
    try:
        if valid_id(id):
            path, bad_name = store.locate(category, id), ""
            where = store.relpath(path).replace(os.sep, "/")
        else:  # listed as broken: still readable, so it can be looked at and removed
            path = os.path.join(store.category_dir(category), f"{id}.md")
            bad_name = (
                store.check_file(category, f"{id}.md")[2] or "file name is not a valid memory id"
            )
            if not is_inside(os.path.realpath(path), os.path.realpath(engine.root)):
                raise UnsafePathError(f"{path}: the file is a link leading outside the memory root")
    except UnsafePathError as e:
        raise LibraryError(f"{ref}: {e}") from None
    data = _read(path, ref)
    h = content_hash(data)
    line = _MemoryMd(engine.root).links.get(where, 0)
    try:
        if bad_name:
            raise BrokenMemoryError(path, bad_name)
        doc = store.parse_bytes(path, data, category, id)
    except BrokenMemoryError as e:
        e_text = data.decode("utf-8", errors="replace")
        entry = Entry(
            ref,
            MEMCURATE,
            category,
            id,
            "",
            where,
            path,
            "active",
            "",
            "",
            (),
            (),
            h,
            line,
            one_line(e.reason),
        )
        return Opened(entry, e_text, h)
    from memcurate.curator.memory.index.schema import session_ids

    entry = Entry(
        ref,
        MEMCURATE,
        category,
        one_line(doc.title, 120),
        one_line(doc.description, 200),
        where,
        path,
        doc.status,
        doc.created,
        doc.updated,
        tuple(session_ids(doc.sources)),
        tuple(doc.tags),
        h,
        line,
        "",
    )
    return Opened(entry, data.decode("utf-8"), h)


def _topic(engine: Context, ref: str, where: str) -> Opened:
    root = engine.root
    if where == MEMORY_MD:
        md = _MemoryMd(root)
        if md.text is None and not md.error:
            raise LibraryError(f"{ref}: no such memory (any more)")
        raise LibraryError(
            f"{ref}: MEMORY.md is not one memory: its lines of Claude's are "
            f"claude/MEMORY.md#<hash>" + (f" ({md.error})" if md.error else "")
        )
    path, problem = claude_topics.check_file(root, where)
    if problem:
        raise LibraryError(f"{ref}: {problem}")
    data = _read(path, ref)
    h = content_hash(data)
    md = _MemoryMd(root)
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        raise LibraryError(f"{ref}: no such memory (any more)") from None
    when = claude_topics.stamp(mtime)
    try:
        text = claude_topics.decode(path, data)
    except claude_topics.TopicError as e:
        entry = Entry(
            ref,
            CLAUDE,
            CLAUDE,
            where,
            "",
            where,
            path,
            "active",
            when,
            when,
            (),
            (),
            h,
            md.links.get(where, 0),
            e.reason,
        )
        return Opened(entry, data.decode("utf-8", errors="replace"), h)
    title, description, _type, _body = claude_topics.describe(where, text)
    entry = Entry(
        ref,
        CLAUDE,
        CLAUDE,
        title,
        description,
        where,
        path,
        "active",
        when,
        when,
        (),
        (),
        h,
        md.links.get(where, 0),
        "",
    )
    return Opened(entry, text, h)


def _line(engine: Context, ref: str) -> Opened:
    from memcurate.curator.memory.memory_md.format import MemoryMdError

    md = _MemoryMd(engine.root)
    if md.error:
        raise LibraryError(f"{ref}: MEMORY.md {md.error}")
    try:
        lines = md.lines()
    except MemoryMdError as e:
        raise LibraryError(
            f"{ref}: which lines of MEMORY.md are Claude's is not known: {e}"
        ) from None
    for line in lines:
        if line_ref(line.text) == ref:
            entry = _line_entry(md, engine.root, line)
            return Opened(entry, line.text, entry.hash)
    raise LibraryError(f"{ref}: no such line of Claude's in MEMORY.md (any more)")
