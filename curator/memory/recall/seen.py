"""What one Claude Code session was already given: a small record per session in the data dir
(`recall/<digest of the session id>.json`, the memories' `<category>/<id>` in the order given),
so no memory is given twice in one session. The same record keeps what memcurate learnt of Claude
Code's own recall in that session (claude_recall.py): how far its transcript was read, the memory
files Claude Code surfaced, and whether it recalls by itself.

Bounded: at most MAX_IDS a session (the oldest are forgotten first), and the records of sessions
not heard of for SWEEP_AFTER seconds are removed whenever a new session's record is first written,
keeping at most MAX_SESSIONS. The file name is a digest: a session id from the payload never becomes
a path. A record that cannot be read counts as empty (a repeat, never an error); one that cannot be
written is the caller's to log.
"""

from __future__ import annotations

import os
import re
import time
import zlib

from memcurate.curator.util.atomic import read_json, write_json
from memcurate.curator.util.private import make_dirs

FOLDER = "recall"
MAX_IDS = 500
MAX_SESSIONS = 200
SWEEP_AFTER = 7 * 24 * 3600


class Seen:
    def __init__(self, data: str, session_id: str) -> None:
        self.folder = os.path.join(data, FOLDER)
        self.path = None
        self.ids: list[str] = []
        self.transcript = ""  # the transcript read so far, and up to which byte
        self.offset = 0
        self.surfaced: list[
            str
        ] = []  # memory files Claude Code's own recall gave this session (absolute)
        self.claude_recalls = False  # a relevant_memories attachment was seen in this session
        self.dirty = False  # read_to noted something save has not written yet
        if session_id:
            self.path = os.path.join(self.folder, f"{file_name(session_id)}.json")
            try:
                record = read_json(self.path)
            except (OSError, ValueError):
                record = None
            record = record if isinstance(record, dict) else {}
            ids = record.get("given")
            if isinstance(ids, list):
                self.ids = [i for i in ids if isinstance(i, str)]
            claude = record.get("claude")
            if (
                isinstance(claude, dict)
                and isinstance(claude.get("transcript"), str)
                and isinstance(claude.get("offset"), int)
                and isinstance(claude.get("surfaced"), list)
            ):
                self.transcript, self.offset = claude["transcript"], max(0, claude["offset"])
                self.surfaced = [p for p in claude["surfaced"] if isinstance(p, str)]
                self.claude_recalls = claude.get("recalls") is True
        self._set = set(self.ids)

    def __contains__(self, key: str) -> bool:
        return key in self._set

    def add(self, keys: list[str]) -> None:
        """Record `keys` as given (OSError when the record cannot be written)."""
        if self.path is None or not keys:
            return
        self.ids = (self.ids + [k for k in keys if k not in self._set])[-MAX_IDS:]
        self._set = set(self.ids)
        self.dirty = True
        self.save()

    def read_to(self, transcript: str, offset: int, surfaced: list[str], recalls: bool) -> None:
        """Note that `transcript` was read up to `offset`, Claude Code surfacing `surfaced` there (and
        recalling by itself when `recalls`); written by the next `save`."""
        if transcript != self.transcript:
            self.surfaced = []
        self.transcript, self.offset = transcript, offset
        self.surfaced = list(dict.fromkeys(self.surfaced + surfaced))[-MAX_IDS:]
        self.claude_recalls = self.claude_recalls or recalls
        self.dirty = True

    def save(self) -> None:
        """Write the record (OSError when it cannot be)."""
        if self.path is None or not self.dirty:
            return
        new = not os.path.exists(self.path)
        make_dirs(self.folder)
        record: dict = {"given": self.ids}
        if self.transcript:
            record["claude"] = {
                "transcript": self.transcript,
                "offset": self.offset,
                "surfaced": self.surfaced,
                "recalls": self.claude_recalls,
            }
        write_json(self.path, record, durable=False, compact=True)
        self.dirty = False
        if new:
            sweep(self.folder, keep=self.path)


def file_name(session_id: str) -> str:
    """A safe file name for a session id: its plain characters (a UUID as Claude Code gives it) and a
    checksum of the whole, so no two ids share a record (hashlib would cost the hook its OpenSSL load)."""
    raw = session_id.encode("utf-8", "replace")
    return f"{re.sub(r'[^A-Za-z0-9-]', '_', session_id[:64])}-{zlib.crc32(raw):08x}"


def sweep(folder: str, keep: str, now: float | None = None) -> int:
    """Remove the records of sessions not heard of for SWEEP_AFTER seconds, and the oldest past
    MAX_SESSIONS; never `keep`. Returns how many went."""
    now = time.time() if now is None else now
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
    except OSError:
        return 0
    aged = []
    for n in names:
        p = os.path.join(folder, n)
        try:
            aged.append((os.stat(p).st_mtime, p))
        except OSError:
            continue
    aged.sort(reverse=True)
    gone = 0
    for i, (mtime, p) in enumerate(aged):
        if p != keep and (now - mtime > SWEEP_AFTER or i >= MAX_SESSIONS):
            try:
                os.unlink(p)
                gone += 1
            except OSError:
                pass
    return gone
