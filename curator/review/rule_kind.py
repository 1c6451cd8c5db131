"""Review items of kind `rule`: failures that recurred across sessions, proposed as a rule for
`.claude/rules/memcurate/<topic>.md`, id `rule/<key>` (curator/rules/candidates.py holds the records).

A pending candidate is `ready` (it always has a text: the offline one until a model drafts it),
BLOCKed when its rule file cannot be written as planned (the plan's error says why), with an ADVISORY
`instruction` issue when its text tells the agent to do harm; approved ones are `saved`, rejected ones
`rejected`; a record that cannot be read, or that the failure ledger does not back, is an `error` with
why. curator/review/rule_actions.py acts on it: view, approve, edit (text, topic, paths), reject, draft.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from memcurate.curator.review import rule_actions
from memcurate.curator.review.items import (
    APPROVE,
    CHANGE,
    EDIT_TEXT,
    EVIDENCE_SESSIONS,
    FIELDS,
    READY,
    RETRY,
    RULE,
    Detail,
    Outcome,
    ReviewItem,
    attempt,
)
from memcurate.curator.review.rule_actions import (
    APPROVED,
    PENDING,
    PREFIX,
    REJECTED,
    RuleError,
    recurred,
    since_written,
    view_of,
    written,
)
from memcurate.curator.rules import candidates, ledger
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

KIND = RULE
STATES = {PENDING: READY, APPROVED: "saved", REJECTED: "rejected"}
# what refuses an approval or a rejection: said, never raised
_REFUSED = (
    RuleError,
    LockBusy,
    OSError,
)


class RuleKind:
    name = KIND
    prefix = PREFIX
    label = KIND  # the queue's category column
    what = "the rule candidates"
    noun = "rule"
    one = "rule candidate"
    rejectable = frozenset({READY})

    def folders(self, engine: Context) -> tuple[str, ...]:
        return (os.path.join(engine.data, ledger.CANDIDATES_DIR),)

    def items(self, engine: Context, every: bool) -> list[ReviewItem]:
        notes: list[str] = []
        found = candidates.all(
            engine.data, every=every, notes=notes, threshold=engine.cfg["rules"]["threshold"]
        )
        out = [self._item(engine, c) for c in found]
        [folder] = self.folders(engine)
        for note in notes:  # a damaged candidate record: named, so it can be fixed or deleted
            path, _, why = note.partition(": ")
            key = os.path.basename(path).removesuffix(".json")
            if os.path.dirname(path) == folder and ledger.is_key(key):
                out.append(
                    ReviewItem(
                        PREFIX + key, self.name, "error", category=KIND, error=f"{path}: {why}"
                    )
                )
        return out

    def _item(self, engine: Context, cand) -> ReviewItem:
        state = STATES.get(cand.state, "error")
        decision = cand.decision or {}
        last = cand.occurrences[-1] if cand.occurrences else {}
        base = dict(
            id=PREFIX + cand.id,
            kind=self.name,
            state=state,
            category=KIND,
            session=last.get("session", ""),
            created=cand.created or "",
        )
        if state != READY:
            view = written(cand)  # what was approved (or rejected) as the person saw it
            return ReviewItem(
                **base,
                title=view["rule"],
                where=decision.get("file", ""),
                reason=str(decision.get("reason") or "") if state == STATES[REJECTED] else "",
                rule=_summary(cand, view, decision.get("file", "")),
            )
        view = view_of(engine, cand)  # the listing loaded it: not read again
        p, issues = view["plan"], tuple(view["issues"])
        return ReviewItem(
            **base,
            title=view["rule"],
            action=p["action"],
            issues=issues,
            blocked=any(i["severity"] == "BLOCK" for i in issues),
            where=p["file"],
            rule=_summary(cand, view, p["file"]),
        )

    def detail(self, engine: Context, item: ReviewItem) -> Detail:
        view = rule_actions.view(engine, item.id)
        p, cand = view["plan"], view["candidate"]
        reasons = [
            f"failed the same way in {cand.sessions} session{'' if cand.sessions == 1 else 's'}"
        ]
        if view["since"]:
            reasons.append(recurred(view["since"]))
        if p["action"] == "noop" and item.state == READY:
            reasons.append("the rule is already in the file: approving writes nothing")
        # damaged files: named, so they can be fixed
        reasons += [f"evidence skipped: {note}" for note in cand.notes]
        return Detail(
            item,
            p["after"] or "",
            rule_actions.fingerprint(view),
            decision={"action": p["action"], "target": p["file"], "reasons": reasons},
            diff=p["diff"] or "",
            issues=tuple(view["issues"]),
            editor=FIELDS,
            # the presenter's: the newest sessions and how many were read (`shown` has them all)
            view={
                **view,
                "candidate": replace(cand, occurrences=cand.occurrences[-EVIDENCE_SESSIONS:]),
                "evidence_sessions": len(cand.occurrences),
            },
            shown={
                "rule": item.rule,
                "failure": cand.failure,
                "evidence": cand.occurrences,
                "draft": cand.draft,
                "edit": cand.edit,
            },
        )

    def approve(
        self, engine: Context, items: list[ReviewItem], seen: Mapping[str, str] | None = None
    ) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            done = rule_actions.approve(engine, item.id, (seen or {}).get(item.id))
            return Outcome(
                item.id,
                True,
                done["action"],
                done["path"],
                done["file"],
                said=f"rule written: {done['file']}",
            )

        return [attempt(item, one, _REFUSED, (LockBusy,)) for item in items]

    def reject(self, engine: Context, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            rule_actions.reject(engine, item.id, reason)
            said = f"rejected the rule: it is not proposed again ({one_line(item.title, 60)})"
            return Outcome(item.id, True, said=said)

        return attempt(item, one, _REFUSED, (LockBusy,))

    def edit(self, engine: Context, item: ReviewItem, value) -> Outcome:
        """`value`: {rule, topic, paths}; ValueError with the reason when the edit is invalid (the
        edit dialog says it and stays open)."""
        rule_actions.edit(engine, item.id, value["rule"], value["topic"], list(value["paths"]))
        return Outcome(item.id, True, said=f"rule edited: {one_line(value['rule'], 80)}")

    def why_not(
        self, action: str, item: ReviewItem | None, detail: Detail | None = None
    ) -> str | None:
        if action == APPROVE and item is not None:
            blocks = [i for i in item.issues if i.get("severity") == "BLOCK"]
            if blocks:
                return f"this rule cannot be written: {blocks[0].get('message') or ''}"
        return NOT_FOR.get(action)

    def draft(self, engine: Context) -> dict:
        done = rule_actions.draft_all(engine)
        return {
            "drafted": done["drafted"],
            "failed": [{"triage": f["id"], "error": f["error"]} for f in done["failed"]],
        }


NOT_FOR = {
    EDIT_TEXT: "a rule is edited here: e changes its text, topic and paths",
    CHANGE: "a rule has no action to choose: a writes it into its rule file, r rejects it",
    RETRY: "a rule has nothing to retry: e changes its text, r rejects it",
}


def _summary(cand, view: dict, file: str) -> dict:
    """What `list --json` carries for a rule beside the item: count, kind, signature, paths, topic, file."""
    failure = cand.failure or {}
    return {
        "count": cand.sessions,
        "kind": failure.get("kind", ""),
        "tool": failure.get("tool", ""),
        "signature": one_line(failure.get("signature", ""), 300),
        "rule": view["rule"],
        "topic": view["topic"],
        "paths": view["paths"],
        "file": file,
        "since_written": since_written(cand),
    }
