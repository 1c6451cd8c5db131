"""Acting on a staged write of Claude's own: show it (text, diff, issues), approve it, reject it.

Approving runs under the memory root's lock and the staged writes' lock. The
target must still hold what it held when the write was first staged (for
MEMORY.md only Claude's part, outside memcurate's sections, counts: memcurate may
have saved meanwhile), else it is a WriteConflict the person sees and nothing is
written. Then exactly the staged text is written atomically; for MEMORY.md,
Claude's text with memcurate's sections as they are now, so no memcurate entry
is lost and no section doubled. Rejecting records the reason and writes nothing.

The target is the record's `where` in Claude's memory folder as resolved now
(claude_writes.target), never the record's own `path`: a record that does not
check out is Damaged, never shown as a write nor approved. What is shown is
redacted (a record staged before the text was stored redacted may hold a secret).
"""

from __future__ import annotations

import difflib
import json
import os
from typing import TYPE_CHECKING

from memcurate.curator.candidates import claude_writes
from memcurate.curator.candidates.claude_writes import (
    PENDING,
    ClaudeWriteError,
    WriteConflict,
    WriteRefused,
)
from memcurate.curator.memory.memory_md.format import MemoryMdError
from memcurate.curator.memory.memory_md.planning import keep_sections
from memcurate.curator.review.claude_write_checks import check, is_memory_md
from memcurate.curator.review.items import CLAUDE_WRITE
from memcurate.curator.util.atomic import write_text
from memcurate.curator.util.redact import redact_all, redact_text
from memcurate.curator.util.stamps import content_hash
from memcurate.curator.verify.checks import blocking

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

KIND = CLAUDE_WRITE


def memory_dir(engine: Context) -> str:
    """Claude's memory folder as resolved now: where every staged write's target is."""
    return claude_writes.memory_folder(engine.project, engine.cfg, engine.data)


def records(engine: Context) -> list[dict]:
    """Every staged write that checks out against Claude's memory folder now, oldest first."""
    return claude_writes.records(engine.data, memory_dir(engine))


def view(engine: Context, wid: str) -> dict:
    """A staged write for showing: its record, `text` (what approving writes), `diff` (unified, against
    the file when it was staged) and `issues` (as dicts), every text redacted."""
    record = claude_writes.find(engine.data, wid, memory_dir(engine))
    issues = [redact_all(i.as_dict()) for i in check(record, engine.cfg, engine.data)]
    shown = _shown(record)
    return {
        **shown,
        "review_id": claude_writes.PREFIX + record["id"],
        "diff": diff(shown),
        "issues": issues,
        "fingerprint": fingerprint(shown),
    }


def _shown(record: dict) -> dict:
    return {
        **record,
        "text": redact_text(record["text"]),
        "base_text": None if record.get("base_text") is None else redact_text(record["base_text"]),
    }


def fingerprint(shown: dict) -> str:
    """One hash of what a `view` shows: the file, what Claude wrote and what was there before it (a
    later write of Claude's to the same file replaces the record's text)."""
    doc = [shown["where"], shown["text"], shown.get("base_text"), shown.get("base_hash")]
    return content_hash(json.dumps(doc, ensure_ascii=False))


def diff(record: dict) -> str:
    where = record["where"]
    return "".join(
        difflib.unified_diff(
            (record.get("base_text") or "").splitlines(keepends=True),
            record["text"].splitlines(keepends=True),
            fromfile=f"a/{where}" if record.get("base_text") is not None else "/dev/null",
            tofile=f"b/{where}",
        )
    )


def approve(engine: Context, wid: str, seen: str | None = None) -> dict:
    """Write the staged text into its target and mark it saved; the saved record. ClaudeWriteError when it
    is not pending or has a BLOCK issue, WriteConflict when the target changed since it was staged, or
    when the write is no longer what the person was shown (`seen`: the `view`'s fingerprint)."""
    with engine.root_lock(), claude_writes.lock(engine.data):
        record = claude_writes.find(engine.data, wid, memory_dir(engine))  # Damaged: never acted on
        rid = claude_writes.PREFIX + record["id"]
        if record["state"] != PENDING:
            raise ClaudeWriteError(f"{rid} is {record['state']}, not pending")
        if seen is not None and fingerprint(_shown(record)) != seen:
            raise WriteConflict(
                f"{rid}: Claude's write changed since you looked: look again; nothing was written"
            )
        blocked = blocking(check(record, engine.cfg, engine.data))
        if blocked:
            raise ClaudeWriteError(
                f"{rid} cannot be saved: " + "; ".join(f"{i.where}: {i.message}" for i in blocked)
            )
        try:
            current = claude_writes.read_disk(record["path"])
        except WriteRefused as e:
            raise WriteConflict(f"{rid}: {e}") from None
        text = _final_text(record, current, rid)
        if current != text:
            _check_base(record, current, rid)
            os.makedirs(os.path.dirname(record["path"]), exist_ok=True)
            write_text(record["path"], text)
        return claude_writes.move(
            engine.data, record, "saved", "approved", saved_hash=content_hash(text)
        )


def _final_text(record: dict, current: str | None, rid: str) -> str:
    if not is_memory_md(record):
        return record["text"]
    try:
        return keep_sections(record["text"], current)
    except MemoryMdError as e:
        raise ClaudeWriteError(
            f"{rid}: MEMORY.md cannot be merged with memcurate's sections: {e}"
        ) from None


def _check_base(record: dict, current: str | None, rid: str) -> None:
    base = record.get("base_text")
    if is_memory_md(record) and base is not None and current is not None:
        # Claude's part to the byte: a person's whitespace edit is a change
        if record.get("base_claude_hash"):
            same = claude_writes.claude_part_hash(current) == record["base_claude_hash"]
        else:  # staged by an older memcurate, its base kept whole
            same = (
                claude_writes.claude_part_hash(current)
                == claude_writes.claude_part_hash(base)
                is not None
            )
    else:
        same = (current is None and base is None) or (
            current is not None and content_hash(current) == record.get("base_hash")
        )
    if not same:
        now = "was deleted" if current is None else ("was created" if base is None else "changed")
        raise WriteConflict(
            f"{rid}: {record['where']} {now} since Claude's write was staged; nothing was written. "
            "Reject it, or look at the file and ask Claude to write it again"
        )


def reject(engine: Context, wid: str, reason: str = "") -> dict:
    """Mark a staged write rejected with the person's reason; nothing is written."""
    with claude_writes.lock(engine.data):
        record = claude_writes.find(engine.data, wid, memory_dir(engine))
        return claude_writes.move(
            engine.data, record, "rejected", reason.strip()[:500] or "rejected"
        )
