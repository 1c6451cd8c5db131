"""Review items of kind `claude-write`: Claude's own memory writes staged in review mode, id
`claude/<write id>` (curator/candidates/claude_writes.py holds the records).

A pending write is `ready` for review; saved and rejected ones are done. Every action is the
Engine's own call: `claude_write` to show, `approve_claude_write`, `reject_claude_write`.
"""

from __future__ import annotations

from memcurate.curator.candidates import claude_writes
from memcurate.curator.review.claude_write_actions import KIND, memory_dir
from memcurate.curator.review.claude_write_checks import check, front_matter
from memcurate.curator.review.items import READY, Outcome, ReviewItem, attempt
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.redact import redact_all, redact_text
from memcurate.curator.verify.checks import blocking


class ClaudeWriteKind:
    name = KIND
    rejectable = frozenset({READY})

    def items(self, engine, every: bool) -> list[ReviewItem]:
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
        for (
            wid,
            why,
        ) in unreadable:
            out.append(ReviewItem(claude_writes.PREFIX + wid, self.name, "error", error=why))
        return out

    def show(self, engine, item: ReviewItem) -> dict:
        view = engine.claude_write(item.id)
        return {
            "text": view["text"],
            "diff": view["diff"],
            "confidence": {},
            "archive": {},
            "decision": {
                "action": item.action,
                "target": item.where,
                "reasons": [
                    f"Claude's own {view['tool']} into its auto-memory folder, staged for review"
                ],
            },
        }

    def approve(self, engine, items: list[ReviewItem]) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            record = engine.approve_claude_write(item.id)
            return Outcome(item.id, True, item.action, record["path"], record["where"])

        return [
            attempt(item, one, (claude_writes.ClaudeWriteError, LockBusy, OSError))
            for item in items
        ]

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            engine.reject_claude_write(item.id, reason)
            return Outcome(item.id, True)

        return attempt(item, one, (claude_writes.ClaudeWriteError, LockBusy))


def _title(record: dict) -> str:
    """The front matter's name when Claude gave one, else the file's path in the auto-memory folder."""
    fields, _ = front_matter(record["text"])
    name = fields.get("name") if fields else None
    return redact_text(name.strip()) if isinstance(name, str) and name.strip() else record["where"]
