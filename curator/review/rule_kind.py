"""Review items of kind `rule`: failures that recurred across sessions, proposed as a rule for
`.claude/rules/memcurate/<topic>.md`, id `rule/<key>` (curator/rules/candidates.py holds the records).

A pending candidate is `ready` (it always has a text: the offline one until a model drafts it),
BLOCKed when its rule file cannot be written as planned (the plan's error says why), with an ADVISORY
`instruction` issue when its text tells the agent to do harm; approved ones are `saved`, rejected ones
`rejected`; a record that cannot be read, or that the failure ledger does not back, is an `error` with
why. Every action is the Engine's own call: `rule`, `approve_rule`, `reject_rule`, `draft_rules`.
"""

from __future__ import annotations

import os

from memcurate.curator.review.items import READY, RULE, Outcome, ReviewItem, attempt
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
from memcurate.curator.rules import ledger
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.textsafe import one_line

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
    rejectable = frozenset({READY})

    def items(self, engine, every: bool) -> list[ReviewItem]:
        notes: list[str] = []
        out = [self._item(engine, c) for c in engine.rule_candidates(every=every, notes=notes)]
        for note in notes:  # a damaged candidate record: named, so it can be fixed or deleted
            path, _, why = note.partition(": ")
            key = os.path.basename(path).removesuffix(".json")
            if os.path.dirname(path) == engine.candidates_dir and ledger.is_key(key):
                out.append(
                    ReviewItem(
                        PREFIX + key, self.name, "error", category=KIND, error=f"{path}: {why}"
                    )
                )
        return out

    def _item(self, engine, cand) -> ReviewItem:
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

    def show(self, engine, item: ReviewItem) -> dict:
        view = engine.rule(item.id)
        p, cand = view["plan"], view["candidate"]
        reasons = [
            f"failed the same way in {cand.sessions} session{'' if cand.sessions == 1 else 's'}"
        ]
        if view["since"]:
            reasons.append(recurred(view["since"]))
        if p["action"] == "noop" and item.state == READY:
            reasons.append("the rule is already in the file: approving writes nothing")
        reasons += [
            f"evidence skipped: {note}" for note in cand.notes
        ]  # damaged files: named, so they can be fixed
        return {
            "text": p["after"] or "",
            "diff": p["diff"] or "",
            "confidence": {},
            "archive": {},
            "decision": {"action": p["action"], "target": p["file"], "reasons": reasons},
            "rule": item.rule,
            "failure": cand.failure,
            "evidence": cand.occurrences,
            "draft": cand.draft,
            "edit": cand.edit,
        }

    def approve(self, engine, items: list[ReviewItem]) -> list[Outcome]:
        def one(item: ReviewItem) -> Outcome:
            done = engine.approve_rule(item.id)
            return Outcome(item.id, True, done["action"], done["path"], done["file"])

        return [attempt(item, one, _REFUSED) for item in items]

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome:
        def one(item: ReviewItem) -> Outcome:
            engine.reject_rule(item.id, reason)
            return Outcome(item.id, True)

        return attempt(item, one, _REFUSED)

    def draft(self, engine) -> dict:
        done = engine.draft_rules()
        return {
            "drafted": done["drafted"],
            "failed": [{"triage": f["id"], "error": f["error"]} for f in done["failed"]],
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
