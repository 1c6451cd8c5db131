"""One home per concept: what a proposal's plan errors mean, the proposal already staged for a fix."""

from __future__ import annotations

from memcurate.curator.library.carry_out import CHANGED
from memcurate.curator.proposals.actions import issues_of


def test_a_proposal_is_stale_only_when_a_file_moved_under_it():
    errors = [
        "decision/x: section 'Rationale' is missing (required for decision)",
        f"claude/debugging.md: debugging.md {CHANGED}",
        f"claude/notes.md: notes.md no longer exists ({CHANGED})",
    ]
    assert [i["code"] for i in issues_of({"errors": errors})] == ["change", "stale", "stale"]
    assert all(i["severity"] == "BLOCK" for i in issues_of({"errors": errors}))
