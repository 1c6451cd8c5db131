"""One recipe per category: the sections of its memory (docs/design.md §6), filled from the evidence.

- decision: Decision / Rationale / Alternatives / Consequences.
- constraint: Rule / Impact / Workaround.
- runbook: Symptom from the person's report and the failing run, Steps from
  the fix sentences, Verification from the "passes now" line or a re-run of
  the failing command, Root cause.
- tech_debt: Description / Why deferred / Suggested fix.
- preference: the user's words, quoted / Reason / Examples.
- session_summary: Goal from the prompts, Outcome and Next steps from the
  last reply, Completed from the files changed.

A section for which the session holds no evidence says so, and quotes what
it has. A recipe raises NoEvidence when there is no statement to draft from.
"""

from __future__ import annotations

from memcurate.curator.drafting.offline.choosing import Draft
from memcurate.curator.drafting.offline.evidence import Evidence, Snip
from memcurate.curator.drafting.offline.recipes.constraint import draft_constraint
from memcurate.curator.drafting.offline.recipes.decision import draft_decision
from memcurate.curator.drafting.offline.recipes.preference import draft_preference
from memcurate.curator.drafting.offline.recipes.runbook import draft_runbook
from memcurate.curator.drafting.offline.recipes.session_summary import draft_session_summary
from memcurate.curator.drafting.offline.recipes.tech_debt import draft_tech_debt

_FROM_EVIDENCE = {
    "decision": draft_decision,
    "constraint": draft_constraint,
    "runbook": draft_runbook,
    "tech_debt": draft_tech_debt,
    "preference": draft_preference,
}


def draft(category: str, snippets: list[Snip], excerpt: str, *, subagent: bool) -> Draft:
    """The draft of `category` (a known category) from a triage entry's snippets and excerpt."""
    # read from the prompts and the last reply, not from sentences
    if category == "session_summary":
        return draft_session_summary(excerpt, snippets, subagent=subagent)
    return _FROM_EVIDENCE[category](Evidence(snippets, excerpt))
