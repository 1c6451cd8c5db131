"""`memcurate --auto-approve`: the second front end over the engine, with no person in the loop.

Processes everything pending, saves every draft with no BLOCK issue, leaves
the rest for review, and reports what happened (a category the model
skipped, finding nothing durable, is listed with its reason). A draft carrying an issue a
person must see (verify.HOLD: an instruction to the agent to do harm) is
never saved unattended: it stays pending, listed under "held". A triage
another process holds is left to it; a second run saves nothing new.

One item's trouble never stops the others: a staged triage that cannot be
read is listed (`unreadable`), a write that fails fails its candidate (or,
outside a save, its triage), whose state stays where the next run resumes.
A write that finds the disk full (or read-only) stops the run (`stopped`):
what was saved is listed, the rest is `left` for the next run. The exit
status (`exit_status`): 1 when a draft or a save failed or a triage cannot be
read; candidates left for review (blocked, held, conflicts) and skips are not failures.
"""

from __future__ import annotations

from curator.candidates import staging
from curator.review.actions import Approval, Blocked, Conflict, Redecided
from curator.review.verify import Issue, held
from curator.util.atomic import NO_SPACE, failure
from curator.util.locks import LockBusy


class _Stop(Exception):
    """The disk takes no more writes: nothing more is tried in this run."""


def auto_approve(engine, *, on_event=None) -> dict:
    summary: dict = {"created": [], "updated": [], "deleted": [], "noop": [], "skipped": [], "blocked": [],
                     "held": [], "failed": [], "conflicts": [], "busy": [], "unreadable": [], "stopped": None,
                     "left": [], "notes": []}
    engine.sweep_temps()
    unreadable: list = []
    tids = engine.pending(unreadable)
    summary["unreadable"] = [{"triage": tid, "error": why} for tid, why in unreadable]
    for n, tid in enumerate(tids):
        try:
            # One claim over the whole triage, drafts and saves: another process skips it
            # rather than contend for it category by category.
            with engine.claim(tid):
                _one_triage(engine, tid, summary, on_event)
        except LockBusy:
            summary["busy"].append(tid)
        except staging.StagingError as e:
            summary["failed"].append({"triage": tid, "category": None, "error": str(e)})
        except OSError as e:  # a write outside a save (a draft, a state move): redone by the next run
            summary["failed"].append({"triage": tid, "category": None, "error": failure(e)})
            if e.errno in NO_SPACE:
                summary["stopped"] = failure(e)
        except _Stop:
            pass
        if summary["stopped"]:
            summary["left"] += [{"triage": t, "category": None} for t in tids[n + 1:]]
            break
    return summary


def exit_status(summary: dict) -> int:
    """1 when a draft or a save failed or a staged triage cannot be read, else 0 (nothing to do, or
    everything that could be saved was: candidates left for review are not failures)."""
    return 1 if summary["failed"] or summary["unreadable"] else 0


def _one_triage(engine, tid: str, summary: dict, on_event) -> None:
    engine.sweep_triage(tid)
    _record(summary, tid, engine.resume(tid), conflicts=False)  # a conflict there is left for review
    ready = []

    def seen(event) -> None:  # the categories the model skipped in this run (not those of an earlier one)
        if event.state == "skipped":
            summary["skipped"].append({"triage": tid, "category": event.category,
                                       "reason": event.detail.get("reason", "")})
        elif event.state == "look-failed":  # nothing lost: its categories are drafted, the look is tried again
            summary["notes"].append(f"{tid}: the second look at the session failed "
                                    f"({event.detail.get('error', '')}); the next run tries it again")
        if on_event is not None:
            on_event(event)

    states = engine.process(tid, on_event=seen)
    cands = engine.candidates(tid) if {"failed", "ready"} & set(states.values()) else {}
    for cat, state in states.items():
        if state == "failed":
            summary["failed"].append({"triage": tid, "category": cat, "error": cands[cat].record.get("error", "")})
        elif state == "ready":
            hold = _held(cands[cat])
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
        result = engine.approve_all(tid, ready)
        again = [cat for cat, e in result.refused.items() if result.stopped is None
                 and (isinstance(e, Redecided) or isinstance(e, Conflict) and _changed_by_memcurate(engine, tid, cat))]
        for cat in again:  # a hand edit's conflict is for a person to see; memcurate's own is decided again
            if not isinstance(result.refused.pop(cat), Redecided):  # (that one already was, against what was saved)
                engine.redecide(tid, cat)
        second = engine.approve_all(tid, again) if again else None
    _record(summary, tid, result)
    if second is not None:
        _record(summary, tid, second)


def _held(cand) -> list[Issue]:
    """The issues of a ready candidate that only a person may approve past."""
    try:
        return held([Issue(**i) for i in cand.issues()])
    except (staging.StagingError, TypeError):
        return []  # an unreadable review is refused by the approval itself


def _record(summary: dict, tid: str, result: Approval, conflicts: bool = True) -> None:
    """Add an approval's outcome to the summary; _Stop once it found the disk full."""
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
    summary["left"] += [{"triage": tid, "category": cat} for cat in result.left]
    if result.stopped is not None:
        summary["stopped"] = failure(result.stopped)
        raise _Stop


def _changed_by_memcurate(engine, tid: str, cat: str) -> bool:
    """Whether the file a decision was based on was changed by memcurate (another triage, another
    process) rather than by hand: then deciding again is safe."""
    from curator.memory.store import content_hash

    d = engine.review(tid, cat)["decision"]
    if d["action"] == "create":
        return True  # the memory appeared meanwhile; deciding again compares the draft with it
    path = d.get("target_path")
    try:
        with open(path, "rb") as f:
            current = content_hash(f.read())
    except (OSError, TypeError):
        return False
    return engine.written().get(path) == current
