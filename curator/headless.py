"""`memcurate --auto-approve`: the second front end over the engine, with no person in the loop.

Processes everything pending, saves every draft with no BLOCK issue, leaves
the rest for review, and reports what happened. A draft carrying an issue a
person must see (verify.HOLD: an instruction to the agent to do harm) is
never saved unattended: it stays pending, listed under "held". A triage
another process holds is left to it; a second run saves nothing new.
"""

from __future__ import annotations

from . import staging
from .atomic import read_json
from .locks import LockBusy
from .pipeline import Claim, paths, pending_triages, process, read_review
from .review import Approval, Blocked, Conflict, approve_all, redecide, resume
from .verify import Issue, held


def auto_approve(engine, *, on_event=None) -> dict:
    summary: dict = {"created": [], "updated": [], "deleted": [], "noop": [], "blocked": [], "held": [],
                     "failed": [], "conflicts": [], "busy": [], "notes": []}
    staging.clean_incoming(engine.data)
    engine.sweep_temps()
    for tid in pending_triages(engine.data):
        try:
            # One claim over the whole triage, drafts and saves: another process skips it
            # rather than contend for it category by category.
            with Claim(engine, tid):
                _one_triage(engine, tid, summary, on_event)
        except LockBusy:
            summary["busy"].append(tid)
        except staging.StagingError as e:
            summary["failed"].append({"triage": tid, "category": None, "error": str(e)})
    return summary


def _one_triage(engine, tid: str, summary: dict, on_event) -> None:
    staging.sweep_triage_temps(engine.data, tid)
    _record(summary, tid, resume(engine, tid), conflicts=False)  # a conflict there is left for review
    ready = []
    for cat, state in process(engine, tid, on_event=on_event).items():
        if state == "failed":
            rec = staging.category_state(engine.data, tid, cat)
            summary["failed"].append({"triage": tid, "category": cat, "error": rec.get("error", "")})
        elif state == "ready":
            hold = _held(engine, tid, cat)
            if hold:
                summary["held"].append({"triage": tid, "category": cat,
                                        "issues": [f"{i.where}: {i.message}" for i in hold]})
            else:
                ready.append(cat)
    if not ready:
        return
    # Decide-and-save under the memory root's lock: no other memcurate process writes
    # between a redone decision and its save. The triage's saves share one MEMORY.md write.
    with engine.root_lock(wait=60):
        result = approve_all(engine, tid, ready)
        again = [cat for cat, e in result.refused.items()
                 if isinstance(e, Conflict) and _changed_by_memcurate(engine, tid, cat)]
        for cat in again:  # a hand edit's conflict is for a person to see; memcurate's own is decided again
            del result.refused[cat]
            redecide(engine, tid, cat)
        if again:
            _record(summary, tid, approve_all(engine, tid, again))
    _record(summary, tid, result)


def _held(engine, tid: str, cat: str) -> list[Issue]:
    """The issues of a ready candidate that only a person may approve past."""
    try:
        record = read_json(paths(engine.data, tid, cat)["review"])
        return held([Issue(**i) for i in record["issues"]])
    except (OSError, ValueError, KeyError, TypeError):
        return []  # an unreadable review is refused by the approval itself


def _record(summary: dict, tid: str, result: Approval, conflicts: bool = True) -> None:
    for saved in result.saved:
        key = {"create": "created", "update": "updated", "delete": "deleted", "noop": "noop"}[saved.action]
        summary[key].append({"triage": tid, "category": saved.category, "path": saved.path})
    summary["notes"].extend(result.notes)
    for cat, e in result.refused.items():
        if isinstance(e, Conflict):
            if conflicts:
                summary["conflicts"].append({"triage": tid, "category": cat, "error": str(e)})
        elif isinstance(e, Blocked):
            summary["blocked"].append({"triage": tid, "category": cat,
                                       "issues": [f"{i.where}: {i.message}" for i in e.issues]})
        else:
            summary["failed"].append({"triage": tid, "category": cat, "error": str(e)})


def _changed_by_memcurate(engine, tid: str, cat: str) -> bool:
    """Whether the file a decision was based on was changed by memcurate (another triage, another
    process) rather than by hand: then deciding again is safe."""
    from .store import content_hash

    d = read_review(engine.data, tid, cat)["decision"]
    if d["action"] == "create":
        return True  # the memory appeared meanwhile; deciding again compares the draft with it
    path = d.get("target_path")
    try:
        with open(path, "rb") as f:
            current = content_hash(f.read())
    except (OSError, TypeError):
        return False
    return engine.written().get(path) == current
