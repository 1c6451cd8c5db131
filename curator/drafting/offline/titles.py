"""A memory's title (the main statement, rewritten per category and bounded) and description (the
MEMORY.md line's second half)."""

from __future__ import annotations

import re

from memcurate.curator.drafting.offline.evidence import Sent
from memcurate.curator.drafting.offline.statements import split_reason, strip_interjections
from memcurate.curator.drafting.offline.text import (
    bounded_line,
    drop_parens,
    fold,
    inside_code,
    lower_first,
    norm,
    sentence_case,
    shorten,
    third_person,
)

TITLE_SOFT = 110
DESCRIPTION_SOFT = 190


_GENERIC_HEADINGS = frozenset(
    """summary changes made key findings what i found benefits overview result results fixes
notes details steps next left for time the of using component current structure navigation modes test coverage added
features tested tool control options improvements solution problem issue conclusion takeaway a an and on in fix to
what was completed""".split()
)


def with_heading(s: Sent, text: str) -> str:
    """A list item under a specific heading ("**WebSearch Tool:**" / "- Available but …") names its subject."""
    if s.heading and s.item and set(re.findall(r"[a-z]+", s.heading.lower())) - _GENERIC_HEADINGS:
        return f"{s.heading}: {lower_first(text)}"
    return text


TITLE_REWRITES: dict[str, list[tuple[str, str]]] = {
    "decision": [
        (
            r"^(?:i think |i guess |maybe |so )?(?:let's|let us|we(?:'ll| will| should| can| could| need to| want to)|"
            r"i(?:'ll| will| would| should| decided to| chose to| want to)|we decided to|we chose to|decided to|"
            r"we(?:'re| are) going to)\s+(?:just\s+|actually\s+|instead\s+)?",
            "",
        ),
        (r"^(?:go|stick|settle)\s+(?:with|on)\s+", "use "),
        (r"^you (?:can|could|should) (?:just )?", ""),
        (r"^(?:can|could|would) (?:you|we) (?:please )?", ""),
        (r"^please ", ""),
    ],
    "constraint": [
        (r"^(?:please )?(?:remember|note|keep in mind|be aware)(?: that)?,?\s+", ""),
        (r"^(?:fyi|heads up),?\s+", ""),
    ],
    "tech_debt": [
        (r"^(?:let's|let us|we(?:'ll| will| should)?|i(?:'ll| will| have|'ve))\s+(?:just\s+)?", ""),
        (r"^please ", ""),
    ],
    "preference": [
        (r"^(?:please )", ""),
        (r"^i (?:really |strongly |very much |much )?prefer\s+", "prefer "),
        (r"^i(?:'d| would) (?:much )?(?:rather|prefer)(?: that| to)?\s+", "prefer "),
        (r"^i(?:'d| would) like (?:you )?to\s+", ""),
        (r"^i (?:think|thought|feel) (?:we|you) should\s+", ""),
        (r"^(?:we|you) (?:should|can|could) (?:just )?", ""),
        (r"^from now on,?\s+", ""),
    ],
    "runbook": [(r"^(?:the )?(?:root cause|issue|problem|bug|cause) (?:is|was) (?:that )?", "")],
    "session_summary": [
        (
            r"^(?:(?:can|could|would) you (?:please )?(?:help (?:me )?(?:to )?)?|please (?:help (?:me )?(?:to )?)?|"
            r"i(?:'d| would) like (?:your help (?:with|to)|you to|to)|i want (?:you )?to|i need (?:you )?to|"
            r"help me (?:to )?|let's|we need to|we should|we(?:'re| are) going to|i'm going to)\s*",
            "",
        ),
    ],
}
_META_HEAD = re.compile(
    r"\b(?:like|logic|approach|plan|idea|mind|decided|decision|following|this|it|that|"
    r"change|rule|rules|goal|as follows|combine)\s*$",
    re.I,
)


def meta_split(text: str) -> tuple[str, str]:
    """("would like to combine the logic", "take the least nested path first") of "… the logic: take …"."""
    if ": " in text:
        head, tail = text.split(": ", 1)
        if (
            not inside_code(text, len(head))
            and len(tail.split()) >= 4
            and (_META_HEAD.search(head) or "changed my mind" in head.lower())
        ):
            return head, tail
    return "", text


def title_from(text: str, category: str, *, sent: Sent | None = None) -> str:
    t = strip_interjections(fold(text))
    t = re.sub(r"^(?:and |but |so |also )+", "", t, flags=re.I)
    t = re.sub(
        r"^(?:in general|in short|for the record|for now|going forward),?\s+", "", t, flags=re.I
    )
    t = t.rstrip("…").rstrip()
    if category in ("decision", "preference", "tech_debt"):
        t = meta_split(t)[1]
    clauses = split_reason(t)
    if len(clauses.core.split()) >= 3:
        t = clauses.core
    for pat, rep in TITLE_REWRITES.get(category, []):
        t = re.sub(pat, rep, t, count=1, flags=re.I)
    t = drop_parens(t).strip().rstrip(".?!:;,").strip()
    t = third_person(t)
    if sent is not None:
        t = with_heading(sent, t)
    t = shorten(t, TITLE_SOFT)
    return sentence_case(t.rstrip(".?!:;, "))


def describe(title: str, extra: str) -> str:
    """The MEMORY.md line's second half: MEMORY.md shows `[title](file) — description`, so the
    description adds the reason or first step rather than repeating the title (which it falls back to)."""
    extra = (
        re.sub(r"^(?:in the user's words: )", "", fold(extra), flags=re.I).strip("“”").rstrip(".")
    )
    if extra and norm(extra) not in norm(title) and norm(title) not in norm(extra):
        line = extra[:1].upper() + extra[1:]
    else:
        line = title
    return bounded_line(line, DESCRIPTION_SOFT)
