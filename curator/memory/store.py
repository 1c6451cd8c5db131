"""The memory files under the memory root (docs/design.md §4, §6, §8): `<root>/<category>/<id>.md`.

Reading, creating, updating and retiring memory files, and nothing else:

- every path comes from `path_for`, which accepts only a known category and
  an id in memfile's slug form, and checks (through `os.path.realpath`) that
  the file lands inside the root, so a hostile id or a symlinked category
  folder cannot lead a write elsewhere (`UnsafePathError`);
- every write is a whole document validated by `memfile.problems` first
  (`InvalidMemoryError`) and written atomically by `curator.util.atomic`;
- concurrency is optimistic: `read` returns the file's hash, `update` and
  `retire` take it back as `base_hash` and fail with `ConflictError` when the
  file changed since (a hand edit, another process), vanished or broke;
- a file whose front matter cannot be parsed is a `BrokenMemoryError`: it is
  reported, never overwritten.

Callers hold `lock()` across a save and the MEMORY.md update that follows:

    store = MemoryStore(root)
    doc, h = store.read("decision", "use-jwt")      # ... the person reviews ...
    with store.lock(wait=5):
        store.update(merged, h)                     # ConflictError if the file changed
        ...update MEMORY.md...

The store never takes the lock itself: a flock is per open file, so taking it
again inside the caller's `with` would wait on itself. The hash of what a write
left on disk is `content_hash(memfile.render(doc))`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import replace

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.errors import DamagedError, Refusal, StaleError
from memcurate.curator.memory import memfile
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES
from memcurate.curator.util.atomic import fsync_dir, write_text
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.paths import ARCHIVE_DIR, ARCHIVED_PREFIX, ROOT_LOCK_NAME, archived_name
from memcurate.curator.util.safe_open import read_path
from memcurate.curator.util.stamps import content_hash, now_iso


class StoreError(Refusal):
    """Something the memory store refuses to do. The message says what and where."""


class UnsafePathError(StoreError, ValueError):
    """A category or id that would not name a memory file inside the memory root."""


class InvalidMemoryError(StoreError, ValueError):
    """A document that `memfile.problems` rejects: nothing invalid is ever written."""

    def __init__(self, path: str, problems: list[tuple[str, str]]) -> None:
        self.path = path
        self.problems = problems
        listed = "; ".join(f"{where}: {what}" for where, what in problems)
        super().__init__(f"{path}: invalid memory: {listed}")


class BrokenMemoryError(StoreError, DamagedError):
    """A memory file that cannot be read as a memory (broken front matter, not UTF-8, wrong id...).

    `hash` is the hash of its bytes when they could be read (None otherwise).
    """

    def __init__(self, path: str, reason: str, hash: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.hash = hash
        super().__init__(f"{path}: {reason}")


class MissingMemoryError(StoreError, FileNotFoundError):
    """No memory file at that path."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path}: no such memory")

    def __str__(self) -> str:  # FileNotFoundError would print "[Errno None] ..."
        return f"{self.path}: no such memory"


class ConflictError(StoreError, StaleError):
    """The file is not the version the change was based on (changed, missing, broken, or exists)."""

    def __init__(self, path: str, reason: str, current_hash: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.current_hash = current_hash
        super().__init__(f"{path}: conflict: {reason}")


class DeleteNotAllowedError(StoreError):
    """Retiring a memory of a category that is never deleted (docs/design.md §5)."""


def valid_id(id) -> bool:
    """memfile's slug rule: lowercase words of [a-z0-9] joined by '-', at most memfile.ID_MAX characters."""
    return (
        isinstance(id, str)
        and 0 < len(id) <= memfile.ID_MAX
        and memfile._SLUG.fullmatch(id) is not None
    )


def _known(category) -> None:
    """UnsafePathError for a category that is not one of memcurate's."""
    if not isinstance(category, str) or category not in CATEGORIES:
        raise UnsafePathError(
            f"unknown memory category {category!r:.100}: expected one of {', '.join(CATEGORIES)}"
        )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class MemoryStore:
    """The memory files of one memory root."""

    def __init__(self, root) -> None:
        root = os.fspath(root)
        if not root or "\x00" in root:
            raise UnsafePathError(f"invalid memory root {root!r}")
        self.root = os.path.abspath(root)
        self._real: str | None = None

    def __repr__(self) -> str:
        return f"MemoryStore({self.root!r})"

    # -- paths ---------------------------------------------------------------------

    def lock(self, wait: float = 10.0) -> FileLock:
        """The one lock of this memory root (`<root>/.memcurate.lock`); use it as a context manager."""
        return FileLock(os.path.join(self.root, ROOT_LOCK_NAME), wait=wait)

    def _real_root(self, fresh: bool = False) -> str:
        """The root with its links resolved: once (a save checks a dozen paths against it), again before
        a path is refused by it."""
        if fresh or self._real is None:
            self._real = os.path.realpath(self.root)
        return self._real

    def _outside(self, *parts: str) -> str | None:
        """Where `<root>/<parts...>` really leads when that is outside the root, else None.

        Resolved from the root's resolved path, one lstat a part (a link among them resolved whole):
        `realpath` of the full path would lstat every folder above the root again, for each of the
        dozen paths a save checks. Refused only after `realpath` from scratch agrees."""
        return self._walk(*parts)[0]

    def _walk(self, *parts: str) -> tuple[str | None, bool]:
        """(`_outside(*parts)`, whether anything is at the path): the walk's last lstat tells the second,
        which `locate` asked again."""
        parts = tuple(q for p in parts for q in p.split(os.sep) if q)
        real, there = self._real_root(), True
        for i, part in enumerate(parts):
            path = os.path.join(real, part)
            try:
                link = stat.S_ISLNK(os.lstat(path).st_mode)
            except OSError:
                real = os.path.join(real, *parts[i:])  # nothing there: nothing leads elsewhere
                there = False
                break
            real = os.path.realpath(path) if link else path
        if _inside(real, self._real_root()):
            return None, there
        real = os.path.realpath(os.path.join(self.root, *parts))
        return (None if _inside(real, self._real_root(fresh=True)) else real), there

    def category_dir(self, category: str) -> str:
        """`<root>/<category>`; UnsafePathError for an unknown category or one whose folder leads outside."""
        _known(category)
        folder = os.path.join(self.root, category)
        real = self._outside(category)
        if real is not None:
            raise UnsafePathError(
                f"{folder}: the category folder leads outside the memory root ({real})"
            )
        return folder

    def archived_dir(self, category: str) -> str:
        """`<root>/.archive/<category>`, where archived memories are kept out of Claude Code's recall."""
        _known(category)
        folder = os.path.join(self.root, ARCHIVE_DIR, category)
        real = self._outside(ARCHIVE_DIR, category)
        if real is not None:
            raise UnsafePathError(
                f"{folder}: the archive folder leads outside the memory root ({real})"
            )
        return folder

    def path_for(self, category: str, id: str, *, archived: bool = False) -> str:
        """The file of memory `id` in `category` (`archived`: in its archive folder), checked to lie inside
        the root."""
        return self._placed(category, id, archived)[0]

    def _placed(self, category: str, id: str, archived: bool = False) -> tuple[str, bool]:
        """(`path_for`, whether anything is at it): one walk answers both."""
        _known(category)
        folder = self.archived_dir if archived else self.category_dir
        if not valid_id(id):
            folder(category)  # a folder leading out is said first
            raise UnsafePathError(
                f"invalid memory id {id!r:.100}: expected lowercase words of a-z and 0-9 "
                f"joined by '-', at most {memfile.ID_MAX} characters"
            )
        where = (ARCHIVE_DIR, category) if archived else (category,)
        path = os.path.join(self.root, *where, f"{id}.md")
        # one walk checks the folder and the file: the folder again (to name it) only when it leads out
        real, there = self._walk(*where, f"{id}.md")
        if real is not None:
            folder(category)
            raise UnsafePathError(
                f"{path}: the file is a link leading outside the memory root ({real})"
            )
        return path, there

    def home(self, doc: memfile.MemoryDoc) -> str:
        """Where a document belongs: an archived one in `.archive/<category>/`, any other in `<category>/`."""
        return self.path_for(doc.category, doc.id, archived=doc.status == "archived")

    def locate(self, category: str, id: str) -> str:
        """The file memory `id` is in: its category folder's, else its archive folder's, else (none
        exists) the category folder's path."""
        path, there = self._placed(category, id)
        if not there:
            archived, there = self._placed(category, id, archived=True)
            if there:
                return archived
        return path

    def may_exist(self, category: str, id: str) -> bool:
        """False when nothing is at either path of memory `id` (its category folder's, its archive
        folder's), whatever leads there: `locate` would find no file, and its checked walks are spared (a
        draft's own id, looked for on every save, is new). True for anything `path_for` must judge."""
        if category not in CATEGORIES or not valid_id(id):
            return True
        name = f"{id}.md"
        return os.path.lexists(os.path.join(self.root, category, name)) or os.path.lexists(
            os.path.join(self.root, ARCHIVE_DIR, category, name)
        )

    def relpath(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    # -- reading -------------------------------------------------------------------

    def read(self, category: str, id: str) -> tuple[memfile.MemoryDoc, str]:
        """(document, hash of the file's bytes). MissingMemoryError, BrokenMemoryError, UnsafePathError."""
        return self.load(self.locate(category, id), category, id)

    def load(self, path: str, category: str, id: str) -> tuple[memfile.MemoryDoc, str]:
        """Read and check the file at `path`, which must hold memory `id` of `category`."""
        data = self.read_bytes(path)
        return self.parse_bytes(path, data, category, id), content_hash(data)

    def read_bytes(self, path: str) -> bytes:
        try:
            data = read_path(path, MAX_FILE_BYTES)
        except FileNotFoundError:
            raise MissingMemoryError(path) from None
        except IsADirectoryError:
            raise BrokenMemoryError(path, "is a folder, not a memory file") from None
        except OSError as e:
            raise BrokenMemoryError(path, f"cannot be read ({e.strerror or e})") from None
        if len(data) > MAX_FILE_BYTES:
            raise BrokenMemoryError(
                path, f"is larger than {MAX_FILE_BYTES} bytes: not a memory file"
            )
        return data

    @staticmethod
    def parse_bytes(path: str, data: bytes, category: str, id: str) -> memfile.MemoryDoc:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BrokenMemoryError(
                path, f"is not UTF-8 text (byte {e.start})", content_hash(data)
            ) from None
        try:
            doc = memfile.parse(text)
        except memfile.MemoryFormatError as e:
            raise BrokenMemoryError(path, str(e), content_hash(data)) from None
        if doc.id != id:
            raise BrokenMemoryError(
                path,
                f"front matter: id {doc.id!r:.100} does not match the file name {id}.md",
                content_hash(data),
            )
        if doc.category != category:
            raise BrokenMemoryError(
                path,
                f"front matter: category {doc.category!r:.60} does not match the "
                f"folder {category}/",
                content_hash(data),
            )
        return doc

    def exists(self, category: str, id: str) -> bool:
        return os.path.lexists(self.locate(category, id))

    # -- writing -------------------------------------------------------------------

    def rendered(self, doc: memfile.MemoryDoc) -> tuple[str, str]:
        """(where `doc` belongs, the text written there), not checked yet: `create` and `update` take it
        from a caller that needed both first (a save compares the file with the text), and check it."""
        return self.home(doc), memfile.render(doc)

    def _checked(
        self,
        doc: memfile.MemoryDoc,
        parsed_from: str | None = None,
        rendered: tuple[str, str] | None = None,
    ) -> tuple[str, str]:
        """(path, text) of a valid document; UnsafePathError / InvalidMemoryError otherwise.

        `parsed_from` is the text `doc` was parsed from, when the caller has it; `rendered`, what
        `rendered(doc)` gave it (not made twice: a render and a path walk)."""
        path, text = rendered or self.rendered(doc)
        found = memfile.problems(doc, file_name=os.path.basename(path))
        if not found and text != parsed_from:
            # what is written must read back as a valid memory at the same place
            # (a defence against a renderer bug letting a value break the front matter);
            # text parsed into `doc` already reads back as `doc`
            try:
                back = memfile.parse(text)
            except memfile.MemoryFormatError as e:
                found = [("front matter", f"does not read back: {e}")]
            else:
                if (back.id, back.category) != (doc.id, doc.category):
                    found = [("front matter", "does not read back with the same id and category")]
                else:
                    found = memfile.problems(back, file_name=os.path.basename(path))
        if found:
            raise InvalidMemoryError(path, found)
        return path, text

    def create(
        self,
        doc: memfile.MemoryDoc,
        *,
        parsed_from: str | None = None,
        sync_dir: bool = True,
        rendered: tuple[str, str] | None = None,
    ) -> str:
        """Write a new memory file; ConflictError when one exists at its path. Returns the path.
        `sync_dir` False: its folder is not fsynced (the caller does, once for many files, before
        anything names the file). `rendered`: as for `_checked`."""
        path, text = self._checked(doc, parsed_from, rendered)
        # the id taken in either of its folders (the category's, the archive's): `path` is one of them
        if os.path.lexists(path) or os.path.lexists(
            self.path_for(doc.category, doc.id, archived=doc.status != "archived")
        ):
            raise ConflictError(path, "a memory with this id already exists")
        write_text(path, text, sync_dir=sync_dir)
        return path

    def update(
        self,
        doc: memfile.MemoryDoc,
        base_hash: str,
        *,
        parsed_from: str | None = None,
        sync_dir: bool = True,
        rendered: tuple[str, str] | None = None,
    ) -> str:
        """Replace the memory file with `doc` if it is still the version hashed `base_hash`.

        ConflictError when the file changed since, is missing, or is broken. Nothing is written when the
        file already holds `doc`. Returns the path. `sync_dir`, `rendered`: as for `create` (a file
        moved to or from the archive has its folder fsynced whatever `sync_dir` says).
        """
        path, text = self._checked(doc, parsed_from, rendered)
        old = self.locate(doc.category, doc.id)
        current = self._expect(old, doc.category, doc.id, base_hash)
        # the same memory (a re-save, an older file's form) is not written:
        if current != doc or path != old:
            # its mtime, the age Claude Code shows, stays (older forms change with content)
            write_text(path, text, sync_dir=sync_dir or path != old)
        if path != old:  # archived or restored: moved, the new file durable before the old one goes
            self._remove(old, base_hash)
        return path

    def _remove(self, path: str, base_hash: str) -> None:
        """Unlink the file at `path` if it still holds the bytes hashed `base_hash` (else it stays)."""
        try:
            if content_hash(self.read_bytes(path)) != base_hash:
                return
            os.unlink(path)
        except (MissingMemoryError, BrokenMemoryError, FileNotFoundError):
            return
        fsync_dir(os.path.dirname(path))

    def retire(self, category: str, id: str, base_hash: str) -> str:
        """DELETE: mark the memory `status: archived`, moved to `.archive/<category>/` (its content kept),
        with update's checks.

        DeleteNotAllowedError for a category whose memories are never deleted. Returns the new path.
        """
        path = self.locate(category, id)
        if not CATEGORIES[category].delete_allowed:
            raise DeleteNotAllowedError(
                f"{path}: memories of category {category!r} are never deleted"
            )
        current = self._expect(path, category, id, base_hash)
        if current.status == "archived":
            return path
        return self.update(replace(current, status="archived", updated=now_iso()), base_hash)

    def _expect(self, path: str, category: str, id: str, base_hash: str) -> memfile.MemoryDoc:
        """The current document at `path`, if its hash is `base_hash`; ConflictError otherwise."""
        try:
            data = self.read_bytes(path)
        except MissingMemoryError:
            raise ConflictError(path, "the memory file was deleted since it was read") from None
        except BrokenMemoryError as e:
            raise ConflictError(path, f"the memory file cannot be read: {e.reason}") from None
        current = content_hash(data)
        if current != base_hash:
            raise ConflictError(path, "the memory file changed since it was read", current)
        try:
            return self.parse_bytes(path, data, category, id)
        except BrokenMemoryError as e:
            raise ConflictError(path, f"the memory file is broken: {e.reason}", current) from None

    # -- listing -------------------------------------------------------------------

    def scan(
        self, categories=None
    ) -> Iterator[tuple[str, str, str, memfile.MemoryDoc | BrokenMemoryError]]:
        """(category, id, path, document or BrokenMemoryError) for every memory file, sorted.

        Only the known category folders and their archive folders (`.archive/<category>/`) are looked at
        (so MEMORY.md and Claude's own files beside them are skipped), and in them only `*.md` files
        not starting with a dot. A file whose name is not a valid id, or that links
        outside the root, is reported broken; a category folder leading outside the
        root is reported once, with id "".
        """
        for category in categories or CATEGORIES:
            try:
                entries = self.list_files(category)
            except UnsafePathError as e:
                yield (
                    category,
                    "",
                    os.path.join(self.root, category),
                    BrokenMemoryError(os.path.join(self.root, category), str(e)),
                )
                continue
            for id, path, problem in entries:
                if problem:
                    yield category, id, path, BrokenMemoryError(path, problem)
                    continue
                try:
                    doc, _ = self.load(path, category, id)
                except MissingMemoryError:
                    continue  # deleted while we looked
                except BrokenMemoryError as e:
                    yield category, id, path, e
                    continue
                yield category, id, path, doc

    def list_files(self, category: str) -> list[tuple[str, str, str | None]]:
        """The memory files of one category, its folder's then its archive folder's, each sorted by name,
        without reading them.

        Each is (id, path, problem), `problem` being None for a file that may be read,
        else why it cannot (bad name, link leading outside). No folder: an empty list.
        """
        out = self._list_folder(self.category_dir(category))
        try:
            archived = self.archived_dir(category)
        except UnsafePathError as e:
            return out + [("", os.path.join(self.root, ARCHIVE_DIR, category), str(e))]
        return out + self._list_folder(archived)

    def _list_folder(self, folder: str) -> list[tuple[str, str, str | None]]:
        out: list[tuple[str, str, str | None]] = []
        try:
            it = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return out
        with it:
            for entry in it:
                name = entry.name
                if name.startswith(".") or not name.endswith(".md"):
                    continue
                path = os.path.join(folder, name)
                id = name[:-3]
                problem = None
                try:
                    if entry.is_symlink():
                        if self._outside(os.path.relpath(path, self.root)) is not None:
                            problem = "is a link leading outside the memory root"
                    if problem is None and not _is_regular(entry.stat()):
                        continue  # a folder named x.md, a fifo...: not a memory file
                except FileNotFoundError:
                    continue  # deleted while we looked, or a dangling link
                except OSError as e:
                    problem = f"cannot be read ({e.strerror or e})"
                if problem is None and not valid_id(id):
                    problem = (
                        f"file name is not a valid memory id (lowercase words of a-z and 0-9 joined "
                        f"by '-', at most {memfile.ID_MAX} characters)"
                    )
                out.append((id, path, problem))
        out.sort(key=lambda t: t[0])
        return out

    def citing(self, category: str, session: str) -> list[str]:
        """Ids of the memories of `category` whose front matter names `session` (a summary of it, say).
        Bytes are searched, not parsed: the caller reads and checks the few that match."""
        needle = session.encode("utf-8", "surrogatepass")
        out = []
        for id, path, problem in self._list_folder(self.category_dir(category)):
            if problem is None and needle:
                try:
                    # the front matter, where sources are, in its first 16 KiB
                    head = read_path(path, 16383).split(b"\n---", 1)[0]
                except OSError:
                    continue
                if needle in head:
                    out.append(id)
        return out

    def stat_files(self, category: str, names=None) -> list[tuple[str, os.stat_result | None]]:
        """Raw and fast, for the index's freshness check: (file name, stat or None) of every `*.md`
        entry of a category folder not starting with a dot (or of just `names`), unsorted; the files of its
        archive folder are named `archived_name(category, file name)` (with `names` None). Names are
        NOT checked: pass each new or changed one through `check_file` before reading it."""
        if names is None:
            out = self._stat_folder(self.category_dir(category), None)
            try:
                folder = self.archived_dir(category)
            except UnsafePathError:
                return out  # check_file reports it when the index asks for the files it knows
            return out + [
                (archived_name(category, n), st) for n, st in self._stat_folder(folder, None)
            ]
        plain = [n for n in names if not n.startswith(ARCHIVED_PREFIX)]
        out = self._stat_folder(self.category_dir(category), plain) if plain else []
        for n in names:
            if n.startswith(ARCHIVED_PREFIX):
                try:
                    out.append(
                        (
                            n,
                            os.stat(
                                os.path.join(self.root, ARCHIVE_DIR, category, _archived_file(n))
                            ),
                        )
                    )
                except (OSError, ValueError):
                    out.append((n, None))
        return out

    @staticmethod
    def _stat_folder(folder: str, names) -> list[tuple[str, os.stat_result | None]]:
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return [] if names is None else [(n, None) for n in names]
        stat = os.stat
        try:
            listed = [
                n
                for n in (os.listdir(dfd) if names is None else names)
                if n[:1] != "." and n.endswith(".md") and "/" not in n
            ]
            try:  # the common case in one comprehension: a stat is ~4 µs, the loop around it counts too
                return [(n, stat(n, dir_fd=dfd)) for n in listed]
            except OSError:
                pass
            out: list[tuple[str, os.stat_result | None]] = []
            for n in listed:
                try:
                    out.append((n, stat(n, dir_fd=dfd)))
                except OSError:  # vanished, a dangling link, unreadable: check_file says which
                    out.append((n, None))
            return out
        finally:
            os.close(dfd)

    def listing_name(self, category: str, path: str) -> str:
        """The name `stat_files` gives the memory file at `path` (in the category folder or its archive folder)."""
        file = os.path.basename(path)
        if os.path.dirname(path) == os.path.join(self.root, ARCHIVE_DIR, category):
            return archived_name(category, file)
        return file

    def check_file(self, category: str, name: str) -> tuple[str, str, str | None]:
        """(id, path, problem) of a file name found in a category folder (or, `archived_name`, in its archive
        folder); problem None when it may be read as memory `id`. The same checks as `list_files`."""
        if name.startswith(ARCHIVED_PREFIX):
            file = _archived_file(name)
            id, path = (
                file.removesuffix(".md"),
                os.path.join(self.root, ARCHIVE_DIR, category, file),
            )
        else:
            id, path = name.removesuffix(".md"), os.path.join(self.root, category, name)
        if not valid_id(id):
            return (
                id,
                path,
                (
                    f"file name is not a valid memory id (lowercase words of a-z and 0-9 joined "
                    f"by '-', at most {memfile.ID_MAX} characters)"
                ),
            )
        if os.path.islink(path) and self._outside(os.path.relpath(path, self.root)) is not None:
            return id, path, "is a link leading outside the memory root"
        if (
            name.startswith(ARCHIVED_PREFIX)
            and self._outside(os.path.relpath(path, self.root)) is not None
        ):
            return id, path, "is in an archive folder leading outside the memory root"
        return id, path, None


def _archived_file(name: str) -> str:
    """The file name in an `archived_name`; ValueError for one that climbs elsewhere."""
    file = name.rsplit("/", 1)[-1]
    if name.count("/") != 3 or file in ("", ".", "..") or file.startswith("."):
        raise ValueError(f"{name!r}: not an archived memory's name")
    return file


def _is_regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)
