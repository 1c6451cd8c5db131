"""Claude's own memory writes, staged for the person's review (`memcurate hook --review-auto-memory`).

In review mode the write guard denies Claude's Write, Edit or MultiEdit into
Claude Code's auto-memory folder and stages it here instead: one JSON record per
target file in `<data dir>/claude-writes/<id>.json`, written atomically:

  id          `<UTC stamp>-<crc32 of target and time, 8 hex digits>` (sorts by time)
  created, updated, session_id
  tool        the last tool (Write | Edit | MultiEdit); `tools` every call folded in, in order
  path        the target, absolute and resolved; `folder` the auto-memory folder, `where` the path in it
  base_hash   sha256 of the file on disk when first staged (None: absent); `base_text` its text
  text        the file as it would be after the write(s): what approving writes
  state       pending | saved | rejected, with `history` (each move: state, at, and why)

One pending record per target: a later write or edit to the same file updates it
(an Edit applies to the staged text, not to the disk) and keeps the first base,
so approving checks the file against what Claude saw before its first write.
"""

from __future__ import annotations

import os
import time
import zlib

from curator.candidates.tool_edits import EditFailed, after
from curator.util.atomic import read_json, write_json
from curator.util.record_folder import record_ids, resolve
from curator.util.locks import FileLock
from curator.util.stamps import content_hash, now_iso

FOLDER = "claude-writes"
LOCK = os.path.join("locks", "claude-writes.lock")
PENDING, SAVED, REJECTED = "pending", "saved", "rejected"
PREFIX = "claude/"  # how a review id names a staged write of Claude's


class ClaudeWriteError(Exception):
    """An unknown, ambiguous or unreadable staged write, or a move its state does not allow."""


class Conflict(ClaudeWriteError):
    """The target changed since the write was staged: approving it would overwrite what is there now."""


class Refused(ValueError):
    """A write that is not staged (too large, a file that is not text, an edit Claude Code would refuse):
    the message is the reason Claude is given."""


def folder(data) -> str:
    return os.path.join(os.fspath(data), FOLDER)


def read_disk(path: str) -> str | None:
    """The target's text now, None when absent; Refused when it is no UTF-8 text file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(f"{path} is not UTF-8 text (byte {e.start})") from None


def stage(data, *, tool: str, tool_input: dict, path: str, folder: str, session_id: str = "",
          max_bytes: int = 262144) -> dict:
    """Stage one Write/Edit/MultiEdit of Claude's into `path` (resolved, inside the auto-memory folder
    `folder`) and return its record; Refused when it is not staged (nothing is written)."""
    with lock(data):
        record = pending_for(data, path)
        base = record["text"] if record else read_disk(path)
        try:
            text = after(tool, tool_input, base)
        except EditFailed as e:
            raise Refused(f"{e}; nothing was staged") from None
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise Refused(f"the file would be {size:,} bytes, more than the {max_bytes:,} a memory write may "
                          "be (hooks.review_max_bytes); nothing was staged: keep memories short")
        now = now_iso()
        if record is None:
            record = {"id": _new_id(data, path), "created": now, "session_id": session_id, "tools": [],
                      "path": path, "folder": folder, "where": os.path.relpath(path, folder), "base_hash": None if base is None else content_hash(base),
                      "base_text": base, "state": PENDING, "history": []}
            move = "staged"
        else:
            move = "updated"
        record.update(updated=now, tool=tool, text=text)
        record["tools"].append(tool)
        record["history"].append({"state": PENDING, "at": now, "why": f"{move} by {tool}"})
        write_json(record_path(data, record["id"]), record)
        return record


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


def scan(data) -> tuple[list[dict], list[tuple[str, str]]]:
    """(every readable record, oldest first; (id, why) of each that cannot be read), in one read of each."""
    good, bad = [], []
    for wid in record_ids(folder(data)):
        try:
            good.append(_read(data, wid))
        except ClaudeWriteError as e:
            bad.append((wid, str(e)))
    return good, bad


def records(data) -> list[dict]:
    """Every readable record, oldest first (an unreadable one is skipped: `unreadable` lists them)."""
    return scan(data)[0]


def unreadable(data) -> list[tuple[str, str]]:
    """(id, why) of each record that cannot be read."""
    return scan(data)[1]


def _read(data, wid: str) -> dict:
    try:
        record = read_json(record_path(data, wid))
    except FileNotFoundError:
        raise ClaudeWriteError(f"no staged write {PREFIX}{wid}") from None
    except (OSError, ValueError) as e:
        raise ClaudeWriteError(f"staged write {PREFIX}{wid} cannot be read: {e}") from None
    need = ("id", "path", "folder", "where", "text", "state", "history")
    if not isinstance(record, dict) or any(k not in record for k in need) or record["id"] != wid:
        raise ClaudeWriteError(f"staged write {PREFIX}{wid} is malformed (fix or delete {record_path(data, wid)})")
    return record


def pending_for(data, path: str, known: list[dict] | None = None) -> dict | None:
    """The pending record of the target `path`, None when there is none (among `known` when given)."""
    for record in records(data) if known is None else known:
        if record["state"] == PENDING and record["path"] == path:
            return record
    return None


def find(data, wid: str) -> dict:
    """The record whose id is `wid` (with or without `claude/`) or starts with it; ClaudeWriteError when
    none or several do."""
    return _read(data, resolve(wid, record_ids(folder(data)), PREFIX, "staged write", ClaudeWriteError))


def move(data, record: dict, state: str, why: str = "", **fields) -> dict:
    """Record `state` (saved | rejected) for a pending write (the caller holds `lock`); ClaudeWriteError
    when it is not pending."""
    if record["state"] != PENDING:
        raise ClaudeWriteError(f"{PREFIX}{record['id']} is {record['state']}, not pending")
    now = now_iso()
    record = {**record, **fields, "state": state, "updated": now,
              "history": record["history"] + [{"state": state, "at": now, "why": why}]}
    write_json(record_path(data, record["id"]), record)
    return record
