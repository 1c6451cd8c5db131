"""The kinds of items that wait for review, and what a script does with them across kinds: list,
show, approve, reject (`memcurate list / show / approve / reject`, through the Engine).

A new kind is a class with the methods of `items.Kind` (list its items, show one, approve some,
reject one) registered in KINDS below; its ids carry its own prefix (`claude/…`, `rule/…`, `proposal/…`).
"""

from __future__ import annotations

from memcurate.curator.review.claude_write_kind import ClaudeWriteKind
from memcurate.curator.review.items import (
    ERROR,
    Outcome,
    ReviewItem,
    damaged,
    resolve,
    why_not_approvable,
)
from memcurate.curator.review.memory_kind import MemoryKind
from memcurate.curator.review.proposal_kind import ProposalKind
from memcurate.curator.review.rule_kind import RuleKind

# The one place a kind is registered.
KINDS = (MemoryKind(), ClaudeWriteKind(), RuleKind(), ProposalKind())
_ORDER = {"ready": 0, ERROR: 2}  # ready first, then what is not ready yet, then what is done


def kind_of(item: ReviewItem):
    return next(k for k in KINDS if k.name == item.kind)


def items(engine, every: bool = False, kind: str | None = None) -> list[ReviewItem]:
    """Every item waiting for review (with `every`, the saved, rejected and skipped ones too; with `kind`,
    of that kind only): ready ones first (blocked last among them), then those not ready yet, then the
    done ones; by id within."""
    found = [i for k in KINDS if kind in (None, k.name) for i in k.items(engine, every)]
    return sorted(found, key=lambda i: (3 if i.final else _ORDER.get(i.state, 1), i.blocked, i.id))


def draft(engine) -> dict:
    """Draft what the kinds still have to draft (memories: the pipeline, saving nothing)."""
    done: dict = {}
    for kind in KINDS:
        if hasattr(kind, "draft"):
            for key, value in kind.draft(engine).items():
                done.setdefault(key, []).extend(value)
    return done


def show(engine, query: str) -> tuple[ReviewItem, dict]:
    """The item `query` names and what approving it would write (Unresolved when none)."""
    [item] = resolve(
        [query], items(engine, every=True), lambda i: damaged(i) if i.state == ERROR else None
    )
    return item, kind_of(item).show(engine, item)


def approve(engine, queries: list[str]) -> list[Outcome]:
    """Approve the items `queries` name, all or none: Unresolved (nothing approved) when one is
    unknown, ambiguous or not approvable. The items of a kind go together (for memories, the items of
    one triage share one MEMORY.md write); a refusal at save time is that item's Outcome."""
    chosen = resolve(queries, items(engine, every=True), why_not_approvable)
    # a rule goes to the project, not the memory root
    if any(i.kind != RuleKind.name for i in chosen):
        engine.check_saving()  # auto memory off: refused before anything is approved (AutoMemoryOff)
    done: list[Outcome] = []
    for kind in KINDS:
        mine = [i for i in chosen if i.kind == kind.name]
        if mine:
            done += kind.approve(engine, mine)
    return done


def reject(engine, queries: list[str], reason: str = "") -> list[Outcome]:
    """Reject the items `queries` name, all or none (Unresolved as for approve); a rejected item is
    not proposed again from the same evidence."""

    def why_not(item: ReviewItem) -> str | None:
        if item.state in kind_of(item).rejectable:
            return None
        if item.state == ERROR:
            return damaged(item)
        return f"already {item.state}" if item.final else f"{item.state}: cannot be rejected now"

    chosen = resolve(queries, items(engine, every=True), why_not)
    return [kind_of(i).reject(engine, i, reason) for i in chosen]
