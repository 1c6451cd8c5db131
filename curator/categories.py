"""The one place that knows the memory categories (docs/design.md §5, §6).

What is fixed by the file formats lives here; what a user may tune (budgets,
models, thresholds, keywords) lives in the config.
"""

from __future__ import annotations


class Category:
    """A memory category. (A plain class: the hook imports this and dataclasses costs ~10 ms.)"""

    __slots__ = (
        "name",
        "section",
        "required",
        "optional",
        "delete_allowed",
        "claude_type",
        "holds",
    )

    def __init__(
        self,
        name: str,
        section: str,
        required: tuple[str, ...],
        optional: tuple[str, ...],
        delete_allowed: bool,
        claude_type: str,
        holds: str = "",
    ) -> None:
        self.name = name
        self.section = section  # the MEMORY.md section heading
        self.required = required  # body sections a draft must fill
        self.optional = optional
        self.delete_allowed = delete_allowed
        # Claude Code's memory type: user | feedback | project | reference
        self.claude_type = claude_type
        self.holds = holds  # what a memory of the category holds (docs/design.md §5), as a drafting prompt says it

    def __repr__(self) -> str:
        return f"Category({self.name!r})"


CATEGORIES: dict[str, Category] = {
    c.name: c
    for c in (
        Category(
            "decision",
            "Key Decisions",
            ("Decision", "Rationale"),
            ("Alternatives", "Consequences"),
            False,
            "project",
            "a choice between alternatives, and why",
        ),
        Category(
            "constraint",
            "Constraints",
            ("Rule", "Impact"),
            ("Workaround",),
            True,
            "project",
            "a fixed limit of the environment or project",
        ),
        Category(
            "runbook",
            "Runbooks",
            ("Symptom", "Steps", "Verification"),
            ("Root cause",),
            True,
            "reference",
            "a symptom and the steps that fixed it",
        ),
        Category(
            "tech_debt",
            "Tech Debt",
            ("Description", "Why deferred"),
            ("Suggested fix",),
            True,
            "project",
            "something knowingly left unfinished",
        ),
        Category(
            "preference",
            "Preferences",
            ("Preference", "Reason"),
            ("Examples",),
            False,
            "feedback",
            "how the user wants things done",
        ),
        Category(
            "session_summary",
            "Recent Sessions",
            ("Goal", "Outcome", "Next steps"),
            ("Completed",),
            False,
            "project",
            "what a substantive session achieved and what comes next",
        ),
    )
}

NAMES: tuple[str, ...] = tuple(CATEGORIES)

# Claude's own memories (its topic files, its lines of MEMORY.md, its writes held for review): their owner,
# and the category they are listed, indexed and shown under beside the six above.
CLAUDE = "claude"

# A session has one summary: a later pass over it updates the summary of its earlier ones, and the
# sections named here take the later draft's text rather than gaining its sentences (the session moved on).
ONE_PER_SESSION = frozenset({"session_summary"})
LATEST_SECTIONS: dict[str, tuple[str, ...]] = {"session_summary": ("Next steps",)}

# Categories scored from what people and the assistant wrote; session_summary
# is scored from activity instead.
TEXT_SCORED: tuple[str, ...] = tuple(n for n in NAMES if n != "session_summary")

# A triage's candidates are named by slot: a category's first fact is its name ("decision"), each further one
# that a second look found its name and a number ("decision-2"), so several facts of one category are drafted,
# reviewed and saved each on its own. The number is at most FACTS_MAX.
FACTS_MAX = 6


def slot(category: str, n: int) -> str:
    """The slot name of a category's n-th fact (1-based): "decision", "decision-2", ..."""
    return category if n <= 1 else f"{category}-{n}"


def base(name: str) -> str:
    """The category of a slot name ("decision-2" -> "decision"); a name that is no slot is given back as it is
    (a category, or something a lookup then refuses). Derived from the name alone: never from a record."""
    if name in CATEGORIES:
        return name
    head, _, n = name.rpartition("-")
    if (
        head in CATEGORIES
        and head != "session_summary"
        and n.isdigit()
        and n[0] != "0"
        and 2 <= int(n) <= FACTS_MAX
    ):
        return head
    return name
