"""Acting on a rule-graduation candidate (curator/rules/candidates.py): show it as the person reviews
it, approve it (the rule file written), edit its text, reject it, draft it with Claude.

The text a person reviews is the edit when there is one, else the model's draft, else the offline
text computed when shown (curator/drafting/rule_draft.py): an offline candidate needs no drafting step.
Approving plans the rule file (curator/rules/rulefile.py), writes it and marks the candidate
approved, all under one lock for the rules folder: two approvals at once (two processes, or two
candidates of one topic file) write once, one after the other, and an edit waits for that lock too,
so it is never stored between an approval's reading and its marking. A plan with an error, or a file
that changed since the plan, is a RuleError the caller shows; nothing is written then.

What the person was shown is pinned: the text is worked out again at approval (a model's draft or
an edit may have been stored meanwhile, another approval may have extended the same file), so a
front end passes what it showed (`seen`: the `view` it displayed, or its `fingerprint`) and a
different rule, topic, paths, file, or file text now is refused, nothing written.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from memcurate.curator.drafting import rule_draft as draft
from memcurate.curator.errors import Refusal
from memcurate.curator.rules import candidates, ledger, rulefile
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.stamps import content_hash

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

PREFIX = ledger.PREFIX
PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
# in the data dir's locks/: one writer of .claude/rules/memcurate/ at a time
LOCK = "rule-files.lock"
LOCK_WAIT = 30.0  # seconds an approval or a rejection waits for another one to finish


class RuleError(Refusal, ValueError):
    """What keeps a candidate from being shown or acted on, in one line the person can act on (a ValueError,
    as the Engine's rule methods promise)."""


def key_of(query: str) -> str:
    """`rule/<key>` or `<key>` → `<key>`."""
    return query[len(PREFIX) :] if query.startswith(PREFIX) else query


def find(engine: Context, query: str) -> candidates.RuleCandidate:
    """The candidate `query` names (`rule/<key>`, `<key>`, or a unique prefix of either)."""
    key = key_of(query.strip())
    damaged: list[str] = []
    # the ledger, not the record, says whether it recurred
    threshold = engine.settings.rules.threshold
    found = (
        candidates.load(engine.data, key, notes=damaged, threshold=threshold)
        if ledger.is_key(key)
        else None
    )
    if found is not None:
        return found
    record = (
        [n for n in damaged if n.startswith(ledger.candidate_path(engine.data, key) + ": ")]
        if damaged
        else []
    )
    if record:  # its record is there but damaged: say so, not "no such candidate"
        raise RuleError(record[0])
    matches = [
        c
        for c in candidates.all(engine.data, every=True, threshold=threshold)
        if key and c.id.startswith(key)
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise RuleError(f"{query}: ambiguous, it begins {len(matches)} rule ids")
    raise RuleError(f"{query}: no such rule candidate (see memcurate list --all)")


def text(cand) -> dict:
    """{rule, topic, paths} the person reviews: the edit, else the model's draft, else the offline text,
    computed afresh (a failed call's offline fallback is not reused: its session count would go stale)."""
    drafted = cand.draft if cand.draft and cand.draft.get("by") != "offline" else None
    chosen = cand.edit or drafted
    if chosen and chosen.get("rule"):  # its fields' types were checked when the record was loaded
        return {
            "rule": chosen["rule"],
            "topic": chosen.get("topic") or "",
            "paths": list(chosen.get("paths") or []),
        }
    return draft.offline(cand)


def written(cand) -> dict:
    """{rule, topic, paths} of a decided candidate: what approving wrote, kept in its decision; the text as
    it would be reviewed for a rejected one, or one approved before the decision kept it."""
    decision = cand.decision or {}
    if cand.state == APPROVED and decision.get("rule"):
        return {
            "rule": decision["rule"],
            "topic": decision.get("topic") or "",
            "paths": list(decision.get("paths") or []),
        }
    return text(cand)


def plan(engine: Context, cand, chosen: dict | None = None) -> rulefile.RulePlan:
    chosen = chosen or text(cand)
    return rulefile.plan(engine.project, cand.id, chosen["rule"], chosen["topic"], chosen["paths"])


def plan_dict(p) -> dict:
    """A RulePlan as front ends show it: `file` relative to the project, the texts, the diff, the error."""
    return {**p.as_dict(), "file": p.rel}


def since_written(cand) -> int:
    """Sessions that saw the failure again after its rule was written (0 when not approved)."""
    decision = cand.decision or {}
    if cand.state != APPROVED or not isinstance(decision.get("sessions"), int):
        return 0
    return max(0, cand.sessions - decision["sessions"])


def recurred(n: int) -> str:
    """How a rule's failure coming back after it was written is said (status, list, show)."""
    return f"seen in {n} session{'' if n == 1 else 's'} since it was written"


def view(engine: Context, query: str) -> dict:
    """The candidate as the person reviews it: {candidate, rule, topic, paths, plan, since}."""
    return view_of(engine, find(engine, query))


def view_of(engine: Context, cand) -> dict:
    """`view` of a candidate already loaded (a listing has them all: no second read of its files), with
    its `issues` when pending (see `issues`)."""
    chosen = written(cand)
    shown = plan_dict(plan(engine, cand, chosen))
    return {
        "candidate": cand,
        **chosen,
        "plan": shown,
        "since": since_written(cand),
        "issues": issues(chosen, shown) if cand.state == PENDING else [],
    }


def issues(chosen: dict, shown: dict) -> list[dict]:
    """A pending rule's issues (dicts, as a draft's): a BLOCK when its file cannot be written as planned;
    an ADVISORY `instruction` for each harm its text tells the agent to do (a rule is loaded into every
    session it applies to, like a memory: a person decides, --auto-approve holds it)."""
    from memcurate.curator.verify.checks import instruction_issues

    out = (
        [
            {
                "severity": "BLOCK",
                "code": "rule-file",
                "where": shown["file"] or chosen["topic"],
                "message": shown["error"],
            }
        ]
        if shown["error"]
        else []
    )
    parts = [
        ("rule", chosen["rule"]),
        ("topic", chosen["topic"]),
        ("paths", " ".join(chosen["paths"])),
    ]
    return out + [i.as_dict() for i in instruction_issues(parts)]


def fingerprint(shown: dict) -> str:
    """One hash of what a `view` shows the person: the rule, topic and paths, and the plan's file,
    action and the file's text before and after (the diff is made of them)."""
    p = shown.get("plan") or {}
    doc = [
        shown.get("rule"),
        shown.get("topic"),
        list(shown.get("paths") or []),
        p.get("file"),
        p.get("action"),
        p.get("before"),
        p.get("after"),
    ]
    return content_hash(json.dumps(doc, ensure_ascii=False))


def approve(engine: Context, query: str, seen: dict | str | None = None) -> dict:
    """Write the candidate's rule into its topic file and mark it approved: {id, file, path, action,
    sessions}. `seen`, what the person was shown (a `view` or its `fingerprint`): when what approving
    would write now differs, RuleError and nothing written; None approves what `view` shows now.
    RuleError also when it is not pending, when the plan has an error, or when the file changed; an
    OSError (the file and the system's reason) when the system refused the write."""
    with _lock(engine):
        # read again under the lock: another approval or an edit may just have finished
        cand = find(engine, query)
        rid = PREFIX + cand.id
        if cand.state != PENDING:
            raise RuleError(f"{rid} is {cand.state}, not pending")
        chosen = text(cand)
        p = plan(engine, cand, chosen)
        if seen is not None:
            want = seen if isinstance(seen, str) else fingerprint(seen)
            if fingerprint({**chosen, "plan": plan_dict(p)}) != want:
                raise RuleError(
                    f"{rid}: the rule or its file changed since you looked: look again; nothing was written"
                )
        if p.error:
            raise RuleError(f"{rid} cannot be written: {p.error}")
        try:
            path = rulefile.write(p) if p.action != "noop" else p.path
        except rulefile.RuleFileError as e:
            cause = e.__cause__
            # the system refused the write (a full disk): a fault, said as such, not a refusal
            if isinstance(cause, OSError) and cause.errno:
                why = f"{cause.strerror}; {rid} not written"
                raise OSError(cause.errno, why, cause.filename) from e
            raise RuleError(f"{rid}: {e}; nothing was written") from None
        rel = os.path.relpath(path, engine.project)
        try:
            kept = {
                "rule": rulefile.check_rule(chosen["rule"]),
                "topic": rulefile.topic_name(chosen["topic"]),
                "paths": rulefile.check_paths(chosen["paths"]),
            }  # as the plan wrote them
            candidates.mark_approved(engine.data, cand.id, rel, cand.sessions, kept)
        # its record damaged meanwhile: the rule is written; approving again marks it
        except ValueError as e:
            raise RuleError(
                f"{rid}: the rule is in {rel}, but the candidate could not be marked approved: {e}"
            ) from None
        return {"id": rid, "file": rel, "path": path, "action": p.action, "sessions": cand.sessions}


def edit(engine: Context, query: str, rule: str, topic: str, paths: list[str]) -> dict:
    """Store the person's text for a pending candidate, validated first (ValueError with the reason,
    nothing stored); what it would now write (as `view`)."""
    chosen = {
        "rule": rulefile.check_rule(rule),
        "topic": rulefile.topic_name(topic),
        "paths": rulefile.check_paths(paths),
    }  # ValueError with the reason
    # never between an approval's reading and its marking: its file would keep the old text
    with _lock(engine):
        cand = find(engine, query)
        if cand.state != PENDING:
            raise ValueError(
                f"{PREFIX}{cand.id} is {cand.state}: only a pending rule can be edited"
            )
        candidates.set_edit(engine.data, cand.id, chosen)  # ValueError when decided meanwhile
    return view(engine, cand.id)


def reject(engine: Context, query: str, reason: str = "") -> None:
    """Mark a pending candidate rejected: its signature is never proposed again."""
    with _lock(engine):  # not while an approval writes it
        cand = find(engine, query)
        if cand.state != PENDING:
            raise RuleError(f"{PREFIX}{cand.id} is {cand.state}, not pending")
        try:
            candidates.mark_rejected(engine.data, cand.id, reason.strip())
        except ValueError as e:
            raise RuleError(str(e)) from None


def _lock(engine: Context) -> FileLock:
    return FileLock(os.path.join(engine.data, "locks", LOCK), wait=LOCK_WAIT)


def draft_all(engine: Context) -> dict:
    """Ask the configured Claude backend for the rule text of every pending candidate without a draft:
    {drafted: [ids], failed: [{id, error}]}. Offline there is nothing to do: the offline text is
    computed when the candidate is shown."""
    done: dict = {"drafted": [], "failed": []}
    pending = candidates.all(engine.data, threshold=engine.settings.rules.threshold)
    todo = [c for c in pending if c.state == PENDING and c.draft is None]
    if not todo or getattr(engine.drafter, "name", "") == "offline":
        return done
    for cand in todo:
        rid = PREFIX + cand.id
        # never raises: offline on failure
        result = draft.draft_rule(engine.drafter, cand, engine.cfg)
        if result.get("by") == "offline" and not result.get("error"):
            break  # no Claude backend after all: the offline text stays computed when shown
        try:
            # a failed call's offline text, with why
            candidates.set_draft(engine.data, cand.id, result)
        except ValueError as e:  # decided, or its record damaged, meanwhile
            done["failed"].append({"id": rid, "error": str(e)})
            continue
        if result.get("error"):
            done["failed"].append({"id": rid, "error": result["error"]})
        else:
            done["drafted"].append(rid)
    return done
