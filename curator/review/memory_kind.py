"""Review items of kind `memory`: the candidates of staged triages, id `<triage id>/<category>`.

Listing reads staging (the queue's Board: one state log a triage, plus the review record of each
draft); the actions are curator/review/actions.py's: `approve_all` (the items of one triage
together: one MEMORY.md write), `reject`, `edit`; `draft` runs the pipeline, saving nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, cast

from memcurate.curator.candidates import cards, pipeline, staging
from memcurate.curator.candidates.candidate import Claim, StagedTriage, text_hash
from memcurate.curator.candidates.queue import Board
from memcurate.curator.categories import base
from memcurate.curator.review import actions
from memcurate.curator.review.actions import ReviewError
from memcurate.curator.review.items import FINAL, MEMORY, TEXT, Detail, Outcome, ReviewItem
from memcurate.curator.util.atomic import read_json
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

BUSY = "another process is working on it; try again"


class MemoryKind:
    name = MEMORY
    prefix = ""  # a memory's id is `<triage id>/<category>`
    label = ""  # the queue names a memory by its category
    what = "the staged triages"
    noun = ""  # a memory is named by its category
    one = "draft"
    rejectable = frozenset({"triaged", "ready", "failed"})  # what actions.reject accepts

    def folders(self, engine: Context) -> tuple[str, ...]:
        return (staging.staging_dir(engine.data),)

    def items(self, engine: Context, every: bool) -> list[ReviewItem]:
        wanted = staging.PENDING | set(FINAL) if every else staging.PENDING
        out = []
        for rows in Board(engine.data).load(wanted=wanted).values():
            out += [self._item(engine, row) for row in rows]
        return out

    def _item(self, engine: Context, row) -> ReviewItem:
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

    def detail(self, engine: Context, item: ReviewItem) -> Detail:
        """The draft's review record; an offline card's evidence beside it (the person writes the
        fact from it); what approving moves to the archive (a damaged MEMORY.md: said in `note`)."""
        tid, cat = _key(item)
        try:
            # the Engine's own read of a draft (Engine.review), the one its front ends' tests slow down
            review = cast(_Reviews, engine).review(tid, cat)
        except staging.StagingError:
            raise ReviewError(
                f"{item.id} is {item.state}: nothing drafted to show"
                + (" (memcurate list --draft drafts it)" if item.state == "triaged" else "")
            ) from None
        decision = review["decision"]
        note = ""
        try:
            archive = actions.preview(engine, review) if item.state == "ready" else {}
        except Exception as e:  # a damaged MEMORY.md: the draft is still worth seeing
            archive, note = {}, f"MEMORY.md: {e}"
        view = review
        if cards.is_offline(review):
            view = {**review, "evidence": _card_evidence(engine, tid, cat)}
        return Detail(
            item,
            review["text"],
            text_hash(review["text"]),
            decision=decision,
            diff=decision.get("diff") or "",
            issues=tuple(review.get("issues") or ()),
            confidence=review.get("confidence") or {},
            archive=archive,
            note=note,
            editor=TEXT,
            renames=True,
            view=view,
        )

    def approve(
        self, engine: Context, items: list[ReviewItem], seen: Mapping[str, str] | None = None
    ) -> list[Outcome]:
        """The items of one triage together: one MEMORY.md write for all of them."""
        by_triage: dict[str, list[str]] = {}
        for item in items:
            tid, cat = _key(item)
            by_triage.setdefault(tid, []).append(cat)
        out = []
        for tid, cats in by_triage.items():
            shown = {c: seen[f"{tid}/{c}"] for c in cats if seen and f"{tid}/{c}" in seen}
            try:
                result = actions.approve_all(engine, tid, cats, shown)
            except LockBusy:
                out += [Outcome(f"{tid}/{c}", False, error=BUSY, busy=True) for c in cats]
                continue
            for saved in result.saved:
                path = saved.path or ""
                said = (
                    f"{saved.action}: {engine.store.relpath(path)}"
                    if path
                    else "noop: nothing to write"
                )
                out.append(
                    Outcome(
                        f"{tid}/{saved.category}",
                        True,
                        saved.action,
                        path,
                        engine.store.relpath(path) if path else "",
                        archived=result.archived,
                        said="\n".join([said, *result.notes]),
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

    def reject(self, engine: Context, item: ReviewItem, reason: str) -> Outcome:
        try:
            actions.reject(engine, *_key(item), reason)
        except LockBusy:
            return Outcome(item.id, False, error=BUSY, busy=True)
        except (ReviewError, staging.StagingError) as e:
            return Outcome(item.id, False, error=str(e))
        return Outcome(item.id, True, said=f"rejected {item.category}")

    def edit(self, engine: Context, item: ReviewItem, value) -> Outcome:
        """The person's text for the draft, verified again (its BLOCK issues said, not refused)."""
        try:
            record = actions.edit(engine, *_key(item), str(value))
        except LockBusy:
            return Outcome(item.id, False, error=BUSY, busy=True)
        except (ReviewError, staging.StagingError, OSError) as e:
            return Outcome(item.id, False, error=str(e) or e.__class__.__name__)
        blocked = "BLOCKED — see the issues" if record["blocked"] else "no blocking issue"
        return Outcome(item.id, True, said=f"edited: {blocked}")

    def why_not(
        self, action: str, item: ReviewItem | None, detail: Detail | None = None
    ) -> str | None:
        return None  # every key applies to a draft; its state says when (drafting, failed)

    def draft(self, engine: Context) -> dict:
        """Draft, verify and decide every pending triage no other process holds, saving nothing (the
        pipeline --auto-approve runs, without its saves): triage ids drafted, busy, failed."""
        done: dict = {"drafted": [], "busy": [], "failed": []}
        for tid in pipeline.pending_triages(engine.data):
            try:
                with Claim(engine, tid):
                    staging.sweep_triage_temps(engine.data, tid)
                    pipeline.process(engine, tid)
                done["drafted"].append(tid)
            except LockBusy:
                done["busy"].append(tid)
            except (staging.StagingError, OSError) as e:
                done["failed"].append({"triage": tid, "error": str(e)})
        return done


class _Reviews(Protocol):
    def review(self, tid: str, cat: str) -> dict: ...


def _card_evidence(engine: Context, tid: str, cat: str) -> dict:
    """What an offline card was made from; what went wrong reading it is said in its place."""
    try:
        cand = StagedTriage(engine.data, tid).candidate(cat)
        return cards.evidence(
            cand.entry, cand.category, cand.triage.doc.get("source") or {}, engine.cfg
        )
    except Exception as e:  # a damaged triage: the card is still shown and can be written
        return {"note": f"its evidence cannot be read: {one_line(str(e), 200)}"}


def _key(item: ReviewItem) -> tuple[str, str]:
    tid, _, cat = item.id.partition("/")
    return tid, cat


def _with(item: ReviewItem, **changes) -> ReviewItem:
    return replace(item, **changes)


def _where(engine: Context, row, decision: dict) -> str:
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
