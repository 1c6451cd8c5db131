"""Review actions over candidates: approve (optionally edited), reject, retry, change the action.

The Engine exposes them to the front ends. Each runs under its triage's
claim, and each that changes what is under review ends in
`pipeline.settle`. Saving is crash-safe by order: the category is
marked `approved` (with the hash of the exact text) before anything is
written, the memory file is written before MEMORY.md, and `saved` comes
last. A process killed anywhere leaves `approved`, and `resume` (run by the
next process) finishes the save; every step is idempotent, so a file already
written is recognised by its content rather than written twice.
`approve_all` saves several candidates of a triage with one MEMORY.md write
(the headless runner, and approving everything at once in the TUI).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.candidate import Candidate, Claim, StagedTriage, text_hash
from memcurate.curator.candidates.pipeline import decided, existing_for, near_ids, process, settle
from memcurate.curator.errors import DiskError, Refusal, StaleError
from memcurate.curator.memory import memfile
from memcurate.curator.util.atomic import ahead
from memcurate.curator.util.safe_open import read_path
from memcurate.curator.verify.checks import Issue, blocking
from memcurate.curator.verify.decide import Decision, DecisionError, choose, decide

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


class ReviewError(Refusal):
    """A review action that cannot be done; the message says why."""


class Blocked(ReviewError):
    """The text has BLOCK issues: it cannot be approved until edited."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("; ".join(f"{i.where}: {i.message}" for i in issues))


class Changed(ReviewError, StaleError):
    """What the person was shown is not what approving would save now (redrafted, edited elsewhere)."""


class Conflict(Blocked, StaleError):
    """The memory file changed (or went) since the draft was based on it: redo the update."""


class Redecided(Conflict):
    """A create whose fact was saved meanwhile (another pending draft approved first): decided again
    against the memories as they are now (an update or a noop), to be reviewed and approved again."""


class SaveFailed(ReviewError, DiskError):
    """A write failed (a full disk, a read-only folder, no permission). Writes are atomic, so nothing
    is half-written, and the category stays `approved`: the next run finishes the save."""

    def __init__(self, error: Exception, what: str = "") -> None:
        from memcurate.curator.util.atomic import failure

        self.errno = getattr(error, "errno", None)
        super().__init__(what + failure(error))


@dataclass
class Saved:
    category: str
    action: str  # create, update, delete, noop
    path: str | None  # the memory file written (None for a noop)
    name: str = ""  # the candidate's slot ("decision-2"), when it is not the category


@dataclass
class Approval:
    """What an approval did: the saves, the candidates refused (category -> why), and the
    entries MEMORY.md's one write moved to the archive."""

    saved: list[Saved] = field(default_factory=list)
    refused: dict[str, ReviewError] = field(default_factory=dict)
    archived: dict[str, list[str]] = field(default_factory=dict)  # category -> ids
    notes: list[str] = field(default_factory=list)
    stopped: OSError | None = None  # the write that found the disk full: nothing more was tried
    # approved, not finished once stopped: the next run does
    left: list[str] = field(default_factory=list)


def _require(cand: Candidate | None, key: tuple[str, str], *states: str) -> Candidate:
    """The candidate, if there is one and it is in one of `states`."""
    if cand is None:
        raise ReviewError(f"{key[0]}/{key[1]}: no such candidate")
    if cand.state not in states:
        raise ReviewError(f"{key[0]}/{key[1]} is {cand.state}, not {' or '.join(states)}")
    return cand


def _candidate(engine: Context, tid: str, cat: str, *states: str) -> Candidate:
    """One candidate of a triage (call it under the triage's claim), if it is in one of `states`."""
    try:
        cand = StagedTriage(engine.data, tid).candidate(cat)
    except staging.NotACategory:
        cand = None
    return _require(cand, (tid, cat), *states)


def edit(engine: Context, tid: str, cat: str, text: str) -> dict:
    """Replace the text under review and verify it again; returns the new review record."""
    with Claim(engine, tid, wait=5):
        cand = _candidate(engine, tid, cat, "ready")
        review = cand.review()
        return settle(
            engine, cand, Decision(**review["decision"], text=text), review["draft"], file_text=text
        )


def approve(
    engine: Context, tid: str, cat: str, text: str | None = None, seen: str | None = None
) -> Approval:
    """Save one candidate: the reviewed text, or `text` when the person edited it (verified again).
    `seen`: the text_hash of the text the person was shown; when the text under review differs now (redrafted,
    edited elsewhere), Changed and nothing saved. ReviewError (Blocked, Conflict) when it cannot be saved."""
    with Claim(engine, tid, wait=5):
        if (
            seen is not None
            and text_hash(_candidate(engine, tid, cat, "ready").review()["text"]) != seen
        ):
            raise Changed(
                f"{tid}/{cat}: the draft changed since it was shown: look at it again; nothing was saved"
            )
        if text is not None:
            edit(engine, tid, cat, text)
        result = approve_all(engine, tid, [cat])
    if cat in result.refused:
        raise result.refused[cat]
    return result


def approve_all(
    engine: Context,
    tid: str,
    cats,
    seen: Mapping[str, str] | None = None,
    batch: Batch | None = None,
) -> Approval:
    """Save several candidates of one triage, with one MEMORY.md write for all of them (with `batch`:
    for all of the batch's, at `batch.publish`, which fills the result's `saved`).
    One that cannot be saved is refused (in the result) without stopping the others; so is one whose
    text is no longer what the person was shown (`seen`: category -> its text_hash then): Changed."""
    engine.check_saving()  # auto memory off: refused before anything is marked approved
    result = Approval()
    with Claim(engine, tid, wait=5):
        cands = StagedTriage(engine.data, tid).candidates()  # read once for the whole approval
        # and each ready one's review: what is checked, written early and saved is one reading
        reviews = {c: cands[c].review() for c in cats if c in cands and cands[c].state == "ready"}
        todo = []
        # the files made durable while their duplicate lookups run (atomic.ahead)
        plans = _early(engine, reviews, seen)
        early = {path: text.encode("utf-8") for path, text in _rendered(plans)}
        with ahead(early, early):
            for cat in cats:
                try:
                    cand = _require(cands.get(cat), (tid, cat), "ready")
                    review = reviews[cat]
                    if _not_shown(seen, cat, review["text"]):
                        raise Changed(
                            f"{tid}/{cat}: the draft changed since it was shown: look at it again; "
                            "nothing was saved"
                        )
                    todo.append((cand, _approved(engine, cand, review)))
                except ReviewError as e:
                    result.refused[cat] = e
            _save(engine, todo, result, batch, plans)
    return result


def _early(
    engine: Context, reviews: Mapping[str, dict], seen: Mapping[str, str] | None = None
) -> dict[str, tuple[str, tuple | None]]:
    """What the ready, unblocked candidates (their reviews by name) would write as they stand (by name:
    the text it was made from and `_planned`'s answer): their files are written and fsynced early
    (atomic.ahead), and a save of the same text takes them; one whose text changed meanwhile is made and
    written anew. `seen`: as for approve_all (a text the person was not shown is refused: not written
    early either)."""
    from memcurate.curator.memory.store import StoreError

    out: dict[str, tuple[str, tuple | None]] = {}
    for name, review in reviews.items():
        try:
            if review.get("blocked"):
                continue  # never on disk, even as a temp file
            if _not_shown(seen, name, review["text"]):
                continue
            out[name] = (review["text"], _planned(engine, review))
        except (ReviewError, StoreError, memfile.MemoryFormatError, KeyError, TypeError, OSError):
            continue  # the approval says why
    return out


def _not_shown(seen: Mapping[str, str] | None, cat: str, text: str) -> bool:
    """Whether `text` is not what the person was shown of `cat` (`seen`: as for approve_all)."""
    return seen is not None and cat in seen and text_hash(text) != seen[cat]


def _rendered(plans: Mapping[str, tuple[str, tuple | None]]) -> list[tuple[str, str]]:
    """(path, text) of each file `_early` planned."""
    return [planned[1] for _, planned in plans.values() if planned is not None]


def _approved(engine: Context, cand: Candidate, review: dict) -> dict:
    """Check a candidate (its `review` record) can be saved and mark it approved; returns the record."""
    issues = [Issue(**i) for i in review["issues"]]
    # Facts can change between review and approval (a hand edit): check the target again.
    d = review["decision"]
    if d["target"] and (d["action"] in ("update", "delete") or d.get("source_only")):
        t = engine.target_state(cand.category, d["target"], d["base_hash"])
        if not t["exists"] or not t["hash_matches"]:
            record = settle(
                engine,
                cand,
                Decision(**d, text=review["text"]),
                review["draft"],
                file_text=review["text"],
            )
            issues = [Issue(**i) for i in record["issues"]]
    elif d["action"] == "create":
        _saved_since(engine, cand, review)
    blocked = blocking(issues)
    if any(i.code in ("conflict", "target-missing") for i in blocked):
        raise Conflict(blocked)
    if blocked:
        raise Blocked(blocked)
    cand.move("approved", approved_hash=text_hash(review["text"]))
    return review


def _saved_since(engine: Context, cand: Candidate, review: dict) -> None:
    """A create decided before a memory that says the same was saved (another draft approved
    meanwhile, pending beside this one) would save the fact twice: the decision is taken again
    against what is saved now, and Redecided says so; a memory it was decided against does not count,
    so a create the person chose over it stands."""
    try:
        draft = memfile.parse(review["text"])
    except memfile.MemoryFormatError:
        return  # blocked by verification anyway
    # What the decision compared with is known: only something new among the draft's nearest is read
    # and decided against (what the index finds is looked up, not read, on every save). With the index's
    # mark of the decision, only what was indexed since is looked among: a save's cost does not grow
    # with the store.
    earlier = review["decision"]
    mark = earlier.get("index_mark")
    near = near_ids(engine, draft, mark if isinstance(mark, str) else "")
    new = near.without(earlier.get("compared", ()))
    if not new.refs():
        return
    # A create stands against what it was decided against; when none of the new ones alone would make it
    # something else (alike enough, identical, the same id or session), all of them together cannot either.
    now = engine.now()
    fresh = existing_for(engine, draft, new)
    if not fresh or decide(draft, fresh, now=now, cfg=engine.cfg).action == "create":
        return
    # decided again against everything near it now, as a draft is
    again, existing = decided(engine, draft)
    if again.action == "create":
        return
    settle(engine, cand, again, review["draft"], near=existing)
    raise Redecided(
        [
            Issue(
                "BLOCK",
                "conflict",
                "action",
                f"{again.target!r} was saved since this draft was decided "
                f"and says the same: now {again.action} of {again.target!r} "
                f"({'; '.join(again.reasons)}); review it and approve again",
            )
        ]
    )


def resume(engine: Context, tid: str) -> Approval:
    """Finish the saves a killed process left `approved`."""
    with Claim(engine, tid):
        cands = StagedTriage(engine.data, tid).candidates()
        todo = [(cand, cand.review()) for cand in cands.values() if cand.state == "approved"]
        result = Approval()
        _save(engine, todo, result)
    return result


class Batch:
    """Approvals of several triages (an --auto-approve run's) published together: each approval writes
    its memory files at once, and `publish` writes MEMORY.md and its archive once for all of them, then
    marks them saved. Until then they stay `approved`, as within one approval: a process killed in between
    leaves what `resume` finishes. The caller holds every triage's claim until `publish`."""

    def __init__(self) -> None:
        self.current: tuple | None = None  # MEMORY.md as read before the batch's first write
        self.written: list[
            tuple[Approval, Saved, Candidate, object]
        ] = []  # with its MEMORY.md change
        self.stopped: OSError | None = None  # the write that found the disk full
        self.archived: dict[str, list[str]] = {}
        self.notes: list[str] = []

    def touches(self, todo: list[tuple[Candidate, dict]]) -> bool:
        """Whether one of `todo` changes a memory file the batch wrote (an update of a fact saved by an
        earlier triage of the run): that save is finished first, so that no save waiting for MEMORY.md
        ever finds its file changed under it (a kill in between would leave it a conflict)."""
        paths = {saved.path for _, saved, _, _ in self.written if saved.path}
        return any(review["decision"].get("target_path") in paths for _, review in todo)

    def publish(self, engine: Context) -> None:
        """MEMORY.md written once for every approval's saves, which are then marked saved."""
        written, self.written, self.current = self.written, [], None
        try:
            plan = _publish(engine, written, self.current, self.stopped)
        except OSError:  # the root's lock refused: each stays `approved`, for the next run
            for result, _saved, cand, _ in written:
                result.left.append(cand.name)
            raise
        if plan:
            for cat, ids in _archived(plan).items():
                self.archived.setdefault(cat, []).extend(ids)
            self.notes += plan.notes


def _save(
    engine: Context,
    todo: list[tuple[Candidate, dict]],
    result: Approval,
    batch: Batch | None = None,
    plans: Mapping[str, tuple[str, tuple | None]] | None = None,
) -> None:
    """Write the approved candidates' memory files, then MEMORY.md once, then mark them saved.
    `todo` holds each approved candidate with its review record. With `batch`, MEMORY.md waits for
    `batch.publish`. `plans`: what `_early` made of them (their files already written ahead)."""
    from memcurate.curator.memory import memory_md

    if not todo:
        return
    with engine.root_lock(wait=30):
        if batch is not None and batch.touches(todo):
            batch.publish(engine)
        current = batch.current if batch is not None else None
        if current is None:
            try:
                # a damaged MEMORY.md stops the save before any write
                current = memory_md.read_current(engine.root)
            except memory_md.MemoryMdError as e:
                for cand, _ in todo:
                    cand.move("ready", error=f"MEMORY.md: {e}")
                    result.refused[cand.name] = ReviewError(
                        f"{e}: fix MEMORY.md by hand, then approve again"
                    )
                return
        if batch is not None:
            batch.current = current
            result.stopped = result.stopped or batch.stopped
        written = [
            (result, saved, cand, change)
            for saved, cand, change in _write(engine, todo, result, plans)
        ]
        if batch is not None:
            batch.written += written
            batch.stopped = batch.stopped or result.stopped
            return
        plan = _publish(engine, written, current, result.stopped)
    if plan:
        result.archived, result.notes = _archived(plan), list(plan.notes)


def _write(
    engine: Context,
    todo: list[tuple[Candidate, dict]],
    result: Approval,
    plans: Mapping[str, tuple[str, tuple | None]] | None = None,
) -> list:
    """The memory files of `todo` written (under the root's lock), each refusal or failure in `result`:
    (Saved, candidate, its MEMORY.md change or None) of each written."""
    from memcurate.curator.memory.store import StoreError
    from memcurate.curator.util.atomic import NO_SPACE

    # Each file's document and (path, text) made first, so that all their temp files are created before
    # the first fsync (atomic.ahead); what cannot be made is raised where its write would have been.
    planned: dict[str, tuple | Exception | None] = {}
    for cand, review in todo:
        try:
            made = plans.get(cand.name) if plans else None
            if made is not None and made[0] == review["text"]:  # made early, of this text
                planned[cand.name] = made[1]
            else:
                planned[cand.name] = _planned(engine, review)
        except (StoreError, memfile.MemoryFormatError, OSError) as e:
            planned[cand.name] = e
    paths = [p[1][0] for p in planned.values() if isinstance(p, tuple)]
    done = []
    with ahead(paths):
        for cand, review in todo:
            cat = cand.name  # the slot: what the person approved, and what a refusal is said of
            if result.stopped is not None:
                result.left.append(cat)
                continue
            try:
                saved, change = _write_memory(engine, cand, review, planned[cat])
            except Conflict as e:
                result.refused[cat] = e
                continue
            except (StoreError, memfile.MemoryFormatError) as e:
                # The store refuses the text (verification let something through): back to review,
                # blocked, saying why; the other saves go on, and nothing stays stuck `approved`.
                cand.move(
                    "ready",
                    error=str(e),
                    blocked=True,
                    blocks=max(1, int(cand.record.get("blocks") or 0)),
                )
                result.refused[cat] = Blocked([Issue("BLOCK", "refused", "file", str(e))])
                continue
            # this one stays `approved`; the others go on, unless the disk is full
            except OSError as e:
                result.refused[cat] = SaveFailed(e)
                if e.errno in NO_SPACE:
                    result.stopped = e
                continue
            done.append((saved, cand, change))
    return done


def _publish(engine: Context, written: list, current: tuple | None, stopped: OSError | None):
    """MEMORY.md written once with the changes of `written` ((approval, Saved, candidate, change) of
    each memory file written), then each marked saved in its approval; returns MEMORY.md's plan (None
    when it was not written). Stopped (a full disk): the files written stay `approved` and `left`, and
    the next run lists them in MEMORY.md."""
    from memcurate.curator.memory import memory_md
    from memcurate.curator.util.atomic import NO_SPACE, fsync_dir

    # The memory files' renames made durable, a folder at a time, before MEMORY.md or a state names them
    for folder in sorted({os.path.dirname(saved.path) for _, saved, _, _ in written if saved.path}):
        fsync_dir(folder)
    changes = [change for *_, change in written if change]
    plan = None
    if changes and stopped is None:
        with engine.root_lock(wait=30):
            try:
                plan = memory_md.apply(
                    engine.root,
                    engine.cfg,
                    changes,
                    current=current,
                    waiting=lambda: _waiting(engine),
                )
            except (OSError, memory_md.MemoryMdError) as e:
                for result, saved, cand, _ in written:
                    if getattr(e, "errno", None) in NO_SPACE:
                        result.stopped = e
                    if saved.action != "noop":
                        result.refused[cand.name] = SaveFailed(
                            e, "written, but MEMORY.md is not updated: "
                        )
    elif changes:
        for result, saved, cand, _ in written:
            if saved.action != "noop":
                result.left.append(cand.name)
    if changes and plan is None:
        written = [w for w in written if w[1].action == "noop"]
    for result, saved, cand, _ in written:
        cand.move("saved", path=saved.path, saved_action=saved.action)
        result.saved.append(saved)
    _reindex(engine, {saved.category for _, saved, _, _ in written if saved.path})
    return plan


def _waiting(engine: Context) -> dict[str, set[str]]:
    """The memories approved and not saved yet, of every triage: category -> ids. Their files may be written
    (a batch killed before its MEMORY.md write, or another process's still going), waiting for MEMORY.md:
    not a section's entries that someone removed."""
    out: dict[str, set[str]] = {}
    for tid in staging.triage_ids(engine.data):
        try:
            for cand in StagedTriage(engine.data, tid).candidates().values():
                if cand.state == "approved":
                    mem = memfile.parse(cand.review()["text"])
                    out.setdefault(mem.category, set()).add(mem.id)
        except (staging.StagingError, memfile.MemoryFormatError, KeyError, TypeError):
            continue  # unreadable: its files count as anyone's
    return out


def _archived(plan) -> dict[str, list[str]]:
    return {c: [line.id for line in lines] for c, lines in plan.archived.items() if lines}


def _reindex(engine: Context, categories: set[str]) -> None:
    """Index what was just saved, so the recall hook finds the index current (it reads files the index
    has not seen itself, a cost paid on every prompt until the index catches up). The index is a cache:
    a failure here costs that, never the save."""
    import sqlite3

    from memcurate.curator.memory.store import StoreError

    for category in sorted(categories):
        try:
            engine.index.refresh(category)
        except (sqlite3.Error, OSError, StoreError):
            pass


def _planned(engine: Context, review: dict) -> tuple | None:
    """(the document, (its path, its text)) of the file an approved candidate writes; None when it writes
    none (a noop). The path: a delete's archived memory goes to .archive/<category>/; the text: the canonical
    form the store writes, made once, handed to the store, which checks it."""
    d = review["decision"]
    if d["action"] == "noop" and not (d.get("source_only") and d.get("target")):
        return None
    mem = memfile.parse(review["text"])
    return mem, engine.store.rendered(mem)


def _write_memory(
    engine: Context, cand: Candidate, review: dict, planned: tuple | Exception | None
):
    """Write one approved memory file; returns (Saved, the MEMORY.md change or None). Conflict when the
    file changed since the decision (the category goes back to ready, decided again). `planned`: what
    `_planned` made of it, or raised."""
    from memcurate.curator.memory import memory_md
    from memcurate.curator.memory.store import ConflictError

    d = review["decision"]
    cat, action, text = cand.category, d["action"], review["text"]
    if isinstance(planned, Exception):
        raise planned
    if planned is None:
        return Saved(cat, action, None, name=cand.name), None
    mem, rendered = planned
    path, written = rendered
    try:
        if _already_written(path, written):
            pass  # a resumed save: the file is exactly what was approved
        # (its folder fsynced by _publish, once for every file written, before MEMORY.md names it)
        elif action == "create":
            engine.store.create(mem, parsed_from=text, sync_dir=False, rendered=rendered)
            engine.record_written(path, written)
        else:  # update, delete: only over the version the decision was based on
            engine.store.update(
                mem, d["base_hash"], parsed_from=text, sync_dir=False, rendered=rendered
            )
            engine.record_written(path, written)
    except ConflictError as e:
        record = settle(
            engine, cand, Decision(**d, text=text), review["draft"], file_text=text, conflict=str(e)
        )
        issues = [Issue(**i) for i in record["issues"] if i["severity"] == "BLOCK"]
        raise Conflict(issues or [Issue("BLOCK", "conflict", "action", f"{path}: {e}")]) from None
    # the target with the draft's source added: its MEMORY.md line is unchanged
    if action == "noop":
        return Saved(cat, action, path, name=cand.name), None
    if action == "delete":
        return Saved(cat, action, path, name=cand.name), ("remove", mem.category, mem.id)
    return Saved(cat, action, path, name=cand.name), (
        "upsert",
        memory_md.IndexLine(mem.id, mem.category, mem.title, mem.description),
    )


def _already_written(path: str, text: str) -> bool:
    data = text.encode("utf-8")
    try:
        # bytes: a file a hand edit left not UTF-8 is simply other; one byte past ours tells a longer one
        return read_path(path, len(data)) == data
    except OSError:
        return False


def reject(engine: Context, tid: str, cat: str, reason: str = "") -> None:
    """Reject a candidate; one rejected is not proposed again from the same evidence."""
    with Claim(engine, tid, wait=5):
        cand = _candidate(engine, tid, cat, "triaged", "ready", "failed")
        engine.add_rejected(cand.fingerprint())
        cand.move("rejected", reason=reason.strip()[:500])


def retry(engine: Context, tid: str, cat: str, *, on_event=None) -> dict:
    """Draft a failed category again."""
    with Claim(engine, tid, wait=5):
        _candidate(engine, tid, cat, "failed").move("drafting", retried=True)
        return process(engine, tid, only=[cat], on_event=on_event)


def _decide_again(engine: Context, tid: str, cat: str, choice) -> dict:
    """Run `choice(draft, existing)` on the kept draft against the memories as they are now, and
    record the new decision; the category stays ready."""
    with Claim(engine, tid, wait=5):
        cand = _candidate(engine, tid, cat, "ready")
        review = cand.review()
        draft = memfile.parse(review["draft"])
        decision, existing = decided(engine, draft, choice)
        return settle(engine, cand, decision, review["draft"], near=existing)


def redecide(engine: Context, tid: str, cat: str) -> dict:
    """Decide again (after a conflict): the draft is kept."""
    return _decide_again(
        engine, tid, cat, lambda d, ex: decide(d, ex, now=engine.now(), cfg=engine.cfg)
    )


def change_action(
    engine: Context, tid: str, cat: str, action: str, target: str | None = None
) -> dict:
    """Make the candidate a create, update, noop (or delete where allowed); ReviewError if the rules forbid it."""

    def choice(draft, existing):
        try:
            return choose(action, draft, existing, now=engine.now(), cfg=engine.cfg, target=target)
        except DecisionError as e:
            raise ReviewError(str(e)) from None

    return _decide_again(engine, tid, cat, choice)


def preview(engine: Context, review: dict) -> dict[str, list[str]]:
    """What approving the candidate of `review` (its review record, as `Engine.review` gives it) would
    move from MEMORY.md to the archive: category -> ids. Nothing is written."""
    from memcurate.curator.memory import memory_md

    action = review["decision"]["action"]
    if action == "noop":
        return {}
    try:
        mem = memfile.parse(review["text"])
    except memfile.MemoryFormatError:
        return {}
    change = (
        ("remove", mem.category, mem.id)
        if action == "delete"
        else ("upsert", memory_md.IndexLine(mem.id, mem.category, mem.title, mem.description))
    )
    old, parsed = memory_md.read_current(engine.root)
    plan = memory_md.plan(
        old or "",
        [change],
        memory_md.budgets_from(engine.cfg),
        *memory_md.limits_from(engine.cfg),
        parsed=parsed,
    )
    return {c: [line.id for line in lines] for c, lines in plan.archived.items() if lines}
