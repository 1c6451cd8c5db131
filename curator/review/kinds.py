"""The kinds of items that wait for review, and what a front end does with them across kinds: list,
show, approve, reject, edit, and why a key does not apply (the Engine's generic verbs call these; the
TUI and `memcurate list / show / approve / reject` call the Engine).

A new kind is one module with a class of `items.Kind`'s members (its folders, items, detail, approve,
reject, edit, why_not) and one line in KINDS below; its ids carry its own prefix (`claude/…`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from memcurate.curator.review.claude_write_kind import ClaudeWriteKind
from memcurate.curator.review.items import (
    APPROVE,
    ERROR,
    REJECT,
    Detail,
    Kind,
    Outcome,
    ReviewItem,
    damaged,
    resolve,
    why_not_approvable,
)
from memcurate.curator.review.memory_kind import MemoryKind
from memcurate.curator.review.proposal_kind import ProposalKind
from memcurate.curator.review.rule_kind import RuleKind

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

# The one place a kind is registered.
KINDS: tuple[Kind, ...] = (MemoryKind(), ClaudeWriteKind(), RuleKind(), ProposalKind())
_ORDER = {"ready": 0, ERROR: 2}  # ready first, then what is not ready yet, then what is done


def kind_of(item: ReviewItem) -> Kind:
    return named(item.kind)


def named(name: str) -> Kind:
    return next(k for k in KINDS if k.name == name)


def folders_of(engine: Context) -> dict[str, str]:
    """Every kind's folder -> the kind's name: what a front end watches to list them again."""
    return {folder: k.name for k in KINDS for folder in k.folders(engine)}


def items(engine: Context, every: bool = False, kind: str | None = None) -> list[ReviewItem]:
    """Every item waiting for review (with `every`, the saved, rejected and skipped ones too; with `kind`,
    of that kind only): ready ones first (blocked last among them), then those not ready yet, then the
    done ones; by id within."""
    found = [i for k in KINDS if kind in (None, k.name) for i in k.items(engine, every)]
    return sorted(found, key=lambda i: (3 if i.final else _ORDER.get(i.state, 1), i.blocked, i.id))


def draft(engine: Context, kind: str | None = None) -> dict:
    """Draft what the kinds (or `kind`) still have to draft (memories: the pipeline, saving nothing)."""
    done: dict = {}
    for kind_ in KINDS:
        if kind in (None, kind_.name) and hasattr(kind_, "draft"):
            for key, value in kind_.draft(engine).items():
                done.setdefault(key, []).extend(value)
    return done


def find(engine: Context, queries: list[str], action: str = "") -> list[ReviewItem]:
    """The items `queries` name (full ids or unique prefixes), all or none: Unresolved when one is
    unknown, ambiguous, or (for APPROVE, REJECT) cannot be acted on that way; "" only looks."""
    checks = {APPROVE: why_not_approvable, REJECT: _why_not_rejectable}
    return resolve(queries, items(engine, every=True), checks.get(action, _readable))


def detail(engine: Context, item: ReviewItem) -> Detail:
    """What approving `item` would write, as the person is shown it."""
    return kind_of(item).detail(engine, item)


def approve(
    engine: Context, chosen: list[ReviewItem], seen: Mapping[str, str] | None = None
) -> list[Outcome]:
    """Approve `chosen` (`seen`: id -> the Detail.fingerprint the person was shown; one changed since
    is refused). The items of a kind go together (for memories, the items of one triage share one
    MEMORY.md write); a refusal at save time is that item's Outcome."""
    # a rule goes to the project, not the memory root
    if any(i.kind != RuleKind.name for i in chosen):
        engine.check_saving()  # auto memory off: refused before anything is approved (AutoMemoryOff)
    done: list[Outcome] = []
    for kind in KINDS:
        mine = [i for i in chosen if i.kind == kind.name]
        if mine:
            done += kind.approve(engine, mine, seen)
    return done


def reject(engine: Context, chosen: list[ReviewItem], reason: str = "") -> list[Outcome]:
    """Reject `chosen`; a rejected item is not proposed again from the same evidence."""
    return [kind_of(i).reject(engine, i, reason) for i in chosen]


def edit(engine: Context, item: ReviewItem, value) -> Outcome:
    """Store the person's edit of `item` (its text, or its kind's fields), verified again."""
    return kind_of(item).edit(engine, item, value)


def why_not(action: str, item: ReviewItem, detail: Detail | None = None) -> str | None:
    """Why `action` does not apply to `item`'s kind (or to what `detail` shows); None when it does."""
    return kind_of(item).why_not(action, item, detail)


def _readable(item: ReviewItem) -> str | None:
    return damaged(item) if item.state == ERROR else None


def _why_not_rejectable(item: ReviewItem) -> str | None:
    if item.state in kind_of(item).rejectable:
        return None
    if item.state == ERROR:
        return damaged(item)
    return f"already {item.state}" if item.final else f"{item.state}: cannot be rejected now"
