"""Why a review key does not apply to a row in its state, in the words a person is shown on pressing it
(the app greys the key out and says this instead of doing nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcurate.curator.candidates.staging import IN_FLIGHT
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the item shape: loaded with the engine
    from memcurate.curator.candidates.queue import Item

# What each key needs the row to be in: (states it applies in, what the key does, shortly)
NEEDS = {
    "approve_memory": (("ready",), "approve it"),
    "edit_memory": (("ready",), "edit it"),
    "edit_external": (("ready",), "edit it"),
    "change_action": (("ready",), "change its action"),
    "reject_memory": (("triaged", "ready", "failed"), "reject it"),
    "retry_memory": (("failed",), "retry it"),
}


def why_not_now(action: str, item: Item, review: dict | None = None) -> str | None:
    """Why `action` cannot act on `item` as it is now: unreadable, still drafting, failed, being saved, or
    (approving) a BLOCK, named with its first issue (from the row, else from `review`, the selection's
    review record once read). None when it can."""
    if action not in NEEDS:
        return None
    states, doing = NEEDS[action]
    what = item.category or "this row"
    if item.is_error:
        return f"{what} cannot be read, so nothing can {doing}: {one_line(item.error, 160)}"
    if item.state not in states:
        return _state_reason(item, doing, action)
    if action == "approve_memory" and item.blocks:
        return f"BLOCK: {_first_block(item, review)} — e edits it, r rejects it"
    return None


def _state_reason(item: Item, doing: str, action: str) -> str:
    what = item.category
    if item.state == "triaged":
        return f"{what} is waiting to be drafted: wait until it is ready to {doing}"
    if item.state in IN_FLIGHT:
        return f"{what} is still drafting ({item.state}): wait until it is ready to {doing}"
    if item.state == "failed":
        error = f" ({one_line(item.error, 120)})" if item.error else ""
        return f"drafting {what} failed{error}: x retries it, r rejects it"
    if item.state == "ready" and action == "retry_memory":
        return f"{what} is drafted and ready: only a failed draft is retried (e edits it, r rejects it)"
    if item.state == "approved":
        return f"{what} is approved and being saved: nothing is left to {doing}"
    return f"{what} is {item.state}: nothing is left to {doing}"


def _first_block(item: Item, review: dict | None) -> str:
    if item.field("block"):
        return one_line(str(item.field("block")), 160)
    blocks = [
        i
        for i in (review or {}).get("issues", [])
        if isinstance(i, dict) and i.get("severity") == "BLOCK"
    ]
    if blocks:
        more = f" (and {len(blocks) - 1} more)" if len(blocks) > 1 else ""
        from .panels import issue_text  # the document's panels: mounted after the first frame

        return issue_text(blocks[0]) + more
    n = item.blocks
    return f"{n} blocking issue{'s' if n > 1 else ''}, shown under the document"
