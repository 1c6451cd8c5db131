"""`memcurate --auto-approve`: the second front end over the engine, with no person in the loop.

Processes everything pending, saves every draft with no BLOCK issue, leaves
the rest for review, and reports what happened (a category the model
skipped, finding nothing durable, is listed with its reason). A draft carrying an issue a
person must see (verify.HOLD: an instruction to the agent to do harm) is
never saved unattended: it stays pending, listed under "held". So is an
offline evidence card (curator/candidates/cards.py: the offline drafter's text,
which no person has written yet), with "offline card, write it in the TUI or
set auto_approve.offline_cards: true", unless that key is true. Nor is a draft
whose confidence (curator/verify/confidence.py) is below the gate
(`auto_approve.min_confidence`, or `min_confidence` for one run): it stays
`ready` for review, listed under "unsure" with its confidence and the factors
that pulled it down. A triage another process holds is left to it; a second
run saves nothing new.

One item's trouble never stops the others: a staged triage that cannot be
read is listed (`unreadable`), a write that fails fails its candidate (or,
outside a save, its triage), whose state stays where the next run resumes.
A write that finds the disk full stops the run (`stopped`): what was saved is
listed, the rest is `left` for the next run. So does a memory folder memcurate may
not write (read-only, or not the user's: its lock file or a memory file refused):
`stopped` says so, every candidate not saved is `left`, still approved or ready,
and nothing is tried again in that run. The exit status (`exit_status`): 1 when a
draft or a save failed, a triage cannot be read or the run stopped; candidates left
for review (blocked, held, conflicts) and skips are not failures.
"""

from __future__ import annotations

import errno
import gc
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from memcurate.curator.candidates import cards, staging
from memcurate.curator.errors import DiskError
from memcurate.curator.review.actions import (
    Approval,
    Batch,
    Blocked,
    Conflict,
    Redecided,
    SaveFailed,
    approve_all,
)
from memcurate.curator.util.atomic import NO_SPACE, failure, read_json
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.verify.checks import HOLD, Issue, held
from memcurate.curator.verify.confidence import pulled_down

# a folder memcurate may not write into
READ_ONLY = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


class _Stop(DiskError):
    """The disk takes no more writes: nothing more is tried in this run."""


def auto_approve(engine, *, on_event=None, min_confidence: float | None = None) -> dict:
    """Process and save everything pending that may be saved unattended; `min_confidence` (0..1)
    overrides the config's gate for this run."""
    least = (
        engine.settings.auto_approve.min_confidence if min_confidence is None else min_confidence
    )
    summary: dict = {
        "min_confidence": least,
        "created": [],
        "updated": [],
        "deleted": [],
        "noop": [],
        "skipped": [],
        "blocked": [],
        "held": [],
        "unsure": [],
        "failed": [],
        "conflicts": [],
        "busy": [],
        "unreadable": [],
        "stopped": None,
        "left": [],
        "notes": [],
        "rules": {"written": [], "waiting": [], "failed": []},
    }
    engine.sweep_temps()
    unreadable: list = []
    tids = engine.pending(unreadable)
    summary["unreadable"] = [{"triage": tid, "error": why} for tid, why in unreadable]
    with _rare_collections():
        for at in range(0, len(tids), TRIAGES_PER_WRITE):
            _triages(engine, tids, at, summary, on_event)
            if summary["stopped"]:
                break
        if not summary["stopped"]:
            _rules(engine, summary)
    return summary


@contextmanager
def _rare_collections() -> Iterator[None]:
    """The cycle collector runs rarely during a run. A save makes thousands of short-lived objects
    (records, rows, parsed files) and next to no cycles: at the default threshold (700) the collector ran
    about once a save and walked every module imported, 0.1-0.2 ms a save for nothing. Restored after."""
    before = gc.get_threshold()
    gc.set_threshold(10_000, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*before)


# Triages whose saves share one MEMORY.md write: their claims are held until it is written.
TRIAGES_PER_WRITE = 64


def _triages(engine, tids: list[str], at: int, summary: dict, on_event) -> None:
    """Process and save the triages `tids[at:at + TRIAGES_PER_WRITE]`, MEMORY.md written once for all;
    what is left once the run stops (the rest of `tids` too) is listed."""
    batch = Batch()
    done: list[tuple[str, Approval, dict]] = []
    chunk = tids[at : at + TRIAGES_PER_WRITE]
    tried = 0  # the triages of the chunk looked at
    with ExitStack() as claims:
        # the index's upkeep of the chunk's saves written together (MemoryIndex.holding)
        claims.enter_context(engine.index.holding())
        for tid in chunk:
            tried += 1
            try:
                # One claim over the whole triage, drafts and saves (until MEMORY.md is written): another
                # process skips it rather than contend for it category by category.
                claims.enter_context(engine.claim(tid))
                _one_triage(engine, tid, summary, on_event, batch, done)
            except LockBusy:
                summary["busy"].append(tid)
            except staging.StagingError as e:
                summary["failed"].append({"triage": tid, "category": None, "error": str(e)})
            # a write outside a save (a draft, a state move): redone by the next run
            except OSError as e:
                # the memory root's lock refused (resume, save): nothing written there
                if _read_only(engine, e):
                    summary["stopped"] = _read_only(engine, e)
                    summary["left"].append({"triage": tid, "category": None})
                else:
                    summary["failed"].append({"triage": tid, "category": None, "error": failure(e)})
                if e.errno in NO_SPACE:
                    summary["stopped"] = summary["stopped"] or failure(e)
            except _Stop:
                pass
            if summary["stopped"] or batch.stopped is not None or _refused_read_only(done):
                break
        try:
            batch.publish(engine)
        except OSError as e:  # the root's lock refused: each save stays approved, for the next run
            summary["stopped"] = summary["stopped"] or _read_only(engine, e) or failure(e)
        summary["notes"].extend(batch.notes)
        for tid, result, sure in done:
            try:
                _record(summary, tid, result, sure=sure)
            except _Stop:
                pass  # (every approval is recorded: what each left too)
    if summary["stopped"]:
        summary["left"] += [{"triage": t, "category": None} for t in tids[at + tried :]]


def _refused_read_only(done: list[tuple[str, Approval, dict]]) -> bool:
    """Whether the last triage's saves met a memory folder memcurate may not write: nothing more is tried."""
    last = done[-1][0] if done else None
    return any(
        isinstance(e, SaveFailed) and e.errno in READ_ONLY
        for tid, result, _ in done
        if tid == last
        for e in result.refused.values()
    )


def exit_status(summary: dict) -> int:
    """1 when a draft or a save failed, a staged triage cannot be read or the run stopped (a full disk, a
    read-only memory folder), else 0 (nothing to do, or everything that could be saved was: candidates left
    for review are not failures)."""
    return (
        1
        if (
            summary["failed"]
            or summary["unreadable"]
            or summary.get("stopped")
            or summary.get("rules", {}).get("failed")
        )
        else 0
    )


def _read_only(engine, e: OSError) -> str | None:
    """Why the memory folder takes no writes, when `e` says it refused one (its lock file or a file in it):
    the folder named, and what to do; else None."""
    where = getattr(e, "filename", None)
    root = os.path.realpath(engine.root)
    if (
        e.errno not in READ_ONLY
        or not where
        or not os.path.realpath(where).startswith(root + os.sep)
    ):
        return None
    return _read_only_stop(failure(e))


def _read_only_stop(why: str) -> str:
    return (
        f"the memory folder is read-only ({why}): nothing more was written there; make it writable and "
        "run again"
    )


def _rules(engine, summary: dict) -> None:
    """Rule candidates, through the review kinds' verbs like any item: drafted by a Claude backend,
    then left for a person, unless `rules.auto_approve` is true: then each one whose rule file can be
    written as planned is written (the rest wait, with why); a rule whose text tells the agent to do
    harm (verify.HOLD) waits for a person like a held draft. Only a write the system refused fails."""
    from memcurate.curator.drafting import DrafterUnavailable
    from memcurate.curator.errors import Refusal
    from memcurate.curator.review.items import READY, RULE

    done = summary["rules"]
    try:
        drafted = engine.draft_pending(RULE)
    except DrafterUnavailable as e:  # the offline text stands in: nothing is lost
        drafted = {"failed": [{"triage": "rules", "error": str(e)}]}
    for f in drafted.get("failed", []):
        summary["notes"].append(f"{f['triage']}: drafted offline ({f['error']})")
    auto = engine.settings.rules.auto_approve
    for item in engine.review_items(kind=RULE):
        if item.state != READY:  # a damaged record: `memcurate list` names it
            continue
        sessions = (item.rule or {}).get("count", 0)
        waiting = {"id": item.id, "sessions": sessions, "error": ""}
        if not auto:
            done["waiting"].append(waiting)
            continue
        try:
            shown = engine.detail(item)
        except Refusal as e:  # damaged since it was listed
            done["waiting"].append({**waiting, "error": str(e)})
            continue
        hold = [i for i in shown.issues if i["code"] in HOLD]
        if hold:  # an instruction to do harm: a person decides, as for a draft
            why = "held for a person: " + "; ".join(i["message"] for i in hold)
            done["waiting"].append({**waiting, "error": why})
            continue
        # what was checked, or nothing
        [out] = engine.approve_items([item], {item.id: shown.fingerprint})
        if out.done:
            done["written"].append({"id": item.id, "file": out.where, "path": out.path})
        elif out.failed:
            done["failed"].append({"id": item.id, "error": out.error})
        else:
            why = "another process is writing rules" if out.busy else out.error
            done["waiting"].append({**waiting, "error": why})


def _one_triage(
    engine, tid: str, summary: dict, on_event, batch: Batch, done: list[tuple[str, Approval, dict]]
) -> None:
    """Process a triage and save what may be saved unattended into `batch`; its approvals (saved once
    the batch is published) are added to `done`."""
    engine.sweep_triage(tid)
    # a conflict there is left for review
    _record(summary, tid, engine.resume(tid), conflicts=False)
    ready = []

    # the categories the model skipped in this run (not those of an earlier one)
    def seen(
        event,
    ) -> None:
        if event.state == "skipped":
            summary["skipped"].append(
                {
                    "triage": tid,
                    "category": event.category,
                    "reason": event.detail.get("reason", ""),
                }
            )
        # nothing lost: its categories are drafted, the look is tried again
        elif event.state == "look-failed":
            summary["notes"].append(
                f"{tid}: the second look at the session failed "
                f"({event.detail.get('error', '')}); the next run tries it again"
            )
        if on_event is not None:
            on_event(event)

    states = engine.process(tid, on_event=seen)
    cands = engine.candidates(tid) if {"failed", "ready"} & set(states.values()) else {}
    sure: dict[str, float | None] = {}  # category -> the confidence it was saved with
    cards_allowed = engine.settings.auto_approve.offline_cards
    for cat, state in states.items():
        if state == "failed":
            summary["failed"].append(
                {"triage": tid, "category": cat, "error": cands[cat].record.get("error", "")}
            )
        elif state == "ready":
            review, hold = _review(cands[cat])
            conf = review.get("confidence") or {}
            value = conf.get("value")
            if not review:
                ready.append(cat)  # an unreadable review: the approval refuses it, saying why
            elif hold or (review.get("card") and not cards_allowed):
                said = [f"{i.where}: {i.message}" for i in hold]
                summary["held"].append(
                    {
                        "triage": tid,
                        "category": cat,
                        "confidence": value,
                        "title": review.get("title", ""),
                        "card": bool(review.get("card")),
                        "issues": said
                        + ([cards.HELD] if review.get("card") and not cards_allowed else []),
                    }
                )
            elif not review.get("blocked") and (value is None or value < summary["min_confidence"]):
                summary["unsure"].append(
                    {
                        "triage": tid,
                        "category": cat,
                        "title": review.get("title", ""),
                        "confidence": value,
                        "why": _why(conf, summary["min_confidence"]),
                    }
                )
            else:
                ready.append(cat)
                sure[cat] = value
    if not ready:
        return
    # Decide-and-save under the memory root's lock: no other memcurate process writes
    # between a redone decision and its save. The batch's saves share one MEMORY.md write.
    with engine.root_lock(wait=60):
        result = approve_all(engine, tid, ready, batch=batch)
        again = [
            cat
            for cat, e in result.refused.items()
            if result.stopped is None
            and (
                isinstance(e, Redecided)
                or isinstance(e, Conflict)
                and _changed_by_memcurate(engine, tid, cat)
            )
        ]
        # a hand edit's conflict is for a person to see; memcurate's own is decided again
        for cat in again:
            # (that one already was, against what was saved)
            if not isinstance(result.refused.pop(cat), Redecided):
                engine.redecide(tid, cat)
        second = approve_all(engine, tid, again, batch=batch) if again else None
    done.append((tid, result, sure))
    if second is not None:
        done.append((tid, second, sure))


def _review(cand) -> tuple[dict, list[Issue]]:
    """A ready candidate's review record (its issues, confidence; `card`: an offline card no person wrote),
    and the issues that only a person may approve past; ({}, []) when it cannot be read."""
    try:
        review = cards.marked(read_json(cand.files.review))
        return review, held([Issue(**i) for i in review.get("issues") or []])
    except (OSError, ValueError, TypeError, AttributeError):
        return {}, []


def _why(conf: dict, least: float) -> list[dict]:
    """What pulled a confidence below the gate, strongest first; said so when nothing did (what speaks for
    the draft is not enough) or when no confidence was recorded."""
    if not conf:
        return [
            {
                "name": "no confidence",
                "effect": 0.0,
                "why": "verified by a memcurate that recorded none: review it, or redo it in the TUI",
            }
        ]
    return pulled_down(conf) or [
        {
            "name": "not enough",
            "effect": 0.0,
            "why": f"nothing pulled it down, but what speaks for it adds up to "
            f"{conf['value']:.2f}, below {least:.2f}",
        }
    ]


def _record(
    summary: dict, tid: str, result: Approval, conflicts: bool = True, sure: dict | None = None
) -> None:
    """Add an approval's outcome to the summary; _Stop once it found the disk full."""
    for saved in result.saved:
        key = {"create": "created", "update": "updated", "delete": "deleted", "noop": "noop"}[
            saved.action
        ]
        item = {"triage": tid, "category": saved.category, "path": saved.path}
        name = saved.name or saved.category  # the slot the confidence was recorded under
        if sure and sure.get(name) is not None:
            item["confidence"] = sure[name]
        summary[key].append(item)
    summary["notes"].extend(result.notes)
    for cat, e in result.refused.items():
        # still approved: the next run saves it
        if isinstance(e, SaveFailed) and e.errno in READ_ONLY:
            summary["stopped"] = summary["stopped"] or _read_only_stop(str(e))
            summary["left"].append({"triage": tid, "category": cat})
        elif isinstance(e, Conflict):
            if conflicts:
                summary["conflicts"].append({"triage": tid, "category": cat, "error": str(e)})
        elif isinstance(e, Blocked):
            summary["blocked"].append(
                {
                    "triage": tid,
                    "category": cat,
                    "issues": [f"{i.where}: {i.message}" for i in e.issues],
                }
            )
        else:
            summary["failed"].append({"triage": tid, "category": cat, "error": str(e)})
    summary["left"] += [{"triage": tid, "category": cat} for cat in result.left]
    if result.stopped is not None:
        summary["stopped"] = failure(result.stopped)
    if summary["stopped"]:
        raise _Stop


def _changed_by_memcurate(engine, tid: str, cat: str) -> bool:
    """Whether the file a decision was based on was changed by memcurate (another triage, another
    process) rather than by hand: then deciding again is safe."""
    from memcurate.curator.memory.store import content_hash

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
