"""Review items of kind `memory`: the candidates of staged triages, id `<triage id>/<category>`.

Listing reads staging (the queue's Board: one state log a triage, plus the review record of each
draft); every action is the Engine's own call, the one the TUI makes: `review` and `preview` to
show, `approve_all` (the items of one triage together: one MEMORY.md write), `reject`, `process`.
"""

from __future__ import annotations

from dataclasses import replace

from memcurate.curator.candidates import staging
from memcurate.curator.categories import base
from memcurate.curator.review.actions import ReviewError
from memcurate.curator.review.items import FINAL, Outcome, ReviewItem
from memcurate.curator.util.atomic import read_json
from memcurate.curator.util.locks import LockBusy

BUSY = "another process is working on it; try again"


class MemoryKind:
    name = "memory"
    rejectable = frozenset({"triaged", "ready", "failed"})  # what Engine.reject accepts

    def items(self, engine, every: bool) -> list[ReviewItem]:
        wanted = staging.PENDING | set(FINAL) if every else staging.PENDING
        out = []
        for rows in engine.board().load(wanted=wanted).values():
            out += [self._item(engine, row) for row in rows]
        return out

    def _item(self, engine, row) -> ReviewItem:
        if row.is_error:  # a triage that cannot be read: named, so it can be fixed or deleted
            return ReviewItem(row.tid, self.name, "error", error=row.error)
        item = ReviewItem(
            f"{row.tid}/{row.category}",
            self.name,
            row.state,
            category=row.category,
            title=row.title,
            session=row.session,
            created=row.created,
            error=row.error,
            blocked=bool(row.blocks),
            reason=str(row.field("reason") or ""),
        )
        if row.state == "saved":
            path = row.field("path") or ""
            return _with(
                item,
                action=row.field("saved_action") or "",
                where=engine.store.relpath(path) if path else "",
            )
        if row.state not in ("ready", "approved"):
            return item
        try:
            review = read_json(staging.candidate_files(engine.data, row.tid, row.category).review)
        except (OSError, ValueError) as e:
            return _with(item, error=f"review record unreadable ({e})")
        decision = review.get("decision") or {}
        return _with(
            item,
            action=decision.get("action") or row.action,
            confidence=row.confidence,
            issues=tuple(review.get("issues") or ()),
            blocked=bool(review.get("blocked")),
            where=_where(engine, row, decision),
        )

    def show(self, engine, item: ReviewItem) -> dict:
        tid, cat = _key(item)
        try:
            review = engine.review(tid, cat)
        except staging.StagingError:
            raise ReviewError(
                f"{item.id} is {item.state}: nothing drafted to show"
                + (" (memcurate list --draft drafts it)" if item.state == "triaged" else "")
            ) from None
        decision = review["decision"]
        try:
            archive = engine.preview(review) if item.state == "ready" else {}
        except Exception as e:  # a damaged MEMORY.md: the draft is still worth seeing
            archive, note = {}, f"MEMORY.md: {e}"
        else:
            note = ""
        return {
            "text": review["text"],
            "decision": decision,
            "diff": decision.get("diff") or "",
            "confidence": review.get("confidence") or {},
            "archive": archive,
            **({"note": note} if note else {}),
        }

    def approve(self, engine, items: list[ReviewItem]) -> list[Outcome]:
        by_triage: dict[str, list[str]] = {}
        for item in items:
            tid, cat = _key(item)
            by_triage.setdefault(tid, []).append(cat)
        out = []
        for tid, cats in by_triage.items():
            try:
                result = engine.approve_all(tid, cats)
            except LockBusy:
                out += [Outcome(f"{tid}/{c}", False, error=BUSY) for c in cats]
                continue
            for saved in result.saved:
                path = saved.path or ""
                out.append(
                    Outcome(
                        f"{tid}/{saved.category}",
                        True,
                        saved.action,
                        path,
                        engine.store.relpath(path) if path else "",
                        archived=result.archived,
                    )
                )
            out += [
                Outcome(f"{tid}/{c}", False, error=str(e) or e.__class__.__name__)
                for c, e in result.refused.items()
            ]
            out += [
                Outcome(f"{tid}/{c}", False, error="left for the next run: " + str(result.stopped))
                for c in result.left
            ]
        return out

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome:
        try:
            engine.reject(*_key(item), reason)
        except LockBusy:
            return Outcome(item.id, False, error=BUSY)
        except (ReviewError, staging.StagingError) as e:
            return Outcome(item.id, False, error=str(e))
        return Outcome(item.id, True)

    def draft(self, engine) -> dict:
        """Draft, verify and decide every pending triage no other process holds, saving nothing (the
        pipeline --auto-approve runs, without its saves): triage ids drafted, busy, failed."""
        done: dict = {"drafted": [], "busy": [], "failed": []}
        for tid in engine.pending():
            try:
                with engine.claim(tid):
                    engine.sweep_triage(tid)
                    engine.process(tid)
                done["drafted"].append(tid)
            except LockBusy:
                done["busy"].append(tid)
            except (staging.StagingError, OSError) as e:
                done["failed"].append({"triage": tid, "error": str(e)})
        return done


def _key(item: ReviewItem) -> tuple[str, str]:
    tid, _, cat = item.id.partition("/")
    return tid, cat


def _with(item: ReviewItem, **changes) -> ReviewItem:
    return replace(item, **changes)


def _where(engine, row, decision: dict) -> str:
    """The file approving it would write, relative to the memory root: the target of an update (noop,
    delete), or for a create the path its front matter's id names."""
    from memcurate.curator.memory import memfile
    from memcurate.curator.memory.store import StoreError

    try:
        if decision.get("target"):
            return engine.store.relpath(engine.store.locate(base(row.category), decision["target"]))
        with open(
            staging.candidate_files(engine.data, row.tid, row.category).file, encoding="utf-8"
        ) as f:
            doc = memfile.parse(f.read())
        return engine.store.relpath(engine.store.home(doc))
    except (OSError, ValueError, StoreError):  # a bad id or front matter: its BLOCK issue says why
        return ""
