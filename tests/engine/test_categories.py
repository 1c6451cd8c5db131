"""The categories as DESIGN §5 and §6 fix them, stated here literally: tests elsewhere check drafts
against curator.categories, so a wrong row there must fail here rather than be copied."""

from __future__ import annotations

from memcurate.curator import config
from memcurate.curator.categories import CATEGORIES, NAMES

# name: (MEMORY.md section, required sections, optional sections, delete allowed, Claude Code type)
DESIGN = {
    "decision": (
        "Key Decisions",
        ("Decision", "Rationale"),
        ("Alternatives", "Consequences"),
        False,
        "project",
    ),
    "constraint": ("Constraints", ("Rule", "Impact"), ("Workaround",), True, "project"),
    "runbook": (
        "Runbooks",
        ("Symptom", "Steps", "Verification"),
        ("Root cause",),
        True,
        "reference",
    ),
    "tech_debt": (
        "Tech Debt",
        ("Description", "Why deferred"),
        ("Suggested fix",),
        True,
        "project",
    ),
    "preference": ("Preferences", ("Preference", "Reason"), ("Examples",), False, "feedback"),
    "session_summary": (
        "Recent Sessions",
        ("Goal", "Outcome", "Next steps"),
        ("Completed",),
        False,
        "project",
    ),
}
# name: (default budget in lines, model alias)
DEFAULTS = {
    "decision": (40, "sonnet"),
    "constraint": (30, "sonnet"),
    "runbook": (20, "haiku"),
    "tech_debt": (15, "haiku"),
    "preference": (15, "haiku"),
    "session_summary": (10, "haiku"),
}


def test_the_categories_are_those_of_the_design_in_its_order():
    assert NAMES == (
        "decision",
        "constraint",
        "runbook",
        "tech_debt",
        "preference",
        "session_summary",
    )
    for name, (section, required, optional, delete, claude_type) in DESIGN.items():
        c = CATEGORIES[name]
        assert (c.section, c.required, c.optional, c.delete_allowed, c.claude_type) == (
            section,
            required,
            optional,
            delete,
            claude_type,
        ), name


def test_the_default_budgets_and_models_are_those_of_the_design(tmp_path):
    cfg = config.load(tmp_path, None)
    assert {
        n: (cfg["categories"][n]["budget"], cfg["categories"][n]["model"]) for n in NAMES
    } == DEFAULTS
    assert sum(b for b, _ in DEFAULTS.values()) == 130  # room for Claude's own lines within 200
