"""Review items of kind `claude-write`: Claude's own memory writes staged in review mode, id
`claude/<write id>` (curator/candidates/claude_writes.py holds the records).

A pending write is `ready` for review; saved and rejected ones are done. It is approved or rejected
as Claude wrote it, never edited (curator/review/claude_write_actions.py acts on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from memcurate.curator.candidates import claude_writes
from memcurate.curator.categories import CLAUDE
from memcurate.curator.review import claude_write_actions
from memcurate.curator.review.claude_write_actions import KIND, memory_dir
from memcurate.curator.review.claude_write_checks import check, front_matter
from memcurate.curator.review.items import (
    CHANGE,
    EDIT,
    EDIT_TEXT,
    READY,
    RETRY,
    Detail,
    Outcome,
    ReviewItem,
    attempt,
)
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.redact import redact_all, redact_text
from memcurate.curator.verify.checks import blocking

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


class ClaudeWriteKind:
    name = KIND
    prefix = claude_writes.PREFIX
    label = CLAUDE  # the queue's category column
    what = "Claude's staged writes"
    noun = "Claude's write"
    one = "staged write of Claude's"
    rejectable = frozenset({READY})

    def folders(self, engine: Context) -> tuple[str, ...]:
        return (claude_writes.folder(engine.data),)

    def items(self, engine: Context, every: bool) -> list[ReviewItem]:
        out = []
        # read once (each check looks at the others), checked against Claude's memory folder as it is now
        records, unreadable = claude_writes.scan(engine.data, memory_dir(engine))
        for record in records:
            pending = record["state"] == claude_writes.PENDING
            if not (pending or every):
                continue
            issues = check(record, engine.cfg, engine.data, records) if pending else []
            last = (record.get("history") or [{}])[-1]
            out.append(
                ReviewItem(
                    claude_writes.PREFIX + record["id"],
                    self.name,
                    READY if pending else record["state"],
                    title=_title(record),
                    action="update" if record.get("base_hash") else "create",
                    issues=tuple(redact_all(i.as_dict()) for i in issues),
                    blocked=bool(blocking(issues)),
                    where=record["where"],
                    session=record.get("session_id") or "",
                    created=record.get("created") or "",
                    reason=str(last.get("why") or "")
                    if record["state"] == claude_writes.REJECTED
                    else "",
                )
            )
        # unreadable or damaged: named, so it can be deleted, never acted on
        for wid, why in unreadable:
            out.append(ReviewItem(claude_writes.PREFIX + wid, self.name, "error", error=why))
        return out

    def detail(self, engine: Context, item: ReviewItem) -> Detail:
        view = claude_write_actions.view(engine, item.id)
        decision = {
            "action": item.action,
            "target": item.where,
            "reasons": [
                f"Claude's own {view['tool']} into its auto-memory folder, staged for review"
            ],
        }
        return Detail(
            item,
            view["text"],
            view["fingerprint"],
            decision=decision,
            diff=view["diff"],
            issues=tuple(view["issues"]),
            view=view,
        )

    def approve(
        self, engine: Context, items: list[ReviewItem], seen: Mapping[str, str] | None = None
    ) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            shown = (seen or {}).get(item.id)
            record = claude_write_actions.approve(engine, item.id, shown)
            return Outcome(
                item.id,
                True,
                item.action,
                record["path"],
                record["where"],
                said=f"saved Claude's write: {record['where']}",
            )

        return [attempt(item, one, _REFUSED, _BUSY) for item in items]

    def reject(self, engine: Context, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            claude_write_actions.reject(engine, item.id, reason)
            return Outcome(item.id, True, said=f"rejected Claude's write: {item.where or item.id}")

        return attempt(item, one, (claude_writes.ClaudeWriteError, LockBusy), _BUSY)

    def edit(self, engine: Context, item: ReviewItem, value) -> Outcome:
        return Outcome(item.id, False, error=_AS_WRITTEN)

    def why_not(
        self, action: str, item: ReviewItem | None, detail: Detail | None = None
    ) -> str | None:
        return NOT_FOR.get(action)


# busy: Claude is staging a write, or a save is under way
_BUSY = (LockBusy,)
_REFUSED = (claude_writes.ClaudeWriteError, LockBusy, OSError)
# Approving writes exactly what Claude wrote: there is nothing to edit, no action to choose, no draft
# to retry.
_AS_WRITTEN = (
    "Claude's own write is approved or rejected as Claude wrote it: r rejects it (say why), "
    "then ask Claude to write it again"
)
NOT_FOR = {
    EDIT: _AS_WRITTEN,
    EDIT_TEXT: _AS_WRITTEN,
    CHANGE: "Claude's own write has no action to choose: approving writes exactly its text",
    RETRY: "Claude's own write was not drafted by memcurate: there is nothing to retry",
}


def _title(record: dict) -> str:
    """The front matter's name when Claude gave one, else the file's path in the auto-memory folder."""
    fields, _ = front_matter(record["text"])
    name = fields.get("name") if fields else None
    return redact_text(name.strip()) if isinstance(name, str) and name.strip() else record["where"]
