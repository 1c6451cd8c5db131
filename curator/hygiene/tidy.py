"""`memcurate tidy`: near-duplicate memories merged, contradicting ones put before the person, as proposals.

The pairs are duplicates.py's; what each proposal does, and the merged text, merging.py's. Nothing
changes until the person approves: the originals stay as they are. Staging is idempotent: a group
already proposed (pending, approved or rejected, the same files and bytes) is neither drafted by a
model nor staged again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcurate.curator.hygiene import duplicates, merging

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


def tidy(engine: Context, *, notes: list[str] | None = None) -> list[str]:
    """Stage tidy's proposals; the ids of those staged now (none when run again on the same files)."""
    from memcurate.curator.proposals import store as proposal_store

    staged = []
    memos, found = duplicates.found_pairs(engine)
    for spec in merging.specs(engine, found, memos, notes=notes):
        pid = proposal_store.stage(
            engine.data,
            spec["kind"],
            spec["title"],
            spec["reason"],
            spec["ops"],
            source="tidy",
            finding={"code": spec["code"], "refs": spec["refs"]},
        )
        if pid is not None:
            staged.append(pid)
    return staged
