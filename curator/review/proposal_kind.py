"""Review items of kind `proposal`: changes to existing memories that a check, tidy or the library
proposed, id `proposal/<id>` (curator/proposals/store.py holds the records).

A pending proposal is `ready`, BLOCKed when its change cannot be applied as planned (a file changed
since: stale, or a text that does not verify), with an ADVISORY `instruction` issue when a text it writes
tells the agent to do harm; approved ones are `saved`, rejected ones `rejected`; a damaged record (one
that cannot be read, or an op reaching outside the memory root) is an `error` naming its file and why.
Its action is the proposal's kind (update, merge, archive, adopt, unlink); curator/proposals/actions.py
acts on it: view, approve (with the plan's fingerprint shown), edit (its one memory file), reject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from memcurate.curator.proposals import actions, store
from memcurate.curator.proposals.actions import damage
from memcurate.curator.proposals.store import (
    APPROVED,
    PENDING,
    PREFIX,
    REJECTED,
    ProposalError,
    ops_of,
    scan,
)
from memcurate.curator.review.items import (
    CHANGE,
    EDIT,
    EDIT_TEXT,
    ERROR,
    READY,
    RETRY,
    TEXT,
    Detail,
    Outcome,
    ReviewItem,
    attempt,
)
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

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
    prefix = PREFIX
    label = KIND  # the queue's category column
    what = "the proposals"
    noun = "proposal"
    one = "proposal"
    rejectable = frozenset({READY})

    def folders(self, engine: Context) -> tuple[str, ...]:
        return (store.folder(engine.data),)

    def items(self, engine: Context, every: bool) -> list[ReviewItem]:
        records, damaged = scan(engine.data)
        out = [self._item(engine, r) for r in records if every or r["state"] == PENDING]
        out += [
            ReviewItem(PREFIX + pid, self.name, ERROR, category=KIND, error=why)
            for pid, why in damaged
        ]
        return out

    def _item(self, engine: Context, record: dict) -> ReviewItem:
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
            view = actions.view(engine, record["id"])
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

    def detail(self, engine: Context, item: ReviewItem) -> Detail:
        view = actions.view(engine, item.id)
        record, planned = view["record"], view["planned"] or {}
        files = planned.get("files") or []
        try:
            text = actions.the_write(ops_of(record)).get("text")
        except ProposalError:  # it writes no single memory file: nothing to edit
            text = None
        reasons = [record["reason"]] if record["reason"] else []
        if record.get("finding"):
            f = record["finding"]
            reasons.append(f"found by {record['source']}: {f['code']} ({', '.join(f['refs'])})")
        if record.get("edit") is not None:
            reasons.append("edited by you: approving writes your text")
        return Detail(
            item,
            text,
            planned.get("fingerprint") or "",
            decision={"action": record["kind"], "target": item.where, "reasons": reasons},
            diff="".join(f.get("diff") or "" for f in files),
            issues=tuple(view["issues"]),
            editor=TEXT if text is not None else "",
            view={**view, "text": text},
            shown={"files": files, "fingerprint": planned.get("fingerprint"), "proposal": record},
        )

    def approve(
        self, engine: Context, items: list[ReviewItem], seen: Mapping[str, str] | None = None
    ) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            record = actions.approve(engine, item.id, (seen or {}).get(item.id))
            written = record["decision"].get("written") or []
            said = f"applied: {', '.join(written) or 'nothing to write'}"
            return Outcome(item.id, True, record["kind"], where=", ".join(written), said=said)

        return [attempt(item, one, _REFUSED, (LockBusy,)) for item in items]

    def reject(self, engine: Context, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            actions.reject(engine, item.id, reason)
            said = f"rejected: it is not proposed again ({one_line(item.title, 60)})"
            return Outcome(item.id, True, said=said)

        return attempt(item, one, _REFUSED, (LockBusy,))

    def edit(self, engine: Context, item: ReviewItem, value) -> Outcome:
        """The person's text for the one memory file it writes, re-verified (a BLOCK said, kept)."""

        def one(item: ReviewItem) -> Outcome:
            view = actions.edit(engine, item.id, str(value))
            blocked = "BLOCKED — see the issues" if view["issues"] else "no blocking issue"
            return Outcome(item.id, True, said=f"edited: {blocked}")

        return attempt(item, one, _REFUSED, (LockBusy,))

    def why_not(
        self, action: str, item: ReviewItem | None, detail: Detail | None = None
    ) -> str | None:
        if action == EDIT and detail is not None and detail.text is None:
            return (
                "this proposal writes no single memory file to edit: approve (a) or reject (r) it"
            )
        return NOT_FOR.get(action)


_AS_PROPOSED = "a proposal is approved (a) or rejected (r) as a whole"
NOT_FOR = {
    EDIT_TEXT: "a proposal is edited here: e edits the memory file it writes",
    CHANGE: f"a proposal has no action to choose: {_AS_PROPOSED}",
    RETRY: f"a proposal was not drafted: there is nothing to retry; {_AS_PROPOSED}",
}
