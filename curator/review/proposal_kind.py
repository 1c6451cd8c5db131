"""Review items of kind `proposal`: changes to existing memories that a check, tidy or the library
proposed, id `proposal/<id>` (curator/proposals/store.py holds the records).

A pending proposal is `ready`, BLOCKed when its change cannot be applied as planned (a file changed
since: stale, or a text that does not verify), with an ADVISORY `instruction` issue when a text it writes
tells the agent to do harm; approved ones are `saved`, rejected ones `rejected`; a damaged record (one
that cannot be read, or an op reaching outside the memory root) is an `error` naming its file and why.
Its action is the proposal's kind (update, merge, archive, adopt, unlink). Every action is the Engine's
own call: `proposal`, `approve_proposal`, `reject_proposal`.
"""

from __future__ import annotations

from memcurate.curator.proposals.actions import damage
from memcurate.curator.proposals.store import (
    APPROVED,
    PENDING,
    PREFIX,
    REJECTED,
    ProposalError,
    scan,
)
from memcurate.curator.review.items import ERROR, READY, Outcome, ReviewItem, attempt
from memcurate.curator.util.locks import LockBusy

KIND = "proposal"
STATES = {PENDING: READY, APPROVED: "saved", REJECTED: "rejected"}
# what refuses an approval or a rejection: said, never raised
_REFUSED = (
    ProposalError,
    LockBusy,
    OSError,
)


class ProposalKind:
    name = KIND
    rejectable = frozenset({READY})

    def items(self, engine, every: bool) -> list[ReviewItem]:
        records, damaged = scan(engine.data)
        out = [self._item(engine, r) for r in records if every or r["state"] == PENDING]
        out += [
            ReviewItem(PREFIX + pid, self.name, ERROR, category=KIND, error=why)
            for pid, why in damaged
        ]
        return out

    def _item(self, engine, record: dict) -> ReviewItem:
        state = STATES[record["state"]]
        decision = record.get("decision") or {}
        base = dict(
            id=PREFIX + record["id"],
            kind=self.name,
            state=state,
            category=KIND,
            title=record["title"],
            action=record["kind"],
            created=record["created"],
            reason=str(decision.get("reason") or ""),
        )
        if state != READY:
            return ReviewItem(**base, where=", ".join(decision.get("written") or ()))
        why = damage(engine, record)
        if why:  # an op reaching outside the memory root: named, never planned nor applied
            return ReviewItem(
                **{**base, "state": ERROR}, error=f"{record['id']}: does not check out: {why}"
            )
        try:
            view = engine.proposal(record["id"])
        # a hand-edited op, an unreadable root: named
        except (
            ProposalError,
            ValueError,
            KeyError,
            OSError,
        ) as e:
            return ReviewItem(
                **{**base, "state": ERROR}, error=f"{record['id']}: cannot be planned: {e}"
            )
        files = (view["planned"] or {}).get("files") or ()
        return ReviewItem(
            **base,
            issues=tuple(view["issues"]),
            blocked=any(i["severity"] == "BLOCK" for i in view["issues"]),
            where=", ".join(f["where"] for f in files),
        )

    def show(self, engine, item: ReviewItem) -> dict:
        view = engine.proposal(item.id)
        record, planned = view["record"], view["planned"] or {}
        files = planned.get("files") or []
        writes = [op for op in (record["edit"] or record["ops"]) if op.get("op") == "write"]
        reasons = [record["reason"]] if record["reason"] else []
        if record.get("finding"):
            f = record["finding"]
            reasons.append(f"found by {record['source']}: {f['code']} ({', '.join(f['refs'])})")
        if record.get("edit") is not None:
            reasons.append("edited by you: approving writes your text")
        return {
            "text": writes[0].get("text", "") if len(writes) == 1 else "",
            "diff": "".join(f.get("diff") or "" for f in files),
            "files": files,
            "confidence": {},
            "archive": {},
            "fingerprint": planned.get("fingerprint"),
            "proposal": record,
            "decision": {"action": record["kind"], "target": item.where, "reasons": reasons},
        }

    def approve(self, engine, items: list[ReviewItem]) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            record = engine.approve_proposal(item.id)
            written = record["decision"].get("written") or []
            return Outcome(item.id, True, record["kind"], where=", ".join(written))

        return [attempt(item, one, _REFUSED) for item in items]

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            engine.reject_proposal(item.id, reason)
            return Outcome(item.id, True)

        return attempt(item, one, _REFUSED)
