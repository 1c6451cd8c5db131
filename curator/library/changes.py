"""Change sets: the one way the library changes memory files, memcurate's and Claude's own.

A change set is a list of ops, plain dicts (JSON-storable: a proposal keeps them):

    {"op": "write", "ref", "base_hash", "text"}  create (base_hash None) or replace a memory file; a
                                                 memcurate memory is verified like a save
    {"op": "archive", "ref", "base_hash"}        memcurate's: `status: archived`, the file moved to
                                                 .archive/<category>/, its MEMORY.md line to
                                                 .archive/<category>.md; Claude's file: moved to
                                                 .archive/claude/<where>, its bytes kept
    {"op": "delete", "ref", "base_hash"}         copied to <data>/trash/ first, then removed; a memcurate
                                                 memory's line leaves MEMORY.md and the archive (base_hash
                                                 None: the file is already gone, only its lines go)
    {"op": "drop_line", "ref", "base_hash"}      a line of Claude's removed from MEMORY.md (every copy of
                                                 it), and nothing else
    {"op": "replace_line", "ref", "base_hash", "text"}
                                                 one line rewritten where it stands, every other byte kept
                                                 (what redacting a secret does): a line of Claude's
                                                 (claude/MEMORY.md#<hash>), a memcurate memory's entry line
                                                 (<category>/<id>: `text` is its entry), or a line of an
                                                 archive file (claude/.archive/...); base_hash: the line's
                                                 hash (entries.line_hash)
    {"op": "add_line", "ref"}                    a memcurate memory's MEMORY.md line added or updated
    {"op": "archive_line", "ref"}                a memcurate memory's MEMORY.md line moved to its archive
                                                 file, the memory itself left active (what a section over
                                                 its budget does: room in MEMORY.md, nothing retired)

`plan` reads and checks everything and says what each file would become (MEMORY.md and the archive
files included), with a unified diff and a fingerprint of the result; it writes nothing. An op whose
file is no longer the bytes of its `base_hash` is an error ("changed since"), as is a memory that fails
verification or a secret in any text written.

`apply` plans again under the memory root's lock and refuses when anything is in error or the result
is not the one the person saw (its fingerprint). An error in any op writes nothing. Then, so that a
crash or a full disk at any point loses nothing: copies first (the trash copy of a file deleted, the
archive copy of a Claude file archived), then the memory files, then MEMORY.md in one write with
every line change of the set (its archive files before it, through curator/memory/memory_md), and
removals last. Every write
is atomic; a file is replaced only while it still holds the bytes planned against.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from memcurate.curator.errors import Refusal
from memcurate.curator.library.carry_out import CHANGED, Stopped, read_bytes, run
from memcurate.curator.library.entries import CLAUDE, MEMORY_MD, parse_ref
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.memory.memory_md.archive import (
    archive_add,
    archive_drop,
    archive_path,
    archive_replace_line,
)
from memcurate.curator.util.paths import ARCHIVE_DIR, is_inside
from memcurate.curator.util.stamps import content_hash

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

OPS = ("write", "archive", "delete", "drop_line", "replace_line", "add_line", "archive_line")
_LINE_OPS = ("add_line", "archive_line")  # MEMORY.md only: no base hash, the file is not written
# where Claude's archived topic files go, under the memory root
CLAUDE_ARCHIVE = f"{ARCHIVE_DIR}/{CLAUDE}"


class ChangeError(Refusal):
    """A change set refused: `errors` says why, one line each; `changed` when a file moved under it
    (look again, then redo). Nothing was written, except by a write that failed midway (`partial`),
    whose copies come first: nothing is lost."""

    def __init__(self, errors, *, partial: bool = False, errno: int | None = None) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        self.changed = any("changed since" in e for e in self.errors)
        self.partial = partial
        self.errno = errno
        super().__init__("; ".join(self.errors))


@dataclass
class Planned:
    """What a change set would do; nothing written. `files`: {where, before, after, diff} per file
    (before/after None: no file; both, and the diff, with secrets redacted: they are shown), `errors`: why
    it cannot be applied, `fingerprint`: of the afters' raw bytes."""

    files: list[dict]
    errors: list[str]
    fingerprint: str
    issues: list[dict] = field(default_factory=list)  # ADVISORY issues of the memories written
    # what MEMORY.md's plan did beyond the ops (over budget...)
    notes: list[str] = field(default_factory=list)
    _work: _Work | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        """As shown and printed: the files' texts are redacted already; an error, issue or note may quote an
        op (its text) and is redacted here."""
        from memcurate.curator.util.redact import redact_text

        return {
            "files": self.files,
            "errors": [redact_text(e) for e in self.errors],
            "fingerprint": self.fingerprint,
            "issues": [
                {k: redact_text(v) if isinstance(v, str) else v for k, v in i.items()}
                for i in self.issues
            ],
            "notes": [redact_text(n) for n in self.notes],
        }


@dataclass
class Applied:
    """What apply did: the files written or removed (relative to the memory root), the trash copies made."""

    written: list[str] = field(default_factory=list)
    trash: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"written": self.written, "trash": self.trash}


# -- planning --------------------------------------------------------------------------


@dataclass
class _Work:
    """The steps apply carries out, in its order (see the module's doc)."""

    # (kind "trash" | "archive", where, path, bytes, dest or None)
    copies: list = field(default_factory=list)
    # ("memory", where, doc, base_hash, text parsed) | ("file", where,
    writes: list = field(default_factory=list)
    #                                               path, before, after)
    # memory_md changes (upsert, archive, remove, drop_line,
    md_changes: list = field(default_factory=list)
    #                                                   replace_line): MEMORY.md written once with all of them
    removals: list = field(default_factory=list)  # (where, path, bytes expected)
    categories: set = field(default_factory=set)  # memcurate categories touched (reindexed)
    claude: bool = False  # a Claude file touched (reindexed)


class _State:
    """The memory root as the ops leave it, in memory: each file read once, then its planned bytes."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.root = engine.root
        self.before: dict[str, bytes | None] = {}  # where -> bytes on disk (None: no file)
        self.after: dict[str, bytes | None] = {}  # where -> planned bytes
        self.errors: list[str] = []
        self.issues: list[dict] = []
        self.line_files: dict[
            str, int
        ] = {}  # archive file -> its write in work.writes (line edits add up)
        self.work = _Work()

    def path(self, where: str) -> str:
        return os.path.join(self.root, *where.split("/"))

    def read(self, where: str) -> bytes | None:
        if where in self.after:
            return self.after[where]
        if where not in self.before:
            self.before[where] = read_bytes(self.path(where))
        return self.before[where]

    def put(self, where: str, data: bytes | None) -> None:
        self.read(where)
        self.after[where] = data


def plan(engine: Context, ops) -> Planned:
    """What `ops` would do to the memory root; nothing is written."""
    st = _State(engine)
    if not isinstance(ops, (list, tuple)):
        st.errors.append(f"a change set is a list of ops, found {type(ops).__name__}")
        ops = []
    for i, op in enumerate(ops, 1):
        try:
            _plan_op(st, op)
        except (ValueError, OSError) as e:  # a bad ref or path, an unreadable file: this op's error
            st.errors.append(f"op {i}: {e}")
    notes = _plan_memory_md(st) if not st.errors else []
    files: list[dict[str, Any]] = []
    for where, after in st.after.items():
        before = st.before[where]
        if after != before:
            files.append(
                {
                    "where": where,
                    "before": _shown(before),
                    "after": _shown(after),
                    "diff": _diff(where, before, after),
                }
            )
    # the memories first
    files.sort(key=lambda f: f["where"] == MEMORY_MD or f["where"].startswith(ARCHIVE_DIR + "/"))
    afters = [
        [f["where"], None if (data := st.after[f["where"]]) is None else content_hash(data)]
        for f in files
    ]
    fingerprint = content_hash(json.dumps(afters))
    return Planned(files, st.errors, fingerprint, st.issues, notes, st.work)


def _plan_op(st: _State, op) -> None:
    if not isinstance(op, dict) or op.get("op") not in OPS:
        raise ValueError(
            f"not a change op: {op!r:.120} (expected a dict with op one of {', '.join(OPS)})"
        )
    kind, ref = op["op"], cast(str, op.get("ref"))  # parse_ref refuses anything but a ref's text
    owner, category, rest = parse_ref(ref)
    base = op.get("base_hash")
    if kind not in _LINE_OPS and base is not None and not isinstance(base, str):
        raise ValueError(f"{ref}: base_hash must be a hash or null")
    if owner == CLAUDE and rest.startswith(MEMORY_MD + "#"):
        if kind not in ("drop_line", "delete", "replace_line"):
            raise ValueError(
                f"{ref}: a line of Claude's can only be dropped (drop_line), redacted "
                "(replace_line), or adopted"
            )
        if not base or not base.startswith(rest.rpartition("#")[2]):
            raise ValueError(
                f"{ref}: a line change needs the hash of the line's text (base_hash) that the ref names"
            )
        st.read(MEMORY_MD)
        if kind == "replace_line":
            st.work.md_changes.append(("replace_line", base, _line_text(st, ref, op), None))
        else:
            st.work.md_changes.append(("drop_line", base))
        return
    if kind == "drop_line":
        raise ValueError(f"{ref}: drop_line takes a line of Claude's (claude/MEMORY.md#<hash>)")
    if kind == "replace_line":
        if not isinstance(base, str) or not base:
            raise ValueError(
                f"{ref}: replace_line needs the hash of the line it replaces (base_hash)"
            )
        if owner == CLAUDE and rest.startswith(ARCHIVE_DIR + "/"):
            _plan_archive_line(st, ref, rest, base, _line_text(st, ref, op))
        elif owner == CLAUDE:
            raise ValueError(
                f"{ref}: replace_line takes a line of MEMORY.md, an entry line or an archive file"
            )
        else:
            st.read(MEMORY_MD)
            st.work.md_changes.append(
                ("replace_line", base, _line_text(st, ref, op), f"{category}/{rest}")
            )
        return
    if owner == CLAUDE:
        _plan_claude_file(st, kind, ref, rest, base, op)
    else:
        _plan_memory(st, kind, ref, category, rest, base, op)


def _line_text(st: _State, ref: str, op: dict) -> str:
    """The new text of a line (replace_line): one line, no secret in it."""
    from memcurate.curator.util.redact import find_secrets

    text = op.get("text")
    if not isinstance(text, str) or not text.strip() or "\n" in text or "\r" in text:
        raise ValueError(f"{ref}: replace_line needs the line's new text (one line)")
    secrets = find_secrets(text)
    if secrets:
        raise ValueError(
            f"{ref}: a secret is present ({', '.join(secrets)}): remove it before saving"
        )
    return text


def _plan_archive_line(st: _State, ref: str, where: str, base: str, text: str) -> None:
    """A line of an archive file rewritten (memory_md/archive.py), every other byte of it kept."""
    path = st.path(where)
    if not where.endswith(".md") or not is_inside(
        os.path.realpath(path), os.path.realpath(st.root)
    ):
        raise ValueError(f"{ref}: {where} is not an archive file under the memory root")
    current = st.read(where)
    if where in st.after and where not in st.line_files:
        st.errors.append(f"{ref}: more than one op changes {where}")
        return
    if current is None:
        st.errors.append(f"{ref}: {where} no longer exists ({CHANGED})")
        return
    try:
        after = archive_replace_line(_text(current, where), base, text).encode("utf-8")
    except memory_md.MemoryMdError as e:
        st.errors.append(f"{ref}: {e}")
        return
    # another line of the same file: one write, from the bytes first read
    if where in st.line_files:
        i = st.line_files[where]
        st.work.writes[i] = st.work.writes[i][:4] + (after,)
    else:
        st.line_files[where] = len(st.work.writes)
        st.work.writes.append(("file", where, path, current, after))
    st.put(where, after)
    if where.startswith(CLAUDE_ARCHIVE + "/"):
        st.work.claude = True


def _check_base(st: _State, where: str, base: str | None, current: bytes | None, ref: str) -> bool:
    """Whether `current` (the file's bytes) is what `base` says; else the op's error is recorded."""
    if where in st.after:
        st.errors.append(f"{ref}: more than one op changes {where}")
        return False
    if base is None:
        if current is not None:
            st.errors.append(f"{ref}: {where} already exists")
            return False
        return True
    if current is None:
        st.errors.append(f"{ref}: {where} no longer exists ({CHANGED})")
        return False
    if content_hash(current) != base:
        st.errors.append(f"{ref}: {where} {CHANGED}")
        return False
    return True


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: not UTF-8 text (byte {e.start})") from None


# -- memcurate's memories


def _plan_memory(st: _State, kind: str, ref: str, category: str, id: str, base, op: dict) -> None:
    engine = st.engine
    # UnsafePathError (a ValueError): a link leading outside
    path = engine.store.locate(category, id)
    where = engine.store.relpath(path).replace(os.sep, "/")
    # a memory an earlier op of the set writes (or moves)
    if kind in _LINE_OPS and st.read(where) is None:
        for other in (
            engine.store.path_for(category, id),
            engine.store.path_for(category, id, archived=True),
        ):
            if st.after.get(engine.store.relpath(other).replace(os.sep, "/")) is not None:
                path, where = other, engine.store.relpath(other).replace(os.sep, "/")
    current = st.read(where)
    if kind in _LINE_OPS:  # an archived memory's line is kept in its archive file
        doc = _doc(current, where, ref)
        line = memory_md.IndexLine.from_doc(doc)
        archived = kind == "archive_line" or doc.status == "archived"
        st.work.md_changes.append(("archive" if archived else "upsert", line))
        return
    if kind == "write":
        _plan_memory_write(st, ref, category, id, where, base, current, op.get("text"))
        return
    if kind == "delete" and base is None and current is None and where not in st.after:
        # the file is already gone (a missing link): only its MEMORY.md and archive lines go
        st.work.md_changes.append(("remove", category, id))
        st.work.categories.add(category)
        return
    if not _check_base(st, where, base, current, ref):
        return
    if kind == "delete":
        st.work.copies.append(("trash", where, path, current, None))
        st.work.removals.append((where, path, current))
        st.work.md_changes.append(("remove", category, id))
        st.work.categories.add(category)
        st.put(where, None)
        return
    doc = _doc(current, where, ref)  # archive
    if doc.status != "archived":
        archived = replace(doc, status="archived")
        st.work.writes.append(("memory", where, archived, base, None))
        _put_memory(st, where, archived)
        st.work.categories.add(category)
    st.work.md_changes.append(("archive", memory_md.IndexLine.from_doc(doc)))


def _put_memory(st: _State, where: str, doc) -> None:
    """The planned bytes of memory `doc`, now at `where`: an archived one moves to `.archive/<category>/`,
    one restored moves back (MemoryStore.home; the store's update carries the move out)."""
    home = st.engine.store.relpath(st.engine.store.home(doc)).replace(os.sep, "/")
    if home != where and st.read(where) is not None:
        st.put(where, None)
    st.put(home, memfile.render(doc).encode("utf-8"))


def _doc(data: bytes | None, where: str, ref: str):
    """The memory in `data`; ValueError (the op's error) when there is none or it is no memory."""
    if data is None:
        raise ValueError(f"{ref}: {where} does not exist")
    try:
        return memfile.parse(_text(data, where))
    except memfile.MemoryFormatError as e:
        raise ValueError(
            f"{ref}: {where} cannot be read as a memory ({e}): fix or delete it"
        ) from None


def _plan_memory_write(
    st: _State, ref: str, category: str, id: str, where: str, base, current, text
) -> None:
    from memcurate.curator.verify.checks import ADVISORY, BLOCK, verify

    if not isinstance(text, str):
        raise ValueError(f"{ref}: write needs the file's text")
    if not _check_base(st, where, base, current, ref):
        return
    # the target's bytes are checked above: verify checks the document itself
    issues = verify(text, category=category, cfg=st.engine.cfg)
    blocks = [i for i in issues if i.severity == BLOCK]
    try:
        doc = memfile.parse(text)
    except memfile.MemoryFormatError:
        doc = None  # verify said why
    errors = [
        f"{ref}: {i.message}" if i.message.startswith(i.where) else f"{ref}: {i.where}: {i.message}"
        for i in blocks
    ]
    if doc is not None and doc.id != id:
        errors.append(
            f"{ref}: id {doc.id!r:.100} must be the file name {id!r} (a new id is a new memory)"
        )
    if errors or doc is None:  # (no doc: verify's BLOCK says why)
        st.errors += errors or [f"{ref}: not a memory file"]
        return
    st.issues += [dict(i.as_dict(), ref=ref) for i in issues if i.severity == ADVISORY]
    st.work.writes.append(("memory", where, doc, base, text))
    _put_memory(st, where, doc)
    st.work.categories.add(category)
    old = None
    if current is not None:
        try:
            old = memfile.parse(current.decode("utf-8"))
        except (UnicodeDecodeError, memfile.MemoryFormatError):
            old = None
    line = memory_md.IndexLine.from_doc(doc)
    if doc.status == "archived":
        if old is None or old.status != "archived":
            st.work.md_changes.append(("archive", line))
    elif (
        old is None
        or old.status == "archived"
        or (old.title, old.description) != (doc.title, doc.description)
    ):
        st.work.md_changes.append(("upsert", line))


# -- Claude's topic files


def _claude_where(st: _State, ref: str, where: str) -> str:
    """The checked path of Claude's topic file `where`: a Markdown file of the root that is none of
    memcurate's (MEMORY.md, the category folders, .archive/), not leading outside by a link."""
    from memcurate.curator.memory.claude_topics import is_topic

    if not is_topic(where):
        raise ValueError(f"{ref}: {where} is not a topic file of Claude's")
    path = st.path(where)
    if not is_inside(os.path.realpath(path), os.path.realpath(st.root)):
        raise ValueError(f"{ref}: {where} leads outside the memory root ({os.path.realpath(path)})")
    return path


def _plan_claude_file(st: _State, kind: str, ref: str, where: str, base, op: dict) -> None:
    from memcurate.curator.util.redact import find_secrets

    if kind in _LINE_OPS:
        raise ValueError(
            f"{ref}: {kind} takes a memcurate memory; a file of Claude's is adopted first"
        )
    path = _claude_where(st, ref, where)
    current = st.read(where)
    if kind != "write" and base is None:
        raise ValueError(f"{ref}: {kind} needs the hash of the file as it was read (base_hash)")
    if not _check_base(st, where, base, current, ref):
        return
    st.work.claude = True
    if kind == "write":
        text = op.get("text")
        if not isinstance(text, str):
            raise ValueError(f"{ref}: write needs the file's text")
        secrets = find_secrets(text)
        if secrets:
            st.errors.append(
                f"{ref}: a secret is present ({', '.join(secrets)}): remove it before saving"
            )
            return
        after = text.encode("utf-8")
        st.work.writes.append(("file", where, path, current, after))
        st.put(where, after)
    elif kind == "delete":
        st.work.copies.append(("trash", where, path, current, None))
        st.work.removals.append((where, path, current))
        st.put(where, None)
    else:  # archive: the same bytes under .archive/claude/
        dest = f"{CLAUDE_ARCHIVE}/{where}"
        there = st.read(dest)
        if there is not None and there != current:
            st.errors.append(
                f"{ref}: {dest} already exists with other content: move or delete it first"
            )
            return
        st.work.copies.append(("archive", where, path, current, dest))
        st.work.removals.append((where, path, current))
        st.put(dest, current)
        st.put(where, None)


# -- MEMORY.md and the archive files


def _plan_memory_md(st: _State) -> list[str]:
    """MEMORY.md and the archive files after the ops' changes and dropped lines; the plan's notes."""
    w = st.work
    if not w.md_changes:
        return []
    engine = st.engine
    try:
        text = _text(st.read(MEMORY_MD) or b"", MEMORY_MD)
        parsed = memory_md.parse(text)
    except (ValueError, memory_md.MemoryMdError) as e:
        st.errors.append(f"{MEMORY_MD}: {e}: fix it by hand first")
        return []
    notes: list[str] = []
    try:
        p = memory_md.plan(
            text,
            w.md_changes,
            memory_md.budgets_from(engine.cfg),
            *memory_md.limits_from(engine.cfg),
            parsed=parsed,
        )
    except memory_md.MemoryMdError as e:
        st.errors.append(f"{MEMORY_MD}: {e}")
        return []
    text, notes = p.text, list(p.notes)
    for cat in sorted(set(p.archived) | set(p.unarchive)):
        awhere = os.path.relpath(archive_path(st.root, cat), st.root).replace(os.sep, "/")
        data = st.read(awhere)
        try:
            atext = None if data is None else _text(data, awhere)
        except ValueError as e:
            st.errors.append(str(e))
            continue
        new = atext
        if p.archived.get(cat):
            new = archive_add(new, cat, p.archived[cat])
        if p.unarchive.get(cat) and new is not None:
            new = archive_drop(new, cat, p.unarchive[cat])
        if new is not None and new != atext:
            st.put(awhere, new.encode("utf-8"))
    if any(c[0] == "drop_line" for c in w.md_changes):
        # Claude's own bytes: the file as it was is kept in the trash before a line of it goes (not before
        # a line is redacted: that copy would keep the secret)
        st.work.copies.append(("trash", MEMORY_MD, st.path(MEMORY_MD), st.read(MEMORY_MD), None))
    st.put(MEMORY_MD, text.encode("utf-8") if text or st.read(MEMORY_MD) is not None else None)
    return notes


def _shown(data: bytes | None) -> str | None:
    """A file's bytes as a plan shows them: text with every secret redacted (the plan is put on screen,
    printed and stored as JSON; its fingerprint and the base hashes stay over the raw bytes)."""
    from memcurate.curator.util.redact import redact_text

    return None if data is None else redact_text(data.decode("utf-8", "replace"))


def _diff(where: str, before: bytes | None, after: bytes | None) -> str:
    """The unified diff of the raw texts (a secret replaced by its tag is a changed line), redacted as
    shown: the diff's text, and any line of a secret found in either text (a hunk may hold part of a
    private key without its BEGIN line)."""
    from memcurate.curator.util.redact import redact_diff

    old = "" if before is None else before.decode("utf-8", "replace")
    new = "" if after is None else after.decode("utf-8", "replace")
    return redact_diff(
        "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                "/dev/null" if before is None else f"a/{where}",
                "/dev/null" if after is None else f"b/{where}",
            )
        ),
        old,
        new,
    )


# -- applying --------------------------------------------------------------------------


def apply(engine: Context, ops, fingerprint: str | None = None) -> Applied:
    """Carry `ops` out under the root lock (see the module's doc). ChangeError when any op is in error,
    when the result is not the one `fingerprint` (from `plan`) names, or when a write fails."""
    with engine.root_lock(wait=30):
        planned = plan(engine, ops)
        if planned.errors:
            raise ChangeError(planned.errors)
        if fingerprint is not None and fingerprint != planned.fingerprint:
            raise ChangeError(
                f"the files {CHANGED} or shown: this change would now do something else; "
                "look at it again"
            )
        try:
            trash = run(engine, planned._work)
        except Stopped as e:
            raise ChangeError(str(e), partial=True, errno=e.errno) from None
    return Applied([f["where"] for f in planned.files], trash)
