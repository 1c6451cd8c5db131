"""`memcurate --auto-approve`: the second front end over the engine, with no person in the loop.

Processes everything pending, saves every draft with no BLOCK issue, leaves
the rest for review, and reports what happened. A triage another process
holds is left to it; a second run saves nothing new.
"""

from __future__ import annotations

from . import staging
from .locks import LockBusy
from .pipeline import Claim, pending_triages, process, read_review
from .review import Blocked, Conflict, ReviewError, approve, redecide, resume


def auto_approve(engine, *, on_event=None) -> dict:
    summary: dict = {"created": [], "updated": [], "deleted": [], "noop": [], "blocked": [], "failed": [],
                     "conflicts": [], "busy": [], "notes": []}

    def record(saved, tid, cat) -> None:
        key = {"create": "created", "update": "updated", "delete": "deleted", "noop": "noop"}[saved.action]
        summary[key].append({"triage": tid, "category": cat, "path": saved.path})
        summary["notes"].extend(saved.notes)

    staging.clean_incoming(engine.data)
    for tid in pending_triages(engine.data):
        try:
            # One claim over the whole triage, drafts and saves: another process skips it
            # rather than contend for it category by category.
            with Claim(engine, tid):
                _one_triage(engine, tid, summary, record, on_event)
        except LockBusy:
            summary["busy"].append(tid)
        except staging.StagingError as e:
            summary["failed"].append({"triage": tid, "category": None, "error": str(e)})
    return summary


def _one_triage(engine, tid: str, summary: dict, record, on_event) -> None:
    for saved in resume(engine, tid):
        record(saved, tid, saved.category)
    states = process(engine, tid, on_event=on_event)
    for cat, state in states.items():
        if state == "failed":
            rec = staging.category_states(engine.data, tid)[cat]
            summary["failed"].append({"triage": tid, "category": cat, "error": rec.get("error", "")})
            continue
        if state != "ready":
            continue
        try:
            # Decide-and-save under the memory root's lock: no other memcurate process
            # writes between a redone decision and its save.
            with engine.root_lock(wait=60):
                try:
                    saved = approve(engine, tid, cat)
                except Conflict:
                    if not _changed_by_memcurate(engine, tid, cat):
                        raise  # a hand edit: that conflict is for a person to see
                    redecide(engine, tid, cat)
                    saved = approve(engine, tid, cat)
        except Conflict as e:
            summary["conflicts"].append({"triage": tid, "category": cat, "error": str(e)})
            continue
        except Blocked as e:
            summary["blocked"].append({"triage": tid, "category": cat,
                                       "issues": [f"{i.where}: {i.message}" for i in e.issues]})
            continue
        except ReviewError as e:
            summary["failed"].append({"triage": tid, "category": cat, "error": str(e)})
            continue
        record(saved, tid, cat)


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
