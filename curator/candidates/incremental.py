"""Capture: triage the bytes of a transcript not yet triaged, and stage what triggers.

Shared by the hook (one call per Stop/SubagentStop/PreCompact/SessionEnd) and
by `memcurate triage` (backfill). Per transcript, the data dir keeps where the
last pass ended (`offsets/<key>.json`); a lock per transcript makes two passes
over the same bytes impossible, and the state is written only after the
triage is staged, so a pass killed half-way is simply done again (the triage
id is derived from the transcript and the byte offset, so it is never staged
twice).
"""

from __future__ import annotations

import errno
import os
import zlib

from memcurate.curator.errors import DamagedError
from memcurate.curator.util.atomic import read_json, write_json
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.safe_open import Refused, open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    from collections.abc import Callable, Iterable
    from typing import BinaryIO

    from memcurate.curator.capture.transcript import Entry

HEAD_BYTES = 4096
MAX_PASSES = 50
ASKS_THE_PERSON = frozenset({"AskUserQuestion", "ExitPlanMode"})
# words the person wrote since the last look that make one worth its tokens, with no cue
LOOK_MIN_WORDS = 10

_rules_cache: dict = {}


class CaptureSkipped(DamagedError):
    """The transcript cannot be triaged (missing, not a regular file, a symlink, unreadable, or refused by
    the caller's `may_read`). The message says why."""


def rules_for(cfg: dict):
    from memcurate.curator.capture.triage import Rules

    r = _rules_cache.get(id(cfg))
    if r is None:
        _rules_cache.clear()
        r = _rules_cache[id(cfg)] = Rules(cfg)
    return r


_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def transcript_key(path: str) -> str:
    """A file name for per-transcript state: readable stem plus a checksum of the full path. (No regex:
    compiling one costs each hook call more than this loop over a file name.)"""
    stem = "".join(c if c in _KEY_CHARS else "-" for c in os.path.basename(path))[:60]
    return f"{stem}-{zlib.crc32(path.encode('utf-8', 'surrogateescape')):08x}"


def is_subagent_transcript(path: str) -> bool:
    return os.path.basename(path).startswith("agent-")


def _head_crc(f: BinaryIO, length: object) -> int:
    """The checksum of the transcript's first `length` bytes, read from its one descriptor; -1 (no
    checksum's) for a length the offset state cannot hold (it is in the data dir: anything can be there)."""
    if not isinstance(length, int) or isinstance(length, bool) or not 0 <= length <= HEAD_BYTES:
        return -1
    return zlib.crc32(os.pread(f.fileno(), length, 0)) if length else 0


def _fresh_state(path: str) -> dict:
    return {
        "transcript": path,
        "offset": 0,
        "head_len": 0,
        "head_crc": 0,
        "turns": 0,
        "digest": {},
        "passes": [],
        "look_from": 0,
        "look_turns": 0,
        "look_found": [],
        "look_checked": 0,
        "look_words": 0,
    }


def segment_due(cfg: dict, event: str, subagent: bool, unlooked: int) -> bool:
    """Whether a pass at an event other than `second_look.events` (a Stop, after each turn) finds a segment's
    worth of a session's own transcript not looked at yet (`unlooked` bytes, at least `second_look.segment_bytes`):
    then a long session is looked at in segments as it goes. A byte count: the hook pays nothing more."""
    look = cfg.get("second_look") or {}
    segment = look.get("segment_bytes") or 0
    return (
        not subagent
        and bool(look.get("enabled"))
        and event not in look.get("events", ())
        and bool(segment)
        and unlooked >= segment
    )


def wants_second_look(cfg: dict, event: str, subagent: bool, unlooked: int = 0) -> bool:
    """Whether this pass asks for a second look at the session (drafting with Claude, issues 10 §4, 23): at
    the events configured, or at another once a segment is due (segment_due), for a session's own transcript
    (a subagent's is part of its parent's session), unless it is turned off or the backend drafts offline
    (which never makes the call): `backend: offline`, or `auto` finding neither ANTHROPIC_API_KEY nor
    `claude` here."""
    look = cfg.get("second_look") or {}
    if subagent or not look.get("enabled"):
        return False
    if event not in look.get("events", ()) and not segment_due(cfg, event, subagent, unlooked):
        return False  # nearly every Stop ends here
    backend = cfg.get("backend")
    if backend == "auto":
        from memcurate.curator.backends import choose

        backend = choose(cfg).backend
    return backend != "offline"


def _offset(state: dict, key: str) -> int:
    """A byte offset the state keeps, 0 when it holds anything else (the data dir is in Claude's reach)."""
    value = state.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def offset_state_path(data: str, path: str) -> str:
    """Where a transcript's offset state lives in the data dir (`path` absolute)."""
    return os.path.join(data, "offsets", f"{transcript_key(path)}.json")


def unread_bytes(data: str, transcript: str) -> int:
    """The transcript's bytes past where the last pass ended (all of it when no pass did): a stat and a small
    read, for the hook to judge a pass's size before making it. A state the capture would refuse counts as none
    read (it is in the data dir, in Claude's reach), so the figure only errs towards more."""
    path = os.path.abspath(transcript)
    try:
        size = os.stat(path).st_size
    except OSError:
        return 0  # the capture says why
    state, _ = _load_state(offset_state_path(data, path), path)
    offset = _offset(state, "offset")
    return size - offset if offset <= size else size


def _load_state(state_path: str, path: str) -> tuple[dict, str | None]:
    try:
        st = read_json(state_path)
    except FileNotFoundError:
        return _fresh_state(path), None
    except (OSError, ValueError) as e:
        return _fresh_state(
            path
        ), f"offset state unreadable, starting over ({e.__class__.__name__})"
    if (
        not isinstance(st, dict)
        or not isinstance(st.get("offset"), int)
        or st.get("transcript") != path
    ):
        return _fresh_state(path), "offset state malformed, starting over"
    return st, None


def _triage_id(first_timestamp: str, path: str, start: int, kind: str, head_crc: int) -> str:
    """Time of the first record, then a checksum of what the bytes are: the same bytes of the same
    transcript always give the same id (so they are never staged twice), a rewritten one a new id."""
    digits = "".join(c for c in first_timestamp if "0" <= c <= "9")[:14]
    stamp = f"{digits[:8]}T{digits[8:14]}Z" if len(digits) == 14 else "00000000T000000Z"
    key = f"{path}:{start}:{kind}:{head_crc}".encode("utf-8", "surrogateescape")
    return f"{stamp}-{zlib.crc32(key):08x}"


def capture(
    data: str,
    cfg: dict,
    transcript: str,
    *,
    event: str,
    session_id: str = "",
    subagent: bool | None = None,
    summary: bool | None = None,
    lock_wait: float | None = None,
    may_read: Callable[[str], str | None] | None = None,
) -> dict:
    """Triage the new bytes of `transcript`; stage a triage when a category triggers.

    Returns a report: status (staged | no-trigger | nothing-new), the byte
    range read, the triage id, per-category scores, reader stats and notes.
    Raises CaptureSkipped when the transcript cannot be read, LockBusy when
    another pass holds it longer than `lock_wait`.

    The transcript is opened once (open_regular: never a final symlink, a FIFO or a device) and
    every byte of the pass is read from that descriptor; `may_read` (the hook's folder rule) is asked
    where the opened file really is, so a path swapped after the caller checked it is never read.
    """
    path = os.path.abspath(transcript)
    f = _open(path, may_read)
    with f:
        return _capture(
            data,
            cfg,
            path,
            f,
            event=event,
            session_id=session_id,
            subagent=subagent,
            summary=summary,
            lock_wait=lock_wait,
        )


def _open(path: str, may_read) -> BinaryIO:
    """The transcript's one descriptor; CaptureSkipped saying why not."""
    try:
        return open_regular(path, may_read)
    except FileNotFoundError:
        raise CaptureSkipped(f"transcript not found: {path}") from None
    except Refused as e:
        raise CaptureSkipped(f"transcript {e.strerror}: {path}: not read") from None
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise CaptureSkipped(f"transcript is a symbolic link: {path}: not followed") from None
        raise CaptureSkipped(f"transcript unreadable: {path}: {e.strerror}") from None


def _capture(
    data: str,
    cfg: dict,
    path: str,
    f: BinaryIO,
    *,
    event: str,
    session_id: str,
    subagent: bool | None,
    summary: bool | None,
    lock_wait: float | None,
) -> dict:
    if subagent is None:
        subagent = is_subagent_transcript(path)
    if summary is None:
        summary = event in cfg["hooks"]["summary_events"]
    wait = cfg["hooks"]["lock_wait_seconds"] if lock_wait is None else lock_wait

    key = transcript_key(path)
    state_path = offset_state_path(data, path)
    with FileLock(os.path.join(data, "locks", f"{key}.lock"), wait=wait):
        state, note = _load_state(state_path, path)
        notes = [note] if note else []
        size = os.fstat(f.fileno()).st_size
        start = state["offset"]
        try:
            if start > size:
                notes.append(f"transcript shrank from {start} to {size} bytes: triaging it anew")
                state = _fresh_state(path)
                start = 0
            elif start and _head_crc(f, state["head_len"]) != state["head_crc"]:
                notes.append("transcript was replaced: triaging it anew")
                state = _fresh_state(path)
                start = 0
        except OSError as e:
            raise CaptureSkipped(f"transcript unreadable: {path}: {e.strerror}") from None

        pending_summary = summary and bool(state.get("digest"))
        # The bytes since the last second look of this transcript: a byte is never looked at twice.
        look_from = _offset(state, "look_from")
        # A segment's worth not looked at, counted from where a due look was last not asked (the backend
        # drafted offline): an offline session pays for that check once a segment, not after every turn.
        unlooked = size - max(look_from, _offset(state, "look_checked")) if start < size else 0
        segment = segment_due(cfg, event, subagent, unlooked)
        look = wants_second_look(cfg, event, subagent, unlooked)
        pending_look = look and look_from < size
        if start == size and not pending_summary and not pending_look:
            return _report(path, "nothing-new", start, start, None, {}, None, notes)

        # Imported only when there is work: the nothing-new pass stays cheap.
        from memcurate.curator.capture.transcript import FORK_BYTES, TranscriptReader
        from memcurate.curator.capture.triage import Digest, Triage

        digest = Digest(state.get("digest"))
        rules = rules_for(cfg)
        reader = TranscriptReader(
            f,
            start,
            turn_base=state.get("turns", 0),
            limit=size,
            max_line_bytes=cfg["triage"]["max_line_bytes"],
            outputs_of=rules.error_tools,
            max_message_chars=rules.max_message_chars,
        )
        # its quotes of a summary: from the same descriptor
        t = Triage(rules, digest, subagent=subagent, path=f, open_runs=state.get("open"))
        first_ts = last_ts = ""
        words = 0  # the person wrote, in these bytes: whether a look is worth its tokens
        # A long stretch is read in a forked child while this process triages what it sends (the same
        # entries, stats and turns), when a core is free for it.
        entries: Iterable[Entry] = reader
        if size - start >= FORK_BYTES:
            from memcurate.curator.util.cores import free_core

            if free_core():
                entries = reader.forked()
        try:
            for entry in entries:
                if entry.timestamp:
                    first_ts = first_ts or entry.timestamp
                    last_ts = entry.timestamp
                if not session_id and entry.session_id:
                    session_id = entry.session_id
                if entry.kind == "user":
                    words += len(entry.text.split())
                elif entry.tool_uses and any(u.name in ASKS_THE_PERSON for u in entry.tool_uses):
                    words += LOOK_MIN_WORDS  # a question or a plan put to the person: their answer decides
                t.add(entry)
        except OSError as e:
            raise CaptureSkipped(f"transcript unreadable: {path}: {e.strerror}") from None
        end = reader.stats.end
        if end == start and not pending_summary and not pending_look:
            return _report(path, "nothing-new", start, end, None, {}, reader.stats, notes)
        if reader.stats.lines and reader.stats.bad == reader.stats.lines:
            notes.append(f"no transcript records in {reader.stats.lines} lines: not a transcript?")
        notes += _cut_notes(reader.stats)

        result = t.result(summary=summary, subagent=subagent)
        triggered = [n for n, c in result.items() if c.get("triggered")]
        head_len = min(end, HEAD_BYTES)
        head_crc = _head_crc(f, head_len)  # 0 for an empty stretch (head_len 0)
        # Categories the keywords found since the last look: the look adds only others.
        found = sorted(
            set(state.get("look_found") or ()) | {n for n in triggered if n != "session_summary"}
        )
        # Whether a look is worth its tokens, as triage tells: since the last look, some cue scored, the session's
        # activity makes a summary, or the person wrote LOOK_MIN_WORDS words or more. A stretch with none of these
        # (an empty session, a greeting) is not sent; its bytes wait for the next look, read with what follows.
        words += _offset(state, "look_words")
        worth = (
            words >= LOOK_MIN_WORDS
            or result["session_summary"].get("triggered") is True
            or any(
                (c.get("score") or 0) > 0
                for n, c in result.items()
                if n != "session_summary" and isinstance(c, dict)
            )
        )
        request = None
        if look and look_from < end and worth:
            request = {
                "byte_range": [look_from, end],
                "turn_base": state.get("look_turns", 0),
                "already": found,
            }
        elif look and look_from < end:
            notes.append(
                f"no second look: nothing worth a call in bytes {look_from}..{end} (no cue scored, "
                f"fewer than {LOOK_MIN_WORDS} words from the person)"
            )
        tid = None
        if triggered or request:
            from memcurate.curator.candidates import (
                staging,  # only when there is something to stage
            )

            kind = "summary" if end == start else "bytes"
            # A summary made with no new bytes sorts after the last record it summarises.
            tid = _triage_id(
                first_ts or state.get("last_timestamp", ""), path, start, kind, head_crc
            )
            source = {
                "session": session_id or state.get("session", ""),
                "transcript": path,
                "subagent": subagent,
                "byte_range": [start, end],
                "turns": t.turns or ([state.get("turns", 0)] * 2),
            }
            if t.fixed_from is not None and t.fixed_from < start:
                # a fix here of a failure an earlier pass read: its evidence starts there
                source["context_from"] = t.fixed_from
            doc = {
                "format": staging.FORMAT,
                "id": tid,
                "created": staging.now_iso(),
                "event": event,
                "source": source,
                "stats": reader.stats.as_dict(),
                "categories": result,
            }
            if request:
                doc["second_look"] = request  # done later, by whoever drafts (never the hook)
                notes.append(f"second look asked for bytes {look_from}..{end}")
            if staging.stage(data, doc) is None:
                notes.append(f"triage {tid} was already staged")

        if t.failed_runs:  # after the triage is staged; it never fails the capture (a note instead)
            from memcurate.curator.rules.transcript_failures import record_runs

            notes += record_runs(
                data,
                cfg,
                t.failed_runs,
                session=session_id or state.get("session", ""),
                transcript=path,
            )

        # Only now, with the triage safely staged, move the offset past these bytes.
        summarised = summary and result["session_summary"].get("skipped") is None
        passes = (state.get("passes") or [])[-(MAX_PASSES - 1) :] + [[start, end, tid, event]]
        new_state = {
            "transcript": path,
            "offset": end,
            "head_len": head_len,
            "head_crc": head_crc,
            "turns": reader.turn,
            "session": session_id or state.get("session", ""),
            "last_timestamp": last_ts or state.get("last_timestamp", ""),
            "digest": {} if summarised else t.digest.as_dict(),
            # a failure whose fix comes in the next pass (the next turn, or bytes not flushed yet)
            "open": t.open_state(),
            "passes": passes,
            "look_from": end if request else look_from,
            "look_turns": reader.turn if request else state.get("look_turns", 0),
            "look_found": [] if request else found,
            "look_words": 0 if request else (words if not worth else max(words, LOOK_MIN_WORDS)),
            # A segment was due and no look asked (offline): the next check waits for another segment's bytes.
            "look_checked": end if segment and not request else _offset(state, "look_checked"),
        }
        # Not fsynced: losing it to a power cut only repeats the last pass, whose
        # triage id is already staged and so is not staged twice.
        write_json(state_path, new_state, durable=False, compact=True)
        return _report(
            path, "staged" if tid else "no-trigger", start, end, tid, result, reader.stats, notes
        )


def _cut_notes(stats) -> list[str]:
    """One note per message scored only in part (the first few, then how many more)."""
    notes = [
        f"{'user message' if c['kind'] == 'user' else 'assistant reply'} at turn {c['turn']}: "
        f"{c['bytes'] / 1e6:.1f} MB, scored the first and last {c['kept']:,} characters"
        for c in stats.cut[:3]
    ]
    if stats.cut_count > len(notes):
        notes.append(
            f"{stats.cut_count - len(notes)} more messages scored in part (see the triage's stats)"
        )
    return notes


def _report(path, status, start, end, tid, result, stats, notes) -> dict:
    return {
        "transcript": path,
        "status": status,
        "byte_range": [start, end],
        "triage": tid,
        "categories": [
            {"category": n, "score": c["score"], "triggered": c["triggered"]}
            for n, c in result.items()
        ],
        "stats": stats.as_dict() if stats else None,
        "notes": notes,
    }
