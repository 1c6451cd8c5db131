"""Claude's own memory writes, staged for the person's review (`memcurate hook --review-auto-memory`).

In review mode the write guard denies Claude's Write, Edit or MultiEdit into
Claude Code's auto-memory folder and stages it here instead: one JSON record per
target file in `<data dir>/claude-writes/<id>.json`, written atomically:

  id          `<UTC stamp>-<crc32 of target and time, 8 hex digits>` (sorts by time)
  created, updated, session_id
  tool        the last tool (Write | Edit | MultiEdit); `tools` every call folded in, in order
  path        the target, absolute and resolved; `folder` the auto-memory folder, `where` the path in it
  base_hash   sha256 of the file on disk when first staged (None: absent); `base_text` its text, redacted;
              for MEMORY.md `base_claude_hash`, sha256 of Claude's part of it (memcurate's sections cut out)
  text        the file as it would be after the write(s), secrets redacted; `secrets` the kinds redacted
              (a write with any is BLOCKed: the redacted text is never saved as Claude's file)
  state       pending | saved | rejected, with `history` (each move: state, at, and why)

One pending record per target: a later write or edit to the same file updates it
(an Edit applies to the staged text, not to the disk) and keeps the first base,
so approving checks the file against what Claude saw before its first write.

A record read back is untrusted (Claude can write it with Bash, the guard aside): its target is never
its `path` but its `where`, checked (a relative .md name of Claude's, no `..`, resolved inside the folder)
and joined to Claude's memory folder as resolved now (`memory_folder`); a record whose `path` is not
that target, or whose fields are not of their types, is damaged (`Damaged`, listed with why, never
acted on).
"""

from __future__ import annotations

import os
import time
import zlib

from memcurate.curator.candidates.tool_edits import EditFailed, after
from memcurate.curator.errors import DamagedError, Refusal, StaleError
from memcurate.curator.util.atomic import read_json, write_json
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.paths import is_inside, resolve_memory_root
from memcurate.curator.util.record_folder import record_ids, resolve
from memcurate.curator.util.redact import redact
from memcurate.curator.util.stamps import content_hash, now_iso

FOLDER = "claude-writes"
LOCK = os.path.join("locks", "claude-writes.lock")
PENDING, SAVED, REJECTED = "pending", "saved", "rejected"
PREFIX = "claude/"  # how a review id names a staged write of Claude's
MEMORY_MD = "MEMORY.md"


class ClaudeWriteError(Refusal):
    """An unknown, ambiguous or unreadable staged write, or a move its state does not allow."""


class Damaged(ClaudeWriteError, DamagedError):
    """A record that does not check out (a target outside Claude's memory folder, fields not of their
    types): listed with why, never acted on."""


class WriteConflict(ClaudeWriteError, StaleError):
    """The target changed since the write was staged: approving it would overwrite what is there now."""


class WriteRefused(Refusal, ValueError):
    """A write that is not staged (too large, a file that is not text, an edit Claude Code would refuse):
    the message is the reason Claude is given."""


def folder(data) -> str:
    return os.path.join(os.fspath(data), FOLDER)


def memory_folder(project, cfg: dict, data, env=None) -> str:
    """Claude's auto-memory folder as resolved now (realpath): the memory root, or where Claude Code keeps
    its own memory when memory.root puts memcurate's elsewhere. The only folder a staged write may go to."""
    location = resolve_memory_root(project, cfg, data, env)
    if location["source"] == "config":
        location = resolve_memory_root(
            project, {**cfg, "memory": {**cfg["memory"], "root": "auto"}}, data, env
        )
    return os.path.realpath(location["path"])


def name_problem(where) -> str | None:
    """Why `where` is no name of Claude's memory file in its folder (None when it is one): a relative
    posix path to a .md file, no `..`, not one of memcurate's own files (categories, .archive/) or a hidden one."""
    from memcurate.curator.memory.claude_topics import is_topic

    if not isinstance(where, str) or not where or "\x00" in where or "\\" in where:
        return f"{where!r:.120} is not a file name"
    if where.startswith("/") or os.path.isabs(where):
        return f"{where!r:.120} is an absolute path, not a file in Claude's memory folder"
    if ".." in where.split("/"):
        return f"{where!r:.120} climbs out with .."
    if not where.endswith(".md"):
        return f"{where!r:.120} is not a Markdown file (.md): Claude's memory files are"
    if where != MEMORY_MD and not is_topic(where):
        return (
            f"{where!r:.120} is not a memory file of Claude's (memcurate's own files, hidden names and "
            "folders deeper than three are not)"
        )
    return None


def target(where, folder: str) -> str:
    """The file `where` names in Claude's memory `folder` (realpath), checked: Damaged with why when the
    name is none of Claude's memory files or it leads (by a link) outside the folder or onto memcurate's files."""
    why = name_problem(where)
    if why:
        raise Damaged(why)
    path = os.path.realpath(os.path.join(folder, *where.split("/")))
    if not is_inside(path, folder) or path == folder:
        raise Damaged(f"{where} leads outside Claude's memory folder {folder} (to {path})")
    rel = os.path.relpath(path, folder).replace(os.sep, "/")
    if rel != where and name_problem(rel):
        raise Damaged(f"{where} leads to {rel}: {name_problem(rel)}")
    return path


def read_disk(path: str) -> str | None:
    """The target's text now, None when absent; WriteRefused when it is no UTF-8 text file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise WriteRefused(f"{path} is a folder") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WriteRefused(f"{path} is not UTF-8 text (byte {e.start})") from None


def stage(
    data,
    *,
    tool: str,
    tool_input: dict,
    path: str,
    folder: str,
    session_id: str = "",
    max_bytes: int = 262144,
) -> dict:
    """Stage one Write/Edit/MultiEdit of Claude's into `path` (resolved, inside the auto-memory folder
    `folder`) and return its record; WriteRefused when it is not staged (nothing is written)."""
    # a lone surrogate cannot be stored
    session_id = session_id.encode("utf-8", "replace").decode("utf-8")
    where = os.path.relpath(path, folder).replace(os.sep, "/")
    try:
        where.encode("utf-8")
    except UnicodeEncodeError:
        raise WriteRefused(
            f"the file name {where!r:.120} cannot be written as UTF-8; nothing was staged"
        ) from None
    try:
        if target(where, folder) != path:
            raise Damaged(f"{path} is not {where} in {folder}")
    except Damaged as e:
        raise WriteRefused(f"{e}; nothing was staged") from None
    with lock(data):
        record = pending_for(data, path, memory_dir=folder)
        base = record["text"] if record else read_disk(path)
        try:
            text = after(tool, tool_input, base)
        except EditFailed as e:
            raise WriteRefused(f"{e}; nothing was staged") from None
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as e:  # a lone surrogate: no file can hold it
            raise WriteRefused(
                f"the file would hold a character that cannot be written as UTF-8 (at character "
                f"{e.start}: a lone surrogate); nothing was staged"
            ) from None
        if size > max_bytes:
            raise WriteRefused(
                f"the file would be {size:,} bytes, more than the {max_bytes:,} a memory write may "
                "be (hooks.review_max_bytes); nothing was staged: keep memories short"
            )
        stored, found = redact(text)
        # a secret redacted by an earlier call stays one while its tag is in the text (an Edit applies to it)
        kept = [k for k in (record or {}).get("secrets") or () if f"[REDACTED:{k}]" in stored]
        now = now_iso()
        if record is None:
            record = {
                "id": _new_id(data, path),
                "created": now,
                "session_id": session_id,
                "tools": [],
                "path": path,
                "folder": folder,
                "where": where,
                "base_hash": None if base is None else content_hash(base),
                "base_text": None if base is None else redact(base)[0],
                "state": PENDING,
                "history": [],
            }
            if where == MEMORY_MD and base is not None:
                record["base_claude_hash"] = claude_part_hash(base)
            move = "staged"
        else:
            move = "updated"
        record.update(updated=now, tool=tool, text=stored, secrets=sorted(set(found) | set(kept)))
        record["tools"].append(tool)
        record["history"].append({"state": PENDING, "at": now, "why": f"{move} by {tool}"})
        write_json(record_path(data, record["id"]), record)
        return record


def claude_part_hash(text: str) -> str | None:
    """sha256 of Claude's part of a MEMORY.md text, None when its memcurate markers cannot be read. Every
    byte of Claude's lines counts (a person's whitespace edit too); only the line breaks next to memcurate's
    sections, which memcurate adds or drops with a section, do not."""
    from memcurate.curator.memory.memory_md.format import MemoryMdError, parse

    try:
        parsed = parse(text)
    except MemoryMdError:
        return None
    parts, pos = [], 0
    for sec in parsed.sections.values():
        parts.append(parsed.text[pos : sec.start])
        pos = sec.end
    parts.append(parsed.text[pos:])
    return content_hash("\n".join(p.strip("\r\n") for p in parts if p.strip("\r\n")))


def lock(data, wait: float = 10.0) -> FileLock:
    """One staging or approval of Claude's writes at a time (a hook staging while a person approves)."""
    return FileLock(os.path.join(os.fspath(data), LOCK), wait=wait)


def _new_id(data, path: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    key = f"{path}:{time.time_ns()}:{os.getpid()}".encode("utf-8", "surrogateescape")
    wid = f"{stamp}-{zlib.crc32(key):08x}"
    return wid if not os.path.exists(record_path(data, wid)) else _new_id(data, path + "+")


def record_path(data, wid: str) -> str:
    return os.path.join(folder(data), f"{wid}.json")


def scan(data, memory_dir: str | None = None) -> tuple[list[dict], list[tuple[str, str]]]:
    """(every readable record, oldest first; (id, why) of each that cannot be read, or, given Claude's
    memory folder `memory_dir`, does not check out against it), in one read of each."""
    good, bad = [], []
    for wid in record_ids(folder(data)):
        try:
            good.append(_read(data, wid, memory_dir))
        except ClaudeWriteError as e:
            bad.append((wid, str(e)))
    return good, bad


def records(data, memory_dir: str | None = None) -> list[dict]:
    """Every readable record, oldest first (an unreadable one is skipped: `unreadable` lists them)."""
    return scan(data, memory_dir)[0]


def unreadable(data, memory_dir: str | None = None) -> list[tuple[str, str]]:
    """(id, why) of each record that cannot be read (or does not check out against `memory_dir`)."""
    return scan(data, memory_dir)[1]


_TYPES = {
    "id": str,
    "path": str,
    "folder": str,
    "where": str,
    "text": str,
    "state": str,
    "history": list,
}


def _read(data, wid: str, memory_dir: str | None = None) -> dict:
    """The record `wid`; given Claude's memory folder `memory_dir`, checked against it, its `path` and `folder` then
    the ones derived (Damaged when they are not the record's)."""
    try:
        record = read_json(record_path(data, wid))
    except FileNotFoundError:
        raise ClaudeWriteError(f"no staged write {PREFIX}{wid}") from None
    except (OSError, ValueError) as e:
        raise ClaudeWriteError(f"staged write {PREFIX}{wid} cannot be read: {e}") from None
    if (
        not isinstance(record, dict)
        or any(not isinstance(record.get(k), t) for k, t in _TYPES.items())
        or record["id"] != wid
    ):
        raise ClaudeWriteError(
            f"staged write {PREFIX}{wid} is malformed (fix or delete {record_path(data, wid)})"
        )
    why = _damage(record)
    # a decided one is never acted on
    if not why and memory_dir is not None and record["state"] == PENDING:
        try:
            path = target(record["where"], memory_dir)
        except Damaged as e:
            why = str(e)
        else:
            if record["path"] != path:
                why = f"it names {record['path']}, but {record['where']} in Claude's memory folder is {path}"
            record = {**record, "path": path, "folder": memory_dir}
    if why:
        raise Damaged(
            f"staged write {PREFIX}{wid} does not check out: {why} (delete {record_path(data, wid)})"
        )
    return record


def _damage(record: dict) -> str:
    """Why the record's fields are not of their kinds ("" when they are)."""
    if record["state"] not in (PENDING, SAVED, REJECTED):
        return f"state {record['state']!r:.40} is not one of {PENDING}, {SAVED}, {REJECTED}"
    for name in ("base_text", "base_hash", "base_claude_hash"):
        if not isinstance(record.get(name), (str, type(None))):
            return f"{name} is not a text"
    secrets = record.get("secrets", [])
    if not isinstance(secrets, list) or any(not isinstance(k, str) for k in secrets):
        return "secrets is not a list of kinds"
    return ""


def pending_for(
    data, path: str, known: list[dict] | None = None, *, memory_dir: str | None = None
) -> dict | None:
    """The pending record of the target `path`, None when there is none (among `known` when given, else
    among the records that check out against `memory_dir`)."""
    for record in records(data, memory_dir) if known is None else known:
        if record["state"] == PENDING and record["path"] == path:
            return record
    return None


def find(data, wid: str, memory_dir: str | None = None) -> dict:
    """The record whose id is `wid` (with or without `claude/`) or starts with it; ClaudeWriteError when
    none or several do, Damaged when it does not check out against Claude's memory folder `memory_dir`."""
    return _read(
        data,
        resolve(wid, record_ids(folder(data)), PREFIX, "staged write", ClaudeWriteError),
        memory_dir,
    )


def move(data, record: dict, state: str, why: str = "", **fields) -> dict:
    """Record `state` (saved | rejected) for a pending write (the caller holds `lock`); ClaudeWriteError
    when it is not pending."""
    if record["state"] != PENDING:
        raise ClaudeWriteError(f"{PREFIX}{record['id']} is {record['state']}, not pending")
    now = now_iso()
    record = {
        **record,
        **fields,
        "state": state,
        "updated": now,
        "history": record["history"] + [{"state": state, "at": now, "why": why}],
    }
    write_json(record_path(data, record["id"]), record)
    return record
