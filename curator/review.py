"""Review actions, as engine API: approve (optionally edited), reject, retry, change the action.

Both front ends call these. Saving is crash-safe by order: the category is
marked `approved` (with the hash of the exact text) before anything is
written, the memory file is written before MEMORY.md, and `saved` comes
last. A process killed anywhere leaves `approved`, and `resume` (run by the
next process) finishes the save; every step is idempotent, so a file already
written is recognised by its content rather than written twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import memfile, staging
from .decide import Decision, DecisionError, choose, decide
from .pipeline import Claim, existing_for, fingerprint, process, read_review, review_decision, text_hash
from .verify import Issue, blocking


class ReviewError(Exception):
    """A review action that cannot be done; the message says why."""


class Blocked(ReviewError):
    """The text has BLOCK issues: it cannot be approved until edited."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("; ".join(f"{i.where}: {i.message}" for i in issues))


class Conflict(Blocked):
    """The memory file changed (or went) since the draft was based on it: redo the update."""


@dataclass
class Saved:
    category: str
    action: str
    path: str | None
    archived: dict  # category -> ids moved to the archive by this save
    notes: list[str]


def _require(engine, tid: str, cat: str, *states: str, doc: dict | None = None) -> dict:
    rec = staging.category_states(engine.data, tid, doc).get(cat)
    if rec is None:
        raise ReviewError(f"{tid}/{cat}: no such candidate")
    if rec["state"] not in states:
        raise ReviewError(f"{tid}/{cat} is {rec['state']}, not {' or '.join(states)}")
    return rec


def edit(engine, tid: str, cat: str, text: str) -> dict:
    """Replace the text under review and verify it again; returns the new review record."""
    with Claim(engine, tid, wait=5):
        _require(engine, tid, cat, "ready")
        review = read_review(engine.data, tid, cat)
        entry = staging.load_triage(engine.data, tid)["categories"][cat]
        decision = Decision(**review["decision"], text=text)
        return review_decision(engine, tid, cat, entry, decision, review["draft"], file_text=text)


def approve(engine, tid: str, cat: str, text: str | None = None) -> Saved:
    """Save a candidate: the reviewed text, or `text` when the person edited it (verified again)."""
    with Claim(engine, tid, wait=5):
        doc = staging.load_triage(engine.data, tid)  # read once for the whole approval
        _require(engine, tid, cat, "ready", doc=doc)
        if text is not None:
            edit(engine, tid, cat, text)
        review = read_review(engine.data, tid, cat)
        issues = [Issue(**i) for i in review["issues"]]
        # Facts can change between review and approval (a hand edit): check the target again.
        d = review["decision"]
        if d["action"] in ("update", "delete") and d["target"]:
            t = engine.target_state(cat, d["target"], d["base_hash"])
            if not t["exists"] or not t["hash_matches"]:
                entry = doc["categories"][cat]
                record = review_decision(engine, tid, cat, entry, Decision(**d, text=review["text"]), review["draft"],
                                         file_text=review["text"])
                issues = [Issue(**i) for i in record["issues"]]
        blocked = blocking(issues)
        if any(i.code in ("conflict", "target-missing") for i in blocked):
            raise Conflict(blocked)
        if blocked:
            raise Blocked(blocked)
        staging.set_state(engine.data, tid, cat, "approved", doc=doc, approved_hash=text_hash(review["text"]))
        return _save(engine, tid, cat, review=review, doc=doc)


def resume(engine, tid: str) -> list[Saved]:
    """Finish the saves a killed process left `approved`."""
    done = []
    with Claim(engine, tid):
        for cat, rec in staging.category_states(engine.data, tid).items():
            if rec["state"] == "approved":
                try:
                    done.append(_save(engine, tid, cat))
                except Conflict:
                    pass  # reported in the category's state
    return done


def _save(engine, tid: str, cat: str, *, review: dict | None = None, doc: dict | None = None) -> Saved:
    from . import memory_md
    from .store import ConflictError

    review = review or read_review(engine.data, tid, cat)
    doc = doc or staging.load_triage(engine.data, tid)
    d = review["decision"]
    action, text = d["action"], review["text"]
    path = None
    changes = []
    with engine.root_lock(wait=30):
        try:
            current = memory_md.read_current(engine.root)  # a damaged MEMORY.md stops the save before any write
        except memory_md.MemoryMdError as e:
            staging.set_state(engine.data, tid, cat, "ready", doc=doc, error=f"MEMORY.md: {e}")
            raise ReviewError(f"{e}: fix MEMORY.md by hand, then approve again") from None
        try:
            if action != "noop":
                mem = memfile.parse(text)
                path = engine.store.path_for(mem.category, mem.id)
                written = memfile.render(mem)  # what the store writes: the canonical form of the text
                if _already_written(path, written):
                    pass  # a resumed save: the file is exactly what was approved
                elif action == "create":
                    engine.store.create(mem)
                    engine.record_written(path, written)
                else:  # update, delete: only over the version the decision was based on
                    engine.store.update(mem, d["base_hash"])
                    engine.record_written(path, written)
                if action == "delete":
                    changes.append(("remove", mem.category, mem.id))
                else:
                    changes.append(("upsert", memory_md.IndexLine(mem.id, mem.category, mem.title, mem.description)))
        except ConflictError as e:
            staging.set_state(engine.data, tid, cat, "ready", doc=doc, conflict=str(e))
            entry = doc["categories"][cat]
            record = review_decision(engine, tid, cat, entry, Decision(**d, text=text), review["draft"],
                                     file_text=text)
            issues = [Issue(**i) for i in record["issues"] if i["severity"] == "BLOCK"]
            raise Conflict(issues or [Issue("BLOCK", "conflict", "action", f"{path}: {e}")]) from None
        plan = memory_md.apply(engine.root, engine.cfg, changes, current=current) if changes else None
    archived = {c: [line.id for line in lines] for c, lines in (plan.archived.items() if plan else []) if lines}
    staging.set_state(engine.data, tid, cat, "saved", doc=doc, path=path, saved_action=action, archived=archived)
    return Saved(cat, action, path, archived, list(plan.notes) if plan else [])


def _already_written(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except OSError:
        return False


def reject(engine, tid: str, cat: str, reason: str = "") -> None:
    """Reject a candidate; one rejected is not proposed again from the same evidence."""
    with Claim(engine, tid, wait=5):
        _require(engine, tid, cat, "triaged", "ready", "failed")
        entry = staging.load_triage(engine.data, tid)["categories"][cat]
        engine.add_rejected(fingerprint(cat, entry))
        staging.set_state(engine.data, tid, cat, "rejected", reason=reason.strip()[:500])


def retry(engine, tid: str, cat: str, *, on_event=None) -> dict:
    """Draft a failed category again."""
    with Claim(engine, tid, wait=5):
        _require(engine, tid, cat, "failed")
        staging.set_state(engine.data, tid, cat, "drafting", retried=True)
        return process(engine, tid, only=[cat], on_event=on_event)


def _decide_again(engine, tid: str, cat: str, choice) -> dict:
    """Run `choice(draft, existing)` on the kept draft against the memories as they are now, and
    record the new decision; the category stays ready."""
    with Claim(engine, tid, wait=5):
        _require(engine, tid, cat, "ready")
        review = read_review(engine.data, tid, cat)
        draft = memfile.parse(review["draft"])
        existing = existing_for(engine, draft)
        engine.near[(tid, cat)] = existing
        decision = choice(draft, existing)
        entry = staging.load_triage(engine.data, tid)["categories"][cat]
        return review_decision(engine, tid, cat, entry, decision, review["draft"])


def redecide(engine, tid: str, cat: str) -> dict:
    """Decide again (after a conflict): the draft is kept."""
    return _decide_again(engine, tid, cat, lambda d, ex: decide(d, ex, now=engine.now(), cfg=engine.cfg))


def change_action(engine, tid: str, cat: str, action: str, target: str | None = None) -> dict:
    """Make the candidate a create, update, noop (or delete where allowed); ReviewError if the rules forbid it."""
    def choice(draft, existing):
        try:
            return choose(action, draft, existing, now=engine.now(), cfg=engine.cfg, target=target)
        except DecisionError as e:
            raise ReviewError(str(e)) from None

    return _decide_again(engine, tid, cat, choice)
